"""Who a ``cassandra://`` target logs in as. The password is never in the URL.

In this order:
1. ``?user=NAME&password_file=PATH`` in the target URL: the role NAME, its password the first line of PATH,
   a regular file only its owner may read or write (mode 0600 or stricter; anything else is refused).
2. The cluster ``storbench services up cassandra`` runs under the results home, when every contact point is
   one of its nodes: the role ``storbench`` and its password from the service's state (0600).
3. ``$STORBENCH_CQL_USERNAME`` and ``$STORBENCH_CQL_PASSWORD`` (what ``storbench services env cassandra``
   prints for a user's shell), read once and taken out of storbench's environment at its start
   (:func:`take_environment`), so that no child (Spark, YCSB's JVM, the engine) inherits them; the login goes
   only to the client that needs it (the engine through its secrets pipe, YCSB in its 0600 ``-P`` file).
4. None: the cluster must not ask (AllowAllAuthenticator).
"""

from __future__ import annotations

import os
import stat
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import parse_qsl

from storbench.cassandra_cql import Credentials
from storbench.errors import InputError, TargetError
from storbench.redaction import redact_url
from storbench.targets import cassandra_tls

USER_ENV, PASSWORD_ENV = "STORBENCH_CQL_USERNAME", "STORBENCH_CQL_PASSWORD"
OPTIONS = ("user", "password_file")
HOW = (
    f"give ?user=NAME&password_file=PATH (a 0600 file holding the password) in the target URL, or set "
    f"${USER_ENV} and ${PASSWORD_ENV}"
)


@dataclass(frozen=True)
class LoginFile:
    """The URL's login: a role and the file its password is in."""

    user: str
    password_file: Path


def parse(text: str, query: str) -> LoginFile | None:
    """The URL's ``?user=..&password_file=..`` (both or neither), or InputError in one line; the query's other
    options are TLS's (``cassandra_tls``), each at most once."""
    if not query:
        return None
    text, shown_query = redact_url(text), redact_url("?" + query)[1:]  # an error line echoes no password
    try:
        pairs = parse_qsl(query, keep_blank_values=True, strict_parsing=True)
    except ValueError:
        pairs = [("", "")]
    names = [name for name, _ in pairs]
    if "password" in names:
        raise InputError(f"--target {text!r}: a password never goes in the URL; {HOW}")
    login = [name for name in names if name in OPTIONS]
    wrong = [n for n in names if n not in OPTIONS + cassandra_tls.OPTIONS or names.count(n) != 1] or (
        [n for n in OPTIONS if n not in login] if login else []
    )  # the login's two: both or neither
    values = dict(pairs)
    if wrong or not all(values.values()):
        raise InputError(
            f"--target {text!r}: the URL's options are user=NAME&password_file=PATH, each once, "
            f"and {cassandra_tls.FORMS} (got {shown_query!r})"
        )
    if not login:
        return None
    return LoginFile(values["user"], Path(values["password_file"]).expanduser())


def _read_private(uri: str, path: Path) -> str:
    try:
        info = path.stat()
    except OSError as exc:
        raise TargetError(f"target {uri}: password_file {path}: {exc.strerror}") from None
    if not stat.S_ISREG(info.st_mode) or info.st_mode & 0o077:
        raise TargetError(
            f"target {uri}: password_file {path} must be a regular file readable by its owner "
            f"only (chmod 600 {path}); mode is {stat.filemode(info.st_mode)}"
        )
    lines = path.read_text().splitlines()
    if not lines or not lines[0]:
        raise TargetError(f"target {uri}: password_file {path} is empty; its first line is the password")
    return lines[0]


# the login the environment gave, once taken out of it (a test sets None for a fresh read)
environment_login: Credentials | None = None


def take_environment() -> Credentials | None:
    """The login ``$STORBENCH_CQL_USERNAME``/``$STORBENCH_CQL_PASSWORD`` give, taken out of ``os.environ`` (kept
    here, in memory): the CLI calls it first thing, :func:`credentials` again (for the API)."""
    global environment_login
    user, password = os.environ.pop(USER_ENV, None), os.environ.pop(PASSWORD_ENV, None)
    if user:
        environment_login = Credentials(user, password or "")
    return environment_login


def role(service: dict[str, Any] | None) -> str | None:
    """The role a target without a URL login logs in as (its password not needed to know that), or None."""
    if service is not None:
        return (service.get("auth") or {}).get("username")
    login = take_environment()
    return login.username if login else None


def credentials(uri: str, login: LoginFile | None, service: dict[str, Any] | None) -> Credentials | None:
    """The login the target uses, by the order in the module's doc."""
    if login is not None:
        return Credentials(login.user, _read_private(uri, login.password_file))
    if service is not None:
        from storbench.services.cassandra import credentials as service_credentials

        return service_credentials(service)
    return take_environment()

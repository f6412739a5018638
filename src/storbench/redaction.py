"""What storbench never stores or shows: secret-looking settings and the user:password@ of URLs.

A setting is secret when a word of its name is key, secret, password, token or credential
(``spark.hadoop.fs.s3a.secret.key``, ``...access.key``, ``spark.ssl.keyPassword``; not
``spark.sql.shuffle.partitions``). Its value is stored and shown as ``***``: in the manifest,
sample labels, results.db, reports and progress lines. The real value only goes to the engine.
(Named ``redaction``, not ``secrets``, so it is never confused with the standard library's module.)

A secret a child process needs goes to it in a private file (:func:`private_file`), never on its command
line (``/proc/PID/cmdline``: any local user reads it) nor in its environment.
"""

from __future__ import annotations

import os
import re
import shutil
from contextlib import contextmanager
from pathlib import Path
from typing import Iterator

from storbench import scratch

MASK = "***"
_SECRET_WORDS = {"key", "secret", "password", "passwd", "token", "credential", "credentials"}


# For Spark's own redaction of its event log (kept in the run directory), which matches conf names
# with a Java regex: a superset of is_secret_name (a "key" inside a longer word, e.g. keytab, is masked
# there too: harmless, nothing reads settings back from the event log).
SPARK_REDACTION_REGEX = "(?i)" + "|".join(sorted(_SECRET_WORDS - {"credentials"}))


def is_secret_name(name: str) -> bool:
    """Whether a setting's name looks like it holds a secret (words split at '.', '-', '_' and camelCase)."""
    words = re.sub(r"([a-z0-9])([A-Z])", r"\1 \2", name).lower()
    return any(word in _SECRET_WORDS for word in re.findall(r"[a-z0-9]+", words))


def redact_settings(settings: dict[str, str]) -> dict[str, str]:
    return {key: MASK if is_secret_name(key) else value for key, value in settings.items()}


def redact_url(text: str) -> str:
    """``http://user:pass@host`` as ``http://***@host``, and ``?password=…`` (a secret name) as ``?password=***``
    (anywhere in ``text``)."""
    text = re.sub(r"//[^/@\s]*@", f"//{MASK}@", text)
    return re.sub(
        r"([?&])([\w.-]+)=([^&\s\"']*)", lambda m: f"{m[1]}{m[2]}={MASK}" if is_secret_name(m[2]) else m[0], text
    )


def redact_values(text: str, *values: str) -> str:
    """``text`` with every occurrence of each of ``values`` (keys a server may echo back) as ``***``."""
    for value in sorted(filter(None, values), key=len, reverse=True):
        text = text.replace(value, MASK)
    return text


def redact_argv(argv: list[str]) -> list[str]:
    """A command line as recorded: ``name=value`` of a secret name (--spark-conf, --sweep) and URL userinfo masked."""
    out = []
    for arg in argv:
        option, eq, rest = arg.partition("=") if arg.startswith("-") else ("", "", arg)
        name, sep, _ = rest.partition("=")
        if sep and is_secret_name(name):
            rest = f"{name}={MASK}"
        out.append(redact_url(option + eq + rest))
    return out


@contextmanager
def private_file(text: str, name: str) -> Iterator[Path]:
    """A file holding ``text`` for a child process to read: mode 0600 from its creation, alone in a new
    private directory (mkdtemp: 0700, unpredictable name); both removed when the block ends."""
    folder = scratch.make("storbench-secret-")
    try:
        path = folder / name
        with os.fdopen(os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600), "w") as handle:
            handle.write(text)
        yield path
    finally:
        shutil.rmtree(folder, ignore_errors=True)

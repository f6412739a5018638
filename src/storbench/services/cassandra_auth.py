"""Who may call ``services up cassandra``'s nodes: CQL roles and JMX, both with generated passwords.

CQL: every node runs ``PasswordAuthenticator`` with ``CassandraAuthorizer``. Cassandra makes the
well-known superuser ``cassandra``/``cassandra`` on a new cluster; on node 1, alone in the ring, storbench
logs in with it once, creates the superuser role ``storbench`` with a password from ``secrets.token_urlsafe``,
then, as ``storbench``, drops ``cassandra`` (no role named so comes back: Cassandra makes it only when no
role exists) and sets ``system_auth`` to replication factor = node count, so any node still up can
check a login while another is down (``auth_read_consistency_level: LOCAL_ONE``). The nodes join without
bootstrapping, so each later node gets the roles by ``nodetool repair -full system_auth`` as soon as it
is up, before anyone logs in there.

JMX (nodetool): each node's JMX listens on 127.0.0.1 only and asks for ``storbench`` and a second generated
password (the JDK's password and access files, 0600, one password file per node: the JVM may rewrite
it with hashes); nodetool reads the password from a 0600 file (``-pwf``), never from its command line.

The passwords live only in the service's state.json (0600) and those files, in the service directory
(0700); :func:`client_env` is what a user's shell needs (``storbench services env cassandra``).
"""

from __future__ import annotations

import os
import secrets
import time
from pathlib import Path
from typing import Any, Callable

from storbench.cassandra_cql import Credentials, session_on
from storbench.errors import EngineError
from storbench.services.process import write_private

USER = "storbench"
DEFAULT_ROLE = Credentials("cassandra", "cassandra")  # Cassandra's own, dropped once storbench's role exists
AUTH_TIMEOUT_S = 120.0
YAML = ("authenticator: PasswordAuthenticator", "authorizer: CassandraAuthorizer",
        "role_manager: CassandraRoleManager",
        # every node holds every role (system_auth RF = nodes): one node's answer is enough to log in
        "auth_read_consistency_level: LOCAL_ONE")


def prepare(workdir: Path) -> dict[str, Any]:
    """The service directory made private; the JMX access and nodetool password files; the ``auth`` part of
    the state (both passwords: state.json is 0600)."""
    os.chmod(workdir, 0o700)  # the nodes' data, their configuration and the secrets: the owner's alone
    auth = {"username": USER, "password": secrets.token_urlsafe(24), "jmx_password": secrets.token_urlsafe(24)}
    jmx = workdir / "jmx"
    jmx.mkdir(mode=0o700)
    write_private(jmx / "jmxremote.access", f"{USER} readwrite\n")
    write_private(jmx / "nodetool.password", f"{USER} {auth['jmx_password']}\n")
    return auth


def jvm_options(state: dict[str, Any], root: Path, index: int) -> list[str]:
    """A node's JMX authentication (its own password file under ``root``, the node's directory)."""
    password_file = root / "jmxremote.password"
    write_private(password_file, f"{USER} {state['auth']['jmx_password']}\n")
    # Cassandra wraps the JDK's password-file authenticator, which Java 17 keeps in a module of its own
    options = ["--add-exports=java.management/com.sun.jmx.remote.security=ALL-UNNAMED",
               "-Dcom.sun.management.jmxremote.authenticate=true", "-Dcom.sun.management.jmxremote.ssl=false",
               f"-Dcom.sun.management.jmxremote.password.file={password_file}",
               f"-Dcom.sun.management.jmxremote.access.file={Path(state['workdir']) / 'jmx' / 'jmxremote.access'}"]
    if index == 1:  # the default role at once: storbench replaces it before the other nodes start
        options.append("-Dcassandra.superuser_setup_delay_ms=0")
    return options


def nodetool_options(state: dict[str, Any]) -> list[str]:
    """nodetool's login: the user on its command line, the password in a 0600 file (none for a cluster an
    earlier storbench started without authentication)."""
    if "auth" not in state:
        return []
    return ["-u", USER, "-pwf", str(Path(state["workdir"]) / "jmx" / "nodetool.password")]


def credentials(state: dict[str, Any]) -> Credentials | None:
    """The ``storbench`` role's login, from the service's state."""
    auth = state.get("auth")
    return Credentials(auth["username"], auth["password"]) if auth else None


def client_env(state: dict[str, Any]) -> dict[str, str]:
    """What a user's shell needs to reach the cluster as storbench does: cqlsh's host and port, and the role
    (STORBENCH_CQL_USERNAME/PASSWORD, which a cassandra:// target that is not this service reads too)."""
    return {"CQLSH_HOST": state["hosts"][0], "CQLSH_PORT": str(state["ports"]["native"]),
            "STORBENCH_CQL_USERNAME": state["auth"]["username"], "STORBENCH_CQL_PASSWORD": state["auth"]["password"]}


def _retry(what: str, action: Callable[[], Any], check: Callable[[], None], timeout: float = AUTH_TIMEOUT_S) -> Any:
    deadline = time.monotonic() + timeout
    while True:
        check()
        try:
            return action()
        except Exception as exc:  # the driver's and nodetool's errors share no base but Exception
            if time.monotonic() >= deadline:
                raise EngineError(f"cassandra: {what} failed within {timeout:.0f} s: {str(exc)[:300]}") from None
            time.sleep(1.0)


def create_role(state: dict[str, Any], check: Callable[[], None]) -> None:
    """On node 1, alone in the ring: storbench's role replaces Cassandra's default one; system_auth is
    replicated to every node to come. ``check`` raises when a node died meanwhile."""
    host, port, nodes = state["hosts"][0], state["ports"]["native"], state["node_count"]
    password = state["auth"]["password"]  # token_urlsafe: letters, digits, - and _ only, safe in a CQL literal

    def as_default() -> None:
        with session_on([host], port, pin=True, credentials=DEFAULT_ROLE) as session:
            session.execute(f"CREATE ROLE IF NOT EXISTS {USER} WITH PASSWORD = '{password}' "
                            f"AND SUPERUSER = true AND LOGIN = true")

    def as_storbench() -> None:
        with session_on([host], port, pin=True, credentials=credentials(state)) as session:
            session.execute("DROP ROLE IF EXISTS cassandra")
            session.execute("ALTER KEYSPACE system_auth WITH replication = "
                            f"{{'class': 'SimpleStrategy', 'replication_factor': {nodes}}}")

    _retry("logging in with Cassandra's default role to create storbench's", as_default, check)
    _retry("replacing Cassandra's default role", as_storbench, check)


def share_roles(state: dict[str, Any], node: int, nodetool: Callable[..., str], check: Callable[[], None]) -> None:
    """The roles onto node ``node`` (just joined, without bootstrap) before anyone logs in there."""
    if node > 1:
        _retry(f"repairing system_auth onto node {node}",
               lambda: nodetool(state, "repair", "-full", "system_auth", node=node), check)

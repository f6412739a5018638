"""Who may call ``services up cassandra``'s nodes: CQL roles and JMX, both with generated passwords.

CQL: every node runs ``PasswordAuthenticator`` with ``CassandraAuthorizer`` and storbench's role manager
(``jvm/cassandra``: ``StorbenchRoleManager``, Cassandra's ``CassandraRoleManager`` without its default role).
Cassandra would make the well-known superuser ``cassandra``/``cassandra`` on a new cluster, live from the moment
the CQL port opens until someone replaces it: a local user could make a superuser of their own in that gap.
Instead node 1, alone in the ring, makes the superuser role ``storbench`` itself, with a password from
``secrets.token_urlsafe`` that it reads from a 0600 file named by a system property (``initial-role`` in the
node's 0700 directory, removed once storbench has logged in), so no role but storbench's ever exists. Logged
in as ``storbench``, storbench sets ``system_auth`` to replication factor = node count, so any node still up
can check a login while another is down (``auth_read_consistency_level: LOCAL_ONE``). The nodes join without
bootstrapping, so each later node (which makes no role) gets the roles by ``nodetool repair -full
system_auth`` as soon as it is up, before anyone logs in there.

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
AUTH_TIMEOUT_S = 120.0
ROLE_MANAGER = "storbench.cassandra.StorbenchRoleManager"  # jvm/cassandra, on the nodes' classpath
ROLE_FILE_PROPERTY = "storbench.cassandra.initial_role_file"  # its "ROLE PASSWORD" file (node 1 only)
ROLE_FILE = "initial-role"
YAML = (
    "authenticator: PasswordAuthenticator",
    "authorizer: CassandraAuthorizer",
    f"role_manager: {ROLE_MANAGER}",
    # every node holds every role (system_auth RF = nodes): one node's answer is enough to log in
    "auth_read_consistency_level: LOCAL_ONE",
)


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
    options = [
        "--add-exports=java.management/com.sun.jmx.remote.security=ALL-UNNAMED",
        "-Dcom.sun.management.jmxremote.authenticate=true",
        "-Dcom.sun.management.jmxremote.ssl=false",
        f"-Dcom.sun.management.jmxremote.password.file={password_file}",
        f"-Dcom.sun.management.jmxremote.access.file={Path(state['workdir']) / 'jmx' / 'jmxremote.access'}",
    ]
    if index == 1:  # storbench's role, made by the node itself at once (the other nodes get it by replication)
        role_file = root / ROLE_FILE
        write_private(role_file, f"{USER} {state['auth']['password']}\n")
        options += [f"-D{ROLE_FILE_PROPERTY}={role_file}", "-Dcassandra.superuser_setup_delay_ms=0"]
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
    return {
        "CQLSH_HOST": state["hosts"][0],
        "CQLSH_PORT": str(state["ports"]["native"]),
        "STORBENCH_CQL_USERNAME": state["auth"]["username"],
        "STORBENCH_CQL_PASSWORD": state["auth"]["password"],
    }


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


def await_role(state: dict[str, Any], check: Callable[[], None]) -> None:
    """On node 1, alone in the ring: once the node has made storbench's role, its password file goes and
    system_auth is replicated to every node to come. ``check`` raises when a node died meanwhile."""
    host, port, nodes = state["hosts"][0], state["ports"]["native"], state["node_count"]

    def as_storbench() -> None:
        with session_on([host], port, pin=True, credentials=credentials(state)) as session:
            session.execute(
                "ALTER KEYSPACE system_auth WITH replication = "
                f"{{'class': 'SimpleStrategy', 'replication_factor': {nodes}}}"
            )

    _retry("logging in as the role node 1 makes for storbench", as_storbench, check)
    (Path(state["workdir"]) / "node-1" / ROLE_FILE).unlink(missing_ok=True)  # the role is in system_auth now


def share_roles(state: dict[str, Any], node: int, nodetool: Callable[..., str], check: Callable[[], None]) -> None:
    """The roles onto node ``node`` (just joined, without bootstrap) before anyone logs in there."""
    if node > 1:
        _retry(
            f"repairing system_auth onto node {node}",
            lambda: nodetool(state, "repair", "-full", "system_auth", node=node),
            check,
        )


def settle_roles(state: dict[str, Any], nodetool: Callable[..., str], check: Callable[[], None]) -> None:
    """Once the ring is whole, one full repair of system_auth from node 1 (every node a replica of every role):
    a node's own repair when it joined may have run before the ring gave it its range, and a login the ring's
    probes made may have been served by another replica, so a node could still lack a role that the first
    login routed to it then refused ("Bad credentials" at node 1 right after up, under load)."""
    if state["node_count"] > 1:
        _retry(
            "repairing system_auth across the ring", lambda: nodetool(state, "repair", "-full", "system_auth"), check
        )

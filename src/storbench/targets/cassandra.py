"""``cassandra://HOST:PORT[,HOST2:PORT2]/KEYSPACE[?user=NAME&password_file=PATH][&tls=1][&ca=PATH]`` targets: a
keyspace and the YCSB table in it. Who the target logs in as (never a password in the URL): ``cassandra_login``;
TLS, and the refusal of a clear-text login to another machine: ``cassandra_tls``.

A run claims keyspace ``storbench_<run id>`` (or the one the URL names) with the
replication factor ``--replication`` asks for (default 1, refused above the cluster's node
count), and the YCSB table ``usertable (y_id varchar PRIMARY KEY, field0..field9 varchar)``.
What storbench creates it marks: a keyspace holds a ``storbench_owner`` table whose row
names the run, a table carries the comment ``storbench run <run id>``; release drops a
keyspace or table only when its mark names this run. A named keyspace that exists and
was not made by storbench is used, never dropped or truncated (and a ``usertable``
already in it is refused, not written into); a named keyspace that does not exist is
created and owned.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from storbench.cassandra_cql import Credentials
from storbench.errors import EngineError, InputError, TargetError
from storbench.redaction import redact_url
from storbench.targets import cassandra_login, cassandra_tls
from storbench.targets.base import GONE, OTHER, OURS, UNKNOWN, Target, TargetOptions, register

DEFAULT_PORT = 9042
TABLE = "usertable"
FIELDS = tuple(f"field{i}" for i in range(10))
OWNER_TABLE = "storbench_owner"  # in a keyspace storbench made: one row naming the run
KEYSPACE_RE = re.compile(r"[a-z][a-z0-9_]{0,47}")  # an unquoted CQL name; Cassandra's limit is 48
SYSTEM_KEYSPACES = (
    "system",
    "system_auth",
    "system_schema",
    "system_distributed",
    "system_traces",
    "system_views",
    "system_virtual_schema",
    "system_cluster_metadata",
)
CONNECT_TIMEOUT_S = 5.0
SCHEMA_TIMEOUT_S = 60.0  # DDL on a loaded cluster waits for every node to agree on the schema


def table_comment(run_id: str) -> str:
    return f"storbench run {run_id}"


def run_keyspace(run_id: str) -> str:
    return ("storbench_" + re.sub(r"[^a-z0-9_]", "_", run_id.lower()))[:48]


def _contact(text: str, part: str) -> tuple[str, int]:
    host, _, port = part.rpartition(":") if ":" in part else (part, "", str(DEFAULT_PORT))
    if not host or not re.fullmatch(r"[A-Za-z0-9.\-]+", host) or not port.isdigit() or not 0 < int(port) < 65536:
        raise InputError(
            f"--target {text!r}: contact point {part!r} is not HOST:PORT; a cassandra:// target is "
            f"cassandra://HOST:PORT[,HOST2:PORT2]/KEYSPACE (see `storbench services up cassandra`)"
        )
    return host, int(port)


@register
class CassandraTarget(Target):
    """A keyspace of a Cassandra cluster, reached through the DataStax Python driver (management only)."""

    scheme = "cassandra"
    replicated = True
    kind = "cassandra://"
    usage = "cassandra://host:port[,host2:port2]/keyspace[?user=NAME&password_file=PATH][&tls=1][&ca=PATH]"
    wanted = "a cassandra://HOST:PORT[/KEYSPACE] target, e.g. the one `storbench services up cassandra` prints"

    def __init__(
        self,
        contacts: list[tuple[str, int]],
        keyspace: str | None,
        options: TargetOptions,
        login: cassandra_login.LoginFile | None = None,
        tls: cassandra_tls.Tls | None = None,
    ):
        points = ",".join(f"{h}:{p}" for h, p in contacts)
        super().__init__(
            f"cassandra://{points}" + (f"/{keyspace}" if keyspace else "") + (tls.query() if tls else ""), options
        )
        self.contacts = contacts
        self.named_keyspace = keyspace
        self.keyspace = keyspace or ""  # the run's keyspace, known once claimed when not named
        self.table = TABLE
        self.replication = options.replication or 1
        self.node_count = 0  # known after precheck
        self.keyspace_owned = False  # this run created the keyspace (and marked it)
        self.table_owned = False  # this run created the table (and marked it)
        self.service = self._service(options.home)
        self.login = login  # the URL's user and password file, if it names them
        self.tls = tls  # the URL asks for TLS (cassandra_tls)
        role = login.user if login else cassandra_login.role(self.service)
        # before anything connects: no login in clear text to another machine unless --cql-insecure
        self.insecure = cassandra_tls.check_clear_text(
            self.uri, [h for h, _ in contacts], role, tls, options.cql_insecure
        )
        self._cluster: Any = None
        self._session: Any = None

    @classmethod
    def parse(cls, text: str, options: TargetOptions) -> Target:
        shown = redact_url(text)  # what an error line may echo: a ?password=... masked
        rest = text.split("://", 1)[1] if "://" in text else ""
        rest, _, query = rest.partition("?")
        netloc, _, path = rest.partition("/")
        if not netloc or "@" in netloc or "#" in text:
            raise InputError(
                f"--target {shown!r}: a cassandra:// target is cassandra://HOST:PORT[,HOST2:PORT2]"
                f"[/KEYSPACE] (see `storbench services up cassandra`)"
            )
        contacts = [_contact(shown, part) for part in netloc.split(",")]
        if len({port for _, port in contacts}) > 1:
            raise InputError(
                f"--target {shown!r}: the contact points use different ports; "
                f"one CQL port serves a whole Cassandra cluster"
            )
        keyspace = path.strip("/") or None
        if keyspace is not None:
            if not KEYSPACE_RE.fullmatch(keyspace.lower()):
                raise InputError(
                    f"--target {shown!r}: keyspace {keyspace!r} is not allowed; use 1-48 letters, "
                    f"digits and '_', starting with a letter (no quotes)"
                )
            keyspace = keyspace.lower()  # as Cassandra reads an unquoted name
            if keyspace in SYSTEM_KEYSPACES:
                raise InputError(
                    f"--target {shown!r}: {keyspace} is one of Cassandra's system keyspaces; "
                    f"name another keyspace or none (storbench then makes storbench_<run id>)"
                )
        return cls(contacts, keyspace, options, cassandra_login.parse(text, query), cassandra_tls.parse(text, query))

    # -- the service behind it -------------------------------------------------------------------

    def _service(self, home: Path | None) -> dict[str, Any] | None:
        """storbench's own cluster (services up cassandra), when every contact point is one of its nodes."""
        from storbench.services import service_status

        state = service_status("cassandra", home) if home else None
        if not state:
            return None
        ours = {(host, state["ports"]["native"]) for host in state["hosts"]}
        return state if set(self.contacts) <= ours else None

    def local_path(self) -> Path | None:
        """Our own cluster's first node's data directory: all the nodes' directories are on this host."""
        if not self.service:
            return None
        return Path(next(p["data_dir"] for p in self.service["processes"] if p["kind"] == "node"))

    def nodes_file(self) -> Path | None:
        return Path(self.service["nodes"]) if self.service and self.service.get("nodes") else None

    # -- CQL ----------------------------------------------------------------------------------------

    def credentials(self) -> Credentials | None:
        """The login of this target's sessions, the engine's and YCSB's (``cassandra_login``)."""
        return cassandra_login.credentials(self.uri, self.login, self.service)

    def session(self) -> Any:
        """The management session (contact points as given, token-aware); opened once, closed at release."""
        if self._session is None:
            from storbench.cassandra_cql import open_cluster

            hosts = list(dict.fromkeys(h for h, _ in self.contacts))
            login = self.credentials()
            try:
                self._cluster, self._session = open_cluster(
                    hosts,
                    self.contacts[0][1],
                    CONNECT_TIMEOUT_S,
                    SCHEMA_TIMEOUT_S,
                    credentials=login,
                    ssl_context=cassandra_tls.ssl_context(self.tls) if self.tls else None,
                )
            except EngineError:
                raise
            except Exception as exc:  # NoHostAvailable, OperationTimedOut, ...: the driver's errors share no base
                reason = _reason(exc)
                if "authenticat" in reason.lower():
                    who = f"the login of role {login.username}" if login else "a session without credentials"
                    raise TargetError(
                        f"target {self.uri}: {self._points()} refused {who} ({reason}); {cassandra_login.HOW}"
                    ) from None
                raise TargetError(
                    f"target {self.uri}: cannot connect to {self._points()} ({reason}); "
                    f"is Cassandra running? (`storbench services up cassandra`)"
                ) from None
        return self._session

    def _points(self) -> str:
        return ", ".join(f"{h}:{p}" for h, p in self.contacts)

    def _close(self) -> None:
        if self._cluster is not None:
            self._cluster.shutdown()
        self._cluster = self._session = None

    def keyspace_exists(self, keyspace: str) -> bool:
        rows = self.session().execute(
            "SELECT keyspace_name FROM system_schema.keyspaces WHERE keyspace_name = %s", (keyspace,)
        )
        return rows.one() is not None

    def table_comment_of(self, keyspace: str, table: str) -> str | None:
        """The comment of ``keyspace.table``, or None when there is no such table."""
        row = (
            self.session()
            .execute(
                "SELECT comment FROM system_schema.tables WHERE keyspace_name = %s AND table_name = %s",
                (keyspace, table),
            )
            .one()
        )
        return None if row is None else (row.comment or "")

    def owner_of(self, keyspace: str) -> str | None:
        """The run id a storbench-made keyspace's owner row names, or None."""
        if self.table_comment_of(keyspace, OWNER_TABLE) is None:
            return None
        row = self.session().execute(f"SELECT run_id FROM {keyspace}.{OWNER_TABLE} WHERE k = 0").one()
        return row.run_id if row else None

    def node_count_now(self) -> int:
        """Nodes of the cluster as the driver's metadata knows them (the contact points' peers included)."""
        self.session()
        return len(self._cluster.metadata.all_hosts())

    # -- the lifecycle ------------------------------------------------------------------------------

    def precheck(self, need_bytes: int) -> None:
        """Reachable; replication within the node count; a named foreign keyspace without a usertable."""
        self.node_count = self.node_count_now()
        if self.replication > self.node_count:
            self._close()
            raise InputError(
                f"--replication {self.replication}: above the {self.node_count} node(s) of "
                f"{self._points()}; allowed: 1 to {self.node_count}"
            )
        if (
            self.named_keyspace
            and self.keyspace_exists(self.named_keyspace)
            and self.owner_of(self.named_keyspace) is None
            and self.table_comment_of(self.named_keyspace, TABLE) is not None
        ):
            self._close()
            raise TargetError(
                f"target {self.uri}: keyspace {self.named_keyspace} already has a table {TABLE} "
                f"that storbench did not create; refusing to write into it (name another keyspace "
                f"or none)"
            )

    def claim_root(self) -> str:
        try:
            return self._create()
        except BaseException:  # a failed or interrupted claim leaves nothing of its own behind
            try:
                self.release_root()
            except Exception:  # the claim's own error is the one to report
                pass
            raise

    def _create(self) -> str:
        session = self.session()
        self.keyspace = self.named_keyspace or run_keyspace(self.run_id)
        if not self.keyspace_exists(self.keyspace):
            session.execute(
                f"CREATE KEYSPACE {self.keyspace} WITH replication = "
                f"{{'class': 'SimpleStrategy', 'replication_factor': {self.replication}}}"
            )
            session.execute(
                f"CREATE TABLE {self.keyspace}.{OWNER_TABLE} (k int PRIMARY KEY, run_id text) "
                f"WITH comment = '{table_comment(self.run_id)}'"
            )
            session.execute(f"INSERT INTO {self.keyspace}.{OWNER_TABLE} (k, run_id) VALUES (0, %s)", (self.run_id,))
            self.keyspace_owned = True
        elif not self.named_keyspace:
            raise TargetError(f"target {self.uri}: keyspace {self.keyspace} already exists; refusing to reuse it")
        if self.table_comment_of(self.keyspace, TABLE) is not None:
            raise TargetError(f"target {self.uri}: {self.keyspace}.{TABLE} already exists; refusing to write into it")
        columns = ", ".join(f"{f} varchar" for f in FIELDS)
        session.execute(
            f"CREATE TABLE {self.keyspace}.{TABLE} (y_id varchar PRIMARY KEY, {columns}) "
            f"WITH comment = '{table_comment(self.run_id)}'"
        )
        self.table_owned = True
        return f"cassandra://{self.contacts[0][0]}:{self.contacts[0][1]}/{self.keyspace}"

    def release(self, keep_data: bool = False) -> bool:
        try:
            return super().release(keep_data)
        finally:
            self._close()

    def release_root(self) -> bool:
        """Drop the keyspace when this run made it (its owner row says so), else only the table it made."""
        if self.keyspace_owned and self.owner_of(self.keyspace) == self.run_id:
            self.session().execute(f"DROP KEYSPACE {self.keyspace}")
            return True
        if self.table_owned and self.table_comment_of(self.keyspace, TABLE) == table_comment(self.run_id):
            self.session().execute(f"DROP TABLE {self.keyspace}.{TABLE}")
            return True
        return False

    def root_state(self) -> str:
        """The run's keyspace (from its root ``cassandra://HOST:PORT/KEYSPACE``): ``ours`` when its owner row or
        its YCSB table's comment names this run (what ``release_root`` then drops), ``gone`` when neither is
        there, ``other`` when something not marked for this run is. ``storbench cleanup`` of a crashed run
        reaches the keyspace so, with a target parsed anew (it never knew what the run had made)."""
        keyspace = (self.root_uri or "").rpartition("/")[2] if self.root_uri else self.keyspace
        if not keyspace or not self.run_id:
            return UNKNOWN
        self.keyspace = keyspace
        if not self.keyspace_exists(keyspace):
            return GONE
        if self.owner_of(keyspace) == self.run_id:
            self.keyspace_owned = True
            return OURS
        comment = self.table_comment_of(keyspace, TABLE)
        if comment == table_comment(self.run_id):
            self.table_owned = True
            return OURS
        return GONE if comment is None and keyspace == self.named_keyspace else OTHER

    def manifest_config(self) -> dict[str, Any]:
        return {
            "contact_points": [f"{h}:{p}" for h, p in self.contacts],
            "keyspace": self.keyspace,
            "table": self.table,
            "replication": self.replication,
            "cassandra_nodes": self.node_count,
            "keyspace_owned": self.keyspace_owned,
            "cql_tls": self.tls.job() if self.tls else None,
            **({"cql_insecure": True} if self.insecure else {}),
        }


def _reason(exc: Exception) -> str:
    errors = getattr(exc, "errors", None)  # NoHostAvailable: {host: error}
    if isinstance(errors, dict) and errors:
        return "; ".join(f"{host}: {error}" for host, error in errors.items())[:300]
    return str(exc)[:300] or type(exc).__name__

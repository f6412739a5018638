"""Where Spark keeps its catalog: its embedded in-memory one (the default), or a Hive metastore (``catalog=hive``).

With ``catalog=hive`` Spark loads Hive 4.0.1's metastore client in its isolated class loader
(``spark.sql.hive.metastore.version=4.0.1``, ``spark.sql.hive.metastore.jars=path`` with the jars
scripts/setup.sh resolved in jvm/metastore/client; Spark 4 supports 4.0.x metastores) and talks thrift to
``metastore`` (a ``thrift://HOST:PORT`` URI; empty: the one ``storbench services up metastore`` runs under
the results home). On storbench's own metastore it logs in as its user with SASL PLAIN
(``metastore.client.auth.mode=PLAIN``), the password read by user name from the service's credential store
(a 0600 JCEKS file, named by ``hadoop.security.credential.provider.path``): no secret is in a setting.
A metastore given by URI that is not storbench's is reached without a login.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from storbench.errors import InputError
from storbench.services import metastore
from storbench.services.jvm import metastore_classpath

HIVE_VERSION = "4.0.1"
CATALOGS = ("embedded", "hive")


def resolve(params: dict[str, Any], home: Path | None) -> dict[str, Any] | None:
    """The metastore a run with ``catalog=hive`` uses: its URI and, for storbench's own, its login; None for
    the embedded catalog. One line when there is none, or it does not answer."""
    if params.get("catalog", "embedded") != "hive":
        return None
    uri = (params.get("metastore") or "").rstrip("/")
    state = metastore.running(home) if home else None
    if not uri:
        if not state:
            raise InputError(
                "--set catalog=hive: no metastore: start one with `storbench services up metastore` "
                "or pass --set metastore=thrift://HOST:PORT"
            )
        uri = state["uri"]
    elif not uri.startswith("thrift://") or ":" not in uri.removeprefix("thrift://"):
        raise InputError(f"--set metastore={uri}: expected thrift://HOST:PORT")
    if not metastore.answers(uri):
        raise InputError(
            f"--set catalog=hive: the metastore at {uri} does not answer (is it running? "
            f"`storbench services status metastore`)"
        )
    own = state if state and state["uri"] == uri else None
    return {
        "uri": uri,
        "user": own["auth"]["username"] if own else None,
        "credentials": own["credentials"] if own else None,
        "audit_log": own["audit_log"] if own else None,
    }


def for_workloads(workloads: list[tuple[Any, dict[str, Any]]], home: Path | None) -> dict[str, Any] | None:
    """The metastore of the first workload that asks for ``catalog=hive`` (one Spark session, one catalog)."""
    wanted = [params for _workload, params in workloads if params.get("catalog") == "hive"]
    return resolve(wanted[0], home) if wanted else None


class CallCounter:
    """The metastore calls so far, from its audit log (one ``cmd=`` line per call; the lines of a connection's
    clean-up are not calls), read on from where the last count stopped."""

    NOT_CALLS = ("cmd=Cleaning up thread local RawStore", "cmd=Done cleaning up thread local RawStore")

    def __init__(self, path: str) -> None:
        self.path, self.offset, self.calls = Path(path), 0, 0

    def __call__(self) -> int:
        with self.path.open("rb") as log:
            log.seek(self.offset)
            chunk = log.read()
        whole = chunk[: chunk.rfind(b"\n") + 1]  # a line still being written is counted next time
        self.offset += len(whole)
        lines = whole.decode(errors="replace").splitlines()
        self.calls += sum(1 for line in lines if "cmd=" in line and not any(n in line for n in self.NOT_CALLS))
        return self.calls


def spark_conf(found: dict[str, Any] | None) -> dict[str, str]:
    """The session's settings for the metastore ``resolve`` found (none for the embedded catalog)."""
    if not found:
        return {}
    conf = {
        "spark.sql.catalogImplementation": "hive",
        "spark.sql.hive.metastore.version": HIVE_VERSION,
        "spark.sql.hive.metastore.jars": "path",
        "spark.sql.hive.metastore.jars.path": ",".join(
            "file://" + jar for jar in metastore_classpath(client=True).split(":")
        ),
        "spark.hadoop.hive.metastore.uris": found["uri"],
        "spark.hadoop.hive.metastore.execute.setugi": "false",
    }
    if found["user"]:
        conf |= {
            "spark.hadoop.metastore.client.auth.mode": "PLAIN",
            "spark.hadoop.metastore.client.plain.username": found["user"],
            "spark.hadoop.hadoop.security.credential.provider.path": "jceks://file" + found["credentials"],
        }
    return conf

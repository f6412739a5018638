"""What the TPC-DS workloads of one run share (``ctx.state(TpcdsState)``): the data set the queries read
(tpcds-gen's, or the one ``data`` names), and the catalog database the run owns: created on first use, made
current, dropped at cleanup unless the data is kept, never one it did not create."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from storbench.context import RunContext
from storbench.engines.spark import SparkEngine
from storbench.errors import InputError, WorkloadError
from storbench.workloads.on_spark import spark_session
from storbench.workloads.tpcds.data import TABLES, create_database, drop_database, run_database


@dataclass
class TpcdsData:
    """A data set the queries read: tpcds-gen's, or the one ``data`` names."""

    data_uri: str
    sf: float
    answers_root: Path  # where DuckDB reads it for the answers (tpcds-gen's local copy of a remote one)
    local: bool  # DuckDB can read it on this machine


@dataclass
class Database:
    """The run's own catalog database, and the one that was current before it."""

    name: str
    previous: str


@dataclass
class TpcdsState:
    """What the TPC-DS workloads of a run share (``ctx.state(TpcdsState)``)."""

    gen_planned: bool = False  # the suite has a tpcds-gen step (known at check time, before it ran)
    generated: TpcdsData | None = None  # what tpcds-gen wrote
    staging: Path | None = None  # tpcds-gen's local staging directory
    database: Database | None = None  # made on first use, dropped at cleanup
    registered: str | None = None  # the data set whose tables the run's database holds
    answers: dict[str, Any] = field(default_factory=dict)  # DuckDB's answers by query, for that data set


def dataset_of(ctx: RunContext, params: dict[str, Any], who: str) -> TpcdsData:
    if params.get("data"):
        uri = params["data"].rstrip("/")
        return TpcdsData(uri, params["sf"], Path(uri.removeprefix("file://")), uri.startswith(("file://", "/")))
    generated = ctx.state(TpcdsState).generated
    if generated is None and params.get("catalog_database"):  # another run's tables; no files to check against
        return TpcdsData("", params["sf"], Path(), False)
    if generated is None:
        raise WorkloadError(f"{who}: no TPC-DS data; run tpcds-gen first or pass --set data=URI")
    return generated


def check_data_param(ctx: RunContext, params: dict[str, Any], who: str) -> None:
    data = params.get("data") or ""
    if not data:
        if not ctx.state(TpcdsState).gen_planned and not params.get("catalog_database"):
            raise InputError(
                f"workload {who}: no TPC-DS tables: the suite has no tpcds-gen step; "
                f"add it or pass --set data=URI of a generated dataset"
            )
        return
    if data.startswith("file://") or data.startswith("/"):
        root = Path(data.removeprefix("file://"))
        missing = [t for t in TABLES if not (root / t).is_dir()]
        if missing:
            raise InputError(
                f"--set data={data}: missing TPC-DS tables {', '.join(missing[:5])}"
                + (f" and {len(missing) - 5} more" if len(missing) > 5 else "")
                + " (expected one folder per table, as tpcds-gen writes them)"
            )


def use_database(ctx: RunContext, shared: str = "") -> str:
    """The run's own database (issue 12 item 7), created on first use and made current: the query
    texts name their tables unqualified, and every stream thread shares the session's current one.
    ``shared``: an existing database another run registered (catalog_database), used as it is."""
    state = ctx.state(TpcdsState)
    if shared:
        if not spark_session(ctx).catalog.databaseExists(shared):
            raise WorkloadError(f"--set catalog_database={shared}: no such database in the catalog")
        spark_session(ctx).sql(f"USE `{shared}`")
        return shared
    if state.database is None:
        owned = Database(run_database(ctx.run_id), spark_session(ctx).catalog.currentDatabase())
        create_database(spark_session(ctx), owned.name, database_location(ctx))
        state.database = owned
    spark_session(ctx).sql(f"USE `{state.database.name}`")
    return state.database.name


# The file systems a Hive metastore reaches itself: it checks (and makes) a database's and a table's location
# with its own Hadoop, which has no S3A and no keys. On s3:// the run's database stays in the metastore's
# warehouse; its tables still point at the data on S3 (Spark keeps their path in its own table properties,
# after the metastore refuses the Hive-compatible form with the s3a:// location).
METASTORE_REACHES = ("file", "hdfs")


def database_location(ctx: RunContext) -> str | None:
    hive = ctx.engine(SparkEngine).catalog is not None
    return None if hive and ctx.target.scheme not in METASTORE_REACHES else ctx.data_uri("tpcds-catalog")


def drop_run_database(ctx: RunContext) -> None:
    """Only the database this run created; never a table by an unqualified name."""
    state = ctx.state(TpcdsState)
    owned, state.database = state.database, None
    if owned and ctx.keep_data:  # its tables name the kept files: another run may read them (catalog_database)
        ctx.notes.append(f"tpcds: database {owned.name} kept with the data (--keep-data)")
    elif owned:
        drop_database(spark_session(ctx), owned.name, owned.previous)

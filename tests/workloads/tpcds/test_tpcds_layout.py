"""The paper's layout with a real local Spark: a fact table in Hive partitions on its date key, registered
in the catalog with its partitions, read back by Spark and by DuckDB (the reference answers) alike.

One small fact table (web_returns at SF 0.01) keeps it quick; the full partitioned data set at SF 0.01
has about 9,000 partition folders, which the CLI tests avoid (they use the flat layout); the generation
job's own tests run a few tables through it.
"""

import os
import sys
from pathlib import Path

import pytest

from storbench.services.jvm import launcher_jar
from storbench.workloads.tpcds import data as d
from storbench.workloads.tpcds.layout import lay_out, layout_stats
from storbench.workloads.tpcds.queries import duckdb_connect
from tests.spark_local import local_session

pytestmark = pytest.mark.spark
SRC = str(Path(__file__).resolve().parents[3] / "src")


@pytest.fixture(scope="module")
def spark():
    # the generation tasks' Python: this interpreter (DuckDB), importing this tree's storbench, as the Spark
    # engine and the CLI tests give them
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    os.environ["PYTHONPATH"] = os.pathsep.join(filter(None, [SRC, os.environ.get("PYTHONPATH")]))
    session = local_session(
        "tpcds-layout-test",
        **{
            "spark.sql.shuffle.partitions": "2",
            "spark.jars": str(launcher_jar()),  # storbench.jvm.PutFile, as the Spark engine adds it
        },
    )
    yield session
    session.stop()


def test_partitioned_fact_table_round_trip(spark, tmp_path):
    staged = d.generate_table("web_returns", 0.01, tmp_path / "staging")
    rows = d.parquet_rows(staged)
    assert rows > 1000
    out = tmp_path / "data"
    how = lay_out(
        staged, out / "web_returns", "web_returns", "partitioned", 32, d.local_bytes(staged), 2, tmp_path / "scratch"
    )
    folders = [p.name for p in (out / "web_returns").iterdir() if p.is_dir()]
    assert how == "partitioned" and all(name.startswith("wr_returned_date_sk=") for name in folders)
    assert "wr_returned_date_sk=__HIVE_DEFAULT_PARTITION__" in folders  # rows without a date key
    # one writer per date: one file in each folder, the rows sorted on the key so none is reopened
    stats = layout_stats(out / "web_returns")
    assert stats["files"] == stats["partitions"] == len(folders) and stats["max_files_per_folder"] == 1
    assert d.parquet_rows(out / "web_returns") == rows

    spark.sql(f"CREATE TABLE web_returns USING parquet LOCATION 'file://{out}/web_returns'")
    spark.sql("ALTER TABLE web_returns RECOVER PARTITIONS")
    assert spark.sql("SHOW PARTITIONS web_returns").count() == len(folders)
    assert spark.table("web_returns").count() == rows
    spark.sql("ANALYZE TABLE web_returns COMPUTE STATISTICS FOR ALL COLUMNS")
    stats = [r for r in spark.sql("DESCRIBE EXTENDED web_returns").collect() if r[0] == "Statistics"]
    assert stats and f"{rows} rows" in stats[0][1]

    con = duckdb_connect()
    con.execute(f"CREATE VIEW staged AS SELECT * FROM read_parquet('{staged}/*.parquet')")
    con.execute(
        f"CREATE VIEW laid_out AS SELECT * FROM read_parquet('{out}/web_returns/**/*.parquet', "
        f"hive_partitioning = true)"
    )
    query = "SELECT count(*), count(wr_returned_date_sk), sum(wr_returned_date_sk), sum(wr_net_loss) FROM {}"
    assert con.execute(query.format("laid_out")).fetchall() == con.execute(query.format("staged")).fetchall()
    spark_sums = spark.sql(query.format("web_returns")).collect()[0]
    assert tuple(spark_sums) == con.execute(query.format("staged")).fetchall()[0]


def test_flat_layout_has_files_of_about_file_mb(spark, tmp_path):
    staged = d.generate_table("store_sales", 0.01, tmp_path / "staging")
    rows, size = d.parquet_rows(staged), d.local_bytes(staged)
    out = tmp_path / "data" / "store_sales"
    assert lay_out(staged, out, "store_sales", "flat", 1, size, 2, tmp_path / "scratch") == "split"
    files = list(Path(out).glob("*.parquet"))
    assert len(files) >= size // 1_000_000 > 1 and not [p for p in out.iterdir() if p.is_dir()]
    assert spark.read.parquet(f"file://{out}").count() == rows
    small = d.generate_table("reason", 0.01, tmp_path / "staging")  # about file_mb or less: moved as it is
    rows = d.parquet_rows(small)
    assert (
        lay_out(small, tmp_path / "data" / "reason", "reason", "flat", 1, d.local_bytes(small), 2, tmp_path / "scratch")
        == "moved"
    )
    assert not list(small.glob("*.parquet")) and d.parquet_rows(tmp_path / "data" / "reason") == rows > 0


def test_a_failing_or_wrong_query_is_recorded_with_its_error(spark):
    from storbench.workloads.tpcds.check import summarize
    from storbench.workloads.tpcds.streams import _run_query

    failed = _run_query(spark, "qx", "SELECT * FROM no_such_table", None)
    assert failed["status"] == "failed" and "no_such_table" in failed["error"] and "\n" not in failed["error"]
    answer = {"summary": summarize([(1, "a")]).to_dict()}
    assert _run_query(spark, "q", "SELECT 1, 'a'", answer)["status"] == "ok"
    wrong = _run_query(spark, "q", "SELECT 2, 'a'", answer)
    assert wrong["status"] == "mismatch" and wrong["why"] == "column 1: sum 2.0, expected 1.0"
    assert _run_query(spark, "q", "SELECT 1, 'a'", None)["status"] == "unchecked"


def test_the_run_owns_its_database_and_leaves_the_users_tables_alone(spark, tmp_path):
    """Issue 12 item 7: a user's default.item survives the run's registration, queries and cleanup."""
    from types import SimpleNamespace

    from storbench.errors import WorkloadError
    from storbench.workloads.tpcds import run_state
    from storbench.workloads.tpcds.streams import run_streams

    spark.sql("USE default")
    spark.sql(f"CREATE TABLE default.item (i_note STRING) USING parquet LOCATION 'file://{tmp_path}/user-item'")
    try:
        spark.sql("INSERT INTO default.item VALUES ('mine'), ('also mine')")
        for table in d.TABLES:  # one column k in every table of the run's data set
            spark.range(3).withColumnRenamed("id", "k").write.parquet(f"file://{tmp_path}/data/{table}")

        def data_uri(name):
            return f"file://{tmp_path}/run/{name}"

        def context():  # what use_database reads of a run context: one TpcdsState per run
            states = {}
            return SimpleNamespace(
                run_id="20261123-170412-ab12",
                data_uri=data_uri,
                keep_data=False,
                notes=[],
                engine=lambda kind: SimpleNamespace(start=lambda: spark, catalog=None),
                state=lambda kind: states.setdefault(kind, kind()),
            )

        ctx = context()
        database = run_state.use_database(ctx)
        assert database == "storbench_20261123_170412_ab12"
        d.register_tables(spark, f"file://{tmp_path}/data", database)
        d.register_tables(spark, f"file://{tmp_path}/data", database)  # a sweep point registers again
        assert (tmp_path / "run" / "tpcds-catalog").is_dir()  # in the run root, not ./spark-warehouse
        # the query texts name tables unqualified: the run's item, in every stream thread
        result = run_streams(spark, {"q": "SELECT sum(k) FROM item"}, {}, [["q"], ["q"]], "g", 2)
        assert [s["results"]["q"]["status"] for s in result["streams"]] == ["unchecked", "unchecked"]
        with pytest.raises(WorkloadError, match="already exists"):  # never reused, even by the same run id
            run_state.use_database(context())

        run_state.drop_run_database(ctx)
        run_state.drop_run_database(ctx)  # the second workload's cleanup: nothing left to do
        assert not spark.catalog.databaseExists(database)
        assert spark.catalog.currentDatabase() == "default"
        assert sorted(r[0] for r in spark.table("default.item").collect()) == ["also mine", "mine"]
        assert (tmp_path / "data" / "item").is_dir()  # external tables: the data set's files stay
        assert not (tmp_path / "run" / "tpcds-catalog").exists()
    finally:
        spark.sql("DROP TABLE IF EXISTS default.item")


def test_generation_runs_a_task_per_table_part_and_puts_each_file_from_its_task(spark, tmp_path):
    """The remote path (each task's files put through the executor's Hadoop client by storbench.jvm.PutFile, its
    local copy deleted) on a file:// URI standing in for hdfs://; rows read back by Spark."""
    from storbench.workloads.tpcds.pipeline import generate

    tables = ("web_returns", "reason", "inventory", "ship_mode")
    local = tmp_path / "executor-local"
    local.mkdir()
    os.environ["SPARK_LOCAL_DIRS"] = str(local)  # what Spark sets for its Python workers (local mode: forked here)
    try:
        info = generate(spark, 0.01, "partitioned", 32, f"file://{tmp_path}/target", None, tables=tables)
    finally:
        del os.environ["SPARK_LOCAL_DIRS"]
    done = info["tables"]
    assert info["tasks"] == 4 and sorted(done) == sorted(tables)
    assert done["web_returns"]["how"] == "partitioned" and done["web_returns"]["max_files_per_folder"] == 1
    assert done["web_returns"]["files"] == done["web_returns"]["partitions"] > 500
    assert done["reason"]["how"] == "moved" and done["reason"]["files"] == 1
    for table in tables:
        assert spark.read.parquet(f"file://{tmp_path}/target/{table}").count() == done[table]["rows"] > 0
        assert d.local_bytes(tmp_path / "target" / table) == done[table]["bytes"]
        assert [t["cwd"] for t in done[table]["tasks"]] == [os.getcwd()]  # local mode: the driver's own
    assert list(local.iterdir()) == []  # every file put and deleted, every task's folder gone with its last


def test_generation_on_a_file_target_renames_the_parts_into_place(spark, tmp_path):
    from storbench.workloads.tpcds.pipeline import generate, plan

    staging = tmp_path / "run" / "tpcds-staging"
    info = generate(spark, 0.01, "flat", 1, f"file://{tmp_path}/run/tpcds", staging, tables=("store_sales", "reason"))
    assert info["tables"]["store_sales"]["how"] == "split" and info["tables"]["reason"]["how"] == "moved"
    assert d.parquet_rows(tmp_path / "run" / "tpcds" / "store_sales") == info["tables"]["store_sales"]["rows"] > 0
    assert list(staging.iterdir()) == []  # each task's staging folder gone
    # above SF 2 the splittable tables are split into parts, largest first; the small ones stay whole
    chunks = plan(10.0)
    assert chunks[0] == ("store_sales", 1, 5) and ("reason", 1, 1) in chunks and ("reason", 2, 5) not in chunks


def test_a_generator_failure_fails_the_job_with_its_message(spark, tmp_path):
    from storbench.workloads.tpcds.pipeline import generate

    with pytest.raises(Exception, match="tpcgen-cli failed for table no_such_table at SF 0.01"):
        generate(
            spark,
            0.01,
            "flat",
            32,
            f"file://{tmp_path}/target",
            tmp_path / "staging",
            tables=("reason", "no_such_table"),
        )

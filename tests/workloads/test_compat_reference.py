"""`--mode compat` is the reference (pyspark-benchmark, paper 000's tool), call for call.

The reference's DataFrame calls are transcribed in tests/data/compat/pyspark-benchmark.json from its source.
This test rebuilds them with a real local Spark and compares the plans Spark makes of them with the plans of
storbench's compat workloads (analyzed plans, expression ids and the UDF's name normalised), and checks that
the same Spark jobs run inside the timed window: the CSV header job before it, the action inside it."""

import json
import os
import re
import sys
import uuid
from contextlib import contextmanager
from pathlib import Path

import pytest

from storbench.workloads import spark_transforms as st

pytestmark = pytest.mark.spark
REFERENCE = json.loads((Path(__file__).parents[1] / "data" / "compat" / "pyspark-benchmark.json").read_text())
PARAMS = {"rows": 2000, "partitions": 2, "format": "csv", "seed": 8675309, "cold_cache": False,
          "repartition_partitions": 8}  # the reference's -r N (default 200): small here, the plan is the same


@pytest.fixture(scope="module")
def spark():
    from pyspark.sql import SparkSession

    os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")
    session = (SparkSession.builder.master("local[2]").appName("compat-reference-test")
               .config("spark.ui.enabled", "false").config("spark.driver.host", "127.0.0.1")
               .config("spark.driver.bindAddress", "127.0.0.1").config("spark.pyspark.python", sys.executable)
               # as storbench's engine runs compat UDFs: pickled rows, the reference's way (engines/spark.py)
               .config("spark.sql.execution.pythonUDF.arrow.enabled", "false")
               .config("spark.sql.shuffle.partitions", "4").getOrCreate())  # small: the plans are what counts
    yield session
    session.stop()


def _plan(frame) -> str:
    text = frame._jdf.queryExecution().analyzed().toString()
    return re.sub(r"#\d+L?", "", text)  # expression ids differ between two otherwise equal plans


def _reference_dataset(spark, spec):
    from pyspark.sql import functions as F

    gen = spec["generate"]
    frame = spark.range(gen["range"]["start"], PARAMS[gen["range"]["end"]],
                        numPartitions=PARAMS[gen["range"]["numPartitions"]])
    for name, kind, *args in gen["columns"]:
        if kind == "udf":
            def getUUID():  # noqa: N802 - the reference's function; nested, so Spark pickles it by value
                return uuid.uuid4().hex

            column = F.udf(getUUID, args[1])()
        elif kind == "substring":
            column = F.substring(F.col(args[0]), args[1], args[2])
        elif kind == "rand_times":
            column = F.rand(seed=args[0]) * args[1]
        else:
            column = F.col(args[0]).cast(args[1])
        frame = frame.withColumn(name, column)
    return frame.drop(gen["drop"])


def _reference_query(df, calls):
    from pyspark.sql import functions as F

    for call, *args in calls:
        if call == "groupBy":
            df = df.groupBy(*args)
        elif call == "agg":
            df = df.agg(*[getattr(F, fn)(col).alias(alias) for fn, col, alias in args])
        elif call == "repartition":
            assert args[0]["default"] == st.REPARTITION_PARAMS[0].default
            df = df.repartition(PARAMS["repartition_partitions"], args[1])
        elif call == "join_grouped":  # df.join([broadcast](df.groupBy(on).agg(count('*'))), on=, how=)
            on, how, broadcast = args
            grouped = df.groupBy(on).agg(F.count("*").alias("total_count"))
            df = df.join(F.broadcast(grouped) if broadcast else grouped, on=on, how=how)
        else:
            raise AssertionError(f"the description names a call this test does not know: {call}")
    return df


def _jobs(spark) -> int:
    return len(spark.sparkContext.statusTracker().getJobIdsForGroup(None))


class _Ctx:
    """What the transform workloads use of a run context, with a window that counts Spark's jobs."""

    def __init__(self, spark, uri):
        self.spark, self.mode, self.shared = spark, "compat", {"dataset": {"uri": uri, "format": "csv"}}
        self.window_jobs = None

    @contextmanager
    def measure(self):
        before = _jobs(self.spark)
        yield
        self.window_jobs = _jobs(self.spark) - before


def test_the_generated_dataset_is_the_references(spark):
    ours = st.Datagen().frame(spark, "compat", PARAMS)
    assert _plan(ours) == _plan(_reference_dataset(spark, REFERENCE))
    assert "getUUID(" in _plan(ours)  # a Python UDF per row, as the reference generates it


@pytest.fixture(scope="module")
def dataset(spark, tmp_path_factory):
    uri = f"file://{tmp_path_factory.mktemp('compat')}/dataset"
    _reference_dataset(spark, REFERENCE).write.csv(uri, mode="overwrite", header=REFERENCE["generate"]["write"]["header"])
    return uri


@pytest.mark.parametrize("name", sorted(REFERENCE["tests"]))
def test_each_timed_query_and_its_window_are_the_references(spark, dataset, name):
    uri = dataset
    workload = {w.name: w for w in (st.GroupBy(), st.Repartition(), st.InnerJoin(), st.BroadcastJoin())}[name]
    assert REFERENCE["read"] == {"format": "csv", "header": True, "schema": None, "outside_timer": True}

    before = _jobs(spark)
    df = spark.read.csv(uri, header=True)  # the reference's read, before its timer
    read_jobs = _jobs(spark) - before
    reference = _reference_query(df, REFERENCE["tests"][name])
    start = _jobs(spark)
    assert REFERENCE["action"] == "rdd.count"
    reference_rows = reference.rdd.count()
    reference_window = _jobs(spark) - start

    ctx = _Ctx(spark, uri)
    assert _plan(workload.transform(workload.read(ctx), PARAMS)) == _plan(reference)
    before = _jobs(spark)
    workload.run(ctx, PARAMS)
    assert ctx.window_jobs == reference_window  # the action's jobs, no more, inside the window
    assert _jobs(spark) - before - ctx.window_jobs == read_jobs  # the header job, outside it
    assert 0 < reference_rows <= PARAMS["rows"]

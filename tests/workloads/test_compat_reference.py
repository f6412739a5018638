"""`--mode compat` is the reference (pyspark-benchmark, paper 000's tool), call for call.

The reference's DataFrame calls are transcribed in tests/data/compat/pyspark-benchmark.json from its source.
This test rebuilds them with a real local Spark and compares the plans Spark makes of them with the plans of
storbench's compat workloads (analyzed plans, expression ids and the UDF's name normalised), and checks that
the same Spark jobs run inside the timed window: the CSV header job before it, the action inside it."""

import re
import types
import sys
from contextlib import contextmanager

import pytest

from storbench.workloads import compat_reference as ref
from storbench.workloads import spark_transforms as st
from tests.spark_local import local_session

pytestmark = pytest.mark.spark
REFERENCE = ref.load()
PARAMS = {
    "rows": 2000,
    "partitions": 2,
    "format": "csv",
    "seed": 8675309,
    "cold_cache": False,
    "repartition_partitions": 8,
}  # the reference's -r N (default 200): small here, the plan is the same


@pytest.fixture(scope="module")
def spark():
    session = local_session(
        "compat-reference-test",
        **{
            "spark.pyspark.python": sys.executable,
            # as storbench's engine runs compat UDFs: pickled rows, the reference's way (engines/spark.py)
            "spark.sql.execution.pythonUDF.arrow.enabled": "false",
            "spark.sql.shuffle.partitions": "4",  # small: the plans are what counts
        },
    )
    yield session
    session.stop()


def _plan(frame) -> str:
    text = frame._jdf.queryExecution().analyzed().toString()
    return re.sub(r"#\d+L?", "", text)  # expression ids differ between two otherwise equal plans


def _jobs(spark) -> int:
    return len(spark.sparkContext.statusTracker().getJobIdsForGroup(None))


class _Ctx:
    """What the transform workloads use of a run context, with a window that counts Spark's jobs."""

    def __init__(self, spark, uri):
        self.spark, self.mode = spark, "compat"
        self.dataset = st.DatasetState(uri=uri, format="csv")
        self.window_jobs = None

    def state(self, kind):
        assert kind is st.DatasetState
        return self.dataset

    def engine(self, kind):  # the Spark engine, already started on the test's session
        return types.SimpleNamespace(start=lambda: self.spark)

    @contextmanager
    def measure(self):
        before = _jobs(self.spark)
        yield
        self.window_jobs = _jobs(self.spark) - before


def test_the_generated_dataset_is_the_references(spark):
    ours = st.Datagen().frame(spark, "compat", PARAMS)
    assert _plan(ours) == _plan(ref.dataset(spark, REFERENCE, PARAMS))
    assert "getUUID(" in _plan(ours)  # a Python UDF per row, as the reference generates it


@pytest.fixture(scope="module")
def dataset(spark, tmp_path_factory):
    uri = f"file://{tmp_path_factory.mktemp('compat')}/dataset"
    ref.write(ref.dataset(spark, REFERENCE, PARAMS), REFERENCE, uri)
    return uri


@pytest.mark.parametrize("name", sorted(REFERENCE["tests"]))
def test_each_timed_query_and_its_window_are_the_references(spark, dataset, name):
    uri = dataset
    workload = {w.name: w for w in (st.GroupBy(), st.Repartition(), st.InnerJoin(), st.BroadcastJoin())}[name]
    assert REFERENCE["read"] == {"format": "csv", "header": True, "schema": None, "outside_timer": True}
    assert all(
        args[0]["default"] == st.REPARTITION_PARAMS[0].default  # the reference's -r default is ours
        for call, *args in REFERENCE["tests"][name]
        if call == "repartition"
    )

    before = _jobs(spark)
    df = ref.read(spark, REFERENCE, uri)  # the reference's read, before its timer
    read_jobs = _jobs(spark) - before
    reference = ref.query(df, REFERENCE["tests"][name], PARAMS["repartition_partitions"])
    start = _jobs(spark)
    _, reference_rows = ref.timed_test(df, REFERENCE, name, PARAMS["repartition_partitions"])  # its timed region
    reference_window = _jobs(spark) - start

    ctx = _Ctx(spark, uri)
    assert _plan(workload.transform(workload.read(ctx), PARAMS)) == _plan(reference)
    before = _jobs(spark)
    workload.run(ctx, PARAMS)
    assert ctx.window_jobs == reference_window  # the action's jobs, no more, inside the window
    assert _jobs(spark) - before - ctx.window_jobs == read_jobs  # the header job, outside it
    assert 0 < reference_rows <= PARAMS["rows"]

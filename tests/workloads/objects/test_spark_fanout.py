"""Fan-out over Spark barrier tasks: two engine processes started together, results merged exactly."""

import pytest

from storbench.engines import native
from storbench.engines.spark import SparkEngine
from tests.workloads.objects.jobs import base_job

pytestmark = [pytest.mark.s3, pytest.mark.spark]


def test_barrier_mode_fanout_over_two_local_spark_tasks(s3, tmp_path):
    _, state = s3
    prefix = "barrier-test/"
    native.run_job(base_job(state, prefix, objects=30, ops=30))
    engine = SparkEngine("local[2]", local_dir=str(tmp_path / "spark-local"), app_name="storbench barrier test")
    try:
        spark = engine.start()
        job = base_job(state, prefix, objects=30, ops=120, mix=[{"op": "get"}], verify=True)
        merged = native.run_spark_barrier(spark, job, 2, timeout=120)
    finally:
        engine.stop()
    assert merged["processes"] == 2
    per = sorted(merged["per_process"], key=lambda p: p["process_index"])
    assert [p["process_index"] for p in per] == [0, 1] and [p["ops"] for p in per] == [120, 120]
    # both started at the agreed wall-clock time (the barrier's allGather), within a second: wall time by nature
    # (simultaneity is the point, and the result does not record the agreed instant to compare against)
    assert abs(per[0]["start_unix_ms"] - per[1]["start_unix_ms"]) < 1000
    get = merged["ops"]["get"]
    assert get["ops"] == 240 and get["errors"] == 0 and get["latency"]["count"] == 240
    assert get["bytes"] == 240 * 4096
    assert get["latency"]["p50_ms"] <= get["latency"]["p99_ms"] <= get["latency"]["max_ms"]
    assert sum(s["ops"] for s in merged["series"]) == 240

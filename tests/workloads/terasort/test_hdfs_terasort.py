"""TeraSort and spark-transforms on a real HDFS (MiniDFSCluster, 2 DataNodes) started by storbench itself."""

import json
from pathlib import Path

import pytest

from storbench.context import RunContext
from storbench.engines.spark import SparkEngine
from storbench.errors import WorkloadError
from storbench.targets import parse_target
from storbench.targets.hdfs import HdfsTarget
from storbench.workloads import get_workload
from storbench.workloads.terasort import TeraState, validate_sorted
from tests.cli.helpers import storbench

pytestmark = pytest.mark.spark


def test_service_is_on_loopback_with_two_datanodes(hdfs):
    home, state = hdfs
    assert state["uri"].startswith("hdfs://127.0.0.1:") and state["datanodes"] == 2
    result = storbench(home, "services", "status", "hdfs")
    assert result.returncode == 0 and result.stdout.strip() == state["uri"]
    # the web UIs' Jetty directories are in the service's own scratch directory, removed with it, not in /tmp
    scratch = Path(state["workdir"]) / "tmp"
    assert list(scratch.glob("jetty-*")) and (scratch.stat().st_mode & 0o777) == 0o700


def test_terasort_chain_then_compare_on_hdfs(hdfs):
    home, state = hdfs
    for label in ("hdfs-r1", "hdfs-r2"):
        replication = label[-1]
        result = storbench(
            home,
            "run",
            "terasort",
            "--label",
            label,
            "--target",
            f"{state['uri']}/bench",
            "--scale",
            "3000000",
            "--set",
            "partition_mb=1",
            "--repeat",
            "1",
            "--replication",
            replication,
            "--interval",
            "0.25",
            "--json",
        )
        assert result.returncode == 0, result.stderr
        outcome = json.loads(result.stdout)
        assert outcome["status"] == "succeeded", outcome["errors"]
        manifest = json.loads((home / "runs" / outcome["run_id"] / "manifest.json").read_text())
        assert manifest["config"]["replication"] == int(replication)
        assert manifest["config"]["devices"], "the DataNodes' local devices are measured"
        samples = [
            json.loads(x) for x in (home / "runs" / outcome["run_id"] / "samples.jsonl").read_text().splitlines()
        ]
        shuffle = [s["value"] for s in samples if s["workload"] == "terasort" and s["metric"] == "shuffle_write_mb"]
        assert shuffle and shuffle[0] > 0
    table = storbench(home, "compare", "hdfs-r1", "hdfs-r2")
    assert table.returncode == 0, table.stderr
    for phrase in ("teragen", "terasort", "teravalidate", "shuffle", "Time to complete"):
        assert phrase.lower() in table.stdout.lower()


def test_spark_transforms_runs_against_hdfs(hdfs):
    home, state = hdfs
    result = storbench(
        home,
        "run",
        "spark-transforms",
        "--label",
        "st-hdfs",
        "--target",
        f"{state['uri']}/st",
        "--scale",
        "20000",
        "--repeat",
        "1",
        "--json",
    )
    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout)["status"] == "succeeded"


def test_corrupted_sorted_output_names_partition_and_offset(hdfs, tmp_path):
    _, state = hdfs
    engine = SparkEngine(local_dir=str(tmp_path / "spark-local"), app_name="storbench corruption test")
    spark = engine.start()
    try:
        target = parse_target(f"{state['uri']}/corrupt")
        assert isinstance(target, HdfsTarget)
        target.claim("corrupt")
        target.attach_client(spark._jvm, spark._jsc.hadoopConfiguration(), 0)
        ctx = RunContext("corrupt", target, str(target.root_uri), engines={"spark": engine})
        params = {
            "size_bytes": 3_000_000,
            "partition_mb": 1,
            "seed": 7,
            "committer": "file",
            "format": "parquet",
            "checksum": True,
        }
        for name in ("teragen", "terasort", "teravalidate"):
            get_workload(name).run(ctx, params)  # an intact chain validates
        tera = ctx.state(TeraState)
        sorted_uri = tera.sorted_uri
        _swap_two_records(spark, target, sorted_uri, file_index=1, offset=5)
        problems = validate_sorted(spark, sorted_uri, tera.records, tera.checksum)
        assert problems and "partition 1" in problems[0] and "offset 6" in problems[0]
        with pytest.raises(WorkloadError, match=r"teravalidate: partition 1 \(part-00001.*offset 6"):
            get_workload("teravalidate").run(ctx, params)
        assert target.release()
    finally:
        engine.stop()


def _swap_two_records(spark, target, uri, file_index, offset):
    """Rewrite one output file with the records at ``offset`` and ``offset + 1`` swapped."""
    fs = target.fs()
    files = sorted(
        str(s.getPath().getName())
        for s in fs.listStatus(target.hadoop_path(uri))
        if str(s.getPath().getName()).startswith("part-")
    )
    victim = f"{uri}/{files[file_index]}"
    rows = spark.read.parquet(victim).collect()
    rows[offset], rows[offset + 1] = rows[offset + 1], rows[offset]
    scratch = f"{uri}-scratch"
    spark.createDataFrame(rows, "key binary, value binary").coalesce(1).write.parquet(scratch)
    part = [
        s.getPath() for s in fs.listStatus(target.hadoop_path(scratch)) if s.getPath().getName().startswith("part-")
    ][0]
    fs.delete(target.hadoop_path(victim), False)
    assert fs.rename(part, target.hadoop_path(victim))
    fs.delete(target.hadoop_path(scratch), True)


@pytest.mark.parametrize(
    "args,message",
    [
        (["--target", "hdfs://127.0.0.1:1/x"], "cannot connect to 127.0.0.1:1"),
        (["--target", "{uri}/x", "--replication", "5"], "--replication 5: above the 2 DataNode(s)"),
        (
            ["--target", "/tmp", "--replication", "2"],
            "--replication 2: applies to cassandra:// and hdfs:// targets only",
        ),
        (["--target", "{tmp}", "--scale", "100T"], "needs about"),
    ],
)
def test_bad_hdfs_input_fails_fast_with_one_line(hdfs, tmp_path, args, message):
    home, state = hdfs
    args = [a.replace("{uri}", state["uri"]).replace("{tmp}", str(tmp_path)) for a in args]
    result = storbench(home, "run", "terasort", *args, timeout=120)
    assert result.returncode == 2, result.stderr
    assert result.stderr.count("\n") == 1 and message in result.stderr
    # one line and nothing else: refused before Spark started, not after a retry storm

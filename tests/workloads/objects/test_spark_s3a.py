"""Spark workloads on s3:// through S3A (issue 15), on the session's real SeaweedFS: terasort validated with
every committer, S3A's request counts per workload, objects beside the run prefix kept, no secret stored."""

import json
import sqlite3

import pytest

from tests.cli.helpers import storbench
from tests.test_secrets import _files_holding

pytestmark = [pytest.mark.s3, pytest.mark.spark]

COMMITTERS = ("file", "directory", "partitioned", "magic")


def _samples(run_dir):
    return [json.loads(line) for line in (run_dir / "samples.jsonl").read_text().splitlines()]


def test_terasort_on_s3_with_every_committer(s3, client, tmp_path):
    home, state = s3
    bucket = state["bucket"]
    client.put(bucket, "tera2/keep.txt", b"canary")  # the prefix without its slash: a neighbour, not ours
    client.put(bucket, "tera/keep.txt", b"canary")  # beside the run prefix, inside the target's prefix
    run = storbench(
        home,
        "run",
        "terasort",
        "--target",
        f"s3://{bucket}/tera",
        "--label",
        "s3a",
        "--scale",
        "200K",
        "--repeat",
        "1",
        "--set",
        "partition_mb=1",
        "--sweep",
        "committer=" + ",".join(COMMITTERS),
        "--interval",
        "0.5",
        timeout=900,
    )
    assert run.returncode == 0, run.stderr[-3000:]
    (run_dir,) = [p for p in (home / "runs").iterdir() if "-s3a-" in p.name]
    manifest = json.loads((run_dir / "manifest.json").read_text())
    assert manifest["status"] == "succeeded" and manifest["config"]["run_root"].startswith(f"s3://{bucket}/tera/")
    samples = _samples(run_dir)
    # TeraValidate passed at every point (a failed validation fails the run) and each row names its committer
    for committer in COMMITTERS:
        by = {(s["workload"], s["metric"]): s["value"] for s in samples if s["labels"].get("committer") == committer}
        assert by[("teragen", "records")] == 2000 and by[("teravalidate", "completion_time")] > 0, committer
        assert by[("teragen", "s3a_put_requests")] > 0 and by[("teragen", "s3a_list_requests")] > 0, committer
        assert by[("teravalidate", "s3a_get_requests")] > 0, committer
        assert by[("teragen", "s3a_write_mb")] > 0.1, committer
        # the classic committer renames (a COPY per file on S3); S3A's committers never copy
        copies = by[("terasort", "s3a_copy_requests")]
        assert (copies > 0) if committer == "file" else (copies == 0), (committer, copies)
    # only the run's prefix was written, and it is gone; the neighbours stayed
    left = list(client.list(bucket, "tera"))
    assert sorted(left) == ["tera/keep.txt", "tera2/keep.txt"], left
    # the service's real keys reach Spark's Hadoop configuration but are stored nowhere
    for secret in (state["secret_key"], state["access_key"]):
        assert secret not in run.stdout + run.stderr
        assert _files_holding(run_dir, secret) == []  # manifest, samples, reports, the event log
        assert secret.encode() not in (home / "results.db").read_bytes()
    events = "".join(p.read_text() for p in (run_dir / "spark-events").rglob("*") if p.is_file())
    assert "fs.s3a.secret.key" in events  # the setting is in the event log, its value masked
    with sqlite3.connect(home / "results.db") as db:
        assert db.execute("select count(*) from samples").fetchone()[0] > 0


@pytest.mark.parametrize(
    "target, endpoint, expected",
    [
        ("s3://no-such-bucket-15/x", None, "bucket no-such-bucket-15 does not exist"),
        ("s3://storbench/x", "http://127.0.0.1:9", "connection refused"),
    ],
)
def test_bad_s3_targets_fail_before_spark_starts(s3, target, endpoint, expected, monkeypatch):
    home, state = s3
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", state["access_key"])
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", state["secret_key"])
    args = ["run", "terasort", "--target", target, "--label", "bad", "--scale", "200K", "--repeat", "1"]
    done = storbench(home, *args, *(["--endpoint", endpoint] if endpoint else []), timeout=120)
    assert done.returncode != 0 and expected in done.stderr, done.stderr
    assert len(done.stderr.strip().splitlines()) == 1 and "Spark" not in done.stderr
    assert not [p for p in (home / "runs").iterdir() if "-bad-" in p.name] if (home / "runs").exists() else True


def test_wrong_credentials_fail_in_one_line(s3, monkeypatch):
    home, state = s3
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", state["access_key"])
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "wrong-secret")
    done = storbench(
        home,
        "run",
        "terasort",
        "--target",
        "s3://storbench/x",
        "--label",
        "badkey",
        "--scale",
        "200K",
        "--repeat",
        "1",
        timeout=120,
    )
    assert done.returncode != 0 and "refused the credentials" in done.stderr, done.stderr
    assert len(done.stderr.strip().splitlines()) == 1


def test_an_s3a_committer_on_a_file_target_is_refused(tmp_path):
    done = storbench(
        tmp_path / "home",
        "run",
        "terasort",
        "--target",
        f"file://{tmp_path}",
        "--set",
        "committer=magic",
        "--scale",
        "200K",
        "--repeat",
        "1",
        timeout=120,
    )
    assert done.returncode != 0 and "committer=magic is an S3A committer" in done.stderr, done.stderr


EVERY_SPARK_WORKLOAD = """\
name: every-spark-workload-on-s3
description: each Spark workload family once, at its tiniest, on one s3:// target (one Spark session)
repetitions: 1
default_scale: tiny
scale_parameter: rows
scales:
  tiny: {rows: 20000, partitions: 2}
params:
  format: parquet
  repartition_partitions: 4
prepare:
  - datagen
  - {workload: tpcds-gen, params: {sf: 0.01, layout: flat, file_mb: 32}}
workloads:
  - groupby
  - repartition
  - join
  - {workload: hsgen, params: {size_bytes: 200000, partition_mb: 1}}
  - {workload: hssort, params: {size_bytes: 200000, partition_mb: 1}}
  - {workload: hsvalidate, params: {size_bytes: 200000, partition_mb: 1}}
  - {workload: dfsio-write, params: {files: 2, file_size: 2000000}}
  - {workload: dfsio-read, params: {files: 2, file_size: 2000000}}
  - {workload: dfsio-clean, params: {files: 2, file_size: 2000000}}
  - {workload: tpcds, params: {queries: [q3, q42, q52, q96], shuffle_partitions: 4}}
"""


def test_every_spark_workload_runs_on_s3_and_tpcds_answers_match(s3, client, tmp_path):
    """spark-transforms, tpcx-hs, dfsio, tpcds-gen and TPC-DS queries (SF 0.01, answers checked against DuckDB
    as on file://) in one run on s3://; each reports S3A's requests."""
    home, state = s3
    suite = tmp_path / "every.yaml"
    suite.write_text(EVERY_SPARK_WORKLOAD)
    run = storbench(
        home,
        "run",
        str(suite),
        "--target",
        f"s3://{state['bucket']}/every",
        "--label",
        "every",
        "--repeat",
        "1",
        "--interval",
        "0.5",
        timeout=900,
    )
    assert run.returncode == 0, run.stderr[-3000:]
    (run_dir,) = [p for p in (home / "runs").iterdir() if "-every-" in p.name]
    samples = _samples(run_dir)
    by = {(s["workload"], s["metric"]): s["value"] for s in samples if not s["labels"].get("query")}
    # bytes each reader took through S3A's streams (data read just before may come from the analytics stream's
    # cache in this JVM, without a GET: the GETs are counted over the run)
    for workload in ("groupby", "join", "hssort", "hsvalidate", "dfsio-read", "tpcds"):
        assert by[(workload, "s3a_read_mb")] > 0, workload
    assert sum(value for (_, metric), value in by.items() if metric == "s3a_get_requests") > 0
    for workload in ("hsgen", "hssort", "dfsio-write"):
        # reported (n/a would be None); how many LISTs S3A's committer makes is Hadoop's choice, so no count
        assert by[(workload, "s3a_put_requests")] > 0 and by[(workload, "s3a_list_requests")] is not None, workload
    assert by[("dfsio-write", "s3a_write_mb")] >= 4.0  # 2 files of 2 MB, PUT through S3A
    assert by[("tpcds-gen", "rows")] > 100_000 and by[("tpcds-gen", "s3a_put_requests")] > 0
    artifacts = json.loads((run_dir / "artifacts.json").read_text())
    queries = artifacts["tpcds"]["runs"][0]["streams"]["1"]["queries"]
    assert sorted(queries) == ["q3", "q42", "q52", "q96"]
    assert {q: r[0]["status"] for q, r in queries.items()} == dict.fromkeys(queries, "ok")  # matched DuckDB
    assert list(client.list(state["bucket"], "every")) == []  # the run's prefix is gone

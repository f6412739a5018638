"""Paper 001's stack on Ceph's S3 gateway (issue 27), on the session's real RGW: the target recognises RGW, Spark's
S3A signs empty bodies whole there (Ceph 16's RGW refuses their aws-chunked form), and spark-s3-001 (TeraGen →
TeraSort → TeraValidate, TPC-DS q3/q42/q52/q96 at SF 0.01 checked against DuckDB) runs on it."""

import json
from pathlib import Path

import pytest

from storbench.s3client import S3Client
from storbench.targets import TargetOptions, parse_target
from tests.cli.helpers import storbench

pytestmark = [pytest.mark.ceph, pytest.mark.spark]

SIGNER = {
    "spark.hadoop.fs.s3a.http.signer.enabled": "true",
    "spark.hadoop.fs.s3a.http.signer.class": "storbench.s3a.EmptyBodySigner",
}


@pytest.fixture
def rgw(ceph, monkeypatch):
    """The session's RGW with a bucket ``spark``, its keys in the environment (as a user would export them)."""
    home, state, _ = ceph
    client = S3Client(state["s3_endpoint"], state["access_key"], state["secret_key"])
    client.create_bucket("spark")
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", state["access_key"])
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", state["secret_key"])
    monkeypatch.delenv("STORBENCH_S3_SERVER", raising=False)
    return home, state, client


def _run(home, state, suite, label, *args):
    run = storbench(
        home,
        "run",
        suite,
        "--target",
        f"s3://spark/{label}",
        "--endpoint",
        state["s3_endpoint"],
        "--label",
        label,
        "--json",
        *args,
        timeout=900,
    )
    assert run.returncode == 0, run.stderr[-3000:]
    outcome = json.loads(run.stdout)
    assert outcome["status"] == "succeeded", outcome["errors"]
    run_dir = Path(outcome["path"])
    samples = [json.loads(line) for line in (run_dir / "samples.jsonl").read_text().splitlines()]
    by = {(s["workload"], s["metric"]): s["value"] for s in samples if not s["labels"]}
    manifest = json.loads((run_dir / "manifest.json").read_text())
    assert manifest["config"]["server"] == "rgw"
    assert {key: manifest["spark_settings"].get(key) for key in SIGNER} == SIGNER  # recorded as applied
    return run_dir, by, manifest


def test_rgw_is_recognised_from_its_answer_or_as_our_own_ceph(rgw):
    home, state, _ = rgw
    sniffed = parse_target("s3://spark/x", TargetOptions(endpoint=state["s3_endpoint"]))
    assert (sniffed.facts().server, sniffed.manifest_config()["server_how"]) == (
        "rgw",
        "its x-amz-request-id is Ceph RGW's",
    )
    ours = parse_target("s3://spark/x", TargetOptions(endpoint=state["s3_endpoint"], home=home))
    assert (ours.facts().server, ours.manifest_config()["server_how"]) == ("rgw", "the storbench ceph service's RGW")


@pytest.fixture
def hive(rgw):
    """A Hive metastore (with its PostgreSQL) under the Ceph home, for paper 001's catalog; stopped after."""
    from storbench.services import metastore

    workdir = rgw[0] / "services" / "metastore"
    state = metastore.up(workdir)
    yield state
    assert metastore.down(workdir)


def test_spark_s3_001_runs_end_to_end_on_rgw(rgw, hive):
    """Paper 001's configuration in one command, at the suite's tiny scale with four queries: tera* validated
    with S3A's requests counted (their 0-byte _SUCCESS and directory markers are the PUTs RGW refused), TPC-DS
    registered in the Hive metastore with answers equal to DuckDB's, and the skipping pair on the bucket."""
    home, state, client = rgw
    # the skipping pair at the size of its own tests (tests/workloads/skipping), not the suite's tiny 400,000 rows
    skipping = ("--set", "rows=60000", "--set", "dates=6", "--set", "row_group_kb=32")
    run_dir, by, manifest = _run(
        home, state, "spark-s3-001", "s001", "--set", "queries=q3,q42,q52,q96", "--set", "catalog=hive", *skipping
    )
    samples = [json.loads(line) for line in (run_dir / "samples.jsonl").read_text().splitlines()]
    planned = {s["labels"]["query"]: s["value"] for s in samples if s["metric"] == "planning_time"}
    calls = {s["labels"]["query"]: s["value"] for s in samples if s["metric"] == "metastore_calls"}
    assert sorted(planned) == sorted(calls) == ["q3", "q42", "q52", "q96"] and min(calls.values()) > 0
    for query in ("point", "range", "lookup", "join"):  # the pair: off then on, the same answer (checked in run)
        off, on = by[(f"skipping-{query}-off", "s3a_read_mb")], by[(f"skipping-{query}", "s3a_read_mb")]
        assert on < off, (query, on, off)
    for metric in ("rows_scanned", "s3a_get_requests"):
        assert by[("skipping-join", metric)] < by[("skipping-join-off", metric)], metric
    assert manifest["config"]["server_how"] == "the storbench ceph service's RGW"
    assert by[("teragen", "records")] == 20000 and by[("teragen", "s3a_put_requests")] > 0
    assert by[("terasort", "s3a_put_requests")] > 0 and by[("teravalidate", "s3a_get_requests")] > 0
    assert by[("tpcds-gen", "s3a_put_requests")] > 0 and by[("tpcds", "s3a_read_mb")] > 0
    assert by[("tpcds-analyze", "analyze_s")] > 0 and by[("tpcds-analyze", "register_s")] > 0  # with statistics
    assert "tpcds: tables registered without statistics (no tpcds-analyze step)" not in manifest.get("notes", [])
    queries = json.loads((run_dir / "artifacts.json").read_text())["tpcds"]["runs"][0]["streams"]["1"]["queries"]
    assert {q: r[0]["status"] for q, r in queries.items()} == dict.fromkeys(["q3", "q42", "q52", "q96"], "ok")
    assert list(client.list("spark", "s001/")) == []  # the run's prefix is gone


def test_dfsio_writes_and_reads_through_s3a_on_rgw(rgw):
    """dfsio-002 on RGW as its first Spark work in the run: each task's DfsIo builds its S3A file system from the
    task's spark.hadoop.* settings (a bare Configuration went to AWS's default endpoint when no file system for
    the bucket was cached in the executor yet)."""
    home, state, client = rgw
    _, by, _ = _run(home, state, "dfsio-002", "dfsio", "--set", "files=2", "--set", "file_size=2000000")
    assert by[("dfsio-write", "s3a_write_mb")] >= 4.0 and by[("dfsio-write", "s3a_put_requests")] >= 2
    assert by[("dfsio-read", "s3a_read_mb")] >= 4.0
    assert list(client.list("spark", "dfsio/")) == []

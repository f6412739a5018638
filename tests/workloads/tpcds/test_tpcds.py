"""TPC-DS through the real CLI and a real local Spark: generation at SF 0.01 on file://, the 104 queries
checked against DuckDB's answers, a 2-stream run with seeded orders, compare, and bad input.

The 104 queries run once (module fixture, ~2-4 minutes on 2 cores); the tests assert on that run.
"""

import json
from pathlib import Path

import pytest

from storbench.workloads.tpcds import permutation
from storbench.workloads.tpcds.data import TABLES
from storbench.workloads.tpcds.queries import query_names
from tests.cli.helpers import storbench

pytestmark = pytest.mark.real  # the CLI as a child process, Spark

STREAM_QUERIES = ["q3", "q7", "q42", "q52", "q55", "q96"]


def _load(outcome):
    path = Path(outcome["path"])
    samples = [json.loads(line) for line in (path / "samples.jsonl").read_text().splitlines() if line.strip()]
    artifacts = json.loads((path / "artifacts.json").read_text())
    return samples, artifacts, json.loads((path / "manifest.json").read_text())


@pytest.fixture(scope="module")
def tiny(tmp_path_factory):
    base = tmp_path_factory.mktemp("tpcds")
    home, target = base / "home", base / "target"
    target.mkdir()
    result = storbench(home, "run", "tpcds", "--scale", "tiny", "--target", f"file://{target}", "--label", "a",
                       "--keep-data", "--interval", "0.5", "--json", timeout=1200,
                       env_extra={"SPARK_SUBMIT_OPTS": ""})  # 104 queries in one JVM: C2 pays (cli/helpers.py)
    assert result.returncode == 0, result.stderr[-3000:]
    outcome = json.loads(result.stdout)
    return base, home, target, outcome, *_load(outcome)


@pytest.mark.spark
def test_generation_at_sf_001_on_file_target(tiny):
    base, home, target, outcome, samples, artifacts, manifest = tiny
    assert outcome["status"] == "succeeded", outcome["errors"]
    data = target / f"storbench-{outcome['run_id']}" / "tpcds"
    assert sorted(p.name for p in data.iterdir()) == sorted(TABLES)
    assert all(list((data / t).glob("*.parquet")) for t in TABLES)
    generation = artifacts["tpcds"]["generation"]
    assert generation["generator"].startswith("tpcgen-cli 4.0.0")
    assert generation["tables"]["store_sales"]["rows"] > 100_000  # SF 0.01: 120,527 rows
    gen = {s["metric"]: s["value"] for s in samples if s["workload"] == "tpcds-gen" and not s["labels"]}
    assert gen["rows"] == sum(t["rows"] for t in generation["tables"].values())
    assert gen["dataset_mb"] > 10 and gen["data_mbps"] > 0 and gen["completion_time"] > 0
    tables = generation["tables"]  # the layout as written, per table and in total (flat: no folders)
    assert gen["files"] == sum(t["files"] for t in tables.values()) == sum(
        len(list((data / t).glob("*.parquet"))) for t in TABLES)
    assert gen["partition_folders"] == 0 and all(t["partitions"] == 0 and t["bytes"] > 0 for t in tables.values())
    assert tables["store_sales"]["how"] in ("moved", "split") and generation["staged_at_once"] == 2
    assert manifest["workload_parameters"]["tpcds-gen"]["sf"] == 0.01
    analyze = {s["metric"]: s["value"] for s in samples if s["workload"] == "tpcds-analyze" and not s["labels"]}
    assert analyze["analyze_s"] > 0 and analyze["register_s"] > 0
    settings = manifest["spark_settings"]
    assert settings["spark.scheduler.mode"] == "FAIR" and settings["spark.sql.cbo.enabled"] == "true"


@pytest.mark.spark
def test_all_104_queries_run_and_match_duckdb(tiny):
    base, home, target, outcome, samples, artifacts, manifest = tiny
    results = artifacts["tpcds"]["runs"][0]["streams"]["1"]["queries"]
    assert sorted(results) == sorted(query_names())
    problems = {q: r[0] for q, r in results.items() if r[0]["status"] != "ok"}
    assert not problems, f"{len(problems)} of 104 queries failed or mismatched: {problems}"
    ok = [s for s in samples if s["metric"] == "query_ok"]
    assert len(ok) == 104 and all(s["value"] == 1.0 for s in ok)
    times = {s["labels"]["query"]: s["value"] for s in samples if s["metric"] == "query_time"}
    assert len(times) == 104 and all(t > 0 for t in times.values())
    assert artifacts["tpcds"]["runs"][0]["streams"]["1"]["orders"] == [query_names()]  # single stream: in order
    totals = {s["metric"]: s for s in samples if s["workload"] == "tpcds" and s["labels"] == {"streams": "1"}}
    assert totals["total_time"]["value"] >= sum(times.values()) * 0.99
    assert totals["queries_failed"]["value"] == 0 and totals["geomean_query_time"]["value"] > 0
    assert totals["gb_per_core_hour"]["value"] > 0
    # Spark's per-query metrics from the event log, and the workload's totals over all queries
    per_query = {s["labels"]["query"] for s in samples if s["metric"] == "spark_input_mb" and "query" in s["labels"]}
    assert per_query == set(query_names())
    assert [s for s in samples if s["workload"] == "tpcds" and s["metric"] == "spark_input_mb" and not s["labels"]]


@pytest.mark.spark
def test_compare_shows_per_query_section(tiny, tmp_path):
    base, home, target, outcome, samples, artifacts, manifest = tiny
    table = storbench(home, "compare", "a")
    assert table.returncode == 0, table.stderr
    assert "tpcds: per-query times (streams=1)" in table.stdout and "Query time [" not in table.stdout
    html = tmp_path / "r.html"
    result = storbench(home, "compare", "a", "--format", "html", "--output", str(html))
    assert result.returncode == 0 and 'data-metric="queries:tpcds:streams=1"' in html.read_text()


@pytest.mark.spark
def test_two_streams_record_two_seeded_permutations(tiny):
    base, home, target, outcome, *_ = tiny
    data = target / f"storbench-{outcome['run_id']}" / "tpcds"
    suite = base / "streams.yaml"
    suite.write_text("name: tpcds-streams\nworkloads: [tpcds]\n")
    result = storbench(home, "run", str(suite), "--label", "b", "--set", f"data=file://{data}", "--set", "sf=0.01",
                       "--set", "streams=1,2", "--set", f"queries={','.join(STREAM_QUERIES)}", "--set",
                       "shuffle_partitions=4", "--json", timeout=600)
    assert result.returncode == 0, result.stderr[-3000:]
    samples, artifacts, manifest = _load(json.loads(result.stdout))
    run = artifacts["tpcds"]["runs"][0]
    orders = run["streams"]["2"]["orders"]
    assert orders == [permutation(STREAM_QUERIES, run["seed"], 2, k) for k in (1, 2)]
    assert orders[0] != orders[1] and sorted(orders[0]) == sorted(STREAM_QUERIES)
    assert all(r["status"] == "ok" for runs in run["streams"]["2"]["queries"].values() for r in runs)
    streams = {s["labels"]["stream"] for s in samples if s["metric"] == "stream_time"
               and s["labels"]["streams"] == "2"}
    assert streams == {"1", "2"}
    assert [s for s in samples if s["metric"] == "stream_degradation_pct" and s["labels"] == {"streams": "2"}]
    assert any("without statistics" in note for note in manifest["notes"])


@pytest.mark.parametrize("args,message", [
    (["run", "tpcds", "--set", "queries=q3,q100"], "unknown query 'q100' in queries"),
    (["run", "tpcds", "--set", "streams=0"], "streams has '0'"),
    (["run", "tpcds", "--scale", "1000000", "--target", "{tmp}"], "needs about"),
    (["run", "{suite}", "--set", "data=file://{tmp}/nothing"], "missing TPC-DS tables call_center"),
    (["run", "{suite}"], "no TPC-DS tables: the suite has no tpcds-gen step"),
])
def test_bad_input_is_one_line(tmp_path, args, message):
    suite = tmp_path / "queries-only.yaml"
    suite.write_text("name: queries-only\nworkloads: [tpcds]\n")
    args = [a.replace("{tmp}", str(tmp_path)).replace("{suite}", str(suite)) for a in args]
    result = storbench(tmp_path / "home", *args, timeout=120)
    assert result.returncode == 2, result.stderr
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("storbench: error: ") and message in lines[0], result.stderr

"""TPC-DS: generation throughput against DuckDB alone, and storbench's overhead per query against a bare
Spark session running the same SQL on the same files.

1. Generation of all 24 tables as Parquet at SF 1 (``--sf``) on one disk (the work directory), for
   - storbench's tpcds-gen, flat and partitioned (tpcgen-cli, the layout written meanwhile),
   - DuckDB alone: ``CALL dsdgen(sf)`` then ``COPY <table> TO '<table>.parquet'``,
   - tpcgen-cli alone (the generator storbench uses, without the layout step).
   Scope, the same for every side: each runs in a fresh child process of its own; its time is the wall
   time from the first table's generation to the last file closed, without interpreter or JVM start-up
   (storbench: the run's timed window, ``flush=false``; DuckDB: timed inside its process after the
   connection; tpcgen-cli: its whole process, a native binary whose start is milliseconds); no side
   syncs its files. Rates divide the SAME bytes, tpcgen-cli's Parquet of the 24 tables, by each side's
   time. Peak memory: the largest process of each side's own tree (RUSAGE_CHILDREN of a wrapper that ran
   only that side), so DuckDB's peak never includes tpcgen's run.
2. Overhead per query: storbench's ``query_time`` of each of the 104 queries at SF 0.01 against
   the wall time of ``spark.sql(text).collect()`` in a bare PySpark session (same master, same
   SQL settings, same files, statistics collected the same way, no event log, no telemetry).

    .venv/bin/python benchmarks/tpcds_gen_and_overhead.py [--sf 1] [--work DIR] [--skip-overhead]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))
os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")

from storbench.workloads.tpcds.data import FACT_DATE_KEYS, TABLES, tpcgen_binary  # noqa: E402

BARE = r"""
import json, os, sys, time
from pyspark.sql import SparkSession
sys.path.insert(0, sys.argv[3])
from storbench.workloads.tpcds.data import analyze_tables, register_tables
from storbench.workloads.tpcds.queries import SESSION_CONF, all_texts, query_names, to_spark
builder = (SparkSession.builder.master("local[*]").appName("bare").config("spark.ui.enabled", "false")
           .config("spark.driver.host", "127.0.0.1").config("spark.driver.bindAddress", "127.0.0.1")
           .config("spark.driver.memory", "2g").config("spark.sql.adaptive.enabled", "true")
           .config("spark.sql.shuffle.partitions", sys.argv[2]))
for key, value in SESSION_CONF.items():
    builder = builder.config(key, value)
spark = builder.getOrCreate()
spark.sparkContext.setLogLevel("ERROR")
spark.sql("CREATE DATABASE IF NOT EXISTS bare")
spark.sql("USE bare")
register_tables(spark, sys.argv[1], "bare")
analyze_tables(spark, "bare")
times = {}
for name in query_names():
    start = time.monotonic()
    spark.sql(to_spark(all_texts()[name])).collect()
    times[name] = time.monotonic() - start
print(json.dumps(times))
"""


WRAP = r"""
import json, resource, subprocess, sys, time
start = time.monotonic()
result = subprocess.run(sys.argv[1:], capture_output=True, text=True)
print(json.dumps({"rc": result.returncode, "wall_s": time.monotonic() - start, "stdout": result.stdout,
                  "stderr": result.stderr[-3000:],
                  "peak_mb": resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024}))
"""


def alone(*command: str, env: dict | None = None) -> dict:
    """``command`` as the only child of a fresh wrapper: its wall time, output and its own peak RSS."""
    result = subprocess.run([sys.executable, "-c", WRAP, *command], capture_output=True, text=True, check=True,
                            env=env)
    out = json.loads(result.stdout)
    if out["rc"] != 0:
        raise SystemExit(f"{command[0]} failed: {out['stderr']}")
    return out


def size_mb(path: Path) -> float:
    return sum(f.stat().st_size for f in path.rglob("*.parquet")) / 1e6


def storbench_gen(work: Path, sf: float, layout: str) -> dict[str, float]:
    suite = work / "gen.yaml"
    suite.write_text("name: tpcds-gen-bench\nworkloads: [tpcds-gen]\n")
    target = work / f"target-{layout}"
    target.mkdir()
    env = {**os.environ, "PYTHONPATH": str(ROOT / "src")}
    run = alone(sys.executable, "-m", "storbench", "--results", str(work / "home"), "run", str(suite), "--target",
                f"file://{target}", "--label", f"gen-{layout}", "--set", f"sf={sf:g}", "--set", f"layout={layout}",
                "--set", "check_max_sf=0", "--set", "flush=false", "--json", env=env)
    outcome = json.loads(run["stdout"])
    if outcome["status"] != "succeeded":
        raise SystemExit(f"storbench run {outcome['status']}: {outcome['errors']}")
    path = Path(outcome["path"])
    values = {}
    for line in (path / "samples.jsonl").read_text().splitlines():
        sample = json.loads(line)
        if sample["workload"] == "tpcds-gen" and not sample["labels"]:
            values[sample["metric"]] = sample["value"]
    tables = json.loads((path / "artifacts.json").read_text())["tpcds"]["generation"]["tables"]
    return {"seconds": values["completion_time"], "mb": values["dataset_mb"], "generate_s": values["generate_s"],
            "layout_s": values["layout_s"], "files": values["files"], "folders": values["partition_folders"],
            "max_per_folder": values["max_files_per_folder"], "peak_mb": run["peak_mb"],
            "fact_files": {t: tables[t]["files"] for t in FACT_DATE_KEYS}}


def duckdb_alone(work: Path, sf: float) -> dict[str, float]:
    out = work / "duckdb"
    out.mkdir()
    code = (f"import sys, time; sys.path.insert(0, {str(ROOT / 'src')!r})\n"
            "from storbench.workloads.tpcds.queries import duckdb_connect\n"
            "con = duckdb_connect(); con.execute('SET enable_progress_bar = false'); start = time.monotonic()\n"
            f"con.execute('CALL dsdgen(sf={sf})')\n"
            "for (t,) in con.execute('SHOW TABLES').fetchall():\n"
            f"    con.execute(f\"COPY {{t}} TO '{out}/{{t}}.parquet' (FORMAT parquet)\")\n"
            "print(time.monotonic() - start)\n")
    run = alone(sys.executable, "-c", code)
    return {"seconds": float(run["stdout"].strip().splitlines()[-1]), "mb": size_mb(out), "peak_mb": run["peak_mb"]}


def tpcgen_alone(work: Path, sf: float) -> dict[str, float]:
    out = work / "tpcgen"
    run = alone(tpcgen_binary(), "tpcds", "parquet", "-s", f"{sf:g}", "--output-dir", str(out), "-q")
    (out / "dbgen_version.parquet").unlink(missing_ok=True)
    return {"seconds": run["wall_s"], "mb": size_mb(out), "peak_mb": run["peak_mb"]}


def _cli(*args: str) -> dict:
    env = {**os.environ, "PYTHONPATH": str(ROOT / "src")}
    result = subprocess.run([sys.executable, "-m", "storbench", *args, "--json"], capture_output=True, text=True,
                            env=env)
    if result.returncode != 0:
        raise SystemExit(f"storbench {' '.join(args)} failed: {result.stderr[-2000:]}")
    return json.loads(result.stdout)


def overhead(work: Path, rounds: int) -> dict[str, float]:
    """Both sides in a fresh process doing the same: start Spark, register, ANALYZE, the 104 queries."""
    home, target = work / "home-overhead", work / "target-queries"
    target.mkdir()
    gen = work / "gen-only.yaml"
    gen.write_text("name: gen-only\nworkloads: [tpcds-gen]\n")
    first = _cli("--results", str(home), "run", str(gen), "--target", f"file://{target}", "--keep-data", "--set",
                 "sf=0.01", "--set", "layout=flat")
    data = f"file://{target}/storbench-{first['run_id']}/tpcds"
    suite = work / "queries.yaml"
    suite.write_text("name: queries\nprepare: [tpcds-analyze]\nworkloads: [tpcds]\n")
    ours: dict[str, list[float]] = {}
    bare: dict[str, list[float]] = {}
    for _ in range(rounds):
        result = subprocess.run([sys.executable, "-c", BARE, data, "4", str(ROOT / "src")], check=True,
                                capture_output=True, text=True)
        for query, seconds in json.loads(result.stdout.strip().splitlines()[-1]).items():
            bare.setdefault(query, []).append(seconds)
        outcome = _cli("--results", str(home), "run", str(suite), "--target", f"file://{target}", "--set",
                       f"data={data}", "--set", "sf=0.01", "--set", "shuffle_partitions=4")
        for line in (Path(outcome["path"]) / "samples.jsonl").read_text().splitlines():
            sample = json.loads(line)
            if sample["metric"] == "query_time" and sample["value"] is not None:
                ours.setdefault(sample["labels"]["query"], []).append(sample["value"])
    common = [q for q in bare if q in ours]
    diffs = [statistics.median(ours[q]) - statistics.median(bare[q]) for q in common]
    return {"queries": len(common), "rounds": rounds,
            "storbench_total_s": sum(statistics.median(ours[q]) for q in common),
            "bare_total_s": sum(statistics.median(bare[q]) for q in common),
            "median_overhead_s": statistics.median(diffs), "mean_overhead_s": statistics.fmean(diffs)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sf", type=float, default=1.0)
    parser.add_argument("--work", help="working directory (default: a temporary one, removed afterwards)")
    parser.add_argument("--skip-overhead", action="store_true")
    parser.add_argument("--skip-generation", action="store_true")
    parser.add_argument("--rounds", type=int, default=1, help="overhead: bare/storbench pairs (medians)")
    args = parser.parse_args()
    work = Path(args.work) if args.work else Path(tempfile.mkdtemp(prefix="storbench-bench-tpcds-"))
    work.mkdir(parents=True, exist_ok=True)
    try:
        if not args.skip_generation:
            generation(work, args.sf)
        if not args.skip_overhead:
            o = overhead(work, args.rounds)
            print(f"Harness overhead per query (SF 0.01, {o['queries']} queries, {o['rounds']} round(s), fresh "
                  f"process each): storbench {o['storbench_total_s']:.1f} s vs bare Spark session "
                  f"{o['bare_total_s']:.1f} s (ratio {o['storbench_total_s'] / o['bare_total_s']:.2f}); "
                  f"per query median {o['median_overhead_s'] * 1000:+.0f} ms, mean {o['mean_overhead_s'] * 1000:+.0f} ms")
    finally:
        if not args.work:
            shutil.rmtree(work, ignore_errors=True)


def generation(work: Path, sf: float) -> None:
    print(f"TPC-DS generation at SF {sf:g} on {work} ({len(TABLES)} tables as Parquet; load {_load()})")
    print("  scope: each side in its own fresh process, timed from the first table's generation to the last file "
          "closed (no interpreter/JVM start-up, no sync); rate = tpcgen-cli's Parquet bytes / that time; peak = "
          "largest process of that side's own tree")
    rows = [("tpcgen-cli alone", tpcgen_alone(work, sf)), ("DuckDB alone (dsdgen + COPY)", duckdb_alone(work, sf))]
    for layout in ("flat", "partitioned"):
        rows.append((f"storbench tpcds-gen, {layout}", storbench_gen(work, sf, layout)))
    same_mb = rows[0][1]["mb"]
    duck_s = rows[1][1]["seconds"]
    print(f"  logical data: {same_mb:.1f} MB (tpcgen-cli's Parquet)")
    for name, r in rows:
        extra = ""
        if "layout_s" in r:
            extra = (f"; generator {r['generate_s']:.1f} s overlapped with layout {r['layout_s']:.1f} s; "
                     f"{r['files']:.0f} files in {r['folders']:.0f} partition folders, at most "
                     f"{r['max_per_folder']:.0f} per folder; fact tables: "
                     + ", ".join(f"{t} {n}" for t, n in r["fact_files"].items()))
        print(f"  {name:32s} {r['seconds']:6.1f} s = {same_mb / r['seconds']:7.1f} MB/s, "
              f"{duck_s / r['seconds']:.2f}x DuckDB alone, peak {r['peak_mb']:.0f} MB, "
              f"own output {r['mb']:.1f} MB{extra}", flush=True)
    print(f"  load after: {_load()}")


def _load() -> str:
    one, five, fifteen = os.getloadavg()
    return f"{one:.2f} {five:.2f} {fifteen:.2f} on {os.cpu_count()} cores"


if __name__ == "__main__":
    main()

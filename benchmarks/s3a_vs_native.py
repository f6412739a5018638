"""Bytes per second Spark's S3A moves in TeraGen against storbench's native engine PUTting the same objects (issue 15).

One ``storbench services up s3`` (SeaweedFS, private home), then in one run of this script:
  1. ``storbench run teragen --target s3://storbench/bench`` (local[*], one part file per partition,
     the classic committer): S3A's bytes PUT (``s3a_write_mb``) over teragen's measured time;
  2. ``storbench run objects-put`` on the same server: as many objects as teragen wrote part files,
     each of the part files' mean size, with as many workers as Spark has task slots (the same
     concurrency), ``ops`` = that object count: the native engine's ``obj_mbps``.
Printed: both rates and the ratio S3A / native, i.e. how much of what this server takes from a
client on this machine the analytics stack reaches (its record generation and Parquet encoding
included: that is what a TeraGen is).

    .venv/bin/python benchmarks/s3a_vs_native.py [--size 64M] [--partition-mb 8] [--repeat 2]
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from peers import s3_service, storbench_cli as storbench  # noqa: E402


def run_dir(home: Path, label: str) -> Path:
    (found,) = [p for p in (home / "runs").iterdir() if f"-{label}-" in p.name]
    return found


def samples(home: Path, label: str) -> list[dict]:
    lines = (run_dir(home, label) / "samples.jsonl").read_text().splitlines()
    return [json.loads(line) for line in lines if line.strip()]


def mean(values: list[float]) -> float:
    return sum(values) / len(values)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--size", default="64M", help="TeraGen bytes (default 64M)")
    parser.add_argument("--partition-mb", type=int, default=8, help="TeraGen part file size in MB (default 8)")
    parser.add_argument("--repeat", type=int, default=2)
    args = parser.parse_args()
    home = Path(tempfile.mkdtemp(prefix="storbench-bench-s3a-"))
    with s3_service(home):
        gen = storbench(home, "run", "teragen", "--target", "s3://storbench/bench", "--label", "spark",
                        "--scale", args.size, "--repeat", str(args.repeat),
                        "--set", f"partition_mb={args.partition_mb}")
        if gen.returncode != 0:
            sys.exit(gen.stderr[-2000:])
        rows = [s for s in samples(home, "spark") if s["workload"] == "teragen" and not s["labels"].get("cores")]
        by = lambda metric: [s["value"] for s in rows if s["metric"] == metric]  # noqa: E731
        seconds, written, puts = by("completion_time"), by("s3a_write_mb"), by("s3a_put_requests")
        spark_mbps = mean([mb / s for mb, s in zip(written, seconds)])
        slots = int(next(s["labels"]["cores"] for s in samples(home, "spark") if s["metric"] == "gb_per_core_hour"))
        params = json.loads((run_dir(home, "spark") / "manifest.json").read_text())["workload_parameters"]["teragen"]
        parts = -(-params["size_bytes"] // (params["partition_mb"] * 1_000_000))  # teragen's partitions_of
        object_bytes = int(mean(written) * 1e6 / parts)  # the part files' mean size (the few small markers included)
        native = storbench(home, "run", "objects-put", "--target", "s3://storbench/bench", "--label", "native",
                           "--repeat", str(args.repeat), "--set", f"size={object_bytes}", "--set", f"objects={parts}",
                           "--set", f"ops={parts}", "--set", "duration_s=0", "--set", f"concurrency={slots}")
        if native.returncode != 0:
            sys.exit(native.stderr[-2000:])
        native_mbps = mean([s["value"] for s in samples(home, "native") if s["metric"] == "obj_mbps"])
    print(f"SeaweedFS on 127.0.0.1, one server; {parts} objects of {object_bytes / 1e6:.2f} MB, concurrency {slots}, "
          f"mean of {args.repeat} repetitions each")
    print(f"  Spark S3A teragen (records + Parquet + PUT + commit): {spark_mbps:8.2f} MB/s "
          f"({mean(written):.1f} MB PUT in {mean(seconds):.2f} s, {mean(puts):.0f} PUTs)")
    print(f"  storbench native objects-put (PUT only):              {native_mbps:8.2f} MB/s")
    print(f"  ratio S3A / native: {spark_mbps / native_mbps:.3f}")


if __name__ == "__main__":
    main()

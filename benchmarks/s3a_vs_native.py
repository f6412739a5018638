"""Bytes per second Spark's S3A moves in TeraGen against storbench's native engine PUTting the same objects (issue 15).

One SeaweedFS (``storbench services up s3``, or the one up under --service-home); each round, order rotated:
  1. storbench's teragen on s3://storbench/bench (Spark local[N], one part file per partition, Parquet,
     the classic committer), in ONE Spark session warmed by one unrecorded teragen: S3A's bytes PUT
     (``s3a_write_mb``) over teragen's window;
  2. ``storbench run objects-put`` on the same server: as many objects as teragen writes part files, each
     of the part files' mean size, with N workers (the same concurrency as Spark's N task slots),
     ``ops`` = that object count, after one unrecorded warm-up repetition: the native engine's ``obj_mbps``.
Start-up outside the timer on both (the Spark session; the engine's process start and connections).
The ratio S3A / native says how much of what this server takes from a client on this machine the
analytics stack reaches (record generation and Parquet encoding included: that is what a TeraGen is).
No goal (issue 15 set none): reported.

    .venv/bin/python benchmarks/s3a_vs_native.py [--size 64M] [--partition-mb 8] [--rounds 3] [--service-home HOME]
"""

from __future__ import annotations

import json
import math
import os
from pathlib import Path

from harness import parser, private_dir, ratios, rotated, scope, service, spread, verdict
from peers import SparkWorkloads, run_cli  # noqa: E402  (benchmarks/ is on sys.path as a script)
from storbench.units import parse_count  # noqa: E402


def main() -> None:
    p = parser(__doc__)
    p.add_argument("--size", default=None, help="TeraGen bytes (default 64M; --quick: 4M)")
    p.add_argument("--partition-mb", type=int, default=None, help="TeraGen part file size in MB (default 8; --quick 1)")
    p.add_argument(
        "--slots",
        type=int,
        default=os.cpu_count() or 1,
        help="Spark's local[N] slots = the native engine's workers (default: the cores)",
    )
    args = p.parse_args()
    size = parse_count(args.size or ("4M" if args.quick else "64M"))
    part_mb = args.partition_mb or (1 if args.quick else 8)
    if not size or part_mb < 1 or args.slots < 1:
        raise SystemExit(
            f"--size {args.size!r} / --partition-mb {part_mb} / --slots {args.slots}: expected a byte "
            f"count, ≥ 1 MB and ≥ 1 slot"
        )
    parts = math.ceil(size / (part_mb * 1_000_000))  # teragen's partitions_of
    scope(
        f"storbench teragen through Spark's S3A ({size / 1e6:.0f} MB, {parts} Parquet part files) vs storbench's "
        f"native objects-put of {parts} objects of the part files' mean size, on one SeaweedFS on 127.0.0.1",
        peer="storbench's native object engine (objects-put), same server, same object count and sizes",
        parallelism=f"Spark local[{args.slots}] ({args.slots} tasks) vs {args.slots} native workers",
        startup="outside the timer on both (one Spark session plus one unrecorded teragen; the engine's process "
        "start, connections and one unrecorded warm-up repetition per round)",
        cache="the same server for both; neither syncs (flush=false)",
        clock="both storbench windows (time.monotonic); S3A's rate = its s3a_write_mb over teragen's window",
    )
    target = "s3://storbench/bench"
    with private_dir("storbench-bench-s3a-") as home, service("s3", home, args.service_home):
        results = args.service_home or home
        with SparkWorkloads(target, results, f"local[{args.slots}]") as spark:
            params = {"size_bytes": size, "partition_mb": part_mb, "flush": False}
            spark.run("teragen", params, warmup=True)
            written: list[float] = []

            def spark_side(_k: int) -> float:
                seconds, samples = spark.run("teragen", params)
                mb = next(s.value for s in samples if s.metric == "s3a_write_mb")
                written.append(mb)
                return mb / seconds

            def native_side(_k: int) -> float:
                object_bytes = int((written[-1] if written else size / 1e6) * 1e6 / parts)
                outcome, _ = run_cli(
                    results,
                    "run",
                    "objects-put",
                    "--target",
                    target,
                    "--label",
                    "native",
                    "--repeat",
                    "1",
                    "--warmup",
                    "1",
                    "--set",
                    f"size={object_bytes}",
                    "--set",
                    f"objects={parts}",
                    "--set",
                    f"ops={parts}",
                    "--set",
                    "duration_s=0",
                    "--set",
                    f"concurrency={args.slots}",
                )
                lines = (Path(outcome["path"]) / "samples.jsonl").read_text().splitlines()
                return next(s["value"] for s in map(json.loads, lines) if s["metric"] == "obj_mbps")

            rates = rotated({"s3a": spark_side, "native": native_side}, args.rounds)
    print(
        f"  S3A teragen (records + Parquet + PUT + commit): {spread(rates['s3a']).text('.2f', ' MB/s')}, "
        f"{spread(written).median:.1f} MB PUT per round"
    )
    print(f"  native objects-put (PUT only):                  {spread(rates['native']).text('.2f', ' MB/s')}")
    verdict("S3A/native MB/s", ratios(rates["s3a"], rates["native"]), goal=None)


if __name__ == "__main__":
    main()

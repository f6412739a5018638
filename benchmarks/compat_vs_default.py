"""Default mode vs compat mode (the reference tool's behaviour) on the same data and Spark.

Named peer: pyspark-benchmark's way of doing the same work (Python UDF generation,
schema-less CSV read, ``rdd.count()`` action), reproduced by ``--mode compat``. Both
modes run in one Spark session, interleaved, over the same dataset; the ratio
compat/default says how much of the reference tool's time is the harness itself.

    .venv/bin/python benchmarks/compat_vs_default.py [--rows 1000000] [--repeat 3]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))

from storbench.context import RunContext  # noqa: E402
from storbench.engines.spark import SparkEngine  # noqa: E402
from storbench.suites import load_suite  # noqa: E402
from storbench.targets import parse_target  # noqa: E402
from storbench.workloads import get_workload  # noqa: E402

OPERATIONS = ("groupby", "repartition", "join")


def timed(ctx: RunContext, name: str, params: dict) -> float:
    workload = get_workload(name)
    workload.prepare(ctx, params)
    workload.run(ctx, params)
    return ctx.last_window.end - ctx.last_window.start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", default="1000000")
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    _, _, params = load_suite("spark-transforms").resolve(args.rows, {})
    target = parse_target(tempfile.mkdtemp(prefix="storbench-bench-"))
    root = target.claim("bench")
    engine = SparkEngine(local_dir=target.spark_local_dir(), app_name="storbench compat benchmark")
    contexts = {mode: RunContext("bench", target, f"{root}/{mode}", engine, mode=mode)
                for mode in ("default", "compat")}
    times: dict[tuple[str, str], list[float]] = {}
    try:
        for mode, ctx in contexts.items():
            times[(mode, "datagen")] = [timed(ctx, "datagen", params["datagen"])]
        # Compat ops read the compat dataset's CSV the same way, so both read identical bytes' worth.
        for _ in range(args.repeat):
            for name in OPERATIONS:
                for mode, ctx in contexts.items():
                    times.setdefault((mode, name), []).append(timed(ctx, name, params[name]))
    finally:
        engine.stop()
        target.release()
    print(f"rows={params['datagen']['rows']} partitions={params['datagen']['partitions']} "
          f"repetitions={args.repeat} (median seconds)")
    print(f"{'operation':<13}{'default':>10}{'compat':>10}{'compat/default':>16}")
    totals = {"default": 0.0, "compat": 0.0}
    for name in ("datagen", *OPERATIONS):
        default, compat = (statistics.median(times[(mode, name)]) for mode in ("default", "compat"))
        totals["default"] += default
        totals["compat"] += compat
        print(f"{name:<13}{default:>10.2f}{compat:>10.2f}{compat / default:>15.2f}x")
    print(f"{'total':<13}{totals['default']:>10.2f}{totals['compat']:>10.2f}"
          f"{totals['compat'] / totals['default']:>15.2f}x")


if __name__ == "__main__":
    main()

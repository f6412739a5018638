"""Default mode vs compat mode vs the reference tool itself, on the same data and Spark.

Named peer: pyspark-benchmark (DIYBigData), paper 000's tool. Its own calls, rebuilt from
their transcription (tests/data/compat/pyspark-benchmark.json, storbench.workloads.compat_reference),
run in the same Spark session as storbench's two modes, interleaved (the order rotates each
repetition) over the same files: the reference's tests read the very CSV files compat mode
wrote and reads. The ratios say what storbench's harness adds to the reference's figures
(compat/reference, ideally 1.00x) and how much of the reference's time is the reference
itself (default/reference; the older compat/default figure is kept).

    .venv/bin/python benchmarks/compat_vs_default.py [--rows 1000000] [--repeat 3] [--warmup 0]
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))

from storbench.context import RunContext  # noqa: E402
from storbench.engines.spark import SparkEngine  # noqa: E402
from storbench.suites import load_suite  # noqa: E402
from storbench.targets import parse_target  # noqa: E402
from storbench.workloads import compat_reference as ref  # noqa: E402
from storbench.workloads import get_workload  # noqa: E402

OPERATIONS = ("groupby", "repartition", "join", "broadcast-join")  # benchmark-shuffle.py's four tests
MODES = ("default", "compat", "reference")
SCOPE = {
    "default": "storbench's window (ctx.measure): query built + noop write; CSV read with a schema before it",
    "compat": "storbench's window (ctx.measure): query built + rdd.count(); schema-less CSV read "
              "(its header job) before it",
    "reference": "benchmark-shuffle.py's timer (timeit.default_timer): query built + res.rdd.count(); "
                 "spark.read.csv(header=True) once per repetition before its timers, as the reference does",
    "datagen": "write call to its return, no syncfs on any side (flush off); the reference's generate-data.py "
               "has no timer, so its df.write.csv is timed here the same way",
    "cache": "the dataset's files evicted from the page cache before every timed test on all three sides "
             "(outside every timer; storbench's cold_cache, done for the reference too)",
}


def timed(ctx: RunContext, name: str, params: dict) -> float:
    """One storbench workload as the runner runs it (prepare, then run), its window's seconds."""
    workload = get_workload(name)
    ctx.flush = False  # the reference does not sync its writes: equal scope
    workload.prepare(ctx, params)
    workload.run(ctx, params)
    return ctx.last_window.end - ctx.last_window.start


def reference_datagen(spark, spec: dict, params: dict, uri: str) -> float:
    frame = ref.dataset(spark, spec, params)
    start = time.monotonic()
    ref.write(frame, spec, uri)
    return time.monotonic() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", default="1000000")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--warmup", type=int, default=0, help="unrecorded repetitions of the tests first")
    args = parser.parse_args()
    _, _, params = load_suite("spark-transforms").resolve(args.rows, {})
    params["broadcast-join"] = params["join"]  # the same dataset parameters; the suite has no row for it
    spec = ref.load()
    scratch = tempfile.mkdtemp(prefix="storbench-bench-")
    target = parse_target(scratch)
    root = target.claim("bench")
    engine = SparkEngine(local_dir=target.scratch_dir(), app_name="storbench compat benchmark")
    contexts = {mode: RunContext("bench", target, f"{root}/{mode}", {"spark": engine}, mode=mode)
                for mode in ("default", "compat")}
    times: dict[tuple[str, str], list[float]] = {}
    counts: dict[str, set[int]] = {}
    try:
        # A small unrecorded generation first, so no side's datagen pays the JVM's and Python workers' start-up.
        small = {**params["datagen"], "rows": max(1000, params["datagen"]["rows"] // 100)}
        for rows, record in ((small, False), (params["datagen"], True)):
            for mode, ctx in contexts.items():
                seconds = timed(ctx, "datagen", rows)
                times[(mode, "datagen")] = [seconds] if record else []
            seconds = reference_datagen(engine.start(), spec, rows, f"{root}/reference/dataset")
            times[("reference", "datagen")] = [seconds] if record else []
        compat_data = contexts["compat"].shared["dataset"]["uri"]  # the files the reference's tests read
        for repetition in range(-args.warmup, args.repeat):
            order = MODES[repetition % 3:] + MODES[:repetition % 3]  # no side always first
            df = ref.read(engine.start(), spec, compat_data)  # once per repetition, before the timers
            for name in OPERATIONS:
                for mode in order:
                    if mode == "reference":
                        target.evict(compat_data)  # as compat's prepare does for its own read
                        seconds, count = ref.timed_test(df, spec, name, params["repartition"]["repartition_partitions"])
                        counts.setdefault(name, set()).add(count)
                    else:
                        seconds = timed(contexts[mode], name, params[name])
                    if repetition >= 0:  # negative: a warm-up repetition, not recorded
                        times.setdefault((mode, name), []).append(seconds)
    finally:
        engine.stop()
        target.release()
        os.rmdir(scratch)  # empty once the run root is released
    report(params, args.repeat, times, counts)


def report(params: dict, repeat: int, times: dict[tuple[str, str], list[float]], counts: dict[str, set[int]]) -> None:
    print(f"rows={params['datagen']['rows']} partitions={params['datagen']['partitions']} "
          f"repartition={params['repartition']['repartition_partitions']} repetitions={repeat} "
          f"(median seconds; datagen once, after a 1% one unrecorded), {os.cpu_count()} CPUs, "
          f"load average {os.getloadavg()[0]:.2f}")
    print("scope of each timing:")
    for what, text in SCOPE.items():
        print(f"  {what}: {text}")
    print(f"{'operation':<15}{'default':>9}{'compat':>9}{'reference':>10}{'compat/ref':>12}{'default/ref':>12}"
          f"{'compat/default':>16}  reference's count")
    totals = dict.fromkeys(MODES, 0.0)
    for name in ("datagen", *OPERATIONS):
        median = {mode: statistics.median(times[(mode, name)]) for mode in MODES}
        for mode in MODES:
            totals[mode] += median[mode]
        print(f"{name:<15}{median['default']:>9.2f}{median['compat']:>9.2f}{median['reference']:>10.2f}"
              f"{median['compat'] / median['reference']:>11.2f}x{median['default'] / median['reference']:>11.2f}x"
              f"{median['compat'] / median['default']:>15.2f}x  {', '.join(map(str, sorted(counts.get(name, ()))))}")
    print(f"{'total':<15}{totals['default']:>9.2f}{totals['compat']:>9.2f}{totals['reference']:>10.2f}"
          f"{totals['compat'] / totals['reference']:>11.2f}x{totals['default'] / totals['reference']:>11.2f}x"
          f"{totals['compat'] / totals['default']:>15.2f}x")
    print("each repetition (seconds):")
    for name in OPERATIONS:
        print(f"  {name:<15}" + "  ".join(f"{mode} " + " ".join(f"{s:.2f}" for s in times[(mode, name)])
                                          for mode in MODES))


if __name__ == "__main__":
    main()

"""storbench's default and compat modes vs storbench's transcription of pyspark-benchmark's calls, same data and Spark.

Named peer: storbench's transcription of pyspark-benchmark's generate-data.py and benchmark-shuffle.py
calls (DIYBigData/pyspark-benchmark, paper 000's tool; tests/data/compat/pyspark-benchmark.json, rebuilt
by storbench.workloads.compat_reference), NOT the upstream scripts run as they ship: the same DataFrame
calls, timed with the scripts' own timer, run here in the same Spark session as storbench's two modes.
Each round runs datagen, then each of the four tests, on every side with the order rotated per round;
the transcription's tests read the very CSV files compat mode wrote and reads (re-read once per round
before its timers, as benchmark-shuffle.py reads once before its tests). The ratios say what storbench's
harness adds to the transcription's figures (compat/transcription, ideally 1.00×) and how much of the
transcription's time is the reference's own choices (default/transcription). No goals: reported.

    .venv/bin/python benchmarks/compat_vs_default.py [--rows 1000000] [--rounds 3]
"""

from __future__ import annotations

import time
from pathlib import Path

from harness import parser, private_dir, ratios, rotated, scope, spread, verdict
from peers import SparkWorkloads  # noqa: E402  (benchmarks/ is on sys.path as a script)
from storbench.suites import load_suite  # noqa: E402
from storbench.workloads import compat_reference as ref  # noqa: E402
from storbench.workloads.spark_transforms import DatasetState  # noqa: E402

OPERATIONS = ("groupby", "repartition", "join", "broadcast-join")  # benchmark-shuffle.py's four tests
MODES = ("default", "compat", "transcription")
PEER = (
    "storbench's transcription of pyspark-benchmark's generate-data.py/benchmark-shuffle.py calls "
    "(tests/data/compat/pyspark-benchmark.json), run in this session; not the upstream scripts"
)
SCOPE = {
    "default": "storbench's window (ctx.measure): query built + noop write; CSV read with a schema before it",
    "compat": "storbench's window (ctx.measure): query built + rdd.count(); schema-less CSV read "
    "(its header job) before it",
    "transcription": "benchmark-shuffle.py's timer (timeit.default_timer) as transcribed: query built + "
    "res.rdd.count(); spark.read.csv(header=True) once per round before its timers",
    "datagen": "write call to its return, no syncfs on any side (flush off); generate-data.py has no timer, so "
    "the transcription's df.write.csv is timed here the same way",
}


def main() -> None:
    p = parser(__doc__)
    p.add_argument("--rows", default=None, help="rows of the dataset (default 1000000; --quick: 2000)")
    args = p.parse_args()
    rows = args.rows or ("2000" if args.quick else "1000000")
    _, _, params = load_suite("spark-transforms").resolve(rows, {})
    params["broadcast-join"] = params["join"]  # the same dataset parameters; the suite has no row for it
    params["datagen"] = {**params["datagen"], "flush": False}  # the reference does not sync its writes
    # a smoke run's 2000 rows in 200 shuffle partitions would be all task overhead: 4 for every side
    conf = {"spark.sql.shuffle.partitions": "4"} if args.quick else {}
    if args.quick:  # and one file, one task per stage
        params = {name: {**row, "partitions": 1} for name, row in params.items()}
        params["repartition"] = {**params["repartition"], "repartition_partitions": 4}
    spec = ref.load()
    repartitions = params["repartition"]["repartition_partitions"]
    scope(
        f"storbench datagen + groupby/repartition/join/broadcast-join in default and compat mode vs the same "
        f"calls as transcribed, {params['datagen']['rows']} rows, {params['datagen']['partitions']} partitions, "
        f"repartition {repartitions}",
        peer=PEER,
        parallelism="one Spark session local[*] shared by all three sides"
        + (", 4 shuffle partitions (smoke)" if args.quick else ""),
        startup="outside the timer on all sides (the session started, and warmed by one 1% datagen per side, "
        "before the rounds)",
        cache="the dataset's files evicted from the page cache before every timed test on all three sides "
        "(storbench's cold_cache, done for the transcription too); no side syncs",
        clock="storbench: its window (time.monotonic); the transcription: timeit.default_timer, its scripts' "
        "own timer (datagen: time.monotonic around the write)",
    )
    counts: dict[str, set[int]] = {}
    with (
        private_dir("storbench-bench-compat-") as scratch,
        SparkWorkloads(
            f"file://{scratch}",
            Path(scratch) / "home",
            "local[*]",
            modes=("default", "compat"),
            app="storbench compat benchmark",
            conf=conf,
        ) as spark,
    ):
        root = spark.contexts["default"].root_uri.rsplit("/", 1)[0]
        session = spark.engine.start()

        def datagen(mode: str, gen: dict) -> float:
            if mode != "transcription":
                return spark.run("datagen", gen, mode=mode)[0]
            frame = ref.dataset(session, spec, gen)
            start = time.monotonic()
            ref.write(frame, spec, f"{root}/transcription/dataset")
            return time.monotonic() - start

        def test(mode: str, name: str, df: object) -> float:
            if mode != "transcription":
                return spark.run(name, params[name], mode=mode)[0]
            spark.target.evict(compat_data())  # as compat's prepare does for its own read
            seconds, count = ref.timed_test(df, spec, name, repartitions)
            counts.setdefault(name, set()).add(count)
            return seconds

        def compat_data() -> str:
            uri = spark.contexts["compat"].state(DatasetState).uri
            assert uri is not None
            return uri

        small = {**params["datagen"], "rows": max(1000, params["datagen"]["rows"] // 100)}
        for mode in MODES:  # unrecorded: no side's datagen pays the JVM's and Python workers' start-up
            datagen(mode, small)

        def round_of(k: int) -> dict[str, dict[str, float]]:
            order = MODES[k % 3 :] + MODES[: k % 3]  # the order rotates per round, step by step
            times = {mode: {"datagen": datagen(mode, params["datagen"])} for mode in order}
            df = ref.read(session, spec, compat_data())  # once per round, before the transcription's timers
            for name in OPERATIONS:
                for mode in order:
                    times[mode][name] = test(mode, name, df)
            return times

        rounds = rotated({"round": round_of}, args.rounds)["round"]
    report(rounds, counts)


def report(rounds: list[dict[str, dict[str, float]]], counts: dict[str, set[int]]) -> None:
    print("scope of each timing:")
    for what, text in SCOPE.items():
        print(f"  {what}: {text}")
    for name in ("datagen", *OPERATIONS):
        row = {mode: spread([r[mode][name] for r in rounds]) for mode in MODES}
        print(
            f"  {name:<15}"
            + "  ".join(f"{mode} {row[mode].text('.2f', ' s')}" for mode in MODES)
            + (f"  transcription's count {', '.join(map(str, sorted(counts[name])))}" if name in counts else "")
        )
    totals = {mode: [sum(r[mode].values()) for r in rounds] for mode in MODES}
    verdict("compat/transcription total time", ratios(totals["compat"], totals["transcription"]), goal=None)
    verdict("default/transcription total time", ratios(totals["default"], totals["transcription"]), goal=None)
    verdict("compat/default total time", ratios(totals["compat"], totals["default"]), goal=None)


if __name__ == "__main__":
    main()

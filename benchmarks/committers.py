"""TeraSort time by output committer on SeaweedFS, with the committer order rotated each round (issue 15).

One SeaweedFS (``storbench services up s3``, or the one up under --service-home) and ONE Spark session
(local[*]) for every round: storbench's teragen then terasort (Parquet, files of 1 MB) with each committer
(``file``, ``directory``, ``partitioned``, ``magic``), the committers' order rotated each round, after one
unrecorded teragen+terasort (the session's and S3A's start-up, which the first committer used to carry).
Printed per committer: terasort's and teragen's time (medians and ranges) and S3A's PUT/COPY/DELETE/LIST
counts, and each round's time ratio against the peer measured in the same round, Spark's classic ``file``
committer (rename = COPY + DELETE on S3). No goal (issue 15 set none): reported.

    .venv/bin/python benchmarks/committers.py [--size 20M] [--rounds 3] [--service-home HOME]
"""

from __future__ import annotations


from harness import parser, private_dir, ratios, rotated, scope, service, spread, verdict
from peers import SparkWorkloads  # noqa: E402  (benchmarks/ is on sys.path as a script)
from storbench.units import parse_count  # noqa: E402

COMMITTERS = ("file", "directory", "partitioned", "magic")
PEER = "file"
COUNTS = ("s3a_put_requests", "s3a_copy_requests", "s3a_delete_requests", "s3a_list_requests")


def main() -> None:
    p = parser(__doc__)
    p.add_argument("--size", default=None, help="TeraGen bytes (default 20M: 200,000 records; --quick: 2M)")
    args = p.parse_args()
    size = parse_count(args.size or ("2M" if args.quick else "20M"))
    if not size:
        raise SystemExit(f"--size {args.size!r}: expected a byte count such as 20M")
    # the smoke run checks the benchmark's path with the peer and one S3A committer (every committer's terasort is
    # tested in tests/workloads/objects/test_spark_s3a.py)
    committers = (PEER, "magic") if args.quick else COMMITTERS
    scope(
        f"storbench teragen+terasort on SeaweedFS (s3://storbench/bench), {size / 1e6:.0f} MB in files of 1 MB, "
        f"Parquet, by committer ({', '.join(committers)})",
        peer="Spark's classic file output committer (rename = COPY + DELETE), same run, same session",
        parallelism="one Spark session local[*] for every committer",
        startup="outside the timer for all (the session and S3A started, and one unrecorded teragen+terasort, "
        "before the rounds); the committers' order rotated each round",
        cache="one SeaweedFS on 127.0.0.1 for all; each workload's window ends with its committed output",
        clock="storbench's window (time.monotonic) for every committer",
    )
    with private_dir("storbench-bench-committers-") as home, service("s3", home, args.service_home):
        with SparkWorkloads("s3://storbench/bench", args.service_home or home, "local[*]") as spark:

            def terasort(committer: str, record: bool = True) -> dict[str, float]:
                params = {"size_bytes": size, "partition_mb": 1, "committer": committer, "flush": False}
                gen, _ = spark.run("teragen", params, warmup=not record)
                sort, samples = spark.run("terasort", params, warmup=not record)
                return {"teragen": gen, "terasort": sort, **{s.metric: s.value for s in samples if s.metric in COUNTS}}

            terasort(PEER, record=False)
            rounds = rotated({c: lambda _k, c=c: terasort(c) for c in committers}, args.rounds)
    print(
        f"{'committer':<12}{'terasort s (median, range)':>32}{'teragen s':>12}"
        + "".join(f"{m.split('_')[1].upper():>7}" for m in COUNTS)
    )
    for c in committers:
        sort, gen = spread([r["terasort"] for r in rounds[c]]), spread([r["teragen"] for r in rounds[c]])
        counts = "".join(f"{spread([r.get(m, float('nan')) for r in rounds[c]]).median:>7.0f}" for m in COUNTS)
        print(f"{c:<12}{sort.text('.2f'):>32}{gen.median:>12.2f}{counts}")
    for c in committers[1:]:
        verdict(
            f"{c}/{PEER} terasort time",
            ratios([r["terasort"] for r in rounds[c]], [r["terasort"] for r in rounds[PEER]]),
            goal=None,
        )


if __name__ == "__main__":
    main()

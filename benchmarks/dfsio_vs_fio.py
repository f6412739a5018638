"""dfsio-write's aggregate MB/s as a fraction of fio's sequential write on the same filesystem, same bytes.

Named peer: fio sequential write (1 MiB blocks, libaio, iodepth 16, buffered), one job per file,
as many jobs as dfsio has files and Spark has task slots (local[N], N = the cores or --slots); each
job writes one file of --file-size bytes, as each dfsio task does through the Hadoop FileSystem API.
Two pairs, each equal in scope:
- page cache: dfsio-write ``flush=false`` (as TestDFSIO writes) against fio without fsync (the goal's pair),
- durable: dfsio-write ``flush=true`` (syncfs in its window) against fio with ``end_fsync=1``.
The rate is the same bytes (files × file size) over each side's own time. Start-up outside the timer on
both: one Spark session before the rounds, warmed by one unrecorded dfsio-write (and dfsio's own class
warm-up); fio's process start and file layout are outside its bandwidth. Before each side everything
is synced and this benchmark's files are evicted from the page cache. Rounds rotate which side goes
first. (fio's O_DIRECT rate, printed before this change, is not a pair: dfsio cannot write O_DIRECT.)
Goal: dfsio-write ≥ 70% of fio (page-cache pair); the durable pair is reported.

    .venv/bin/python benchmarks/dfsio_vs_fio.py [--file-size 512M] [--dir /var/tmp] [--rounds 3]
"""

from __future__ import annotations

import os
import shutil
import tempfile
from pathlib import Path

from harness import parser, ratios, rotated, scope, spread, verdict
from peers import SparkWorkloads, drop_written, fio_write_mbps  # benchmarks/ is on sys.path when run as a script
from storbench.units import parse_count

GOAL = 0.7
PAIRS = {"page cache": False, "durable": True}


def main() -> None:
    p = parser(__doc__)
    p.add_argument("--file-size", default=None, help="bytes per file (default 512M; --quick: 8M)")
    p.add_argument("--dir", default="/var/tmp")
    p.add_argument(
        "--slots",
        type=int,
        default=os.cpu_count() or 2,
        help="files = dfsio's tasks = Spark's local[N] slots = fio's jobs (default: the cores)",
    )
    args = p.parse_args()
    size, files = parse_count(args.file_size or ("8M" if args.quick else "512M")), args.slots
    if not size or files < 1:
        raise SystemExit(f"--file-size {args.file_size!r} / --slots {files}: expected a byte count and ≥ 1")
    scope(
        f"storbench dfsio-write vs fio sequential buffered write, {files} files × {size / 1e6:.0f} MB on the "
        f"filesystem of {args.dir}; pairs: page cache (flush=false vs fio no fsync), durable (flush=true: syncfs "
        f"in the window vs fio end_fsync=1)",
        peer=f"fio, {files} jobs × {size / 1e6:.0f} MB, 1 MiB blocks, libaio iodepth 16, buffered",
        parallelism=f"Spark local[{files}], {files} tasks (one per file) vs fio {files} jobs",
        startup="outside the timer on both (one Spark session plus one unrecorded dfsio-write before the rounds; "
        "fio's process start and file layout outside its bandwidth)",
        cache="everything synced and this benchmark's files evicted from the page cache before each side",
        clock="dfsio: its window (time.monotonic); fio: its own bw_bytes; rate = the same bytes / each side's time",
    )
    work = Path(tempfile.mkdtemp(prefix="storbench-dfsio-bench-", dir=args.dir))
    rates: dict[str, dict[str, list[float]]] = {}
    try:
        with SparkWorkloads(f"file://{work}", work / "home", f"local[{files}]") as spark:

            def dfsio(flush: bool, record: bool = True) -> float:
                drop_written(work)
                seconds, _ = spark.run(
                    "dfsio-write", {"files": files, "file_size": size, "flush": flush}, warmup=not record
                )
                return size * files / 1e6 / seconds

            def fio(flush: bool) -> float:
                drop_written(work)
                return fio_write_mbps(work, size * files, jobs=files, direct=False, fsync=flush)

            dfsio(False, record=False)
            for pair, flush in PAIRS.items():
                rates[pair] = rotated(
                    {"dfsio": lambda _k, f=flush: dfsio(f), "fio": lambda _k, f=flush: fio(f)}, args.rounds
                )
    finally:
        shutil.rmtree(work, ignore_errors=True)
    for pair, sides in rates.items():
        print(
            f"  {pair}: dfsio-write {spread(sides['dfsio']).text('.0f', ' MB/s')}, "
            f"fio {spread(sides['fio']).text('.0f', ' MB/s')}"
        )
    verdict("dfsio-write/fio page cache", ratios(rates["page cache"]["dfsio"], rates["page cache"]["fio"]), goal=GOAL)
    verdict("dfsio-write/fio durable", ratios(rates["durable"]["dfsio"], rates["durable"]["fio"]), goal=None)


if __name__ == "__main__":
    main()

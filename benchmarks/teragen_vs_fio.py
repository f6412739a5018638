"""storbench's teragen vs fio's buffered sequential write on the same file system, same bytes, same parallelism.

Named peer, measured in this run: fio, 1 MiB sequential writes, buffered (no O_DIRECT), libaio,
iodepth 16, with as many jobs as Spark has task slots (local[N], N = the cores or --slots), each job
writing one file of size/N bytes, as each of teragen's N tasks writes one part file of size/N.
Two pairs, each equal in scope:
- page cache: teragen with ``flush=false`` against fio without fsync (both end when the data is in
  the page cache; the goal's pair),
- durable: teragen with ``flush=true`` (its window ends after syncfs) against fio with ``end_fsync=1``
  (each job's time includes its fsync).
With format=tera teragen writes through the raw local file system (``checksum=false``): fio has no
CRC layer (Parquet cannot: Spark's writer checksums). Start-up outside the timer on both sides:
fio's own bandwidth (its process start and file layout outside), teragen's window from job submission
to committed output in one Spark session started before the rounds, warmed by one unrecorded teragen
(the JIT warm, as fio's C code is); the verify pass is outside. Before each side, everything dirty is
synced and this benchmark's files are evicted from the page cache. Rounds rotate which side goes first.
Goal: teragen ≥ 50% of fio's rate (page-cache pair); the durable pair is reported.

    .venv/bin/python benchmarks/teragen_vs_fio.py [--size 1G] [--dir /var/tmp] [--format tera] [--rounds 3]
"""

from __future__ import annotations

import math
import os
import shutil
import tempfile
from pathlib import Path

from harness import parser, ratios, rotated, scope, spread, verdict
from peers import SparkWorkloads, drop_written, fio_write_mbps  # noqa: E402  (benchmarks/ is on sys.path)
from storbench.units import parse_count  # noqa: E402

GOAL = 0.5
PAIRS = {"page cache": False, "durable": True}  # pair -> flush/end_fsync


def main() -> None:
    p = parser(__doc__)
    p.add_argument("--size", default=None, help="bytes both sides write (default 1G; --quick: 16M)")
    p.add_argument("--dir", default="/var/tmp", help="filesystem to run on (default /var/tmp)")
    p.add_argument("--format", default="tera", choices=("tera", "parquet"), help="teragen's storage format")
    p.add_argument("--slots", type=int, default=os.cpu_count() or 1,
                   help="Spark's task slots (local[N]) = fio's jobs = files (default: the cores)")
    args = p.parse_args()
    size = parse_count(args.size or ("16M" if args.quick else "1G"))
    if not size or args.slots < 1:
        raise SystemExit(f"--size {args.size!r} / --slots {args.slots}: expected a byte count such as 1G and ≥ 1 slot")
    slots = args.slots
    file_mb = max(1, math.ceil(size / slots / 1_000_000))  # one part file per slot, as one file per fio job
    crc = "checksum=false" if args.format == "tera" else "with Hadoop's CRC layer"
    scope(f"storbench teragen (format={args.format}, {crc}, {slots} part files of {file_mb} MB) vs fio sequential "
          f"buffered write, {size / 1e6:.0f} MB each on the filesystem of {args.dir}; pairs: page cache (teragen "
          f"flush=false vs fio no fsync), durable (teragen flush=true: syncfs in the window vs fio end_fsync=1)",
          peer=f"fio {fio_version()}, {slots} jobs × {size // slots / 1e6:.0f} MB, 1 MiB blocks, libaio iodepth 16",
          parallelism=f"Spark local[{slots}] ({slots} tasks) vs fio {slots} jobs",
          startup="outside the timer on both (one Spark session before the rounds plus one unrecorded teragen; "
                  "fio's process start and file layout outside its bandwidth)",
          cache="everything synced and this benchmark's files evicted from the page cache before each side",
          clock="teragen: its window (time.monotonic, job submission to committed output); fio: its own bw_bytes")
    work = Path(tempfile.mkdtemp(prefix="storbench-teragen-fio-", dir=args.dir))
    rates: dict[str, dict[str, list[float]]] = {}
    try:
        with SparkWorkloads(f"file://{work}", work / "home", f"local[{slots}]") as spark:
            def teragen(flush: bool, record: bool = True) -> float:
                drop_written(work)
                overrides = {"size_bytes": size, "format": args.format, "flush": flush, "partition_mb": file_mb}
                overrides |= {"checksum": False} if args.format == "tera" else {}  # fio has no CRC layer
                seconds, _ = spark.run("teragen", overrides, warmup=not record)
                return size / 1e6 / seconds

            def fio(flush: bool) -> float:
                drop_written(work)
                return fio_write_mbps(work, size, jobs=slots, direct=False, fsync=flush)

            teragen(False, record=False)  # the JIT warm, as fio's C code is
            for pair, flush in PAIRS.items():
                rates[pair] = rotated({"teragen": lambda _k, f=flush: teragen(f),
                                       "fio": lambda _k, f=flush: fio(f)}, args.rounds)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    for pair, sides in rates.items():
        for k, (t, f) in enumerate(zip(sides["teragen"], sides["fio"])):
            print(f"  {pair:<10} round {k + 1}: teragen {t:7.0f} MB/s, fio {f:7.0f} MB/s = {t / f * 100:4.0f}% of fio")
    for pair in PAIRS:
        print(f"  {pair}: teragen {spread(rates[pair]['teragen']).text('.0f', ' MB/s')}, "
              f"fio {spread(rates[pair]['fio']).text('.0f', ' MB/s')}")
    verdict("teragen/fio page cache", ratios(rates["page cache"]["teragen"], rates["page cache"]["fio"]), goal=GOAL)
    verdict("teragen/fio durable", ratios(rates["durable"]["teragen"], rates["durable"]["fio"]), goal=None)


def fio_version() -> str:
    import subprocess

    return subprocess.run(["fio", "--version"], capture_output=True, text=True).stdout.strip()


if __name__ == "__main__":
    main()

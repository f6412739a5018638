"""storbench's teragen vs fio's buffered sequential write on the same file system, same bytes, same parallelism.

Named peer, measured in this run: fio, 1 MiB sequential writes, buffered (no O_DIRECT), libaio,
iodepth 16, with as many jobs as Spark has task slots (local[N], N = the cores or --slots), each job
writing one file of size/N bytes, as each of teragen's N tasks writes one part file of size/N.
The same layout on both sides: N new files, their blocks allocated as they are written (fio with
``--fallocate=none``: its default preallocates the files outside its clock), writes of
whole pages of about 1 MB (teragen's blocks of 10,240 records are 1,024,000 bytes; fio's are 1 MiB).
Each size (default 1 GB and 4 GB) has its own rounds. Two pairs, each equal in scope:
- page cache: teragen with ``flush=false`` against fio without fsync (both end when the data is in
  the page cache, or, past the kernel's dirty limits, when writeback lets them; the goal's pair),
- durable: teragen with ``flush=true`` (its window ends after syncfs: the whole file system, other
  users' dirty pages too) against fio with ``end_fsync=1`` (each job's time includes its fsync).
With format=tera teragen writes through the raw local file system (``checksum=false``): fio has no
CRC layer (Parquet cannot: Spark's writer checksums). Start-up outside the timer on both sides:
fio's own bandwidth (its process start outside), teragen's window from job submission
to committed output in one Spark session started before the rounds, warmed by one unrecorded teragen
(the JIT warm, as fio's C code is); the verify pass is outside. Before each side, everything dirty is
synced and this benchmark's files are evicted from the page cache. Rounds rotate which side goes first.
Goal: teragen ≥ 50% of fio's rate (page-cache pair, at every size); the durable pair is reported.

    .venv/bin/python benchmarks/teragen_vs_fio.py [--size 1G,4G] [--dir /var/tmp] [--format tera] [--rounds 3]
"""

from __future__ import annotations

import math
import os
import shutil
import tempfile
from pathlib import Path

from harness import parser, ratios, rotated, scope, spread, verdict
from peers import SparkWorkloads, drop_written, fio_write_mbps  # noqa: E402  (benchmarks/ is on sys.path)
from storbench.units import human_bytes, parse_count  # noqa: E402
from storbench.workloads.terasort import RECORD_BYTES, TERA_BLOCK  # noqa: E402

GOAL = 0.5
PAIRS = {"page cache": False, "durable": True}  # pair -> flush/end_fsync


def main() -> None:
    p = parser(__doc__)
    p.add_argument(
        "--size", default=None, help="bytes both sides write, one or more comma-separated (default 1G,4G; --quick: 16M)"
    )
    p.add_argument("--dir", default="/var/tmp", help="filesystem to run on (default /var/tmp)")
    p.add_argument("--format", default="tera", choices=("tera", "parquet"), help="teragen's storage format")
    p.add_argument(
        "--slots",
        type=int,
        default=os.cpu_count() or 1,
        help="Spark's task slots (local[N]) = fio's jobs = files (default: the cores)",
    )
    args = p.parse_args()
    text = args.size or ("16M" if args.quick else "1G,4G")
    sizes = [parse_count(item) for item in text.split(",")]
    if not all(sizes) or args.slots < 1:
        raise SystemExit(f"--size {text!r} / --slots {args.slots}: expected byte counts such as 1G,4G and ≥ 1 slot")
    slots = args.slots
    crc = "checksum=false" if args.format == "tera" else "with Hadoop's CRC layer"
    each = ", ".join(f"{size / 1e6:.0f} MB" for size in sizes)
    writes = f", {TERA_BLOCK * RECORD_BYTES:,}-byte writes" if args.format == "tera" else ""
    scope(
        f"storbench teragen (format={args.format}, {crc}, {slots} part files{writes}) vs fio sequential "
        f"buffered write, at {each} each (every size its own rounds) on the filesystem of {args.dir}, "
        f"blocks allocated as written on both (fio --fallocate=none); pairs: "
        f"page cache (teragen flush=false vs fio no fsync), durable (teragen flush=true: syncfs in the window vs "
        f"fio end_fsync=1)",
        peer=f"fio {fio_version()}, {slots} jobs × size/{slots} bytes, 1 MiB blocks, libaio iodepth 16",
        parallelism=f"Spark local[{slots}] ({slots} tasks, one part file each) vs fio {slots} jobs (one file each)",
        startup="outside the timer on both (one Spark session before the rounds plus one unrecorded teragen; "
        "fio's process start outside its bandwidth)",
        cache="everything synced and this benchmark's files evicted from the page cache before each side",
        clock="teragen: its window (time.monotonic, job submission to committed output); fio: its own bw_bytes",
    )
    work = Path(tempfile.mkdtemp(prefix="storbench-teragen-fio-", dir=args.dir))
    rates: dict[tuple[int, str], dict[str, list[float]]] = {}
    try:
        with SparkWorkloads(f"file://{work}", work / "home", f"local[{slots}]") as spark:

            def teragen(size: int, flush: bool, record: bool = True) -> float:
                drop_written(work)
                file_mb = max(1, math.ceil(size / slots / 1_000_000))  # one part file per slot, one per fio job
                overrides = {"size_bytes": size, "format": args.format, "flush": flush, "partition_mb": file_mb}
                overrides |= {"checksum": False} if args.format == "tera" else {}  # fio has no CRC layer
                seconds, _ = spark.run("teragen", overrides, warmup=not record)
                return size / 1e6 / seconds

            def fio(size: int, flush: bool) -> float:
                drop_written(work)
                return fio_write_mbps(work, size, jobs=slots, direct=False, fsync=flush, preallocate=False)

            teragen(sizes[0], False, record=False)  # the JIT warm, as fio's C code is
            for size in sizes:
                for pair, flush in PAIRS.items():
                    rates[size, pair] = rotated(
                        {
                            "teragen": lambda _k, s=size, f=flush: teragen(s, f),
                            "fio": lambda _k, s=size, f=flush: fio(s, f),
                        },
                        args.rounds,
                    )
    finally:
        shutil.rmtree(work, ignore_errors=True)
    for (size, pair), sides in rates.items():
        name = f"{pair} {human_bytes(size)}"
        for k, (t, f) in enumerate(zip(sides["teragen"], sides["fio"])):
            print(f"  {name:<17} round {k + 1}: teragen {t:7.0f} MB/s, fio {f:7.0f} MB/s = {t / f * 100:4.0f}% of fio")
        print(
            f"  {name}: teragen {spread(sides['teragen']).text('.0f', ' MB/s')}, "
            f"fio {spread(sides['fio']).text('.0f', ' MB/s')}"
        )
    for (size, pair), sides in rates.items():
        verdict(
            f"teragen/fio {pair} {human_bytes(size)}",
            ratios(sides["teragen"], sides["fio"]),
            goal=GOAL if pair == "page cache" else None,
        )


def fio_version() -> str:
    import subprocess

    return subprocess.run(["fio", "--version"], capture_output=True, text=True).stdout.strip()


if __name__ == "__main__":
    main()

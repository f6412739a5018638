"""storbench's teragen vs fio's buffered sequential write on the same file system, same bytes.

Named peer, measured in this run: fio, one job, 1 MiB sequential writes, buffered (no O_DIRECT),
exactly the bytes teragen writes, in the same directory. Two pairs, each equal in scope:
- page cache: teragen with ``flush=false`` against fio without fsync (both end when the data is
  in the page cache; the goal's pair),
- durable: teragen with ``flush=true`` (its window ends after syncfs) against fio with
  ``end_fsync=1`` (its time includes the fsync).
With format=tera teragen writes through the raw local file system (``checksum=false``): fio has
no CRC layer (Parquet cannot: Spark's writer checksums). Scope: in-window on both sides (fio's own
bandwidth; teragen's window from job submission to committed output, Spark start-up, one unrecorded
warm-up repetition and the verify pass outside). Before each side, everything dirty
is synced and this benchmark's files are evicted from the page cache.
Goal: teragen ≥ 50% of fio's rate (page-cache pair).

    .venv/bin/python benchmarks/teragen_vs_fio.py [--size 1G] [--dir /var/tmp] [--format tera]
"""

from __future__ import annotations

import argparse
import math
import os
import shutil
import tempfile
from pathlib import Path

from peers import drop_written, fio_write_mbps, run_suite  # noqa: E402  (benchmarks/ is on sys.path as a script)
from storbench.units import parse_count  # noqa: E402

GOAL = 0.5


def file_mb(size: int) -> int:
    """One file per core: fio's one job writes one file; a byte-count scale would otherwise bring the tiny
    scale's 8 MB files (125 Spark tasks for 1 GB, each paying its scheduling and commit)."""
    return max(1, math.ceil(size / (os.cpu_count() or 1) / 1_000_000))


def teragen_mbps(work: Path, size: int, fmt: str, flush: bool) -> float:
    drop_written(work)
    overrides = {"format": fmt, "flush": flush, "partition_mb": file_mb(size)}
    overrides |= {"checksum": False} if fmt == "tera" else {}  # fio has no CRC layer
    samples = run_suite(work, "teragen", str(size), overrides, warmup=1)  # the JIT warm, as fio's C code is
    seconds = next(s.value for s in samples if s.workload == "teragen" and s.metric == "completion_time")
    shutil.rmtree(work / "target-teragen", ignore_errors=True)
    shutil.rmtree(work / "home", ignore_errors=True)
    return size / 1e6 / seconds


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--size", default="1G", help="bytes both sides write (default 1G)")
    parser.add_argument("--dir", default="/var/tmp", help="filesystem to run on (default /var/tmp)")
    parser.add_argument("--format", default="tera", choices=("tera", "parquet"), help="teragen's storage format")
    args = parser.parse_args()
    size = parse_count(args.size)
    if not size:
        raise SystemExit(f"--size {args.size!r}: expected a byte count such as 1G")
    work = Path(tempfile.mkdtemp(prefix="storbench-teragen-fio-", dir=args.dir))
    pairs = {}
    try:
        for name, flush in (("page cache", False), ("durable", True)):
            teragen = teragen_mbps(work, size, args.format, flush)
            drop_written(work)
            pairs[name] = (teragen, fio_write_mbps(work, size, direct=False, fsync=flush))
    finally:
        shutil.rmtree(work, ignore_errors=True)
    crc = "checksum=false" if args.format == "tera" else "with Hadoop's CRC layer"
    print(f"{size / 1e6:.0f} MB on the filesystem of {args.dir}; teragen format={args.format} {crc}, local[*], "
          f"files of {file_mb(size)} MB (one per core); fio one "
          f"job; scope: in-window on both sides, page cache synced and this benchmark's files evicted before each")
    for name, (teragen, fio) in pairs.items():
        scope = ("teragen flush=false vs fio buffered, no fsync" if name == "page cache"
                 else "teragen flush=true (syncfs in the window) vs fio buffered + end_fsync")
        met = "met" if teragen / fio >= GOAL else "MISSED"
        verdict = f" (goal {GOAL * 100:.0f}%: {met})" if name == "page cache" else ""
        print(f"  {name:<10} teragen {teragen:6.0f} MB/s vs fio {fio:6.0f} MB/s: {teragen / fio * 100:3.0f}% of fio"
              f"{verdict}  [{scope}]")


if __name__ == "__main__":
    main()

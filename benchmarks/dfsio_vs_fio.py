"""dfsio-write's aggregate MB/s as a fraction of fio's sequential write on the same filesystem.

Named peer: fio sequential write (1 MiB blocks, libaio, iodepth 16, one job per core), both
direct with an fsync at the end (the device's rate) and buffered without fsync (how dfsio,
like TestDFSIO, writes). dfsio runs one Spark
task per file, as many files as cores, through the Hadoop FileSystem API.

    .venv/bin/python benchmarks/dfsio_vs_fio.py [--file-size 512M] [--dir /var/tmp]
"""

from __future__ import annotations

import argparse
import os
import shutil
import tempfile
from pathlib import Path

from peers import fio_write_mbps, run_suite  # benchmarks/ is on sys.path when run as a script
from storbench.units import parse_count


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--file-size", default="512M")
    parser.add_argument("--dir", default="/var/tmp")
    args = parser.parse_args()
    size, files = parse_count(args.file_size), os.cpu_count() or 2
    work = Path(tempfile.mkdtemp(prefix="storbench-dfsio-bench-", dir=args.dir))
    try:
        # Each writer starts with no dirty pages left by the one before (writeback would throttle it).
        os.sync()
        samples = run_suite(work, "dfsio-002", str(size), {"files": files, "flush": False})  # as TestDFSIO: no sync
        os.sync()
        fio = fio_write_mbps(work, size * files, jobs=files)
        os.sync()
        fio_buffered = fio_write_mbps(work, size * files, jobs=files, direct=False)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    by_key = {(s.workload, s.metric): s.value for s in samples}
    wall = by_key[("dfsio-write", "completion_time")]
    aggregate = by_key[("dfsio-write", "dfsio_total_mb")] / wall
    per_task = by_key[("dfsio-write", "dfsio_throughput_mbps")]
    print(f"{files} files × {size / 1e6:.0f} MB on the filesystem of {args.dir}")
    print(f"fio sequential write, direct:    {fio:8.0f} MB/s")
    print(f"fio sequential write, buffered:  {fio_buffered:8.0f} MB/s (no fsync, as dfsio and TestDFSIO write)")
    print(f"dfsio-write aggregate (MB/wall): {aggregate:8.0f} MB/s = {aggregate / fio * 100:.0f}% of fio direct, "
          f"{aggregate / fio_buffered * 100:.0f}% of fio buffered (goal 70%)")
    print(f"dfsio-write TestDFSIO throughput (MB / sum of task times): {per_task:.0f} MB/s")


if __name__ == "__main__":
    main()

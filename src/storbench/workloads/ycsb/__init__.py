"""YCSB on Cassandra (paper 003): ``ycsb-load`` and ``ycsb-a`` .. ``ycsb-f`` on the native engine's ``cql`` protocol.

``ycsb-load`` is YCSB's load phase: ``recordcount`` rows (``user`` + FNV-1a 64 of the key number:
insertorder=hashed), ``fieldcount`` fields of ``fieldlength`` bytes, into the target's ``usertable``.
``ycsb-a`` .. ``ycsb-f`` are YCSB's core workloads with YCSB's own proportions and request
distributions, as the engine defines them (``storbench-load ycsb-workload LETTER``: A 50/50
read/update zipfian, B 95/5 read/update, C read only, D 95/5 read/insert latest, E 95/5 scan/insert
with scans of 1-100 rows, F 50/50 read/read-modify-write); ``requestdistribution`` overrides the
distribution. They run after ``ycsb-load`` (``after``), ``operationcount`` operations or
``duration_s`` seconds, ``threads`` client threads per engine process (YCSB's -threads), ``drivers``
processes, locally or as Spark barrier tasks (``fanout``).

Both drivers run under the same window rules (the manifest's ``window_rules``; ``compare`` calls runs whose
rules differ not comparable): the same state at the start (``state``), no in-run warm-up, writes counted on
Cassandra's acknowledgement, and ``timing=operations``: the rate and the window cover the operations only
(the engine's measured time, which starts after it connected; YCSB's RunTime less its session open; the
JVM's start-up is outside). With ``duration_s``, YCSB's maxexecutiontime still counts the session open.

Samples, named as YCSB prints them: ``ycsb_throughput_ops_s`` ([OVERALL] Throughput(ops/sec)), per
operation type (label ``op=READ``, ``UPDATE``, ``INSERT``, ``SCAN``, ``READ-MODIFY-WRITE``) and overall
(no ``op``): ``ycsb_operations``, ``ycsb_{avg,p95,p99,max}_latency_us``; ``ycsb_errors`` (by kind:
label ``error``); ``ycsb_load_throughput_ops_s``; the client's CPU per operation, both drivers' clients
sampled from /proc alike (``client_cpu.py``): ``ycsb_client_cpu_us_per_op`` over the steady middle half of
the run's operations, ``ycsb_client_cpu_us_per_op_process`` over the whole client process (start-up and
exit in); ``ycsb_ops_per_server_thread`` (the cluster's rate ÷
all servers' CPU threads: the nodes' fingerprints, each host once, or this machine's cores when the nodes
run here, ``ycsb_server_threads`` and a note say which) and ``ycsb_ops_per_node_thread`` (paper 003's
"operations per thread": the cluster's rate ÷ ONE node's threads, 33,013 / 56 on its 4-node x86 cluster;
only when every host has the same count). The overall throughput
is the workload's ``ops_per_s``: ops per watt comes from the power machinery where power is readable.
A ``--sweep threads=...`` run states the thread count where throughput peaks (``peak.py``).
``restore=snapshot`` brings every node back to the post-load state before each measured run
(``restore.py``). Each engine result is kept in ``artifacts.json`` (``ycsb``).

``driver=ycsb`` runs the same workload with YCSB core 0.17.0 itself instead of the engine
(``core_driver.py``: YCSB's Client with storbench's Java-driver binding), into the same samples labelled
``driver=ycsb``; YCSB's raw output is kept with the run's record. It runs one client process here
(no ``drivers`` > 1, no ``fanout=spark``).
"""

from __future__ import annotations

import json
import subprocess
from dataclasses import dataclass, replace
from functools import cache
from typing import Any

from storbench.context import RunContext
from storbench.engines import native, native_job
from storbench.engines.native import NativeEngine, NativeSpec
from storbench.engines.native_fanout import require_fanouts_gone
from storbench.engines.native_results import judge_errors, result_samples
from storbench.errors import InputError, WorkloadError
from storbench.results.model import Sample
from storbench.targets import Target
from storbench.targets.cassandra import FIELDS, CassandraTarget
from storbench.workloads.base import Workload, variant
from storbench.telemetry.proc_cpu import CpuWatch
from storbench.workloads.ycsb import client_cpu, core_driver, peak, restore
from storbench.workloads.on_spark import spark_session
from storbench.workloads.ycsb.vocabulary import LOAD_NAMES, METRICS, NAMES, PARAMS
from storbench.workloads.ycsb.threads import server_threads, thread_samples

VERIFY_MAX_ROWS = 1_000_000  # restore=snapshot checks count and checksum up to this many rows


@dataclass
class Snapshot:
    """restore=snapshot: the nodes' post-load snapshot (its tag) and the table's state when it was taken."""

    tag: str
    state: dict[str, Any] | None


@dataclass
class YcsbState:
    """What the YCSB workloads of a run share (``ctx.state(YcsbState)``)."""

    snapshot: Snapshot | None = None  # ycsb-load's, with restore=snapshot: each run starts from it


@cache
def core_workload(letter: str) -> dict[str, Any]:
    """YCSB's workload LETTER as the engine defines it: {"mix": [...], "ycsb": {...}}."""
    done = subprocess.run([native.binary(), "ycsb-workload", letter], capture_output=True, text=True, timeout=30)
    if done.returncode != 0:
        raise InputError(f"ycsb-{letter}: the engine does not know YCSB workload {letter!r} (a to f)")
    return json.loads(done.stdout)


class _Ycsb(Workload):
    engine = "native"
    schemes = ("cassandra",)
    params = PARAMS
    metrics = METRICS
    # paper 003's figures: throughput (the load phase's its own), per server CPU thread and per watt, p99 per operation
    headline = (
        "ycsb_throughput_ops_s",
        "ycsb_load_throughput_ops_s",
        "ycsb_ops_per_server_thread",
        "ops_per_watt",
        "ycsb_p99_latency_us",
    )
    letter: str  # "load" or a to f

    def check_params(self, params: dict[str, Any], target: Target) -> None:
        """Every check before the target is reached: a refusal after the claim would leave the keyspace it
        created and dropped as Cassandra's dropped-* snapshots on every node."""
        if params["fieldcount"] > len(FIELDS):
            raise InputError(
                f"{self.name}: fieldcount={params['fieldcount']} is above the {len(FIELDS)} fields of "
                f"the target's usertable (field0..field9)"
            )
        if self.letter != "load" and params["operationcount"] <= 0 and params["duration_s"] <= 0:
            raise InputError(f"{self.name}: set operationcount or duration_s")
        if params["restore"] == "snapshot" and isinstance(target, CassandraTarget):
            restore.require_service(target, self.name)
        if params["driver"] == "ycsb":
            if params["fanout"] != "local" or params["drivers"] > 1:
                raise InputError(
                    f"{self.name}: driver=ycsb runs one YCSB client process here; drivers="
                    f"{params['drivers']} fanout={params['fanout']} need driver=native"
                )
            refusal = core_driver.duration_refusal(self.letter, params)
            if refusal:
                raise InputError(refusal)
            core_driver.classpath()
            return
        NativeEngine.of().tool_version()  # not built: fail before anything runs
        if self.letter != "load":
            core_workload(self.letter)

    def engines(self, params: dict[str, Any]) -> list[str]:
        if params["driver"] == "ycsb":
            return []  # YCSB's client is a JVM of its own, started per run
        return [self.engine, "spark"] if params["fanout"] == "spark" else [self.engine]

    def ops_per_s(self, params: dict[str, Any], samples: list[Sample], seconds: float) -> float | None:
        name = "ycsb_load_throughput_ops_s" if self.letter == "load" else "ycsb_throughput_ops_s"
        values = [s.value for s in samples if s.metric == name and s.value is not None and "op" not in s.labels]
        return sum(values) if values else None

    # -- the job -------------------------------------------------------------------------------

    def _job(self, ctx: RunContext, params: dict[str, Any]) -> dict[str, Any]:
        target = ctx.target_as(CassandraTarget)
        ycsb: dict[str, Any] = {
            "recordcount": params["recordcount"],
            "fieldcount": params["fieldcount"],
            "fieldlength": params["fieldlength"],
            "insertorder": "hashed",
        }
        cql = {
            "contact_points": [f"{h}:{p}" for h, p in target.contacts],
            "keyspace": target.keyspace,
            "table": target.table,
            "consistency": params["consistency"],
            "timeout_s": params["timeout_s"],
            "ycsb": ycsb,
        }
        login = target.credentials()
        if login:  # in the engine's 0600 job file only; the engine never echoes them
            cql |= {"username": login.username, "password": login.password}
        if target.tls:  # TLS checked against this CA (null: the system's trust store), the host name too
            cql["tls"] = target.tls.job()
        load = native_job.load_model(params["threads"], params["target_ops_s"])
        if self.letter == "load":
            ycsb["phase"] = "load"
            return native_job.job(
                "cql",
                cql,
                [{"op": "INSERT", "keys": "once"}],
                params["recordcount"],
                load,
                ops=params["recordcount"],
                duration_s=0.0,
            )
        spec = core_workload(self.letter)
        total = params["operationcount"]
        ycsb |= {"phase": "run", **spec["ycsb"], "operationcount": total or params["recordcount"]}
        if params["requestdistribution"]:
            ycsb["requestdistribution"] = params["requestdistribution"]
        return native_job.job(
            "cql",
            cql,
            spec["mix"],
            params["recordcount"],
            load,
            ops=-(-total // params["drivers"]) if total else 0,
            duration_s=0.0 if total else params["duration_s"],
        )

    def _execute(
        self, ctx: RunContext, params: dict[str, Any], job: dict[str, Any], cpu: CpuWatch | None
    ) -> dict[str, Any]:
        timeout = params["duration_s"] + 600 + params["recordcount"] / 100 + params["operationcount"] / 100
        if params["driver"] == "ycsb":
            target = ctx.target_as(CassandraTarget)
            props = core_driver.properties(
                self.letter, params, target.contacts, target.keyspace, target.table, target.credentials(), target.tls
            )
            try:
                return core_driver.run(
                    self.letter, props, params["threads"], ctx.scratch("ycsb-client"), timeout, cpu=cpu
                )
            finally:
                ctx.drop_scratch("ycsb-client")
        spark = spark_session(ctx) if params["fanout"] == "spark" else None
        return ctx.engine(NativeEngine).run(NativeSpec(job, params["drivers"], spark, timeout, cpu))

    # -- restore=snapshot ----------------------------------------------------------------------

    def _state(self, ctx: RunContext, params: dict[str, Any]) -> dict[str, Any] | None:
        if params["recordcount"] > VERIFY_MAX_ROWS:
            return None
        return restore.table_state(ctx.target_as(CassandraTarget), params["recordcount"])

    def prepare(self, ctx: RunContext, params: dict[str, Any]) -> None:
        if self.letter == "load" or params["restore"] != "snapshot":
            return
        snap = ctx.state(YcsbState).snapshot
        if snap is None:
            raise WorkloadError(
                f"{self.name}: restore=snapshot has no post-load snapshot; run ycsb-load with restore=snapshot first"
            )
        target = ctx.target_as(CassandraTarget)
        before = self._state(ctx, params)
        restore.restore(target, snap.tag)
        after = self._state(ctx, params)
        ctx.artifacts.setdefault("ycsb", {}).setdefault("restores", []).append(
            {"before": self.name, "post_load": snap.state, "found": before, "restored": after}
        )
        if (
            after is None
            and (
                text := f"ycsb: restore=snapshot not verified above {VERIFY_MAX_ROWS:,} rows "
                f"(a COUNT(*) of the table would take too long)"
            )
            not in ctx.notes
        ):
            ctx.notes.append(text)
        if after != snap.state:
            raise WorkloadError(
                f"{self.name}: the restored table differs from the post-load table "
                f"(restored {after}, post-load {snap.state})"
            )

    def _after_load(self, ctx: RunContext, params: dict[str, Any]) -> None:
        if params["restore"] != "snapshot":
            return
        target = ctx.target_as(CassandraTarget)
        state = ctx.state(YcsbState)
        old, state.snapshot = state.snapshot, None
        if old:
            restore.clear(target, old.tag)
        tag = f"storbench_{target.keyspace}"
        restore.snapshot(target, tag)
        state.snapshot = Snapshot(tag, self._state(ctx, params))
        ctx.artifacts.setdefault("ycsb", {})["post_load"] = {"tag": tag, "state": state.snapshot.state}

    # -- the timed run -------------------------------------------------------------------------

    def run(self, ctx: RunContext, params: dict[str, Any]) -> list[Sample]:
        job = self._job(ctx, params) if params["driver"] == "native" else {}  # YCSB's client takes properties
        self._rules(ctx, params)
        # the client's CPU from /proc, the same code for both drivers (not Spark tasks: they run elsewhere)
        cpu = CpuWatch() if params["fanout"] == "local" else None
        with ctx.measure():
            result = self._execute(ctx, params, job, cpu)
        measured = result["result"]["total"]["measured_s"] if params["driver"] == "ycsb" else result.get("measured_s")
        ctx.tool_window(measured)  # both drivers: the window is the operations, not start-up and connect
        kept = {
            "workload": self.name,
            "driver": params["driver"],
            "threads": params["threads"],
            "drivers": params["drivers"],
            "consistency": params["consistency"],
        }
        if params["driver"] == "ycsb":  # YCSB's own output and command beside the parsed figures
            kept |= {"command": result["argv"], "raw": result["raw"]}
            result = result["result"]
        result["client_cpu"] = client_cpu.scoped(params["driver"], result, cpu)
        if (
            cpu is None
            and (
                text := f"ycsb: client CPU per operation not sampled: fanout={params['fanout']} runs "
                f"the engines on other hosts"
            )
            not in ctx.notes
        ):
            ctx.notes.append(text)
        ctx.artifacts.setdefault("ycsb", {}).setdefault("runs", []).append({**kept, "result": result})
        samples = self._samples(ctx, params, result)
        if params["driver"] == "ycsb":
            samples = [replace(s, labels={**s.labels, "driver": "ycsb"}) for s in samples]
        judge_errors(self.name, [result], samples, params["max_error_pct"], ctx.notes)
        if self.letter == "load":
            self._after_load(ctx, params)
        else:
            total = result["total"]
            if total["ops"] and total["latency"].get("count") and total["ops_per_s"] is not None:
                peak.record(ctx, self.name, params["threads"], total["ops_per_s"], total["latency"]["mean_ms"] * 1000)
        return samples

    def _rules(self, ctx: RunContext, params: dict[str, Any]) -> None:
        """The conditions either driver runs under, for the manifest's window_rules: what the table holds at
        the start (restore=snapshot: the flushed post-load snapshot; else as the last workload left it,
        memtables unflushed), no warm-up inside the run (neither YCSB nor the engine's ycsb jobs have one;
        --warmup repeats whole runs for both), and a write counts once Cassandra acknowledges it (its commit
        log, synced as the server is set). The window's timing is added after the run (tool_window)."""
        if self.letter != "load":
            ctx.window.rules["state"] = (
                "restored post-load snapshot (memtables flushed)"
                if params["restore"] == "snapshot"
                else "continued (memtables as left)"
            )
        ctx.window.rules["warmup"] = "none"
        ctx.window.rules["flush"] = "on ack (commit log)"

    def _samples(self, ctx: RunContext, params: dict[str, Any], result: dict[str, Any]) -> list[Sample]:
        total = result["total"]
        out = result_samples(self.name, result, LOAD_NAMES if self.letter == "load" else NAMES)
        out += client_cpu.samples(self.name, result["client_cpu"])
        target = ctx.target_as(CassandraTarget)
        out += thread_samples(self.name, total["ops_per_s"], ctx.node_fingerprints, bool(target.service), ctx.notes)
        return out

    def cleanup(self, ctx: RunContext, params: dict[str, Any]) -> None:
        if params["fanout"] == "spark":
            require_fanouts_gone()
        if self.letter != "load":
            return
        state = ctx.state(YcsbState)
        snap, state.snapshot = state.snapshot, None
        if snap:
            restore.clear(ctx.target_as(CassandraTarget), snap.tag)


YcsbLoad = variant(
    _Ycsb,
    "ycsb-load",
    "YCSB load phase: recordcount rows inserted (insertorder=hashed) into "
    "the target's usertable (Cassandra, native engine)",
    letter="load",
)
WORKLOADS = {
    "a": "YCSB workload A: 50% read, 50% update, zipfian",
    "b": "YCSB workload B: 95% read, 5% update, zipfian",
    "c": "YCSB workload C: 100% read, zipfian",
    "d": "YCSB workload D: 95% read, 5% insert, latest",
    "e": "YCSB workload E: 95% scan (1-100 rows), 5% insert, zipfian",
    "f": "YCSB workload F: 50% read, 50% read-modify-write, zipfian",
}
YCSB_RUNS = {
    letter: variant(_Ycsb, f"ycsb-{letter}", text, letter=letter, after=("ycsb-load",))
    for letter, text in WORKLOADS.items()
}

__all__ = ["YCSB_RUNS", "YcsbLoad", "core_workload", "server_threads"]

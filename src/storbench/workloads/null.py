"""``null-write`` and ``null-read``: a few bytes moved on the ``null`` engine, to test the run core itself.

``storbench run null`` runs them as a smoke test of the harness (claim, telemetry, the
windows, the manifest, cleanup) in about a second, on the default temporary directory or
on ``--target mem://NAME``. Their parameters make a run go wrong on purpose, at one
repetition, so that the run core's error paths have tests that take milliseconds:
``fail`` (in the timed action), ``fail_at`` (which repetition: -1 a warm-up, 0 a prepare
step) and ``fail_step`` (a step around the workloads that fails). Each call is recorded in
``engines.null.EVENTS``.
"""

from __future__ import annotations

import os
import signal
import time
from typing import Any

from storbench import interrupts
from storbench.results.metrics import metric_table
from storbench.context import RunContext
from storbench.engines.null import STEPS, NullEngine, record
from storbench.errors import InputError, WorkloadError
from storbench.results.model import Sample
from storbench.targets.file import path_of
from storbench.targets.mem import MemTarget
from storbench.workloads.base import Workload, register
from storbench.workloads.params import FLUSH, Param

METRICS = metric_table("""
    null_mbps  | Bytes moved per second (size / time)          | MB/s  | mean | higher/lower
    null_tasks | Null engine tasks (its null_hosts option's)   | tasks | mean | fewer/more
""")  # null_tasks: the null engine's own samples, under these workloads' names
FAILURES = ("", "error", "crash", "interrupt", "signal", "signal-wrapped", "untimed", "exit")
STEP_FAILURES = (
    "",
    "engine-end",
    "engine-cancel",
    "engine-stop",
    "engine-collect",
    "workload-cleanup",
    "target-release",
    "signal-in-cleanup",
)
DATA = "null/data"
SIGNALS = {"TERM": signal.SIGTERM, "HUP": signal.SIGHUP, "INT": signal.SIGINT}


class _Null(Workload):
    engine = "null"
    schemes = ("mem", "file")
    metrics = METRICS
    params = (
        Param("size", int, 65536, "bytes moved in the timed action", minimum=0),
        Param("sleep_ms", float, 0.0, "milliseconds the timed action lasts beyond moving the bytes", minimum=0),
        Param(
            "fail",
            str,
            "",
            "go wrong in the timed action: error (a WorkloadError carrying the samples so far), "
            "crash (a bare exception), interrupt (Ctrl-C), signal (`signal` sent to this process), signal-wrapped "
            "(a signal the workload turns into its own error, as py4j does), untimed (no ctx.measure), exit "
            "(SystemExit, as a library's sys.exit)",
            choices=FAILURES,
        ),
        Param("fail_at", int, 1, "the repetition where `fail` happens (-1: a warm-up, 0: a prepare step)"),
        Param(
            "signal", str, "TERM", "the signal of fail=signal and fail_step=signal-in-cleanup", choices=tuple(SIGNALS)
        ),
        Param(
            "fail_step",
            str,
            "",
            "a step around the workloads that fails: the engine's end (after each "
            "window), cancel, stop or collect, this workload's cleanup, the target's release (mem:// only), "
            "or a signal arriving during cleanup",
            choices=STEP_FAILURES,
        ),
        Param("note", str, "", "a warning the workload leaves with the run (as fio's fallbacks do)"),
    )

    def check(self, ctx: RunContext, params: dict[str, Any]) -> None:
        super().check(ctx, params)
        if params["fail_step"] == "target-release" and not isinstance(ctx.target, MemTarget):
            raise InputError(f"{self.name}: fail_step=target-release needs a mem://NAME target")
        if params["fail"] in ("signal", "signal-wrapped") or params["fail_step"] == "signal-in-cleanup":
            if not interrupts.installed():  # without storbench's handlers SIGTERM kills the process
                raise InputError(f"{self.name}: a signal needs storbench's signal handlers (the CLI installs them)")

    def prepare(self, ctx: RunContext, params: dict[str, Any]) -> None:
        record(f"workload prepare {self.name}")
        step = params["fail_step"].removeprefix("engine-")
        if step in STEPS:
            ctx.engine(NullEngine).fail.add(step)
        elif step == "target-release":
            ctx.target_as(MemTarget).volume.fail_release = True

    def run(self, ctx: RunContext, params: dict[str, Any]) -> list[Sample]:
        repetition = ctx.engine(NullEngine).tag.repetition
        record(f"workload run {self.name} {repetition}")
        fail = params["fail"] if params["fail_at"] == repetition else ""
        if fail == "untimed":
            return []
        with ctx.measure():
            self.move(ctx, params["size"])
            time.sleep(params["sleep_ms"] / 1000)
            _go_wrong_inside(fail, SIGNALS[params["signal"]])
        window = ctx.window.span
        rate = [Sample(self.name, "null_mbps", params["size"] / 1e6 / max(window.end - window.start, 1e-9), "MB/s")]
        if params["note"] and params["note"] not in ctx.notes:
            ctx.notes.append(params["note"])
        # kept with the run as artifacts.json (a warm-up's are dropped, as fio's job files are)
        ctx.artifacts.setdefault("null", []).append({"workload": self.name, "repetition": repetition})
        if fail == "error":
            error = WorkloadError(f"{self.name}: failed at repetition {repetition} (fail=error)")
            error.samples = tuple(rate)
            raise error
        if fail == "crash":
            raise RuntimeError(f"crashed at repetition {repetition} (fail=crash)")
        return rate

    def move(self, ctx: RunContext, size: int) -> None:
        raise NotImplementedError

    def cleanup(self, ctx: RunContext, params: dict[str, Any]) -> None:
        record(f"workload cleanup {self.name}")
        if params["fail_step"] == "workload-cleanup":
            raise RuntimeError(f"{self.name}: cleanup failed (fail_step=workload-cleanup)")
        if params["fail_step"] == "signal-in-cleanup":
            os.kill(os.getpid(), SIGNALS[params["signal"]])  # shielded now: noted, and the run ends interrupted


def _go_wrong_inside(fail: str, signum: int) -> None:
    """The failures that happen inside the timed window."""
    if fail == "interrupt":
        raise KeyboardInterrupt
    if fail == "exit":
        raise SystemExit(3)
    if fail == "signal":
        os.kill(os.getpid(), signum)  # storbench's handler raises KeyboardInterrupt here
        time.sleep(1)  # not reached: the signal arrives at the next bytecode
    if fail == "signal-wrapped":
        try:
            os.kill(os.getpid(), signum)
            time.sleep(1)
        except KeyboardInterrupt:
            raise RuntimeError("the library's own error for an interrupt") from None


@register
class NullWrite(_Null):
    name = "null-write"
    description = "write `size` bytes to the target on the null engine (a test of the harness, not of storage)"
    params = (*_Null.params, FLUSH)

    def prepare(self, ctx: RunContext, params: dict[str, Any]) -> None:
        super().prepare(ctx, params)
        ctx.target.delete(ctx.data_uri(DATA))  # the last repetition's, inside the run root only

    def move(self, ctx: RunContext, size: int) -> None:
        data, uri = bytes(size), ctx.data_uri(DATA)
        if isinstance(ctx.target, MemTarget):
            ctx.target.write(uri, data)
        else:
            path_of(uri).parent.mkdir(parents=True, exist_ok=True)
            path_of(uri).write_bytes(data)

    def estimated_bytes(self, params: dict[str, Any]) -> int:
        return params["size"]


@register
class NullRead(_Null):
    name = "null-read"
    description = "read back what null-write wrote, on the null engine (a test of the harness, not of storage)"
    after = ("null-write",)

    def prepare(self, ctx: RunContext, params: dict[str, Any]) -> None:
        super().prepare(ctx, params)
        ctx.evict(ctx.data_uri(DATA))

    def move(self, ctx: RunContext, size: int) -> None:
        uri = ctx.data_uri(DATA)
        data = ctx.target.read(uri) if isinstance(ctx.target, MemTarget) else path_of(uri).read_bytes()
        if len(data) < size:
            raise WorkloadError(f"{self.name}: {uri} holds {len(data)} bytes, {size} expected (run null-write first)")

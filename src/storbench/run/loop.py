"""The run's loop: sweep points × prepare steps × warm-ups × rounds of repetitions (one configuration, or
several interleaved: storbench.run.rounds), and the one place where a timed window becomes samples.

Each workload runs under the engines' tag (``begin``/``end``); its window (``ctx.measure``) gets the
completion time, the telemetry's device and CPU metrics, the derived power metrics and the engines' own
samples, all labelled with the sweep point, written at once (a crash keeps what was measured).
"""

from __future__ import annotations

import copy
from dataclasses import dataclass, replace
from typing import Any, Protocol

from storbench import interrupts
from storbench.context import Window, WindowRecord
from storbench.engines.base import Tag
from storbench.errors import StorbenchError, WorkloadError
from storbench.results.model import Sample
from storbench.run.plan import Plan
from storbench.run.session import RunSession
from storbench.run.sweep import Point
from storbench.telemetry.power.derived import derived_samples
from storbench.workloads.base import Workload

WARMUP_REPETITION = -1  # the engines' tag of a warm-up: never sampled


class Side(Protocol):
    """One configuration of the rounds: what it runs before its recorded repetitions at a sweep point, and one
    recorded repetition of its workloads. In this process (:class:`Configuration`) or in a process of its own
    (storbench.run.worker) when its engines cannot share one."""

    def prepare(self, index: int, point: Point) -> None: ...
    def repetition(self, repetition: int, index: int, point: Point) -> dict[str, list[Sample]]: ...


@dataclass
class Configuration:
    """A configuration run in this process: its plan and the session that holds its run."""

    plan: Plan
    session: RunSession

    def prepare(self, index: int, point: Point) -> None:
        """The point's engine settings, prepare steps (repetition 0) and unrecorded warm-ups."""
        plan, session = self.plan, self.session
        if point.engine_options:
            session.engines.reconfigure(
                point.text,
                point.engine_options,
                session.progress.step,
                session.writer.manifest,
                session.writer.update_manifest,
            )
        for entry in plan.suite.prepare:
            _run_one(plan, session, entry.workload, 0, point, index)
        for warmup in range(1, plan.options.warmup + 1):  # the JIT's and caches' start-up, not recorded
            for entry in plan.suite.workloads:
                _warm_up(plan, session, entry.workload, warmup, point, index)

    def repetition(self, repetition: int, index: int, point: Point) -> dict[str, list[Sample]]:
        """Each workload's recorded window at ``repetition``, in suite order: its samples by workload."""
        return {
            entry.workload: _run_one(self.plan, self.session, entry.workload, repetition, point, index)
            for entry in self.plan.suite.workloads
        }


class Rounds(Protocol):
    """The order of the configurations in each round, and when recorded repetitions may stop early."""

    def order(self, repetition: int) -> list[int]: ...
    def ran(self, repetition: int, order: list[int]) -> None: ...
    def enough(self, repetition: int, point: Point, recorded: "Recorded") -> bool: ...


# (configuration index, workload, point text) -> repetition -> the window's samples (what --repeat auto reads)
Recorded = dict[tuple[int, str, str], dict[int, list[Sample]]]


def run_rounds(
    sides: list[Side], points: list[Point], repetitions: int, rounds: Rounds, running: list[int] | None = None
) -> None:
    """Points × prepare steps × warm-ups × rounds of repetitions. Each round runs repetition r of every
    configuration in the order ``rounds`` gives, so slow drift of the machine falls on all of them alike;
    prepare steps (data generation) and warm-ups stay per configuration. ``running`` is set to the index of
    the configuration at work (who failed, when something fails)."""
    running = running if running is not None else [0]
    recorded: Recorded = {}
    for index, point in enumerate(points):
        for k, side in enumerate(sides):
            running[0] = k
            side.prepare(index, point)
        for repetition in range(1, repetitions + 1):
            order = rounds.order(repetition)
            for k in order:
                running[0] = k
                for workload, samples in sides[k].repetition(repetition, index, point).items():
                    recorded.setdefault((k, workload, point.text), {})[repetition] = samples
            rounds.ran(repetition, order)
            if rounds.enough(repetition, point, recorded):
                break


def _run_one(plan: Plan, session: RunSession, name: str, repetition: int, point: Point, index: int) -> list[Sample]:
    """One recorded repetition (0: a prepare step): its window's samples, the engines' and its rules."""
    workload, params, ctx, writer = plan.workloads[name], plan.params(name, point), session.ctx, session.writer
    label = name if repetition == 0 else f"{name} (repetition {repetition}/{plan.repetitions})"
    with session.progress.step(
        session.prefix + _at(label, point), counted=True, poll=session.engines.task_progress
    ) as outcome:
        session.live.begin(name, repetition)
        tag = Tag(name, repetition, index, point.labels)
        try:
            extra = _execute(session, workload, params, tag, f"workload {name} failed")
        except StorbenchError as exc:
            exc.where = (name, repetition)
            if exc.samples:  # measured before it failed: kept, and the phase still fails
                writer.add_samples(_at_point(exc.samples, repetition, point))
            raise
        window = _timed(ctx.window.span, name, repetition)
        seconds = window.end - window.start
        samples = [Sample(name, "completion_time", seconds, "s", repetition)]
        samples += session.telemetry.samples(name, window, repetition)
        samples += derived_samples(name, repetition, samples, workload.ops_per_s(params, extra, seconds), session.idle)
        recorded = _at_point(samples + extra + session.engines.end(tag), repetition, point)
        writer.add_samples(recorded)
        session.live.window(name, recorded)
        session.windows.append(
            {"workload": name, "repetition": repetition, **point.labels, "t0": window.start, "t1": window.end}
        )
        _record_rules(session, _at(name, point), ctx.window.rules)
        outcome["text"] = _short_summary(samples)
    return recorded


def _warm_up(plan: Plan, session: RunSession, name: str, warmup: int, point: Point, index: int) -> None:
    """One unrecorded repetition: run as a recorded one is, its samples and engine figures dropped."""
    workload, ctx = plan.workloads[name], session.ctx
    with session.progress.step(
        session.prefix + _at(f"{name} (warm-up {warmup}/{plan.options.warmup})", point), counted=True
    ):
        tag = Tag(name, WARMUP_REPETITION, index, point.labels)
        kept = copy.deepcopy(ctx.artifacts)  # what the workload keeps (fio's job files and JSON) is not kept
        try:
            _execute(session, workload, plan.params(name, point), tag, f"workload {name} failed in warm-up {warmup}")
            _timed(ctx.window.span, name, 0)
        except StorbenchError as exc:
            exc.where, exc.samples = (name, 0), ()  # nothing of a warm-up is kept
            raise
        session.engines.end(tag)
        ctx.artifacts.clear()
        ctx.artifacts.update(kept)


def _execute(session: RunSession, workload: Workload, params: dict[str, Any], tag: Tag, failure: str) -> list[Sample]:
    """prepare + run under the engines' tag; the window's rules start from the workload's flush parameter.
    A bare exception becomes a WorkloadError (``failure: Kind: line``, or the engine's root cause); an
    interrupt that an engine turned into its own error on the way up stays an interrupt."""
    ctx = session.ctx
    ctx.window = WindowRecord.for_params(params)
    signals = interrupts.received()
    try:
        session.engines.begin(tag)
        workload.prepare(ctx, params)
        return list(workload.run(ctx, params))
    except Exception as exc:
        if interrupts.received() > signals:  # py4j turns an interrupt into its own error on the way up
            raise KeyboardInterrupt from exc
        if isinstance(exc, StorbenchError):
            raise
        line = session.engines.explain(exc) or _first_line(exc)
        raise WorkloadError(f"{failure}: {line}") from exc


def _timed(window: Window | None, name: str, repetition: int) -> Window:
    """The workload's timed window; a workload that did not time its action fails (a warm-up too)."""
    if window is None:
        error = WorkloadError(f"workload {name} did not time its action (ctx.measure)")
        error.where = (name, repetition)
        raise error
    return window


def _first_line(exc: Exception) -> str:
    text = str(exc).strip()
    return f"{type(exc).__name__}: {text.splitlines()[0] if text else ''}"


def _at_point(samples: Any, repetition: int, point: Point) -> list[Sample]:
    return [replace(s, repetition=repetition, labels={**s.labels, **point.labels}) for s in samples]


def _at(label: str, point: Point) -> str:
    return f"{label} [{point.text}]" if point.labels else label


def _record_rules(session: RunSession, workload: str, rules: dict[str, str]) -> None:
    """The manifest's window_rules: per workload (and sweep point), the conditions its windows ran under
    (the report shows them; compare calls runs whose rules differ not comparable)."""
    writer = session.writer
    known = dict(writer.manifest.get("window_rules") or {})
    if rules and known.get(workload) != rules:
        known[workload] = {**known.get(workload, {}), **rules}
        writer.update_manifest(window_rules=known)


def _short_summary(samples: list[Sample]) -> str:
    values = {s.metric: s.value for s in samples}
    parts = []
    for metric, fmt in (
        ("max_read_mbps", "read max {:.0f} MB/s"),
        ("max_write_mbps", "write max {:.0f} MB/s"),
        ("max_cpu_pct", "CPU max {:.0f}%"),
        ("avg_power_w", "{:.0f} W avg"),
    ):
        if values.get(metric) is not None:
            parts.append(fmt.format(values[metric]))
    return ", ".join(parts)

"""The plan of a run: options, suite, scale, sweep and target resolved into what the session and loop run.

Everything here is checked before anything starts: a bad option, suite, scale, sweep or target is one
line and nothing is written."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable

from storbench.engines.lifecycle import check_reach
from storbench.errors import InputError, StorbenchError
from storbench.run.options import RunOptions, new_run_id
from storbench.run.sweep import Point, sweep_points
from storbench.suites import Suite, load_suite
from storbench.targets import Target, TargetOptions, parse_target
from storbench.workloads.base import Workload


@dataclass
class Plan:
    options: RunOptions
    run_id: str
    suite: Suite
    scale: str
    suite_params: dict[str, Any]
    per_workload: dict[str, dict[str, Any]]  # each workload's resolved parameters
    repetitions: int
    workloads: dict[str, Workload]
    points: list[Point]
    target: Target
    need_bytes: int  # what the workloads will write, checked against the target's free space
    engine_names: list[str]  # the engines the workloads name, in the order they first need them

    def params(self, workload: str, point: Point) -> dict[str, Any]:
        """``workload``'s parameters at a sweep point."""
        return {**self.per_workload[workload], **point.params}

    def check_workloads(self, ctx: Any) -> None:
        """Each workload's own checks (``Workload.check``, the target claimed) at every sweep point."""
        self._at_every_point(lambda workload, params: workload.check(ctx, params))

    def check_params(self) -> None:
        """Each workload's parameter checks (``Workload.check_params``) at every sweep point, before the target
        is reached or claimed."""
        self._at_every_point(lambda workload, params: workload.check_params(params, self.target))

    def _at_every_point(self, check: Callable[[Workload, dict[str, Any]], None]) -> None:
        """``check`` of each workload at every sweep point, as ``--set`` gets it: a swept value a workload
        refuses (``checksum=false`` on Parquet) is one line naming the point, before anything runs."""
        for point in self.points:
            for name, workload in self.workloads.items():
                try:
                    check(workload, self.params(name, point))
                except StorbenchError as exc:
                    if not point.labels:
                        raise
                    check(workload, self.per_workload[name])  # not the point's doing: said without it
                    where = "--sweep" if self.options.sweep else self.suite.source
                    raise type(exc)(f"{where} point {point.text}: {exc}") from None

    def steps(self) -> int:
        """Progress steps: prepare steps, warm-ups and repetitions of every workload, at every point."""
        suite = self.suite
        per_point = len(suite.prepare) + (self.options.warmup + self.repetitions) * len(suite.workloads)
        return len(self.points) * per_point


def _repetitions(options: RunOptions, suite: Suite) -> int:
    """--repeat N, the most --repeat auto may take, or the suite's own."""
    if options.repeat_auto is not None:
        return options.repeat_auto[1]
    return options.repeat or suite.repetitions


def make_plan(options: RunOptions, home: Any, target_text: str) -> Plan:
    suite = load_suite(options.suite)
    scale, suite_params, per_workload = suite.resolve(options.scale, options.overrides)
    workloads = suite.instances()
    target = parse_target(target_text, TargetOptions(home, options.replication, options.endpoint, options.cql_insecure))
    for workload in workloads.values():  # before precheck reaches for the target ("is Cassandra running?")
        if target.scheme not in workload.schemes:
            raise InputError(workload.scheme_refusal(target))
    names = [engine for name, w in workloads.items() for engine in w.engines(per_workload[name])]
    points = sweep_points(
        options.sweep or suite.sweep,
        suite.declared_params(),
        options.engine_options,
        "--sweep" if options.sweep else suite.source,
        names,
    )
    need = max(
        sum(w.estimated_bytes({**per_workload[n], **point.params}) for n, w in workloads.items()) for point in points
    )  # the largest point's: `--sweep rows=...` is checked like `--set rows=...`
    # a parameter a sweep sets may bring an engine in (`--sweep driver=testdfsio,storbench`: Hadoop's)
    names += [
        engine
        for point in points
        if point.params
        for n, w in workloads.items()
        for engine in w.engines({**per_workload[n], **point.params})
        if engine not in names
    ]
    plan = Plan(
        options,
        new_run_id(options.label),
        suite,
        scale,
        suite_params,
        per_workload,
        _repetitions(options, suite),
        workloads,
        points,
        target,
        need,
        names,
    )
    plan.check_params()
    target.precheck(plan.need_bytes)
    check_reach(names, options.engine_options, home, target)  # what an engine needs to reach the target
    return plan

"""The engines of one run: built from the workloads' needs, started, tagged, stopped and collected.

The run core drives this through the engine protocol only (storbench.engines.base); it
never names an engine. What only some engines do is a capability (storbench.engines.capabilities)
asked for with ``isinstance``: an engine without it is skipped, never called. The manifest gets each engine's versions (``software``), its
settings (``<name>_settings``), its start-up time when starting is real work
(``<name>_startup_s``) and, in a sweep, the settings of each restart
(``<name>_settings_by_point``).
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path
from typing import Any, Callable

from storbench.engines.base import Engine, EngineOptions, EngineSetup, Tag, all_engines, make_engine
from storbench.engines.capabilities import (
    AddsRunFlags,
    ChecksOptions,
    ClusterBacked,
    Diagnosable,
    ReportsProgress,
    Sweepable,
    TargetBinding,
    WritesScratch,
)
from storbench.results.model import Sample


# -- the run's engine options, checked and recorded by every registered engine before anything starts ----


def engines_with(capability: type) -> list[Any]:
    """Every registered engine class that has ``capability``, in name order."""
    return [engine for engine in all_engines().values() if issubclass(engine, capability)]


def add_engine_flags(parser: argparse.ArgumentParser) -> None:
    """Every engine's own flags on the ``run`` command (the CLI names none of them)."""
    for engine in engines_with(AddsRunFlags):
        engine.add_flags(parser)


def engine_flag_options(args: argparse.Namespace) -> EngineOptions:
    """The run's engine options, each engine's read back from its own flags."""
    return {key: value for engine in engines_with(AddsRunFlags) for key, value in engine.read_flags(args).items()}


def check_engine_options(options: EngineOptions) -> None:
    for engine in engines_with(ChecksOptions):
        engine.check_options(options)


def engine_options_config(options: EngineOptions) -> dict[str, Any]:
    """The manifest's ``config`` entries of every engine's options."""
    return {
        key: value for engine in engines_with(ChecksOptions) for key, value in engine.options_config(options).items()
    }


def engine_sweep(
    key: str, values: list[Any], options: EngineOptions, where: str, names: list[str] | None = None
) -> tuple[list[EngineOptions] | None, list[str], str | None]:
    """(each point's engine options, when one of the engines ``names`` (default: every engine) owns ``key``;
    the sweep keys those engines take, for a message; the engine outside ``names`` that owns ``key``, if any)."""
    keys: list[str] = []
    sweepable = engines_with(Sweepable)
    for engine in sweepable:
        if names is not None and engine.name not in names:
            continue
        points = engine.sweep(key, values, options, where)
        if points is not None:
            return points, keys, None
        keys += engine.sweep_keys()
    owner = next(
        (
            engine.name
            for engine in sweepable
            if names is not None and engine.name not in names and _owns(engine, key, values, options, where)
        ),
        None,
    )
    return None, keys, owner


def sweep_keys_by_engine() -> dict[str, list[str]]:
    """{engine: how its sweep keys are named} of every engine that owns some (``run --sweep``'s help)."""
    return {engine.name: engine.sweep_keys() for engine in engines_with(Sweepable)}


def _owns(engine: Any, key: str, values: list[Any], options: EngineOptions, where: str) -> bool:
    try:
        return engine.sweep(key, values, options, where) is not None
    except Exception:  # its values are wrong for it: still its key (a message names it, nothing runs)
        return True


def service_nodes(options: EngineOptions, home: Path) -> tuple[Path, str] | None:
    """The nodes file of the storbench service the engine options point at (``services up ...``), if any."""
    return next(filter(None, (engine.service_nodes(options, home) for engine in engines_with(ClusterBacked))), None)


def runs_elsewhere(options: EngineOptions) -> str | None:
    """Where the engines run when not on this machine alone (a cluster's URL), if anywhere."""
    return next(filter(None, (engine.runs_elsewhere(options) for engine in engines_with(ClusterBacked))), None)


def engine_classes(names: list[str]) -> list[type[Engine]]:
    known = all_engines()
    return [known[name] for name in dict.fromkeys(names) if name in known]


def check_reach(names: list[str], options: EngineOptions, home: Path, target: Any) -> None:
    """Before the claim: what the engines ``names`` point at answers, and what they need to reach the target is
    there (one line each, not a launch that hangs)."""
    for engine in engine_classes(names):
        if issubclass(engine, ClusterBacked):
            engine.check_reachable(options, home)
        if issubclass(engine, TargetBinding):
            engine.check_target(target)


def data_root(names: list[str], target: Any, root: str) -> str:
    """The run root as the engines ``names`` reach it (``s3://`` is ``s3a://`` for a Hadoop client)."""
    for engine in engine_classes(names):
        if issubclass(engine, TargetBinding):
            root = engine.data_uri(target, root)
    return root


class RunEngines:
    """The engines a run uses, in the order the suite first needs them."""

    def __init__(self, names: list[str], setup: EngineSetup):
        self.by_name: dict[str, Engine] = {name: make_engine(name, setup) for name in dict.fromkeys(names)}

    def scratch_dirs(self) -> list[str]:
        """Local directories the engines write scratch data to (measured apart when on another device)."""
        return [d for engine in self._with(WritesScratch) for d in engine.scratch_dirs()]

    def _with(self, capability: type[Any]) -> list[Any]:
        """The run's engines that have ``capability``, in the run's order."""
        return [engine for engine in self.by_name.values() if isinstance(engine, capability)]

    def start(self, step: Callable[[str], Any], record: Callable[..., None], software: dict[str, str]) -> None:
        """Start each engine (a progress step for those whose start is real work) and record what it reports."""
        for name, engine in self.by_name.items():
            started = time.monotonic()
            what = engine.describe() if isinstance(engine, ReportsProgress) else None
            if what:
                with step(f"starting {what}"):
                    engine.start()
            else:
                engine.start()
            software.update(engine.versions())
            fields: dict[str, Any] = {"software": dict(software)}
            settings = engine.settings()  # Spark's: a round trip to the JVM
            if settings:
                fields[f"{name}_settings"] = settings
            if what:
                fields[f"{name}_startup_s"] = round(time.monotonic() - started, 3)
            record(**fields)

    def begin(self, tag: Tag) -> None:
        for engine in self.by_name.values():
            engine.begin(tag)

    def end(self, tag: Tag) -> list[Sample]:
        return [sample for engine in self.by_name.values() for sample in engine.end(tag)]

    def reconfigure(
        self,
        point: str,
        options: EngineOptions,
        step: Callable[[str], Any],
        manifest: dict[str, Any],
        record: Callable[..., None],
    ) -> None:
        """A sweep point's own engine options: engines that restart for it record their new settings."""
        for name, engine in self.by_name.items():
            if isinstance(engine, Sweepable) and engine.reconfigure(point, options, step):
                by_point = dict(manifest.get(f"{name}_settings_by_point") or {})
                by_point[point] = engine.settings()
                record(**{f"{name}_settings_by_point": by_point})

    def task_progress(self) -> tuple[int, int] | None:
        """The running workload's tasks (done, total) from the first engine that knows them."""
        return next(filter(None, (engine.task_progress() for engine in self._with(ReportsProgress))), None)

    def explain(self, exc: BaseException) -> str | None:
        """The engines' one line for an error that came out of one of them (its root cause), if any."""
        return next(filter(None, (engine.explain(exc) for engine in self._with(Diagnosable))), None)

    def failure_logs(self) -> list[tuple[Path, list[str]]]:
        return [log for log in (engine.failure_log() for engine in self._with(Diagnosable)) if log and log[1]]

    def cancel(self, failed: Callable[[str, str], None]) -> None:
        """Cancel what every engine still runs; one that fails to is reported and the others still cancel."""
        for name, engine in self.by_name.items():
            try:
                engine.cancel()
            except Exception as exc:
                failed(name, f"could not cancel: {exc}")

    def stop(self, failed: Callable[[str, str], None]) -> None:
        """Stop every engine; one that fails to stop is reported and the others still stop."""
        for name, engine in self.by_name.items():
            try:
                engine.stop()
            except Exception as exc:  # an engine that cannot stop must not keep the others running
                failed(name, f"could not stop: {exc}")

    def collect(self, failed: Callable[[str, str], None]) -> tuple[list[Sample], dict[str, Any]]:
        """What the stopped engines measured themselves: samples and files to keep with the run."""
        samples: list[Sample] = []
        files: dict[str, Any] = {}
        for name, engine in self.by_name.items():
            try:
                more, kept = engine.collect()
            except Exception as exc:  # the measurements taken so far still stand
                failed(f"{name}-metrics", str(exc))
                continue
            samples += more
            files.update(kept)
        return samples, files

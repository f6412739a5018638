"""The engine protocol: where a workload's work runs, and what the engine measures itself.

Every engine (a JVM session, fio, rados bench, the native load engine) is a peer behind this one protocol.
A run builds only the engines its workloads name (``Workload.engines(params)``), starts
each before the first workload, tells it when each workload begins and ends (``begin``,
``end``: samples it measured itself over that workload), stops them after the last one
and then asks each for what it could only measure once stopped (``collect``: a JVM
engine's event log is complete only then). fio, rados bench and the native engine measure inside
their workloads and add nothing more.

A new engine is one module in this package with a ``@register``-ed subclass; the
registry finds it by discovery, the runner never names it.
"""

from __future__ import annotations

import importlib
import pkgutil
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, ClassVar, Iterator

from storbench.errors import InputError
from storbench.results.model import Sample


# The label of an engine's per-host samples (its tasks ran on more than one host); the run relabels each with
# the measured node that has that host
HOST_LABEL = "executor_host"

# The run's engine options by name, as the CLI gives them (an engine's own flags, e.g. its master URL);
# each engine reads, checks and records its own and ignores the others'.
EngineOptions = dict[str, Any]


@dataclass
class EngineSetup:
    """What a run tells its engines; each takes what it needs."""

    run_dir: Path | None = None  # the run's results directory (an engine may keep its logs there)
    app_name: str = "storbench"
    options: EngineOptions = field(default_factory=dict)  # the run's engine options
    target: Any = None  # the run's Target (claimed): engines bind to it from its neutral facts
    workloads: list[tuple[Any, dict[str, Any]]] = field(default_factory=list)  # (Workload, params) of the run
    home: Path | None = None  # the results home (its storbench services: a cluster's credentials)


@dataclass(frozen=True)
class Tag:
    """What runs next: a workload, its repetition (0: a prepare step) and the sweep point."""

    workload: str
    repetition: int
    point_index: int = 0
    labels: dict[str, str] = field(default_factory=dict)


class Engine:
    """One engine of a run: started once, told what each workload is, stopped and collected at the end.

    These are the hooks every engine has; what only some engines do (their own flags and options, sweep keys,
    a cluster, their own way to the target, window counters, progress, diagnosis, report rows) is a capability
    in ``engines.capabilities`` that the engine inherits and the run core asks for with ``isinstance``.
    """

    name: ClassVar[str]
    # True when a process can hold only one of this engine at a time (one JVM session per process), so
    # interleaved configurations, whose engines are all open together, cannot use it
    one_per_process: ClassVar[bool] = False

    @classmethod
    def for_run(cls, setup: EngineSetup) -> "Engine":
        """The engine for one run; engines that need nothing of the run's set-up take no arguments."""
        return cls()

    def start(self) -> None:
        """Make the engine ready (a session, a binary found and runnable); raise EngineError otherwise."""

    def stop(self) -> None:
        """Release what ``start`` took; safe to call twice or without a start."""

    def cancel(self) -> None:
        """Stop work still in flight (an interrupted run's), before its data is removed from the target."""

    def versions(self) -> dict[str, str]:
        """Software versions recorded with the run (``software`` in the manifest)."""
        return {}

    def settings(self) -> dict[str, str]:
        """The engine's effective settings, recorded as ``<name>_settings`` when there are any."""
        return {}

    def begin(self, tag: Tag) -> None:
        """Called before each workload, so the engine can attribute what follows to it."""

    def end(self, tag: Tag) -> list[Sample]:
        """Called after each workload: samples the engine measured itself over it (stored with the workload's)."""
        return []

    def collect(self) -> tuple[list[Sample], dict[str, Any]]:
        """After ``stop``: the samples the engine measured itself, and files ({name: JSON data}) to keep."""
        return [], {}


_ENGINES: dict[str, type[Engine]] = {}


def register(cls: type[Engine]) -> type[Engine]:
    if cls.name in _ENGINES and _ENGINES[cls.name] is not cls:
        raise RuntimeError(
            f"engine name {cls.name!r} registered twice ({_ENGINES[cls.name].__module__} and {cls.__module__})"
        )
    _ENGINES[cls.name] = cls
    return cls


def _discover() -> None:
    """Import every module of this package once: their ``@register`` lines fill the registry."""
    package = importlib.import_module("storbench.engines")
    for module in pkgutil.iter_modules(package.__path__):
        importlib.import_module(f"storbench.engines.{module.name}")


def all_engines() -> dict[str, type[Engine]]:
    """Every registered engine by name, in name order (so messages listing them read the same every time)."""
    _discover()
    return dict(sorted(_ENGINES.items()))


@contextmanager
def registered(cls: type[Engine]) -> Iterator[type[Engine]]:
    """Tests: a new engine ``cls`` registered beside every discovered one while the block runs, gone after it."""
    _discover()
    register(cls)
    try:
        yield cls
    finally:
        _ENGINES.pop(cls.name, None)


def make_engine(name: str, setup: EngineSetup) -> Engine:
    engines = all_engines()
    if name not in engines:
        raise InputError(f"engine {name!r} is not known; known: {', '.join(sorted(engines))}")
    return engines[name].for_run(setup)

"""What an engine can do beyond the core protocol (``engines.base.Engine``): one class a capability.

An engine declares a capability by inheriting its class (``class SparkEngine(Engine, Sweepable, ...)``) and
implements all of its methods (they are abstract: a missing one fails when the engine is built). The lifecycle
(``engines.lifecycle``) and the run core ask ``isinstance``/``issubclass`` before they call one, so an engine
with only the core hooks (fio, rados, the native engine) runs through every step without no-op stand-ins.

One more capability lives where it is used, below this layer: ``targets.hdfs.HadoopClientSource`` (an engine
whose Hadoop client an ``hdfs://`` target checks and claims through).
"""

from __future__ import annotations

import argparse
from abc import ABC, abstractmethod
from pathlib import Path
from typing import Any, Callable

from storbench.engines.base import EngineOptions


class AddsRunFlags(ABC):
    """Flags of its own on ``storbench run`` (a master URL, its settings), read back into the run's options."""

    @classmethod
    @abstractmethod
    def add_flags(cls, parser: argparse.ArgumentParser) -> None:
        """Add this engine's flags to the ``run`` command's parser."""

    @classmethod
    @abstractmethod
    def read_flags(cls, args: argparse.Namespace) -> EngineOptions:
        """This engine's options from the parsed flags (a bad value: InputError in one line)."""


class ChecksOptions(ABC):
    """Options it checks before anything starts and records in the manifest (called on every registered engine
    that has them, whichever engines the run uses: the manifest's ``config`` is the same for every run)."""

    @classmethod
    @abstractmethod
    def check_options(cls, options: EngineOptions) -> None:
        """Refuse this engine's bad options in one line (InputError) before anything starts."""

    @classmethod
    @abstractmethod
    def options_config(cls, options: EngineOptions) -> dict[str, Any]:
        """This engine's options as the manifest's ``config`` records them (secrets masked)."""


class Sweepable(ABC):
    """Owns sweep keys (Spark: ``cores``, ``spark.*``) and restarts with a point's own options."""

    @classmethod
    @abstractmethod
    def sweep(cls, key: str, values: list[Any], options: EngineOptions, where: str) -> list[EngineOptions] | None:
        """A sweep of ``key`` over ``values`` as this engine's options per point (overriding the run's), or None
        when the key is not this engine's."""

    @classmethod
    @abstractmethod
    def sweep_keys(cls) -> list[str]:
        """How the sweep keys this engine takes are named in a bad-input message."""

    @abstractmethod
    def reconfigure(self, point: str, options: EngineOptions, step: Callable[[str], Any]) -> bool:
        """A sweep point with its own engine options (shown as a progress ``step``); True if it restarted."""


class ClusterBacked(ABC):
    """May run on a cluster (a storbench service or another one) rather than on this machine alone."""

    @classmethod
    @abstractmethod
    def service_nodes(cls, options: EngineOptions, home: Path) -> tuple[Path, str] | None:
        """(nodes file, how it was found) of the storbench service these options run on, or None."""

    @classmethod
    @abstractmethod
    def runs_elsewhere(cls, options: EngineOptions) -> str | None:
        """Where the work runs when it is not this machine alone (a cluster's URL), else None."""

    @classmethod
    @abstractmethod
    def check_reachable(cls, options: EngineOptions, home: Path | None = None) -> None:
        """Before the claim, for the run's engines only: what its options point at answers (InputError if not),
        so that an unreachable cluster is one line and not a launch that hangs."""


class TargetBinding(ABC):
    """Reaches the target its own way (a Hadoop client's URI scheme, jars it needs for it)."""

    @classmethod
    @abstractmethod
    def check_target(cls, target: Any) -> None:
        """Before the target is claimed: what this engine needs to reach it is there (EngineError if not)."""

    @classmethod
    @abstractmethod
    def data_uri(cls, target: Any, uri: str) -> str:
        """The target's ``uri`` as the workloads hand it to this engine."""


class WritesScratch(ABC):
    """Writes scratch data (shuffle, spill) to local directories, measured apart when on another device."""

    @abstractmethod
    def scratch_dirs(self) -> list[str]:
        """Local directories the engine writes scratch data to."""


class WindowCounters(ABC):
    """Reads counters of its own at the edges of each timed window (Spark: S3A's requests), not at ``begin``."""

    @abstractmethod
    def window_opens(self) -> None:
        """Right before the workload's timed window starts (``ctx.measure``): its prepare, set-up and checks
        fall outside."""

    @abstractmethod
    def window_closed(self) -> None:
        """Right after the timed window ended."""


class ReportsProgress(ABC):
    """Starting it is real work (named on the progress line and timed), and it knows a workload's tasks."""

    @abstractmethod
    def describe(self) -> str:
        """How the progress line names the engine while it starts."""

    @abstractmethod
    def task_progress(self) -> tuple[int, int] | None:
        """(done, total) of the running workload's tasks, for the progress line; None when unknown."""


class Diagnosable(ABC):
    """Knows what failed inside it: an error's root cause, and its own log."""

    @abstractmethod
    def explain(self, exc: BaseException) -> str | None:
        """The one line that names what failed when ``exc`` came out of this engine (its root cause), else None."""

    @abstractmethod
    def failure_log(self) -> tuple[Path, list[str]] | None:
        """A failed run: this engine's own log and its last relevant lines (the terminal never showed them)."""


class ReportedSettings(ABC):
    """Rows of its own in a report's configuration table, read from a stored manifest (any run's, whichever
    engines it used: a report of an old run names what that run recorded)."""

    @classmethod
    @abstractmethod
    def report_settings(cls, manifest: dict[str, Any]) -> dict[str, Any]:
        """The settings a report keeps of this engine (the comparison's JSON form; never a secret)."""

    @classmethod
    @abstractmethod
    def software_rows(cls, software: dict[str, Any]) -> dict[str, Any]:
        """{row name: version} from the manifest's ``software``, shown before the shared runtime rows."""

    @classmethod
    @abstractmethod
    def settings_rows(cls, settings: dict[str, Any]) -> dict[str, Any]:
        """{row name: value} of ``report_settings``' settings, shown after the software rows."""

"""The ``null`` engine: does no work and starts nothing, so a run of the ``null-*`` workloads tests the run core.

It records every protocol call it gets, in order, in :data:`EVENTS` (shared with the
``mem://`` target and the null workloads, so one list shows a whole run's order:
``engine begin``, ``workload run``, ``target release``...) and in its own ``calls``,
which ``collect`` keeps with the run as ``null-engine.json``. A workload can arm it to
fail one step (``fail``), to test that a failing cleanup step does not stop the others.

Its options (tests of the run core; the CLI names none): ``null_settings`` ({name: value}, recorded
as ``null_settings``) and ``null_hosts`` (the executor hosts it reports one task per window on, as
Spark's event log does on a cluster). It owns the sweep keys ``null.*``: each point reconfigures it
with that setting.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Callable

from storbench import __version__
from storbench.engines.base import HOST_LABEL, Engine, EngineOptions, EngineSetup, Tag, register
from storbench.engines.capabilities import ChecksOptions, Diagnosable, Sweepable
from storbench.errors import InputError
from storbench.redaction import redact_settings
from storbench.results.model import Sample
from storbench.targets.mem import EVENTS, record  # noqa: F401 (one list for the engine, target and workloads)

STEPS = ("end", "cancel", "stop", "collect")  # the steps a workload may arm to fail
SETTINGS = "null_settings"  # the engine options that are the null engine's
HOSTS = "null_hosts"


def _tagged(tag: Tag) -> str:
    """``null-write 2`` (its repetition), ``null-write -1 [size=1000]`` (a warm-up, at a sweep point)."""
    point = ", ".join(f"{key}={value}" for key, value in tag.labels.items())
    return f"{tag.workload} {tag.repetition}" + (f" [{point}]" if point else "")


@register
class NullEngine(Engine, ChecksOptions, Sweepable, Diagnosable):
    name = "null"

    def __init__(self, settings: dict[str, str] | None = None, hosts: list[str] | None = None) -> None:
        self.calls: list[str] = []
        self.tag: Tag | None = None  # the workload running now (its repetition: -1 a warm-up, 0 a prepare step)
        self.fail: set[str] = set()  # steps of STEPS that raise, armed by a workload
        self.own_settings = dict(settings or {})
        self.hosts = list(hosts or [])
        self.windows: list[Tag] = []  # the recorded windows, for collect's per-host tasks
        self.log: Path | None = None  # null-engine.json in the run directory: its calls, written by collect

    @classmethod
    def check_options(cls, options: EngineOptions) -> None:
        hosts = options.get(HOSTS, [])
        if not isinstance(hosts, list) or not all(isinstance(h, str) and h for h in hosts):
            raise InputError(f"{HOSTS} {hosts!r}: expected a list of host names")

    @classmethod
    def options_config(cls, options: EngineOptions) -> dict[str, Any]:
        return {}  # its options are a test's, not a configuration under test

    @classmethod
    def sweep(cls, key: str, values: list[Any], options: EngineOptions, where: str) -> list[EngineOptions] | None:
        """``null.NAME``: the null engine reconfigured with that setting at each point."""
        return [{SETTINGS: {key: str(v)}} for v in values] if key.startswith("null.") else None

    @classmethod
    def sweep_keys(cls) -> list[str]:
        return ["a null.* setting"]

    @classmethod
    def for_run(cls, setup: EngineSetup) -> "NullEngine":
        engine = cls(setup.options.get(SETTINGS), setup.options.get(HOSTS))
        engine.log = setup.run_dir / "null-engine.json" if setup.run_dir is not None else None
        return engine

    def _call(self, what: str) -> None:
        self.calls.append(what)
        record(f"engine {what}")
        if what.split()[0] in self.fail:
            raise RuntimeError(f"null engine: {what.split()[0]} failed (armed)")

    def start(self) -> None:
        self._call("start")

    def versions(self) -> dict[str, str]:
        return {"null": __version__}

    def begin(self, tag: Tag) -> None:
        self.tag = tag
        self._call(f"begin {_tagged(tag)}")

    def settings(self) -> dict[str, str]:
        return redact_settings(dict(sorted(self.own_settings.items())))

    def reconfigure(self, point: str, options: EngineOptions, step: Callable[[str], Any]) -> bool:
        if SETTINGS not in options:
            return False
        self._call(f"reconfigure [{point}]")
        self.own_settings.update(options[SETTINGS])
        return True

    def end(self, tag: Tag) -> list[Sample]:
        self._call(f"end {_tagged(tag)}")
        if tag.repetition > 0:
            self.windows.append(tag)
        return []

    def cancel(self) -> None:
        self._call("cancel")

    def stop(self) -> None:
        self._call("stop")

    def explain(self, exc: BaseException) -> str | None:
        return None  # its armed failures say what failed themselves

    def failure_log(self) -> tuple[Path, list[str]] | None:
        """Its log's last lines: the last calls it got."""
        return (self.log, self.calls[-3:]) if self.log is not None else None

    def collect(self) -> tuple[list[Sample], dict[str, Any]]:
        """With ``null_hosts``: per recorded window, its tasks (one per host) and each host's (labelled with it)."""
        self._call("collect")
        samples = []
        for tag in self.windows if self.hosts else []:
            samples.append(
                Sample(tag.workload, "null_tasks", float(len(self.hosts)), "tasks", tag.repetition, dict(tag.labels))
            )
            samples += [
                Sample(tag.workload, "null_tasks", 1.0, "tasks", tag.repetition, {**tag.labels, HOST_LABEL: host})
                for host in self.hosts
            ]
        return samples, {"null-engine.json": {"calls": list(self.calls)}}  # its log (failure_log)

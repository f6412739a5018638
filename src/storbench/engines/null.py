"""The ``null`` engine: does no work and starts nothing, so a run of the ``null-*`` workloads tests the run core.

It records every protocol call it gets, in order, in :data:`EVENTS` (shared with the
``mem://`` target and the null workloads, so one list shows a whole run's order:
``engine begin``, ``workload run``, ``target release``...) and in its own ``calls``,
which ``collect`` keeps with the run as ``null-engine.json``. A workload can arm it to
fail one step (``fail``), to test that a failing cleanup step does not stop the others.
"""

from __future__ import annotations

from typing import Any

from storbench import __version__
from storbench.engines.base import Engine, Tag, register
from storbench.results.model import Sample
from storbench.targets.mem import EVENTS, record  # noqa: F401 (one list for the engine, target and workloads)

STEPS = ("end", "cancel", "stop", "collect")  # the steps a workload may arm to fail


def _tagged(tag: Tag) -> str:
    """``null-write 2`` (its repetition), ``null-write -1 [size=1000]`` (a warm-up, at a sweep point)."""
    point = ", ".join(f"{key}={value}" for key, value in tag.labels.items())
    return f"{tag.workload} {tag.repetition}" + (f" [{point}]" if point else "")


@register
class NullEngine(Engine):
    name = "null"

    def __init__(self) -> None:
        self.calls: list[str] = []
        self.tag: Tag | None = None  # the workload running now (its repetition: -1 a warm-up, 0 a prepare step)
        self.fail: set[str] = set()  # steps of STEPS that raise, armed by a workload

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

    def end(self, tag: Tag) -> list[Sample]:
        self._call(f"end {_tagged(tag)}")
        return []

    def cancel(self) -> None:
        self._call("cancel")

    def stop(self) -> None:
        self._call("stop")

    def collect(self) -> tuple[list[Sample], dict[str, Any]]:
        self._call("collect")
        return [], {"null-engine.json": {"calls": list(self.calls)}}

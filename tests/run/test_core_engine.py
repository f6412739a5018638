"""The engine protocol's core: a handful of hooks every engine has, and capabilities the run core asks for.

An engine with only the core hooks runs through a whole run (a sweep, the timed windows, a failure and the
cleanup) and the run core reads nothing else of it: whatever an engine may do beyond the core is a
capability (``engines.capabilities``) checked with ``isinstance`` first, never a no-op default called.
"""

from __future__ import annotations

import inspect
from typing import Any

import pytest

from storbench.context import RunContext
from storbench.engines import base as engine_base
from storbench.engines.base import Engine, Tag, all_engines
from storbench.results.model import Sample
from storbench.workloads import base as workload_base
from storbench.workloads.base import Workload, all_workloads
from storbench.workloads.params import Param
from tests.run.null_run import run_null

CORE = {"for_run", "start", "stop", "cancel", "versions", "settings", "begin", "end", "collect"}
DECLARED = {"name", "one_per_process"}  # what an engine class declares, read by the run core as facts


def test_the_engine_protocol_is_its_core_hooks_only():
    hooks = {name for name, _ in inspect.getmembers(Engine) if not name.startswith("_")}
    assert hooks - DECLARED == CORE


def test_every_engine_implements_every_capability_it_declares():
    for name, cls in all_engines().items():
        assert not inspect.isabstract(cls), f"{name}: {sorted(getattr(cls, '__abstractmethods__', ()))}"


class CoreOnly(Engine):
    """The core hooks and nothing else; every attribute the run reads of it is kept in ``READ``."""

    name = "test-core-only"
    READ: list[str] = []
    CALLS: list[str] = []

    def __getattribute__(self, attribute: str) -> Any:
        if not attribute.startswith("_") and attribute not in ("READ", "CALLS"):
            CoreOnly.READ.append(attribute)
        return super().__getattribute__(attribute)

    def start(self) -> None:
        CoreOnly.CALLS.append("start")

    def stop(self) -> None:
        CoreOnly.CALLS.append("stop")

    def cancel(self) -> None:
        CoreOnly.CALLS.append("cancel")

    def versions(self) -> dict[str, str]:
        return {"core-only": "1.0"}

    def settings(self) -> dict[str, str]:
        return {"mode": "plain"}

    def begin(self, tag: Tag) -> None:
        CoreOnly.CALLS.append(f"begin {tag.workload} {tag.repetition}")

    def end(self, tag: Tag) -> list[Sample]:
        CoreOnly.CALLS.append(f"end {tag.workload} {tag.repetition}")
        return [Sample(tag.workload, "completion_time", 1.0, "s", tag.repetition, {"by": "engine"})]

    def collect(self) -> tuple[list[Sample], dict[str, Any]]:
        CoreOnly.CALLS.append("collect")
        return [], {"core-only.json": {"calls": len(CoreOnly.CALLS)}}


class CoreWrite(Workload):
    name = "test-core-write"
    engine = CoreOnly.name
    schemes = ("mem",)
    params = (
        Param("size", int, 1000, "bytes written in the window", minimum=0),
        Param("fail_at", int, 0, "the repetition that fails inside its window (0: none)"),
    )

    def run(self, ctx: RunContext, params: dict[str, Any]) -> list[Sample]:
        repetition = len([c for c in CoreOnly.CALLS if c.startswith("begin")])
        with ctx.measure():
            ctx.target.write(ctx.data_uri("core"), bytes(params["size"]))
            if params["fail_at"] and params["fail_at"] == repetition:
                raise RuntimeError(f"failed at repetition {repetition}")
        return []


@pytest.fixture
def core_only(monkeypatch):
    all_workloads()  # discovered first: the test's workload is added to a complete registry
    monkeypatch.setitem(workload_base.REGISTRY, CoreWrite.name, CoreWrite)
    CoreOnly.READ.clear()
    CoreOnly.CALLS.clear()
    with engine_base.registered(CoreOnly):
        yield
    CoreOnly.READ.clear()
    CoreOnly.CALLS.clear()


def test_an_engine_with_only_the_core_hooks_runs_a_whole_swept_run(tmp_path, core_only):
    run = run_null(tmp_path, suite=CoreWrite.name, repeat=2, sweep={"size": ["1000", "2000"]})
    assert run.status == "succeeded", run.errors
    assert run.manifest["software"]["core-only"] == "1.0"
    assert run.manifest[f"{CoreOnly.name}_settings"] == {"mode": "plain"}
    assert f"{CoreOnly.name}_startup_s" not in run.manifest  # not a ReportsProgress engine: its start is instant
    assert run.json("core-only.json") == {"calls": len(CoreOnly.CALLS)}  # its files are kept with the run
    assert CoreOnly.CALLS[0] == "start" and CoreOnly.CALLS[-3:] == ["cancel", "stop", "collect"]
    windows = [s for s in run.samples if s["metric"] == "completion_time" and s["labels"].get("by") == "engine"]
    assert [(s["repetition"], s["labels"]["size"]) for s in windows] == [
        (1, "1000"),
        (2, "1000"),
        (1, "2000"),
        (2, "2000"),
    ]
    assert set(CoreOnly.READ) <= CORE | DECLARED, sorted(set(CoreOnly.READ) - CORE - DECLARED)


def test_a_failure_inside_a_core_engine_s_window_fails_the_run_and_still_cleans_up(tmp_path, core_only):
    run = run_null(tmp_path, suite=CoreWrite.name, repeat=2, overrides={"fail_at": "2"})
    assert run.status == "failed"
    assert "failed at repetition 2" in run.errors[0]["error"]
    assert CoreOnly.CALLS[-3:] == ["cancel", "stop", "collect"]
    assert set(CoreOnly.READ) <= CORE | DECLARED, sorted(set(CoreOnly.READ) - CORE - DECLARED)

"""The engine protocol: discovery, the run's engine set, and a run starting only the engines it uses."""

import json
from pathlib import Path

import pytest

from storbench.targets.base import TargetFacts

from storbench.context import RunContext
from storbench.engines.base import Engine, EngineSetup, Tag, all_engines, make_engine, register
from storbench.engines.fio import FioEngine
from storbench.engines.lifecycle import RunEngines
from storbench.engines.spark import SparkEngine
from storbench.errors import EngineError, InputError
from storbench.results.model import Sample
from tests.workloads.helpers import run_json


def test_every_engine_module_is_found_by_discovery():
    engines = all_engines()
    assert {"spark", "fio", "rados", "native"} <= set(engines)
    for name, cls in engines.items():
        assert cls.name == name and issubclass(cls, Engine)


def test_an_unknown_engine_is_one_clear_line():
    with pytest.raises(
        InputError, match=r"^engine 'ycsb' is not known; known: fio, hadoop, native, null, rados, spark$"
    ):
        make_engine("ycsb", EngineSetup())


def test_a_name_registered_twice_is_refused():
    class Twin(Engine):
        name = "fio"

    with pytest.raises(RuntimeError, match="engine name 'fio' registered twice"):
        register(Twin)


class Recorder(Engine):
    """A minimal engine for the lifecycle's bookkeeping (registered under a name no run uses)."""

    name = "test-recorder"
    fail_collect = False

    def __init__(self):
        self.events = []

    def start(self):
        self.events.append("start")

    def stop(self):
        self.events.append("stop")
        raise RuntimeError("stuck")

    def versions(self):
        return {"recorder": "1.0"}

    def begin(self, tag):
        self.events.append(("begin", tag.workload, tag.repetition))

    def end(self, tag):
        return [Sample(tag.workload, "engine_ops", 5.0, "ops", tag.repetition)]

    def collect(self):
        if Recorder.fail_collect:
            raise ValueError("log unreadable")
        return [Sample("w", "m", 1.0, "s")], {"recorder.json": {"ok": True}}


@pytest.fixture
def recorder_registered():
    from storbench.engines import base

    with base.registered(Recorder):
        yield Recorder


@pytest.mark.real
def test_run_engines_start_tag_stop_and_collect(tmp_path, recorder_registered):
    engines = RunEngines(["test-recorder", "fio", "test-recorder"], EngineSetup(run_dir=tmp_path))
    assert list(engines.by_name) == ["test-recorder", "fio"]  # first use decides the order; no duplicates
    recorded = {}
    engines.start(step=None, record=lambda **fields: recorded.update(fields), software={"storbench": "x"})
    assert recorded["software"]["recorder"] == "1.0" and recorded["software"]["fio"].startswith("fio-3.")
    assert "test-recorder_startup_s" not in recorded  # an instant start is not timed
    engines.begin(Tag("w", 2))
    assert engines.end(Tag("w", 2)) == [Sample("w", "engine_ops", 5.0, "ops", 2)]
    failures = []
    engines.stop(lambda where, message: failures.append((where, message)))
    assert failures == [("test-recorder", "could not stop: stuck")]  # and fio still stopped
    recorder = engines.by_name["test-recorder"]
    assert recorder.events == ["start", ("begin", "w", 2), "stop"]
    samples, files = engines.collect(lambda where, message: failures.append((where, message)))
    assert samples == [Sample("w", "m", 1.0, "s")] and files == {"recorder.json": {"ok": True}}
    Recorder.fail_collect = True
    try:
        assert engines.collect(lambda where, message: failures.append((where, message))) == ([], {})
    finally:
        Recorder.fail_collect = False
    assert failures[-1] == ("test-recorder-metrics", "log unreadable")


def test_spark_engine_builds_its_event_log_and_local_dir_from_the_setup(tmp_path):
    made = []

    class Scratchy:  # a target with a local scratch directory, made once when Spark binds to it
        def facts(self):
            return TargetFacts("file")

        def scratch_dir(self):
            made.append(1)
            return str(tmp_path / "local")

    setup = EngineSetup(
        run_dir=tmp_path,
        options={"spark_master": "local[1]", "spark_conf": {"spark.local.dir": "/fast"}},
        target=Scratchy(),
    )
    engine = make_engine("spark", setup)
    assert isinstance(engine, SparkEngine) and made == [1] and engine.local_dir == str(tmp_path / "local")
    assert Path(engine.event_log_dir) == tmp_path / "spark-events" and engine.event_log_dir
    assert engine.scratch_dirs() == ["/fast"]  # --spark-conf spark.local.dir wins over the target's
    assert engine.describe() == "Spark (local[1])"
    assert engine.collect() == ([], {})  # nothing logged yet: nothing to collect


def test_a_workload_reaches_only_the_engines_of_its_run():
    ctx = RunContext(run_id="r", target=None, root_uri="", engines={"fio": FioEngine()})
    assert isinstance(ctx.engine(FioEngine), FioEngine)
    with pytest.raises(EngineError, match="the spark engine was not started for this run"):
        ctx.engine(SparkEngine)


@pytest.mark.real
def test_a_fio_run_starts_fio_and_not_spark(tmp_path):
    result, outcome, samples = run_json(
        tmp_path / "home", "fio-basic", "--target", str(tmp_path / "t"), "--set", "runtime_s=1", "--set", "size=8m"
    )
    assert result.returncode == 0, result.stderr
    run_dir = Path(outcome["path"])
    manifest = json.loads((run_dir / "manifest.json").read_text())
    assert manifest["software"]["fio"].startswith("fio-3.")
    assert "spark" not in manifest["software"] and "spark_settings" not in manifest
    assert not (run_dir / "spark-events").exists()
    assert "starting Spark" not in result.stderr
    assert not any(s["metric"].startswith("spark_") for s in samples)

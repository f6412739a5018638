import json

import pytest

from storbench.errors import ResultsError
from storbench.results.model import SCHEMA_VERSION, Sample


def _run(store, run_id, label, samples=()):
    writer = store.create_run(run_id, {"label": label, "suite": "s", "parameters": {"rows": 1}})
    writer.add_samples(samples)
    return writer


def test_samples_are_on_disk_before_the_run_finishes(store):
    writer = _run(store, "r1", "a", [Sample("groupby", "completion_time", 1.5, "s", 1)])
    lines = (writer.path / "samples.jsonl").read_text().splitlines()
    assert json.loads(lines[0])["value"] == 1.5
    run = store.resolve("r1")
    assert run.status == "running" and run.samples[0].metric == "completion_time"


def test_label_resolves_to_its_latest_run(store):
    _run(store, "20260101-000000-a-0001", "a").finish("succeeded")
    _run(store, "20260101-000001-a-0002", "a").finish("failed")
    assert store.resolve("a").run_id == "20260101-000001-a-0002"
    assert [r.run_id for r in store.list_runs("a")] == ["20260101-000000-a-0001", "20260101-000001-a-0002"]


def test_unknown_ref_lists_labels(store):
    _run(store, "r1", "ssd-a").finish("succeeded")
    with pytest.raises(ResultsError, match="no run or label named 'ssd-b'.*labels: ssd-a"):
        store.resolve("ssd-b")


def test_newer_schema_is_refused(store):
    writer = _run(store, "r1", "a")
    writer.update_manifest(schema_version=SCHEMA_VERSION + 1)
    with pytest.raises(ResultsError, match="upgrade storbench"):
        store.resolve("r1")


def test_a_torn_last_line_keeps_everything_before_it(store):
    writer = _run(store, "r1", "a", [Sample("g", "completion_time", 2.0, "s", 1)])
    with open(writer.path / "samples.jsonl", "a") as handle:
        handle.write('{"workload": "g", "metr')
    assert [s.value for s in store.resolve("r1").samples] == [2.0]


def test_missing_values_stay_missing(store):
    _run(store, "r1", "a", [Sample("g", "avg_read_latency_ms", None, "ms", 1)])
    assert store.resolve("r1").samples[0].value is None
    with pytest.raises(ValueError):
        Sample("g", "m", float("nan"), "s")


def test_index_is_rebuilt_from_run_directories(store):
    _run(store, "r1", "a", [Sample("g", "completion_time", 1.0, "s", 1)]).finish("succeeded")
    store.db_path.unlink()
    assert [r.run_id for r in store.list_runs()] == ["r1"]


def test_import_indexes_a_run_directory_once_and_refuses_others(store, tmp_path):
    from storbench.errors import InputError
    from storbench.results.store import ResultStore

    elsewhere = ResultStore(tmp_path / "elsewhere")
    writer = _run(elsewhere, "r9", "copied", [Sample("g", "completion_time", 3.0, "s", 1)])
    writer.finish("succeeded")
    for _ in range(2):  # again: no second copy of the run or its samples
        assert store.import_run(writer.path).run_id == "r9"
        assert [r.run_id for r in store.list_runs()] == ["r9"]
        assert [s.value for s in store.resolve("r9").samples] == [3.0]
    assert store.index.samples("r9") == store.resolve("copied").samples
    with pytest.raises(InputError, match=r"import .*: not a storbench run directory \(no manifest.json"):
        store.import_run(tmp_path)

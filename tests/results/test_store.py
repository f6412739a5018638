import json

import pytest

from storbench.errors import ResultsError
from storbench.results.model import SCHEMA_VERSION, Sample


R9 = "20260101-000000-copied-00a9"


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
    writer = _run(elsewhere, R9, "copied", [Sample("g", "completion_time", 3.0, "s", 1)])
    writer.finish("succeeded")
    for _ in range(2):  # again: no second copy of the run or its samples
        assert store.import_run(writer.path).run_id == R9
        assert [r.run_id for r in store.list_runs()] == [R9]
        assert [s.value for s in store.resolve(R9).samples] == [3.0]
    assert store.index.samples(R9) == store.resolve("copied").samples
    with pytest.raises(InputError, match=r"import .*: not a storbench run directory \(no manifest.json"):
        store.import_run(tmp_path)


@pytest.mark.parametrize("ref", ["../x", "/etc", "..", ".", "runs/x", "a b"])
def test_a_run_reference_is_a_run_id_or_a_label_never_a_path(store, ref):
    from storbench.errors import InputError

    (store.home / "manifest.json").parent.mkdir(parents=True, exist_ok=True)
    (store.home / "manifest.json").write_text("{}")  # what `show ..` would have read as a run
    with pytest.raises(InputError) as error:
        store.resolve(ref)
    message = str(error.value)
    assert message.startswith(f"run {ref!r}: ") and "name a run by its id or label" in message
    assert "storbench import DIR" in message and "\n" not in message


def _copied(tmp_path, run_id=R9, label="copied", **manifest):
    """A run directory made elsewhere, then edited: what `storbench import` is handed."""
    from storbench.results.store import ResultStore

    writer = ResultStore(tmp_path / "elsewhere").create_run(run_id, {"label": label, "suite": "s"})
    writer.add_samples([Sample("g", "completion_time", 1.0, "s", 1), Sample("g", "completion_time", 2.0, "s", 2)])
    writer.finish("succeeded")
    if manifest:
        data = json.loads((writer.path / "manifest.json").read_text())
        (writer.path / "manifest.json").write_text(json.dumps({**data, **manifest}))
    return writer.path


@pytest.mark.parametrize(
    "fields, message",
    [
        ({"label": "../../x"}, "manifest.json label '../../x': use letters, digits, '.', '_' and '-' only"),
        ({"label": "a" * 65}, "manifest.json label: 65 characters; at most 64 allowed"),
        ({"run_id": "../../etc"}, "manifest.json run_id '../../etc': not a storbench run id for label 'copied'"),
        ({"run_id": "20260101-000000-other-00a9"}, "run_id '20260101-000000-other-00a9': not a storbench run id"),
        ({"status": "done"}, "manifest.json status 'done': allowed: running, succeeded, failed, interrupted, crashed"),
    ],
)
def test_import_refuses_names_the_cli_would_not_create(store, tmp_path, fields, message):
    from storbench.errors import InputError

    path = _copied(tmp_path, **fields)
    with pytest.raises(InputError) as error:
        store.import_run(path)
    assert str(error.value).startswith(f"import {path}: ") and message in str(error.value)
    assert store.list_runs() == []


def test_import_refuses_a_corrupt_line_before_the_last_naming_file_and_line(store, tmp_path):
    path = _copied(tmp_path)
    lines = (path / "samples.jsonl").read_text().splitlines()
    (path / "samples.jsonl").write_text("\n".join([lines[0], '{"workload": "g", "metric": 3', lines[1]]) + "\n")
    with pytest.raises(ResultsError) as error:
        store.import_run(path)
    assert str(error.value).startswith(f"import {path}: {path}/samples.jsonl:2: corrupt sample line (")
    assert str(error.value).endswith("fix or remove line 2; nothing imported") and store.list_runs() == []


def test_import_keeps_the_lines_before_a_last_line_cut_short_and_says_so(tmp_path):
    from storbench.results.store import ResultStore

    warnings = []
    store = ResultStore(tmp_path / "home", warn=warnings.append)
    path = _copied(tmp_path)
    with open(path / "samples.jsonl", "a") as handle:
        handle.write('{"workload": "g", "metr')  # the process died mid-write
    assert [s.value for s in store.import_run(path).samples] == [1.0, 2.0]
    assert warnings == [
        f"{path}/samples.jsonl:3: last line cut short (the run's process ended mid-write): "
        f"skipped; the 2 samples before it stand"
    ]
    assert [s.value for s in store.index.samples(R9)] == [1.0, 2.0]


def test_reindex_swaps_a_complete_new_index_in_and_an_interrupt_leaves_the_old_one(store, monkeypatch):
    from storbench.results.store import ResultStore

    for n in range(3):
        _run(store, f"20260101-00000{n}-a-000{n}", "a", [Sample("g", "completion_time", n, "s", 1)]).finish("succeeded")
    before = store.db_path.read_bytes()
    load = ResultStore.read_run
    calls = []

    def interrupted(self, path, with_samples):
        calls.append(path)
        if len(calls) == 2:
            raise KeyboardInterrupt
        return load(self, path, with_samples)

    monkeypatch.setattr(ResultStore, "read_run", interrupted)
    with pytest.raises(KeyboardInterrupt):
        store.reindex()
    assert store.db_path.read_bytes() == before and len(store.list_runs()) == 3
    assert sorted(p.name for p in store.home.iterdir()) == ["results.db", "runs"]  # no half-built file left
    monkeypatch.setattr(ResultStore, "read_run", load)
    inode = store.db_path.stat().st_ino
    assert store.reindex() == 3 and store.db_path.stat().st_ino != inode  # a new file, renamed over the old
    assert [r.run_id for r in store.list_runs()] == [f"20260101-00000{n}-a-000{n}" for n in range(3)]


def test_manifest_and_samples_are_on_the_device_before_the_index_records_the_run(store, monkeypatch):
    """fsync of each file and of the directories holding them, before each index write that names the run."""
    import os

    synced = []
    fsync = os.fsync

    def recorded(fd):
        synced.append(os.readlink(f"/proc/self/fd/{fd}"))
        fsync(fd)

    monkeypatch.setattr(os, "fsync", recorded)
    put_run = store.index.put_run
    monkeypatch.setattr(store.index, "put_run", lambda *a, **k: (synced.append("index"), put_run(*a, **k)))
    writer = _run(store, "r1", "a", [Sample("g", "completion_time", 1.0, "s", 1)])
    run_dir, runs = str(writer.path), str(store.runs_dir)
    first = synced[: synced.index("index")]
    assert f"{run_dir}/manifest.json.tmp" in first  # written beside, fsynced, renamed over
    assert first.count(run_dir) >= 2 and runs in first  # the rename and samples.jsonl, the run directory
    synced.clear()
    writer.finish("succeeded")
    assert synced == [f"{run_dir}/manifest.json.tmp", run_dir, "index"]


def test_a_run_whose_process_died_reads_crashed_until_cleanup_finishes_it(store):
    """The store shows what the process check says; finish_crashed records it for good (and in the index)."""
    writer = _run(store, "r1", "a", [Sample("g", "completion_time", 1.0, "s", 1)])
    assert store.resolve("r1").status == "running"  # this process is alive
    writer.update_manifest(process={**writer.manifest["process"], "pid": 2**22 + 1})
    assert store.resolve("r1").status == "crashed" and [r.status for r in store.list_runs()] == ["crashed"]
    assert store.index.run("r1")["status"] == "running"  # the index keeps what was recorded; readers check
    run = store.finish_crashed(store.resolve("r1"), "file:///t/storbench-r1")
    assert run.status == "crashed" and run.manifest["status"] == "crashed" and run.finished
    assert run.manifest["cleanup"]["removed"] == "file:///t/storbench-r1"
    assert run.manifest["errors"][-1]["error"].startswith(f"the run's process (pid {2**22 + 1} on ")
    assert store.index.run("r1")["status"] == "crashed" and run.samples == []
    assert [s.value for s in store.resolve("r1").samples] == [1.0]

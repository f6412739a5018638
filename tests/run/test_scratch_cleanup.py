"""issue 38 item 8: a run names each private scratch directory it makes in its manifest as it makes it, so that
`storbench cleanup RUN` removes what a killed run left there (its job files, a secret's 0600 file), and only
directories that are still storbench's own."""

import json
import os
import tempfile
from pathlib import Path

from storbench import api
from storbench.engines import native
from storbench.results.store import ResultStore
from storbench.workloads import null
from tests.run.null_run import run_null


def test_cleanup_removes_the_scratch_a_killed_run_left_and_only_that(tmp_path, monkeypatch):
    tmp = tmp_path / "tmp"
    tmp.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(tmp))
    left = []
    run = null.NullWrite.run

    def leaves_its_scratch(self, ctx, params):  # as a SIGKILL at that moment would: made, never removed
        if not left:
            work = native._private_dir()
            (work / "job-0.json").write_text('{"cql": {"keyspace": "ks"}}')
            left.append(work)
        return run(self, ctx, params)

    monkeypatch.setattr(null.NullWrite, "run", leaves_its_scratch)
    done = run_null(tmp_path, repeat=1)
    assert done.status == "succeeded", done.errors
    (work,) = left
    assert done.manifest["scratch"] == [str(work)] and work.name.startswith("storbench-load-")

    # what the manifest names but storbench did not make (or no longer is its own) stays
    other = tmp / "users-own"
    other.mkdir(mode=0o700)
    shared = Path(tempfile.mkdtemp(prefix="storbench-shared-", dir=tmp))
    shared.chmod(0o755)
    link = tmp / "storbench-link"
    link.symlink_to(other)
    manifest_path = done.path / "manifest.json"
    manifest = json.loads(manifest_path.read_text())
    manifest["scratch"] += [str(other), str(shared), str(link), "relative/storbench-x", str(tmp / "storbench-gone")]
    manifest_path.write_text(json.dumps(manifest))

    cleaned = api.cleanup_run(done.manifest["run_id"], ResultStore(tmp_path / "home"))
    assert cleaned["scratch_removed"] == [str(work)] and not work.exists()
    assert other.is_dir() and shared.is_dir() and link.is_symlink()


def test_only_storbench_s_own_directories_are_recorded_and_removable(tmp_path):
    from storbench import scratch

    seen = []
    with scratch.recording(seen.append):
        made = scratch.make("storbench-x-", dir=tmp_path)
    after = scratch.make("storbench-y-", dir=tmp_path)
    assert seen == [str(made)] and oct(os.stat(made).st_mode & 0o777) == "0o700"
    assert scratch.ours(made) and scratch.ours(after)
    assert scratch.remove_left([str(made)]) == [str(made)] and after.is_dir()

"""file:// targets on a real temporary directory: parsing, capacity, the marked run root and its release."""

import os
from pathlib import Path

import pytest

from storbench.errors import InputError, TargetError
from storbench.targets import MARKER, TargetOptions, parse_target
from storbench.targets.file import FileTarget


def claimed(tmp_path: Path, run_id: str = "r1") -> FileTarget:
    target = parse_target(str(tmp_path / "t"))
    assert isinstance(target, FileTarget)
    assert target.claim(run_id) == f"file://{tmp_path}/t/storbench-{run_id}"
    return target


@pytest.mark.parametrize("text", ["{tmp}/t", "file://{tmp}/t", "{tmp}/t/"])
def test_plain_paths_and_file_uris(tmp_path, text):
    target = parse_target(text.replace("{tmp}", str(tmp_path)))
    assert isinstance(target, FileTarget)
    assert (target.uri, target.path) == (f"file://{tmp_path}/t", tmp_path / "t")
    assert target.local_path() == tmp_path / "t"
    assert target.facts().endpoint_url is None
    assert list(target.manifest_config()) == ["zoned"]  # the stack under the directory (storbench.telemetry.zoned)
    assert target.manifest_config()["zoned"]["summary"]


def test_relative_and_home_paths_become_absolute(monkeypatch, tmp_path):
    monkeypatch.chdir(tmp_path)
    assert parse_target("rel").uri == f"file://{tmp_path}/rel"
    assert parse_target("~/x").uri == f"file://{Path.home()}/x"


def test_bad_file_targets(tmp_path):
    (tmp_path / "afile").write_text("x")
    with pytest.raises(TargetError, match="exists and is not a directory"):
        parse_target(f"file://{tmp_path}/afile")
    with pytest.raises(InputError, match="no path; use file:///absolute/path or a directory"):
        parse_target("file://")
    with pytest.raises(
        InputError, match=r"^--replication 2: applies to cassandra:// and hdfs:// targets only; the target is file://"
    ):
        parse_target(str(tmp_path), TargetOptions(replication=2))


def test_precheck_refuses_too_little_space_and_no_write_access(tmp_path):
    target = parse_target(str(tmp_path / "deep" / "er"))
    target.precheck(1)
    with pytest.raises(TargetError, match=r"needs about .* GB for this run \(dataset and shuffle space\)"):
        target.precheck(10**18)
    if os.geteuid() != 0:  # root writes anywhere
        locked = tmp_path / "locked"
        locked.mkdir(mode=0o500)
        with pytest.raises(TargetError, match="is not writable by this user"):
            parse_target(str(locked / "x")).precheck(1)


def test_claim_marks_the_run_root_and_refuses_to_reuse_it(tmp_path):
    target = claimed(tmp_path)
    root = tmp_path / "t" / "storbench-r1"
    assert (root / MARKER).read_text() == "r1\n"
    assert target.scratch_dir() == str(root / "spark-local")
    again = parse_target(str(tmp_path / "t"))
    with pytest.raises(TargetError, match="already exists; refusing to reuse it"):
        again.claim("r1")


def test_release_deletes_only_a_root_whose_marker_names_this_run(tmp_path):
    (tmp_path / "t").mkdir()  # the user's directory (one made for the run goes, see below)
    target = claimed(tmp_path)
    root = tmp_path / "t" / "storbench-r1"
    assert not target.release(keep_data=True) and root.exists()
    (root / MARKER).write_text("someone-else\n")
    assert not target.release() and root.exists()
    (root / MARKER).write_text("r1\n")
    assert target.release() and not root.exists()
    assert (tmp_path / "t").is_dir()  # the target directory itself stays


def test_release_removes_the_missing_directories_it_made_while_empty(tmp_path):
    target = parse_target(str(tmp_path / "x" / "a" / "b"))
    target.claim("r1")
    (tmp_path / "x" / "other").mkdir()  # put there by someone else during the run
    assert target.release()
    assert not (tmp_path / "x" / "a").exists()
    assert (tmp_path / "x" / "other").is_dir()


def test_delete_size_and_evict_inside_the_run_root_only(tmp_path):
    target = claimed(tmp_path)
    data = tmp_path / "t" / "storbench-r1" / "data"
    data.mkdir()
    (data / "part-0").write_bytes(b"x" * 1000)
    (data / "part-1").write_bytes(b"y" * 24)
    assert target.size_bytes(f"file://{data}") == 1024
    assert target.evict(f"file://{data}") == 2
    outside = tmp_path / "t" / "not-ours"
    outside.mkdir()
    for uri in (f"file://{outside}", f"file://{tmp_path / 't'}", target.root_uri):
        with pytest.raises(TargetError, match="it is not below this run's root"):
            target.delete(uri)
    assert outside.exists()
    assert target.delete(f"file://{data}/part-1") and not (data / "part-1").exists()
    assert target.delete(f"file://{data}") and not data.exists()
    assert not target.delete(f"file://{data}")  # already gone


def test_flush_syncs_the_run_roots_file_system_and_says_how(tmp_path):
    target = claimed(tmp_path)
    (tmp_path / "t" / "storbench-r1" / "part-0").write_bytes(b"x" * 4096)
    assert target.flush() == "syncfs"
    target.release()
    with pytest.raises(TargetError, match=r"cannot sync .*storbench-r1 \(flush\): No such file or directory"):
        target.flush()


def test_delete_resolves_the_path_and_takes_only_this_run_s_marker(tmp_path):
    """Not another run's marked root, not '..', not through a symlink out of the root; a symlink inside the
    root is removed itself, never what it points to."""
    target = claimed(tmp_path)
    root = tmp_path / "t" / "storbench-r1"
    other = tmp_path / "t" / "storbench-r2"
    other.mkdir()
    (other / MARKER).write_text("r2\n")
    (other / "data").write_text("theirs")
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "keep").write_text("mine")
    (root / "link").symlink_to(outside)
    refused = {
        f"file://{other}/data": "it is not below this run's root",
        f"file://{root}/../storbench-r2/data": "'.' and '..' are not allowed in it",
        f"file://{root}/./link": "'.' and '..' are not allowed in it",
        f"file://{root}/link/keep": f"it resolves to {outside}/keep, outside this run's root",
    }
    for uri, why in refused.items():
        with pytest.raises(TargetError) as error:
            target.delete(uri)
        assert str(error.value) == f"refusing to delete {uri}: {why} (this run's root: {target.root_uri})"
    assert target.delete(f"file://{root}/link") and not (root / "link").is_symlink()
    assert (outside / "keep").read_text() == "mine" and (other / "data").read_text() == "theirs"
    (root / "data").mkdir()
    (root / MARKER).write_text("r2\n")  # the root's marker no longer names this run
    with pytest.raises(TargetError, match=f"the root's {MARKER} does not name run r1"):
        target.delete(f"file://{root}/data")
    assert (root / "data").is_dir()


def test_release_finishes_when_an_engine_removes_part_of_the_root_at_the_same_time(tmp_path, monkeypatch):
    """A signal stops Spark with storbench: its shutdown hook deletes its local dirs under the run root while
    the release walks it. The release still removes the root, and says so (timeout's SIGTERM, issue 25 case 8)."""
    target = claimed(tmp_path)
    root = tmp_path / "t" / "storbench-r1"
    local = root / "spark-local" / "blockmgr-1"
    local.mkdir(parents=True)
    for n in range(3):
        (local / f"shuffle-{n}").write_bytes(b"x")
    real_unlink = os.unlink

    def raced(path, *args, dir_fd=None, **kwargs):  # the engine removed the file between rmtree's listing and it
        if str(path).startswith("shuffle-"):
            real_unlink(path, *args, dir_fd=dir_fd, **kwargs)
        return real_unlink(path, *args, dir_fd=dir_fd, **kwargs)

    monkeypatch.setattr(os, "unlink", raced)
    assert target.root_state() == "ours"
    assert target.release() and not root.exists()
    assert target.root_state() == "gone"

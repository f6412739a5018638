"""mem://NAME: the in-memory target keeps the rules of every target (delete only inside its own run root)."""

import pytest

from storbench.errors import InputError, TargetError
from storbench.targets import MARKER, TargetOptions, mem, parse_target
from storbench.targets.mem import MemTarget


@pytest.fixture
def target():
    mem.VOLUMES.pop("t", None)
    target = parse_target("mem://t")
    target.claim("r1")
    yield target
    mem.VOLUMES.pop("t", None)


def test_parse_takes_a_name_and_refuses_the_rest():
    assert (
        isinstance(parse_target("mem://smoke-1/"), MemTarget) and parse_target("mem://smoke-1").uri == "mem://smoke-1"
    )
    for text in ("mem://", "mem://A", "mem://a/b"):
        with pytest.raises(InputError, match=rf"^--target '{text}': expected mem://NAME"):
            parse_target(text)
    with pytest.raises(InputError, match="^--replication 3: applies to cassandra:// and hdfs:// targets only"):
        parse_target("mem://t", TargetOptions(replication=3))


def test_claim_marks_the_root_and_refuses_to_reuse_one(target):
    assert target.root_uri == "mem://t/storbench-r1"
    assert mem.volume("t").files == {f"storbench-r1/{MARKER}": b"r1\n"}
    again = parse_target("mem://t")
    with pytest.raises(TargetError, match="storbench-r1 already exists; refusing to reuse it"):
        again.claim("r1")


def test_files_are_written_read_sized_and_deleted_inside_the_run_root(target):
    target.write("mem://t/storbench-r1/d/a", b"12345")
    target.write("mem://t/storbench-r1/d/b", b"67")
    assert target.read("mem://t/storbench-r1/d/a") == b"12345"
    assert target.size_bytes("mem://t/storbench-r1/d") == 7 and target.size_bytes("mem://t/storbench-r1/dx") == 0
    assert target.evict("mem://t/storbench-r1/d") == 0  # no page cache in front of memory
    assert target.delete("mem://t/storbench-r1/d") and not target.delete("mem://t/storbench-r1/d")
    with pytest.raises(TargetError, match="does not exist"):
        target.read("mem://t/storbench-r1/d/a")


def test_nothing_outside_a_marked_root_is_deleted(target):
    volume = mem.volume("t")
    volume.files["users/own.dat"] = b"x"
    for uri in ("mem://t/users/own.dat", "mem://t/users", "mem://t/storbench-r1", "mem://other/storbench-r1/x"):
        with pytest.raises(
            TargetError,
            match=f"^refusing to delete {uri}: it is not below this run's root "
            rf"\(this run's root: mem://t/storbench-r1\)$",
        ):
            target.delete(uri)
    assert "users/own.dat" in volume.files


def test_only_this_run_s_root_is_deleted_in_not_another_run_s_nor_through_dot_dot(target):
    """Another run's marked root is not this run's (the marker of any run among the parents used to do)."""
    volume = mem.volume("t")
    volume.files.update({f"storbench-r2/{MARKER}": b"r2\n", "storbench-r2/data": b"theirs", "users/own.dat": b"x"})
    with pytest.raises(TargetError, match="^refusing to delete mem://t/storbench-r2/data: it is not below"):
        target.delete("mem://t/storbench-r2/data")
    for uri in ("mem://t/storbench-r1/../users", "mem://t/storbench-r1/./x", "mem://t/storbench-r1/a//b"):
        with pytest.raises(TargetError, match=f"^refusing to delete {uri}: "):
            target.delete(uri)
    with pytest.raises(TargetError, match="'.' and '..' are not allowed in it"):
        target.delete("mem://t/storbench-r1/../storbench-r2/data")
    volume.files[f"storbench-r1/{MARKER}"] = b"r2\n"  # the root is no longer marked for this run
    with pytest.raises(TargetError, match=f"the root's {MARKER} does not name run r1"):
        target.delete("mem://t/storbench-r1/d")
    assert volume.files["storbench-r2/data"] == b"theirs" and volume.files["users/own.dat"] == b"x"


def test_root_state_says_what_is_left_of_the_run_root(target):
    volume = mem.volume("t")
    assert target.root_state() == "ours"
    volume.files[f"storbench-r1/{MARKER}"] = b"r2\n"
    assert target.root_state() == "other" and not target.release()
    volume.files.clear()
    assert target.root_state() == "gone"


def test_release_removes_only_a_root_whose_marker_names_this_run(target):
    volume = mem.volume("t")
    volume.files[f"storbench-r1/{MARKER}"] = b"someone-else\n"
    assert not target.release()
    assert f"storbench-r1/{MARKER}" in volume.files
    volume.files[f"storbench-r1/{MARKER}"] = b"r1\n"
    assert not target.release(keep_data=True) and volume.files
    assert target.release() and volume.files == {}


def test_capacity_is_checked_before_the_claim():
    target = parse_target("mem://t")
    target.precheck(mem.CAPACITY)
    with pytest.raises(TargetError, match="^target mem://t: needs about"):
        target.precheck(mem.CAPACITY + 1)


def test_claim_none_claims_no_root_before_or_after_the_engines(tmp_path):
    mem.VOLUMES.pop("t", None)
    target = parse_target("mem://t?claim=none")
    target.claim("r1")
    target.attach({}, 0)
    assert target.root_uri is None and mem.volume("t").files == {}
    assert target.nodes_file() is None
    mem.volume("t").nodes = tmp_path / "nodes.yaml"  # the service the volume lives on
    assert target.nodes_file() == tmp_path / "nodes.yaml"
    mem.VOLUMES.pop("t", None)

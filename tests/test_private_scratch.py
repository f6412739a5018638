"""Issue 12 item 11: scratch directories are private (mkdtemp: unpredictable, 0700, never reused).

Each test plants what another local user could have made under the old predictable name (a
directory holding a job file, or a symlink) and checks the new path is elsewhere, 0700, and that
cleanup removes only its own.
"""

import stat
import tempfile
from pathlib import Path

import pytest

from storbench.context import RunContext
from storbench.services import process
from storbench.targets.base import TargetOptions
from storbench.targets.device import DeviceTarget
from storbench.workloads import rados_bench
from storbench.workloads.fio import FioWrite

RUN_ID = "20261123-170000-abcd"


@pytest.fixture
def tmp(tmp_path, monkeypatch):
    """The temp dir every mkdtemp and gettempdir of the test uses, as TMPDIR would set it."""
    shared = tmp_path / "shared-tmp"
    shared.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(shared))
    return shared


def _ctx() -> RunContext:
    return RunContext(run_id=RUN_ID, target=None, root_uri="file:///nowhere")  # only the scratch is used


def _private(path: Path, tmp: Path) -> None:
    assert path.is_dir() and not path.is_symlink() and path.parent == tmp
    assert stat.S_IMODE(path.stat().st_mode) == 0o700


def test_fio_scratch_of_a_device_run_is_private(tmp, tmp_path):
    planted = tmp / f"storbench-fio-{RUN_ID}" / "fio-write"
    planted.mkdir(parents=True)
    (planted / "fio-write.fio").write_text("[x]\nexec_prerun=touch /tmp/owned\n")
    workload = FioWrite()
    # a device target (never opened here: only the scratch is used)
    ctx = RunContext(
        run_id=RUN_ID, target=DeviceTarget(Path("/dev/nowhere"), TargetOptions()), root_uri="device:///dev/nowhere"
    )
    workdir = workload._workdir(ctx)
    assert workdir.name == "fio-write" and workdir.parent != planted.parent
    _private(workdir.parent, tmp)
    assert workload._workdir(ctx) == workdir  # one directory for the run
    workload.cleanup(ctx, {})
    assert not workdir.parent.exists() and (planted / "fio-write.fio").exists()  # only its own is removed


@pytest.mark.parametrize("cleaner", [rados_bench.RadosBenchWrite, rados_bench.RadosBenchSeq])
def test_rados_bench_scratch_is_private(tmp, tmp_path, monkeypatch, cleaner):
    victim = tmp_path / "victim"
    victim.mkdir()
    (tmp / f"storbench-rados-{RUN_ID}").symlink_to(victim)
    workload, ctx = rados_bench.RadosBenchWrite(), _ctx()
    params = {p.name: p.default for p in workload.params}
    monkeypatch.setattr(rados_bench, "cluster_of", lambda ctx, params: rados_bench.rados.Cluster("c.conf", "p", 5))
    used = []
    monkeypatch.setattr(
        workload, "_run_rados", lambda ctx, params, cluster, record, number, scratch: used.append(scratch) or []
    )
    workload.run(ctx, params)
    workload.run(ctx, params)
    assert used[0] == used[1] and used[0].name != f"storbench-rados-{RUN_ID}"
    _private(used[0], tmp)
    ctx.state(rados_bench.RadosState).writes.clear()  # nothing was written: no pool to clean
    cleaner().cleanup(ctx, params)  # the write's or a read's cleanup, whichever comes first
    assert not used[0].exists() and victim.is_dir() and (tmp / f"storbench-rados-{RUN_ID}").is_symlink()


def test_socket_dir_of_a_long_service_path_is_private(tmp, tmp_path):
    """Ceph's admin sockets and SeaweedFS's sockets, when the service dir is too long for a socket path."""
    workdir = tmp_path / ("x" * 100) / "services" / "ceph"
    assert process.socket_dir(tmp_path / "ceph", "a.sock") == tmp_path / "ceph" / "run"  # short enough
    first, second = process.socket_dir(workdir, "a.sock"), process.socket_dir(workdir, "a.sock")
    assert first != second  # never reused, so never a name another user could have made first
    for path in (first, second):  # in /tmp itself: a long TMPDIR would be too long for a socket path as well
        _private(path, Path("/tmp"))
        path.rmdir()

"""Issue 12 items 12 and 17: fio, its layout step and TestDFSIO run under a time limit derived from the
job. That a device is re-checked (same major:minor, still blank) right before fio writes it is tested on the
lab guest's drives, as root: tests/lab/test_device_guard.py."""

import os
from pathlib import Path

import pytest

from storbench.context import RunContext
from storbench.engines import fio_job, tool
from storbench.engines.fio import FioEngine
from storbench.errors import WorkloadError
from storbench.suites import load_suite
from storbench.targets import parse_target
from storbench.workloads import get_workload
from storbench.workloads.dfsio.testdfsio import time_limit

MIB = 1 << 20


def test_timeouts_come_from_the_job():
    size_mode = fio_job.JobSpec("w", "write", "1m", "256m", numjobs=2)
    assert size_mode.timeout_s == pytest.approx(2 * 256 * MIB / 1e6 + 600)  # 1 MB/s floor + 10 min
    time_mode = fio_job.JobSpec("w", "write", "1m", "16g", numjobs=4, runtime_s=300, ramp_time_s=5)
    assert time_mode.timeout_s == 305 + 600
    layout = fio_job.JobSpec("w", "read", "1m", "256m", numjobs=2, create_only=True)
    assert layout.timeout_s == size_mode.timeout_s
    huge = fio_job.JobSpec("w", "write", "1m", "16g", numjobs=4)
    assert huge.timeout_s == 6 * 3600  # at most six hours
    assert time_limit({"files": 4, "file_size": 16_000_000}) == pytest.approx(64 + 600)


def _fio_processes(job_file: Path) -> list[int]:
    found = []
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            if str(job_file).encode() in Path(f"/proc/{pid}/cmdline").read_bytes():
                found.append(int(pid))
        except OSError:
            pass
    return found


@pytest.mark.real
def test_a_stalled_fio_run_is_killed_at_its_timeout(tmp_path, monkeypatch):
    """fio-write of 2 × 4 MiB limited to 1 MB/s per job needs over 4 s; its timeout is set to 2 s."""
    monkeypatch.setattr(tool, "MARGIN_S", 0)
    monkeypatch.setattr(tool, "FLOOR_RATE_BPS", 8 * MIB / 2)
    text = fio_job.job_text
    monkeypatch.setattr(fio_job, "job_text", lambda spec: text(spec).replace("[global]", "[global]\nrate=1m"))
    (tmp_path / "target").mkdir()
    target = parse_target(str(tmp_path / "target"))
    ctx = RunContext(run_id="t1", target=target, root_uri=str(target.claim("t1")), engines={"fio": FioEngine()})
    _, _, per = load_suite("fio-basic").resolve("tiny", {"runtime_s": "0", "size": "4m"})
    params = {**per["fio-write"], "numjobs": 2}
    workload = get_workload("fio-write")
    try:
        workload.check(ctx, params)
        with pytest.raises(WorkloadError) as failed:
            workload.run(ctx, params)
        job_file = Path(ctx.root_uri.removeprefix("file://")) / "fio-write" / "fio-write.fio"
        assert "rate=1m" in job_file.read_text()
        assert str(failed.value) == (
            "fio did not finish within its 2 s timeout on fio-write.fio; killed it (a stalled device?)"
        )
        # killed (SIGKILL) before it ended: fio writes its JSON report only when a job ends, and these needed 4 s
        assert (job_file.parent / "fio-write-1.json").read_text() == ""
        assert _fio_processes(job_file) == []  # the forked job processes too
    finally:
        target.release()

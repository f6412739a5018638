"""rados-bench's fio driver (``driver=fio``): the job file for fio's ``rados`` engine, and the check that this
fio has that engine. The workload (storbench.workloads.rados_bench) runs it and reads fio's JSON."""

from __future__ import annotations

import subprocess

from storbench.engines import fio as fio_engine
from storbench.engines import rados
from storbench.errors import EngineError


def fio_rados_job(
    name: str,
    rw: str,
    cluster: rados.Cluster,
    run_name: str,
    objects: int,
    object_size: int,
    op_size: int,
    threads: int,
    seconds: int,
    log_prefix: str,
) -> str:
    """A fio job on fio's rados engine: ``objects`` objects named ``<run_name>.<job>.<file>``."""
    lines = [
        f"; storbench {name}, driver fio (rados engine)",
        "[global]",
        "ioengine=rados",
        "clientname=admin",
        f"pool={cluster.pool}",
        f"conf={cluster.conf}",
        "busy_poll=0",
        f"touch_objects={1 if rw == 'write' else 0}",
        f"bs={op_size}",
        f"filesize={object_size}",
        f"nrfiles={objects}",
        f"size={objects * object_size}",
        "file_service_type=roundrobin",
        f"iodepth={threads}",
        "numjobs=1",
        "time_based=1",
        f"runtime={seconds}",
        f"filename_format={run_name}.$jobnum.$filenum",
        f"write_bw_log={log_prefix}",
        f"write_iops_log={log_prefix}",
        "log_avg_msec=1000",
        "per_job_logs=1",
        "",
        f"[{name}]",
        f"rw={rw}",
        "",
    ]
    return "\n".join(lines)


_FIO_RADOS: list[bool] = []  # whether this fio has the rados engine, asked once per process


def require_fio_rados_engine() -> None:
    """Raises EngineError when fio is missing, too old or built without the rados engine."""
    fio_engine.fio_version()
    if not _FIO_RADOS:
        done = subprocess.run([fio_engine.fio_binary(), "--enghelp=rados"], capture_output=True, text=True, timeout=30)
        _FIO_RADOS.append(done.returncode == 0 and "pool" in done.stdout)
    if not _FIO_RADOS[0]:
        raise EngineError("this fio has no rados engine (Debian's fio 3.33 has it); use driver=rados")

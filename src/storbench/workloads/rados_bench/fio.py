"""rados-bench's fio driver (``driver=fio``): the job file for fio's ``rados`` engine, and the check that this
fio has that engine. The workload (storbench.workloads.rados_bench) runs it and reads fio's JSON."""

from __future__ import annotations

from storbench.engines import rados
from storbench.engines.fio import FioEngine
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


def require_fio_rados_engine(fio: FioEngine) -> None:
    """Raises EngineError when fio is missing, too old or built without the rados engine."""
    fio.tool_version()
    if not fio.has_ioengine("rados"):
        raise EngineError("this fio has no rados engine (Debian's fio 3.33 has it); use driver=rados")

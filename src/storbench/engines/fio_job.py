"""What fio runs, described without an argv: a job (:class:`JobSpec`), its INI job file (:func:`job_text`) and one
run of fio (:class:`FioSpec`: the job, where its files go, its time limit), which the fio engine
(storbench.engines.fio) turns into a process."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from storbench.engines.tool import io_timeout
from storbench.units import parse_size


@dataclass
class JobSpec:
    """One fio job section (repeated numjobs times by fio itself)."""

    name: str
    rw: str  # read | write | randread | randwrite
    bs: str
    size: str  # per job
    numjobs: int = 1
    iodepth: int = 1
    ioengine: str = "libaio"
    direct: bool = True
    runtime_s: int = 0  # 0: not time based; the job ends after ``size`` bytes
    ramp_time_s: int = 0
    group_reporting: bool = True
    directory: str | None = None  # file targets: the job's files go here
    filename: str | None = None  # device targets: the raw device
    log_prefix: str | None = None  # per-second bandwidth/IOPS logs
    create_only: bool = False  # lay the files out and stop (untimed preparation)
    comments: list[str] = field(default_factory=list)
    # Zoned devices (storbench.workloads.zoned): "zbd" makes fio write at the write pointers and reset zones
    # (only inside each job's [offset, offset + size)); zonesize emulates zones on a regular file.
    zonemode: str = "none"
    zonesize: str | None = None
    max_open_zones: int = 0  # 0: fio's default (the device's own limit)
    # More job sections after this one, run beside it (each: its name and the options it sets over [global]); the
    # zoned-mixed workload's small random writes, say
    sections: list[tuple[str, dict[str, str]]] = field(default_factory=list)

    @property
    def timeout_s(self) -> float:
        """How long fio may run (storbench.engines.tool.io_timeout): runtime + ramp, or every job's size."""
        if self.runtime_s:
            return io_timeout(seconds=self.runtime_s + self.ramp_time_s)
        return io_timeout(parse_size(self.size) * self.numjobs) + self.ramp_time_s

    @property
    def output_format(self) -> str:
        # Without group reporting the aggregate percentiles come from the merged histograms; fio 3.33 counts
        # zone resets in its normal output only (fio_results.zone_resets reads them there).
        base = "json" if self.group_reporting else "json+"
        return f"{base},normal" if self.zonemode == "zbd" else base


def escape(path: str) -> str:
    return path.replace("\\", "\\\\").replace(":", "\\:")  # ':' separates file names in fio


def job_text(spec: JobSpec) -> str:
    """The INI job file for ``spec``; every option is written explicitly, nothing is left to defaults."""
    lines = [f"; {line}" for line in spec.comments]
    lines += [
        "[global]",
        f"ioengine={spec.ioengine}",
        f"direct={int(spec.direct)}",
        f"bs={spec.bs}",
        f"size={spec.size}",
        f"numjobs={spec.numjobs}",
        f"iodepth={spec.iodepth}",
        f"group_reporting={int(spec.group_reporting)}",
    ]
    if spec.filename:
        lines.append(f"filename={escape(spec.filename)}")
        if spec.numjobs > 1:
            lines.append(f"offset_increment={spec.size}")  # each job its own region of the device
    else:
        lines.append(f"directory={escape(spec.directory or '.')}")
    if spec.zonemode != "none":
        lines.append(f"zonemode={spec.zonemode}")
        lines += [f"zonesize={spec.zonesize}"] if spec.zonesize else []
        lines += [f"max_open_zones={spec.max_open_zones}"] if spec.max_open_zones else []
    if spec.ramp_time_s:
        lines.append(f"ramp_time={spec.ramp_time_s}")
    if spec.runtime_s:
        lines += [f"runtime={spec.runtime_s}", "time_based=1"]
    if spec.log_prefix and not spec.create_only:
        lines += [
            f"write_bw_log={escape(spec.log_prefix)}",
            f"write_iops_log={escape(spec.log_prefix)}",
            "log_avg_msec=1000",
            "per_job_logs=1",
        ]
    if spec.create_only:
        lines.append("create_only=1")
    lines += ["", f"[{spec.name}]", f"rw={spec.rw}", ""]
    for name, options in spec.sections:
        lines += [f"[{name}]", *(f"{key}={value}" for key, value in options.items()), ""]
    return "\n".join(lines)


@dataclass
class FioSpec:
    """One fio run: the job (storbench's JobSpec, or a job file's own text), where its files go, its time limit."""

    job: JobSpec | str
    workdir: Path  # the job file and fio's output are written here
    job_file: str  # the job file's name
    output: str  # fio's output file's name
    timeout_s: float | None = None  # None: the JobSpec's own (JobSpec.timeout_s)

    def text(self) -> str:
        return job_text(self.job) if isinstance(self.job, JobSpec) else self.job

    @property
    def output_format(self) -> str:
        return self.job.output_format if isinstance(self.job, JobSpec) else "json"

    @property
    def limit_s(self) -> float | None:
        return self.timeout_s if self.timeout_s is not None or isinstance(self.job, str) else self.job.timeout_s

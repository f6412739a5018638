"""fio workloads (papers 002 and 004): sequential and random write and read on the target.

Paper 002 ran ``fio --rw=write|read --bs=512m --numjobs=4 --iodepth=16 --direct=1
--runtime=300 --ramp_time=5 --time_based --ioengine=libaio --group_reporting`` on each
server before any software; paper 004 judged consistency by the standard deviation of
per-second throughput. storbench writes the job file itself into the run-owned
directory (or points it at a raw device), runs fio, and reports fio's own figures:

- ``fio_bw_mbps``, ``fio_iops``, ``fio_io_mb``, ``fio_runtime_s``;
- ``fio_lat_mean_ms`` (submission + completion) and ``fio_clat_p50_ms`` / ``p90`` /
  ``p99`` / ``p99_9`` (completion latency percentiles);
- ``fio_bw_stddev_mbps`` and ``fio_iops_stddev`` over fio's per-second logs, and the
  consistency figures of the per-second IOPS (``ps_iops_*``: mean, stddev, CV, min/max,
  p1/p99, stalls; see storbench.results.consistency).

Every sample carries labels ``ioengine`` and ``direct`` with what really ran, and
``fallback`` when that differs from what was asked (io_uring → libaio → psync when an
engine is missing, direct=1 → 0 when the filesystem refuses O_DIRECT), so a report
never sets unlike runs side by side in one row. Aggregate samples have no ``job``
label; with ``group_reporting=false`` each job also gets samples labelled ``job=N``.

The job text, fio's version, the I/O choice and the per-second series are kept in
``ctx.artifacts["fio"]`` (written as the run's artifacts.json); the job file and fio's JSON also
sit next to the data.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from storbench.context import RunContext
from storbench.engines import fio as fio_engine
from storbench.engines import fio_results as fio_results
from storbench.engines.fio import FioEngine
from storbench.engines.fio_job import FioSpec, JobSpec
from storbench.errors import InputError, TargetError
from storbench.results.consistency import consistency_samples
from storbench.results.metrics import metric, metric_table
from storbench.results.model import Sample
from storbench.targets.device import DeviceTarget, check_device_overwrite, device_number, device_size, same_device
from storbench.telemetry.machine import available_memory
from storbench.telemetry.zoned import zoned_device
from storbench.units import human_bytes, parse_size
from storbench.workloads.base import Workload, variant
from storbench.workloads.params import FLUSH, Param, SizeParam
from storbench.workloads.fio.zoning import refuse_plain_writes

METRIC_SECTION = 80  # where this section comes in reports (storbench.analysis.metrics)


FIO_PARAMS = (
    SizeParam("bs", str, "1m", "block size per I/O, e.g. 4k, 1m, 512m", what="a fio size"),
    Param("numjobs", int, 1, "parallel fio jobs (each with its own file or device region)", minimum=1),
    Param("iodepth", int, 16, "I/Os in flight per job (async engines)", minimum=1),
    SizeParam(
        "size",
        str,
        "256m",
        "bytes per job, e.g. 256m or 16g (a bare --scale number sets it in bytes)",
        what="a fio size",
    ),
    Param("runtime_s", int, 0, "seconds to run, time based; 0: run until each job moved its size", minimum=0),
    Param("ramp_time_s", int, 0, "seconds of I/O before measuring starts", minimum=0),
    Param(
        "ioengine",
        str,
        "libaio",
        "I/O engine; a missing one falls back io_uring → libaio → psync",
        choices=fio_engine.ENGINE_CHAIN,
    ),
    Param("direct", bool, True, "O_DIRECT (bypass the page cache); falls back to buffered where refused"),
    Param(
        "group_reporting", bool, True, "fio reports the jobs as one aggregate (paper 002); false adds per-job samples"
    ),
)

# fio's own figures for the whole job (group aggregate; papers 002, 004), MB = 10^6 bytes; samples
# carry ioengine/direct (and fallback) labels, per-job ones a job label; the per-second IOPS
# also gives the consistency figures (ps_iops_*, storbench.results.consistency).
METRICS = (
    *metric_table("""
        fio_bw_mbps     | fio bandwidth                              | MB/s | mean | higher/lower
        fio_iops        | fio IOPS                                   | IOPS | mean | higher/lower
        fio_io_mb       | fio data transferred                       | MB   | mean | more/less
        fio_runtime_s   | fio measured runtime                       | s    | mean | shorter/longer
        fio_lat_mean_ms | fio mean latency (submission + completion) | ms   | mean | lower/higher
    """),
    *(
        metric(
            f"fio_clat_{suffix}_ms", f"fio completion latency {suffix.replace('_', '.')}", "ms", "mean", "lower/higher"
        )
        for suffix in fio_results.PERCENTILES
    ),
    *metric_table("""
        # consistency (paper 004): standard deviation of fio's per-second series
        fio_bw_stddev_mbps | fio per-second bandwidth stddev | MB/s | mean | more consistent/less consistent
        fio_iops_stddev    | fio per-second IOPS stddev      | IOPS | mean | more consistent/less consistent
    """),
)

# The share of available memory fio's I/O buffers (bs × iodepth × numjobs) may take.
BUFFER_MEMORY_SHARE = 0.8


@dataclass
class FioState:
    """What the fio workloads of one run share (``ctx.state(FioState)``)."""

    device_number: int | None = None  # a device target's major:minor when first checked
    device_path: str | None = None  # the path it resolved to at the last check (fio gets this one)
    device_written: bool = False  # the run wrote the device already: later writes need no blank check
    io: dict[tuple[str, str, bool], fio_engine.IoChoice] = field(default_factory=dict)  # (workload, engine, direct)
    runs: dict[str, int] = field(default_factory=dict)  # fio runs so far per workload (numbers logs and outputs)


class _Fio(Workload):
    engine = "fio"
    schemes = ("file", "device")
    version = "1"
    params = FIO_PARAMS
    metrics = METRICS
    headline = ("fio_bw_mbps", "fio_iops", "fio_clat_p99_ms", "fio_iops_stddev")  # fio's own summary
    rw = ""

    # -- where ------------------------------------------------------------------------

    def _is_device(self, ctx: RunContext) -> bool:
        return isinstance(ctx.target, DeviceTarget)

    def _location(self, ctx: RunContext) -> str:
        """The run-owned directory (file targets) or the device (the path it resolved to when last checked)."""
        if self._is_device(ctx):
            return ctx.state(FioState).device_path or str(ctx.target_as(DeviceTarget).path)
        return ctx.root_uri.removeprefix("file://")

    def _workdir(self, ctx: RunContext) -> Path:
        """Job files, fio's output and logs: next to the data, or in the run's scratch space for a device."""
        if self._is_device(ctx):
            return ctx.scratch("fio") / self.name
        return Path(self._location(ctx)) / self.name

    # -- lifecycle --------------------------------------------------------------------

    def estimated_bytes(self, params: dict[str, Any]) -> int:
        return parse_size(params["size"]) * params["numjobs"]

    def check(self, ctx: RunContext, params: dict[str, Any]) -> None:
        super().check(ctx, params)
        if self._is_device(ctx):
            self._check_zones(ctx.target_as(DeviceTarget).path, params)
        bs = parse_size(params["bs"], name=f"{self.name}: bs", what="a fio size")
        size = parse_size(params["size"], name=f"{self.name}: size", what="a fio size")
        if size < bs:
            raise InputError(f"{self.name}: size={params['size']} per job is smaller than bs={params['bs']}")
        if params["direct"] and bs % 512:
            raise InputError(
                f"{self.name}: bs={params['bs']} is not a multiple of 512 bytes, "
                f"which direct=1 needs; use e.g. 4k or set direct=false"
            )
        buffers = bs * params["iodepth"] * params["numjobs"]
        memory = available_memory()
        if memory and buffers > memory * BUFFER_MEMORY_SHARE:
            raise InputError(
                f"{self.name}: bs {params['bs']} × iodepth {params['iodepth']} × numjobs "
                f"{params['numjobs']} needs {human_bytes(buffers)} of I/O buffers, but only "
                f"{human_bytes(memory)} of memory are available; lower bs, iodepth or numjobs"
            )
        FioEngine.of(ctx.engines).tool_version()  # fio missing or too old: fail before anything runs
        if self._is_device(ctx):
            device = ctx.target_as(DeviceTarget).path
            state = ctx.state(FioState)
            if state.device_number is None:
                state.device_number = device_number(device)[1]
            check_device_overwrite(device, ctx.allow_device_overwrite)
            capacity = device_size(device)
            if capacity is not None and size * params["numjobs"] > capacity:
                raise TargetError(
                    f"{self.name}: numjobs {params['numjobs']} × size {params['size']} is more than "
                    f"the {human_bytes(capacity)} of {device}; lower size or numjobs"
                )
        self._choice(ctx, params)  # probe now: no engine at all fails before the run starts

    def _check_zones(self, device: Path, params: dict[str, Any]) -> None:
        """A host-managed zoned device refuses writes off its write pointers: refused here, not mid-run
        (storbench.workloads.zoned writes at them with zonemode=zbd)."""
        zoned = zoned_device(Path(os.path.realpath(device)).name)
        refuse_plain_writes(self.name, self.rw, zoned, str(device), f"the zoned-{self.rw} workload (zonemode=zbd)")

    def _choice(self, ctx: RunContext, params: dict[str, Any]) -> fio_engine.IoChoice:
        """The engine/direct pair that works here, probed once per run and workload."""
        cache = ctx.state(FioState).io
        key = (self.name, params["ioengine"], params["direct"])
        if key not in cache:
            probe = FioEngine.of(ctx.engines).probe
            choice = fio_engine.resolve_io(
                params["ioengine"], params["direct"], self._location(ctx), self._is_device(ctx), probe
            )
            cache[key] = choice
            for reason in choice.reasons:
                ctx.notes.append(f"{self.name}: {reason}")
        return cache[key]

    def _spec(
        self, ctx: RunContext, params: dict[str, Any], create_only: bool = False, log_prefix: str | None = None
    ) -> JobSpec:
        choice = self._choice(ctx, params)
        comments = [f"storbench {self.name} (run {ctx.run_id})"]
        if choice.fallback:
            comments.append(
                f"fallback: {choice.fallback} (asked: ioengine={choice.requested_engine}, "
                f"direct={int(choice.requested_direct)})"
            )
        device = self._is_device(ctx)
        return JobSpec(
            name=self.name,
            rw=self.rw,
            bs=params["bs"],
            size=params["size"],
            numjobs=params["numjobs"],
            iodepth=params["iodepth"],
            ioengine=choice.engine,
            direct=choice.direct,
            runtime_s=0 if create_only else params["runtime_s"],
            ramp_time_s=0 if create_only else params["ramp_time_s"],
            group_reporting=params["group_reporting"],
            directory=None if device else self._location(ctx),
            filename=self._location(ctx) if device else None,
            log_prefix=log_prefix,
            create_only=create_only,
            comments=comments,
        )

    def prepare(self, ctx: RunContext, params: dict[str, Any]) -> None:
        """Untimed: lay out the job's files (reads need data to read; writes get their files allocated)."""
        if self._is_device(ctx):
            return  # a device is already there; laying it out would only write it once more
        workdir = self._workdir(ctx)
        workdir.mkdir(parents=True, exist_ok=True)
        spec = self._spec(ctx, params, create_only=True)
        ctx.engine(FioEngine).run(FioSpec(spec, workdir, f"{self.name}-layout.fio", f"{self.name}-layout.json"))

    def _recheck_device(self, ctx: RunContext) -> None:
        """Right before fio starts: the target still resolves to the device checked first (same major:minor),
        and before the run's first write to it, that device is still blank; fio gets the resolved path."""
        state = ctx.state(FioState)
        assert state.device_number is not None, "check() records the device first"
        resolved = same_device(ctx.target_as(DeviceTarget).path, state.device_number)
        if self.rw.endswith("write") and not state.device_written:
            check_device_overwrite(resolved, ctx.allow_device_overwrite)
            state.device_written = True
        state.device_path = str(resolved)

    def run(self, ctx: RunContext, params: dict[str, Any]) -> list[Sample]:
        engine = ctx.engine(FioEngine)
        version = engine.tool_version()
        if self._is_device(ctx):
            self._recheck_device(ctx)
        runs = ctx.state(FioState).runs
        number = runs[self.name] = runs.get(self.name, 0) + 1
        workdir = self._workdir(ctx)
        workdir.mkdir(parents=True, exist_ok=True)
        logs = workdir / f"logs-{number}"
        logs.mkdir(exist_ok=True)
        spec = self._spec(ctx, params, log_prefix=str(logs / self.name))
        (workdir / "fio-version.txt").write_text(version + "\n")
        with ctx.measure():
            done = engine.run(FioSpec(spec, workdir, f"{self.name}.fio", f"{self.name}-{number}.json"))
        result = fio_results.parse_fio_json(done.data)
        bw_series = fio_results.read_log_series(str(logs / self.name), "bw")
        iops_series = fio_results.read_log_series(str(logs / self.name), "iops")
        choice = self._choice(ctx, params)
        self._keep(ctx, version, done.job_text, choice, number, done, bw_series, iops_series)
        return self._samples(result, choice.labels(), bw_series, iops_series, done)

    def _samples(
        self,
        result: fio_results.FioResult,
        labels: dict[str, str],
        bw: dict[str, list[float]],
        iops: dict[str, list[float]],
        done: fio_engine.FioRun,
    ) -> list[Sample]:
        """What one fio run reports (storbench.workloads.zoned reports the paper's figures instead)."""
        return samples_for(self.name, result, labels, bw, iops)

    def _keep(
        self,
        ctx: RunContext,
        version: str,
        text: str,
        choice: fio_engine.IoChoice,
        number: int,
        done: fio_engine.FioRun,
        bw: dict[str, list[float]],
        iops: dict[str, list[float]],
    ) -> None:
        record = ctx.artifacts.setdefault("fio", {"version": version, "workloads": {}})
        entry = record["workloads"].setdefault(self.name, {"job_file": text, "io": choice.to_dict(), "runs": []})
        entry["job_file"] = text
        entry["runs"].append(
            {
                "run": number,
                "fio_wall_s": round(done.wall_s, 6),
                "per_second": {"bw_mbps": bw, "iops": iops},
                "fio_json": done.data,
            }
        )

    def cleanup(self, ctx: RunContext, params: dict[str, Any]) -> None:
        """The data files go with the run root (the runner removes it); device runs leave only scratch."""
        if self._is_device(ctx):
            ctx.drop_scratch("fio")


def _value(value: float | None) -> float | None:
    return value if fio_results.is_finite(value) else None


def direction_samples(workload: str, stats: fio_results.DirectionStats, labels: dict[str, str]) -> list[Sample]:
    samples = [
        Sample(workload, "fio_bw_mbps", stats.bw_bytes / 1e6, "MB/s", labels=labels),
        Sample(workload, "fio_iops", stats.iops, "IOPS", labels=labels),
        Sample(workload, "fio_io_mb", stats.io_bytes / 1e6, "MB", labels=labels),
        Sample(workload, "fio_runtime_s", stats.runtime_ms / 1000, "s", labels=labels),
        Sample(
            workload,
            "fio_lat_mean_ms",
            _value(stats.lat_mean_ns / 1e6 if stats.lat_mean_ns is not None else None),
            "ms",
            labels=labels,
        ),
    ]
    for suffix, percentile in fio_results.PERCENTILES.items():
        samples.append(
            Sample(workload, f"fio_clat_{suffix}_ms", _value(stats.percentile_ms(percentile)), "ms", labels=labels)
        )
    return samples


def samples_for(
    workload: str,
    result: fio_results.FioResult,
    labels: dict[str, str],
    bw_series: dict[str, list[float]] | None = None,
    iops_series: dict[str, list[float]] | None = None,
) -> list[Sample]:
    """fio's figures as samples: the aggregate, per job when fio reported jobs separately, per-second spread."""
    aggregate = result.aggregate()
    several = len(aggregate) > 1  # mixed read/write: say which direction
    samples: list[Sample] = []
    for direction, stats in aggregate.items():
        tagged = {**labels, "dir": direction} if several else dict(labels)
        samples += direction_samples(workload, stats, tagged)
        bw = (bw_series or {}).get(direction, [])
        iops = (iops_series or {}).get(direction, [])
        samples.append(
            Sample(
                workload,
                "fio_bw_stddev_mbps",
                _value(fio_results.stddev(bw)),
                "MB/s",
                labels={**tagged, "interval_s": "1"},
            )
        )
        samples.append(
            Sample(
                workload,
                "fio_iops_stddev",
                _value(fio_results.stddev(iops)),
                "IOPS",
                labels={**tagged, "interval_s": "1"},
            )
        )
        if iops_series is not None:  # paper 004's consistency figures, as for every per-second series
            samples += consistency_samples(workload, "iops", iops, tagged)
    if not result.grouped and len(result.jobs) > 1:
        for index, job in enumerate(result.jobs):
            for direction, stats in job.directions.items():
                tagged = {**labels, "job": str(index)}
                if several:
                    tagged["dir"] = direction
                samples += direction_samples(workload, stats, tagged)
    return samples


FioWrite = variant(
    _Fio, "fio-write", "fio sequential write (paper 002's raw device test)", rw="write", params=FIO_PARAMS + (FLUSH,)
)
FioRead = variant(_Fio, "fio-read", "fio sequential read of files laid out untimed first (paper 002)", rw="read")
FioRandWrite = variant(_Fio, "fio-randwrite", "fio random write", rw="randwrite", params=FIO_PARAMS + (FLUSH,))
FioRandRead = variant(_Fio, "fio-randread", "fio random read of files laid out untimed first", rw="randread")

__all__ = ["FIO_PARAMS", "FioRandRead", "FioRandWrite", "FioRead", "FioWrite", "samples_for"]

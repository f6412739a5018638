"""Zoned drives (paper 004): fio on SMR/ZNS devices and on the stacks over them, in the paper's figures.

Paper 004 sets host-managed SMR drives behind a log-structured layer against conventional drives under
ext4/XFS: 4 MB writes with 16 in flight for 1800 s, reported as the average IOPS and the standard
deviation of the per-second IOPS ("58% higher average IOPS", "10× better consistency"), then reads
of what was written, as the average throughput over three runs. These workloads run those shapes with
fio on any local target:

- a raw zoned device (``--target /dev/nvme0n1``): ``zonemode=zbd``, so fio writes at the write pointers,
  resets zones when a time-based write wraps (counted: ``zoned_zone_resets``, from fio's own report) and
  keeps at most ``max_open_zones`` open (the device's limit unless a lower one is asked);
- a file system over a zoned device (btrfs zoned, f2fs: the log-structured layer), a conventional device
  or a directory: plain fio files, the file system handling any zones (``zone_size`` makes fio emulate
  zones on the files instead);
- a file system only, ``zoned-mixed``: the large writes with small random writes in flight beside them (paper
  004's OSD: objects and their metadata), where a layer that turns small random writes into appends can win.

Zone resets destroy data. A raw device gets the fio workloads' guards (--allow-device-overwrite, the
blank check, the re-check before the first write). Each job's region is whole zones from the device's
start (``size`` rounded up to zones; fio's ``offset_increment``), and fio's zbd mode resets only zones
inside a job's region, so a run claims the zones ``[0, numjobs × size)``; the zones after them are read
(BLKREPORTZONE) before and after every fio run and must be unchanged, or the run fails.
Refused before anything starts, in one line (:func:`plan_zoning`): writes to a host-managed device without
zbd, a block size that is not a multiple of its logical block (O_DIRECT) or does not divide its zones,
buffered writes to it, more open zones than it allows, and zbd where there are no zones and no zone_size.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from storbench.context import RunContext
from storbench.engines import fio as fio_engine
from storbench.engines import fio_results
from storbench.engines.fio_job import JobSpec
from storbench.errors import TargetError, WorkloadError
from storbench.results.metrics import metric_table
from storbench.results.model import Sample
from storbench.targets.device import DeviceTarget, device_size
from storbench.telemetry.zoned import Zone, ZonedDevice, all_zones, size_text, zoned_device
from storbench.units import parse_size
from storbench.workloads.base import variant
from storbench.workloads.fio import FIO_PARAMS, _Fio
from storbench.workloads.fio.zoning import WRITES, Zoning, changed_zones, plan_zoning
from storbench.workloads.params import FLUSH, Param, SizeParam

METRIC_SECTION = 0  # where this section comes in reports (storbench.analysis.metrics)

ZONED_PARAMS = FIO_PARAMS + (
    Param(
        "zonemode",
        str,
        "auto",
        "zbd: fio writes at the write pointers and resets zones; none: plain I/O; "
        "auto: zbd on a zoned raw device (and for writes with zone_size), none elsewhere",
        choices=("auto", "zbd", "none"),
    ),
    SizeParam(
        "zone_size",
        str,
        "",
        "zones fio emulates with zbd where the target has none, e.g. 64m",
        empty="no emulated zones",
        what="a fio size",
    ),
    Param("max_open_zones", int, 0, "zones open at once with zbd; 0: the device's max_open_zones", minimum=0),
)

# Paper 004's figures in its words; a write pass reports IOPS and their spread, a read pass throughput.
METRICS = metric_table("""
    zoned_avg_iops       | average IOPS              | IOPS   | mean | higher/lower | words-first
    zoned_iops_stddev    | IOPS standard deviation   | IOPS   | mean | lower/higher | words-first factor
    zoned_write_p99_ms   | p99 write latency         | ms     | mean | lower/higher | words-first
    zoned_write_p99_9_ms | p99.9 write latency       | ms     | mean | lower/higher | words-first
    zoned_write_mbps     | average write throughput  | MB/s   | mean | higher/lower | words-first
    zoned_zone_resets    | zone resets               | resets | mean | fewer/more   | words-first
    zoned_read_mbps      | average read throughput   | MB/s   | mean | higher/lower | words-first
    zoned_read_iops      | average read IOPS         | IOPS   | mean | higher/lower | words-first
    zoned_read_p99_ms    | p99 read latency          | ms     | mean | lower/higher | words-first
    zoned_read_p99_9_ms  | p99.9 read latency        | ms     | mean | lower/higher | words-first
    zoned_large_iops     | 4 MiB write IOPS          | IOPS   | mean | higher/lower | words-first
    zoned_small_iops     | small random write IOPS   | IOPS   | mean | higher/lower | words-first
""")


class _Zoned(_Fio):
    params = ZONED_PARAMS
    metrics = METRICS
    # paper 004's: average IOPS and the standard deviation of the per-second IOPS (a read pass: its rate)
    headline = ("zoned_avg_iops", "zoned_iops_stddev", "zoned_read_iops", "zoned_read_mbps")

    def _device(self, ctx: RunContext) -> ZonedDevice | None:
        if not self._is_device(ctx):
            return None
        return zoned_device(Path(os.path.realpath(ctx.target_as(DeviceTarget).path)).name)

    def _zoning(self, ctx: RunContext, params: dict[str, Any]) -> tuple[Zoning, list[str]]:
        if self._is_device(ctx):
            where = str(ctx.target_as(DeviceTarget).path)
        else:
            where = f"the directory {ctx.target.local_path() or ctx.target.uri}"
        return plan_zoning(self.name, self.rw, params, self._device(ctx), where)

    def _check_zones(self, device: Path, params: dict[str, Any]) -> None:
        """plan_zoning decided already (check, before the fio checks)."""

    def estimated_bytes(self, params: dict[str, Any]) -> int:
        size, zone = parse_size(params["size"]), parse_size(params["zone_size"] or params["size"])
        return -(-size // zone) * zone * params["numjobs"]

    def check(self, ctx: RunContext, params: dict[str, Any]) -> None:
        zoning, notes = self._zoning(ctx, params)  # the zoned refusals first: they say more than fio's
        super().check(ctx, {**params, "size": str(zoning.job_bytes)})
        ctx.notes.extend(f"{self.name}: {note}" for note in notes)
        if self._is_device(ctx) and zoning.mode == "zbd":
            device = ctx.target_as(DeviceTarget).path
            capacity = device_size(device)
            if capacity is not None and zoning.job_bytes * params["numjobs"] > capacity:
                raise TargetError(
                    f"{self.name}: numjobs {params['numjobs']} × {size_text(zoning.job_bytes)} of "
                    f"whole zones is more than the {size_text(capacity)} of {device}"
                )

    def _spec(
        self, ctx: RunContext, params: dict[str, Any], create_only: bool = False, log_prefix: str | None = None
    ) -> JobSpec:
        zoning, _ = self._zoning(ctx, params)
        spec = super()._spec(ctx, {**params, "size": str(zoning.job_bytes)}, create_only, log_prefix)
        if zoning.mode == "zbd" and not create_only:  # the layout writes plain files; zones start with the job
            spec.zonemode, spec.max_open_zones = "zbd", zoning.max_open
            spec.zonesize = str(zoning.zone_size) if zoning.emulated else None
            spec.comments.append(
                f"claimed: bytes [0, {zoning.job_bytes * params['numjobs']}) in zones of "
                f"{size_text(zoning.zone_size)}; fio's zbd mode resets only zones inside a "
                f"job's [offset, offset + size)"
            )
        return spec

    def _zones_after(self, ctx: RunContext, params: dict[str, Any], zoning: Zoning) -> tuple[int, list[Zone]] | None:
        """The zones after the claimed range of a zoned raw device, and where that range ends (in sectors);
        None elsewhere, or where they cannot be read (a note says so)."""
        if zoning.mode != "zbd" or zoning.emulated or not self._is_device(ctx):
            return None
        path = os.path.realpath(ctx.target_as(DeviceTarget).path)
        end = zoning.job_bytes * params["numjobs"] // 512
        try:
            return end, [zone for zone in all_zones(path, (device_size(Path(path)) or 0) // 512) if zone.start >= end]
        except OSError as exc:
            ctx.notes.append(
                f"{self.name}: the zones outside the claimed range of {path} could not be read "
                f"({exc.strerror}); fio's own range limit alone kept them"
            )
            return None

    def run(self, ctx: RunContext, params: dict[str, Any]) -> list[Sample]:
        zoning, _ = self._zoning(ctx, params)
        before = self._zones_after(ctx, params, zoning)
        samples = super().run(ctx, params)
        after = self._zones_after(ctx, params, zoning) if before else None
        moved = changed_zones(before[1], after[1]) if before and after else []
        if moved:
            raise WorkloadError(
                f"{self.name}: {len(moved)} zone(s) of {ctx.target_as(DeviceTarget).path} after "
                f"the claimed range (from sector {before[0]}) changed, the first at sector "
                f"{moved[0].start}; the run must not touch them"
            )
        choice = self._choice(ctx, params)
        ctx.window.rules["io"] = f"{choice.engine}, direct={int(choice.direct)}"
        return samples

    def _samples(
        self,
        result: fio_results.FioResult,
        labels: dict[str, str],
        bw: dict[str, list[float]],
        iops: dict[str, list[float]],
        done: fio_engine.FioRun,
    ) -> list[Sample]:
        """The paper's figures, unlabelled so compare can make headlines of them (the I/O engine and direct
        flag are the window's rules instead); fio's whole JSON and per-second series stay in artifacts."""
        moved = [(d, stats) for d, stats in result.aggregate().items() if stats.io_bytes]
        if not moved:  # zbd reads stop at the write pointers: empty zones give nothing to read
            raise WorkloadError(
                f"{self.name}: fio moved no data ({done.output_path.name}); on a zoned device "
                f"reads find only what was written: run zoned-write first, as zoned-004 does"
            )
        direction, stats = moved[0]  # one direction per zoned workload
        p99, p99_9 = stats.percentile_ms(99.0), stats.percentile_ms(99.9)
        if self.rw in WRITES:
            values = [
                ("zoned_avg_iops", stats.iops, "IOPS"),
                ("zoned_iops_stddev", fio_results.stddev(iops.get(direction, [])), "IOPS"),
                ("zoned_write_p99_ms", p99, "ms"),
                ("zoned_write_p99_9_ms", p99_9, "ms"),
                ("zoned_write_mbps", stats.bw_bytes / 1e6, "MB/s"),
            ]
            resets = fio_results.zone_resets(done.output_path.read_text()) if done.output_path.exists() else None
            if resets is not None:  # zbd only: fio's normal output is asked for then
                values.append(("zoned_zone_resets", float(resets), "resets"))
        else:
            values = [
                ("zoned_read_mbps", stats.bw_bytes / 1e6, "MB/s"),
                ("zoned_read_iops", stats.iops, "IOPS"),
                ("zoned_read_p99_ms", p99, "ms"),
                ("zoned_read_p99_9_ms", p99_9, "ms"),
            ]
        return [
            Sample(self.name, metric, value if fio_results.is_finite(value) else None, unit)
            for metric, value, unit in values
        ]


class _ZonedMixed(_Zoned):
    """Paper 004's OSD writes large objects and, beside them, small metadata: the large writes (``bs``, ``iodepth``
    in flight, O_DIRECT) run with a second job of small random writes (``small_bs``, buffered, fsync after every
    ``small_fsync``) in flight together. Where each operation costs a seek (a hard drive, or the lab's model of
    one), a layer that turns the small random writes into sequential appends (f2fs, btrfs zoned) spends fewer
    operations on them than one that writes them in place (ext4): the mix's IOPS say which."""

    headline = ("zoned_avg_iops", "zoned_iops_stddev", "zoned_large_iops", "zoned_small_iops")

    def check(self, ctx: RunContext, params: dict[str, Any]) -> None:
        if self._is_device(ctx):
            raise TargetError(
                f"{self.name}: {ctx.target_as(DeviceTarget).path} is a raw device; the mix measures the file "
                f"system over it (mount one and give its directory), or run zoned-write on the device"
            )
        super().check(ctx, params)

    def _spec(
        self, ctx: RunContext, params: dict[str, Any], create_only: bool = False, log_prefix: str | None = None
    ) -> JobSpec:
        spec = super()._spec(ctx, params, create_only, log_prefix)
        small = {"rw": "randwrite", "bs": params["small_bs"], "ioengine": "psync", "iodepth": "1", "direct": "0"}
        small |= {"fsync": str(params["small_fsync"]), "new_group": "1"}  # its own group: fio reports it apart
        spec.sections.append(("small", small))
        return spec

    def _samples(
        self,
        result: fio_results.FioResult,
        labels: dict[str, str],
        bw: dict[str, list[float]],
        iops: dict[str, list[float]],
        done: fio_engine.FioRun,
    ) -> list[Sample]:
        """The paper's figures over the whole mix (its IOPS, and the spread of its per-second IOPS), and each
        job's IOPS: the large writes' (the rate a benchmark of large objects would see) and the small ones'."""
        by_job = {job.name: job.directions.get("write") for job in result.jobs}
        large, small = by_job.get(self.name), by_job.get("small")
        latency = {
            "zoned_write_p99_ms": 99.0,
            "zoned_write_p99_9_ms": 99.9,
        }  # the large writes' (the groups' merge has none)
        samples = [
            Sample(s.workload, s.metric, large.percentile_ms(latency[s.metric]) if large else None, s.unit)
            if s.metric in latency
            else s
            for s in super()._samples(result, labels, bw, iops, done)
        ]
        for metric, stats in (("zoned_large_iops", large), ("zoned_small_iops", small)):
            samples.append(Sample(self.name, metric, stats.iops if stats else None, "IOPS"))
        return samples


MIXED_PARAMS = ZONED_PARAMS + (
    FLUSH,
    SizeParam("small_bs", str, "4k", "the small random writes' block size", what="a fio size"),
    Param("small_fsync", int, 256, "the small writes are synced after every N of them (0: never)", minimum=0),
)

ZonedWrite = variant(
    _Zoned,
    "zoned-write",
    "sequential writes on a zoned device (zbd) or any stack (paper 004)",
    rw="write",
    params=ZONED_PARAMS + (FLUSH,),
)
ZonedRead = variant(
    _Zoned, "zoned-read", "sequential reads of what zoned-write wrote, or of files laid out first", rw="read"
)
ZonedRandWrite = variant(
    _Zoned,
    "zoned-randwrite",
    "random writes, at the write pointers on a zoned device (zbd)",
    rw="randwrite",
    params=ZONED_PARAMS + (FLUSH,),
)
ZonedRandRead = variant(_Zoned, "zoned-randread", "random reads on a zoned device (zbd) or any stack", rw="randread")
ZonedMixed = variant(
    _ZonedMixed,
    "zoned-mixed",
    "large sequential writes with small random writes in flight together, on a file system (paper 004's mix)",
    rw="write",
    params=MIXED_PARAMS,
)

__all__ = [
    "ZONED_PARAMS",
    "ZonedMixed",
    "ZonedRandRead",
    "ZonedRandWrite",
    "ZonedRead",
    "ZonedWrite",
    "Zoning",
    "plan_zoning",
]

"""What a fio job may do on a zoned device, decided before anything starts (pure: no process, no device).

:func:`plan_zoning` is the zoned workloads' (storbench.workloads.zoned) whole decision: fio's zone mode,
each job's region in whole zones, the open-zone limit, and a one-line InputError (what, where, what is
allowed) for a job the device cannot take. :func:`refuse_plain_writes` is the part the plain fio workloads
need: a host-managed device rejects writes off its write pointers, so they are refused up front rather
than failing in the middle of a run.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from storbench.errors import InputError
from storbench.telemetry.zoned import Zone, ZonedDevice, size_text
from storbench.units import parse_size

WRITES = {"write": "sequential writes", "randwrite": "random writes"}


def refuse_plain_writes(name: str, rw: str, device: ZonedDevice, where: str, allowed: str) -> None:
    """Writes that are not at the write pointers (fio without zonemode=zbd) on a host-managed device."""
    if device.model == "host-managed" and rw in WRITES:
        raise InputError(
            f"{name}: {where} ({device.facts()}) is host-managed: {WRITES[rw]} without zonemode=zbd "
            f"miss the write pointers and the device refuses them; allowed: {allowed}"
        )


@dataclass(frozen=True)
class Zoning:
    """How one workload meets the zones: fio's zone mode, the zone size (real or emulated), each job's region."""

    mode: str  # "zbd" or "none"
    zone_size: int | None  # bytes
    emulated: bool  # zones fio emulates on a target without them (zone_size)
    job_bytes: int  # each job's region; whole zones under zbd
    max_open: int  # 0: fio's default


def plan_zoning(
    name: str, rw: str, params: dict[str, Any], device: ZonedDevice | None, where: str
) -> tuple[Zoning, list[str]]:
    """The zoning of a job on ``where`` (``device``: a raw target's zoned model), and notes; InputError (one
    line: what, where, what is allowed) for a job the device cannot take."""
    bs, size = parse_size(params["bs"]), parse_size(params["size"])
    zoned = device is not None and device.zoned
    writes = rw in WRITES
    if zoned:
        assert device is not None
        if params["zonemode"] == "none":
            refuse_plain_writes(name, rw, device, where, "zonemode=zbd or auto")
        block = device.logical_block or 512
        if params["direct"] and bs % block:
            raise InputError(
                f"{name}: bs={params['bs']} is not a multiple of the {block}-byte logical block of "
                f"{where}, which O_DIRECT needs; allowed: a multiple of {block}, e.g. 4m"
            )
        if writes and not params["direct"]:
            raise InputError(
                f"{name}: buffered writes (direct=false) reach the zoned {where} out of order; allowed: direct=true"
            )
        if params["zone_size"] and parse_size(params["zone_size"]) != device.zone_size:
            raise InputError(
                f"{name}: zone_size={params['zone_size']} on {where}, whose zones are "
                f"{size_text(device.zone_size)}; allowed: zone_size empty (the device's own)"
            )
        limit = device.max_open_zones or 0
        if limit and params["max_open_zones"] > limit:
            raise InputError(
                f"{name}: max_open_zones={params['max_open_zones']} is more than the {limit} "
                f"{where} allows; allowed: 1 to {limit}, or 0 for {limit}"
            )
    zone = device.zone_size if zoned and device else (parse_size(params["zone_size"]) if params["zone_size"] else None)
    mode = params["zonemode"]
    if mode == "auto":  # fio's emulated zones start empty each run: reads would find nothing written in them
        mode = "zbd" if zoned or (zone and writes) else "none"
    if mode == "none":
        return Zoning("none", zone, False, size, 0), []
    if not zone:
        raise InputError(
            f"{name}: zonemode=zbd needs zones and {where} has none; allowed: zone_size=64m (fio "
            f"then emulates zones of that size), or zonemode=auto"
        )
    if not zoned and not writes:
        raise InputError(
            f"{name}: zonemode=zbd reads on zones fio emulates on {where} find nothing (they start "
            f"empty each run); allowed: zonemode=auto or none"
        )
    if zone % bs:
        raise InputError(
            f"{name}: bs={params['bs']} does not divide the {size_text(zone)} zones of {where}, so "
            f"I/O would straddle zones; allowed: a block size that divides {size_text(zone)}"
        )
    job_bytes = -(-size // zone) * zone
    notes = (
        []
        if job_bytes == size
        else [
            f"size {params['size']} per job is rounded up to {job_bytes // zone} "
            f"whole zone(s) of {size_text(zone)} on {where}"
        ]
    )
    max_open = params["max_open_zones"] or (device.max_open_zones or 0 if zoned and device else 0)
    return Zoning("zbd", zone, not zoned, job_bytes, max_open), notes


def changed_zones(before: list[Zone], after: list[Zone]) -> list[Zone]:
    """Zones whose write pointer or condition moved between two reports (the zones a run must not touch)."""
    now = {zone.start: zone for zone in after}
    return [zone for zone in before if now.get(zone.start) != zone]

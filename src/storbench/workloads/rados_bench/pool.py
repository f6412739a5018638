"""What the rados-bench workloads know of their pool: its parameters and sizes, the cluster a target names, what
one run wrote there (RadosState) and which objects are the run's own."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from storbench.context import RunContext
from storbench.engines import rados
from storbench.errors import InputError
from storbench.targets.rados import RadosTarget
from storbench.units import parse_size
from storbench.workloads.params import Param, SizeParam


FILL_SHARE = 0.6  # of the pool's MAX AVAIL one write may take
BUFFER_MEMORY_SHARE = 0.8
GRACE_S = 60  # on top of duration and op timeout before a command is killed
DRIVERS = ("rados", "fio")


PARAMS = (
    SizeParam("object_size", str, "4m", "object size (rados bench -O), e.g. 4m"),
    SizeParam("op_size", str, "", "bytes per write (rados bench -b); empty: the object size", empty="the object size"),
    Param("threads", int, 16, "concurrent operations (rados bench -t, fio iodepth)", minimum=1),
    Param("duration_s", int, 60, "seconds each phase runs (a seq read also ends when it read everything)", minimum=1),
    Param("pool", str, "", "pool to use; empty: the target's (rados://POOL)"),
    Param("driver", str, "rados", "rados: `rados bench`; fio: fio's rados engine on the same pool", choices=DRIVERS),
    Param("op_timeout_s", int, 60, "an operation slower than this fails the phase (stopped OSD, full pool)", minimum=5),
    Param("fio_objects", int, 256, "driver=fio: objects written and re-read (each object_size)", minimum=1),
)


def sizes(params: dict[str, Any]) -> tuple[int, int]:
    """(object size, op size) in bytes."""
    object_size = parse_size(params["object_size"])
    return object_size, parse_size(params["op_size"]) if params["op_size"] else object_size


def cluster_of(ctx: RunContext, params: dict[str, Any]) -> rados.Cluster:
    """The pool (the target's unless ``pool`` is set) and the cluster's conf of this run."""
    target = ctx.target_as(RadosTarget)
    return rados.Cluster(target.conf(), params["pool"] or target.pool, params["op_timeout_s"])


@dataclass
class RadosState:
    """What the rados-bench workloads of a run share (``ctx.state(RadosState)``). A write is a dict (run_name,
    driver, conf, pool, prefix, complete, objects, object_size, max_objects, removed: see :func:`owned`)."""

    writes: list[dict[str, Any]] = field(default_factory=list)  # every write, recorded before it writes
    last: dict[str, Any] | None = None  # the last complete write: what the reads read
    runs: dict[str, int] = field(default_factory=dict)  # runs so far per workload (numbers names and files)
    limits: dict[tuple[str, str], dict[str, int | None]] = field(default_factory=dict)  # OSD limits by (conf, pool)


def left_behind(write: dict[str, Any]) -> str:
    """The names of what ``write`` wrote, as a pattern for the user."""
    if write["driver"] == "rados" and write.get("prefix"):
        return f"{write['prefix']}_object* and {write['run_name']}"
    return f"{write['run_name']}*"


def owned(write: dict[str, Any], name: str) -> bool:
    """Whether object ``name`` was written by ``write`` (its metadata, its rados bench objects or fio's)."""
    if name == write["run_name"]:
        return True
    if write["driver"] == "fio":
        return re.fullmatch(re.escape(write["run_name"]) + r"\.\d+\.\d+", name) is not None
    prefix = write.get("prefix")
    if not prefix:
        return False
    match = re.fullmatch(re.escape(prefix) + r"_object(\d+)", name)
    if not match:
        return False
    # A finished write made exactly objects 0..N-1; a cut-off one is bounded by the listing only.
    return write.get("objects") is None or int(match.group(1)) < write["objects"]


def probe_pool(cluster: rados.Cluster) -> dict[str, int | None]:
    pools = cluster.pools()
    if cluster.pool not in pools:
        raise InputError(
            f"pool {cluster.pool!r} does not exist on the Ceph cluster of {cluster.conf}; storbench "
            f"does not create pools: create it (ceph osd pool create {cluster.pool}) or use one of: "
            f"{', '.join(pools) or 'none'}"
        )
    max_write = cluster.osd_limit("osd_max_write_size")  # MiB
    return {
        "max_object_size": cluster.osd_limit("osd_max_object_size"),
        "max_write_size": max_write * 2**20 if max_write else None,
    }

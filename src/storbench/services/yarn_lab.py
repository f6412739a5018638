"""Where ``services up yarn``'s NodeManagers run: on loopback (127.0.0.K, free ports, everything under the service
dir) or, with ``--lab-cluster``, NodeManager K in lab host node-K (storbench.lab.placement).

In a lab host a NodeManager runs in the host's network namespace (``ip netns exec``) and cgroup (joined before
exec), so every container it launches (Spark's executors and ApplicationMaster, MapReduce's tasks: its children)
runs there too: they bind the host's address, talk to the ResourceManager and the driver over the host's link,
and their writes are charged to the host's disk throttle. The NodeManager's local dirs (containers' working dirs,
Spark's shuffle, MapReduce's spills) are on the host's own disk, in a ``storbench-yarn`` folder this module makes
and marks as the service's; its conf and its containers' logs stay in the service dir on this machine's disk, so
that what the host's device writes is the workload's. The node's telemetry is the host's own exporter.
"""

from __future__ import annotations

import os
import shutil
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from storbench.errors import InputError
from storbench.services.ports import free_port

# a lab host has a network stack of its own: Hadoop's usual NodeManager ports, the same on every host
LAB_PORTS = {"nm": 8041, "localizer": 8040, "nm_web": 8042, "collector": 8048, "shuffle": 13562}
LAB_ROOT = "storbench-yarn"  # the NodeManager's folder on its lab host's disk
OWNED = ".storbench-yarn-nodemanager"  # in that folder; names the service dir that made it


@dataclass(frozen=True)
class NodePlace:
    host: str
    ports: dict[str, int]
    local_dir: Path
    owned_root: Path | None  # the folder made in a lab host's mount (removed by down)


def _owns(workdir: Path, root: Path) -> bool:
    try:
        return not root.is_symlink() and (root / OWNED).read_text().strip() == str(workdir)
    except OSError:
        return False


def check_roots(workdir: Path, placement: Any, nodes: int) -> None:
    """Before anything is made: no lab host's ``storbench-yarn`` folder is someone else's."""
    for index in range(1, nodes + 1):
        base = placement.data_root(index)
        if base is not None and os.path.lexists(base / LAB_ROOT) and not _owns(workdir, base / LAB_ROOT):
            raise InputError(f"--lab-cluster: {base / LAB_ROOT} exists and was not made by storbench for {workdir}")


def place(workdir: Path, placement: Any, index: int) -> NodePlace:
    """NodeManager ``index``'s address, ports and local dir, the dir made (a lab host's fresh and marked ours)."""
    base = placement.data_root(index)
    if base is None:
        host = placement.address(index)
        ports = {name: free_port(host) for name in ("nm", "localizer", "nm_web", "collector")}
        ports["shuffle"] = free_port("0.0.0.0")  # MapReduce's ShuffleHandler binds every address (no bind-host)
        local = workdir / f"nm-{index}" / "local"
        local.mkdir(parents=True)
        return NodePlace(host, ports, local, None)
    root = base / LAB_ROOT
    shutil.rmtree(root, ignore_errors=True)  # ours (check_roots) from a stopped service
    (root / "local").mkdir(parents=True)
    (root / OWNED).write_text(f"{workdir}\n")
    return NodePlace(placement.address(index), dict(LAB_PORTS), root / "local", root)


def remove_roots(state: dict[str, Any]) -> None:
    """The folders made in lab hosts' mounts, each only while its marker names this service dir."""
    workdir = Path(state["workdir"])
    for root in map(Path, state.get("owned_roots", [])):
        if _owns(workdir, root):
            shutil.rmtree(root, ignore_errors=True)

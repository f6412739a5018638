"""A lab cluster as a service's placement (``services up NAME --lab-cluster``): node K in host node-K, the
coordinator on this machine's end of the lab's bridge, which every host reaches (the interface is
storbench.services.placement's)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Callable

from storbench.errors import InputError
from storbench.lab import cluster, disks
from storbench.lab.commands import LabError


@dataclass(frozen=True)
class LabHosts:
    hosts: tuple[cluster.LabHost, ...]
    coordinator: str
    in_lab: bool = True

    @property
    def capacity(self) -> int:
        return len(self.hosts)

    def _host(self, index: int) -> cluster.LabHost:
        return self.hosts[index - 1]

    def address(self, index: int) -> str:
        return self._host(index).address

    def wrap(self, index: int, argv: list[str]) -> list[str]:
        return ["ip", "netns", "exec", self._host(index).namespace, *argv]

    def preexec(self, index: int) -> Callable[[], None] | None:
        group = self._host(index).cgroup
        return lambda: disks.join(group)

    def data_root(self, index: int) -> Path | None:
        return Path(self._host(index).mount)

    def exporter(self, index: int) -> str | None:
        return f"http://{self._host(index).address}:{cluster.EXPORTER_PORT}/metrics"

    def limits(self, index: int) -> dict[str, float]:
        return dict(self._host(index).limits)


def lab_placement(home: Path, service: str) -> LabHosts:
    """The lab cluster under results home ``home`` as ``services up SERVICE --lab-cluster``'s placement."""
    try:
        return LabHosts(tuple(cluster.hosts_of(home)), cluster.bridge_address(home))
    except LabError as exc:
        raise InputError(f"services up {service} --lab-cluster: {exc}") from None

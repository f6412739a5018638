"""Where a service's nodes run. By default on this machine's loopback addresses (127.0.0.K); ``--lab-cluster``
puts node K in host node-K of a lab cluster (storbench.lab.placement), so that a service's nodes talk over the
lab's links and write to the lab's disks. A service asks its placement for each node's address, the command
line that starts a process there, the directory its data goes to, and the exporter that watches it."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Callable


@dataclass(frozen=True)
class Loopback:
    """Node K on 127.0.0.(K+1); the coordinator (a master) on 127.0.0.1."""

    coordinator: str = "127.0.0.1"
    in_lab: bool = False
    capacity: int = 254

    def address(self, index: int) -> str:
        return f"127.0.0.{index + 1}"

    def wrap(self, index: int, argv: list[str]) -> list[str]:
        return argv

    def preexec(self, index: int) -> Callable[[], None] | None:
        return None

    def data_root(self, index: int) -> Path | None:
        return None  # the service decides (its own directory)

    def exporter(self, index: int) -> str | None:
        return None  # the service starts its own

    def limits(self, index: int) -> dict[str, float]:
        return {}

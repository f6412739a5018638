"""``rapl[:package|dram]``: the powercap energy counters (``energy_uj``, wrap-around undone with
``max_energy_range_uj``) of this machine; a remote node's come from its node_exporter
(``node_rapl_package_joules_total``, read with the node's other counters). Scope: ``cpu-package``
or ``dram``.
"""

from __future__ import annotations

from typing import Any

from storbench.telemetry.power.base import KINDS, PowerError, Reading, Spec
from storbench.telemetry.procfs import EnergyMeter

ZONES = {"package": "cpu-package", "dram": "dram"}


class RaplPower:
    kind = "rapl"

    def __init__(self, spec: Spec, timeout: float = 0.0, insecure: bool = False, sys_root: str = "/sys"):
        zone = spec.positional or "package"
        if zone not in ZONES:
            raise spec.fail(f"zone {zone!r}; allowed: {', '.join(ZONES)}")
        self.zone, self.scope = zone, ZONES[zone]
        self.meter = EnergyMeter(sys_root, zone)

    @property
    def available(self) -> bool:
        return self.meter.available

    def read(self) -> Reading:
        energy = self.meter.read()
        if energy is None:
            raise PowerError(f"no readable RAPL {self.zone} counters under /sys/class/powercap")
        return Reading(joules=energy / 1e6)

    def describe(self) -> dict[str, Any]:
        return {"source": self.kind, "scope": self.scope, "zones": self.meter.zone_names}


KINDS["rapl"] = RaplPower

"""What a power reading covers, said the same way everywhere: the run's first power line, every report and
``compare``'s refusal to compare energy figures of different scopes.

A source's manifest record (``describe()``) carries its ``scope`` key (:data:`~.base.SCOPES`, or ``unknown``
for a command source given no ``scope=``) and whether the user declared it (``scope_declared``): storbench
cannot check what a command's meter or a declared scope covers, so the words say "as declared". Two runs'
energy figures compare only when their scope keys are equal and known.
"""

from __future__ import annotations

from typing import Any, Mapping

UNKNOWN = "unknown"
WORDS = {"cpu-package": "CPU package", "dram": "DRAM", "node-psu": "node PSU", "wall": "wall"}
HOW = {"rapl": "RAPL", "ipmi": "IPMI DCMI", "redfish": "Redfish"}
# every figure that is energy or derived from it (telemetry.metrics: energy_j and POWER)
ENERGY_METRICS = frozenset(
    {"energy_j", "avg_power_w", "max_power_w", "power_above_idle_w", "ops_per_watt", "joules_per_gb", "gb_per_kwh"}
)
DEFAULT_LINE = "power: CPU package only (RAPL): no drives, no DRAM; {choose} to choose another source"


def scope_text(info: Mapping[str, Any] | None) -> str | None:
    """ "CPU package (RAPL)", "node PSU (IPMI DCMI)", "node PSU (Redfish)", "wall (as declared)", "as declared:
    unknown"; None when the record measured nothing."""
    if not info or info.get("source") in (None, "none"):
        return None
    key = info.get("scope") or UNKNOWN
    if key == UNKNOWN:
        return "as declared: unknown"
    words, how = WORDS.get(key, key), HOW.get(str(info.get("source")))
    if info.get("scope_declared"):  # a command's meter, or a scope the user said: not checked by storbench
        return f"{words} ({how}, as declared)" if how else f"{words} (as declared)"
    return f"{words} ({how})" if how else words


def scope_key(info: Mapping[str, Any] | None) -> str | None:
    if not info or info.get("source") in (None, "none"):
        return None
    return str(info.get("scope") or UNKNOWN)


def node_records(manifest: Mapping[str, Any]) -> dict[str | None, Mapping[str, Any]]:
    """The manifest's power records by row label: None for the unlabelled row (this machine, or the cluster's
    sum when its nodes share one scope), each node's label for its own rows."""
    power = manifest.get("power")
    if not isinstance(power, Mapping):
        return {}
    if "nodes" not in power:
        return {None: power}
    nodes = {str(label): info for label, info in (power.get("nodes") or {}).items() if isinstance(info, Mapping)}
    out: dict[str | None, Mapping[str, Any]] = dict(nodes)
    keys = {scope_key(info) for info in nodes.values()}
    if nodes and not power.get("cluster_why") and len(keys) == 1:
        out[None] = next(iter(nodes.values()))
    return out


def run_scope_text(manifest: Mapping[str, Any]) -> str | None:
    """The run's power scope in one phrase for its configuration: one scope, or each node's."""
    records = node_records(manifest)
    if None in records:
        return scope_text(records[None])
    said = {label: scope_text(info) for label, info in records.items()}
    parts = [f"{label}: {text}" for label, text in said.items() if text]
    return "; ".join(parts) or None


def default_line(powers: Mapping[str, Any], choose: str) -> str | None:
    """The first line a run prints about power when RAPL was taken by default (no --power, no power: key):
    what it covers. ``powers`` maps a node label ("" for this machine) to its NodePower."""
    chosen = [label for label, power in powers.items() if power is not None and power.default]
    if not chosen:
        return None
    line = DEFAULT_LINE.format(choose=choose)
    named = [label for label in chosen if label]
    return line.replace(" (RAPL):", f" (RAPL) on {', '.join(named)}:") if named else line

"""Power per node: one source (``rapl``, ``redfish``, ``ipmi``, ``command``) or none, and why.

:func:`open_power` turns a spec (``--power``, a node's ``power:``) into a :class:`NodePower`, checked
to answer before anything is written. With no spec, a node's RAPL counters are used when it has
them (read with its other counters); without, power is not measured and ``why`` says so: no figure
is ever estimated.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable, Sequence

from storbench.errors import InputError
from storbench.telemetry.power import command, ipmi, rapl, redfish  # noqa: F401  (each registers its kind)
from storbench.telemetry.power.base import KINDS, SCOPES, Reading, parse_spec
from storbench.telemetry.power.sampler import PowerPoint, PowerSampler, integrate, power_window

ALLOWED = {
    "rapl": ("scope",),
    "ipmi": ("user", "user_env", "password_env", "password_file", "scope"),
    "redfish": ("user", "user_env", "password_env", "password_file", "ca", "insecure", "scope"),
    "command": ("scope",),
}
assert set(ALLOWED) == set(KINDS)


@dataclass
class NodePower:
    """What a node's power comes from: a sampler, its collector's RAPL counters, or nothing (``why``)."""

    info: dict[str, Any]  # the manifest's record: source, scope, ...; or source none and why
    sampler: PowerSampler | None = None
    snapshots: Callable[[], Sequence[Any]] | None = None  # the node's collector points (energy_uj)
    idle_w: float | None = field(default=None)
    default: bool = False  # RAPL taken because no source was given: the run says what it covers (scope.default_line)

    @property
    def scope(self) -> str | None:
        return self.info.get("scope")

    @property
    def measured(self) -> bool:
        return self.sampler is not None or self.snapshots is not None

    def points(self) -> list[PowerPoint]:
        if self.sampler is not None:
            return self.sampler.points()
        if self.snapshots is not None:
            return integrate(
                [(p.time, Reading(joules=p.energy_uj / 1e6)) for p in self.snapshots() if p.energy_uj is not None]
            )
        return []

    def window(self, start: float, end: float) -> dict[str, float | None]:
        return power_window(self.points(), start, end)

    def start(self) -> None:
        if self.sampler is not None:
            self.sampler.start()

    def stop(self) -> None:
        if self.sampler is not None:
            self.sampler.stop()

    def mark(self) -> float | None:
        """The time of a reading taken now (this machine's clock), when a sampler reads the source; else None
        (RAPL counters come with the collector's snapshot, timed by it)."""
        return self.sampler.mark() if self.sampler is not None else None

    def gaps(self) -> list[dict[str, Any]]:
        return self.sampler.gaps() if self.sampler is not None else []

    @property
    def cpu_seconds(self) -> float:
        return self.sampler.cpu_seconds if self.sampler is not None else 0.0


def open_power(
    text: str | None,
    where: str,
    interval: float,
    *,
    local: bool,
    has_rapl: bool,
    snapshots: Callable[[], Sequence[Any]],
    insecure: bool = False,
    sys_root: str = "/sys",
) -> NodePower:
    """The node's power, checked to answer: every problem is one line starting with ``where``."""
    counters = "RAPL counters (/sys/class/powercap)" if local else "node_rapl_* metrics from its exporter"
    if text is None:
        if has_rapl:
            return NodePower(
                {"source": "rapl", "scope": "cpu-package", "from": "collector"}, snapshots=snapshots, default=True
            )
        return NodePower({"source": "none", "why": f"no {counters}, no {where}"})
    spec = parse_spec(text, where, ALLOWED)
    if spec.kind == "rapl" and spec.positional in ("", "package"):
        if not has_rapl:
            raise InputError(f"{where} rapl: this node has no {counters}")
        return NodePower({"source": "rapl", "scope": "cpu-package", "from": "collector"}, snapshots=snapshots)
    if spec.kind == "rapl" and not local:
        raise InputError(f"{where} rapl:{spec.positional}: only the package counters are read from an exporter")
    timeout = max(1.0, min(5.0, 2 * interval))
    source = (
        rapl.RaplPower(spec, sys_root=sys_root)
        if spec.kind == "rapl"
        else KINDS[spec.kind](spec, timeout=timeout, insecure=insecure)
    )
    try:
        check = getattr(source, "check", None)
        check() if check is not None else source.read()
    except OSError as exc:
        raise InputError(f"{where} {spec.kind}: {str(exc).splitlines()[0] if str(exc) else exc}") from None
    return NodePower(source.describe(), sampler=PowerSampler(source, interval))


__all__ = ["ALLOWED", "KINDS", "NodePower", "PowerPoint", "PowerSampler", "SCOPES", "open_power", "power_window"]


def power_notes(manifest: dict[str, Any], name: str) -> list[str]:
    """What a report says about a run's power: why it is not measured, where readings were missing."""
    power = manifest.get("power")
    if not isinstance(power, dict):
        return []
    nodes = (power.get("nodes") if "nodes" in power else {"": power}) or {}
    out = []
    unmeasured = [label for label, info in nodes.items() if info.get("source") == "none"]
    every_node = len(unmeasured) > 1 and len(unmeasured) == len(nodes)
    if every_node:  # one line, not one per node and one for the cluster
        first, *others = unmeasured
        out.append(
            f"power not measured ({name}) on any of its {len(nodes)} nodes: {first}: {nodes[first].get('why')}; "
            f"likewise {', '.join(others)}"
        )
    for label, info in nodes.items():
        who = f"{name}{' ' + label if label else ''}"
        if info.get("source") == "none" and not every_node:
            out.append(f"power not measured ({who}): {info.get('why')}")
        for gap in info.get("gaps") or []:
            out.append(f"power ({who}): no reading from {gap['from_s']:.1f} s to {gap['to_s']:.1f} s: {gap['error']}")
    if power.get("cluster_why") and not every_node:
        out.append(f"cluster power not measured ({name}): {power['cluster_why']}")
    return out

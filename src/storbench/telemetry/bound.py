"""What limited an operation on each node (the USE method's question, at the sampled resolution): a device, a
link, the CPU, or none of them that telemetry can see.

A resource counts as the bound when it ran at its capacity: a limit the node's nodes file states (a lab's
throttle: 90% of it or more), else a device busy 90% of the window's intervals or more, else the CPU at 90% or
more on average. A throttle above the device (a cgroup's, a QEMU's) queues writes before the device sees them, so
its device is not busy: only the stated limit shows it. A link's limit holds each way, so each direction is held
to it. CPU is checked last because on shared hardware (hosts in namespaces of one machine) every node reports the
machine's CPU.

The same verdicts name a cluster's slowest node (:func:`slowest`): the node the others waited for.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

AT_CAPACITY = 0.90  # of a stated limit, of the device's intervals, of the CPU
# A device's figure this far over its stated limit had writes the limit does not hold: a cgroup's throttle holds
# its own processes' writes, not the kernel's write-back or a file system's journal made for them
OVER_LIMIT = 1.10
LIMITS = (  # (figure, the limit it is held to, the resource, how a reader names the figure)
    ("write_mbps", "disk_write_mbps", "device", "write", "MB/s"),
    ("read_mbps", "disk_read_mbps", "device", "read", "MB/s"),
    ("net_tx_mbps", "link_mbit", "link", "send", "MB/s"),  # a link's limit holds each way
    ("net_rx_mbps", "link_mbit", "link", "receive", "MB/s"),
)


@dataclass(frozen=True)
class NodeFigures:
    """One node's figures over an operation (maxima over intervals, CPU on average) and its stated limits."""

    node: str
    write_mbps: float | None = None
    read_mbps: float | None = None
    net_rx_mbps: float | None = None
    net_tx_mbps: float | None = None
    util_pct: float | None = None
    cpu_pct: float | None = None
    limits: dict[str, float] = field(default_factory=dict)


def figures(node: str, metrics: Mapping[str, float | None], limits: Mapping[str, float]) -> NodeFigures:
    """A node's figures from its window metrics (telemetry.metrics' names)."""
    return NodeFigures(
        node,
        write_mbps=metrics.get("max_write_mbps"),
        read_mbps=metrics.get("max_read_mbps"),
        net_rx_mbps=metrics.get("max_net_rx_mbps"),
        net_tx_mbps=metrics.get("max_net_tx_mbps"),
        util_pct=metrics.get("max_util_pct"),
        cpu_pct=metrics.get("avg_cpu_pct"),
        limits=dict(limits),
    )


def _limit_in_mbps(key: str, value: float) -> float:
    return value / 8 if key == "link_mbit" else value  # Mbit/s -> MB/s


def bound(fig: NodeFigures) -> tuple[str, str]:
    """(resource, why): resource is ``device``, ``link``, ``CPU`` or ``none``. A resource at its limit both ways
    (a link sending and receiving in a shuffle) is named by the fuller direction."""
    at_limit: dict[str, list[tuple[float, str]]] = {}  # resource -> [(share of its limit, why)], in LIMITS' order
    for attr, key, resource, word, unit in LIMITS:
        value, limit = getattr(fig, attr), fig.limits.get(key)
        if value is not None and limit:
            capacity = _limit_in_mbps(key, limit)
            if value >= AT_CAPACITY * capacity:
                shown = f"{limit:g} Mbit/s" if key == "link_mbit" else f"{limit:g} {unit}"
                why = f"{word} {value:.3g} {unit}, {100 * value / capacity:.0f}% of its {shown} limit"
                if resource == "device" and value > OVER_LIMIT * capacity:
                    why += ", more than the limit holds: write-back or a journal outside it"
                at_limit.setdefault(resource, []).append((value / capacity, why))
    if at_limit:  # the first resource held, by its fullest figure
        resource, found = next(iter(at_limit.items()))
        return resource, max(found)[1]
    if fig.util_pct is not None and fig.util_pct >= 100 * AT_CAPACITY:
        return "device", f"device {fig.util_pct:.0f}% busy"
    if fig.cpu_pct is not None and fig.cpu_pct >= 100 * AT_CAPACITY:
        return "CPU", levels(fig)
    return "none", "no device, link or CPU at capacity"


def levels(fig: NodeFigures) -> str:
    """ "CPU 97%, devices ≤ 5% busy": how busy the CPU and the devices were ("" when neither was sampled)."""
    parts = [f"CPU {fig.cpu_pct:.0f}%" if fig.cpu_pct is not None else ""]
    parts.append(f"devices ≤ {fig.util_pct:.0f}% busy" if fig.util_pct is not None else "")
    return ", ".join(p for p in parts if p)


CONSEQUENCE = {
    "CPU": "a faster disk would not change this figure",
    "device": "the storage set this figure",
    "link": "the network set this figure",
}


def sentence(figures: list[NodeFigures]) -> str:
    """One line for the operation: the same bound on every node, or each node's."""
    if not figures:
        return ""
    verdicts = [(f.node, *bound(f)) for f in figures]
    kinds = {kind for _, kind, _ in verdicts}
    if len(kinds) == 1 and len(verdicts) > 1:
        [kind] = kinds
        if kind == "none":
            return "bound by: nothing at capacity on any node at the sampled resolution"
        whys = "; ".join(f"{node} {why}" for node, _, why in verdicts)
        return f"bound by: {kind} on every node ({whys}): {CONSEQUENCE[kind]}"
    parts = [f"{node} {_kind_words(kind)} ({why})" for node, kind, why in verdicts]
    return "bound by: " + "; ".join(parts)


def machine_sentence(fig: NodeFigures) -> str:
    """The line for an operation on one machine (a run without nodes: N=1), in the words of :func:`sentence`."""
    kind, why = bound(fig)
    if kind == "none":
        seen = levels(fig)
        return "bound by: nothing at capacity at the sampled resolution" + (f" ({seen})" if seen else "")
    return f"bound by: {kind} ({why}): {CONSEQUENCE[kind]}"


def _kind_words(kind: str) -> str:
    return "nothing at capacity" if kind == "none" else f"{kind}-bound"


HELD = ("device", "link")  # a node's own hardware at capacity (the CPU may be the machine's, shared)


def slowest(nodes: Sequence[NodeFigures], moved: Mapping[str, float]) -> tuple[str, float, str] | None:
    """(node, % behind the busiest, what held it: ``device``, ``link`` or "") for the node the others waited
    for; None for fewer than two nodes or no bytes moved.

    A node held at capacity by its own device or link sets the pace of a job the nodes share, so the slowest is
    among the held nodes (a shuffle waits on the node with the slow link though every node moves the same bytes).
    Each is compared with the busiest node on what held it: a link's busier direction's peak rate, or the MB its
    devices moved (``moved``); the one furthest behind is named. Every node at its own disk's limit: the one
    whose devices moved the fewest MB. None held: the same, over all nodes (the least work done in the window)."""
    if len(nodes) < 2 or not all(f.node in moved for f in nodes) or max(moved.values()) <= 0:
        return None
    held = {f.node: kind for f in nodes if (kind := bound(f)[0]) in HELD}
    candidates = held or {f.node: "device" for f in nodes}
    link = {f.node: max(f.net_rx_mbps or 0.0, f.net_tx_mbps or 0.0) for f in nodes}
    measures = {"device": dict(moved), "link": link}

    def behind(node: str) -> float:
        measure = measures[candidates[node]]
        busiest = max(measure.values())
        return 100 * (busiest - measure[node]) / busiest if busiest > 0 else 0.0

    node = max(candidates, key=behind)  # the first in the nodes' order on a tie
    return node, max(0.0, behind(node)), candidates[node] if held else ""

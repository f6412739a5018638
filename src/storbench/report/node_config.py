"""The nodes of cluster runs as configuration rows (name, role, host, devices, cores, memory, kernel): read from
each run's manifest, below every format and section module so the configuration table and the per-node
tables share it."""

from __future__ import annotations

from typing import Any

from storbench.analysis.model import Comparison


def manifest_of(c: Comparison, index: int) -> dict[str, Any]:
    """The manifest of run ``index`` of the comparison (empty when it has none)."""
    return c.source_runs[index].manifest if index < len(c.source_runs) else {}


def config_nodes(c: Comparison, index: int) -> list[dict[str, Any]]:
    """The nodes the run's configuration names (manifest config.nodes)."""
    return list((manifest_of(c, index).get("config") or {}).get("nodes") or [])


LIMIT_WORDS = {  # a lab's limits on a node (storbench.telemetry.nodes LIMIT_KEYS), as a reader reads them
    "disk_write_mbps": ("disk write", "MB/s"),
    "disk_read_mbps": ("disk read", "MB/s"),
    "link_mbit": ("link", "Mbit/s"),
    "link_delay_ms": ("link delay", "ms"),
}


def limits_text(node: dict[str, Any]) -> str:
    """``limits: disk write 20 MB/s, link 50 Mbit/s`` for a node a lab limited, else empty."""
    limits = node.get("limits") or {}
    said = [f"{LIMIT_WORDS[k][0]} {float(v):g} {LIMIT_WORDS[k][1]}" for k, v in limits.items() if k in LIMIT_WORDS]
    return "limits: " + ", ".join(said) if said else ""


def config_fields(c: Comparison) -> list[tuple[str, list[str]]]:
    """One configuration row per node label: name, role, host, devices and the node's cores, memory and
    kernel (manifest machine.nodes), per run; none for runs without nodes."""
    labels = list(dict.fromkeys(str(n.get("label")) for i in range(len(c.runs)) for n in config_nodes(c, i)))

    def describe(index: int, label: str) -> str:
        node = next((n for n in config_nodes(c, index) if str(n.get("label")) == label), None)
        if node is None:
            return ""
        print_ = ((manifest_of(c, index).get("machine") or {}).get("nodes") or {}).get(label) or {}
        parts = [f"{node.get('name')} ({node.get('role')})", str(node.get("host") or "")]
        parts.append("devices " + ", ".join(map(str, node.get("devices") or [])) if node.get("devices") else "")
        parts.append(f"{print_['cores']} cores" if print_.get("cores") else "")
        parts.append(f"{float(print_['memory_gb']):,.4g} GB" if print_.get("memory_gb") else "")
        parts.append(f"kernel {print_['kernel']}" if print_.get("kernel") else "")
        parts.append(limits_text(node))
        return " · ".join(p for p in parts if p)

    return [(f"Node {label}", [describe(i, label) for i in range(len(c.runs))]) for label in labels]

"""The lab cluster's network: a bridge on this machine, one network namespace per host joined to it by a veth
pair, each with its own address, and a link whose rate (tc tbf) or delay (tc netem) is fixed on both ends.

The subnet is one /24 of 10.213.0.0/16 that no interface or route here uses; its addresses exist only in the
namespaces and on the bridge this module made, so no traffic to them leaves this machine. Two lab clusters made
at once (two homes) could pick the same /24 between one's look and its claim: the bridge's address is the claim,
checked after it is made, and given back for another /24 when another interface holds one in the same /24."""

from __future__ import annotations

import ipaddress
import random
import re

from storbench.lab.commands import LabError, run
from storbench.lab.journal import Journal
from storbench.lab.spec import NodeLimits

POOL = ipaddress.ip_network("10.213.0.0/16")
FIRST_HOST = 11  # node i (1-based) is .(10 + i); the bridge is .1


def used_networks() -> list[ipaddress.IPv4Network]:
    text = run("ip", "-4", "-o", "addr", "show") + run("ip", "-4", "route", "show", "table", "all")
    found = re.findall(r"\b(\d+\.\d+\.\d+\.\d+(?:/\d+)?)", text)
    return [ipaddress.ip_network(item, strict=False) for item in found]


def pick_subnet(rng: random.Random | None = None) -> ipaddress.IPv4Network:
    """A /24 of POOL that overlaps nothing in use here."""
    rng = rng or random.Random()
    used = used_networks()
    candidates = list(POOL.subnets(new_prefix=24))[1:-1]
    rng.shuffle(candidates)
    for subnet in candidates:
        if not any(subnet.overlaps(net) for net in used):
            return subnet
    raise LabError(f"no free /24 in {POOL} for the lab cluster's hosts")


def bridge_address(subnet: ipaddress.IPv4Network) -> str:
    return str(subnet.network_address + 1)


def node_address(subnet: ipaddress.IPv4Network, index: int) -> str:
    return str(subnet.network_address + FIRST_HOST - 1 + index)


def make_bridge(journal: Journal, name: str) -> None:
    run("ip", "link", "add", name, "type", "bridge")
    journal.made("link", name=name)
    run("ip", "link", "set", name, "up")


CLAIM_TRIES = 8


def claim_subnet(bridge: str, rng: random.Random | None = None) -> ipaddress.IPv4Network:
    """A /24 of POOL with the bridge's address in it, held by no other interface once the address is added."""
    rng = rng or random.Random()
    for _ in range(CLAIM_TRIES):
        subnet = pick_subnet(rng)
        address = f"{bridge_address(subnet)}/{subnet.prefixlen}"
        run("ip", "addr", "add", address, "dev", bridge)
        if not _held_elsewhere(bridge, subnet):
            return subnet
        run("ip", "addr", "del", address, "dev", bridge)  # a lab made at the same moment took it: look again
    raise LabError(f"no /24 in {POOL} stayed free for the lab cluster's bridge in {CLAIM_TRIES} tries")


def _held_elsewhere(bridge: str, subnet: ipaddress.IPv4Network) -> bool:
    """Whether an interface other than ``bridge`` has an address in ``subnet`` (`ip -4 -o addr show` lines:
    "<index>: <interface>    inet <address>/<prefix> ...")."""
    for line in run("ip", "-4", "-o", "addr", "show").splitlines():
        fields = line.split()
        if len(fields) >= 4 and fields[2] == "inet" and fields[1].split("@")[0] != bridge:
            if ipaddress.ip_network(fields[3], strict=False).overlaps(subnet):
                return True
    return False


def make_host(journal: Journal, namespace: str, outer: str, bridge: str, address: str, prefix: int) -> None:
    """Namespace ``namespace`` with ``eth0`` at ``address``, its peer ``outer`` on ``bridge`` here."""
    run("ip", "netns", "add", namespace)
    journal.made("netns", name=namespace)
    inner = f"{outer}i"
    run("ip", "link", "add", outer, "type", "veth", "peer", "name", inner)
    journal.made("link", name=outer)  # deleting one end deletes the pair
    run("ip", "link", "set", inner, "netns", namespace)
    run("ip", "-n", namespace, "link", "set", inner, "name", "eth0")
    run("ip", "-n", namespace, "addr", "add", f"{address}/{prefix}", "dev", "eth0")
    run("ip", "-n", namespace, "link", "set", "eth0", "up")
    run("ip", "-n", namespace, "link", "set", "lo", "up")
    run("ip", "link", "set", outer, "master", bridge)
    run("ip", "link", "set", outer, "up")


def qdisc(limits: NodeLimits) -> list[str] | None:
    """The root qdisc that gives a link ``limits`` (None: leave it as it is)."""
    if limits.link_delay_ms:
        rate = ["rate", f"{limits.link_mbit}mbit"] if limits.link_mbit else []
        return ["netem", "delay", f"{limits.link_delay_ms}ms", *rate]
    if limits.link_mbit:
        # burst: at least one interval's worth at the kernel's 1000 Hz, and a few full frames
        burst = max(32 * 1024, int(limits.link_mbit * 1e6 / 8 / 1000) * 4)
        return ["tbf", "rate", f"{limits.link_mbit}mbit", "burst", str(burst), "latency", "50ms"]
    return None


def shape(namespace: str, outer: str, limits: NodeLimits) -> None:
    """The host's link at its limits in both directions: its eth0's egress and the bridge port's."""
    rule = qdisc(limits)
    if rule is None:
        return
    if limits.link_mbit:
        # One frame per packet on both ends: the qdisc charges a TCP segmentation-offload packet for every frame's
        # headers, the interface counters (what a node's telemetry reads) once per packet, so at its limit a
        # link's counters read ~96% of the rate (a 20 Mbit/s link's busiest direction read 97% in a shuffle).
        run("ip", "-n", namespace, "link", "set", "dev", "eth0", "gso_max_segs", "1")
        run("ip", "link", "set", "dev", outer, "gso_max_segs", "1")
    run("tc", "-n", namespace, "qdisc", "add", "dev", "eth0", "root", *rule)
    run("tc", "qdisc", "add", "dev", outer, "root", *rule)


def link_down(namespace: str) -> None:
    """Cut a host's link (its eth0), as a failed switch port would."""
    run("ip", "-n", namespace, "link", "set", "eth0", "down")


def link_up(namespace: str) -> None:
    run("ip", "-n", namespace, "link", "set", "eth0", "up")


def probe_qdisc(namespace: str, rule: list[str]) -> str | None:
    """Whether this kernel has ``rule``'s qdisc: tried on the loopback of a namespace made for the probe alone
    (removed at once); None if it works, else the tool's words."""
    run("ip", "netns", "add", namespace)
    try:
        run("tc", "-n", namespace, "qdisc", "add", "dev", "lo", "root", *rule)
        return None
    except LabError as exc:
        return str(exc).rsplit(": ", 1)[-1]
    finally:
        run("ip", "netns", "del", namespace)

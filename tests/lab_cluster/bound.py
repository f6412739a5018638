"""What storbench's "bound by:" line says held each node of a lab run."""

from __future__ import annotations


def held_by(said: str, node: str) -> str:
    """What a "bound by:" line says held ``node``: device, link, CPU or none."""
    every = said.removeprefix("bound by: ").split(" on every node (", 1)
    if len(every) == 2:
        return every[0]
    for part in said.removeprefix("bound by: ").split("; "):
        if part.startswith(f"{node} "):
            words = part.removeprefix(f"{node} ").split(" (", 1)[0]
            return words.removesuffix("-bound") if words.endswith("-bound") else "none"
    return "none"


def assert_held_to_limits(limits, reached, ceiling, cpu, said):
    """Each node ``worker-K`` (K from 1, ``limits`` in order) against its throttle: never over it by more than 5%
    (``ceiling``: what went through the throttle), within 5% of it when the CPU left its writer room (the window's
    CPU under 90%; the slowest node's always), and with the CPU taken, held by what storbench names in ``said``."""
    for index, limit in enumerate(limits, start=1):
        node = f"worker-{index}"
        assert ceiling[node] <= 1.05 * limit, (node, limit, ceiling)
        if index == 1 or cpu[node] < 90:
            assert reached[node] >= 0.95 * limit, (node, limit, reached, cpu)
        else:
            assert held_by(said, node) in ("device", "CPU"), (node, said)
    in_order = [reached[f"worker-{index}"] for index in range(1, len(limits) + 1)]
    assert all(a < b for a, b in zip(in_order, in_order[1:])), reached

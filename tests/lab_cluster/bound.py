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

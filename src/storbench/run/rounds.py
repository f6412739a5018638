"""The rounds of a run or an interleaved experiment: which configuration runs when, and when to stop.

Repetition r of every configuration forms round r. Within a round the configurations take turns in an order
that alternates (A B, then B A, ...; with more than two, a rotation) or is shuffled per round from a recorded
seed, so whatever the machine does slowly (a neighbour starting, caches filling, a disk warming) falls on every
configuration alike instead of on the one that happened to run later. ``--repeat auto`` stops the rounds once
the headline's interval is narrow enough (``Enough``, given by the caller: the run core knows no statistics).
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field
from typing import Callable

from storbench.errors import InputError
from storbench.run.loop import Recorded
from storbench.run.sweep import Point

ORDERS = ("alternate", "random")
AUTO_DEFAULT = (3, 10)  # --repeat auto: hyperfine's --min-runs/--max-runs, for runs of seconds to minutes
MAX_REPETITIONS = 1000

# (repetition, point, what was recorded so far) -> why the rounds may stop now, or None to go on
Enough = Callable[[int, Point, Recorded], str | None]


def parse_repeat(text: str) -> tuple[int | None, tuple[int, int] | None]:
    """``--repeat``: N, ``auto`` (3 to 10 repetitions) or ``MIN..MAX``; (repeat, (min, max) when automatic)."""
    value = text.strip()
    if value == "auto":
        return None, AUTO_DEFAULT
    low, dots, high = value.partition("..")
    try:
        if not dots:
            return int(value), None
        bounds = (int(low), int(high))
    except ValueError:
        raise InputError(
            f"--repeat {text}: a number of repetitions, 'auto' (3 to 10, until the headline's "
            f"95% interval is within ±5%) or MIN..MAX (e.g. 3..20)"
        ) from None
    if not 2 <= bounds[0] <= bounds[1] <= MAX_REPETITIONS:
        raise InputError(
            f"--repeat {text}: MIN..MAX needs 2 <= MIN <= MAX <= {MAX_REPETITIONS} (an interval needs two repetitions)"
        )
    return None, bounds


@dataclass
class Schedule:
    """The rounds of ``count`` configurations; ``on_round`` hears each round's order as it completes."""

    count: int
    policy: str = "alternate"
    seed: int = 0
    minimum: int | None = None  # --repeat auto: the rounds before ``enough`` is asked
    rule: Enough | None = None
    on_round: Callable[[int, list[int]], None] = lambda repetition, order: None
    stopped: dict[str, str] = field(default_factory=dict)  # point text -> why its rounds stopped early
    done: int = 0  # the most rounds any point ran

    def __post_init__(self) -> None:
        if self.policy not in ORDERS:
            raise InputError(f"--order {self.policy!r}: allowed: {', '.join(ORDERS)}")

    def order(self, repetition: int) -> list[int]:
        indices = list(range(self.count))
        if self.policy == "random":
            random.Random(f"{self.seed}:{repetition}").shuffle(indices)
            return indices
        turn = (repetition - 1) % self.count  # A B, B A, A B, ...
        return indices[turn:] + indices[:turn]

    def ran(self, repetition: int, order: list[int]) -> None:
        self.done = max(self.done, repetition)
        self.on_round(repetition, order)

    def enough(self, repetition: int, point: Point, recorded: Recorded) -> bool:
        if self.rule is None or self.minimum is None or repetition < self.minimum:
            return False
        why = self.rule(repetition, point, recorded)
        if why is not None:
            self.stopped[point.text] = f"after {repetition} repetitions: {why}"
        return why is not None

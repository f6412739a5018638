"""The one shape every benchmark has: a scope line, rotated rounds, the median and spread, a verdict.

A benchmark compares storbench ("ours") with a named peer measured in the same script. This module
holds the parts that must be the same in all of them, so no benchmark can judge on one round,
always run one side first, or print a verdict its numbers do not support:

- ``parser(doc)``: argparse with ``--quick`` (a smoke run: tiny sizes, one round, the verdict line marked
  ``quick smoke``) and ``--rounds`` (default 3, at least 3 for a measurement);
- ``scope(...)``: the first line printed: what both sides run, in which scope (parallelism, start-up
  inside or outside the timer, cache and sync state, clock), and the named peer;
- ``rotated(sides, rounds)``: runs the sides round after round, rotating the order each round
  (round k starts with side k mod n) so no side always meets a colder or warmer machine;
- ``Spread`` and ``ratios``: per-round ratios of ours to the peer (a round's pair shares the
  machine's state, so the ratio is taken within a round, then the median over rounds);
- ``service(...)``: a service for the benchmark: its own (started and stopped here), or with
  ``--service-home`` one already up (the test suite's session service, so the smoke run starts none);
- ``verdict(...)``: one line ``verdict: NAME: median R (min-max over N rounds), goal OP G: met|MISSED``;
  ``share_verdict(...)`` the same for a share of rounds where something happened (a false positive).
  ``tests/benchmarks`` runs every benchmark with ``--quick`` and reads these lines.

    from harness import parser, scope, rotated, ratios, verdict
"""

from __future__ import annotations

import argparse
import statistics
import sys
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Iterator, Mapping, Sequence

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))

MIN_ROUNDS = 3
# A smoke run is no measurement: it shows the benchmark still runs and prints its verdicts, so one round does
# (the rotation and the spread are checked in tests/benchmarks/test_harness.py, without a service or a JVM)
QUICK_ROUNDS = 1
QUICK = False  # set by parser(): verdict lines say "quick smoke" so nobody quotes them as measurements


def parser(doc: str | None) -> argparse.ArgumentParser:
    """argparse with the options every benchmark has; parse_args() also sets QUICK."""
    p = _Parser(description=(doc or "").strip().splitlines()[0] if doc else None)
    p.add_argument(
        "--quick",
        action="store_true",
        help="smoke run: tiny sizes, checks the benchmark runs and prints its verdict lines (not a measurement)",
    )
    p.add_argument(
        "--service-home",
        type=Path,
        default=None,
        metavar="HOME",
        help="use the services already up under this results home (storbench --results HOME "
        "services up ...) instead of starting and stopping this benchmark's own",
    )
    p.add_argument(
        "--rounds",
        type=int,
        default=None,
        help=f"rounds, the order of the sides rotated each round (default and minimum {MIN_ROUNDS}; "
        f"--quick: {QUICK_ROUNDS})",
    )
    return p


class _Parser(argparse.ArgumentParser):
    def parse_args(self, *args: Any, **kwargs: Any) -> argparse.Namespace:  # type: ignore[override]
        global QUICK
        ns = super().parse_args(*args, **kwargs)
        least = QUICK_ROUNDS if ns.quick else MIN_ROUNDS
        if ns.rounds is None:
            ns.rounds = least
        if ns.rounds < least:
            self.error(
                f"--rounds {ns.rounds}: at least {MIN_ROUNDS} (a median and a spread need three)"
                if not ns.quick
                else f"--rounds {ns.rounds}: at least {QUICK_ROUNDS} with --quick"
            )
        QUICK = ns.quick
        return ns


def scope(what: str, *, peer: str, parallelism: str, startup: str, cache: str, clock: str) -> None:
    """Print the scope line first: both sides and the rules they share."""
    mode = " [quick smoke: tiny sizes, not a measurement]" if QUICK else ""
    print(
        f"scope: {what}; peer: {peer}; parallelism: {parallelism}; start-up: {startup}; "
        f"cache/sync: {cache}; clock: {clock}{mode}",
        flush=True,
    )


def rotated(sides: Mapping[str, Callable[[int], Any]], rounds: int) -> dict[str, list[Any]]:
    """Run every side once per round, round k starting with side k mod n; each side's callable gets the
    round number. Returns each side's results in round order."""
    names = list(sides)
    results: dict[str, list[Any]] = {name: [] for name in names}
    for k in range(rounds):
        order = names[k % len(names) :] + names[: k % len(names)]
        for name in order:
            results[name].append(sides[name](k))
    return results


@contextmanager
def private_dir(prefix: str, parent: str | None = None) -> Iterator[Path]:
    """A private scratch directory (mkdtemp) for the block, removed after, whatever happens in it."""
    import shutil
    import tempfile

    path = Path(tempfile.mkdtemp(prefix=prefix, dir=parent))
    try:
        yield path
    finally:
        shutil.rmtree(path, ignore_errors=True)


@contextmanager
def service(name: str, home: Path, service_home: Path | None = None, **options: Any) -> Iterator[dict[str, Any]]:
    """The state of service ``name``: the one already up under ``service_home`` (left running), or one
    started under ``home`` for the block and stopped after (``services up NAME`` with ``options``)."""
    from storbench import api
    from storbench.results.store import ResultStore

    if service_home is not None:
        state = api.service_status(name, ResultStore(service_home))
        if state is None:
            raise SystemExit(
                f"--service-home {service_home}: no {name} service is up there "
                f"(start one with: storbench --results {service_home} services up {name})"
            )
        yield state
        return
    store = ResultStore(home)
    state = api.service_up(name, store, **options)
    try:
        yield state
    finally:
        api.service_down(name, store)


@dataclass(frozen=True)
class Spread:
    """The median of a figure over rounds and its range."""

    values: tuple[float, ...]

    @property
    def median(self) -> float:
        return statistics.median(self.values)

    @property
    def low(self) -> float:
        return min(self.values)

    @property
    def high(self) -> float:
        return max(self.values)

    def text(self, fmt: str = ".3g", unit: str = "") -> str:
        return f"{self.median:{fmt}}{unit} ({self.low:{fmt}}–{self.high:{fmt}}{unit} over {len(self.values)} rounds)"


def spread(values: Sequence[float]) -> Spread:
    if not values:
        raise ValueError("a spread of no values")
    return Spread(tuple(float(v) for v in values))


def ratios(ours: Sequence[float], peer: Sequence[float]) -> Spread:
    """Per-round ratios ours/peer (the two sides of one round share the machine's state)."""
    if len(ours) != len(peer):
        raise ValueError(f"{len(ours)} rounds of ours against {len(peer)} of the peer")
    return spread([o / p for o, p in zip(ours, peer)])


def verdict(name: str, figure: Spread, *, goal: float | None, at_least: bool = True, unit: str = "×") -> bool:
    """Print the verdict line for ``name`` from the median of ``figure``; returns whether it is met.
    ``goal=None``: a figure the benchmark reports without a goal (the line says so; returns True)."""
    mode = " [quick smoke, not a measurement]" if QUICK else ""
    if goal is None:
        print(f"verdict: {name}: {figure.text(unit=unit)}, no goal: reported{mode}", flush=True)
        return True
    met = figure.median >= goal if at_least else figure.median <= goal
    op = "≥" if at_least else "≤"
    print(
        f"verdict: {name}: {figure.text(unit=unit)}, goal {op} {goal:g}{unit}: {'met' if met else 'MISSED'}{mode}",
        flush=True,
    )
    return met


def share_verdict(name: str, hits: Sequence[bool], *, goal: float | None, at_least: bool = True) -> bool:
    """Print the verdict line for the share of rounds in ``hits`` that are True (``goal=None``: reported)."""
    mode = " [quick smoke, not a measurement]" if QUICK else ""
    share = sum(hits) / len(hits) if hits else 0.0
    figure = f"{share:.2f} ({sum(hits)} of {len(hits)}, over {len(hits)} rounds)"
    if goal is None:
        print(f"verdict: {name}: {figure}, no goal: reported{mode}", flush=True)
        return True
    met = share >= goal if at_least else share <= goal
    print(
        f"verdict: {name}: {figure}, goal {'≥' if at_least else '≤'} {goal:g}: {'met' if met else 'MISSED'}{mode}",
        flush=True,
    )
    return met

"""A comparison's figures set beside a paper's published ones (:mod:`storbench.baselines`).

Two things are set side by side, each with the figure it came from:

- each published absolute figure beside each run's aggregate of the metric that measures it
  (same workload, timed repetitions; ``overall`` is the one figure over all timed operations);
- each ratio between two of the user's runs (run i ÷ the baseline run, of the metric's aggregate)
  beside the paper's ratio for each pair of configurations it compares: the one the paper states
  ("190% Higher"), else the quotient of its two absolute figures.

A workload the paper's figure has only an analog in (``Figure.analogs``: paper 004's Ceph rados bench
figures beside fio on a zoned device) is set beside it labelled so (``analog``). A run whose suite is not one
of the paper's is said in one line; paper-wide figures (``overall``: paper 000's device figures over the
whole run) are set beside runs of the paper's suites only. The quotient of a run's figure and a published
one is given only for a quantity that does not grow with the data (a rate, a latency: ``SCALE_FREE``).

A figure whose metric no run has is said in ``missing`` (one line per quantity) and the
rest goes on: a paper suite run at a small scale or a partial suite still has most of them. A
comparison that has none of the paper's metrics is refused when the paper was asked for
(``explicit``): nothing would be set beside anything.
"""

from __future__ import annotations

from dataclasses import dataclass

from storbench.analysis.model import OVERALL, TIMED, Comparison, Row
from storbench.baselines import OVERALL as OVERALL_KEY
from storbench.baselines import Figure, Paper
from storbench.errors import InputError

LABEL = "published, on the paper's hardware — not measured here"
# units of quantities that do not grow with the data or the run's length (rates, latencies, shares)
SCALE_FREE = frozenset({"MB/s", "IOPS", "ops/s", "ops/s/thread", "ops/W", "%", "ms", "us"})
# labels saying how a row's figure was measured, not which part of it (fio's ioengine/direct, dfsio's checksum,
# the driver: TestDFSIO or YCSB itself)
SETTING_LABELS = frozenset({"ioengine", "direct", "fallback", "driver", "checksum"})


@dataclass(frozen=True)
class Beside:
    """A published absolute figure beside the runs' aggregates of the metric measuring it."""

    row: Row
    figure: Figure
    published: float  # in the row's unit
    yours: list[float | None]  # one per run (None for a run whose suite is not the paper's, for overall)
    analog: bool = False  # the row measures an analogous quantity, not the figure's own


@dataclass(frozen=True)
class RatioBeside:
    """Run ``run_index`` ÷ the baseline run beside the paper's ratio for one pair of its configurations."""

    run_index: int
    row: Row
    pair: tuple[str, str]  # the paper's (new, baseline) configurations
    yours: float | None
    paper: float
    figures: tuple[Figure, ...]  # the stated ratio, or the two absolutes it is the quotient of
    analog: bool = False  # the row measures an analogous quantity, not the figure's own


@dataclass(frozen=True)
class Published:
    paper: Paper
    absolutes: list[Beside]
    ratios: list[RatioBeside]
    missing: list[str]  # one line each: a figure's metric no run has
    unmeasured: list[Figure]  # figures storbench has no metric for (their notes say why)
    configurations: list[str]  # the paper's configurations the figures shown were measured on
    foreign: list[str] = ()  # one line: the runs whose suite is not one of the paper's


def scale_free(unit: str) -> bool:
    """A quantity in ``unit`` does not grow with the data (a rate, a latency): a run's figure at another
    scale may be divided by the paper's; a time or an amount may not."""
    return unit in SCALE_FREE


def _row(c: Comparison, workload: str, metric: str) -> Row | None:
    """The row of ``metric`` in ``workload``: no labels, or only labels of how it was measured (fio's
    ioengine=libaio direct=1: a fio run has no unlabelled row), the fewest first."""
    found = [
        row
        for row in c.rows
        if row.metric == metric
        and set(row.labels) <= SETTING_LABELS
        and ((row.phase == OVERALL) if workload == OVERALL_KEY else (row.phase == TIMED and row.workload == workload))
    ]
    return min(found, key=lambda row: len(row.labels), default=None)


def _quotient(new: float | None, old: float | None) -> float | None:
    return None if new is None or old is None or old == 0 else new / old


def _absolutes(c: Comparison, figure: Figure, rows: list[tuple[str, Row]], theirs: list[bool]) -> list[Beside]:
    out = []
    for workload, row in rows:
        published = figure.value_in(row.unit)
        if published is not None:
            yours = [
                cell.aggregate if theirs[i] or workload != OVERALL_KEY else None for i, cell in enumerate(row.cells)
            ]
            out.append(Beside(row, figure, published, yours, workload not in figure.measures))
    return out


def _paper_ratios(paper: Paper, row: Row, workload: str) -> list[tuple[tuple[str, str], float, tuple[Figure, ...]]]:
    """The paper's ratios of the quantity ``row`` measures, per pair it compares."""

    def measured(f: Figure) -> bool:
        return f.metric_of(workload) == row.metric

    out = []
    for pair in paper.comparisons:
        stated = [f for f in paper.figures if f.kind == "ratio" and f.of == pair and measured(f)]
        out += [(pair, f.ratio, (f,)) for f in stated if f.ratio is not None]
        if stated:
            continue
        ends = [
            next((f for f in paper.figures if f.kind == "absolute" and f.configuration == key and measured(f)), None)
            for key in pair
        ]
        if ends[0] and ends[1]:
            ratio = _quotient(ends[0].value_in(row.unit), ends[1].value_in(row.unit))
            if ratio is not None:
                out.append((pair, ratio, (ends[0], ends[1])))
    return out


def published(c: Comparison, paper: Paper, explicit: bool = True) -> Published:
    """``c``'s runs beside ``paper``'s figures; ``explicit``: the user named the paper (refuse when none match)."""
    absolutes: list[Beside] = []
    ratios: list[RatioBeside] = []
    missing: dict[str, dict[str, dict[str, None]]] = {}  # the paper's quantity → metric → workloads not in the runs
    seen: set[tuple[str, str]] = set()
    theirs = [r.suite in paper.suites for r in c.runs]
    for figure in paper.figures:
        both = {**figure.analogs, **figure.measures}
        found = [
            (w, m, row)
            for w, m in both.items()
            for row in [_row(c, w, m)]
            if row is not None and (w != OVERALL_KEY or any(theirs))
        ]  # a paper-wide figure: runs of the paper's suites only
        if figure.measures and not found:
            for workload, metric in figure.measures.items():
                missing.setdefault(figure.quantity, {}).setdefault(metric, {})[workload] = None
        if figure.kind == "absolute":
            absolutes += _absolutes(c, figure, [(w, row) for w, _, row in found], theirs)
        for workload, metric, row in found:
            if len(c.runs) < 2 or (workload, metric) in seen:
                continue
            seen.add((workload, metric))
            usable = [workload != OVERALL_KEY or (theirs[0] and theirs[i]) for i in range(len(c.runs))]
            for pair, ratio, figures in _paper_ratios(paper, row, workload):
                ratios += [
                    RatioBeside(
                        i,
                        row,
                        pair,
                        _quotient(row.cells[i].aggregate, row.cells[0].aggregate),
                        ratio,
                        figures,
                        workload not in figures[0].measures,
                    )
                    for i in range(1, len(c.runs))
                    if usable[i]
                ]
    others = [r for r, own in zip(c.runs, theirs) if not own]
    foreign = (
        [
            f"{', '.join(f'{r.name} ({r.suite})' for r in others)}: not a run of paper {paper.paper}'s "
            f"suites ({', '.join(paper.suites)}); its figures are not set beside the paper's whole-run ones"
        ]
        if others
        else []
    )
    if explicit and not absolutes and not ratios:
        names = ", ".join(f"{r.name} ({r.suite})" for r in c.runs)
        why = (
            "is not a run of its suites"
            if len(others) == len(c.runs)
            else "measured none of the metrics of its published figures"
        )
        raise InputError(
            f"paper {paper.paper}: {names} {why} (its suites: {', '.join(paper.suites)}): "
            f"nothing to set beside its figures"
        )
    runs = "the run" if len(c.runs) == 1 else "the runs"
    said = {
        quantity: " or ".join(f"{m} of {', '.join(ws)}" for m, ws in metrics.items())
        for quantity, metrics in missing.items()
    }
    lines = [
        f"{quantity} ({what}): not in {runs}; the paper's figures of it are not shown"
        for quantity, what in said.items()
    ]
    used = [f.configuration for f in (b.figure for b in absolutes)] + [k for r in ratios for k in r.pair]
    configurations = [k for k in paper.configurations if k in used]
    return Published(
        paper, absolutes, ratios, lines, [f for f in paper.figures if not f.measures], configurations, foreign
    )


def factor(ratio: float | None) -> str:
    """A ratio as a factor: 2.9×, 1.0×, 0.83×, 0.0091×, 39×; n/a when there is none."""
    if ratio is None:
        return "n/a"
    return f"{ratio:.0f}×" if ratio >= 10 else f"{ratio:#.2g}×"

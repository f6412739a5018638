"""Compare stored runs: per (workload, metric) statistics, deltas against the baseline in
the papers' words, a significance verdict, headlines and a "not comparable" check.

The first run is the baseline; every other run is compared with it. Deltas are
``new / old - 1`` said as in paper 000 (see :mod:`storbench.analysis.wording`):
"190% higher" throughput, "99% lower" latency, "17% faster" = 17% less time.

Rows come in three phases: ``prepare`` (repetition 0, once-only steps such as
datagen), ``timed`` (repetitions >= 1) and ``overall`` — one figure over all timed
operations per repetition, for the metrics paper 000 summarises that way (maximum
throughput and CPU, average latency; ``MetricSpec.overall``).

Statistics (:mod:`storbench.analysis.stats` says how each figure is computed):

* Runs of one interleaved experiment (``storbench run SUITE --target A --target B``: the
  manifest's ``experiment.id`` is the same) are **paired**: repetition i of the compared run
  with repetition i of the baseline, a t-test on the log ratios. Any other pair of runs gets
  **Welch**'s test on the raw values. Each tested row carries a 95% CI on the ratio and the
  minimum detectable difference (``Delta.ci_low``/``ci_high``/``mde_pct``/``test``).
* **Benjamini–Hochberg** over every tested row of one compared run against the baseline (each
  compared run separately): a row is "significant" when its q < 0.05 (``Delta.q_value``; the raw
  ``p_value`` is kept). ~30+ metrics each tested at 5% would make headlines by chance in an A/A
  compare; under that complete null BH keeps the chance of ANY false headline at 5%, and with
  many correlated metrics it keeps more power than Holm.
* Notes (``Comparison.design_notes``): runs made at different times, not interleaved, when one
  of their rows is significant; a first repetition that was a cold start (run without warm-up).
* The noise sentinel's samples (metrics named ``noise_*``: other processes' CPU, steal, pressure
  stall, dirty pages) are the conditions of a run, not its results: they are no rows here.
"""

from __future__ import annotations

import math
from typing import Any

from storbench.analysis import wording
from storbench.analysis.energy import mark_energy_rows, run_scope
from storbench.analysis.model import (
    OVERALL,
    OVERALL_WORKLOAD,
    PREPARE,
    TIMED,
    Cell,
    Comparison,
    Delta,
    Difference,
    Headline,
    Row,
    RunInfo,
)
from storbench.analysis.metrics import CATALOG, headline, spec_in
from storbench.analysis.stats import aggregate, benjamini_hochberg, ratio_test, summarize
from storbench.engines.reported import report_settings
from storbench.redaction import redact_url
from storbench.results.metrics import MetricSpec
from storbench.results.model import Run
from storbench.analysis.headlines import headline_sentences

__all__ = [
    "compare_runs",
    "Comparison",
    "RunInfo",
    "Row",
    "Cell",
    "Delta",
    "Difference",
    "Headline",
    "PREPARE",
    "TIMED",
    "OVERALL",
    "OVERALL_WORKLOAD",
]
NOISE_PREFIX = "noise_"  # the noise sentinel's metrics: context of a run, never compared
# a first repetition is a cold start when slower than every other one by more than COLD_SDS of their standard
# deviations and COLD_FRACTION of their mean; the others' spread needs COLD_MIN_OTHERS values to mean anything
COLD_SDS, COLD_FRACTION, COLD_MIN_OTHERS = 3.0, 0.10, 3
# "window": the conditions a workload's windows ran under (the manifest's window_rules: flush, cache, checksum)
_DIFFERENCE_KINDS = ("suite", "scale", "workload_version", "parameter", "workload_parameter", "window")


def _run_info(index: int, run: Run, name: str) -> RunInfo:
    m = run.manifest
    machine = dict(m.get("machine") or {})
    config = m.get("config") or {}
    target = config.get("target")  # credentials never reach reports
    return RunInfo(
        index=index,
        run_id=run.run_id,
        label=run.label,
        name=name,
        suite=run.suite,
        paper=m.get("paper"),
        status=run.status,
        started=run.started,
        finished=run.finished,
        scale=m.get("scale"),
        repetitions=m.get("repetitions"),
        target=target and redact_url(target),
        parameters=run.parameters,
        workload_versions=run.workload_versions,
        machine={
            k: machine.get(k)
            for k in ("hostname", "cpu_model", "cores", "memory_gb", "kernel", "os", "filesystem", "devices")
        },
        software=dict(m.get("software") or {}),
        engine_settings=report_settings(m),  # only what a report shows: an engine's settings may hold secrets
        errors=list(m.get("errors") or []),
        telemetry_interval_s=config.get("telemetry_interval_s"),
        replication=config.get("replication"),
        warmup=int(m.get("warmup") or 0),
        window_rules=dict(m.get("window_rules") or {}),
        zoned=config.get("zoned") or None,
        power_scope=run_scope(m),
        experiment=m.get("experiment") or None,
        repeat_auto=m.get("repeat_auto") or None,
    )


def _names(runs: list[Run]) -> list[str]:
    counts: dict[str, int] = {}
    for run in runs:
        counts[run.label] = counts.get(run.label, 0) + 1
    return [run.label if counts[run.label] == 1 else f"{run.label} ({run.run_id})" for run in runs]


def _differences(runs: list[Run]) -> list[Difference]:
    def facts(run: Run) -> dict[tuple[str, str], Any]:
        out: dict[tuple[str, str], Any] = {("suite", ""): run.suite, ("scale", ""): run.manifest.get("scale")}
        out.update({("workload_version", k): v for k, v in run.workload_versions.items()})
        out.update({("parameter", k): v for k, v in run.parameters.items()})
        for workload, params in (run.manifest.get("workload_parameters") or {}).items():
            out.update({("workload_parameter", f"{workload}.{k}"): v for k, v in (params or {}).items()})
        for workload, rules in (run.manifest.get("window_rules") or {}).items():
            out.update({("window", f"{workload}.{k}"): v for k, v in (rules or {}).items()})
        return out

    per_run = [facts(run) for run in runs]
    keys = list(dict.fromkeys(key for facts_ in per_run for key in facts_))
    keys.sort(key=lambda k: (_DIFFERENCE_KINDS.index(k[0]), k[1]))
    diffs = []
    for kind, key in keys:
        values = [facts_.get((kind, key)) for facts_ in per_run]
        if any(v != values[0] for v in values[1:]):
            diffs.append(Difference(kind, key or kind, values))
    return diffs


def _cell(index: int, points: list[tuple[int, float | None]], rule: str) -> Cell:
    points = sorted(points, key=lambda p: p[0])
    values = [v for _, v in points]
    s = summarize(values)
    return Cell(
        index, [r for r, _ in points], values, aggregate(values, rule), s.n, s.min, s.median, s.max, s.mean, s.stdev
    )


def _delta(index: int, spec: MetricSpec, base: Cell, cell: Cell, paired: bool = False) -> Delta:
    """The compared cell against the baseline's; ``paired``: both runs are of one interleaved experiment, so
    repetition r of each was made in the same round and the test pairs them by repetition number."""
    rel = wording.relative_change(cell.aggregate, base.aggregate)
    test = None
    if cell.n >= wording.MIN_REPETITIONS and base.n >= wording.MIN_REPETITIONS:
        if paired:
            old = dict(zip(base.repetitions, base.values))
            common = [r for r in cell.repetitions if r in old]
            new_by_rep = dict(zip(cell.repetitions, cell.values))
            test = ratio_test([new_by_rep[r] for r in common], [old[r] for r in common], paired=True)
            if test is None or test.test != wording.PAIRED:  # too few pairs: Welch on all the values
                test = ratio_test(cell.values, base.values, paired=False)
        else:
            test = ratio_test(cell.values, base.values, paired=False)
    new, old = cell.aggregate, base.aggregate
    if test is not None and test.test == wording.PAIRED and test.ratio is not None:
        # Interleaved: the change is the rounds' own (the geometric mean of repetition i's ratios), the
        # quantity the interval is about; the aggregates' ratio would let one repetition's outlier (a
        # throttle's burst caught in one maximum) move the verdict, and stand apart from its interval.
        rel, new, old = test.ratio - 1.0, test.ratio, 1.0
    return Delta(
        index,
        rel,
        None if rel is None else rel * 100.0,
        wording.delta_words(spec, rel),
        wording.verdict(spec, rel),
        wording.factor_words(spec, new, old),
        test.t if test else None,
        test.df if test else None,
        test.p_value if test else None,
        wording.significance(test, cell.n, base.n),
        None if rel is None else 1.0 + rel,
        test.ci_low if test else None,
        test.ci_high if test else None,
        test.mde_pct if test else None,
        test.test if test else None,
    )


def _experiment_id(run: Run) -> str | None:
    experiment = run.manifest.get("experiment")
    return str(experiment["id"]) if isinstance(experiment, dict) and experiment.get("id") else None


def _paired(runs: list[Run]) -> list[bool]:
    """Per run, whether it is of the baseline's interleaved experiment (the same ``experiment.id``)."""
    base = _experiment_id(runs[0])
    return [base is not None and _experiment_id(run) == base for run in runs]


def _adjust(rows: list[Row], n_runs: int) -> list[int]:
    """Benjamini–Hochberg over every tested row of each compared run against the baseline (each run separately):
    sets ``q_value`` and the significance by it. Returns how many rows each run's adjustment ran over."""
    tested = [0]
    for i in range(1, n_runs):
        deltas = [
            row.deltas[i]
            for row in rows
            if row.deltas[i] is not None
            and row.deltas[i].p_value is not None
            and row.deltas[i].significance in (wording.SIGNIFICANT, wording.NOISE)
        ]
        for delta, q in zip(deltas, benjamini_hochberg([d.p_value for d in deltas])):
            delta.q_value = q
            delta.significance = wording.SIGNIFICANT if q < wording.ALPHA else wording.NOISE
        tested.append(len(deltas))
    return tested


def _seconds(value: float) -> str:
    return f"{value:.3g}" if abs(value) < 1000 else f"{value:,.0f}"


def _cold_starts(runs: list[Run], infos: list[RunInfo], rows: list[Row]) -> list[str]:
    """Per run made without warm-up, each workload whose first repetition's time to complete is slower than every
    other repetition by more than COLD_SDS standard deviations of the others AND COLD_FRACTION of their mean.

    At least COLD_MIN_OTHERS (3) other repetitions: the standard deviation of two values has one degree of
    freedom, and under pure noise a first repetition is beyond 3 of them with ~12% probability (a t with 1 df
    beyond 2.45): the note would cry wolf on the default 3 repetitions."""
    notes = []
    for index, (run, info) in enumerate(zip(runs, infos)):
        if int(run.manifest.get("warmup") or 0) != 0:
            continue
        for row in rows:
            if row.metric != "completion_time" or row.phase != TIMED:
                continue
            cell = row.cells[index]
            by_rep = {r: v for r, v in zip(cell.repetitions, cell.values) if v is not None}
            first = by_rep.pop(1, None)
            others = list(by_rep.values())
            if first is None or len(others) < COLD_MIN_OTHERS:
                continue
            mean = math.fsum(others) / len(others)
            sd = math.sqrt(math.fsum((v - mean) ** 2 for v in others) / (len(others) - 1))
            if first > max(others) and first - mean > COLD_SDS * sd and first - mean > COLD_FRACTION * mean:
                unit = f" {row.unit}" if row.unit else ""
                what = row.workload + (
                    f" [{', '.join(f'{k}={v}' for k, v in sorted(row.labels.items()))}]" if row.labels else ""
                )
                notes.append(
                    f"run {info.name}: {what}'s first repetition took {_seconds(first)}{unit}, the others "
                    f"{_seconds(min(others))}–{_seconds(max(others))}{unit}: a cold start (JVM, caches) is "
                    f"averaged in; --warmup 1 runs an unrecorded first repetition"
                )
    return notes


def _not_interleaved(infos: list[RunInfo], rows: list[Row], paired: list[bool]) -> list[str]:
    """Per compared run not of the baseline's interleaved experiment with a significant row: the note that a
    change of the machine between the runs can look like one of the storage."""
    notes = []
    for i in range(1, len(infos)):
        if paired[i] or not any(
            row.deltas[i] is not None and row.deltas[i].significance == wording.SIGNIFICANT for row in rows
        ):
            continue
        notes.append(
            f"runs {infos[0].name} and {infos[i].name} were made at different times, not interleaved: a "
            f"change in the machine between them can look like a change in the storage (storbench run "
            f"{infos[0].suite} --target A --target B interleaves them)"
        )
    return notes


def _build_rows(runs: list[Run], paired: list[bool] | None = None) -> list[Row]:
    """The rows of every (workload, phase, metric, labels), the noise sentinel's (``noise_*``) left out: they
    say what else the machine did, not what the storage did, and are neither tested nor headlines."""
    paired = paired or [False] * len(runs)
    # (workload, phase, metric, labels) -> run index -> [(repetition, value)]
    series: dict[tuple, dict[int, list[tuple[int, float | None]]]] = {}
    units: dict[tuple, str] = {}
    for index, run in enumerate(runs):
        for s in run.samples:
            if s.metric.startswith(NOISE_PREFIX):
                continue
            key = (s.workload, PREPARE if s.repetition == 0 else TIMED, s.metric, tuple(sorted(s.labels.items())))
            series.setdefault(key, {}).setdefault(index, []).append((s.repetition, s.value))
            units.setdefault(key, s.unit)
    workloads = list(dict.fromkeys((k[0], k[1]) for k in series))
    catalog = list(CATALOG)
    order = {m: i for i, m in enumerate(dict.fromkeys(catalog + [k[2] for k in series]))}
    # Within a workload its headline leads (in the order it declares), then the catalog's order (time, devices...).
    leads = {name: {m: i for i, m in enumerate(headline(name))} for name, _ in workloads}
    keys = sorted(
        series,
        key=lambda k: (workloads.index((k[0], k[1])), leads[k[0]].get(k[2], len(leads[k[0]])), order[k[2]], k[3]),
    )

    among = {}  # per overall key, the workloads it is taken over (their families' direction holds for it)
    for metric in [m for m in order if m in CATALOG and CATALOG[m].overall]:
        timed = [k for k in keys if k[1] == TIMED and k[2] == metric and not k[3]]
        if len({k[0] for k in timed}) < 2:
            continue
        key = (OVERALL_WORKLOAD, OVERALL, metric, ())
        among[key] = [k[0] for k in timed]
        units[key] = units[timed[0]]
        for index in range(len(runs)):
            by_rep: dict[int, list[float | None]] = {}
            for k in timed:
                for rep, value in series[k].get(index, []):
                    by_rep.setdefault(rep, []).append(value)
            if by_rep:
                rule = CATALOG[metric].aggregation
                series.setdefault(key, {})[index] = [(r, aggregate(v, rule)) for r, v in by_rep.items()]
        keys.append(key)

    rows = []
    for key in keys:
        workload, phase, metric, labels = key
        spec = spec_in(among.get(key, [workload]), metric, units[key])
        cells = [_cell(i, series[key].get(i, []), spec.aggregation) for i in range(len(runs))]
        deltas = [None] + [_delta(i, spec, cells[0], cells[i], paired[i]) for i in range(1, len(runs))]
        rows.append(Row(workload, phase, metric, dict(labels), spec, units[key] or spec.unit, cells, deltas))
    return rows


def compare_runs(runs: list[Run]) -> Comparison:
    """Compare ``runs``; the first is the baseline. One run gives a summary without deltas."""
    if not runs:
        raise ValueError("compare_runs: no runs given")
    infos = [_run_info(i, run, name) for i, (run, name) in enumerate(zip(runs, _names(runs)))]
    paired = _paired(runs)
    rows = _build_rows(runs, paired)
    energy_note = mark_energy_rows(runs, [info.name for info in infos], rows)  # before headlines: none from them
    tested = _adjust(rows, len(runs))  # after the energy rows' refusals: those are not tested
    notes = _not_interleaved(infos, rows, paired) + _cold_starts(runs, infos, rows)
    return Comparison(
        infos, rows, _differences(runs), headline_sentences(infos, rows), list(runs), energy_note, notes, tested
    )

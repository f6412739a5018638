"""Compare stored runs: per (workload, metric) statistics, deltas against the baseline in
the papers' words, a significance verdict, headlines and a "not comparable" check.

The first run is the baseline; every other run is compared with it. Deltas are
``new / old - 1`` said as in paper 000 (see :mod:`storbench.analysis.wording`):
"190% higher" throughput, "99% lower" latency, "17% faster" = 17% less time.

Rows come in three phases: ``prepare`` (repetition 0, once-only steps such as
datagen), ``timed`` (repetitions >= 1) and ``overall`` — one figure over all timed
operations per repetition, for the metrics paper 000 summarises that way (maximum
throughput and CPU, average latency; ``MetricSpec.overall``).
"""

from __future__ import annotations

from typing import Any

from storbench.analysis import wording
from storbench.analysis.energy import mark_energy_rows, run_scope
from storbench.analysis.model import (OVERALL, OVERALL_WORKLOAD, PREPARE, TIMED, Cell, Comparison,
                                           Delta, Difference, Headline, Row, RunInfo)
from storbench.analysis.metrics import CATALOG, headline, spec_in
from storbench.analysis.stats import aggregate, summarize, welch_t_test
from storbench.redaction import redact_url
from storbench.results.metrics import MetricSpec
from storbench.results.model import Run

__all__ = ["compare_runs", "Comparison", "RunInfo", "Row", "Cell", "Delta", "Difference", "Headline",
           "PREPARE", "TIMED", "OVERALL", "OVERALL_WORKLOAD"]

MAX_HEADLINES_PER_RUN = 12
# "window": the conditions a workload's windows ran under (the manifest's window_rules: flush, cache, checksum)
_DIFFERENCE_KINDS = ("suite", "scale", "workload_version", "parameter", "workload_parameter", "window")


def _run_info(index: int, run: Run, name: str) -> RunInfo:
    m = run.manifest
    machine = dict(m.get("machine") or {})
    settings = m.get("spark_settings") or {}
    config = m.get("config") or {}
    target = config.get("target")  # credentials never reach reports
    return RunInfo(
        index=index, run_id=run.run_id, label=run.label, name=name, suite=run.suite, paper=m.get("paper"),
        status=run.status, started=run.started, finished=run.finished, scale=m.get("scale"),
        repetitions=m.get("repetitions"), target=target and redact_url(target), parameters=run.parameters,
        workload_versions=run.workload_versions,
        machine={k: machine.get(k) for k in ("hostname", "cpu_model", "cores", "memory_gb", "kernel", "os",
                                             "filesystem", "devices")},
        software=dict(m.get("software") or {}),
        # Only the settings a report shows: spark_settings can hold credentials (s3a keys).
        spark={"master": config.get("spark_master") or settings.get("spark.master"),
               "driver_memory": settings.get("spark.driver.memory"),
               "executor_memory": settings.get("spark.executor.memory")},
        errors=list(m.get("errors") or []), telemetry_interval_s=config.get("telemetry_interval_s"),
        replication=config.get("replication"), warmup=int(m.get("warmup") or 0),
        window_rules=dict(m.get("window_rules") or {}), zoned=config.get("zoned") or None,
        power_scope=run_scope(m))


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
    return Cell(index, [r for r, _ in points], values, aggregate(values, rule), s.n, s.min, s.median, s.max,
                s.mean, s.stdev)


def _delta(index: int, spec: MetricSpec, base: Cell, cell: Cell) -> Delta:
    rel = wording.relative_change(cell.aggregate, base.aggregate)
    test = None
    if cell.n >= wording.MIN_REPETITIONS and base.n >= wording.MIN_REPETITIONS:
        test = welch_t_test(cell.values, base.values)
    return Delta(index, rel, None if rel is None else rel * 100.0, wording.delta_words(spec, rel),
                 wording.verdict(spec, rel), wording.factor_words(spec, cell.aggregate, base.aggregate),
                 test.t if test else None, test.df if test else None, test.p_value if test else None,
                 wording.significance(test, cell.n, base.n))


def _build_rows(runs: list[Run]) -> list[Row]:
    # (workload, phase, metric, labels) -> run index -> [(repetition, value)]
    series: dict[tuple, dict[int, list[tuple[int, float | None]]]] = {}
    units: dict[tuple, str] = {}
    for index, run in enumerate(runs):
        for s in run.samples:
            key = (s.workload, PREPARE if s.repetition == 0 else TIMED, s.metric, tuple(sorted(s.labels.items())))
            series.setdefault(key, {}).setdefault(index, []).append((s.repetition, s.value))
            units.setdefault(key, s.unit)
    workloads = list(dict.fromkeys((k[0], k[1]) for k in series))
    catalog = list(CATALOG)
    order = {m: i for i, m in enumerate(dict.fromkeys(catalog + [k[2] for k in series]))}
    # Within a workload its headline leads (in the order it declares), then the catalog's order (time, devices...).
    leads = {name: {m: i for i, m in enumerate(headline(name))} for name, _ in workloads}
    keys = sorted(series, key=lambda k: (workloads.index((k[0], k[1])), leads[k[0]].get(k[2], len(leads[k[0]])),
                                         order[k[2]], k[3]))

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
        deltas = [None] + [_delta(i, spec, cells[0], cells[i]) for i in range(1, len(runs))]
        rows.append(Row(workload, phase, metric, dict(labels), spec, units[key] or spec.unit, cells, deltas))
    return rows


def _change(row: Row, i: int) -> Delta | None:
    """The row's delta of run ``i`` against the baseline when it is a change (better or worse)."""
    delta = row.deltas[i]
    return delta if delta is not None and delta.verdict in ("better", "worse") else None


def _headlines(runs: list[RunInfo], rows: list[Row]) -> list[Headline]:
    """Per compared run: each time-to-complete difference and, per other metric, its overall
    figure (or its largest per-operation difference) — significant ones only; a pair of runs
    with too few repetitions for a test gets its candidates marked "(too few repetitions)"."""
    out: list[Headline] = []
    for i in range(1, len(runs)):
        picked: list[tuple[Row, Delta]] = []
        for metric in dict.fromkeys(r.metric for r in rows):
            cands = [(r, change) for r in rows if r.metric == metric and r.phase != PREPARE and not r.labels
                     for change in [_change(r, i)] if change is not None]
            overall = [(r, change) for r, change in cands if r.phase == OVERALL]
            if metric == "completion_time" or metric in wording.READ_AND_RAN:  # every workload's
                picked.extend(cands)
            elif overall:
                picked.append(overall[0])
            elif cands:
                picked.append(max(cands, key=lambda pair: abs(pair[1].rel or 0)))
        # The paper's own sentences first (metrics said words-first, paper 004's "58% higher average IOPS"), then
        # what each family leads with (Workload.headline), then its snapshot (paper 000's figures over all
        # operations), then per operation, in catalog order.
        rank = {m: k for k, m in enumerate(dict.fromkeys(list(CATALOG) + [r.metric for r in rows]))}
        leads = _lead_ranks(rows)
        picked.sort(key=lambda pair: (not pair[0].spec.words_first, leads(pair[0]) is None, pair[0].phase != OVERALL,
                                      leads(pair[0]) or 0, rank[pair[0].metric], rows.index(pair[0])))
        significant = [pair for pair in picked if pair[1].significance == wording.SIGNIFICANT]
        few = [pair for pair in picked if pair[1].significance == wording.TOO_FEW]
        chosen, suffix = (significant, "") if significant else (few, " (too few repetitions)")
        chosen, said_together = _read_and_ran(chosen, rows, i)
        for row, delta in chosen[:MAX_HEADLINES_PER_RUN]:
            if id(row) in said_together:  # "skipping-join read 14× fewer bytes and ran 6.0× faster"
                time_row, time_delta = said_together[id(row)]
                noise = " (the time may be noise)" if time_delta.significance == wording.NOISE else ""
                text = wording.read_and_ran(row.workload, row.spec, delta.rel or 0.0, time_row.spec,
                                            time_delta.rel or 0.0) + noise + suffix
                out.append(Headline(i, f"{runs[i].name} vs {runs[0].name}: {text}", row.workload,
                                    text.removeprefix(f"{row.workload} "), row.workload, row.metric,
                                    delta.significance))
                continue
            subject = wording.lower_first(row.spec.title)
            words = delta.words + suffix
            said = wording.phrase(row.spec, subject, delta.words) + suffix
            if row.phase != OVERALL:  # "groupby maximum read throughput ...", "groupby: 16× more operations ..."
                said = f"{row.workload} {said}" if said.startswith(subject) else f"{row.workload}: {said}"
                subject = f"{row.workload} {subject}"
            if row.scope_words:  # an energy figure says what it covers
                said, subject = f"{said} [{row.scope_words}]", f"{subject} [{row.scope_words}]"
            text = f"{runs[i].name} vs {runs[0].name}: {said}"
            out.append(Headline(i, text, subject, words, row.workload, row.metric, delta.significance))
    return out


def _lead_ranks(rows: list[Row]):
    """A row's place in its workload's headline (Workload.headline), None when its workload does not lead with it;
    an overall row's is its metric's first place in any of the compared workloads' headlines."""
    workloads = list(dict.fromkeys(row.workload for row in rows if row.phase != OVERALL))

    def place(row: Row) -> int | None:
        leads = [headline(w) for w in workloads] if row.phase == OVERALL else [headline(row.workload)]
        return min((lead.index(row.metric) for lead in leads if row.metric in lead), default=None)

    return place


def _read_and_ran(chosen: list[tuple[Row, Delta]], rows: list[Row],
                  i: int) -> tuple[list[tuple[Row, Delta]], dict[int, tuple[Row, Delta]]]:
    """Each bytes-read headline said with its workload's time when that changed too, even by noise
    (wording.READ_AND_RAN): the headlines left (the time's own dropped) and, by the bytes row's id, the time's."""
    read_metric, time_metric = wording.READ_AND_RAN
    times = {(row.workload, row.phase): (row, change) for row in rows if row.metric == time_metric
             and not row.labels for change in [_change(row, i)] if change is not None}
    together = {id(row): times[(row.workload, row.phase)] for row, _ in chosen
                if row.metric == read_metric and (row.workload, row.phase) in times}
    folded = {id(time_row) for time_row, _ in together.values()}
    return [pair for pair in chosen if id(pair[0]) not in folded], together


def compare_runs(runs: list[Run]) -> Comparison:
    """Compare ``runs``; the first is the baseline. One run gives a summary without deltas."""
    if not runs:
        raise ValueError("compare_runs: no runs given")
    infos = [_run_info(i, run, name) for i, (run, name) in enumerate(zip(runs, _names(runs)))]
    rows = _build_rows(runs)
    energy_note = mark_energy_rows(runs, [info.name for info in infos], rows)  # before headlines: none from them
    return Comparison(infos, rows, _differences(runs), _headlines(infos, rows), list(runs), energy_note)

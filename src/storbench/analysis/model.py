"""The comparison data model that :func:`storbench.analysis.compare.compare_runs` builds
and every report renders. Plain dataclasses; :meth:`Comparison.to_dict` is the JSON form."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any

from storbench.analysis import wording
from storbench.analysis.metrics import CATALOG, headline
from storbench.results.metrics import MetricSpec
from storbench.results.model import Run

PREPARE, TIMED, OVERALL = "prepare", "timed", "overall"
OVERALL_WORKLOAD = "all operations"


@dataclass
class RunInfo:
    """What a report says about one run: identity, status and its configuration."""

    index: int
    run_id: str
    label: str
    name: str  # the label, with the run id added when two compared runs share a label
    suite: str
    paper: str | None
    status: str
    started: str
    finished: str | None
    scale: str | None
    repetitions: int | None
    target: str | None
    parameters: dict[str, Any]
    workload_versions: dict[str, Any]
    machine: dict[str, Any]
    software: dict[str, Any]
    engine_settings: dict[str, dict[str, Any]]  # {engine: the settings a report shows of it} (engines.reported)
    errors: list[dict[str, Any]] = field(default_factory=list)
    telemetry_interval_s: float | None = None  # every telemetry-derived metric was sampled at this interval
    replication: int | None = None
    warmup: int = 0  # unrecorded repetitions before the recorded ones (--warmup)
    # per workload, the conditions its windows ran under (flush: how the data was made durable or "off")
    window_rules: dict[str, dict[str, str]] = field(default_factory=dict)
    # the stack under the target and its zoned models (config "zoned"); None for runs that did not record it
    zoned: dict[str, Any] | None = None
    power_scope: str | None = None  # what its energy figures cover ("CPU package (RAPL)"); None: no power measured
    # the interleaved experiment it is one configuration of (the manifest's experiment record); None: a run alone
    experiment: dict[str, Any] | None = None
    repeat_auto: dict[str, Any] | None = None  # --repeat auto: its bounds and why it stopped; None: a fixed count

    @property
    def design(self) -> str | None:
        """ "interleaved: a, b (experiment ID, alternate order, 3 rounds)", the same for every run of the
        experiment; None for a run alone."""
        record = self.experiment
        if not record:
            return None
        return (
            f"interleaved: {', '.join(record.get('labels') or [])} (experiment {record.get('id')}, "
            f"{record.get('order_policy')} order, {len(record.get('order') or [])} rounds)"
        )

    @property
    def problem(self) -> str | None:
        """Why this run's figures may be incomplete (failed, interrupted, still running), else None."""
        if self.status == "succeeded":
            return None
        first = f": {self.errors[0].get('error')}" if self.errors else ""
        return f"run {self.name} ({self.run_id}) {self.status}; its results may be incomplete{first}"


@dataclass
class Cell:
    """One run's values of one row, their aggregate by the metric's rule and their spread."""

    run_index: int
    repetitions: list[int]
    values: list[float | None]
    aggregate: float | None
    n: int
    min: float | None
    median: float | None
    max: float | None
    mean: float | None
    stdev: float | None


@dataclass
class Delta:
    """A compared run against the baseline for one row."""

    run_index: int
    rel: float | None  # new / old - 1 of the aggregates; paired (interleaved) runs: of the rounds' geometric mean
    pct: float | None  # rel * 100
    words: str  # "190% higher", "17% faster", "no change", "n/a"
    verdict: str  # "better" | "worse" | "no change" | "n/a"
    factor_words: str | None  # "2.9× higher" when one side is at least twice the other
    t: float | None
    df: float | None
    p_value: float | None
    significance: str  # "significant" | "may be noise" | "too few repetitions" | "n/a" (by q_value once adjusted)
    # The statistics of the tested quantity (analysis.stats.RatioTest); all None when no test was possible.
    ratio: float | None = None  # new / old of the aggregates (1 + rel)
    ci_low: float | None = None  # 95% CI on the ratio of the tested quantity: paired, the geometric mean of the
    ci_high: float | None = None  # per-round ratios; Welch, the ratio of the means (Fieller); None: unbounded
    mde_pct: float | None = None  # the smallest change (%) the test detects at alpha 0.05 with 80% power
    test: str | None = None  # "paired" (log ratios of the rounds of one interleaved experiment) | "welch" | None
    q_value: float | None = None  # Benjamini–Hochberg over every tested row of this run vs the baseline

    @property
    def interval(self) -> str | None:
        """ "95% CI +47% to +53%, paired, detects ≥4%", or None without a test."""
        return wording.interval_words(
            self.ci_low, self.ci_high, self.test, factor="×" in self.words, mde_pct=self.mde_pct
        )

    @property
    def marker(self) -> str:
        return wording.MARKERS[self.significance]


@dataclass
class Row:
    workload: str
    phase: str  # prepare | timed | overall
    metric: str
    labels: dict[str, str]
    spec: MetricSpec
    unit: str
    cells: list[Cell]  # one per run, in run order
    deltas: list[Delta | None]  # one per run; None for the baseline
    scopes: list[str | None] | None = None  # energy rows: each run's power scope (analysis.energy); else None

    @property
    def group(self) -> str:
        return f"{self.workload} (prepare)" if self.phase == PREPARE else self.workload

    @property
    def title(self) -> str:
        extra = ", ".join(f"{k}={v}" for k, v in sorted(self.labels.items()))
        title = f"{self.spec.title} [{extra}]" if extra else self.spec.title
        return f"{title} [{self.scope_words}]" if self.scope_words else title

    @property
    def scope_words(self) -> str | None:
        """ "scope: CPU package (RAPL)" for an energy row, or each scope when its runs' differ; else None."""
        said = list(dict.fromkeys(s for s in self.scopes or [] if s))
        if not said:
            return None
        return f"scope: {said[0]}" if len(said) == 1 else f"scopes differ: {' / '.join(said)}"


@dataclass
class Difference:
    """One key in which a compared run differs from the baseline (values in run order)."""

    kind: str  # suite | scale | workload_version | parameter | workload_parameter
    key: str
    values: list[Any]


@dataclass
class Headline:
    run_index: int
    text: str  # "ssd-b vs ssd-a: groupby maximum read throughput 190% higher"
    subject: str  # "groupby maximum read throughput"
    words: str  # "190% higher" (plus " (too few repetitions)" when no test was possible)
    workload: str
    metric: str
    significance: str
    interval: str | None = None  # "95% CI +47% to +53%, paired" (text ends with it in parentheses), None untested


@dataclass
class Comparison:
    runs: list[RunInfo]
    rows: list[Row]
    differences: list[Difference]
    headlines: list[Headline]
    source_runs: list[Run] = field(default_factory=list, repr=False)
    energy_note: str | None = None  # why energy rows are not compared (analysis.energy), or None
    design_notes: list[str] = field(default_factory=list)  # runs not interleaved, cold first repetitions
    tested: list[int] = field(default_factory=list)  # per run, the rows Benjamini–Hochberg ran over (baseline 0)

    @property
    def baseline(self) -> RunInfo:
        return self.runs[0]

    @property
    def comparable(self) -> bool:
        return not self.differences or self.one_setting is not None

    @property
    def one_setting(self) -> str | None:
        """The parameter name when the runs differ in that one parameter only (suite-wide and per workload) and
        it is a choice (a mode, a committer), not a number: runs of different sizes stay NOT COMPARABLE."""
        names = {
            d.key.rpartition(".")[2] if d.kind == "workload_parameter" else d.key
            for d in self.differences
            if d.kind in ("parameter", "workload_parameter")
        }
        kinds_ok = all(d.kind in ("parameter", "workload_parameter") for d in self.differences)
        values = {tuple(map(str, d.values)) for d in self.differences}
        numbers = any(
            isinstance(v, (int, float)) and not isinstance(v, bool) for d in self.differences for v in d.values
        )
        one = self.differences and kinds_ok and len(names) == 1 and len(values) == 1 and not numbers
        return names.pop() if one else None

    @property
    def warnings(self) -> list[str]:
        notes = []
        setting = self.one_setting
        if setting:  # an A/B of one setting (skipping off/on, a committer): what is compared, not a fault
            runs = " vs ".join(f"{_show(v)} ({r.name})" for v, r in zip(self.differences[0].values, self.runs))
            notes.append(f"the runs differ in one setting, the one compared: {setting}: {runs}")
        elif self.differences:
            parts = [
                f"{d.kind.replace('_', ' ')} {d.key}: "
                + " vs ".join(f"{_show(v)} ({r.name})" for v, r in zip(d.values, self.runs))
                for d in self.differences
            ]
            notes.append("NOT COMPARABLE: the runs differ in " + "; ".join(parts))
        if self.energy_note:
            notes.append(self.energy_note)
        notes.extend(run.problem for run in self.runs if run.problem)
        notes.extend(self.design_notes)
        from storbench.telemetry.power import power_notes  # here: telemetry.power is slow to import

        for info, run in zip(self.runs, self.source_runs):
            notes.extend(power_notes(run.manifest, info.name))
        from storbench.analysis import disturbance  # the machine was busy: the noise sentinel's windows

        notes.extend(disturbance.notes(self.source_runs, [r.name for r in self.runs]))
        return notes

    @property
    def marker_legend(self) -> str:
        """The significance legend, naming how many rows Benjamini–Hochberg ran over when one run is compared."""
        tested = self.tested[1] if len(self.tested) == 2 else None
        return wording.marker_legend(tested or None)  # none tested (too few repetitions): said generally

    def no_headline_text(self, i: int = 1) -> str:
        """What the headlines say when none is significant for run ``i``: "(no significant differences; changes
        under 6–41% (by metric) could not be told from noise with these repetitions)" over its tested rows that
        lead their workload (or all its tested rows when none of those was tested)."""

        def mdes(rows: list[Row]) -> list[float]:
            return [
                d.mde_pct
                for row in rows
                if row.phase != PREPARE
                for d in [row.deltas[i] if i < len(row.deltas) else None]
                if d is not None and d.mde_pct is not None
            ]

        # the rows each workload leads with (fio's carry its labels), else every tested row
        missed = wording.undetected_words(mdes([row for row in self.rows if self.leads(row)]) or mdes(self.rows))
        return f"(no significant differences; {missed})" if missed else "(no significant differences)"

    def groups(self) -> list[tuple[str, list[Row]]]:
        """Rows by workload (group title), in suite order; the overall group last."""
        out: dict[str, list[Row]] = {}
        for row in self.rows:
            out.setdefault(row.group, []).append(row)
        return list(out.items())

    def metrics(self) -> list[str]:
        """The metrics present, in catalog order (time, throughput, latency, CPU, ...), others after."""
        order = {name: i for i, name in enumerate(CATALOG)}
        present = list(dict.fromkeys(row.metric for row in self.rows))
        return sorted(present, key=lambda m: (order.get(m, len(order)), present.index(m)))

    def leads(self, row: Row) -> bool:
        """The row is one its workload's report leads with (``Workload.headline``; the overall group: paper 000's)."""
        return row.metric in headline(row.workload)

    def headline_metrics(self) -> list[str]:
        """The metrics some workload here leads with and a row has, workload by workload in their declared order."""
        present = {row.metric for row in self.rows}
        led = (m for workload in dict.fromkeys(row.workload for row in self.rows) for m in headline(workload))
        return [m for m in dict.fromkeys(led) if m in present]

    def to_dict(self) -> dict[str, Any]:
        rows = []
        for row in self.rows:
            rows.append(
                {
                    "workload": row.workload,
                    "phase": row.phase,
                    "metric": row.metric,
                    "labels": row.labels,
                    "title": row.title,
                    "unit": row.unit,
                    "direction": row.spec.direction,
                    "aggregation": row.spec.aggregation,
                    "cells": [asdict(c) for c in row.cells],
                    "deltas": [
                        None if d is None else {**asdict(d), "marker": d.marker, "interval": d.interval}
                        for d in row.deltas
                    ],
                    **({"power_scopes": row.scopes} if row.scopes is not None else {}),
                }
            )
        return {
            "schema": "storbench.comparison/2",
            "comparable": self.comparable,
            "warnings": self.warnings,
            "baseline": self.baseline.run_id,
            "runs": [_run_dict(r) for r in self.runs],
            "differences": [asdict(d) for d in self.differences],
            "headlines": [asdict(h) for h in self.headlines],
            "significance_legend": self.marker_legend,
            "rows": rows,
        }


def _show(value: Any) -> str:
    return "(missing)" if value is None else str(value)


def _run_dict(run: RunInfo) -> dict[str, Any]:
    """A run in the JSON form; a run without a recorded stack has no ``zoned`` key (as before it was recorded)."""
    data: dict[str, Any] = {}
    for key, value in {**asdict(run), "problem": run.problem}.items():  # each engine's settings under its own
        data.update(value if key == "engine_settings" else {key: value})  # name, where the JSON form has them
    if run.zoned is None:
        del data["zoned"]
    if run.power_scope is None:  # as before scopes were shown: runs without power keep their JSON
        del data["power_scope"]
    for key in ("experiment", "repeat_auto"):  # runs alone, with a fixed count, keep their JSON
        if data[key] is None:
            del data[key]
    return data

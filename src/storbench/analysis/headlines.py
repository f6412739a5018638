"""The headline sentences of a comparison: per run, the rows whose change is significant, the workload's own
headline figures first, in the paper's words; a read that ran faster said together with its time."""

from __future__ import annotations


from storbench.analysis import wording
from storbench.analysis.model import (
    OVERALL,
    PREPARE,
    Delta,
    Headline,
    Row,
    RunInfo,
)
from storbench.analysis.metrics import CATALOG, headline


MAX_HEADLINES_PER_RUN = 12


def _change(row: Row, i: int) -> Delta | None:
    """The row's delta of run ``i`` against the baseline when it is a change (better or worse)."""
    delta = row.deltas[i]
    return delta if delta is not None and delta.verdict in ("better", "worse") else None


def headline_sentences(runs: list[RunInfo], rows: list[Row]) -> list[Headline]:
    """Per compared run: each time-to-complete difference and, per other metric, its overall
    figure (or its largest per-operation difference) — significant ones only; a pair of runs
    with too few repetitions for a test gets its candidates marked "(too few repetitions)"."""
    out: list[Headline] = []
    for i in range(1, len(runs)):
        picked: list[tuple[Row, Delta]] = []
        for metric in dict.fromkeys(r.metric for r in rows):
            cands = [
                (r, change)
                for r in rows
                if r.metric == metric and r.phase != PREPARE and not r.labels
                for change in [_change(r, i)]
                if change is not None
            ]
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
        picked.sort(
            key=lambda pair: (
                not pair[0].spec.words_first,
                leads(pair[0]) is None,
                pair[0].phase != OVERALL,
                leads(pair[0]) or 0,
                rank[pair[0].metric],
                rows.index(pair[0]),
            )
        )
        significant = [pair for pair in picked if pair[1].significance == wording.SIGNIFICANT]
        few = [pair for pair in picked if pair[1].significance == wording.TOO_FEW]
        chosen, suffix = (significant, "") if significant else (few, " (too few repetitions)")
        chosen, said_together = _read_and_ran(chosen, rows, i)
        for row, delta in chosen[:MAX_HEADLINES_PER_RUN]:
            if id(row) in said_together:  # "skipping-join read 14× fewer bytes and ran 6.0× faster"
                time_row, time_delta = said_together[id(row)]
                noise = " (the time may be noise)" if time_delta.significance == wording.NOISE else ""
                text = (
                    wording.read_and_ran(row.workload, row.spec, delta.rel or 0.0, time_row.spec, time_delta.rel or 0.0)
                    + noise
                    + suffix
                )
                interval = _read_and_ran_interval(delta, time_delta)
                said = f"{text} ({interval})" if interval else text
                out.append(
                    Headline(
                        i,
                        f"{runs[i].name} vs {runs[0].name}: {said}",
                        row.workload,
                        text.removeprefix(f"{row.workload} "),
                        row.workload,
                        row.metric,
                        delta.significance,
                        interval,
                    )
                )
                continue
            subject = wording.lower_first(row.spec.title)
            words = delta.words + suffix
            said = wording.phrase(row.spec, subject, delta.words) + suffix
            if row.phase != OVERALL:  # "groupby maximum read throughput ...", "groupby: 16× more operations ..."
                said = f"{row.workload} {said}" if said.startswith(subject) else f"{row.workload}: {said}"
                subject = f"{row.workload} {subject}"
            if row.scope_words:  # an energy figure says what it covers
                said, subject = f"{said} [{row.scope_words}]", f"{subject} [{row.scope_words}]"
            interval = delta.interval if delta.significance == wording.SIGNIFICANT else None
            text = f"{runs[i].name} vs {runs[0].name}: {said}" + (f" ({interval})" if interval else "")
            out.append(Headline(i, text, subject, words, row.workload, row.metric, delta.significance, interval))
    return out


def _read_and_ran_interval(read: Delta, time: Delta) -> str | None:
    """ "95% CI -93% to -92% bytes, -84% to -82% time, Welch": both intervals of a read-and-ran sentence (the time's
    only when it is significant too)."""
    if read.significance != wording.SIGNIFICANT or read.test is None:
        return None
    parts, tests = [], [read.test]
    for delta, what in ((read, "bytes"), (time, "time")):
        if delta.significance != wording.SIGNIFICANT or delta.test is None:
            continue
        tests.append(delta.test)
        if delta.ci_low is None or delta.ci_high is None:
            parts.append(f"unbounded {what}")
        else:
            factor = delta.ratio is not None and (delta.ratio >= 2.0 or delta.ratio <= 0.5)  # as read_and_ran says it
            low, high = wording.interval_bounds(delta.ci_low, delta.ci_high, factor)
            parts.append(f"{low} to {high} {what}")
    names = "/".join(wording.TEST_WORDS[t] for t in dict.fromkeys(tests))
    return f"95% CI {', '.join(parts)}, {names}"


def _lead_ranks(rows: list[Row]):
    """A row's place in its workload's headline (Workload.headline), None when its workload does not lead with it;
    an overall row's is its metric's first place in any of the compared workloads' headlines."""
    workloads = list(dict.fromkeys(row.workload for row in rows if row.phase != OVERALL))

    def place(row: Row) -> int | None:
        leads = [headline(w) for w in workloads] if row.phase == OVERALL else [headline(row.workload)]
        return min((lead.index(row.metric) for lead in leads if row.metric in lead), default=None)

    return place


def _read_and_ran(
    chosen: list[tuple[Row, Delta]], rows: list[Row], i: int
) -> tuple[list[tuple[Row, Delta]], dict[int, tuple[Row, Delta]]]:
    """Each bytes-read headline said with its workload's time when that changed too, even by noise
    (wording.READ_AND_RAN): the headlines left (the time's own dropped) and, by the bytes row's id, the time's."""
    read_metric, time_metric = wording.READ_AND_RAN
    times = {
        (row.workload, row.phase): (row, change)
        for row in rows
        if row.metric == time_metric and not row.labels
        for change in [_change(row, i)]
        if change is not None
    }
    together = {
        id(row): times[(row.workload, row.phase)]
        for row, _ in chosen
        if row.metric == read_metric and (row.workload, row.phase) in times
    }
    folded = {id(time_row) for time_row, _ in together.values()}
    return [pair for pair in chosen if id(pair[0]) not in folded], together

"""The side-by-side of a comparison and a paper's published figures (analysis.published): terminal
text, the baselines listing, and the HTML report's section (a paper suite's runs, its own paper).

Every published figure is labelled as such (analysis.published.LABEL) and the paper's hardware is
shown beside the runs'. Each figure says its scope (what it covers: a cluster, a node, per server) and
the scale it was measured at beside each run's scale; a run's figure is divided by a published one only
for a quantity that does not grow with the data (analysis.published.scale_free); a row that measures an
analog of the paper's quantity (paper 004's rados bench beside fio on a zoned device) says so.
"""

from __future__ import annotations

from storbench.analysis.model import Comparison
from storbench.analysis.published import LABEL, Beside, Published, factor, published, scale_free
from storbench.baselines import Figure, load, papers
from storbench.report import _format as f
from storbench.report.svg import esc

HARDWARE = ("CPU", "Cores", "Memory", "Devices", "Filesystem", "Replication", "Kernel")


def _columns(rows: list[list[str]]) -> list[str]:
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]))]
    return ["  ".join(cell.ljust(w) for cell, w in zip(row, widths)).rstrip() for row in rows]


ANALOG = "analog only"


def _sizes(run: object) -> tuple[str | None, dict[str, object]]:
    """A run's scale name and the sizes it set (its recorded parameters over its suite's scale)."""
    name = getattr(run, "scale", None)
    recorded = getattr(run, "parameters", None) or {}
    try:
        from storbench.suites.loader import load_suite

        suite = load_suite(getattr(run, "suite", None))
        shown, values = suite.scale_values(name)
        keys = suite.sizes or [suite.scale_parameter]
    except Exception:  # noqa: BLE001 — a run of a suite this version does not ship: what it recorded
        return name, {}
    return shown, {k: recorded.get(k, values[k]) for k in keys if k in values or k in recorded}


def run_scale(run: object) -> str:
    """A run's scale as its suite defines it: "tiny (rows=1,000,000, partitions=4)"; the name alone when unknown."""
    shown, sizes = _sizes(run)
    said = ", ".join(f"{k}={v:,}" if isinstance(v, int) else f"{k}={v}" for k, v in sizes.items())
    return f"{shown} ({said})" if shown and said else shown or "not recorded"


def scope(p: Published, figure: Figure) -> str:
    return figure.scope or p.paper.scope or "not stated"


def paper_scale(p: Published, figure: Figure) -> str:
    return figure.scale or p.paper.scale or "not stated"


def quotient(p: Published, b: Beside, run: object) -> str:
    """Yours ÷ published for a quantity that does not grow with the data (a rate, a latency); for one that
    does (a time), per unit of data when the paper states its size in the run's terms ("per row"); else n/a."""
    if b.analog:
        return f"n/a ({ANALOG})"
    value = b.yours[0]
    if scale_free(b.row.unit):
        return factor(_div(value, b.published))
    sizes = _sizes(run)[1]
    for key, theirs in p.paper.size.items():
        mine = sizes.get(key)
        if isinstance(mine, (int, float)) and mine > 0 and theirs > 0 and value is not None:
            return f"{factor(_div(value / mine, b.published / theirs))} per {key.removesuffix('s')}"
    return "n/a (grows with the data)"


def _where(figure: Figure) -> str:
    return f"paper {figure.paper}, {figure.where}"


def hardware(c: Comparison, p: Published) -> list[tuple[str, str]]:
    """(who, hardware) for each run (from its manifest) and each paper configuration shown."""
    facts = {name: values for name, values, _ in f.configuration(c) if name in HARDWARE}
    out = [
        (
            f"yours, {run.name}",
            "; ".join(
                f"{name}: {facts[name][run.index]}" for name in HARDWARE if name in facts and facts[name][run.index]
            )
            or "not recorded",
        )
        for run in c.runs
    ]
    out += [
        (f"paper {p.paper.paper}, {p.paper.configurations[k].name}", p.paper.configurations[k].hardware)
        for k in p.configurations
    ]
    return out


def _ratio_parts(c: Comparison, p: Published) -> list[tuple[str, str, str, str]]:
    """(yours, theirs, paper's words, source) per ratio line."""
    out = []
    for r in p.ratios:
        new, base = (p.paper.configurations[k].name for k in r.pair)
        what = f"{r.row.title} ({r.row.workload})" + (
            f" [{ANALOG}: the paper's is {r.figures[0].quantity}]" if r.analog else ""
        )
        yours = f"your {c.runs[r.run_index].name} vs {c.baseline.name}: {factor(r.yours)} {what}"
        theirs = f"paper {p.paper.paper}, {new} vs {base}: {factor(r.paper)}"
        said = f"“{r.figures[0].change}”" if r.figures[0].kind == "ratio" else "from its two figures"
        out.append((yours, theirs, said, "; ".join(dict.fromkeys(x.where for x in r.figures))))
    return out


def text(c: Comparison, p: Published) -> str:
    """The terminal side-by-side."""
    paper = p.paper
    lines = ["", f"Published figures: paper {paper.paper}, {paper.title} ({paper.publisher})", f"  {LABEL}"]
    lines += [f"  {line}" for line in p.foreign]
    lines += [f"  scale: yours, {r.name}: {run_scale(r)}" for r in c.runs]
    if p.absolutes:
        single = len(c.runs) == 1
        head = [
            "WORKLOAD",
            "METRIC",
            "UNIT",
            *(f"YOURS: {r.name}" for r in c.runs),
            "PUBLISHED",
            "CONFIGURATION",
            "SCOPE",
            "PAPER'S SCALE",
            *(["YOURS ÷ PUBLISHED"] if single else []),
            "SOURCE",
        ]
        rows = [head]
        for b in p.absolutes:
            conf = paper.configurations[b.figure.configuration or ""].name
            mine = [f.num(v) if v is not None else "—" for v in b.yours]
            title = f"{b.row.title} [{ANALOG}]" if b.analog else b.row.title
            rows.append(
                [
                    b.row.workload,
                    title,
                    b.row.unit,
                    *mine,
                    b.figure.shown,
                    conf,
                    scope(p, b.figure),
                    paper_scale(p, b.figure),
                    *([quotient(p, b, c.runs[0])] if single else []),
                    b.figure.where,
                ]
            )
        lines += ["", *("  " + line for line in _columns(rows))]
    if p.ratios:
        lines += ["", "Ratios between your runs beside the paper's (new ÷ baseline; your first run is the baseline)"]
        lines += [f"  {yours}; {theirs} ({said}, {where})" for yours, theirs, said, where in _ratio_parts(c, p)]
        lines += [
            f"  paper {paper.paper}'s scope: {paper.scope or 'not stated'}; its scale: {paper.scale or 'not stated'}"
        ]
    elif len(c.runs) == 1 and paper.comparisons:
        lines += ["", f"  The paper's ratios need two runs: storbench compare RUN_A RUN_B --paper {paper.paper}"]
    lines += ["", "Hardware"] + [f"  {who}: {what}" for who, what in hardware(c, p)]
    notes = p.missing + (
        [
            f"{len(p.unmeasured)} published figures have no storbench metric: "
            f"storbench baselines {paper.paper} lists them"
        ]
        if p.unmeasured
        else []
    )
    if notes:
        lines += ["", "Notes"] + [f"  {note}" for note in notes]
    return "\n".join(lines)


def _div(a: float | None, b: float | None) -> float | None:
    return None if a is None or b is None or b == 0 else a / b


def listing(paper: str | None = None) -> str:
    """`storbench baselines [PAPER]`: every published figure, in a terminal table."""
    out = []
    for name in [paper] if paper else papers():
        p = load(name)
        out += [f"paper {p.paper}: {p.title} ({p.publisher}); suites {', '.join(p.suites)}", f"  {LABEL}"]
        rows = [["FIGURE", "QUANTITY", "CONFIGURATION", "PUBLISHED", "STORBENCH", "WHERE"]]
        for fig in p.figures:
            conf = fig.configuration if fig.kind == "absolute" else " vs ".join(fig.of or ())
            measured = (
                ", ".join(
                    [
                        *(f"{w}: {m}" for w, m in fig.measures.items()),
                        *(f"{w}: {m} ({ANALOG})" for w, m in fig.analogs.items()),
                    ]
                )
                or "— (note below)"
            )
            rows.append([fig.id, fig.quantity, conf, fig.shown, measured, fig.where])
        out += ["  " + line for line in _columns(rows)]
        notes = [f"    {fig.id}: {fig.note}" for fig in p.figures if fig.note]
        out += ["  notes:", *notes] if notes else []
        out += ["  configurations:"] + [f"    {c.key}: {c.name}; {c.hardware}" for c in p.configurations.values()]
        out += [f"  scope: {p.scope or 'not stated'}; scale: {p.scale or 'not stated'}"]
        out += [
            f"    {fig.id}: {', '.join(x for x in (fig.scope and f'scope {fig.scope}', fig.scale and f'scale {fig.scale}') if x)}"
            for fig in p.figures
            if fig.scope or fig.scale
        ]
        out += [f"  setup: {p.setup}", ""]
    return "\n".join(out).rstrip()


def html_section(c: Comparison) -> str:
    """The HTML report's section for runs of one paper's suite ("" otherwise, or when nothing matches)."""
    names = {r.paper for r in c.runs}
    paper = next(iter(names)) if len(names) == 1 else None
    if paper not in papers():
        return ""
    p = published(c, load(paper), explicit=False)
    if not p.absolutes and not p.ratios:
        return ""
    parts = [
        f"<section><h2>Published figures: paper {esc(paper)}</h2>"
        f'<p class="sub">{esc(p.paper.title)} ({esc(p.paper.publisher)}). <b>{esc(LABEL)}.</b></p>'
    ]
    said = [*p.foreign, *(f"scale: yours, {r.name}: {run_scale(r)}" for r in c.runs)]
    parts.append("<p>" + "<br>".join(esc(line) for line in said) + "</p>")
    if p.absolutes:
        head = "".join(f'<th class="num">Yours: {esc(r.name)}</th>' for r in c.runs)
        body = "".join(
            f"<tr><td>{esc(b.row.workload)}</td>"
            f"<td>{esc(b.row.title + (f' [{ANALOG}]' if b.analog else ''))}</td><td>{esc(b.row.unit)}</td>"
            + "".join(f"<td class=num>{esc(f.num(v) if v is not None else '—')}</td>" for v in b.yours)
            + f"<td class=num>{esc(b.figure.shown)}</td>"
            f"<td>{esc(p.paper.configurations[b.figure.configuration or ''].name)}</td>"
            f"<td>{esc(scope(p, b.figure))}</td><td>{esc(paper_scale(p, b.figure))}</td>"
            f"<td>{esc(b.figure.where)}</td></tr>"
            for b in p.absolutes
        )
        parts.append(
            f"<table><thead><tr><th>Workload</th><th>Metric</th><th>Unit</th>{head}"
            f'<th class="num">Published</th><th>Paper configuration</th><th>Scope</th>'
            f"<th>Paper's scale</th><th>Source</th></tr></thead><tbody>{body}</tbody></table>"
        )
    if p.ratios:
        items = "".join(
            f"<li>{esc(yours)}; <b>{esc(theirs)}</b> ({esc(said)}, {esc(where)})</li>"
            for yours, theirs, said, where in _ratio_parts(c, p)
        )
        parts.append(f"<h3>Ratios between your runs beside the paper's</h3><ul>{items}</ul>")
    rows = "".join(f"<tr><th>{esc(who)}</th><td>{esc(what)}</td></tr>" for who, what in hardware(c, p))
    parts.append(f"<h3>Hardware</h3><table class=config><tbody>{rows}</tbody></table>")
    notes = "".join(f"<li>{esc(note)}</li>" for note in p.missing)
    parts.append(f'<ul class="muted">{notes}</ul></section>' if notes else "</section>")
    return "".join(parts)

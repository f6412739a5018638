"""The side-by-side of a comparison and a paper's published figures (analysis.published): terminal
text, the baselines listing, and the HTML report's section (a paper suite's runs, its own paper).

Every published figure is labelled as such (analysis.published.LABEL) and the paper's hardware is
shown beside the runs'.
"""

from __future__ import annotations

from storbench.analysis.model import Comparison
from storbench.analysis.published import LABEL, Published, factor, published
from storbench.baselines import Figure, Paper, load, papers
from storbench.report import _format as f
from storbench.report.svg import esc

HARDWARE = ("CPU", "Cores", "Memory", "Devices", "Filesystem", "Replication", "Kernel")


def _columns(rows: list[list[str]]) -> list[str]:
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]))]
    return ["  ".join(cell.ljust(w) for cell, w in zip(row, widths)).rstrip() for row in rows]


def _where(figure: Figure) -> str:
    return f"paper {figure.paper}, {figure.where}"


def hardware(c: Comparison, p: Published) -> list[tuple[str, str]]:
    """(who, hardware) for each run (from its manifest) and each paper configuration shown."""
    facts = {name: values for name, values, _ in f.configuration(c) if name in HARDWARE}
    out = [(f"yours, {run.name}", "; ".join(f"{name}: {facts[name][run.index]}" for name in HARDWARE
                                               if name in facts and facts[name][run.index]) or "not recorded")
           for run in c.runs]
    out += [(f"paper {p.paper.paper}, {p.paper.configurations[k].name}", p.paper.configurations[k].hardware)
            for k in p.configurations]
    return out


def _ratio_parts(c: Comparison, p: Published) -> list[tuple[str, str, str, str]]:
    """(yours, theirs, paper's words, source) per ratio line."""
    out = []
    for r in p.ratios:
        new, base = (p.paper.configurations[k].name for k in r.pair)
        what = f"{r.row.title} ({r.row.workload})"
        yours = f"your {c.runs[r.run_index].name} vs {c.baseline.name}: {factor(r.yours)} {what}"
        theirs = f"paper {p.paper.paper}, {new} vs {base}: {factor(r.paper)}"
        said = f"“{r.figures[0].change}”" if r.figures[0].kind == "ratio" else "from its two figures"
        out.append((yours, theirs, said, "; ".join(dict.fromkeys(x.where for x in r.figures))))
    return out


def text(c: Comparison, p: Published) -> str:
    """The terminal side-by-side."""
    paper = p.paper
    lines = ["", f"Published figures: paper {paper.paper}, {paper.title} ({paper.publisher})", f"  {LABEL}"]
    if p.absolutes:
        single = len(c.runs) == 1
        head = ["WORKLOAD", "METRIC", "UNIT", *(f"YOURS: {r.name}" for r in c.runs), "PUBLISHED", "CONFIGURATION",
                *(["YOURS ÷ PUBLISHED"] if single else []), "SOURCE"]
        rows = [head]
        for b in p.absolutes:
            conf = paper.configurations[b.figure.configuration or ""].name
            mine = [f.num(v) for v in b.yours]
            rows.append([b.row.workload, b.row.title, b.row.unit, *mine, b.figure.shown, conf,
                         *([factor(_div(b.yours[0], b.published))] if single else []), b.figure.where])
        lines += ["", *("  " + line for line in _columns(rows))]
    if p.ratios:
        lines += ["", "Ratios between your runs beside the paper's (new ÷ baseline; your first run is the baseline)"]
        lines += [f"  {yours}; {theirs} ({said}, {where})" for yours, theirs, said, where in _ratio_parts(c, p)]
    elif len(c.runs) == 1 and paper.comparisons:
        lines += ["", f"  The paper's ratios need two runs: storbench compare RUN_A RUN_B --paper {paper.paper}"]
    lines += ["", "Hardware"] + [f"  {who}: {what}" for who, what in hardware(c, p)]
    notes = p.missing + ([f"{len(p.unmeasured)} published figures have no storbench metric: "
                          f"storbench baselines {paper.paper} lists them"] if p.unmeasured else [])
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
            measured = ", ".join(f"{w}: {m}" for w, m in fig.measures.items()) or "— (note below)"
            rows.append([fig.id, fig.quantity, conf, fig.shown, measured, fig.where])
        out += ["  " + line for line in _columns(rows)]
        notes = [f"    {fig.id}: {fig.note}" for fig in p.figures if fig.note]
        out += ["  notes:", *notes] if notes else []
        out += ["  configurations:"] + [f"    {c.key}: {c.name}; {c.hardware}" for c in p.configurations.values()]
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
    parts = [f"<section><h2>Published figures: paper {esc(paper)}</h2>"
             f'<p class="sub">{esc(p.paper.title)} ({esc(p.paper.publisher)}). <b>{esc(LABEL)}.</b></p>']
    if p.absolutes:
        head = "".join(f'<th class="num">Yours: {esc(r.name)}</th>' for r in c.runs)
        body = "".join(
            f"<tr><td>{esc(b.row.workload)}</td><td>{esc(b.row.title)}</td><td>{esc(b.row.unit)}</td>"
            + "".join(f"<td class=num>{esc(f.num(v))}</td>" for v in b.yours)
            + f"<td class=num>{esc(b.figure.shown)}</td>"
              f"<td>{esc(p.paper.configurations[b.figure.configuration or ''].name)}</td>"
              f"<td>{esc(b.figure.where)}</td></tr>" for b in p.absolutes)
        parts.append(f"<table><thead><tr><th>Workload</th><th>Metric</th><th>Unit</th>{head}"
                     f'<th class="num">Published</th><th>Paper configuration</th><th>Source</th></tr></thead>'
                     f"<tbody>{body}</tbody></table>")
    if p.ratios:
        items = "".join(f"<li>{esc(yours)}; <b>{esc(theirs)}</b> ({esc(said)}, {esc(where)})</li>"
                        for yours, theirs, said, where in _ratio_parts(c, p))
        parts.append(f"<h3>Ratios between your runs beside the paper's</h3><ul>{items}</ul>")
    rows = "".join(f"<tr><th>{esc(who)}</th><td>{esc(what)}</td></tr>" for who, what in hardware(c, p))
    parts.append(f"<h3>Hardware</h3><table class=config><tbody>{rows}</tbody></table>")
    notes = "".join(f"<li>{esc(note)}</li>" for note in p.missing)
    parts.append(f'<ul class="muted">{notes}</ul></section>' if notes else "</section>")
    return "".join(parts)

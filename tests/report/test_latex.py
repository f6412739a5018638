"""The LaTeX format (report/latex.py), added as one module: a booktabs table per workload, every character that
LaTeX reads as markup escaped (issue 39 item 2's worked example of a new report format)."""

from __future__ import annotations

import re

from storbench import cli
from storbench.analysis.compare import compare_runs
from storbench.report import FORMATS, render
from storbench.report.latex import esc
from tests.analysis.factory import make_run, paper_runs


def _body(text: str) -> list[str]:
    return [line for line in text.splitlines() if line and not line.startswith("%")]


def test_it_is_a_format_choice_by_its_module_alone():
    assert "latex" in FORMATS
    assert cli.build_parser().parse_args(["compare", "a", "b", "--format", "latex"]).format == "latex"


def test_one_table_per_workload_with_a_column_per_run_and_change():
    comparison = compare_runs(paper_runs())
    text = render(comparison, "latex")
    groups = [group for group, _ in comparison.groups()]
    assert re.findall(r"\\caption\{(.*)\}", text) == groups
    assert text.count(r"\begin{table}") == text.count(r"\end{table}") == len(groups)
    assert r"\begin{tabular}{llrrr}" in text  # metric, unit, two runs, one change
    repartition = text.split(r"\caption{repartition}")[1].split(r"\end{table}")[0]
    assert r"Time to complete & s & 1,137 [1,114--1,160] & 941.1 [922.3--960.0] & 17\% faster" in repartition
    assert r"(\ensuremath{\times}2.9)" in repartition


def test_markup_characters_in_names_and_figures_are_escaped():
    assert esc("ssd_a & 50% #1 {x} ~ ^ \\ $") == (
        r"ssd\_a \& 50\% \#1 \{x\} \textasciitilde{} \textasciicircum{} \textbackslash{} \$"
    )
    run = make_run("ssd_a&b%", {("groupby", "time_s"): [1.0, 1.2]})
    body = _body(render(compare_runs([run]), "latex"))
    assert any(r"\textbf{ssd\_a\&b\%}" in line for line in body)
    for line in body:  # no unescaped markup left, and no symbol text mode cannot set
        assert not re.search(r"(?<!\\)[_%#$]", line) and not re.search("[–−×÷≥∞·±]", line), line

"""Report formats are found by registration: each is one module whose renderer registers its name, and
`--format`'s choices are the registry's (issue 39 item 2)."""

from __future__ import annotations

import pytest

from storbench import cli
from storbench.errors import InputError
from storbench.report import FORMATS, all_formats, find, register


def test_the_format_choices_are_the_registered_modules():
    modules = {name: entry.renderer.__module__ for name, entry in all_formats().items()}
    assert modules == {
        "csv": "storbench.report.csv_export",
        "html": "storbench.report.html",
        "json": "storbench.report.json_export",
        "latex": "storbench.report.latex",
        "md": "storbench.report.markdown",
        "table": "storbench.report.table",
    }
    assert FORMATS == tuple(modules)
    for fmt in FORMATS:
        assert cli.build_parser().parse_args(["show", "r1", "--format", fmt]).format == fmt


def test_what_run_prints_itself_is_registered_but_not_a_choice():
    assert find("summary").renderer.__module__ == "storbench.report.summary" and "summary" not in FORMATS
    assert find("markdown") is find("md")  # an alias
    with pytest.raises(InputError, match="invalid choice: 'verdict'"):
        cli.build_parser().parse_args(["compare", "r1", "--format", "verdict"])


def test_only_a_format_that_draws_series_is_given_the_loader():
    assert [name for name, entry in all_formats().items() if entry.series] == ["html"]


def test_a_format_name_taken_twice_fails():
    with pytest.raises(RuntimeError, match="report format 'table' registered twice"):
        register("table", "another table")(lambda comparison: "")
    assert find("table").renderer.__module__ == "storbench.report.table"

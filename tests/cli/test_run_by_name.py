"""Issue 26: a workload run by name runs at its own defaults, and its first line says what differs from them
(in-process: the null engine starts nothing)."""

import json
import re
from pathlib import Path

from storbench import cli
from storbench.workloads.base import get_workload


def _run(base: Path, capsys, *args):
    """One in-process run in its own results home under ``base``: (stderr lines without the clock, manifest)."""
    home, target = base / "home", base / "target"
    target.mkdir(parents=True)
    code = cli.main(["--results", str(home), "run", *args, "--target", str(target)])
    err = capsys.readouterr().err
    assert code == 0, err
    manifest = json.loads(next(home.glob("runs/*/manifest.json")).read_text())
    return [re.sub(r"^\[\d\d:\d\d\] ", "", line) for line in err.splitlines()], manifest


def _defaults(name):
    return {p.name: p.coerce(p.default, "test") for p in get_workload(name).params}


def test_a_workload_by_name_says_what_differs_from_its_defaults_first(tmp_path, capsys):
    lines, manifest = _run(tmp_path, capsys, "null-read", "--set", "size=4096", "--set", "sleep_ms=0")
    assert lines[0] == "null-read: size=4096 (default 65536)"  # sleep_ms=0 is the default: not a difference
    assert lines[1].startswith(f"run {manifest['run_id']}: suite null-read, scale defaults, 1 repetition(s)")
    assert manifest["suite_source"] == "workload null-read (sizes of suite null)"
    assert manifest["workload_parameters"]["null-read"] == {**_defaults("null-read"), "size": 4096}
    assert manifest["sweep"] == [] and manifest["repetitions"] == 1


def test_a_workload_by_name_at_a_scale_takes_its_home_suites_sizes_and_says_so(tmp_path, capsys):
    lines, manifest = _run(tmp_path, capsys, "null-read", "--scale", "small")
    assert lines[0] == "null-read: size=1048576 (default 65536; null's small scale)"
    assert manifest["scale"] == "small"
    lines, _ = _run(tmp_path / "again", capsys, "null-read")
    assert lines[0] == "null-read: defaults"


def test_a_suite_by_name_keeps_its_scale_and_prints_no_defaults_line(tmp_path, capsys):
    lines, manifest = _run(tmp_path, capsys, "null", "--repeat", "1")
    assert lines[0].startswith(f"run {manifest['run_id']}: suite null, scale tiny")
    assert manifest["workload_parameters"]["null-read"]["size"] == 65536  # the tiny scale's, as before

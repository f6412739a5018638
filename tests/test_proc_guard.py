"""The one guard on starting programs (tests/proc_guard.py): a refused program does not start, the refusal
keeps the line, and refusals that end out of order leave the others in force."""

import subprocess

import pytest

from tests import proc_guard


def test_a_refused_program_fails_the_test_before_it_starts(tmp_path):
    marker = tmp_path / "started"
    with proc_guard.refusing(lambda program: f"no {program} here") as refusal:
        with pytest.raises(pytest.fail.Exception, match="^no touch here$"):
            subprocess.run(["touch", str(marker)])
    assert refusal.violations == ["no touch here"]
    assert not marker.exists()


def test_the_innermost_refusal_that_objects_keeps_the_line():
    outer_lines = proc_guard.refusing(lambda program: f"outer: {program}")
    inner_lines = proc_guard.refusing(lambda program: None if program == "sh" else f"inner: {program}")
    with outer_lines as outer, inner_lines as inner:
        with pytest.raises(pytest.fail.Exception):
            subprocess.run(["sh", "-c", "exit 0"])
        with pytest.raises(pytest.fail.Exception):
            subprocess.run("python3 -c pass", shell=True)
    assert (outer.violations, inner.violations) == (["outer: sh"], ["inner: python3"])


def test_a_refusal_ended_out_of_order_leaves_the_other_in_force():
    first = proc_guard.refusing(lambda program: None)
    second = proc_guard.refusing(lambda program: f"second: {program}")
    first.__enter__()
    second_refusal = second.__enter__()
    first.__exit__(None, None, None)  # a set-up's refusal ends while a fixture's goes on
    try:
        with pytest.raises(pytest.fail.Exception, match="^second: true$"):
            subprocess.run(["true"])
    finally:
        second.__exit__(None, None, None)
    assert second_refusal.violations == ["second: true"]

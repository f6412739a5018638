"""The two lanes (tests/lanes.py): which tests are `real`, and the fast lane's guard, in an inner pytest run
in this process."""

import pytest

INI = """[pytest]
markers =
    real: starts a real process
    spark: needs Spark
"""
CONFTEST = """import pytest
pytest_plugins = ["tests.lanes"]

@pytest.fixture
def hdfs():
    return "no service here: the name alone makes a test real"
"""
TESTS = """import subprocess, sys
import pytest

def test_unmarked_python():
    try:
        subprocess.run([sys.executable, "-c", "pass"])
    except Exception:
        pass  # the guard's failure is no Exception: swallowing errors does not hide it

def test_unmarked_cheap_shell():
    assert subprocess.run(["sh", "-c", "exit 3"]).returncode == 3

@pytest.mark.real
def test_marked():
    pass

def test_guarding(request):
    from tests.lanes import GUARDING
    print(f"guarding={request.config.stash[GUARDING]}")

@pytest.mark.spark
def test_service_marker():
    pass

def test_service_fixture(hdfs):
    pass
"""


@pytest.fixture
def inner(pytester):
    pytester.makeini(INI)
    pytester.makeconftest(CONFTEST)
    pytester.makepyfile(test_inner=TESTS)
    return pytester


def test_the_fast_lane_fails_an_unmarked_test_that_starts_a_program(inner):
    result = inner.runpytest_inprocess("-m", "not real", "-s", "-p", "no:cacheprovider")
    result.assert_outcomes(passed=2, failed=1, deselected=3)
    result.stdout.fnmatch_lines(
        [
            "*guarding=True*",
            "*test_inner.py::test_unmarked_python starts a real process (python*) but is not marked `real`*",
        ]
    )


def test_markers_fixtures_and_services_make_a_test_real(inner):
    result = inner.runpytest_inprocess("-m", "real", "--collect-only", "-q", "-p", "no:cacheprovider")
    result.stdout.fnmatch_lines(
        [
            "test_inner.py::test_marked",
            "test_inner.py::test_service_marker",
            "test_inner.py::test_service_fixture",
            "3/6 tests collected (3 deselected)*",
        ]
    )


def test_a_run_with_real_tests_does_not_guard(inner):
    """The full lane (make test) leaves starting processes to the markers."""
    result = inner.runpytest_inprocess("-s", "-p", "no:cacheprovider", "-k", "test_marked or guarding")
    result.assert_outcomes(passed=2)
    result.stdout.fnmatch_lines(["*guarding=False*"])

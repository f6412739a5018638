"""The parallel suite's scheduling order (tests/grouping.py): groups handed out longest first."""

import ast
from pathlib import Path

from tests.grouping import GROUP_S, SERVICE_FIXTURES, longest_first

TEST_TREE = Path(__file__).resolve().parent


def test_groups_come_longest_first_and_keep_their_tests_in_order():
    items = ["a1", "b1", "a2", "c1", "b2", "b3"]  # group = first letter; a: 2 + 2, b: 3 × 1, c: 10
    cost = {"a1": 2, "a2": 2, "b1": 1, "b2": 1, "b3": 1, "c1": 10}
    assert longest_first(items, lambda i: i[0], cost.__getitem__) == ["c1", "a1", "a2", "b1", "b2", "b3"]


def test_a_measured_group_outranks_its_estimate_and_ties_keep_collection_order():
    slow = next(iter(GROUP_S))  # measured in CI: minutes, whatever its tests' estimate says
    items = ["x", "y", slow]
    order = longest_first(items, lambda i: i, lambda i: 1.0)
    assert order == [slow, "x", "y"]


CONFTEST = """import pytest
from pathlib import Path
from tests.grouping import serve_until_last_user
pytest_plugins = ["tests.grouping"]

def pytest_configure(config):
    config.option.loadgroup = {parallel}  # what xdist sets in a worker of `make test`

@pytest.fixture(scope="session")
def hdfs(request):  # a session service by name (tests/grouping.py SERVICE_GROUPS)
    Path("events").write_text("up ")
    yield from serve_until_last_user(request, None, lambda: Path("events").open("a").write("down "))
"""
TESTS = """from pathlib import Path

def log(word):
    Path("events").open("a").write(word + " ")

def test_1(hdfs): log("t1")
def test_2(): log("t2")
def test_3(hdfs): log("t3")
def test_4(): log("t4")
def test_5(): assert Path("events").read_text().split() == {expected}
"""


def test_in_a_parallel_run_a_service_stops_after_its_groups_last_test(pytester):
    pytester.makeconftest(CONFTEST.format(parallel=True))
    # the hdfs group comes first (longest), then the module's other tests
    pytester.makepyfile(TESTS.format(expected=["up", "t1", "t3", "down", "t2", "t4"]))
    pytester.runpytest("-p", "no:cacheprovider").assert_outcomes(passed=5)


def test_in_a_plain_run_a_service_stops_at_the_sessions_end(pytester):
    pytester.makeconftest(CONFTEST.format(parallel=False))
    pytester.makepyfile(TESTS.format(expected=["up", "t1", "t2", "t3", "t4"]))
    result = pytester.runpytest("-p", "no:cacheprovider")
    result.assert_outcomes(passed=5)
    assert (pytester.path / "events").read_text().split()[-1] == "down"


BY_NAME = """import pytest
from pathlib import Path

def log(word):
    Path("events").open("a").write(word + " ")

def test_1(hdfs): log("t1")
def test_2(): log("t2")
@pytest.mark.parametrize("fixture", ["hdfs"])
def test_3(request, fixture):  # takes the service by name: still its user, and in its group
    request.getfixturevalue(fixture)
    log("t3")
def test_4(): assert Path("events").read_text().split() == ["up", "t1", "t3", "down", "t2"]
"""


def test_a_test_taking_the_service_by_name_is_its_user(pytester):
    pytester.makeconftest(CONFTEST.format(parallel=True))
    pytester.makepyfile(BY_NAME)
    pytester.runpytest("-p", "no:cacheprovider").assert_outcomes(passed=4)


def fixtures_named_like_services(tree: Path) -> dict[str, list[str]]:
    """Service fixture name -> the files under ``tree`` that define a fixture of that name."""
    found: dict[str, list[str]] = {}
    for path in sorted(tree.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            if isinstance(node, ast.FunctionDef) and node.name in SERVICE_FIXTURES:
                if any("fixture" in ast.unparse(d) for d in node.decorator_list):
                    found.setdefault(node.name, []).append(str(path.relative_to(tree)))
    return found


def test_each_service_fixture_name_is_defined_once(tmp_path):
    """Groups go by fixture name: a module's own fixture named like a session service put the module in that
    service's group (the lab Spark cluster's `lab` joined the QEMU guest's tests, on their worker, and kept the
    guest up until the module ended). The check finds such a twin."""
    twice = {name: files for name, files in fixtures_named_like_services(TEST_TREE).items() if len(files) > 1}
    assert twice == {}, f"fixtures named like a session service in more than one file: {twice}"
    (tmp_path / "test_twin.py").write_text("import pytest\n\n@pytest.fixture(scope='module')\ndef lab():\n    pass\n")
    assert fixtures_named_like_services(tmp_path) == {"lab": ["test_twin.py"]}

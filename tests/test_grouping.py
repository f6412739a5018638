"""The parallel suite's scheduling order (tests/grouping.py): groups handed out longest first."""

from tests.grouping import GROUP_S, longest_first


def test_groups_come_longest_first_and_keep_their_tests_in_order():
    items = ["a1", "b1", "a2", "c1", "b2", "b3"]  # group = first letter; a: 2 + 2, b: 3 × 1, c: 10
    cost = {"a1": 2, "a2": 2, "b1": 1, "b2": 1, "b3": 1, "c1": 10}
    assert longest_first(items, lambda i: i[0], cost.__getitem__) == ["c1", "a1", "a2", "b1", "b2", "b3"]


def test_a_measured_group_outranks_its_estimate_and_ties_keep_collection_order():
    slow = next(iter(GROUP_S))  # measured in CI: minutes, whatever its tests' estimate says
    items = ["x", "y", slow]
    order = longest_first(items, lambda i: i, lambda i: 1.0)
    assert order == [slow, "x", "y"]

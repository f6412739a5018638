"""benchmarks/harness.py, the shape every benchmark shares: rotation, per-round ratios, spread, verdict lines,
the scope line and the --rounds floor. Fast lane: no benchmark runs here (tests/benchmarks/test_quick.py
runs them)."""

import sys

import pytest

from tests.benchmarks.quick import BENCHMARKS, QUICK_ROUNDS, VERDICT

sys.path.insert(0, str(BENCHMARKS))
import harness  # noqa: E402


@pytest.fixture(autouse=True)
def not_quick(monkeypatch):
    monkeypatch.setattr(harness, "QUICK", False)  # parse_args(["--quick"]) sets the module's flag


def test_rotated_starts_round_k_with_side_k_mod_n_and_keeps_each_sides_results_in_round_order():
    calls = []

    def side(name):
        def run(k):
            calls.append((k, name))
            return f"{name}{k}"

        return run

    results = harness.rotated({"a": side("a"), "b": side("b"), "c": side("c")}, 4)
    assert calls == [
        (0, "a"),
        (0, "b"),
        (0, "c"),
        (1, "b"),
        (1, "c"),
        (1, "a"),
        (2, "c"),
        (2, "a"),
        (2, "b"),
        (3, "a"),
        (3, "b"),
        (3, "c"),
    ]
    assert results == {"a": ["a0", "a1", "a2", "a3"], "b": ["b0", "b1", "b2", "b3"], "c": ["c0", "c1", "c2", "c3"]}


def test_ratios_are_taken_within_each_round_not_between_medians():
    # medians 4 and 2 would give 2.0; the per-round ratios are 1, 4, 8 (median 4)
    spread = harness.ratios([2, 4, 8], [2, 1, 1])
    assert spread.values == (1.0, 4.0, 8.0)
    assert (spread.median, spread.low, spread.high) == (4.0, 1.0, 8.0)


def test_ratios_of_unequal_round_counts_are_refused():
    with pytest.raises(ValueError, match="3 rounds of ours against 2 of the peer"):
        harness.ratios([1, 2, 3], [1, 2])


def test_spread_of_nothing_is_refused_and_its_text_gives_median_range_and_rounds():
    with pytest.raises(ValueError):
        harness.spread([])
    assert harness.spread([3, 1, 2, 10]).text(unit="×") == "2.5× (1–10× over 4 rounds)"


@pytest.mark.parametrize(
    "values, goal, at_least, op, word, met",
    [
        ([1.1, 1.3, 1.2], 1.2, True, "≥", "met", True),  # the median equals the goal: met
        ([1.1, 1.3, 1.19], 1.2, True, "≥", "MISSED", False),  # the best round alone does not meet it
        ([0.5, 0.9, 3.0], 1.0, False, "≤", "met", True),  # one bad round does not sink a median
        ([1.5, 0.9, 3.0], 1.0, False, "≤", "MISSED", False),
    ],
)
def test_verdict_judges_the_median_against_the_goal(capsys, values, goal, at_least, op, word, met):
    assert harness.verdict("speed", harness.spread(values), goal=goal, at_least=at_least) is met
    line = capsys.readouterr().out.strip()
    spread = harness.spread(values)
    assert line == (
        f"verdict: speed: {spread.median:.3g}× ({spread.low:.3g}–{spread.high:.3g}× over 3 rounds), "
        f"goal {op} {goal:g}×: {word}"
    )


def test_verdict_without_a_goal_says_reported(capsys):
    assert harness.verdict("cost", harness.spread([0.2, 0.4, 0.3]), goal=None, unit="%") is True
    assert capsys.readouterr().out.strip() == "verdict: cost: 0.3% (0.2–0.4% over 3 rounds), no goal: reported"


def test_a_quick_runs_verdict_and_scope_are_marked_and_the_smoke_tests_pattern_reads_them(capsys):
    args = harness.parser("Doc line.\n\nmore").parse_args(["--quick"])
    assert args.quick and args.rounds == harness.QUICK_ROUNDS == QUICK_ROUNDS and harness.QUICK
    harness.scope("a vs b", peer="b", parallelism="1", startup="out", cache="cold", clock="monotonic")
    harness.verdict("speed", harness.spread([1, 2, 3]), goal=1.5)
    harness.verdict("cost", harness.spread([1, 2, 3]), goal=None, unit="%")
    scope, met, reported = capsys.readouterr().out.splitlines()
    assert scope == (
        "scope: a vs b; peer: b; parallelism: 1; start-up: out; cache/sync: cold; clock: monotonic "
        "[quick smoke: tiny sizes, not a measurement]"
    )
    assert VERDICT.match(met)["median"] == "2×" and met.endswith("goal ≥ 1.5×: met [quick smoke, not a measurement]")
    assert VERDICT.match(reported)["rounds"] == "3"
    assert harness.parser(None).parse_args(["--quick", "--rounds", "2"]).rounds == 2  # a smoke run: 2 may do


def test_a_quick_run_takes_at_least_one_round(capsys):
    with pytest.raises(SystemExit) as exit_:
        harness.parser("Doc.").parse_args(["--quick", "--rounds", "0"])
    assert exit_.value.code == 2 and "--rounds 0: at least 1 with --quick" in capsys.readouterr().err


def test_a_full_runs_verdict_is_not_taken_for_a_smoke_one(capsys):
    harness.parser(None).parse_args(["--rounds", "5"])
    harness.verdict("speed", harness.spread([1, 2, 3, 4, 5]), goal=1)
    line = capsys.readouterr().out.strip()
    assert line == "verdict: speed: 3× (1–5× over 5 rounds), goal ≥ 1×: met"
    assert VERDICT.match(line) is None  # tests/benchmarks/quick.py wants the quick marker


@pytest.mark.parametrize("rounds", ["2", "0", "-1"])
def test_fewer_than_three_rounds_is_one_line_and_exit_2(capsys, rounds):
    with pytest.raises(SystemExit) as exit_:
        harness.parser("Doc.").parse_args(["--rounds", rounds])
    assert exit_.value.code == 2
    usage, error = capsys.readouterr().err.strip().splitlines()  # argparse's usage line, then the one error line
    assert usage.startswith("usage: ")
    assert error.endswith(f"error: --rounds {rounds}: at least 3 (a median and a spread need three)")


@pytest.mark.parametrize("quick", [False, True])
def test_a_share_verdict_counts_the_rounds_and_matches_the_verdict_line(capsys, monkeypatch, quick):
    monkeypatch.setattr(harness, "QUICK", quick)
    assert harness.share_verdict("false positives", [True, False, False, False], goal=0.1, at_least=False) is False
    assert harness.share_verdict("marked", [True, True, True], goal=0.9) is True
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].startswith("verdict: false positives: 0.25 (1 of 4, over 4 rounds), goal ≤ 0.1: MISSED")
    if quick:
        assert all(VERDICT.match(line) for line in lines)

"""The host-steal watch that keeps the lab's known truths from being judged while the hypervisor held the machine
back (tests/lab/steal.py): /proc/stat's steal column, the worst 10 s, and the skip it leads to."""

import time

import pytest

from tests.lab.steal import STOLEN_PCT, Span, StealWatch, steal_and_total, worst_steal_pct

STAT = "cpu  100 5 50 800 10 0 5 30 0 0\ncpu0 50 2 25 400 5 0 2 15 0 0\nintr 1\n"


def test_steal_is_the_eighth_column_of_the_machines_cpu_line():
    assert steal_and_total(STAT) == (30, 1000)
    assert steal_and_total("cpu  1 2 3 4\n") == (0, 10)  # an old kernel without the column: no steal


def test_the_worst_span_is_found_though_the_whole_is_quiet():
    quiet = [(t, 0, 200 * t) for t in range(0, 61)]  # 60 s at 200 ticks a second, none stolen
    spell = [(t, s, a) if t < 30 else (t, s + 60 * min(t - 30, 5), a) for t, s, a in quiet]  # 5 s at 30%
    assert worst_steal_pct(quiet) == 0
    assert worst_steal_pct(spell) == pytest.approx(100 * 300 / 2000)  # 300 ticks of 2000 in the worst 10 s
    assert worst_steal_pct(spell, span_s=60) < STOLEN_PCT < worst_steal_pct(spell)
    assert worst_steal_pct(spell[:1]) == 0  # one reading: nothing measured


def test_a_stolen_span_skips_with_its_figure_and_a_quiet_one_does_not(tmp_path):
    Span("quiet", 1.0).skip_if_stolen()
    Span("unmeasured").skip_if_stolen()
    with pytest.raises(pytest.skip.Exception, match="took up to 15% of its CPU"):
        Span("the experiment", 15.0).skip_if_stolen()
    stat = tmp_path / "stat"
    stat.write_text(STAT)

    def run():  # the host loses 900 of the next 900 ticks
        time.sleep(0.6)
        stat.write_text(STAT.replace("800 10 0 5 30", "800 10 0 5 930", 1))
        time.sleep(0.6)
        return 7

    watch = StealWatch(stat).start()
    try:
        result, span = watch.measure("a run", run)
    finally:
        watch.stop()
    assert result == 7 and span.what == "a run" and span.worst == pytest.approx(100.0)

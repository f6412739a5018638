"""The thread-sweep rule (paper 003: where throughput peaks before average latency climbs), on figures."""

from storbench.workloads.ycsb import peak


def test_the_peak_is_the_last_step_adding_ten_percent():
    found = peak.peak({8: [(5000, 1600)], 16: [(5400, 2900)], 32: [(5600, 5700)], 4: [(3000, 1300)]})
    assert (found["threads"], found["next_threads"]) == (8, 16)  # 16 adds 8% < 10%: latency only climbs
    text = peak.note("ycsb-a", found)
    assert text.startswith("ycsb-a: peak at 8 threads (5000 ops/s") and "16 threads added less than 10%" in text


def test_repetitions_are_averaged_and_a_rising_curve_says_sweep_further():
    found = peak.peak({2: [(1000, 2000), (1200, 1600)], 8: [(4000, 2000), (4400, 1800)]})
    assert found["threads"] == 8 and found["ops_per_s"] == 4200 and found["next_threads"] is None
    assert "sweep further" in peak.note("ycsb-c", found)
    assert peak.peak({8: [(1.0, 1.0)]}) is None  # one point is no sweep

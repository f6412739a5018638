"""`compare` says YCSB's figures as paper 003 does: "39× more operations per second" (no services)."""

import pytest

from storbench.analysis import wording
from storbench.analysis.compare import compare_runs
from storbench.analysis.metrics import spec_for
from tests.analysis.factory import make_run


@pytest.mark.parametrize(
    "metric, new, old, said",
    [
        # paper 003: "up to a 39X improvement in operations completed per second" (SSD vs HDD)
        ("ycsb_throughput_ops_s", 39_000.0, 1_000.0, "39× more operations per second"),
        ("ycsb_throughput_ops_s", 1_000.0, 39_000.0, "39× fewer operations per second"),
        ("ycsb_throughput_ops_s", 29_763.0, 17_701.0, "68% more operations per second"),  # workload B, eMAG vs x86
        ("ycsb_throughput_ops_s", 2_000.0, 1_000.0, "2.0× more operations per second"),
        ("ycsb_throughput_ops_s", 1_010.0, 1_000.0, "[OVERALL] Throughput(ops/sec) no change"),
        ("ycsb_load_throughput_ops_s", 3_000.0, 1_000.0, "3.0× more operations per second"),
        ("ycsb_ops_per_server_thread", 930.09, 316.09, "2.9× more operations per second per server CPU thread"),
        ("ops_per_watt", 56.0, 18.0, "3.1× more operations per watt"),  # workload B's ops/W, eMAG vs x86
        ("obj_ops_per_s", 3_000.0, 1_000.0, "object operations per second 200% higher"),  # not YCSB's: unchanged
    ],
)
def test_ycsb_rates_read_like_the_paper(metric, new, old, said):
    spec = spec_for(metric)
    words = wording.delta_words(spec, wording.relative_change(new, old))
    assert wording.phrase(spec, wording.lower_first(spec.title), words) == said


def test_compare_headlines_say_operations_per_second_and_per_watt():
    hdd = make_run(
        "hdd",
        {("ycsb-a", "ycsb_throughput_ops_s"): [990.0, 1000.0, 1010.0], ("ycsb-a", "ops_per_watt"): [2.9, 3.0, 3.1]},
    )
    ssd = make_run(
        "ssd",
        {
            ("ycsb-a", "ycsb_throughput_ops_s"): [38_900.0, 39_000.0, 39_100.0],
            ("ycsb-a", "ops_per_watt"): [48.0, 49.0, 50.0],
        },
    )
    texts = [h.text.split(" (95% CI ")[0] for h in compare_runs([hdd, ssd]).headlines]
    assert "ssd vs hdd: ycsb-a: 39× more operations per second" in texts, texts
    assert "ssd vs hdd: ycsb-a: 16× more operations per watt" in texts, texts
    rows = {r.metric: r for r in compare_runs([hdd, ssd]).rows if r.workload == "ycsb-a"}
    assert rows["ycsb_throughput_ops_s"].deltas[1].factor_words == "39× more"

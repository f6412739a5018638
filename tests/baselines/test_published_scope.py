"""Published figures set beside the same quantity at a stated scope and scale (issue 38, items 11, 13-16)."""

import re

import pytest

from storbench.baselines import load, papers
from storbench.workloads.ycsb import thread_samples

ALL = [(p, fig) for p in papers() for fig in load(p).figures]
NUMBER = re.compile(r"(?<![\d.])\d[\d,]*(?:\.\d+)?")


@pytest.mark.parametrize("paper,figure", [(p, f) for p, f in ALL if f.kind == "absolute"],
                         ids=[f"{p}-{f.id}" for p, f in ALL if f.kind == "absolute"])
def test_an_absolute_value_is_a_number_of_its_source_quote(paper, figure):
    """The yaml's value is one of the numbers the paper prints in the quoted text ("33,013" is 33013)."""
    printed = [float(n.replace(",", "")) for n in NUMBER.findall(figure.source)]
    assert figure.value in printed, (figure.id, figure.value, figure.source)


def test_paper_003_per_thread_is_the_clusters_rate_over_one_servers_threads():
    """Paper 003, Table 3: 33,013 ops/s on four x86 nodes of 56 threads each is 589.52 per thread (÷ 56, not ÷ 224)."""
    prints = {f"node{i}": {"hostname": f"x86-{i}", "cores": 56} for i in range(4)}
    notes: list[str] = []
    samples = {s.metric: s.value for s in thread_samples("ycsb-a", 33013.0, prints, False, notes)}
    figure = load("003").figure("a-per-thread-x86")
    (metric,) = figure.measures.values()
    assert samples[metric] == pytest.approx(figure.value, abs=0.005)  # 589.52
    assert samples["ycsb_ops_per_server_thread"] == pytest.approx(33013 / 224)  # the other scope, its own name
    assert all(m == metric for f in load("003").figures if "per-thread" in f.id for m in f.measures.values())
    uneven = {**prints, "node3": {"hostname": "x86-3", "cores": 32}}
    notes.clear()
    samples = {s.metric: s.value for s in thread_samples("ycsb-a", 33013.0, uneven, False, notes)}
    assert samples[metric] is None and any("thread counts differ" in n for n in notes), notes

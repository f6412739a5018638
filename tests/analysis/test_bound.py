"""What limited an operation on each node: a stated limit reached first, then a busy device, then the CPU."""

from storbench.analysis.bound import NodeFigures, bound, sentence


def test_a_node_at_its_stated_disk_limit_is_device_bound_though_its_device_looks_idle():
    fig = NodeFigures("worker-1", write_mbps=20.2, util_pct=19, cpu_pct=100, limits={"disk_write_mbps": 20})
    assert bound(fig) == ("device", "write 20.2 MB/s, 101% of its 20 MB/s limit")


def test_a_node_at_its_link_rate_is_link_bound_the_limit_in_mbit():
    fig = NodeFigures("worker-3", write_mbps=0.02, net_mbps=6.3, cpu_pct=40, limits={"link_mbit": 50})
    assert bound(fig) == ("link", "network 6.3 MB/s, 101% of its 50 Mbit/s limit")


def test_below_its_limits_a_busy_device_then_the_cpu_then_nothing():
    assert bound(NodeFigures("a", write_mbps=10, util_pct=95, limits={"disk_write_mbps": 20}))[0] == "device"
    assert bound(NodeFigures("a", util_pct=12, cpu_pct=97)) == ("CPU", "CPU 97%, devices ≤ 12% busy")
    assert bound(NodeFigures("a", util_pct=12, cpu_pct=50))[0] == "none"
    assert bound(NodeFigures("a"))[0] == "none"


def test_one_line_the_same_bound_on_every_node_or_each_nodes():
    cpu = [NodeFigures(f"worker-{i}", util_pct=12, cpu_pct=100) for i in (1, 2)]
    assert sentence(cpu) == (
        "bound by: CPU on every node (worker-1 CPU 100%, devices ≤ 12% busy; worker-2 CPU 100%, devices ≤ 12% "
        "busy): a faster disk would not change this figure"
    )
    mixed = [NodeFigures("worker-1", net_mbps=6.2, limits={"link_mbit": 50}), NodeFigures("worker-2", cpu_pct=10)]
    assert sentence(mixed) == (
        "bound by: worker-1 link-bound (network 6.2 MB/s, 99% of its 50 Mbit/s limit); "
        "worker-2 nothing at capacity (no device, link or CPU at capacity)"
    )
    assert sentence([]) == ""

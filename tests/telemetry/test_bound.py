"""What limited an operation on each node: a stated limit reached first, then a busy device, then the CPU; and the
slowest node, the one the others waited for."""

from storbench.telemetry.bound import NodeFigures, bound, figures, machine_sentence, sentence, slowest


def test_a_node_at_its_stated_disk_limit_is_device_bound_though_its_device_looks_idle():
    fig = NodeFigures("worker-1", write_mbps=20.2, util_pct=19, cpu_pct=100, limits={"disk_write_mbps": 20})
    assert bound(fig) == ("device", "write 20.2 MB/s, 101% of its 20 MB/s limit")


def test_a_device_far_over_its_stated_limit_is_said_to_have_writes_the_limit_does_not_hold():
    """A shuffle's buffered writes reach a lab disk through the kernel's write-back, outside the host's cgroup."""
    fig = NodeFigures("worker-1", write_mbps=34.4, cpu_pct=100, limits={"disk_write_mbps": 20})
    why = "write 34.4 MB/s, 172% of its 20 MB/s limit, more than the limit holds: write-back or a journal outside it"
    assert bound(fig) == ("device", why)
    fig = NodeFigures("worker-1", write_mbps=21.9, limits={"disk_write_mbps": 20})  # within what a journal adds
    assert bound(fig) == ("device", "write 21.9 MB/s, 110% of its 20 MB/s limit")


def test_a_node_at_its_link_rate_either_way_is_link_bound_the_limit_in_mbit():
    fig = NodeFigures("worker-3", write_mbps=0.02, net_tx_mbps=6.3, cpu_pct=40, limits={"link_mbit": 50})
    assert bound(fig) == ("link", "send 6.3 MB/s, 101% of its 50 Mbit/s limit")
    fig = NodeFigures("worker-3", net_rx_mbps=6.2, net_tx_mbps=1.0, limits={"link_mbit": 50})
    assert bound(fig) == ("link", "receive 6.2 MB/s, 99% of its 50 Mbit/s limit")
    fig = NodeFigures("worker-3", net_rx_mbps=6.6, net_tx_mbps=6.3, limits={"link_mbit": 50})  # a shuffle: both ways
    assert bound(fig) == ("link", "receive 6.6 MB/s, 106% of its 50 Mbit/s limit")


def test_a_link_busy_both_ways_is_not_read_as_twice_its_rate():
    """A shuffle sends and receives at once: 5+5 MB/s on a 50 Mbit/s (6.25 MB/s each way) link is 80% of it."""
    fig = NodeFigures("worker-3", net_rx_mbps=5.0, net_tx_mbps=5.0, cpu_pct=40, limits={"link_mbit": 50})
    assert bound(fig)[0] == "none"


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
    mixed = [NodeFigures("worker-1", net_tx_mbps=6.2, limits={"link_mbit": 50}), NodeFigures("worker-2", cpu_pct=10)]
    assert sentence(mixed) == (
        "bound by: worker-1 link-bound (send 6.2 MB/s, 99% of its 50 Mbit/s limit); "
        "worker-2 nothing at capacity (no device, link or CPU at capacity)"
    )
    assert sentence([]) == ""


def test_figures_are_read_from_the_window_metrics_names():
    fig = figures("w", {"max_write_mbps": 1, "max_net_rx_mbps": 2, "max_net_tx_mbps": 3, "avg_cpu_pct": 4}, {})
    assert (fig.write_mbps, fig.net_rx_mbps, fig.net_tx_mbps, fig.cpu_pct, fig.read_mbps) == (1, 2, 3, 4, None)


def test_the_node_held_at_its_link_is_slowest_though_it_moved_as_many_mb():
    """A shuffle's nodes move the same bytes; the one at its link's rate is the one the others waited for, behind
    the busiest in network rate."""
    nodes = [
        NodeFigures("worker-1", net_rx_mbps=20, net_tx_mbps=18, cpu_pct=100, limits={"disk_write_mbps": 20}),
        NodeFigures("worker-2", net_rx_mbps=19, net_tx_mbps=21, cpu_pct=100),
        NodeFigures("worker-3", net_rx_mbps=6.2, net_tx_mbps=6.3, cpu_pct=100, limits={"link_mbit": 50}),
    ]
    node, behind, held = slowest(nodes, {"worker-1": 200, "worker-2": 240, "worker-3": 260})
    assert (node, held) == ("worker-3", "link") and behind == 100 * (21 - 6.3) / 21


def test_every_node_at_its_own_limit_the_slowest_moved_the_least():
    limits = (20, 40, 80)
    nodes = [NodeFigures(f"w{i}", write_mbps=v, limits={"disk_write_mbps": v}) for i, v in enumerate(limits)]
    assert slowest(nodes, {"w0": 250, "w1": 500, "w2": 1000}) == ("w0", 75.0, "device")
    # a node taken by the CPU (not its own hardware) is not the pace-setter when others are at their limits
    nodes[2] = NodeFigures("w2", write_mbps=50, cpu_pct=100, limits={"disk_write_mbps": 80})
    assert slowest(nodes, {"w0": 250, "w1": 500, "w2": 600})[0] == "w0"


def test_nothing_held_the_least_moved_is_slowest_and_nothing_moved_names_none():
    nodes = [NodeFigures("a", util_pct=10), NodeFigures("b", util_pct=30)]
    assert slowest(nodes, {"a": 30, "b": 10}) == ("b", 100 * 20 / 30, "")
    assert slowest(nodes, {"a": 0, "b": 0}) is None
    assert slowest(nodes[:1], {"a": 3}) is None


def test_a_link_held_node_far_behind_is_named_before_device_held_nodes_a_little_behind():
    """A shuffle onto throttled disks: every node is at a limit, two at their disks' and one at its link's; the
    link-held node is 60% behind the fastest link, the device-held ones 10% behind in MB moved."""
    nodes = [
        NodeFigures("w1", write_mbps=19.5, net_rx_mbps=15, net_tx_mbps=14, limits={"disk_write_mbps": 20}),
        NodeFigures("w2", write_mbps=39, net_rx_mbps=14, net_tx_mbps=16, limits={"disk_write_mbps": 40}),
        NodeFigures("w3", write_mbps=30, net_rx_mbps=6.2, net_tx_mbps=6.3, limits={"link_mbit": 50}),
    ]
    node, behind, held = slowest(nodes, {"w1": 250, "w2": 225, "w3": 250})
    assert (node, held) == ("w3", "link") and round(behind, 2) == round(100 * (16 - 6.3) / 16, 2)


def test_one_machine_says_what_held_it_with_how_busy_its_cpu_and_devices_were():
    """The case N=1 (a run without nodes): no limits are stated, so a busy device or the CPU decides."""
    cpu = NodeFigures("machine", write_mbps=1.7, util_pct=5.2, cpu_pct=96.7)
    assert machine_sentence(cpu) == (
        "bound by: CPU (CPU 97%, devices ≤ 5% busy): a faster disk would not change this figure"
    )
    disk = NodeFigures("machine", write_mbps=180, util_pct=99, cpu_pct=40)
    assert machine_sentence(disk) == "bound by: device (device 99% busy): the storage set this figure"
    idle = NodeFigures("machine", util_pct=30, cpu_pct=45)
    assert machine_sentence(idle) == (
        "bound by: nothing at capacity at the sampled resolution (CPU 45%, devices ≤ 30% busy)"
    )
    assert machine_sentence(NodeFigures("machine", cpu_pct=45)).endswith("resolution (CPU 45%)")

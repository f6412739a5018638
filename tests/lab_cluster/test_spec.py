"""What `storbench lab cluster up` is asked for, checked before anything is made; the link rules it gives tc;
the limits a nodes file carries and the reports print beside a node."""

import pytest

from storbench.errors import InputError
from storbench.lab.hosts import qdisc
from storbench.lab.spec import NodeLimits, build_spec
from storbench.report.node_config import limits_text
from storbench.telemetry.nodes import Cluster, Node, dump_nodes, load_nodes


def test_one_value_per_node_or_one_for_all_and_dash_for_none():
    spec = build_spec(3, disk_write_mbps="20,40,80", link_mbit="-,,50", disk_read_mbps="100")
    assert [lim.disk_write_mbps for lim in spec.limits] == [20, 40, 80]
    assert [lim.link_mbit for lim in spec.limits] == [None, None, 50]
    assert [lim.disk_read_mbps for lim in spec.limits] == [100] * 3
    assert spec.throttles_disks and spec.shapes_links
    assert not build_spec(2).throttles_disks and not build_spec(2).shapes_links


@pytest.mark.parametrize(
    "kwargs, said",
    [
        ({"nodes": 0}, "--nodes 0: allowed 1 to 16"),
        ({"nodes": 3, "disk_write_mbps": "20,40"}, "--disk-write-mbps 20,40: 2 values for 3 nodes"),
        ({"nodes": 2, "link_mbit": "fast"}, "--link-mbit fast: 'fast' is not a number"),
        ({"nodes": 2, "link_delay_ms": "0"}, "--link-delay-ms 0: 0 must be above 0"),
        ({"nodes": 2, "disk_mb": 10}, "--disk-mb 10: each host's disk needs at least 64 MB"),
    ],
)
def test_bad_input_is_one_line_naming_the_flag(kwargs, said):
    with pytest.raises(InputError) as caught:
        build_spec(**kwargs)
    assert str(caught.value).startswith(said) and "\n" not in str(caught.value)


def test_a_rate_alone_is_tbf_a_delay_is_netem_with_the_rate():
    assert qdisc(NodeLimits()) is None
    tbf = qdisc(NodeLimits(link_mbit=50))
    assert tbf[:3] == ["tbf", "rate", "50mbit"] and int(tbf[tbf.index("burst") + 1]) >= 32 * 1024
    assert qdisc(NodeLimits(link_mbit=50, link_delay_ms=5)) == ["netem", "delay", "5ms", "rate", "50mbit"]


def test_a_nodes_file_carries_each_nodes_limits_and_reports_say_them(tmp_path):
    node = Node(
        "node-1",
        "http://10.213.9.11:9100/metrics",
        "worker",
        ("loop3",),
        "10.213.9.11",
        limits=(("disk_write_mbps", 20.0), ("link_mbit", 50.0)),
    )
    path = tmp_path / "nodes.yaml"
    dump_nodes(path, Cluster((node,)))
    [back] = load_nodes(path).nodes
    assert back.limits == node.limits
    assert back.describe()["limits"] == {"disk_write_mbps": 20.0, "link_mbit": 50.0}
    assert limits_text(back.describe()) == "limits: disk write 20 MB/s, link 50 Mbit/s"
    assert limits_text({"name": "n"}) == ""


@pytest.mark.parametrize(
    "limits, said",
    [
        ({"disk_speed": 3}, "nodes[0].limits.disk_speed: unknown limit"),
        ({"link_mbit": -1}, "nodes[0].limits.link_mbit: expected a number above 0"),
        ([20], "nodes[0].limits: expected a mapping of limits"),
    ],
)
def test_a_bad_limit_in_a_nodes_file_is_one_line(tmp_path, limits, said):
    import yaml

    path = tmp_path / "nodes.yaml"
    path.write_text(yaml.safe_dump({"nodes": [{"name": "a", "exporter": "local", "limits": limits}]}))
    with pytest.raises(InputError) as caught:
        load_nodes(path)
    assert said in str(caught.value)

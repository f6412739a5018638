"""hdfs:// targets before Spark: parsing, replication against our own cluster, reachability, Spark settings.

Claiming through Spark's Hadoop client is exercised on a real HDFS in tests/workloads/terasort.
"""

import socket

import pytest

from storbench.errors import InputError, TargetError
from storbench.targets import TargetOptions, parse_target
from storbench.targets import hdfs as hdfs_module
from storbench.targets.hdfs import HdfsTarget

OURS = {"uri": "hdfs://127.0.0.1:8020", "datanodes": 2, "datanode_dirs": ["/srv/dn0", "/srv/dn1"]}


def test_parse_normalises_and_needs_host_and_port():
    target = parse_target("hdfs://127.0.0.1:8020/bench/")
    assert isinstance(target, HdfsTarget)
    assert (target.uri, target.host, target.port) == ("hdfs://127.0.0.1:8020/bench", "127.0.0.1", 8020)
    assert parse_target("hdfs://nn:9000").uri == "hdfs://nn:9000"
    for text in ("hdfs:///bench", "hdfs://nn/bench"):
        with pytest.raises(InputError, match="an hdfs:// target needs host and port"):
            parse_target(text)


def test_our_own_cluster_is_found_by_uri(tmp_path, monkeypatch):
    monkeypatch.setattr(hdfs_module, "service_status", lambda name, home: OURS)
    ours = parse_target("hdfs://127.0.0.1:8020/x", TargetOptions(home=tmp_path, replication=3))
    assert ours.local_path() is not None and str(ours.local_path()) == "/srv/dn0"
    with pytest.raises(
        InputError,
        match=r"^--replication 3: above the 2 DataNode\(s\) of hdfs://127.0.0.1:8020; "
        r"allowed: 1 to 2$",
    ):
        ours.precheck(0)
    other = parse_target("hdfs://10.0.0.1:8020/x", TargetOptions(home=tmp_path))
    assert other.local_path() is None
    warnings: list[str] = []
    assert other.devices(None, warnings.append) == ([], "remote target")
    assert warnings == [
        "target hdfs://10.0.0.1:8020/x is remote: no local device to measure; "
        "pass --devices with the DataNodes' disks to measure them"
    ]


def test_unreachable_namenode_fails_in_one_line():
    with socket.socket() as free:
        free.bind(("127.0.0.1", 0))
        port = free.getsockname()[1]
    with pytest.raises(
        TargetError,
        match=rf"^target hdfs://127.0.0.1:{port}/x: cannot connect to 127.0.0.1:{port} "
        r"\(.*\); is the NameNode running\?$",
    ):
        parse_target(f"hdfs://127.0.0.1:{port}/x").precheck(0)


def test_spark_settings_fail_fast_and_carry_the_replication():
    from storbench.engines.spark import target_conf

    assert target_conf(parse_target("hdfs://nn:1/x", TargetOptions(replication=2)).facts()) == {
        "spark.hadoop.ipc.client.connect.max.retries": "2",
        "spark.hadoop.ipc.client.connect.timeout": "5000",
        "spark.hadoop.dfs.replication": "2",
    }
    assert "spark.hadoop.dfs.replication" not in target_conf(parse_target("hdfs://nn:1/x").facts())


def test_nothing_is_claimed_before_spark_is_attached():
    target = parse_target("hdfs://nn:1/x")
    assert target.claim("r1") is None and target.root_uri is None
    assert not target.release()  # never claimed: nothing to remove
    with pytest.raises(TargetError, match="not attached to a Spark session yet"):
        target.size_bytes("hdfs://nn:1/x/storbench-r1/data")


def test_attach_goes_through_the_first_engine_that_has_a_running_hadoop_client():
    target = parse_target("hdfs://nn:1/x")
    attached = []
    target.attach_client = lambda jvm, conf, need_bytes: attached.append((jvm, conf, need_bytes))

    class Tool:  # no Hadoop client at all (fio, rados, the native engine): not asked
        pass

    class Idle:
        def hadoop_client(self):
            return None  # not running yet

    class Client:
        def hadoop_client(self):
            return ("jvm", "conf")

    target.attach({"tool": Tool(), "idle": Idle(), "client": Client()}, 10)
    assert attached == [("jvm", "conf", 10)]

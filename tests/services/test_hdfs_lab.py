"""`services up hdfs --lab-cluster`'s parts that need no lab: the daemons' site files, and the refusals that come
before anything is made (the lab run itself: tests/lab_cluster/test_hdfs_on_lab.py)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from xml.etree import ElementTree

import pytest

from storbench.errors import InputError
from storbench import api
from storbench.results.store import ResultStore
from storbench.services import hdfs, hdfs_conf
from storbench.services.yarn_conf import write_dir


def read_site(path: Path) -> dict[str, str]:
    root = ElementTree.parse(path).getroot()
    return {p.findtext("name"): p.findtext("value") for p in root.iter("property")}


def test_dfs_keys_are_in_hdfs_site_where_hdfs_default_cannot_override_them(tmp_path):
    """hdfs-default.xml is read after core-site.xml: a dfs.* key in core-site is silently back to its default (seen:
    the NameNode refused every lab DataNode as 'hostname cannot be resolved')."""
    write_dir(tmp_path / "nn", hdfs_conf.namenode_files("10.0.0.1", 8020, 9870, tmp_path / "name", tmp_path, 3))
    write_dir(tmp_path / "dn", hdfs_conf.datanode_files("hdfs://10.0.0.1:8020", "10.0.0.11", tmp_path / "d", tmp_path))
    for daemon in ("nn", "dn"):
        core, site = read_site(tmp_path / daemon / "core-site.xml"), read_site(tmp_path / daemon / "hdfs-site.xml")
        assert not [key for key in core if key.startswith("dfs.")], core
        assert core["fs.defaultFS"] == "hdfs://10.0.0.1:8020"
        assert site["dfs.namenode.datanode.registration.ip-hostname-check"] == "false"
        assert site["dfs.block.scanner.volume.bytes.per.second"] == "0"
    nn, dn = read_site(tmp_path / "nn" / "hdfs-site.xml"), read_site(tmp_path / "dn" / "hdfs-site.xml")
    assert nn["dfs.namenode.rpc-address"] == "10.0.0.1:8020" and nn["dfs.namenode.redundancy.considerLoad"] == "false"
    assert {dn[key] for key in hdfs_conf.DATANODE_PORTS} == {"10.0.0.11:9866", "10.0.0.11:9864", "10.0.0.11:9867"}
    assert dn["dfs.datanode.data.dir"] == str(tmp_path / "d") and dn["dfs.datanode.hostname"] == "10.0.0.11"


@dataclass(frozen=True)
class TwoHosts:
    """A placement of two lab hosts (the interface of storbench.services.placement), for a refusal only."""

    coordinator: str = "10.0.0.1"
    in_lab: bool = True
    capacity: int = 2


def test_more_datanodes_than_lab_hosts_is_refused_before_anything_is_made(tmp_path):
    workdir = tmp_path / "services" / "hdfs"
    with pytest.raises(InputError, match=r"^--datanodes 3: the lab cluster has 2 hosts$"):
        hdfs.up(workdir, 3, placement=TwoHosts())
    assert not workdir.exists()


def test_lab_cluster_without_a_lab_is_one_line(tmp_path):
    store = ResultStore(tmp_path)
    with pytest.raises(InputError, match=r"^services up hdfs --lab-cluster: no lab cluster is up in .*\)$"):
        api.service_up("hdfs", store, datanodes=3, lab_cluster=True)
    assert not (tmp_path / "services").exists()

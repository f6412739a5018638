"""The site files of ``services up hdfs --lab-cluster``'s daemons (hdfs_lab.py): one conf dir per daemon.

Settings that differ from Hadoop's defaults, and why:

- permissions on, umask 022: as on the loopback service (services/hdfs.py);
- the NameNode accepts DataNodes whose addresses have no name (``registration.ip-hostname-check``): the lab's
  addresses exist only in its namespaces and no DNS knows them; each DataNode states its address as its host
  name for the same reason (no reverse look-up that would wait on a resolver);
- every live DataNode can be chosen for a block however busy it is (``redundancy.considerLoad`` off): on a
  cluster as small as the lab's, a node left out means fewer replicas than asked, not another node;
- safe mode ends as soon as the (empty) namespace allows it: no 30 s extension after start;
- a DataNode takes a block while its disk has room for it (not 1 GB more: a lab disk is smaller than that);
- no block scanner: its reads of every block (1 MB/s by default) and the cursor files it writes would show up in
  the DataNodes' device figures that the lab's known truths compare with what a run wrote.
"""

from __future__ import annotations

from pathlib import Path

DATANODE_PORTS = {"dfs.datanode.address": 9866, "dfs.datanode.http.address": 9864, "dfs.datanode.ipc.address": 9867}
# a lab host has a network stack of its own: the same ports on every host


def _core(uri: str, tmp: Path) -> dict[str, str]:
    return {"fs.defaultFS": uri, "hadoop.tmp.dir": str(tmp), "fs.permissions.umask-mode": "022"}


# in hdfs-site, not core-site: hdfs-default.xml is read after core-site.xml and would override a dfs.* key there
COMMON_HDFS = {
    "dfs.permissions.enabled": "true",
    "dfs.namenode.datanode.registration.ip-hostname-check": "false",
    "dfs.block.scanner.volume.bytes.per.second": "0",
}


def namenode_files(
    host: str, rpc: int, http: int, name_dir: Path, tmp: Path, datanodes: int
) -> dict[str, dict[str, str]]:
    core = _core(f"hdfs://{host}:{rpc}", tmp)
    hdfs = {
        **COMMON_HDFS,
        "dfs.namenode.rpc-address": f"{host}:{rpc}",
        "dfs.namenode.http-address": f"{host}:{http}",
        "dfs.namenode.name.dir": str(name_dir),
        "dfs.namenode.safemode.extension": "0",
        # a busy DataNode (more transfers than twice the cluster's mean) is left out of new pipelines by default:
        # on three nodes asked for three replicas that silently wrote a block to two (seen: one node 2/3 of the bytes)
        "dfs.namenode.redundancy.considerLoad": "false",
        "dfs.replication": str(min(3, datanodes)),  # the files the NameNode itself makes
    }
    return {"core-site.xml": core, "hdfs-site.xml": hdfs}


def datanode_files(uri: str, host: str, data_dir: Path, tmp: Path) -> dict[str, dict[str, str]]:
    core = _core(uri, tmp)
    hdfs = {
        **COMMON_HDFS,
        **{key: f"{host}:{port}" for key, port in DATANODE_PORTS.items()},
        "dfs.datanode.hostname": host,
        "dfs.datanode.data.dir": str(data_dir),
        # a volume takes a block when it has room for the block and this much more (1 GB by default): more than a
        # lab host's whole disk (512 MB by default), which would refuse every block
        "dfs.datanode.round-robin-volume-choosing-policy.additional-available-space": "0",
    }
    return {"core-site.xml": core, "hdfs-site.xml": hdfs}

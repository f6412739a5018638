"""Where one run puts its data: the target's storage, its run root, Spark's local dir, its devices.

File targets are checked and claimed before Spark starts (bad input fails in a
second); Hadoop targets are checked for reachability first, then claimed through
the session's own Hadoop client once Spark is up. A raw device target has no run
root and nothing to claim or release: its device is the one measured.
"""

from __future__ import annotations

import os
import shutil
import tempfile
from pathlib import Path
from typing import Any, Callable

from storbench.errors import InputError, TargetError
from storbench.objstore import S3Storage, resolve_endpoint
from storbench.services import service_status
from storbench.storage import HadoopStorage, LocalStorage
from storbench.targets import Target, check_reachable, rados_parts
from storbench.telemetry import devices_for_path, parse_devices_option


class Placement:
    def __init__(self, target: Target, run_id: str, home: Path, replication: int | None,
                 endpoint: str | None = None):
        if replication is not None and target.is_local:
            raise InputError(f"--replication {replication}: applies to hdfs:// targets only; "
                             f"the target is {target.uri}")
        if replication is not None and replication < 1:
            raise InputError(f"--replication {replication}: must be at least 1")
        self.target = target
        self.run_id = run_id
        self.replication = replication
        self.storage: LocalStorage | HadoopStorage | S3Storage | None = (
            LocalStorage(target) if target.is_local else None)
        self.root_uri: str | None = None
        self.service = self._our_hdfs(home)
        self.s3 = None  # s3:// targets: endpoint and credentials (in memory only)
        if target.scheme == "s3":
            self.s3 = resolve_endpoint(endpoint, home)
            self.storage = S3Storage(target, self.s3)
            self.service = self.s3.service  # our own S3 server: its data directory is local
        if target.scheme == "rados":  # a Ceph pool: storbench's own cluster unless the URI names a conf
            self.service = self._our_ceph(home)
        self._scratch: str | None = None

    def _our_hdfs(self, home: Path) -> dict[str, Any] | None:
        """The state of storbench's own HDFS when the target is on it (its DataNode dirs are local)."""
        if self.target.scheme != "hdfs":
            return None
        state = service_status("hdfs", home)
        return state if state and self.target.uri.startswith(state["uri"]) else None

    def _our_ceph(self, home: Path) -> dict[str, Any] | None:
        """The state of storbench's own Ceph when a rados:// target names no conf (or names its conf)."""
        conf = rados_parts(self.target)[1]
        state = service_status("ceph", home)
        return state if state and conf in (None, state["conf"]) else None

    @property
    def is_device(self) -> bool:
        return self.target.scheme == "device"

    def local_path(self) -> Path | None:
        """The local directory whose device holds the data, when there is one on this host."""
        if self.is_device:
            return None  # a raw device has no filesystem
        if self.target.is_local:
            return self.target.path
        if self.target.scheme == "rados":  # our own cluster's OSD data (BlueStore files) is on this host
            return Path(self.service["osd_root"]) if self.service else None
        if self.service:  # one of our own services: its data directory is on this host
            if self.service.get("data_dir"):  # the s3 service (SeaweedFS, MinIO, s3proxy)
                return Path(self.service["data_dir"])
            if self.service.get("datanode_dirs"):  # HDFS: all DataNodes share one host directory
                return Path(self.service["datanode_dirs"][0])
            if self.service.get("ceph_workdir"):  # Ceph RGW behind the s3 service: the OSDs' files
                return Path(self.service["ceph_workdir"])
        return None

    def devices(self, option: str | None, warn: Callable[[str], None]) -> tuple[list[str], str]:
        if option:
            return parse_devices_option(option), "--devices"
        if self.is_device and self.target.path is not None:  # the device itself
            return [Path(os.path.realpath(self.target.path)).name], f"raw device {self.target.path}"
        path = self.local_path()
        if path is None:
            warn(f"target {self.target.uri} is remote: no local device to measure; "
                 f"pass --devices with the DataNodes' disks to measure them")
            return [], "remote target"
        resolution = devices_for_path(str(path))
        if resolution.warning:
            warn(resolution.warning)
        return resolution.devices, resolution.how

    def precheck(self, need_bytes: int) -> None:
        """Before anything starts: capacity (file) or reachability (remote)."""
        if self.is_device:
            return  # the workloads check the device (fio: safety and size; others refuse it)
        if self.target.scheme == "rados":  # the run root names the cluster; the workloads check the pool
            pool, conf = rados_parts(self.target)
            if conf is None and self.service is None:
                raise TargetError(f"target {self.target.uri}: storbench's Ceph is not running; start it with "
                                  f"`storbench services up ceph` or name a cluster's conf: rados://{pool}?conf=PATH")
            self.root_uri = f"rados://{pool}?conf={conf or self.service['conf']}"  # type: ignore[index]
            return
        if isinstance(self.storage, LocalStorage):
            self.storage.check_capacity(need_bytes)
        elif isinstance(self.storage, S3Storage):
            self.storage.check()  # endpoint answers, credentials accepted, bucket present
        else:
            if self.service and (self.replication or 1) > self.service["datanodes"]:
                raise InputError(f"--replication {self.replication}: above the {self.service['datanodes']} "
                                 f"DataNode(s) of {self.service['uri']}; allowed: 1 to {self.service['datanodes']}")
            check_reachable(self.target)

    def claim_local(self) -> None:
        """File targets: claim the run root now, before Spark starts (remote ones do it in attach)."""
        if isinstance(self.storage, (LocalStorage, S3Storage)):
            self.root_uri = self.storage.claim(self.run_id)

    def spark_local_dir(self) -> str:
        """Shuffle and spill go to the target's own device for file targets, as on the paper's nodes."""
        if self.target.is_local:
            return str(self.target.path / f"storbench-{self.run_id}" / "spark-local")
        self._scratch = tempfile.mkdtemp(prefix=f"storbench-{self.run_id}-spark-")
        return self._scratch

    def spark_conf(self) -> dict[str, str]:
        conf = {"spark.hadoop.ipc.client.connect.max.retries": "2",
                "spark.hadoop.ipc.client.connect.timeout": "5000"}
        if self.replication is not None:
            conf["spark.hadoop.dfs.replication"] = str(self.replication)
        return conf if not self.target.is_local else {}

    def attach(self, spark: Any, need_bytes: int) -> None:
        """Remote targets: check capacity and replication, then claim the run root, through Spark."""
        if self.root_uri is not None:
            return
        local_dirs = self.service["datanode_dirs"] if self.service else []
        storage = HadoopStorage(self.target, spark, local_dirs)
        storage.check_capacity(need_bytes, self.replication or 1)
        self.storage = storage
        self.root_uri = storage.claim(self.run_id)

    def release(self, keep_data: bool) -> None:
        if self._scratch:
            shutil.rmtree(self._scratch, ignore_errors=True)
        if self.is_device:
            return  # no run root on a raw device
        if keep_data or self.storage is None or self.root_uri is None:
            return
        self.storage.release(self.run_id)

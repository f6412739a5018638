"""``hdfs://host:port/path`` targets, reached through the Hadoop client of the run's engine (Spark's).

Before the engines start only reachability (and replication against storbench's own HDFS) is
checked, so a wrong address fails in a second; the run root is claimed in ``attach``,
through the session's Hadoop FileSystem, so storbench sees exactly what the workloads see.
"""

from __future__ import annotations

import os
import socket
from pathlib import Path
from typing import Any, Protocol, runtime_checkable

from urllib.parse import urlparse

from storbench.errors import InputError, TargetError
from storbench.services import service_status
from storbench.targets.base import (
    MARKER,
    Target,
    TargetOptions,
    below_root,
    evict_from_page_cache,
    refuse_capacity,
    register,
    syncfs,
)

CONNECT_TIMEOUT_S = 3.0


@runtime_checkable
class HadoopClientSource(Protocol):
    """An engine that runs a Hadoop client this target can check and claim through (declared here, below the
    engines: the target asks for it by ``isinstance``, and an engine has it by defining the method)."""

    def hadoop_client(self) -> tuple[Any, Any] | None:
        """(JVM gateway, Hadoop Configuration) of the running client; None before it runs."""
        ...


OWNER_XATTR = "user.storbench.run"  # on the run root: the run id that claimed it (kept by the NameNode)


def _live_datanodes(fs: Any) -> int | None:
    """Live DataNodes; None where the NameNode tells them only to its superuser (permissions on, as on
    storbench's own HDFS, whose DataNodes ``precheck`` counted from the service's state)."""
    if not hasattr(fs, "getDataNodeStats"):
        return None
    try:
        return len(fs.getDataNodeStats())
    except Exception as exc:  # noqa: BLE001 - py4j's Java error: only the refusal is expected here
        if "AccessControlException" not in str(exc):
            raise
        return None


@register
class HdfsTarget(Target):
    scheme = "hdfs"
    replicated = True
    kind = "hdfs://"
    usage = "hdfs://host:port/path"
    wanted = "an hdfs://HOST:PORT/PATH"

    def __init__(self, host: str, port: int, path: str, options: TargetOptions):
        super().__init__(f"hdfs://{host}:{port}{path}", options)
        self.host, self.port = host, port
        self.replication = options.replication
        state = service_status("hdfs", options.home) if options.home else None
        # storbench's own HDFS, when the target is on it: its DataNode directories are on this host
        self.service = state if state and self.uri.startswith(state["uri"]) else None
        self._jvm: Any = None
        self._conf: Any = None
        self._created: list[Any] = []  # the target directories the claim made (deepest first): removed if empty

    @classmethod
    def parse(cls, text: str, options: TargetOptions) -> Target:
        parsed = urlparse(text)
        if not parsed.hostname or not parsed.port:
            raise InputError(
                f"--target {text!r}: an hdfs:// target needs host and port, "
                f"e.g. hdfs://127.0.0.1:8020/storbench (see `storbench services up hdfs`)"
            )
        return cls(parsed.hostname, parsed.port, parsed.path.rstrip("/") or "", options)

    # -- before Spark -----------------------------------------------------------------------

    def precheck(self, need_bytes: int) -> None:
        """Replication within our own cluster's DataNodes, and the NameNode answers within seconds."""
        if self.service and (self.replication or 1) > self.service["datanodes"]:
            raise InputError(
                f"--replication {self.replication}: above the {self.service['datanodes']} "
                f"DataNode(s) of {self.service['uri']}; allowed: 1 to {self.service['datanodes']}"
            )
        try:
            with socket.create_connection((self.host, self.port), timeout=CONNECT_TIMEOUT_S):
                pass
        except OSError as exc:
            raise TargetError(
                f"target {self.uri}: cannot connect to {self.host}:{self.port} "
                f"({exc.strerror or exc}); is the NameNode running?"
            ) from None
        if self.service and self.service.get("client_user"):  # storbench's own HDFS: its clients act as the
            # user owning its namespace (services/hdfs.py), in every JVM the run starts (Spark's, Hadoop's tools)
            os.environ.setdefault("HADOOP_USER_NAME", self.service["client_user"])

    def local_path(self) -> Path | None:
        """Our own HDFS: all its DataNodes share one host directory."""
        return Path(self.service["datanode_dirs"][0]) if self.service else None

    # -- through an engine's Hadoop client ------------------------------------------------------

    def attach(self, engines: dict[str, Any], need_bytes: int) -> None:
        """Through the first engine that runs a Hadoop client: the one the workloads use too."""
        sources = (engine for engine in engines.values() if isinstance(engine, HadoopClientSource))
        client = next(filter(None, (engine.hadoop_client() for engine in sources)), None)
        if client is not None:
            self.attach_client(*client, need_bytes)

    def attach_client(self, jvm: Any, conf: Any, need_bytes: int) -> None:
        """Check live DataNodes and free space through the Hadoop client (its JVM and Configuration), then
        claim the run root."""
        if self.root_uri is not None:
            return
        self._jvm, self._conf = jvm, conf
        replication = self.replication or 1
        fs = self.fs()
        live = _live_datanodes(fs)
        if live is not None and replication > live:
            raise InputError(
                f"replication {replication} is above the {live} live DataNode(s) of {self.uri}; allowed: 1 to {live}"
            )
        refuse_capacity(self.uri, need_bytes * replication, int(fs.getStatus().getRemaining()))
        root = self.run_root_uri()
        if fs.exists(self.hadoop_path(root)):
            raise TargetError(f"target {self.uri}: {root} already exists; refusing to reuse it")
        parent = self.hadoop_path(root).getParent()
        while parent is not None and not fs.exists(parent):
            self._created.append(parent)
            parent = parent.getParent()
        fs.mkdirs(self.hadoop_path(root))
        out = fs.create(self.hadoop_path(f"{root}/{MARKER}"), False)
        out.write(bytearray((self.run_id + "\n").encode()))
        out.close()
        try:  # the claim kept by the NameNode too: readable when the DataNode holding the marker is gone
            fs.setXAttr(self.hadoop_path(root), OWNER_XATTR, bytearray(self.run_id.encode()))
        except Exception:  # noqa: BLE001 - xattrs disabled on that cluster: the marker's content decides
            pass
        self.root_uri = root

    def hadoop_path(self, uri: str) -> Any:
        """An org.apache.hadoop.fs.Path (after ``attach``)."""
        if self._jvm is None:
            raise TargetError(f"target {self.uri}: not attached to a Spark session yet")
        return self._jvm.org.apache.hadoop.fs.Path(uri)

    def fs(self) -> Any:
        """The target's Hadoop FileSystem, as the workloads' Spark sees it (after ``attach``)."""
        return self.hadoop_path(self.uri or "/").getFileSystem(self._conf)

    def release_root(self) -> bool:
        fs, root = self.fs(), self.run_root_uri()
        marker = self.hadoop_path(f"{root}/{MARKER}")
        if not fs.exists(marker) or self._claimed_by(fs, root, marker) != self.run_id:
            return False
        deleted = bool(fs.delete(self.hadoop_path(root), True))
        for directory in self._created:  # what the claim made for the target, only while empty
            if fs.listStatus(directory):
                break
            fs.delete(directory, False)
        return deleted

    def _claimed_by(self, fs: Any, root: str, marker: Any) -> str:
        """The run id that claimed ``root``: the NameNode's xattr, else the marker's content."""
        try:
            return bytes(fs.getXAttr(self.hadoop_path(root), OWNER_XATTR)).decode()
        except Exception:  # noqa: BLE001 - no xattr (xattrs disabled, or claimed by an older storbench)
            pass
        stream = fs.open(marker)
        try:
            return str(self._jvm.org.apache.commons.io.IOUtils.toString(stream, "UTF-8")).strip()
        finally:
            stream.close()

    def size_bytes(self, uri: str) -> int:
        return int(self.fs().getContentSummary(self.hadoop_path(uri)).getLength())

    def delete(self, uri: str) -> bool:
        """Only below this run's root (same NameNode, no '..' or '.'), whose claim names this run."""
        root, wanted = urlparse(self.root_uri or ""), urlparse(uri)
        if (
            not self.run_id
            or not root.path
            or (wanted.scheme or root.scheme) != root.scheme
            or (wanted.netloc or root.netloc) != root.netloc
            or below_root(root.path, wanted.path) is None
        ):
            raise self.refuse_delete(uri)
        fs, marker = self.fs(), self.hadoop_path(f"{self.root_uri}/{MARKER}")
        if not fs.exists(marker) or self._claimed_by(fs, self.root_uri, marker) != self.run_id:
            raise self.refuse_delete(uri, f"the root's {MARKER} does not name run {self.run_id}")
        return bool(fs.delete(self.hadoop_path(uri), True))

    def flush(self) -> str:
        """Spark's committer closes every file it wrote before the job ends, and an HDFS close returns once
        each DataNode of the pipeline acknowledged the last packet: the data is on the DataNodes, in their
        page cache, not necessarily on their disks (Spark's writers never call hsync). When the DataNodes are
        ours (their directories are on this host) their file systems are synced here; remote DataNodes
        reach their disks inside the window only with dfs.datanode.synconclose=true in their own settings."""
        local_dirs = [Path(d) for d in (self.service["datanode_dirs"] if self.service else []) if Path(d).exists()]
        if not local_dirs:
            return "close"
        for directory in local_dirs:
            syncfs(directory)
        return "syncfs (DataNode directories)"

    def evict(self, uri: str) -> int:
        """The blocks live in the DataNodes' directories; when those are ours, drop them from the cache."""
        local_dirs = self.service["datanode_dirs"] if self.service else []
        return sum(evict_from_page_cache(Path(d)) for d in local_dirs if Path(d).exists())

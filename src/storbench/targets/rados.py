"""``rados://POOL`` targets: a Ceph pool, on storbench's own cluster or a cluster named by its conf.

``rados://POOL`` means the pool on ``storbench services up ceph``; ``rados://POOL?conf=PATH``
names any cluster's ceph.conf. A pool has no directory to mark: the run root records the
pool and the resolved conf, and the rados-bench workloads remove exactly the objects they wrote.
"""

from __future__ import annotations

import re
from pathlib import Path
from urllib.parse import parse_qs, urlparse

from storbench.errors import InputError, TargetError
from storbench.services import service_status
from storbench.targets.base import Target, TargetOptions, evict_from_page_cache, register


@register
class RadosTarget(Target):
    scheme = "rados"
    kind = "RADOS pool"
    usage = "rados://POOL[?conf=/etc/ceph/ceph.conf]"
    wanted = "a RADOS pool target: rados://POOL on `storbench services up ceph` or rados://POOL?conf=PATH"

    def __init__(self, pool: str, conf: str | None, options: TargetOptions):
        super().__init__(f"rados://{pool}" + (f"?conf={conf}" if conf else ""), options)
        self.pool = pool
        self.given_conf = conf  # None: storbench's own cluster
        state = service_status("ceph", options.home) if options.home else None
        # storbench's own Ceph, when the target names no conf (or names its conf): its OSDs' files are local
        self.service = state if state and conf in (None, state["conf"]) else None

    @classmethod
    def parse(cls, text: str, options: TargetOptions) -> Target:
        parsed = urlparse(text)
        pool = parsed.netloc
        query = parse_qs(parsed.query, keep_blank_values=True)
        if not pool or not re.fullmatch(r"[A-Za-z0-9._-]+", pool) or parsed.path.strip("/") or set(query) - {"conf"}:
            raise InputError(
                f"--target {text!r}: a rados:// target is rados://POOL (on `storbench services up "
                f"ceph`) or rados://POOL?conf=/etc/ceph/ceph.conf"
            )
        if "conf" not in query:
            return cls(pool, None, options)
        conf = query["conf"][0]
        path = Path(conf).expanduser().absolute()
        if not conf or not path.is_file():
            raise TargetError(f"--target {text!r}: the Ceph conf {conf or '(empty)'} is not a file")
        return cls(pool, str(path), options)

    def conf(self) -> str:
        """The cluster's ceph.conf: the one named, else storbench's own cluster's."""
        conf = self.given_conf or (self.service or {}).get("conf")
        if not conf:
            raise TargetError(
                f"target {self.uri}: storbench's Ceph is not running; start it with "
                f"`storbench services up ceph` or name a cluster's conf: rados://{self.pool}?conf=PATH"
            )
        return str(conf)

    def precheck(self, need_bytes: int) -> None:
        """A cluster to reach: a conf named, or storbench's own Ceph running (the workloads check the pool)."""
        self.conf()

    def local_path(self) -> Path | None:
        """Our own cluster's OSD data (BlueStore files) is on this host."""
        return Path(self.service["osd_root"]) if self.service else None

    def evict(self, uri: str) -> int:
        """Our own cluster's OSD files (BlueStore's block file, RocksDB through BlueFS's buffered I/O) out of
        this host's page cache; a cluster named by its conf keeps its hosts' caches (0)."""
        dirs = [Path(d) for d in (self.service or {}).get("osd_dirs", [])]
        return sum(evict_from_page_cache(d) for d in dirs if d.exists())

    def claim_root(self) -> str:
        """The run root names the cluster; a pool holds no marker."""
        return f"rados://{self.pool}?conf={self.conf()}"

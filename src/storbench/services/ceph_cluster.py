"""One Ceph cluster while storbench brings it up: its ceph.conf (monitor, OSDs on BlueStore files or memstore, the
RGW's frontend on 127.0.0.1) and the commands and daemons it runs, each bounded in time."""

from __future__ import annotations

import json
import subprocess
import time
from pathlib import Path
from typing import Any

from storbench.errors import EngineError
from storbench.services import ceph_auth, process

START_TIMEOUT_S = 120.0
COMMAND_TIMEOUT_S = 60.0
OFFLINE_TOOLS = ("monmaptool", "ceph-authtool")  # take no -c ceph.conf


def conf_text(
    workdir: Path,
    fsid: str,
    ports: dict[str, int],
    osd_root: Path,
    objectstore: str,
    osd_bytes: int,
    osds: int,
    run_dir: Path,
) -> str:
    memory = max(1 << 30, (2 << 30) // osds)
    store = (
        [
            "osd_objectstore = bluestore",
            "# bluestore_block_path left unset on purpose (default $osd_data/block, a plain file)",
            f"bluestore_block_size = {osd_bytes}",
            "bluestore_block_create = true",
            "bluestore_block_db_create = false",
            "bluestore_block_wal_create = false",
        ]
        if objectstore == "bluestore"
        else ["osd_objectstore = memstore", f"memstore_device_bytes = {osd_bytes}"]
    )
    lines = [
        "# written by storbench (services up ceph); removed by `storbench services down ceph`",
        "[global]",
        f"fsid = {fsid}",
        f"mon_host = [v2:127.0.0.1:{ports['mon_v2']},v1:127.0.0.1:{ports['mon_v1']}]",
        "mon_initial_members = a",
        "public_addr = 127.0.0.1",
        "cluster_addr = 127.0.0.1",
        *ceph_auth.conf_lines(workdir),
        "ms_mon_client_mode = crc",
        "ms_client_mode = crc",
        f"run_dir = {run_dir}",
        f"admin_socket = {run_dir}/$cluster-$name.asok",
        f"log_file = {workdir}/log/$cluster-$name.log",
        f"crash_dir = {workdir}/crash",
        "osd_pool_default_size = 1",
        "osd_pool_default_min_size = 1",
        "osd_pool_default_pg_num = 8",
        "osd_pool_default_pgp_num = 8",
        "osd_pool_default_pg_autoscale_mode = off",
        "osd_crush_chooseleaf_type = 0",
        "mon_allow_pool_size_one = true",
        "mon_allow_pool_delete = false",
        "mon_warn_on_pool_no_redundancy = false",
        "mon_warn_on_insecure_global_id_reclaim_allowed = false",
        "mon_max_pg_per_osd = 1000",
        "[client]",
        "admin_socket =",
        f"log_file = {workdir}/log/client.log",
        "[mon]",
        f"mon_data = {workdir}/mon/$id",
        "keyring = $mon_data/keyring",
        "mon_data_avail_warn = 2",
        "mon_data_avail_crit = 1",
        "[mgr]",
        f"mgr_data = {workdir}/mgr/$id",
        "[osd]",
        f"osd_data = {osd_root}/osd$id",
        *store,
        f"osd_memory_target = {memory}",
        "[client.rgw.x]",
        f"admin_socket = {run_dir}/$cluster-$name.asok",
        f"log_file = {workdir}/log/$cluster-$name.log",
        f"rgw_data = {workdir}/rgw",
        f"rgw_frontends = beast endpoint=127.0.0.1:{ports['rgw']}",
        "rgw_thread_pool_size = 64",
    ]
    return "\n".join(lines) + "\n"


class BootingCluster:
    """The commands and daemons of one cluster while it comes up."""

    def __init__(self, workdir: Path, binaries: dict[str, str]):
        self.workdir = workdir
        self.conf = workdir / "ceph.conf"
        self.bin = binaries
        self.daemons: list[dict[str, Any]] = []

    def run(self, *args: str, tool: str = "ceph", timeout: float = COMMAND_TIMEOUT_S, check: bool = True) -> str:
        argv = [self.bin.get(tool) or tool, *([] if tool in OFFLINE_TOOLS else ["-c", str(self.conf)]), *args]
        if tool == "ceph":
            argv[3:3] = ["--connect-timeout", str(int(timeout))]
        try:
            done = subprocess.run(argv, capture_output=True, text=True, timeout=timeout + 5, umask=ceph_auth.UMASK)
        except subprocess.TimeoutExpired:
            raise EngineError(
                f"`{tool} {' '.join(args)}` did not answer within {timeout:.0f} s; logs in {self.workdir / 'log'}"
            ) from None
        if check and done.returncode != 0:
            why = (done.stderr.strip() or done.stdout.strip()).splitlines()
            raise EngineError(
                f"`{tool} {' '.join(args)}` failed (exit {done.returncode}): {why[-1][:300] if why else 'no message'}"
            )
        return done.stdout

    def spawn(self, kind: str, name: str, argv: list[str]) -> dict[str, Any]:
        proc = process.spawn(argv, self.workdir / "log", f"{name}.stdout", umask=ceph_auth.UMASK)
        marker = f"-c {self.conf} "
        daemon = {"kind": kind, "name": name, "pid": proc.pid, "marker": marker, "argv": argv}
        self.daemons.append(daemon)
        time.sleep(0.2)
        if proc.poll() is not None:
            raise EngineError(
                f"ceph {name} exited with code {proc.returncode} at start; last log line: "
                f"{process.last_line(self.workdir / 'log' / f'{name}.stdout')}"
            )
        return daemon

    def health(self) -> dict[str, Any]:
        return json.loads(self.run("-s", "-f", "json", timeout=15))

    def wait_clean(self, osds: int, deadline: float) -> dict[str, Any]:
        """Until every OSD is up and in and every PG is active+clean."""
        last = "no answer"
        while time.monotonic() < deadline:
            self.check_alive()
            try:
                status = self.health()
            except (EngineError, json.JSONDecodeError) as exc:
                last = str(exc)
                time.sleep(1)
                continue
            osdmap = status.get("osdmap", {})
            osdmap = osdmap.get("osdmap", osdmap)
            pgmap = status.get("pgmap", {})
            total = pgmap.get("num_pgs", 0)
            clean = sum(s["count"] for s in pgmap.get("pgs_by_state", []) if s["state_name"] == "active+clean")
            last = (
                f"{status['health']['status']}, {osdmap.get('num_up_osds')}/{osds} OSDs up, "
                f"{clean}/{total} PGs active+clean"
            )
            if (
                osdmap.get("num_up_osds", 0) >= osds
                and osdmap.get("num_in_osds", 0) >= osds
                and total
                and clean == total
                and status["health"]["status"] in ("HEALTH_OK", "HEALTH_WARN")
            ):
                return status
            time.sleep(1)
        raise EngineError(
            f"Ceph did not become clean within {START_TIMEOUT_S:.0f} s ({last}); logs in {self.workdir / 'log'}"
        )

    def check_alive(self) -> None:
        for daemon in self.daemons:
            if not process.still_running(daemon["pid"], daemon["marker"]):
                log = self.workdir / "log" / f"ceph-{daemon['name']}.log"
                raise EngineError(
                    f"ceph {daemon['name']} (pid {daemon['pid']}) exited while starting; "
                    f"last log line: {process.last_line(log)}"
                )

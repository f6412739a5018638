"""`services up cassandra --nodes 3 --lab-cluster`: a real 3-node Cassandra (RF 3) whose nodes run in lab hosts
(their namespaces, addresses, cgroups and disks), and one node's link cut mid-run (`lab cluster cut node-2`) while
YCSB workload A runs on the native engine, at consistency ONE and at QUORUM.

Two replicas of three still answer at both levels, so the run goes on (README, "a node lost mid-run"): the
requests that were on their way to the lost node fail and are counted by kind, the engine sends that node's keys
to the next replica, the lost node's telemetry is a recorded gap, and the other nodes' per-node rows are in the
report. The cut comes once node 1 has served reads of the run's table (only ycsb-a reads), not after a sleep;
the link comes back once ycsb-a's samples are stored, before the run's cleanup drops its keyspace. Then
`services down cassandra` leaves only each host's exporter in it, and `lab cluster down` the machine as it was.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from storbench.cassandra_cql import session_on
from storbench.lab import cluster
from storbench.lab.disks import BLKIO, THROTTLES
from storbench.services import cassandra
from tests.cli.helpers import SRC, storbench
from tests.lab_cluster.machine import changes, snapshot

pytestmark = [
    pytest.mark.lab,
    pytest.mark.cassandra,
    pytest.mark.skipif(os.geteuid() != 0, reason="a lab cluster needs root (namespaces, loop devices, cgroups)"),
    pytest.mark.skipif(not (BLKIO / THROTTLES["disk_write_mbps"]).exists(), reason="no cgroup v1 blkio throttle"),
]

KINDS = ("timeout", "connection", "read_timeout", "write_timeout", "unavailable")
CUT = "node-2"
CUT_AFTER_READS = 5  # node 1's local reads of the run's table: ycsb-a has begun
TIMEOUT_S = 2  # the engine's per-request timeout: the requests cut off on their way end within it
MAX_ERROR_PCT = 10  # the requests cut off on their way and one try per timeout_s: a few of ~1000 here
# long enough to serve on after the cut: on a starved host (ci42, 30-50% steal) the cut came after 12,103 operations
# of a 20 s run, and the seconds after it had none
DURATION_S = 30


def cgroup_pids(host: cluster.LabHost) -> list[str]:
    return Path(host.cgroup, "cgroup.procs").read_text().split()


def _left_in_hosts(hosts: list[cluster.LabHost]) -> dict[str, list[str]]:
    """What runs in each host beside its exporter once `services down` returned: a JVM killed under load may take
    a while to leave its cgroup, so until nothing does (or 120 s), then each one's command line."""
    deadline = time.monotonic() + 120
    while True:
        extra = {h.name: [c for c in map(_cmdline, cgroup_pids(h)) if "node-exporter" not in c] for h in hosts}
        if not any(extra.values()) or time.monotonic() > deadline:
            return {name: lines for name, lines in extra.items() if lines}
        time.sleep(0.5)


def _cmdline(pid: str) -> str:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode()[:300]
    except OSError:
        return f"{pid} (gone)"


def _local_reads(session, keyspace: str) -> int:
    rows = session.execute(
        "SELECT table_name, count FROM system_views.local_read_latency WHERE keyspace_name = %s", (keyspace,)
    )
    return sum(row.count for row in rows if row.table_name == "usertable")


def _phase_stored(home: Path, earlier: set[Path]) -> bool:
    return any(
        '"workload": "ycsb-a"' in path.read_text()
        for path in home.glob("runs/*/samples.jsonl")
        if path.parent not in earlier
    )


def _run_cutting(home: Path, state: dict, consistency: str) -> tuple[subprocess.CompletedProcess, float]:
    """`storbench run ycsb-a` at ``consistency``, node-2's link cut once node 1 served CUT_AFTER_READS reads and
    restored once ycsb-a's samples are stored; (the finished run, unix time of the cut)."""
    keyspace = f"lab_cut_{consistency.lower()}"
    port = state["ports"]["native"]
    contacts = ",".join(f"{host}:{port}" for host in state["hosts"])
    command = [
        *(sys.executable, "-m", "storbench", "--results", str(home), "run", "ycsb-a", "--json"),
        *("--target", f"cassandra://{contacts}/{keyspace}?tls=1&ca={state['ca_file']}", "--replication", "3"),
        *("--label", f"lab-cut-{consistency.lower()}"),
        *(
            "--set",
            "recordcount=500",
            "--set",
            f"duration_s={DURATION_S}",
            "--set",
            "threads=8",
            "--set",
            "restore=none",
        ),
        *(
            "--set",
            f"consistency={consistency}",
            "--set",
            f"timeout_s={TIMEOUT_S}",
            "--set",
            f"max_error_pct={MAX_ERROR_PCT}",
        ),
    ]
    earlier = set(home.glob("runs/*"))
    proc = subprocess.Popen(
        command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env={**os.environ, "PYTHONPATH": SRC}
    )
    cut_at = 0.0
    try:
        with session_on([state["hosts"][0]], port, pin=True, credentials=cassandra.credentials(state)) as session:
            deadline = time.monotonic() + 300
            while _local_reads(session, keyspace) < CUT_AFTER_READS:
                assert proc.poll() is None and time.monotonic() < deadline, proc.communicate()
                assert not _phase_stored(home, earlier), "ycsb-a ended before node 1 served its reads"
                time.sleep(0.05)
        cut = storbench(home, "lab", "cluster", "cut", CUT, timeout=60)
        cut_at = time.time()
        assert cut.returncode == 0, cut.stderr
        deadline = time.monotonic() + 180
        while not _phase_stored(home, earlier) and proc.poll() is None:
            assert time.monotonic() < deadline, "ycsb-a did not end within 180 s of the cut"
            time.sleep(0.1)
        storbench(home, "lab", "cluster", "restore", CUT, timeout=60)  # before the run's cleanup drops the keyspace
        stdout, stderr = proc.communicate(timeout=300)  # bounded: the run ends, it does not hang
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        storbench(home, "lab", "cluster", "restore", CUT, timeout=60)
        cassandra.wait_normal(state, timeout=300)  # whole again before the next consistency
    return subprocess.CompletedProcess(command, proc.returncode, stdout, stderr), cut_at


def _check_outcome(home: Path, done: subprocess.CompletedProcess, cut_at: float, consistency: str) -> str:
    """The run went on past the cut with its errors counted by kind, node-2's gap recorded, the other nodes'
    rows kept; the outcome as one line for the log."""
    assert done.returncode == 0, done.stderr[-3000:]
    outcome = json.loads(done.stdout)
    assert outcome["status"] == "succeeded", outcome
    run = Path(outcome["path"])
    samples = [json.loads(line) for line in (run / "samples.jsonl").read_text().splitlines()]
    mine = [s for s in samples if s["workload"] == "ycsb-a" and "node" not in s["labels"]]
    errors = {
        s["labels"].get("error"): s["value"] for s in mine if s["metric"] == "ycsb_errors" and "op" not in s["labels"]
    }
    ops = next(s["value"] for s in mine if s["metric"] == "ycsb_operations" and not s["labels"])
    rate = next(s["value"] for s in mine if s["metric"] == "ycsb_throughput_ops_s")
    assert errors[None] > 0, errors  # the requests on their way to node-2 failed ...
    assert set(errors) - {None} <= set(KINDS), errors  # ... counted by kind
    assert errors[None] == sum(v for kind, v in errors.items() if kind), errors
    result = json.loads((run / "artifacts.json").read_text())["ycsb"]["runs"][-1]["result"]
    cut_s = cut_at - result["start_unix_ms"] / 1000
    # the seconds begun once the requests on their way at the cut have timed out
    after = [s for s in result["series"] if s["t"] >= cut_s + TIMEOUT_S]
    before = [s for s in result["series"] if s["t"] < cut_s]
    assert sum(s["ops"] for s in before) > 0 and sum(s["ops"] for s in after) > 0, result["series"]  # served on
    manifest = json.loads((run / "manifest.json").read_text())
    note = f"(at most {MAX_ERROR_PCT}% allowed: max_error_pct)"
    assert any(n.startswith("ycsb-a: ") and n.endswith(note) for n in manifest["notes"]), manifest["notes"]
    gaps = {g["name"] for g in manifest.get("telemetry_gaps") or []}
    assert gaps <= {CUT}, gaps  # the lost node's exporter, no other's
    shown = json.loads(storbench(home, "show", f"lab-cut-{consistency.lower()}", "--format", "json").stdout)
    written = {
        r["labels"]["node"]: r["cells"][0]["aggregate"]
        for r in shown["rows"]
        if r["workload"] == "ycsb-a" and r["metric"] == "written_mb" and "node" in r["labels"]
    }
    assert {"cassandra-1", "cassandra-3"} <= set(written), written  # the other nodes' figures are kept
    assert all(written[n] > 0 for n in ("cassandra-1", "cassandra-3")), written
    by_kind = ", ".join(f"{k} {v:g}" for k, v in errors.items() if k)
    return (
        f"{consistency}: {ops:g} ops at {rate:.1f} ops/s, {errors[None]:g} errors ({by_kind}); "
        f"telemetry gaps {sorted(gaps)}; written MB per node {written}"
    )


def test_a_link_cut_mid_run_at_one_and_quorum_keeps_the_run_and_the_other_nodes_figures(tmp_path):
    home = tmp_path
    before = snapshot()
    made = storbench(home, "lab", "cluster", "up", "--nodes", "3", timeout=120)
    assert made.returncode == 0, made.stderr
    hosts = cluster.hosts_of(home)
    token = hosts[0].namespace.split("-")[1]  # storbench-TOKEN-node-1: every name the cluster made has it
    try:
        up = storbench(
            home, "services", "up", "cassandra", "--nodes", "3", "--heap", "512m", "--lab-cluster", timeout=900
        )
        assert up.returncode == 0, up.stderr[-3000:]
        state = cassandra.status(home / "services" / "cassandra")
        assert state["hosts"] == [h.address for h in hosts]
        for host in hosts:  # the node's JVM is in its host's cgroup, beside the host's exporter
            assert len(cgroup_pids(host)) >= 2, host
        nodes = [n for n in state["processes"] if n["kind"] == "node"]
        assert [Path(n["data_dir"]).is_relative_to(h.mount) for n, h in zip(nodes, hosts)] == [True] * 3
        lines = [_check_outcome(home, *_run_cutting(home, state, level), level) for level in ("ONE", "QUORUM")]
        print("\n".join(lines))
    finally:
        stopped = storbench(home, "services", "down", "cassandra", timeout=300)
        left = _left_in_hosts(hosts)
        data = [h.name for h in hosts if Path(h.mount, cassandra.LAB_ROOT).exists()]
        down = storbench(home, "lab", "cluster", "down", timeout=120)
    assert down.returncode == 0, down.stderr
    assert stopped.returncode == 0, stopped.stderr
    assert not left, left  # only each host's exporter after cassandra's down
    assert not data, data  # the nodes' data went with them
    after = snapshot()
    assert not changes(before, after, token) and not changes(before, after, str(home))

"""YCSB on a real 3-node Cassandra cluster on loopback at replication factor 3 (`storbench services up cassandra
--nodes 3`): load + workloads A and D through the CLI with restore=snapshot on every node, the operation types
in YCSB's proportions, the restored table equal to the post-load one (count and checksum read at ALL)."""

from __future__ import annotations

import json

import pytest

from storbench.workloads.ycsb import core_workload
from tests.cli.helpers import storbench

from .test_ycsb_cli import _run_dir, _samples

pytestmark = pytest.mark.cassandra

RECORDS = 1000
OPS = 2000


def test_rf3_load_a_and_d_with_every_node_restored(cassandra3, tmp_path):
    home, state = cassandra3
    suite = tmp_path / "ycsb-rf3.yaml"
    suite.write_text(f"""name: ycsb-rf3
repetitions: 1
scales:
  tiny: {{recordcount: {RECORDS}, operationcount: {OPS}, threads: 4}}
params: {{restore: snapshot, consistency: QUORUM}}
prepare: [ycsb-load]
workloads: [ycsb-d, ycsb-a]
""")
    uri = ",".join(f"{host}:{state['ports']['native']}" for host in state["hosts"])
    done = storbench(
        home, "run", str(suite), "--target", f"cassandra://{uri}", "--replication", "3", "--scale", "tiny", timeout=900
    )
    assert done.returncode == 0, done.stderr[-3000:]
    run_dir = _run_dir(home, done.stdout)
    manifest = json.loads((run_dir / "manifest.json").read_text())
    assert (manifest["config"]["replication"], manifest["config"]["cassandra_nodes"]) == (3, 3)
    samples = _samples(run_dir)
    for letter in "da":
        mix = {e["op"]: e["weight"] for e in core_workload(letter)["mix"]}
        done_ops = {
            s["labels"]["op"]: s["value"]
            for s in samples
            if s["workload"] == f"ycsb-{letter}" and s["metric"] == "ycsb_operations" and "op" in s["labels"]
        }
        assert set(done_ops) == set(mix) and sum(done_ops.values()) == OPS
        assert all(done_ops[op] > 0 and abs(done_ops[op] / OPS - w) <= 0.03 for op, w in mix.items()), done_ops
    kept = json.loads((run_dir / "artifacts.json").read_text())["ycsb"]
    post_load = kept["post_load"]["state"]
    assert post_load["rows"] == RECORDS
    restores = kept["restores"]
    assert [r["before"] for r in restores] == ["ycsb-d", "ycsb-a"]
    assert all(r["restored"] == post_load for r in restores)
    assert restores[1]["found"]["rows"] > RECORDS  # D's inserts were there before A's restore

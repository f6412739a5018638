"""benchmarks/objects_vs_peers.py and its clients (benchmarks/object_clients.py): s5cmd is driven with explicit keys
(no LIST) on a real SeaweedFS, and each round's storbench time is paired with the best peer of the same round."""

from __future__ import annotations

import importlib.util
import os
import sys
from pathlib import Path


BENCHMARKS = Path(__file__).resolve().parents[3] / "benchmarks"


def _bench(name: str = "objects_vs_peers"):
    if str(BENCHMARKS) not in sys.path:  # the benchmark imports benchmarks/harness.py as a script would
        sys.path.insert(0, str(BENCHMARKS))
    spec = importlib.util.spec_from_file_location(name, BENCHMARKS / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_each_round_pairs_storbench_with_that_rounds_best_peer():
    bench = _bench()
    rows = [
        {"round": 0, "tool": "storbench", "process": 2.0, "window": 1.5},
        {"round": 0, "tool": "awscrt", "process": 1.0, "window": 0.5},
        {"round": 0, "tool": "boto3", "process": 3.0, "window": 2.5},
        {"round": 1, "tool": "storbench", "process": 1.0, "window": 0.8},
        {"round": 1, "tool": "s5cmd", "process": 1.5, "window": None},  # s5cmd does not time itself
        {"round": 2, "tool": "awscrt", "process": 1.0, "window": 0.9},
    ]  # storbench failed in round 2: no pair
    assert bench.round_pairs(rows, "process") == ([2.0, 1.0], [1.0, 1.5])
    assert bench.round_pairs(rows, "window") == ([1.5], [0.5])  # round 1 has no peer that timed itself


def test_s5cmd_moves_exactly_the_named_objects(s3, client, tmp_path):
    bench = _bench("object_clients")
    s5cmd = Path(sys.executable).with_name("s5cmd")
    assert s5cmd.exists(), f"s5cmd is not installed beside {sys.executable}: scripts/setup.sh --test installs it"
    _, state = s3
    payload = tmp_path / "payload"
    payload.write_bytes(os.urandom(3000))
    args = {
        "endpoint": state["s3_endpoint"],
        "key": state["access_key"],
        "secret": state["secret_key"],
        "bucket": state["bucket"],
        "op": "put",
        "size": 3000,
        "ops": 3,
        "concurrency": 2,
        "payload": str(payload),
        "prefix": "peers/s5/",
    }
    commands = bench.s5cmd_commands(args, tmp_path / "src", tmp_path / "dst")
    assert commands.splitlines()[0] == f"cp {tmp_path / 'src' / '00000000'} s3://storbench/peers/s5/00000000"
    assert "*" not in commands  # no wildcard: nothing for s5cmd to LIST or glob
    try:
        put = bench.run_s5cmd(args, tmp_path)
        assert put["process"] > 0 and put["window"] is None
        assert sorted(client.list(state["bucket"], "peers/s5/")) == [f"peers/s5/{i:08d}" for i in range(3)]
        assert client.get(state["bucket"], "peers/s5/00000002") == payload.read_bytes()
        get = bench.run_s5cmd({**args, "op": "get"}, tmp_path)
        assert get["process"] > 0 and not (tmp_path / "s5-dst").exists()  # downloads were made, then removed
    finally:
        client.delete_prefix(state["bucket"], "peers/s5/")  # the session's server: left as found

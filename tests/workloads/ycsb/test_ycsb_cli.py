"""YCSB on a real 1-node Cassandra (the session's ``cassandra1``, started by `storbench services up cassandra`),
through the CLI: load + workloads A–F in YCSB's proportions with restore=snapshot proven (count + checksum),
every loaded key read back with its 10 fields through the target's session, the run's keyspace dropped while
a canary keyspace beside it survives, and bad input refused in one line."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from storbench.targets import TargetOptions, parse_target
from storbench.targets.cassandra import FIELDS
from storbench.workloads.ycsb import core_workload
from storbench.workloads.ycsb.restore import key_name
from tests.cli.helpers import storbench

pytestmark = pytest.mark.cassandra

RECORDS = 2000
OPS = 4000
SUITE = f"""name: ycsb-tiny-af
repetitions: 1
scales:
  tiny: {{recordcount: {RECORDS}, operationcount: {OPS}, threads: 4}}
params:
  restore: snapshot
prepare:
  - ycsb-load
workloads: [ycsb-a, ycsb-b, ycsb-c, ycsb-d, ycsb-e, ycsb-f]
"""


def _samples(run_dir: Path) -> list[dict]:
    return [json.loads(line) for line in (run_dir / "samples.jsonl").read_text().splitlines()]


def _run_dir(home: Path, stdout: str) -> Path:
    line = next(x for x in stdout.splitlines() if x.startswith("results: "))
    return Path(line.split(": ", 1)[1])


def _keyspaces(session) -> set[str]:
    return {row.keyspace_name for row in session.execute("SELECT keyspace_name FROM system_schema.keyspaces")}


@pytest.fixture(scope="module")
def suite_run(cassandra1, tmp_path_factory):
    home, state = cassandra1
    target = parse_target(state["uri"], TargetOptions(home))
    session = target.session()
    session.execute(
        "CREATE KEYSPACE IF NOT EXISTS ycsb_canary WITH replication = "
        "{'class': 'SimpleStrategy', 'replication_factor': 1}"
    )
    session.execute("CREATE TABLE IF NOT EXISTS ycsb_canary.usertable (y_id varchar PRIMARY KEY, field0 varchar)")
    session.execute("INSERT INTO ycsb_canary.usertable (y_id, field0) VALUES ('canary', 'alive')")
    suite = tmp_path_factory.mktemp("ycsb-suite") / "ycsb-tiny-af.yaml"
    suite.write_text(SUITE)
    try:
        done = storbench(home, "run", str(suite), "--target", state["uri"], "--scale", "tiny", timeout=900)
        assert done.returncode == 0, done.stderr[-3000:]
        yield target, _run_dir(home, done.stdout)
    finally:
        session.execute("DROP KEYSPACE IF EXISTS ycsb_canary")
        target.release_root()  # nothing of this run's: the runner dropped its keyspace (asserted below)
        target._close()


def test_workloads_a_to_f_run_in_ycsbs_proportions(suite_run):
    _, run_dir = suite_run
    samples = _samples(run_dir)
    ops = {
        (s["workload"], s["labels"].get("op")): s["value"]
        for s in samples
        if s["metric"] == "ycsb_operations" and "op" in s["labels"]
    }
    load = [s["value"] for s in samples if s["workload"] == "ycsb-load" and s["metric"] == "ycsb_operations"]
    assert load == [RECORDS, RECORDS]  # the total and INSERT
    for letter in "abcdef":
        name = f"ycsb-{letter}"
        mix = {entry["op"]: entry["weight"] for entry in core_workload(letter)["mix"]}
        done = {op: count for (workload, op), count in ops.items() if workload == name}
        assert set(done) == set(mix), (name, done)
        total = sum(done.values())
        assert total == OPS, (name, done)
        for op, weight in mix.items():
            assert done[op] > 0 and abs(done[op] / total - weight) <= 0.03, (name, op, done)
        errors = [
            s["value"] for s in samples if s["workload"] == name and s["metric"] == "ycsb_errors" and not s["labels"]
        ]
        assert errors == [0.0]
        rate = [s["value"] for s in samples if s["workload"] == name and s["metric"] == "ycsb_throughput_ops_s"]
        assert len(rate) == 1 and rate[0] > 0
        for metric in ("ycsb_avg_latency_us", "ycsb_p95_latency_us", "ycsb_p99_latency_us", "ycsb_max_latency_us"):
            values = [s["value"] for s in samples if s["workload"] == name and s["metric"] == metric]
            assert values and all(v is not None and v > 0 for v in values), (name, metric)
        per_thread = [
            s["value"] for s in samples if s["workload"] == name and s["metric"] == "ycsb_ops_per_server_thread"
        ]
        threads = [s["value"] for s in samples if s["workload"] == name and s["metric"] == "ycsb_server_threads"]
        assert threads[0] >= 1 and per_thread[0] == pytest.approx(rate[0] / threads[0])
    notes = json.loads((run_dir / "manifest.json").read_text())["notes"]
    # the nodes run on this machine: its exporter's fingerprint, its host counted once
    assert (
        f"ycsb: operations per server CPU thread divide by {threads[0]:.0f} thread(s), from the 1 node(s)' "
        f"fingerprints, each host once: " in " ".join(notes)
    )


def test_restore_snapshot_brings_back_the_post_load_table(suite_run):
    _, run_dir = suite_run
    kept = json.loads((run_dir / "artifacts.json").read_text())["ycsb"]
    post_load = kept["post_load"]["state"]
    assert post_load["rows"] == RECORDS and post_load["sampled"] == 200
    restores = kept["restores"]
    assert [r["before"] for r in restores] == [f"ycsb-{letter}" for letter in "abcdef"]
    assert all(r["restored"] == post_load for r in restores)
    # what the previous run left differed (A updated sampled rows, D and E inserted): the check can fail
    after_a = restores[1]["found"]
    assert after_a["rows"] == RECORDS and after_a["checksum"] != post_load["checksum"]
    assert restores[4]["found"]["rows"] > RECORDS and restores[5]["found"]["rows"] > RECORDS


def test_the_runs_keyspace_is_dropped_and_the_canary_survives(suite_run):
    target, run_dir = suite_run
    keyspace = json.loads((run_dir / "manifest.json").read_text())["config"]["keyspace"]
    assert keyspace.startswith("storbench_")
    session = target.session()
    names = _keyspaces(session)
    assert keyspace not in names and "ycsb_canary" in names
    assert session.execute("SELECT field0 FROM ycsb_canary.usertable WHERE y_id = 'canary'").one().field0 == "alive"


def test_every_loaded_key_reads_back_its_ten_fields(cassandra1):
    home, state = cassandra1
    done = storbench(
        home,
        "run",
        "ycsb-load",
        "--target",
        state["uri"] + "/ycsb_keys",
        "--keep-data",
        "--set",
        f"recordcount={RECORDS}",
        "--set",
        "threads=4",
        timeout=600,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    target = parse_target(state["uri"] + "/ycsb_keys", TargetOptions(home))
    session = target.session()
    try:
        read = session.prepare(f"SELECT {', '.join(FIELDS)} FROM ycsb_keys.usertable WHERE y_id = ?")
        rows = [session.execute(read, (key_name(n),)).one() for n in range(RECORDS)]
        assert all(row is not None for row in rows)
        assert all(len(row) == 10 and all(len(value) == 100 for value in row) for row in rows)
        count = session.execute("SELECT COUNT(*) FROM ycsb_keys.usertable").one()[0]
        assert count == RECORDS  # and no other key: the key names are YCSB's (user + FNV-1a 64)
        assert session.execute(read, (key_name(RECORDS),)).one() is None
    finally:
        session.execute("DROP KEYSPACE IF EXISTS ycsb_keys")
        target._close()


@pytest.mark.parametrize(
    "args, target, says",
    [
        # restore=none: restore=snapshot on a cluster that is not storbench's is refused first, before any connect
        (
            ["run", "ycsb-a", "--set", "restore=none"],
            "cassandra://127.0.0.1:9",
            "target cassandra://127.0.0.1:9: cannot connect to 127.0.0.1:9 (",
        ),
        (["run", "ycsb-a", "--replication", "2"], "{uri}", "--replication 2: above the 1 node(s) of 127.0.0.1:"),
        (["run", "ycsb-g"], "{uri}", "unknown suite or workload 'ycsb-g'"),
        (["run", "{suite}"], "{uri}", "workloads: unknown workload 'ycsb-g'; known: "),
        (
            ["run", "ycsb-a", "--set", "requestdistribution=g"],
            "{uri}",
            "requestdistribution='g' is not allowed; allowed: '' (empty), zipfian, latest",
        ),
        (["run", "ycsb-a", "--set", "threads=0"], "{uri}", "threads=0 is below the minimum 1"),
        (["run", "ycsb-a", "--sweep", "threads=0,4"], "{uri}", "--sweep: threads=0 is below the minimum 1"),
        (["run", "ycsb-a", "--set", "fieldcount=11"], "{uri}", "above the 10 fields"),
        # issue 25 case 1: refused before a keyspace is created (a dropped one leaves dropped-* snapshots)
        (
            ["run", "ycsb-a", "--set", "driver=ycsb", "--set", "drivers=2"],
            "{uri}",
            "ycsb-load: driver=ycsb runs one YCSB client process here; drivers=2 fanout=local need driver=native",
        ),
        (
            ["run", "ycsb-a", "--set", "driver=ycsb", "--set", "fanout=spark"],
            "{uri}",
            "ycsb-load: driver=ycsb runs one YCSB client process here; drivers=1 fanout=spark need driver=native",
        ),
        (
            ["run", "ycsb-e", "--set", "driver=ycsb", "--set", "operationcount=0"],
            "{uri}",
            "ycsb-e: driver=ycsb needs operationcount (not duration_s) with inserts and a zipfian distribution",
        ),
        (
            ["run", "ycsb-a", "--sweep", "fieldcount=5,11"],
            "{uri}/ks_sweep",
            "--sweep point fieldcount=11: ycsb-load: fieldcount=11 is above the 10 fields",
        ),
        (["run", "ycsb-a"], '{uri}/"Usertable"', "keyspace '\"Usertable\"' is not allowed; use 1-48 letters"),
        (["run", "ycsb-a"], "{uri}/ks'x", 'keyspace "ks\'x" is not allowed; use 1-48 letters'),
    ],
)
def test_bad_input_is_one_line(cassandra1, tmp_path, args, target, says):
    home, state = cassandra1
    suite = tmp_path / "letters.yaml"
    suite.write_text("name: letters\nprepare: [ycsb-load]\nworkloads: [ycsb-a, ycsb-g]\n")
    args = [arg.format(suite=suite) for arg in args]
    snapshots, keyspaces = _dropped_snapshots(home), _data_dirs(home)
    done = storbench(home, *args, "--target", target.format(uri=state["uri"]), timeout=300)
    assert done.returncode == 2
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and says in lines[0], done.stderr
    assert _dropped_snapshots(home) == snapshots  # no keyspace was made and dropped
    assert _data_dirs(home) == keyspaces


def _data_dirs(home: Path) -> list[Path]:
    """Every keyspace directory of the service's nodes (a keyspace dropped keeps its directory)."""
    return sorted((home / "services" / "cassandra").glob("*/data/*"))


def _dropped_snapshots(home: Path) -> set[Path]:
    """What Cassandra's auto_snapshot keeps of every table dropped, on every node."""
    return set((home / "services" / "cassandra").glob("**/snapshots/dropped-*"))


def test_restore_snapshot_needs_storbenchs_own_nodes(cassandra1, tmp_path):
    # the same node reached as localhost is not one of the service's recorded nodes: no data dirs, no nodetool,
    # and no login from the service's state: the URL names a role and a 0600 file holding its password
    home, state = cassandra1
    password = tmp_path / "cql.password"
    password.write_text(state["auth"]["password"] + "\n")
    password.chmod(0o600)
    other = f"cassandra://localhost:{state['ports']['native']}"
    logged_in = f"{other}/?user=storbench&password_file={password}"
    done = storbench(home, "run", "ycsb-a", "--target", logged_in, "--set", "restore=snapshot", timeout=300)
    lines = done.stderr.strip().splitlines()
    assert done.returncode != 0 and len(lines) == 1, done.stderr
    assert "restore=snapshot needs the nodes' data directories and nodetool" in lines[0]
    ok = storbench(
        home,
        "run",
        "ycsb-a",
        "--target",
        logged_in,
        "--set",
        "restore=none",
        "--set",
        "operationcount=500",
        "--set",
        "recordcount=500",
        timeout=300,
    )
    assert ok.returncode == 0, ok.stderr[-3000:]
    # without the login, the cluster refuses in one line that says how to give one
    refused = storbench(home, "run", "ycsb-a", "--target", other, "--set", "restore=none", timeout=300)
    lines = refused.stderr.strip().splitlines()
    assert refused.returncode != 0 and len(lines) == 1, refused.stderr
    assert "refused a session without credentials" in lines[0] and "password_file=PATH" in lines[0]


def test_a_thread_sweep_states_its_peak(cassandra1):
    home, state = cassandra1
    done = storbench(
        home,
        "run",
        "ycsb-c",
        "--target",
        state["uri"],
        "--sweep",
        "threads=1,4",
        "--set",
        "recordcount=1000",
        "--set",
        "operationcount=2000",
        "--set",
        "restore=none",
        timeout=600,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    run_dir = _run_dir(home, done.stdout)
    notes = json.loads((run_dir / "manifest.json").read_text())["notes"]
    stated = [n for n in notes if n.startswith("ycsb-c: peak at ")]
    assert len(stated) == 1 and "sweep: 1 threads" in stated[0] and ", 4 threads" in stated[0]
    found = json.loads((run_dir / "artifacts.json").read_text())["ycsb"]["peaks"]["ycsb-c"]
    assert set(found["points"]) == {"1", "4"} and str(found["threads"]) in found["points"]
    rates = {
        s["labels"].get("threads"): s["value"]
        for s in _samples(run_dir)
        if s["workload"] == "ycsb-c" and s["metric"] == "ycsb_throughput_ops_s"
    }
    assert set(rates) == {"1", "4"} and all(v > 0 for v in rates.values())
    assert found["points"]["4"]["ops_per_s"] == pytest.approx(rates["4"])

"""The native engine's cql protocol against a real Cassandra 5.0 node (no mocks: the session's ``cassandra1``,
started by `storbench services up cassandra`): YCSB's load phase, then workloads A–F, each operation type
counted in YCSB's proportions with no errors. The engine makes its own keyspaces (``create_table``); they are
dropped after the module, so the shared node serves the other tests unchanged. The node asks who is calling:
the engine logs in with the job's username and password, and is refused without them."""

from __future__ import annotations

import json
import subprocess

import pytest

from storbench.cassandra_cql import session_on
from storbench.engines import native
from storbench.services.cassandra import credentials

pytestmark = pytest.mark.cassandra

RECORDS = 2000
OPS = 4000


KEYSPACES = ("ycsb_test", "ycsb_rf3")  # the engine's own (create_table), on the shared node


@pytest.fixture(scope="module")
def cassandra(cassandra1):
    """The session's node: its contact point HOST:PORT and storbench's login, as a job's "cql" section has
    them; the keyspaces the engine made dropped after."""
    _, state = cassandra1
    host, port = state["hosts"][0], state["ports"]["native"]
    login = credentials(state)
    try:
        yield {"contact_points": [f"{host}:{port}"], "username": login.username, "password": login.password}
    finally:
        with session_on([host], port, pin=True, credentials=login) as session:
            for keyspace in KEYSPACES:
                session.execute(f"DROP KEYSPACE IF EXISTS {keyspace}", timeout=60)


def run(job: dict, tmp_path, name: str) -> tuple[int, dict]:
    job_path, result_path = tmp_path / f"{name}.job.json", tmp_path / f"{name}.result.json"
    job_path.write_text(json.dumps(job))
    done = subprocess.run(
        [native.binary(), "run", "--job", str(job_path), "--result", str(result_path)],
        capture_output=True,
        text=True,
        timeout=600,
    )
    return done.returncode, json.loads(result_path.read_text())


def workload(letter: str) -> dict:
    done = subprocess.run([native.binary(), "ycsb-workload", letter], capture_output=True, text=True, check=True)
    return json.loads(done.stdout)


def cql_job(node: dict, mix: list, ycsb: dict, **core) -> dict:
    return {
        "protocol": "cql",
        "mix": mix,
        "load": {"model": "closed", "concurrency": 8},
        **core,
        "cql": {
            **node,
            "keyspace": "ycsb_test",
            "consistency": "ONE",
            "create_table": {"replication_factor": 1},
            "ycsb": {"recordcount": RECORDS, **ycsb},
        },
    }


@pytest.fixture(scope="module")
def loaded(cassandra):
    # YCSB's load phase fanned out over two engine processes: each writes its stripe of the keys once
    job = cql_job(cassandra, [{"op": "INSERT", "keys": "once"}], {"phase": "load"}, objects=RECORDS, ops=RECORDS)
    result = native.run_local(job, 2)
    assert result["status"] == "ok" and result["processes"] == 2
    insert = result["ops"]["INSERT"]
    assert (insert["ops"], insert["errors"], insert["bytes"]) == (RECORDS, 0, RECORDS * 10 * 100)
    return cassandra


def test_every_loaded_key_reads_back_its_ten_fields(loaded, tmp_path):
    # each key once (not_found would be an error), 10 fields of 100 bytes each
    code, result = run(
        cql_job(loaded, [{"op": "READ", "keys": "once"}], {}, objects=RECORDS, ops=RECORDS), tmp_path, "read"
    )
    assert (code, result["status"], result["errors"]) == (0, "ok", {})
    read = result["ops"]["READ"]
    assert (read["ops"], read["errors"], read["bytes"]) == (RECORDS, 0, RECORDS * 10 * 100)
    # and a key never loaded is not found: the check can fail
    code, result = run(
        cql_job(
            loaded, [{"op": "READ", "keys": "once"}], {"recordcount": RECORDS + 5}, objects=5, start_key=RECORDS, ops=5
        ),
        tmp_path,
        "missing",
    )
    assert code == 0 and result["ops"]["READ"]["errors"] == 5
    assert result["errors"]["not_found"]["count"] == 5


@pytest.mark.parametrize("letter", list("abcdef"))
def test_workloads_a_to_f_run_in_ycsbs_proportions(loaded, tmp_path, letter):
    wl = workload(letter)
    ycsb = {"operationcount": OPS, **wl["ycsb"]}
    code, result = run(cql_job(loaded, wl["mix"], ycsb, objects=RECORDS, ops=OPS), tmp_path, letter)
    assert (code, result["status"], result["errors"]) == (0, "ok", {})
    assert result["total"]["ops"] == OPS and result["total"]["ops_per_s"] > 0
    assert set(result["ops"]) == {m["op"] for m in wl["mix"]}
    for m in wl["mix"]:
        got = result["ops"][m["op"]]
        assert got["ops"] > 0 and got["errors"] == 0
        assert abs(got["ops"] / OPS - m["weight"]) <= 0.03, (m, got["ops"])
        for key in ("mean_ms", "p95_ms", "p99_ms", "max_ms"):
            assert got["latency"][key] > 0
    assert result["cpu"]["cpu_s"] > 0 and result["series"]


def test_an_unreachable_contact_point_is_one_fatal_line(tmp_path):
    job = {
        "protocol": "cql",
        "mix": [{"op": "READ"}],
        "ops": 1,
        "cql": {
            "contact_points": ["127.0.0.1:9"],
            "keyspace": "ks",
            "connect_timeout_s": 2,
            "ycsb": {"recordcount": 10},
        },
    }
    code, result = run(job, tmp_path, "unreachable")
    assert code == 2 and result["status"] == "fatal"
    assert result["fatal"].startswith("CQL contact points 127.0.0.1:9: cannot connect: ")


def test_a_consistency_level_the_cluster_cannot_meet_is_counted_by_kind(cassandra, tmp_path):
    # replication factor 3 on one node: QUORUM needs 2 replicas, ONE is met
    def load(consistency: str) -> tuple[int, dict]:
        job = cql_job(
            cassandra, [{"op": "INSERT", "keys": "once"}], {"phase": "load", "recordcount": 20}, objects=20, ops=20
        )
        job["cql"].update(keyspace="ycsb_rf3", consistency=consistency, create_table={"replication_factor": 3})
        return run(job, tmp_path, consistency)

    code, result = load("QUORUM")
    assert (code, result["status"], result["total"]["ops"]) == (0, "ok", 0)
    assert result["errors"]["unavailable"]["count"] == 20
    assert "Cannot achieve consistency level QUORUM" in result["errors"]["unavailable"]["example"]
    code, result = load("ONE")
    assert (code, result["total"]["ops"], result["errors"]) == (0, 20, {})
    assert cassandra["password"] not in json.dumps(result)  # the result echoes the job without its login


@pytest.mark.parametrize(
    "login",
    [{}, {"username": "storbench", "password": "not-the-password"}, {"username": "cassandra", "password": "cassandra"}],
)
def test_a_job_without_the_login_is_refused_in_one_fatal_line(cassandra, tmp_path, login):
    node = {"contact_points": cassandra["contact_points"], **login}
    job = cql_job(node, [{"op": "INSERT", "keys": "once"}], {"phase": "load", "recordcount": 5}, objects=5, ops=5)
    code, result = run(job, tmp_path, "refused")
    assert code == 2 and result["status"] == "fatal" and "\n" not in result["fatal"]
    assert result["fatal"].startswith(f"CQL contact points {cassandra['contact_points'][0]}: cannot connect: ")
    assert "authenticat" in result["fatal"].lower() or "credentials" in result["fatal"].lower(), result["fatal"]


def test_the_engine_speaks_tls_checked_against_the_services_ca(cassandra1, loaded, tmp_path):
    """With the job's "tls" (the CA `services up cassandra` made, state["ca_file"]) the reads succeed, and while the
    load runs the node lists each of the engine's connections (its STARTUP names the driver storbench-load) as
    TLS: the node serves plain CQL on the same port too, so the node's own view is what tells them apart."""
    _, state = cassandra1
    host, port = state["hosts"][0], state["ports"]["native"]
    ca_file = state["ca_file"]
    job = cql_job(loaded, [{"op": "READ", "keys": "sequential"}], {}, objects=RECORDS, duration_s=4)
    job["cql"]["tls"] = {"ca_file": ca_file}
    job_path, result_path = tmp_path / "tls.job.json", tmp_path / "tls.result.json"
    job_path.write_text(json.dumps(job))
    seen: dict[tuple, bool] = {}  # each connection (address, client port): ever listed as TLS
    with session_on([host], port, pin=True, credentials=credentials(state)) as session:
        engine = subprocess.Popen(
            [native.binary(), "run", "--job", str(job_path), "--result", str(result_path)],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        try:
            while engine.poll() is None:  # the connections stay open for the 4 s the reads run
                for row in session.execute("SELECT address, port, driver_name, ssl_enabled FROM system_views.clients"):
                    if row.driver_name == "storbench-load":
                        # listed before the node has seen its TLS hello too (ci38: the same port False, then True)
                        key = (str(row.address), row.port)
                        seen[key] = seen.get(key, False) or bool(row.ssl_enabled)
        finally:
            engine.wait(timeout=600)
    result = json.loads(result_path.read_text())
    assert (engine.returncode, result["status"], result["errors"]) == (0, "ok", {})
    assert result["ops"]["READ"]["ops"] > 0 and result["ops"]["READ"]["bytes"] == result["ops"]["READ"]["ops"] * 1000
    assert seen, "the node never listed a connection of the engine's"
    assert all(seen.values()), seen
    assert result["job"]["cql"]["tls"] == {"ca_file": ca_file}


def test_a_node_certificate_no_trusted_ca_signed_is_one_fatal_line(cassandra, tmp_path):
    # "ca_file": null trusts the system's CAs, none of which signed the service's own certificate
    job = cql_job(cassandra, [{"op": "READ"}], {}, objects=10, ops=1)
    job["cql"]["tls"] = {"ca_file": None}
    code, result = run(job, tmp_path, "untrusted")
    at = cassandra["contact_points"][0]
    assert (code, result["status"]) == (2, "fatal")
    assert result["fatal"] == (
        f"CQL contact points {at}: cannot connect: {at}: TLS handshake: invalid peer "
        "certificate: UnknownIssuer (checked against the system trust store)"
    )

"""`services up cassandra`: real Cassandra 5.0 nodes on 127.0.0.N with a node_exporter each.

The 1-node cluster is the session's (``cassandra1`` in tests/conftest.py, up and down through the CLI);
a 3-node cluster is started once for this module and claimed by a target with replication 3.
"""

import json
import os
import signal
import stat
import subprocess
import sys
import time
from pathlib import Path

import pytest

from storbench.cassandra_cql import Credentials, session_on
from storbench.errors import EngineError, InputError
from storbench.services import cassandra, node_exporter, process
from storbench.targets import TargetOptions, parse_target
from storbench.telemetry.devices import devices_for_path
from storbench.telemetry.nodes import load_nodes
from tests.cli.helpers import SRC, storbench

pytestmark = pytest.mark.real  # the CLI as a child process, Cassandra


def _all_normal(state) -> None:
    """Every node, asked alone, sees every node NORMAL in gossip; nodetool shows them all UN."""
    hosts = sorted(state["hosts"])
    views = cassandra.ring(state)
    assert sorted(views) == hosts
    for host, view in views.items():
        assert view == {h: "NORMAL" for h in hosts}, f"{host} sees {view}"
    for node in (1, len(hosts)):  # nodetool status, from the first and the last node
        assert cassandra.ring_status(state, node=node) == {h: "UN" for h in hosts}


def _nodes_file_matches(state) -> None:
    cluster = load_nodes(state["nodes"])
    nodes = [p for p in state["processes"] if p["kind"] == "node"]
    assert [n.name for n in cluster.nodes] == [f"node-{i}" for i in range(1, len(nodes) + 1)]
    for node, entry in zip(cluster.nodes, nodes):
        assert node.role == "cassandra" and node.host == entry["host"]
        assert node.exporter.startswith(f"http://{entry['host']}:") and node_exporter.answers(node.exporter)
        assert list(node.devices or ()) == devices_for_path(entry["data_dir"]).devices
        assert entry["data_dir"].startswith(state["workdir"])


@pytest.mark.parametrize(
    "args, says",
    [
        (["--nodes", "0"], "--nodes 0: allowed 1 to"),
        (["--heap", "lots"], "--heap 'lots': expected a size"),
        (["--workers", "2"], "--workers does not apply to service cassandra"),
    ],
)
def test_bad_options_are_one_line(tmp_path, args, says):
    done = storbench(tmp_path / "home", "services", "up", "cassandra", *args)
    assert done.returncode != 0
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and says in lines[0], done.stderr


@pytest.mark.cassandra
def test_one_node_is_up_normal_with_its_nodes_file(cassandra1):
    home, state = cassandra1
    assert state["hosts"] == ["127.0.0.1"] and state["uri"] == f"cassandra://127.0.0.1:{state['ports']['native']}"
    _all_normal(state)
    _nodes_file_matches(state)
    status = storbench(home, "services", "status", "cassandra")
    assert status.returncode == 0 and status.stdout.strip() == state["uri"]
    assert f"TLS with the CA certificate {state['ca_file']}" in status.stderr
    # a second `up` with the same options reports the running cluster; other options are refused in one line
    again = storbench(home, "services", "up", "cassandra", "--nodes", "1", "--heap", "768m")
    assert again.returncode == 0 and again.stdout.strip() == state["uri"]
    other = storbench(home, "services", "up", "cassandra", "--nodes", "2")
    assert other.returncode != 0 and len(other.stderr.strip().splitlines()) == 1
    assert "already running" in other.stderr


@pytest.mark.cassandra
def test_an_interrupted_up_leaves_nothing_running(tmp_path):
    home = tmp_path / "home"
    env = {**os.environ, "PYTHONPATH": SRC}
    proc = subprocess.Popen(
        [sys.executable, "-m", "storbench", "--results", str(home), "services", "up", "cassandra", "--heap", "512m"],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    state_file = home / "services" / "cassandra" / process.STATE
    seen: list[dict] = []
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline and proc.poll() is None:  # until the node and its exporter are spawned
        try:
            seen = json.loads(state_file.read_text()).get("processes", [])
        except (OSError, ValueError):
            seen = []
        if len(seen) >= 2:
            break
        time.sleep(0.2)
    assert [e["kind"] for e in seen] == ["node", "exporter"] and proc.poll() is None
    assert all(process.alive(e["pid"], e["marker"]) for e in seen)
    proc.send_signal(signal.SIGINT)
    proc.communicate(timeout=120)
    assert proc.returncode != 0
    assert [e for e in seen if process.alive(e["pid"], e["marker"])] == []
    assert not state_file.exists()
    assert storbench(home, "services", "status", "cassandra").returncode != 0


@pytest.mark.cassandra
def test_three_nodes_are_up_normal_with_their_nodes_file(cassandra3):
    _, state = cassandra3
    assert state["hosts"] == ["127.0.0.1", "127.0.0.2", "127.0.0.3"]
    assert len({p["pid"] for p in state["processes"]}) == 6  # three nodes, three exporters
    _all_normal(state)
    _nodes_file_matches(state)


@pytest.mark.cassandra
def test_three_nodes_take_replication_three_and_refuse_four(cassandra3):
    home, state = cassandra3
    port = state["ports"]["native"]
    too_many = parse_target(f"{state['uri']},127.0.0.2:{port}/", TargetOptions(home=home, replication=4))
    with pytest.raises(InputError) as err:
        too_many.precheck(0)
    assert "--replication 4: above the 3 node(s)" in str(err.value) and "\n" not in str(err.value)

    target = parse_target(f"{state['uri']},127.0.0.3:{port}/", TargetOptions(home=home, replication=3))
    target.precheck(0)
    assert target.node_count == 3 and str(target.nodes_file()) == state["nodes"]
    target.claim("20261123-000010-3333")
    login = cassandra.credentials(state)
    with session_on(["127.0.0.2"], port, timeout=60, credentials=login) as session:  # not the contact point
        row = session.execute(
            "SELECT replication FROM system_schema.keyspaces WHERE keyspace_name = %s", (target.keyspace,)
        ).one()
        assert row.replication["replication_factor"] == "3"
        session.execute(f"INSERT INTO {target.keyspace}.usertable (y_id, field0) VALUES ('user1', 'v')")
        assert target.release() is True
        assert (
            session.execute(
                "SELECT keyspace_name FROM system_schema.keyspaces WHERE keyspace_name = %s", (target.keyspace,)
            ).one()
            is None
        )


def _refused(host: str, port: int, login: Credentials | None) -> str:
    """The driver's reason when ``host`` refuses a session logged in with ``login`` (or none)."""
    try:
        with session_on([host], port, pin=True, credentials=login) as session:
            session.execute("SELECT role FROM system_auth.roles")
    except Exception as exc:  # NoHostAvailable wrapping AuthenticationFailed
        return str(exc)
    raise AssertionError(f"{host} accepted {login}")


@pytest.mark.cassandra
@pytest.mark.parametrize("fixture", ["cassandra1", "cassandra3"])
def test_every_node_asks_who_is_calling_on_cql_and_jmx(request, fixture):
    _, state = request.getfixturevalue(fixture)
    port, login = state["ports"]["native"], cassandra.credentials(state)
    wrong = Credentials(login.username, login.password[:-1] + ("x" if login.password[-1] != "x" else "y"))
    for host in state["hosts"]:  # Cassandra's well-known default role is gone on every node, not only node 1
        assert "Remote end requires authentication" in _refused(host, port, None)
        for other in (wrong, Credentials("cassandra", "cassandra")):
            assert "Provided username" in _refused(host, port, other) and "are incorrect" in _refused(host, port, other)
        with session_on([host], port, pin=True, credentials=login) as session:
            roles = {
                row.role: row.is_superuser
                for row in session.execute("SELECT role, is_superuser FROM system_auth.roles")
            }
            replication = (
                session.execute("SELECT replication FROM system_schema.keyspaces WHERE keyspace_name = 'system_auth'")
                .one()
                .replication
            )
        assert roles == {"storbench": True}
        assert replication["replication_factor"] == str(len(state["hosts"]))  # a login survives a node down
    for node in range(1, len(state["hosts"]) + 1):  # JMX: nodetool without storbench's login is refused
        with pytest.raises(EngineError) as err:
            cassandra.nodetool(state, "version", node=node, login=False)
        assert "Authentication failed" in str(err.value) or "Credentials required" in str(err.value), str(err.value)
        assert "ReleaseVersion" in cassandra.nodetool(state, "version", node=node)


@pytest.mark.cassandra
@pytest.mark.parametrize("fixture", ["cassandra1", "cassandra3"])
def test_the_default_superuser_never_logs_in_while_the_cluster_starts(request, fixture):
    """Issue 38 item 3: from the moment each node's CQL port opened until `services up` returned, every try of
    Cassandra's well-known cassandra/cassandra (tests/cassandra_login_watch.py, beside the session's start) was
    refused: there was no gap in which a local user could make a superuser of their own."""
    from tests.cassandra_login_watch import REFUSED, WATCHES

    _, state = request.getfixturevalue(fixture)
    watch = WATCHES[fixture]
    assert watch.opened == set(state["hosts"]), watch.summary()  # every node was tried, from its port's opening
    assert set(watch.outcomes()) <= REFUSED, watch.summary()
    # each node answered "wrong role or password" (not only "could not check"): the role is not there at all
    assert {host for host, outcome in watch.tries if outcome == "bad credentials"} == set(state["hosts"]), (
        watch.summary()
    )
    with session_on(state["hosts"], state["ports"]["native"], credentials=cassandra.credentials(state)) as session:
        roles = {row.role for row in session.execute("SELECT role FROM system_auth.roles")}
    assert roles == {"storbench"}


@pytest.mark.cassandra
def test_the_passwords_stay_in_private_files(cassandra1):
    _, state = cassandra1
    workdir = Path(state["workdir"])
    secrets = (state["auth"]["password"], state["auth"]["jmx_password"], state["tls"]["keystore_password"])
    assert stat.S_IMODE(workdir.stat().st_mode) == 0o700
    holders = [
        workdir / process.STATE,
        workdir / "jmx" / "nodetool.password",
        workdir / "jmx" / "jmxremote.access",
        *workdir.glob("node-*/jmxremote.password"),
        *workdir.glob("node-*/cassandra.yaml"),
        workdir / "tls" / "keystore.p12",
    ]  # the TLS key's store
    assert all(stat.S_IMODE(path.stat().st_mode) == 0o600 for path in holders)
    for path in workdir.rglob("*"):  # logs, configuration, the nodes file: none holds a secret
        if path.is_file() and path not in holders and path.stat().st_size < 50_000_000:
            text = path.read_bytes()
            assert not any(secret.encode() in text for secret in secrets), path
    for pid in cassandra.pids(state):  # nor any command line or environment of the service's processes
        for part in ("cmdline", "environ"):
            text = Path(f"/proc/{pid}/{part}").read_bytes()
            assert not any(secret.encode() in text for secret in secrets), (pid, part)
    env = cassandra.client_env(state)
    assert env == {
        "CQLSH_HOST": "127.0.0.1",
        "CQLSH_PORT": str(state["ports"]["native"]),
        "STORBENCH_CQL_USERNAME": "storbench",
        "STORBENCH_CQL_PASSWORD": state["auth"]["password"],
        "SSL_CERTFILE": state["ca_file"],
    }  # cqlsh --ssl checks the nodes' certificate against it
    # what a client trusts stays; the CA's private key is gone (nobody can sign another certificate for the nodes)
    assert sorted(p.name for p in (workdir / "tls").iterdir()) == ["ca.pem", "keystore.p12"]

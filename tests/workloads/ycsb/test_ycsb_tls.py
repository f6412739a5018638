"""CQL over TLS on the session's real 1-node Cassandra (``cassandra1``, whose native port serves TLS and plain
CQL with the certificate ``services up cassandra`` made): a ycsb-load run with YCSB's own client
(driver=ycsb: storbench's management session in Python, then YCSB's Java binding) through a relay that keeps
every byte (tcpdump is not installed here). Over TLS (``?ca=`` the service's CA) no connection carries the
password nor any other clear CQL; a session in clear text (loopback: allowed) through the same relay shows the
capture would see it (issue 38 item 2). The certificate is checked: the system's trust store (``?tls=1``)
does not know this CA."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from storbench.cassandra_cql import session_on
from storbench.errors import TargetError
from storbench.services import cassandra
from storbench.targets import TargetOptions, parse_target
from tests.cli.helpers import storbench
from tests.tcp_relay import Relay

RECORDS = 50
TLS_HANDSHAKE = 0x16  # the first byte of a TLS record carrying a ClientHello
CLIENTS = (b"Apache Cassandra Python Driver", b"DataStax Java driver")  # each client's STARTUP names it


def _load(home: Path, target: str, login: dict[str, str]):
    return storbench(
        home,
        "run",
        "ycsb-load",
        "--target",
        target,
        "--set",
        "driver=ycsb",
        "--set",
        f"recordcount={RECORDS}",
        "--quiet",
        env_extra=login,
        timeout=400,
    )


def _run_dir(done) -> Path:
    return Path(next(x for x in done.stdout.splitlines() if x.startswith("results: ")).split(": ", 1)[1])


@pytest.mark.cassandra
def test_a_tls_run_carries_no_password_and_a_clear_text_session_does(cassandra1):
    home, state = cassandra1
    password = state["auth"]["password"].encode()
    # the relay is not one of the service's contact points: the login comes from the environment
    login = {"STORBENCH_CQL_USERNAME": state["auth"]["username"], "STORBENCH_CQL_PASSWORD": state["auth"]["password"]}
    node = (state["hosts"][0], state["ports"]["native"])
    assert Path(state["ca_file"]).is_file()

    with Relay(*node) as tls:
        done = _load(home, f"cassandra://127.0.0.1:{tls.port}?ca={state['ca_file']}", login)
    assert done.returncode == 0, done.stderr[-3000:]
    run_dir = _run_dir(done)
    samples = [json.loads(line) for line in (run_dir / "samples.jsonl").read_text().splitlines()]
    assert {
        s["value"]
        for s in samples
        if s["metric"] == "ycsb_operations"
        and s["labels"].get("op") == "INSERT"
        and s["labels"].get("driver") == "ycsb"
    } == {RECORDS}
    assert json.loads((run_dir / "manifest.json").read_text())["config"]["cql_tls"] == {"ca_file": state["ca_file"]}
    assert len(tls.first_bytes()) >= 2 and set(tls.first_bytes()) == {TLS_HANDSHAKE}, tls.first_bytes()  # every one
    captured = tls.sent()
    assert password not in captured and not any(client in captured for client in CLIENTS)

    # the capture would see a password sent in clear: the management session's own login, without TLS (loopback)
    with Relay(*node) as plain:
        with session_on(["127.0.0.1"], plain.port, credentials=cassandra.credentials(state)) as session:
            assert session.execute("SELECT release_version FROM system.local").one()
    assert TLS_HANDSHAKE not in plain.first_bytes() and password in plain.sent() and CLIENTS[0] in plain.sent()

    # the certificate is checked: the system's trust store does not know this service's CA
    target = parse_target(f"cassandra://{node[0]}:{node[1]}?tls=1", TargetOptions(home))
    with pytest.raises(TargetError, match="certificate verify failed"):
        target.precheck(0)

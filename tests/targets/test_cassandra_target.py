"""cassandra:// targets: parse and precheck refusals in one line, and claim/release on a real 1-node Cassandra
(the session's ``cassandra1``): the run's keyspace and table are made with the asked replication and dropped
after, while what the test made beside them survives."""

import os

import pytest

from storbench.cassandra_cql import Credentials, session_on
from storbench.errors import InputError, TargetError
from storbench.services import cassandra
from storbench.services.ports import free_port
from storbench.targets import TargetOptions, parse_target
from storbench.targets.cassandra import FIELDS, CassandraTarget, run_keyspace
from tests.cli.helpers import storbench


def _one_line(exc: BaseException) -> str:
    text = str(exc)
    assert text and "\n" not in text
    return text


@pytest.mark.parametrize(
    "text, says",
    [
        ("cassandra://", "cassandra://HOST:PORT"),
        ("cassandra://127.0.0.1:notaport/ks", "not HOST:PORT"),
        ("cassandra://127.0.0.1:9042,:9042/ks", "not HOST:PORT"),
        ("cassandra://127.0.0.1:9042,127.0.0.2:9043/ks", "different ports"),
        ('cassandra://127.0.0.1:9042/"ks"', "no quotes"),
        ("cassandra://127.0.0.1:9042/it's", "no quotes"),
        ("cassandra://127.0.0.1:9042/ks-1", "is not allowed"),
        ("cassandra://127.0.0.1:9042/1ks", "is not allowed"),
        ("cassandra://127.0.0.1:9042/" + "k" * 49, "is not allowed"),
        ("cassandra://127.0.0.1:9042/system_schema", "system keyspaces"),
        ("cassandra://127.0.0.1:9042/ks?user=u&password=secret", "a password never goes in the URL"),
        ("cassandra://127.0.0.1:9042/ks?user=u", "user=NAME&password_file=PATH, each once"),
        ("cassandra://127.0.0.1:9042/ks?user=u&password_file=/f&user=v", "each once"),
        ("cassandra://127.0.0.1:9042/ks?user=&password_file=/f", "each once"),
        ("cassandra://127.0.0.1:9042/ks?keyspace=x", "each once"),
        ("cassandra://u@127.0.0.1:9042/ks", "cassandra://HOST:PORT"),
    ],
)
def test_bad_urls_are_one_line(text, says):
    with pytest.raises(InputError) as err:
        parse_target(text)
    assert says in _one_line(err.value)


@pytest.mark.parametrize(
    "text",
    [
        "cassandra://127.0.0.1:9042/ks?user=u&password=pw-canary-7",
        "cassandra://127.0.0.1:9042/ks?password=pw-canary-7",
        "cassandra://127.0.0.1:9042/ks?PASSWORD=pw-canary-7&user=u",
        "cassandra://127.0.0.1:notaport/ks?password=pw-canary-7",
        "cassandra://127.0.0.1:9042,127.0.0.2:9043/ks?password=pw-canary-7",
        "cassandra://127.0.0.1:9042/system?password=pw-canary-7",
        "cassandra://127.0.0.1:9042/ks-1?password=pw-canary-7",
    ],
)
def test_a_password_in_the_url_is_not_echoed(text):
    """issue 38 item 11: the refusal names the URL with its password masked."""
    with pytest.raises(InputError) as err:
        parse_target(text)
    line = _one_line(err.value)
    assert "pw-canary-7" not in line and "password=***" in line.lower(), line


def test_parse_contact_points_and_keyspace():
    target = parse_target("cassandra://127.0.0.1:9142,127.0.0.2:9142/MyKeyspace")
    assert isinstance(target, CassandraTarget)
    assert target.contacts == [("127.0.0.1", 9142), ("127.0.0.2", 9142)]
    assert target.named_keyspace == "mykeyspace"  # what Cassandra makes of the unquoted name
    assert target.uri == "cassandra://127.0.0.1:9142,127.0.0.2:9142/mykeyspace"
    plain = parse_target("cassandra://127.0.0.3")
    assert plain.contacts == [("127.0.0.3", 9042)] and plain.named_keyspace is None


def _password_file(tmp_path, mode: int, text: str = "pw-1\n"):
    path = tmp_path / "cql.password"
    path.write_text(text)
    path.chmod(mode)
    return path


def test_a_login_comes_from_the_url_s_private_file_then_the_environment(tmp_path, monkeypatch):
    from storbench.targets import cassandra_login

    monkeypatch.delenv("STORBENCH_CQL_USERNAME", raising=False)
    monkeypatch.setattr(cassandra_login, "environment_login", None)
    assert parse_target("cassandra://127.0.0.1:9042/ks").credentials() is None
    monkeypatch.setenv("STORBENCH_CQL_USERNAME", "envuser")
    monkeypatch.setenv("STORBENCH_CQL_PASSWORD", "env-pw")
    assert parse_target("cassandra://127.0.0.1:9042/ks").credentials() == Credentials("envuser", "env-pw")
    path = _password_file(tmp_path, 0o600)
    target = parse_target(f"cassandra://127.0.0.1:9042/ks?user=alice&password_file={path}")
    assert target.uri == "cassandra://127.0.0.1:9042/ks"  # the recorded URI names no login
    login = target.credentials()
    assert login == Credentials("alice", "pw-1") and "pw-1" not in repr(login)


def test_the_environment_s_cql_login_is_read_once_and_taken_out_of_it(monkeypatch):
    """issue 38 item 4: $STORBENCH_CQL_PASSWORD stayed in storbench's environment, for every child to inherit."""
    from storbench import cli
    from storbench.targets import cassandra_login

    monkeypatch.setattr(cassandra_login, "environment_login", None)
    monkeypatch.setenv("STORBENCH_CQL_USERNAME", "envuser")
    monkeypatch.setenv("STORBENCH_CQL_PASSWORD", "pw-canary-38")
    assert cli.main(["workloads"]) == 0
    assert not {"STORBENCH_CQL_USERNAME", "STORBENCH_CQL_PASSWORD"} & set(os.environ)  # no child inherits them
    assert parse_target("cassandra://127.0.0.1:9042/ks").credentials() == Credentials("envuser", "pw-canary-38")


@pytest.mark.parametrize(
    "mode, says",
    [(0o644, "readable by its owner only (chmod 600"), (0o640, "readable by its owner only"), (None, "No such file")],
)
def test_a_password_file_others_may_read_is_refused_in_one_line(tmp_path, mode, says):
    path = _password_file(tmp_path, mode) if mode else tmp_path / "missing"
    target = parse_target(f"cassandra://127.0.0.1:9042/ks?user=alice&password_file={path}")
    with pytest.raises(TargetError) as err:
        target.credentials()
    assert says in _one_line(err.value) and "pw-1" not in str(err.value)


def test_run_keyspace_is_a_valid_name():
    name = run_keyspace("20261123-190451-AbC9")
    assert name == "storbench_20261123_190451_abc9"


def test_unreachable_contact_point_is_one_line():
    target = parse_target(f"cassandra://127.0.0.1:{free_port()}/")
    with pytest.raises(TargetError) as err:
        target.precheck(0)
    assert "cannot connect to" in _one_line(err.value)


def _refused_by_the_cli(home, target: str, *args: str) -> str:
    """``storbench run ycsb-a`` refusing ``target`` in one line, exit != 0, nothing run: the target is read and
    prechecked before anything else."""
    done = storbench(home, "run", "ycsb-a", "--set", "restore=none", "--target", target, *args)
    assert done.returncode != 0
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1, done.stderr
    assert not any((home / "runs").glob("*"))  # no run directory was written
    return lines[0]


@pytest.mark.real
def test_bad_keyspace_through_the_cli_is_one_line(tmp_path):
    assert "no quotes" in _refused_by_the_cli(tmp_path / "home", 'cassandra://127.0.0.1:9042/"evil"')


@pytest.mark.real
def test_unreachable_contact_point_through_the_cli_is_one_line(tmp_path):
    line = _refused_by_the_cli(tmp_path / "home", f"cassandra://127.0.0.1:{free_port()}/")
    assert "cannot connect to" in line and "services up cassandra" in line


def _keyspaces(session) -> set[str]:
    return {row.keyspace_name for row in session.execute("SELECT keyspace_name FROM system_schema.keyspaces")}


def _tables(session, keyspace: str) -> set[str]:
    return {
        row.table_name
        for row in session.execute("SELECT table_name FROM system_schema.tables WHERE keyspace_name = %s", (keyspace,))
    }


@pytest.fixture
def cql(cassandra1):
    home, state = cassandra1
    with session_on(
        ["127.0.0.1"], state["ports"]["native"], timeout=60, credentials=cassandra.credentials(state)
    ) as session:
        yield home, state, session


def _canary(session, keyspace: str, table: str, key: str, value: str) -> None:
    """A keyspace and table of the test's own (not storbench's), with one row."""
    session.execute(
        f"CREATE KEYSPACE IF NOT EXISTS {keyspace} WITH replication = "
        "{'class': 'SimpleStrategy', 'replication_factor': 1}"
    )
    session.execute(f"CREATE TABLE IF NOT EXISTS {keyspace}.{table} (k varchar PRIMARY KEY, field0 varchar)")
    session.execute(f"INSERT INTO {keyspace}.{table} (k, field0) VALUES (%s, %s)", (key, value))


def _value(session, keyspace: str, table: str, key: str) -> str:
    return session.execute(f"SELECT field0 FROM {keyspace}.{table} WHERE k = %s", (key,)).one().field0


def _target(home, state, keyspace="", replication=None) -> CassandraTarget:
    return parse_target(f"{state['uri']}/{keyspace}", TargetOptions(home=home, replication=replication))


@pytest.mark.cassandra
def test_replication_above_the_nodes_is_refused(cql):
    home, state, _ = cql
    target = _target(home, state, replication=2)
    with pytest.raises(InputError) as err:
        target.precheck(0)
    assert "--replication 2: above the 1 node(s)" in _one_line(err.value)


@pytest.mark.cassandra
def test_replication_above_the_nodes_through_the_cli_is_one_line(cql, tmp_path):
    home, state, session = cql
    before = _keyspaces(session)
    line = _refused_by_the_cli(home, f"{state['uri']}/", "--replication", "2")
    assert "--replication 2: above the 1 node(s)" in line
    assert _keyspaces(session) == before  # nothing was created


@pytest.mark.cassandra
def test_claim_and_release_keep_the_canaries(cql):
    home, state, session = cql
    _canary(session, "canary_ks", "canary", "1", "alive")

    target = _target(home, state)
    target.precheck(0)
    assert target.node_count == 1 and target.replication == 1
    assert target.local_path() is not None and str(target.nodes_file()) == state["nodes"]
    root = target.claim("20261123-000000-cafe")
    keyspace = "storbench_20261123_000000_cafe"
    assert target.keyspace == keyspace and root == f"{state['uri']}/{keyspace}"
    row = session.execute("SELECT replication FROM system_schema.keyspaces WHERE keyspace_name = %s", (keyspace,)).one()
    assert row.replication["replication_factor"] == "1"
    columns = {
        r.column_name: r.type
        for r in session.execute(
            "SELECT column_name, type FROM system_schema.columns WHERE keyspace_name = %s AND table_name = 'usertable'",
            (keyspace,),
        )
    }
    assert columns == {"y_id": "text", **{f: "text" for f in FIELDS}}  # varchar is text in CQL
    session.execute(f"INSERT INTO {keyspace}.usertable (y_id, field0) VALUES ('user1', 'x')")
    assert target.manifest_config() | {"contact_points": None} == {
        "contact_points": None,
        "keyspace": keyspace,
        "table": "usertable",
        "replication": 1,
        "cassandra_nodes": 1,
        "keyspace_owned": True,
        "cql_tls": None,  # plain CQL: the URL asked for no TLS
    }

    assert target.release() is True
    assert keyspace not in _keyspaces(session)
    assert "canary_ks" in _keyspaces(session)
    assert _value(session, "canary_ks", "canary", "1") == "alive"


@pytest.mark.cassandra
def test_a_named_foreign_keyspace_is_used_never_dropped(cql):
    home, state, session = cql
    _canary(session, "users_own", "canary", "7", "mine")

    target = _target(home, state, "users_own")
    target.precheck(0)
    target.claim("20261123-000001-beef")
    assert not target.keyspace_owned and _tables(session, "users_own") == {"canary", "usertable"}
    assert target.release() is True
    assert "users_own" in _keyspaces(session)
    assert _tables(session, "users_own") == {"canary"}
    assert _value(session, "users_own", "canary", "7") == "mine"


@pytest.mark.cassandra
def test_a_foreign_usertable_is_refused_before_anything_is_written(cql):
    home, state, session = cql
    _canary(session, "users_ycsb", "usertable", "theirs", "keep")  # a YCSB table of the user's own
    target = _target(home, state, "users_ycsb")
    with pytest.raises(TargetError) as err:
        target.precheck(0)
    assert "did not create" in _one_line(err.value)
    target.release()
    assert _value(session, "users_ycsb", "usertable", "theirs") == "keep"


@pytest.mark.cassandra
@pytest.mark.parametrize("keep_data", [False, True])
def test_a_named_missing_keyspace_is_created_and_owned(cql, keep_data):
    home, state, session = cql
    target = _target(home, state, "fresh_named")
    target.precheck(0)
    target.claim("20261123-000002-f00d")
    assert target.keyspace_owned and "fresh_named" in _keyspaces(session)
    assert _tables(session, "fresh_named") == {"usertable", "storbench_owner"}
    assert target.release(keep_data=keep_data) is not keep_data
    assert ("fresh_named" in _keyspaces(session)) is keep_data  # --keep-data keeps it
    session.execute("DROP KEYSPACE IF EXISTS fresh_named")


def _crashed_run_target(monkeypatch, owner: str | None, comment: str | None, exists: bool = True):
    """A target parsed anew (as `storbench cleanup` does) over a fake cluster; the statements it executes."""
    target = parse_target("cassandra://127.0.0.1:9042")
    executed = []

    class Session:
        def execute(self, statement, *args):
            executed.append(statement)

    monkeypatch.setattr(target, "session", lambda: Session())
    monkeypatch.setattr(target, "keyspace_exists", lambda keyspace: exists and keyspace == "storbench_r1")
    monkeypatch.setattr(target, "owner_of", lambda keyspace: owner)
    monkeypatch.setattr(target, "table_comment_of", lambda keyspace, table: comment)
    return target, executed


def test_cleanup_of_a_crashed_run_drops_its_keyspace(monkeypatch):
    """issue 38 item 8: cleanup of a crashed YCSB run said the keyspace "is gone" and left it."""
    from types import SimpleNamespace

    from storbench.api import _remove_root

    target, executed = _crashed_run_target(monkeypatch, owner="r1", comment="storbench run r1")
    assert _remove_root(SimpleNamespace(run_id="r1"), "cassandra://127.0.0.1:9042/storbench_r1", target) is True
    assert executed == ["DROP KEYSPACE storbench_r1"]
    gone, executed = _crashed_run_target(monkeypatch, owner=None, comment=None, exists=False)
    assert _remove_root(SimpleNamespace(run_id="r1"), "cassandra://127.0.0.1:9042/storbench_r1", gone) is False
    other, executed = _crashed_run_target(monkeypatch, owner="r2", comment="storbench run r2")
    with pytest.raises(InputError, match="does not name this run"):
        _remove_root(SimpleNamespace(run_id="r1"), "cassandra://127.0.0.1:9042/storbench_r1", other)
    assert executed == []

"""cassandra_auth without a node (issue 38 item 3): node 1 alone is handed storbench's role, in a private file named
on its command line (never the password itself), and the role manager the nodes are configured with is the one
jvm/cassandra builds. The real start, tried with Cassandra's default login throughout, is in test_cassandra.py."""

import stat
from pathlib import Path

from storbench.services import cassandra_auth

REPO = Path(__file__).resolve().parents[2]


def _state(workdir: Path) -> dict:
    return {"workdir": str(workdir), "auth": cassandra_auth.prepare(workdir)}


def test_node_one_alone_gets_the_role_in_a_private_file_never_on_its_command_line(tmp_path):
    workdir = tmp_path / "cassandra"
    workdir.mkdir()
    state = _state(workdir)
    password = state["auth"]["password"]
    for index in (1, 2):
        (workdir / f"node-{index}").mkdir()
    first = cassandra_auth.jvm_options(state, workdir / "node-1", 1)
    role_file = workdir / "node-1" / cassandra_auth.ROLE_FILE
    assert f"-D{cassandra_auth.ROLE_FILE_PROPERTY}={role_file}" in first
    assert role_file.read_text() == f"storbench {password}\n"
    assert stat.S_IMODE(role_file.stat().st_mode) == 0o600
    assert not any(password in option for option in first)
    later = cassandra_auth.jvm_options(state, workdir / "node-2", 2)
    assert not any(cassandra_auth.ROLE_FILE_PROPERTY in option for option in later)  # nodes 2..N make no role
    assert not (workdir / "node-2" / cassandra_auth.ROLE_FILE).exists()


def test_the_nodes_role_manager_is_the_one_jvm_cassandra_builds():
    package, _, name = cassandra_auth.ROLE_MANAGER.rpartition(".")
    source = REPO / "jvm" / "cassandra" / "src" / "main" / "java" / Path(*package.split(".")) / f"{name}.java"
    text = source.read_text()
    assert f"class {name} extends CassandraRoleManager" in text
    assert f'"{cassandra_auth.ROLE_FILE_PROPERTY}"' in text
    assert f"role_manager: {cassandra_auth.ROLE_MANAGER}" in cassandra_auth.YAML

"""A real Cassandra cluster (``services up cassandra`` through the CLI) as a session fixture's body: the
``cassandra1`` and ``cassandra3`` fixtures of tests/conftest.py differ only in nodes and heap."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from storbench.services import cassandra, process
from tests.cassandra_login_watch import WATCHES, DefaultLoginWatch
from tests.cli.helpers import storbench
from tests.grouping import stop_after_last_user


def cassandra_cluster(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory, nodes: int, heap: str
) -> Iterator[tuple[Path, dict]]:
    """(results home, service state) of ``nodes`` nodes with ``heap`` each, taken down after its last user."""
    home = tmp_path_factory.mktemp(f"cassandra{nodes}-home")
    # Cassandra's well-known login tried on every node while it starts (tests/services/test_cassandra.py reads it)
    watch = WATCHES[request.fixturename] = DefaultLoginWatch(home / "services" / "cassandra").start()
    try:
        up = storbench(home, "services", "up", "cassandra", "--nodes", str(nodes), "--heap", heap, timeout=900)
    finally:
        watch.stop()
    assert up.returncode == 0, up.stderr
    state = cassandra.running(home)
    assert state is not None and up.stdout.strip() == state["uri"]

    def down_():
        down = storbench(home, "services", "down", "cassandra")
        assert down.returncode == 0 and "stopped" in down.stdout, down.stderr
        assert [e["pid"] for e in state["processes"] if process.alive(e["pid"], e["marker"])] == []
        assert not (home / "services" / "cassandra").exists()

    stop = stop_after_last_user(request, down_)
    try:
        yield home, state
    finally:
        stop()

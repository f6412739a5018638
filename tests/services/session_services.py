"""The bodies of the session service fixtures in tests/conftest.py (``yield from`` one): a service started in a
results home of its own, its (home, state) handed to the tests, taken down after its last user
(tests/grouping.py) with nothing of it left."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from storbench import api
from storbench.results.store import ResultStore
from storbench.services import cassandra, process
from tests.cassandra_login_watch import WATCHES, DefaultLoginWatch
from tests.cli.helpers import storbench
from tests.grouping import serve_until_last_user


def api_service(
    request: pytest.FixtureRequest,
    tmp_path_factory: pytest.TempPathFactory,
    name: str,
    must_stop: bool = True,
    **options: Any,
) -> Iterator[tuple[Path, dict]]:
    """``services up NAME`` through the API with ``options``; ``must_stop``: its down finds something running."""
    home = tmp_path_factory.mktemp(f"{name}-home")
    store = ResultStore(home)
    state = api.service_up(name, store, **options)

    def down() -> None:
        stopped = api.service_down(name, store)
        assert stopped or not must_stop
        assert api.service_status(name, store) is None

    yield from serve_until_last_user(request, (home, state), down)


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

    yield from serve_until_last_user(request, (home, state), down_)

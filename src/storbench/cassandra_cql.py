"""CQL sessions through the DataStax Python driver (``cassandra-driver``), for keyspace and table management
and service checks: never on a measured path."""

from __future__ import annotations

import logging
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from storbench.errors import EngineError

PROTOCOL = 5  # Cassandra 4 and 5 speak it; fixing it spares the driver's downgrade warnings


def _driver() -> Any:
    try:
        import cassandra.cluster
        import cassandra.policies
    except ImportError:
        raise EngineError("the Python cassandra-driver is not installed; run scripts/setup.sh") from None
    logging.getLogger("cassandra").setLevel(logging.ERROR)  # reconnection chatter is not the user's business
    return cassandra


@contextmanager
def session_on(hosts: list[str], port: int, pin: bool = False, timeout: float = 10.0) -> Iterator[Any]:
    """A session on ``hosts`` (contact points); ``pin`` keeps it to exactly those hosts (a node's own view)."""
    driver = _driver()
    policies = driver.policies
    balancing = (policies.WhiteListRoundRobinPolicy(hosts) if pin
                 else policies.TokenAwarePolicy(policies.RoundRobinPolicy()))
    profile = driver.cluster.ExecutionProfile(load_balancing_policy=balancing, request_timeout=timeout)
    cluster = driver.cluster.Cluster(hosts, port=port, protocol_version=PROTOCOL, connect_timeout=timeout,
                                     control_connection_timeout=timeout, idle_heartbeat_interval=0,
                                     execution_profiles={driver.cluster.EXEC_PROFILE_DEFAULT: profile})
    try:
        session = cluster.connect()
        yield session
    finally:
        cluster.shutdown()

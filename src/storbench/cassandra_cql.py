"""CQL sessions through the DataStax Python driver (``cassandra-driver``), for keyspace and table management
and service checks: never on a measured path. A cluster that asks who is calling (PasswordAuthenticator, as
``services up cassandra`` starts it) gets :class:`Credentials` through the driver's SASL PLAIN provider."""

from __future__ import annotations

import logging
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

from storbench.errors import EngineError

PROTOCOL = 5  # Cassandra 4 and 5 speak it; fixing it spares the driver's downgrade warnings


@dataclass(frozen=True)
class Credentials:
    """A CQL role and its password (kept out of repr: it never reaches a log line or a report)."""

    username: str
    password: str = field(repr=False)


def _driver() -> Any:
    try:
        import cassandra.cluster
        import cassandra.policies
    except ImportError:
        raise EngineError("the Python cassandra-driver is not installed; run scripts/setup.sh") from None
    logging.getLogger("cassandra").setLevel(logging.ERROR)  # reconnection chatter is not the user's business
    return cassandra


def open_cluster(
    hosts: list[str],
    port: int,
    timeout: float = 10.0,
    request_timeout: float = 10.0,
    pin: bool = False,
    credentials: Credentials | None = None,
    ssl_context: Any = None,
) -> tuple[Any, Any]:
    """(driver Cluster, Session) on ``hosts`` (contact points), logged in with ``credentials`` when given, over
    TLS with ``ssl_context`` when given (it checks the certificate and the host name: the driver then names
    each host it dials); ``pin`` keeps it to exactly those hosts (a node's own view). DDL waits up to
    ``request_timeout`` for every node to agree on the schema. The caller shuts the Cluster down."""
    driver = _driver()
    auth = None
    if credentials is not None:
        from cassandra.auth import PlainTextAuthProvider

        auth = PlainTextAuthProvider(username=credentials.username, password=credentials.password)
    policies = driver.policies
    balancing = (
        policies.WhiteListRoundRobinPolicy(hosts) if pin else policies.TokenAwarePolicy(policies.RoundRobinPolicy())
    )
    profile = driver.cluster.ExecutionProfile(load_balancing_policy=balancing, request_timeout=request_timeout)
    cluster = driver.cluster.Cluster(
        hosts,
        port=port,
        protocol_version=PROTOCOL,
        connect_timeout=timeout,
        control_connection_timeout=timeout,
        idle_heartbeat_interval=0,
        max_schema_agreement_wait=request_timeout,
        auth_provider=auth,
        ssl_context=ssl_context,
        execution_profiles={driver.cluster.EXEC_PROFILE_DEFAULT: profile},
    )
    try:
        return cluster, cluster.connect()
    except BaseException:
        cluster.shutdown()
        raise


@contextmanager
def session_on(
    hosts: list[str], port: int, pin: bool = False, timeout: float = 10.0, credentials: Credentials | None = None
) -> Iterator[Any]:
    """A session for one check or change, shut down afterwards."""
    cluster, session = open_cluster(hosts, port, timeout, timeout, pin, credentials)
    try:
        yield session
    finally:
        cluster.shutdown()

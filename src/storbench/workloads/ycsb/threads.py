"""Paper 003's operations per server thread: the cluster's ops/s over one server's hardware threads, read from the
nodes' fingerprints (or this machine when it is the server)."""

from __future__ import annotations

import os
from typing import Any

from storbench.context import RunContext
from storbench.results.model import Sample
from storbench.targets.cassandra import CassandraTarget


def server_threads(ctx: RunContext, target: CassandraTarget) -> tuple[int | None, str]:
    """(the servers' CPU threads, all hosts together, how they were counted)."""
    return _threads(ctx.node_fingerprints, bool(target.service))[:2]


def _threads(prints: dict[str, dict[str, Any]], here: bool) -> tuple[int | None, str, int | None, str]:
    """(all hosts' CPU threads, how; one node's threads, how) from the nodes' fingerprints (each host once), or
    this machine's cores when the nodes run ``here``. One node's threads is paper 003's divisor ("x86 (56
    Threads)" per server, its cluster's ops/s ÷ 56): defined only when every host has the same count."""
    hosts: dict[str, int] = {}
    for label, print_ in prints.items():
        if print_.get("cores"):
            hosts[print_.get("hostname") or label] = int(print_["cores"])
    if hosts:
        how = f"from the {len(prints)} node(s)' fingerprints, each host once: " + ", ".join(
            f"{h} {c}" for h, c in sorted(hosts.items())
        )
        counts = set(hosts.values())
        if len(counts) == 1:
            return sum(hosts.values()), how, counts.pop(), how
        return sum(hosts.values()), how, None, f"the hosts' thread counts differ ({how})"
    if here:
        cores = os.cpu_count()
        how = "this machine's cores (the nodes run here: services up cassandra)"
        return cores, how, cores, how
    how = "unknown (no node fingerprints: pass --nodes to count the servers' threads)"
    return None, how, None, how


def thread_samples(
    workload: str, ops_per_s: float | None, prints: dict[str, dict[str, Any]], here: bool, notes: list[str]
) -> list[Sample]:
    """The throughput per server CPU thread in two scopes, each under its own name: ÷ all hosts' threads
    (``ycsb_ops_per_server_thread``) and paper 003's ÷ one node's threads (``ycsb_ops_per_node_thread``)."""
    threads, how, node, node_how = _threads(prints, here)
    out = [
        Sample(workload, "ycsb_server_threads", float(threads) if threads else None, "threads"),
        Sample(
            workload,
            "ycsb_ops_per_server_thread",
            ops_per_s / threads if threads and ops_per_s is not None else None,
            "ops/s/thread",
        ),
        Sample(
            workload,
            "ycsb_ops_per_node_thread",
            ops_per_s / node if node and ops_per_s is not None else None,
            "ops/s/thread",
        ),
    ]
    for text in (
        (
            f"ycsb: operations per server CPU thread divide by {threads} thread(s), {how}"
            if threads
            else f"ycsb: operations per server CPU thread not computed: server threads {how}"
        ),
        (
            f"ycsb: operations per node CPU thread (paper 003's) divide the cluster's rate by one node's "
            f"{node} thread(s)"
            if node
            else f"ycsb: operations per node CPU thread (paper 003's) not computed: {node_how}"
        ),
    ):
        if text not in notes:
            notes.append(text)
    return out

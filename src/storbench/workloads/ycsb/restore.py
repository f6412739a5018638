"""``restore=snapshot``: every node back to the post-load state before each measured YCSB run (paper 003:
"the database is restored from a backup before every test").

After the load, each node flushes the table and takes ``nodetool snapshot -t TAG`` of it. Before a
measured run, ``TRUNCATE`` empties the table on every node (memtables and SSTables, the run's inserts
included; the commit log is not replayed past a truncation) and ``nodetool import --copy-data`` loads
each node's snapshot SSTables back (copied: the snapshot serves the next run too; caches
invalidated). That is the same state as stopping the nodes and swapping the SSTables, without the
restart; :func:`table_state` proves it each time: the row count and a SHA-256 over a sample of keys'
rows, read at consistency ALL, must equal the post-load ones, or the run does not start.
"""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import Any

from storbench.errors import InputError, WorkloadError
from storbench.targets.cassandra import FIELDS, CassandraTarget

SAMPLE_KEYS = 200  # keys whose rows the checksum covers (evenly spread over the key numbers)
_MASK = (1 << 64) - 1


def fnvhash64(value: int) -> int:
    """YCSB's ``Utils.fnvhash64`` (FNV-1a 64 over the 8 little-end bytes, then Java's ``Math.abs``)."""
    hashed = 0xCBF29CE484222325
    for _ in range(8):
        hashed ^= value & 0xFF
        value >>= 8
        hashed = (hashed * 1099511628211) & _MASK
    signed = hashed - (1 << 64) if hashed >= 1 << 63 else hashed
    return signed if signed == -(1 << 63) else abs(signed)  # Math.abs(Long.MIN_VALUE) stays negative


def key_name(keynum: int) -> str:
    """YCSB's ``buildKeyName`` with insertorder=hashed and zeropadding 1."""
    return f"user{fnvhash64(keynum)}"


def table_state(target: CassandraTarget, recordcount: int, sample: int = SAMPLE_KEYS) -> dict[str, Any]:
    """{"rows": COUNT(*), "checksum": SHA-256 over the sampled keys' rows, "sampled": n} at consistency ALL."""
    from cassandra import ConsistencyLevel
    from cassandra.query import SimpleStatement

    session = target.session()
    where = f"{target.keyspace}.{target.table}"
    count = SimpleStatement(f"SELECT COUNT(*) FROM {where}", consistency_level=ConsistencyLevel.ALL)
    rows = session.execute(count, timeout=120).one()[0]
    read = session.prepare(f"SELECT {', '.join(FIELDS)} FROM {where} WHERE y_id = ?")
    read.consistency_level = ConsistencyLevel.ALL
    step = max(1, recordcount // sample)
    digest = hashlib.sha256()
    keys = range(0, recordcount, step)
    for keynum in keys:
        key = key_name(keynum)
        row = session.execute(read, (key,)).one()
        digest.update(key.encode() + b"\0" + (b"\1".join((v or "").encode() for v in row) if row else b"<missing>"))
    return {"rows": int(rows), "checksum": digest.hexdigest(), "sampled": len(keys)}


def require_service(target: CassandraTarget, workload: str) -> dict[str, Any]:
    """storbench's own cluster (its nodes' data directories and nodetool), or one line saying why not."""
    if not target.service:
        raise InputError(
            f"{workload}: restore=snapshot needs the nodes' data directories and nodetool, i.e. a "
            f"cluster started by `storbench services up cassandra`; {target.uri} is not one "
            f"(use restore=none)"
        )
    return target.service


def _nodetool(state: dict[str, Any], *args: str, node: int) -> str:
    from storbench.services.cassandra import nodetool

    return nodetool(state, *args, node=node)


def snapshot(target: CassandraTarget, tag: str) -> None:
    """Flush and snapshot the table on every node."""
    state = target.service
    for node in range(1, state["node_count"] + 1):
        _nodetool(state, "flush", target.keyspace, target.table, node=node)
        _nodetool(state, "snapshot", "-t", tag, "-cf", target.table, target.keyspace, node=node)


def _snapshot_dir(state: dict[str, Any], node: int, keyspace: str, table: str, tag: str) -> Path:
    entry = [p for p in state["processes"] if p["kind"] == "node"][node - 1]
    found = sorted(Path(entry["data_dir"]).glob(f"{keyspace}/{table}-*/snapshots/{tag}"))
    if len(found) != 1:
        raise WorkloadError(
            f"restore=snapshot: node {entry['host']} has {len(found)} snapshot(s) {tag} of "
            f"{keyspace}.{table} under {entry['data_dir']} (expected 1)"
        )
    return found[0]


def restore(target: CassandraTarget, tag: str) -> None:
    """TRUNCATE the table (every node), then import each node's snapshot SSTables (copied) on that node."""
    from cassandra import ConsistencyLevel
    from cassandra.query import SimpleStatement

    state = target.service
    dirs = [
        _snapshot_dir(state, node, target.keyspace, target.table, tag) for node in range(1, state["node_count"] + 1)
    ]
    truncate = SimpleStatement(f"TRUNCATE {target.keyspace}.{target.table}", consistency_level=ConsistencyLevel.ALL)
    target.session().execute(truncate, timeout=120)
    for node, directory in enumerate(dirs, start=1):
        _nodetool(state, "import", "--copy-data", target.keyspace, target.table, str(directory), node=node)


def clear(target: CassandraTarget, tag: str) -> None:
    """Remove the run's snapshot from every node (the keyspace itself goes with the run)."""
    state = target.service
    for node in range(1, state["node_count"] + 1):
        _nodetool(state, "clearsnapshot", "-t", tag, "--", target.keyspace, node=node)

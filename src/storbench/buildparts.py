"""Parts of storbench the default job does not need, built on first use.

``make run`` sets up only what the default job uses (Python, PySpark, Java). The native load engine
the jars of the JVM launchers, S3A and Cassandra, and YCSB core with storbench's binding (driver=ycsb) are built by ``scripts/setup.sh --part NAME`` the
first time a run needs them, with one line saying so; ``make test`` builds them all up front.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from storbench.errors import EngineError

REPO = Path(__file__).resolve().parents[2]
SETUP = REPO / "scripts" / "setup.sh"
PARTS = {
    "native": "the native load engine (Rust, cargo; first time: about 4 minutes)",
    "jvm": "the JVM launchers (Maven; first time: about a minute)",
    "s3a": "Spark's S3A jars (Maven, ~13 MB)",
    "cassandra": "Apache Cassandra's jars (Maven, ~70 MB)",
    "metastore": "Hive 4.0.1's metastore jars and Spark's Hive client for it (Maven, ~310 MB)",
    "ycsb": "YCSB core 0.17.0 and storbench's binding on the DataStax Java driver (Maven, ~15 MB)",
}


def build(part: str) -> None:
    """Runs the set-up of one part, or says in one line how to get it where this is not a checkout."""
    what = PARTS[part]
    if not SETUP.is_file():
        raise EngineError(f"{what} is not built, and this installation has no scripts/setup.sh to build it")
    print(f"storbench: building {what} on first use", file=sys.stderr, flush=True)
    done = subprocess.run(
        ["bash", str(SETUP), "--part", part],
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    if done.returncode != 0:
        lines = [line for line in done.stderr.splitlines() if line.strip()]
        raise EngineError(
            f"building {what} failed: {lines[-1] if lines else f'exit {done.returncode}'} "
            f"(run scripts/setup.sh --part {part} to see it all)"
        )

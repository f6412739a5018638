"""The classpath of the repo's JVM launchers (jvm/), as built by scripts/setup.sh; in a wheel install, the wheel's
own jars and the ones fetched into the per-user cache (storbench.fetch)."""

from __future__ import annotations

from pathlib import Path

from storbench.binaries import bundled, java_hint, require
from storbench.buildparts import build
from storbench.errors import EngineError
from storbench.fetch import OWN_JARS, classpath

JVM_DIR = Path(__file__).resolve().parents[3] / "jvm"


def launcher_classpath() -> str:
    if (fetched := classpath("jvm")) is not None:
        return fetched
    classes = JVM_DIR / "target" / "classes"
    deps = JVM_DIR / "target" / "classpath.txt"
    if not classes.is_dir() or not deps.is_file():
        build("jvm")
    if not classes.is_dir() or not deps.is_file():
        raise EngineError(f"the JVM launchers are not built ({JVM_DIR}/target); run scripts/setup.sh --part jvm")
    return f"{classes}:{deps.read_text().strip()}"


def java_binary() -> str:
    return require("java", java_hint())


def ensure_launcher_jar() -> None:
    """Workloads that run storbench's JVM classes inside Spark (dfsio) build them first, before Spark starts."""
    if launcher_jar() is None:
        build("jvm")


def launcher_jar() -> Path | None:
    """storbench's own JVM classes (DfsIo, ...) for Spark's ``spark.jars``; None before the first build."""
    if (own := bundled("jars", OWN_JARS["jvm"])) is not None:
        return own
    jars = sorted((JVM_DIR / "target").glob("storbench-jvm-*.jar"))
    return jars[-1] if jars else None


def cassandra_classpath() -> str:
    """Apache Cassandra's server jars (jvm/cassandra, apart from the launchers: their dependencies clash), after
    storbench's role manager for its nodes (cassandra_auth.ROLE_MANAGER)."""
    if (fetched := classpath("cassandra")) is not None:
        return fetched
    module = JVM_DIR / "cassandra"
    jar = module / "target" / "storbench-cassandra-0.1.0.jar"
    if not jar.is_file():
        build("cassandra")
    if not jar.is_file():
        raise EngineError(
            f"storbench's Cassandra role manager is not built ({jar}); run scripts/setup.sh --part cassandra"
        )
    jars = _resolved("cassandra", module, "Cassandra's jars")
    return f"{jar}:{jars}"


def metastore_classpath(client: bool = False) -> str:
    """Hive 4.0.1's standalone metastore server with PostgreSQL's driver (jvm/metastore), or (``client``) the Hive
    4.0.1 client jars Spark loads to talk to it (jvm/metastore/client)."""
    if (fetched := classpath("metastore-client" if client else "metastore")) is not None:
        return fetched
    module = JVM_DIR / "metastore" / ("client" if client else "")
    return _resolved("metastore", module, "Hive's metastore jars")


def _resolved(part: str, module: Path, what: str) -> str:
    """The classpath scripts/setup.sh resolved for ``module`` (``part`` built on first use)."""
    deps = module / "target" / "classpath.txt"
    if not deps.is_file() or not deps.read_text().strip():
        build(part)
    if not deps.is_file() or not deps.read_text().strip():
        raise EngineError(f"{what} are not fetched ({deps} is missing); run scripts/setup.sh --part {part}")
    return deps.read_text().strip()

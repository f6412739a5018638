"""The classpaths of storbench's JVM parts (the table of build parts, buildparts.tsv): in a clone, storbench's own jar
of the module and the jars scripts/setup.sh resolved (the part built on first use); in a wheel install, the wheel's
own jar and the ones fetched into the per-user cache (storbench.fetch)."""

from __future__ import annotations

import os
import shlex
from pathlib import Path

from storbench.binaries import bundled, java_hint, require
from storbench.buildparts import MODULES, PARTS, REPO, build, with_classpath
from storbench.errors import EngineError, InputError
from storbench.fetch import classpath
from storbench.redaction import is_secret_name

JVM_DIR = REPO / "jvm"


def launcher_classpath() -> str:
    """The JVM launchers (MiniDFSCluster, TestDFSIO, TeraGen) with Hadoop's jars."""
    return module_classpath("jvm")


def cassandra_classpath() -> str:
    """Apache Cassandra's server jars (apart from the launchers: their dependencies clash), after storbench's role
    manager for its nodes (cassandra_auth.ROLE_MANAGER)."""
    return module_classpath("cassandra")


def metastore_classpath(client: bool = False) -> str:
    """Hive 4.0.1's standalone metastore server with PostgreSQL's driver, or (``client``) the Hive 4.0.1 client jars
    Spark loads to talk to it."""
    return module_classpath("metastore-client" if client else "metastore")


def module_classpath(name: str) -> str:
    """The classpath called ``name`` in the table of build parts: fetched in a wheel install; in a clone, built on
    first use when any product of its module is missing (its jar, its resolved classpath)."""
    if (fetched := classpath(name)) is not None:
        return fetched
    module = with_classpath(name)
    lacking = _lacking(module.products)
    if lacking:
        build(module.part)
        lacking = _lacking(module.products)
    if lacking:
        raise EngineError(
            f"{PARTS[module.part]} is not built ({lacking[0]} is missing); run scripts/setup.sh --part {module.part}"
        )
    jars = [str(REPO / module.own_jar[1])] if module.own_jar else []
    return ":".join([*jars, (REPO / module.resolved).read_text().strip()])


def java_binary() -> str:
    return require("java", java_hint())


JVM_OPTS_ENV = "STORBENCH_JVM_OPTS"


def extra_options() -> list[str]:
    """JVM options for every daemon and Spark executor storbench starts, from ``STORBENCH_JVM_OPTS`` (shell words,
    e.g. ``-XX:TieredStopAtLevel=1``: the test suite's, whose JVMs are short-lived). They are on the processes'
    command lines, so an option that names a secret (``-Dssl.keystore.password=...``) is refused."""
    text = os.environ.get(JVM_OPTS_ENV, "")
    try:
        options = shlex.split(text)
    except ValueError as exc:
        raise InputError(f"{JVM_OPTS_ENV}: {exc}; expected JVM options as shell words") from None
    for option in options:
        name = option.split("=", 1)[0].lstrip("-")
        if "=" in option and is_secret_name(name):
            raise InputError(
                f"{JVM_OPTS_ENV}: {name} names a secret; JVM options reach the command line, where any user sees "
                "them: give it in a file the service reads"
            )
        if not option.startswith("-"):
            raise InputError(f"{JVM_OPTS_ENV}: {option!r} is not a JVM option (options start with '-')")
    return options


def java_command() -> list[str]:
    """``java`` and the extra options (extra_options): how a storbench daemon's argv begins."""
    return [java_binary(), *extra_options()]


def ensure_launcher_jar() -> None:
    """Workloads that run storbench's JVM classes inside Spark (dfsio) build them first, before Spark starts."""
    if launcher_jar() is None:
        build("jvm")


def launcher_jar() -> Path | None:
    """storbench's own JVM classes (DfsIo, ...) for Spark's ``spark.jars``; None before the first build."""
    own = carried(with_classpath("jvm").own_jar[0])
    return own if own.is_file() else None


def carried(inside: str) -> Path:
    """A file the wheel carries (``inside`` its _bundle, as the table of build parts names it), or the clone's."""
    clone = next(clone for module in MODULES for path, clone in module.wheel if path == inside)
    return bundled(*inside.split("/")) or REPO / clone


def _lacking(products: tuple[str, ...]) -> list[str]:
    """Those not there, or empty (a resolve cut short leaves an empty classpath.txt)."""
    return [str(REPO / p) for p in products if not (REPO / p).exists() or (REPO / p).stat().st_size == 0]

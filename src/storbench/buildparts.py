"""The one table of storbench's build parts (buildparts.tsv), and building a part on first use.

``make run`` sets up only what the default job uses (Python, PySpark, Java). Every other part (the native load
engine, the jars of the JVM launchers, S3A, Cassandra, Hive's metastore, YCSB with storbench's binding) is built by
``scripts/setup.sh --part NAME`` the first time a run needs it, with one line saying so; ``make test`` builds them all
up front. fetch.py, doctor.py, services/jvm.py, hatch_build.py, the Makefile and scripts/setup.sh all read the table,
so a new part is one row in it. Only the standard library and storbench.errors are imported here: hatch_build.py
imports this module from the source tree, before any dependency is installed.
"""

from __future__ import annotations

import subprocess
import sys
from dataclasses import dataclass
from importlib import resources
from pathlib import Path

from storbench.errors import EngineError

REPO = Path(__file__).resolve().parents[2]
SETUP = REPO / "scripts" / "setup.sh"
TABLE = Path(__file__).with_name("buildparts.tsv")
COLUMNS = ("part", "folder", "build", "classpath", "stamp", "sources", "wheel", "about", "uses")


@dataclass(frozen=True)
class Module:
    """One row of the table: a module of a part (the columns are described in buildparts.tsv)."""

    part: str
    folder: str
    build: str
    classpath: str | None
    stamp: str | None
    sources: str | None
    wheel: tuple[tuple[str, str], ...]  # (its path under the wheel's storbench/_bundle, its path in a clone)
    about: str | None
    uses: str | None

    @property
    def resolved(self) -> str | None:
        """Where scripts/setup.sh writes the module's resolved classpath in a clone."""
        return f"{self.folder}/target/classpath.txt" if self.classpath else None

    @property
    def own_jar(self) -> tuple[str, str] | None:
        """storbench's own jar of the module (in the wheel, in a clone): first on its classpath."""
        return next((pair for pair in self.wheel if pair[0].startswith("jars/")), None)

    @property
    def products(self) -> tuple[str, ...]:
        """What a build leaves in a clone (besides its stamp): without any of them the module is built again."""
        return tuple(clone for _, clone in self.wheel) + ((self.resolved,) if self.resolved else ())


def read(path: Path | None = None) -> tuple[Module, ...]:
    """The rows of a table of build parts (default: the package's own, read as a resource: on a Spark executor the
    package is a zip, storbench.engines.shipping); a malformed row is one line naming the file, the line and what
    is wanted."""
    text = path.read_text() if path is not None else resources.files("storbench").joinpath(TABLE.name).read_text()
    path = path or TABLE
    modules: list[Module] = []
    for number, line in enumerate(text.splitlines(), 1):
        if not line.strip() or line.startswith("#"):
            continue
        fields = [None if field == "-" else field for field in line.split("\t")]
        pairs = [entry.partition("=") for entry in (fields[6] or "").split()] if len(fields) == len(COLUMNS) else []
        if len(fields) != len(COLUMNS) or not all(fields[:3]) or any(not a or not b for a, _, b in pairs):
            raise ValueError(
                f"{path}:{number}: not a row of build parts; allowed: {len(COLUMNS)} tab-separated columns "
                f"({', '.join(COLUMNS)}; '-' for none), part, folder and build given, wheel as IN_BUNDLE=IN_CLONE ..."
            )
        first = all(m.part != fields[0] for m in modules)
        if first and not fields[7]:
            raise ValueError(f"{path}:{number}: the first row of part {fields[0]!r} needs its 'about' column")
        modules.append(Module(*fields[:6], tuple((a, b) for a, _, b in pairs), *fields[7:]))
    return tuple(modules)


MODULES = read()
PARTS = {m.part: m.about for m in MODULES if m.about}  # a part -> what it is
USES = {m.part: m.uses for m in MODULES if m.about}  # a part -> what uses it


def modules(part: str) -> tuple[Module, ...]:
    return tuple(m for m in MODULES if m.part == part)


def with_classpath(name: str) -> Module:
    """The module whose classpath is called ``name`` (jvm, metastore-client, ...)."""
    return next(m for m in MODULES if m.classpath == name)


# a part whose jars an installed wheel fetches (`storbench fetch PART`) -> the names of its classpaths
FETCHED = {p: names for p in PARTS if (names := tuple(m.classpath for m in modules(p) if m.classpath))}
WHEEL_PARTS = tuple(p for p in PARTS if any(m.classpath or m.wheel for m in modules(p)))  # what `make dist` builds


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

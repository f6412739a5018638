"""`storbench doctor`: what this installation has and lacks, one line each, with how to get what is missing.

Required is what the default job needs (Python, Java, PySpark); every other part serves some suites or services
only, and its line says which. The exit is non-zero only when a required part is missing.
"""

from __future__ import annotations

import glob
import importlib.metadata
import json
import os
import re
import shutil
import subprocess
import sys
from dataclasses import dataclass

from storbench.binaries import checkout, java_hint, native_binary
from storbench.buildparts import PARTS as DESCRIPTIONS, USES, modules
from storbench.fetch import PARTS, artifacts, cache_dir, cached, missing

APT = "apt-get install"
# optional system tools: name, commands (all needed), what uses them, the Debian packages
TOOLS = (
    ("fio", ("fio",), "the fio-* and zoned suites", "fio"),
    (
        "ceph",
        ("ceph-mon", "ceph-osd", "ceph-mgr", "rados"),
        "services up ceph, rados:// targets, rados-004",
        "ceph-mon ceph-osd ceph-mgr radosgw ceph-common",
    ),
    ("prometheus", ("prometheus",), "--telemetry prometheus", "prometheus"),
    ("node_exporter", ("prometheus-node-exporter",), "services up spark's node telemetry", "prometheus-node-exporter"),
)


@dataclass(frozen=True)
class Check:
    name: str
    ok: bool
    detail: str
    required: bool = False

    def line(self) -> str:
        status = "ok" if self.ok else ("MISSING" if self.required else "missing")
        return f"{status:8} {self.name:16} {self.detail}"


def checks() -> list[Check]:
    return [
        _python(),
        _java(),
        _pyspark(),
        *(_tool(*tool) for tool in TOOLS[:1]),
        _native(),
        *part_checks(),
        *(_tool(*tool) for tool in TOOLS[1:]),
        _postgres(),
    ]


def part_checks() -> list[Check]:
    """A line for each part with jars (the table of build parts): built in a clone, cached in a wheel install."""
    return [_part(part) for part in PARTS]


def run() -> int:
    """Prints one line a check and a closing line; 1 when a required part is missing."""
    found = checks()
    for check in found:
        print(check.line())
    lacking = [c.name for c in found if c.required and not c.ok]
    where = f"a clone ({checkout()})" if checkout() else "an installed wheel"
    print(
        f"doctor: {where}; "
        + (f"required and missing: {', '.join(lacking)}" if lacking else "everything the default job needs is here")
    )
    return 1 if lacking else 0


def _python() -> Check:
    version = ".".join(map(str, sys.version_info[:3]))
    return Check(
        "python",
        sys.version_info >= (3, 11),
        f"{version} ({sys.executable})"
        if sys.version_info >= (3, 11)
        else f"{version}: Python 3.11 or newer is needed",
        required=True,
    )


def _java() -> Check:
    home = os.environ.get("JAVA_HOME")
    java = os.path.join(home, "bin", "java") if home else shutil.which("java")
    if not java or not os.access(java, os.X_OK):
        where = f" (JAVA_HOME={home} has no bin/java)" if home else ""
        return Check("java", False, f"not found{where}; Spark (the default job) needs it{java_hint()}", required=True)
    try:
        said = subprocess.run([java, "-version"], capture_output=True, text=True, timeout=60).stderr
    except (OSError, subprocess.TimeoutExpired) as exc:
        return Check("java", False, f"{java} -version failed ({exc}){java_hint()}", required=True)
    match = re.search(r'version "(\d+)(?:\.(\d+))?', said)
    major = (int(match.group(2) or 0) if match.group(1) == "1" else int(match.group(1))) if match else 0
    if major < 17:
        return Check(
            "java",
            False,
            f"{java} is Java {major or 'of an unknown version'}; Spark needs 17 or newer{java_hint()}",
            required=True,
        )
    return Check("java", True, f"{major} ({java})", required=True)


def _pyspark() -> Check:
    try:
        return Check("pyspark", True, importlib.metadata.version("pyspark"), required=True)
    except importlib.metadata.PackageNotFoundError:
        return Check(
            "pyspark", False, "not installed; pip install storbench again (it depends on pyspark)", required=True
        )


def _tool(name: str, commands: tuple[str, ...], uses: str, packages: str) -> Check:
    lacking = [c for c in commands if shutil.which(c) is None]
    if lacking:
        return Check(name, False, f"{', '.join(lacking)} not on PATH (for {uses}): {APT} {packages}")
    return Check(name, True, shutil.which(commands[0]) or "")


def _native() -> Check:
    binary = native_binary()
    if binary is None:
        how = (
            "built on first use, or now: scripts/setup.sh --part native (cargo)"
            if checkout()
            else "this wheel carries none: install the storbench wheel built for this platform"
        )
        return Check("native engine", False, f"storbench-load not found ({USES['native']}): {how}")
    try:
        said = subprocess.run([binary, "version"], capture_output=True, text=True, timeout=30)
        version = json.loads(said.stdout).get("version", "?")
    except (OSError, subprocess.TimeoutExpired, ValueError) as exc:
        return Check("native engine", False, f"{binary} version failed ({exc})")
    return Check("native engine", True, f"storbench-load {version} ({binary})")


def _part(part: str) -> Check:
    name = f"jars: {part}"
    root = checkout()
    if root is not None:
        if all((root / m.stamp).is_file() for m in modules(part) if m.stamp):
            return Check(name, True, f"built ({USES[part]})")
        return Check(
            name, False, f"not built (for {USES[part]}): built on first use, or now: scripts/setup.sh --part {part}"
        )
    todo = missing(part)
    if not todo:
        return Check(name, True, f"cached in {cache_dir() / 'maven'} ({USES[part]})")
    count = sum(len(artifacts(module)) for module in PARTS[part])
    damaged = [a for a in todo if cached(a).exists()]
    if damaged:  # not the size or sha1 the wheel recorded: a run would fetch them again
        return Check(
            name,
            False,
            f"{len(damaged)}/{count} cached jars damaged, e.g. {cached(damaged[0])} (not the "
            f"size and sha1 the wheel recorded; for {USES[part]}): storbench fetch {part} "
            f"fetches them again",
        )
    return Check(
        name,
        False,
        f"{len(todo)}/{count} jars not cached (for {USES[part]}; {DESCRIPTIONS[part]}): "
        f"fetched on first use, or now: storbench fetch {part} "
        f"({sum(a.size for a in todo) / 1e6:.0f} MB)",
    )


def _postgres() -> Check:
    found = sorted(glob.glob("/usr/lib/postgresql/*/bin/initdb"))
    if not found:
        return Check(
            "postgresql",
            False,
            f"initdb not found (services up metastore; a --results postgresql:// "
            f"store of your own needs none here): {APT} postgresql",
        )
    return Check("postgresql", True, found[-1])

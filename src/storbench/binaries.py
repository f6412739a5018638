"""The programs storbench runs (fio, java, ...), found on PATH or refused in one line saying how to get them, and
where its own built parts are: in a clone (``checkout()``: native/target, jvm/*/target, built by scripts/setup.sh)
or in an installed wheel (``bundled(...)``: the package's ``_bundle`` folder, written by hatch_build.py)."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

from storbench.errors import EngineError

PACKAGE = Path(__file__).resolve().parent
BUNDLE = PACKAGE / "_bundle"  # only in a wheel: bin/, jars/, maven/, metastore/
NATIVE_BINARY = "storbench-load"


def require(name: str, how_to_get: str) -> str:
    """The path of ``name`` on PATH; an EngineError naming it and ``how_to_get`` it when it is missing."""
    path = shutil.which(name)
    if not path:
        raise EngineError(f"{name} is not installed{how_to_get}")
    return path


def checkout() -> Path | None:
    """The clone this package runs from (src/storbench inside it), or None when it is installed from a wheel."""
    root = PACKAGE.parents[1]
    return root if (root / "scripts" / "setup.sh").is_file() else None


def bundled(*parts: str) -> Path | None:
    """A file or folder the wheel carries (``bundled("bin", "storbench-load")``); None in a clone."""
    path = BUNDLE.joinpath(*parts)
    return path if path.exists() else None


def java_hint() -> str:
    """How to get Java where it is missing: the set-up in a clone, a JDK from the system's packages otherwise."""
    return (
        "; run scripts/setup.sh"
        if checkout()
        else ": install Java 17 or newer (Debian/Ubuntu: apt-get install openjdk-17-jre-headless) or put one first "
        "in PATH"
    )


def native_binary() -> str | None:
    """The native load engine: $STORBENCH_LOAD_BIN, the wheel's own, the clone's release build, or one on PATH."""
    root = checkout()
    candidates = [
        os.environ.get("STORBENCH_LOAD_BIN"),
        bundled("bin", NATIVE_BINARY),
        root / "native" / "target" / "release" / NATIVE_BINARY if root else None,
        shutil.which(NATIVE_BINARY),
    ]
    for candidate in candidates:
        if candidate and os.access(candidate, os.X_OK):
            return str(candidate)
    return None

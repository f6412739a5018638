"""Running the system tools the lab cluster is made with; a failure is a LabError naming the command."""

from __future__ import annotations

import shutil
import subprocess

from storbench.errors import EngineError


class LabError(EngineError):
    """A lab cluster could not be made or removed (one line: what, and the tool's own words)."""


def run(*argv: str, input_text: str | None = None) -> str:
    try:
        done = subprocess.run(argv, capture_output=True, text=True, input=input_text, timeout=60)
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise LabError(f"{' '.join(argv)}: {exc}") from None
    if done.returncode != 0:
        said = (done.stderr.strip() or done.stdout.strip()).splitlines()
        raise LabError(f"{' '.join(argv)}: {said[-1] if said else f'exit {done.returncode}'}")
    return done.stdout


def need(tool: str, why: str) -> None:
    if shutil.which(tool) is None:
        raise LabError(f"storbench lab cluster needs {tool} ({why}); it is not on PATH")

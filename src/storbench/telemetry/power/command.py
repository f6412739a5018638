"""``command:CMD``: any command that prints watts (a wall meter's CLI); the first number it prints.

storbench cannot know what the meter covers: its scope is ``unknown`` unless ``scope=`` declares it
(``command:scope=wall,my-meter --watts``), and an unknown scope's energy figures are never compared.
"""

from __future__ import annotations

import re
import shlex
import subprocess
from typing import Any

from storbench.telemetry.power.base import KINDS, PowerError, Reading, Spec, first_line

NUMBER = re.compile(r"[-+]?\d+(?:\.\d+)?(?:[eE][-+]?\d+)?")


def parse_watts(text: str) -> float | None:
    match = NUMBER.search(text)
    return float(match.group()) if match else None


class CommandPower:
    kind = "command"

    def __init__(self, spec: Spec, timeout: float = 5.0, insecure: bool = False):
        if not spec.positional:
            raise spec.fail("expected a command after 'command:' (e.g. command:my-meter --watts)")
        self.argv = shlex.split(spec.positional)
        self.scope = spec.option("scope") or "unknown"
        self.timeout = timeout

    def read(self) -> Reading:
        try:
            done = subprocess.run(self.argv, capture_output=True, text=True, timeout=self.timeout)
        except (OSError, subprocess.TimeoutExpired) as exc:
            raise PowerError(f"{self.argv[0]}: {getattr(exc, 'strerror', None) or exc}") from None
        if done.returncode != 0:
            raise PowerError(f"{self.argv[0]} exited {done.returncode}: {first_line(done.stderr or done.stdout)}")
        watts = parse_watts(done.stdout)
        if watts is None:
            raise PowerError(f"{self.argv[0]} printed no number of watts: {first_line(done.stdout)!r}")
        return Reading(watts=watts)

    def describe(self) -> dict[str, Any]:
        return {
            "source": self.kind,
            "scope": self.scope,
            "command": self.argv[0],
            **({"scope_declared": True} if self.scope != "unknown" else {}),
        }


KINDS["command"] = CommandPower

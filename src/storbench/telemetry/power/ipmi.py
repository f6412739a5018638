"""``ipmi[:HOST,user=U,password_env=VAR|password_file=PATH]``: ``ipmitool dcmi power reading``, parsed.

Without a host it asks the local BMC (``/dev/ipmi0``); with one, over ``-I lanplus``. The password
reaches ipmitool through ``-f PATH`` only: the user's ``password_file``, or a private 0600 file written
for each reading and removed after it; never on its command line nor in its environment. Scope: ``node-psu``.
"""

from __future__ import annotations

import os
import re
import subprocess
from contextlib import nullcontext
from typing import Any

from storbench.redaction import private_file

from storbench.telemetry.power.base import KINDS, PowerError, Reading, Spec, first_line, secret

INSTANT = re.compile(r"Instantaneous power reading:\s*(\d+(?:\.\d+)?)\s*Watts")
STATE = re.compile(r"Power reading state is:\s*(\w+)")


def parse_dcmi(text: str) -> float:
    """Watts from ``ipmitool dcmi power reading``; a deactivated reading is no reading."""
    match = INSTANT.search(text)
    if match is None:
        raise PowerError(f"ipmitool printed no power reading: {first_line(text)!r}")
    state = STATE.search(text)
    if state is not None and state.group(1) != "activated":
        raise PowerError(f"the BMC's DCMI power reading is {state.group(1)}")
    return float(match.group(1))


class IpmiPower:
    kind = "ipmi"
    scope = "node-psu"

    def __init__(self, spec: Spec, timeout: float = 10.0, insecure: bool = False):
        self.host = spec.positional
        self.scope = spec.option("scope", "node-psu") or "node-psu"
        self.timeout = timeout
        self.argv = ["ipmitool"]
        self._password: str | None = None  # written to a private file for each reading (-f)
        if self.host:
            user = spec.option("user") or os.environ.get(spec.option("user_env") or "STORBENCH_BMC_USER", "")
            if not user:
                raise spec.fail("user=NAME or user_env=VAR is needed with a host")
            self.argv += ["-I", "lanplus", "-H", self.host, "-U", user]
            if spec.option("password_file"):
                self.argv += ["-f", spec.option("password_file") or ""]
            else:
                password = secret(spec, "STORBENCH_BMC_PASSWORD")
                if password is None:
                    raise spec.fail(f"no password: set {spec.option('password_env') or 'STORBENCH_BMC_PASSWORD'} "
                                    f"or give password_file=PATH")
                self._password = password
        self.tail = ["dcmi", "power", "reading"]

    def read(self) -> Reading:
        with private_file(self._password, "ipmi-password") if self._password else nullcontext() as path:
            return self._read([*self.argv, *(["-f", str(path)] if path else []), *self.tail])

    def _read(self, argv: list[str]) -> Reading:
        try:
            done = subprocess.run(argv, capture_output=True, text=True, timeout=self.timeout)
        except (OSError, subprocess.TimeoutExpired) as exc:
            raise PowerError(f"ipmitool: {getattr(exc, 'strerror', None) or exc}") from None
        if done.returncode != 0:
            raise PowerError(f"ipmitool exited {done.returncode}: {first_line(done.stderr or done.stdout)}")
        return Reading(watts=parse_dcmi(done.stdout))

    def describe(self) -> dict[str, Any]:
        return {"source": self.kind, "scope": self.scope, "host": self.host or "local"}


KINDS["ipmi"] = IpmiPower

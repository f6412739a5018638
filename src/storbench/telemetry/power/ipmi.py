"""``ipmi[:HOST,user=U,password_env=VAR|password_file=PATH]``: ``ipmitool dcmi power reading``, parsed.

Without a host it asks the local BMC (``/dev/ipmi0``); with one, over ``-I lanplus``. The password
reaches ipmitool through its own channels only: ``-E`` (the ``IPMI_PASSWORD`` variable, set in the
child's environment alone) or ``-f PATH``; never on its command line. Scope: ``node-psu``.
"""

from __future__ import annotations

import os
import re
import subprocess
from typing import Any

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
        self._env = dict(os.environ)
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
                self._env["IPMI_PASSWORD"] = password
                self.argv += ["-E"]
        self.argv += ["dcmi", "power", "reading"]

    def read(self) -> Reading:
        try:
            done = subprocess.run(self.argv, capture_output=True, text=True, timeout=self.timeout, env=self._env)
        except (OSError, subprocess.TimeoutExpired) as exc:
            raise PowerError(f"ipmitool: {getattr(exc, 'strerror', None) or exc}") from None
        if done.returncode != 0:
            raise PowerError(f"ipmitool exited {done.returncode}: {first_line(done.stderr or done.stdout)}")
        return Reading(watts=parse_dcmi(done.stdout))

    def describe(self) -> dict[str, Any]:
        return {"source": self.kind, "scope": self.scope, "host": self.host or "local"}


KINDS["ipmi"] = IpmiPower

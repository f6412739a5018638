"""``ipmi[:HOST,user=U,password_env=VAR|password_file=PATH]``: ``ipmitool dcmi power reading``, parsed.

Without a host it asks the local BMC (``/dev/ipmi0``); with one, over ``-I lanplus``. One ipmitool
process serves every reading: ``ipmitool ... shell`` reads commands on its stdin, each reading sends
``dcmi power reading`` then ``echo MARKER`` and takes what ipmitool prints up to the marker's line (a
process per reading cost 3.5% of a core at 1 s: its start, and over LAN a new RMCP+ session each time).
The session is closed after a failed reading and opened again at the next one.

The password reaches ipmitool through ``-f PATH`` only: the user's ``password_file``, or a private 0600
file written when the session starts and removed once it has answered (ipmitool reads ``-f`` while
parsing its options, before it opens the interface); never on its command line nor in its environment.
Scope: ``node-psu``.
"""

from __future__ import annotations

import os
import re
import select
import signal
import subprocess
import threading
import time
from contextlib import nullcontext
from typing import Any

from storbench.redaction import private_file

from storbench.telemetry.power.base import KINDS, PowerError, Reading, Spec, first_line, secret

INSTANT = re.compile(r"Instantaneous power reading:\s*(\d+(?:\.\d+)?)\s*Watts")
STATE = re.compile(r"Power reading state is:\s*(\w+)")
PROMPT = "ipmitool> "  # readline echoes the prompt and each command line it reads


def parse_dcmi(text: str) -> float:
    """Watts from ``ipmitool dcmi power reading``; a deactivated reading is no reading."""
    match = INSTANT.search(text)
    if match is None:
        raise PowerError(f"ipmitool printed no power reading: {first_line(text)!r}")
    state = STATE.search(text)
    if state is not None and state.group(1) != "activated":
        raise PowerError(f"the BMC's DCMI power reading is {state.group(1)}")
    return float(match.group(1))


START_S = 15.0  # the longest ipmitool's first answer may take: its start and, with a BMC, the session's


class IpmiShell:
    """One ``ipmitool ... shell`` process: ``ask(command)`` returns what it printed for that command."""

    def __init__(self, argv: list[str], timeout: float):
        self.timeout = timeout
        self._asked = 0
        self._pending = b""
        env = {**os.environ, "TERM": "dumb", "INPUTRC": "/dev/null"}  # plain lines from readline, no init file
        try:
            self.process = subprocess.Popen(
                [*argv, "shell"], stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, env=env
            )
        except OSError as exc:
            raise PowerError(f"ipmitool: {exc.strerror or exc}") from None

    def ask(self, command: str) -> str:
        self._asked += 1
        marker = f"storbench-{self._asked}-done"
        try:
            assert self.process.stdin is not None
            self.process.stdin.write(f"{command}\necho {marker}\n".encode())
            self.process.stdin.flush()
        except OSError:
            pass  # it has exited: what it printed says why (below)
        # the first answer includes ipmitool's own start, which a busy machine can stretch past a reading's time
        allowed = self.timeout if self._asked > 1 else max(self.timeout, START_S)
        lines = self._until(marker.encode(), time.monotonic() + allowed, allowed)
        return "\n".join(line for line in lines if not line.startswith(PROMPT))

    def _until(self, marker: bytes, deadline: float, allowed: float) -> list[str]:
        assert self.process.stdout is not None
        fd = self.process.stdout.fileno()
        while True:
            *complete, self._pending = self._pending.split(b"\n")
            for index, line in enumerate(complete):
                if line.strip() == marker:  # echo prints its arguments then a space; the echoed command differs
                    rest = complete[index + 1 :]
                    self._pending = b"\n".join([*rest, self._pending])
                    return [x.decode(errors="replace") for x in complete[:index]]
            self._pending = b"\n".join([*complete, self._pending])
            left = deadline - time.monotonic()
            if left <= 0 or not select.select([fd], [], [], left)[0]:
                self.close()
                raise PowerError(f"ipmitool: no answer within {allowed:g} s")
            chunk = os.read(fd, 65536)
            if not chunk:  # it exited: its status and first line of output are the reason
                text = "\n".join(
                    line for line in self._pending.decode(errors="replace").splitlines() if not line.startswith(PROMPT)
                )
                code, said = self.close(), first_line(text)
                how = f"exited {code}" if code is None or code >= 0 else f"ended by {signal.Signals(-code).name}"
                raise PowerError(f"ipmitool {how}" + (f": {said}" if said else ""))
            self._pending += chunk

    def close(self) -> int | None:
        """Ends the process (EOF on its stdin, then a kill if it lingers); returns its exit status."""
        process = self.process
        if process.poll() is None:
            try:
                assert process.stdin is not None
                process.stdin.close()
                process.wait(timeout=min(self.timeout, 2.0))
            except (OSError, subprocess.TimeoutExpired):
                process.kill()
                process.wait()
        for stream in (process.stdin, process.stdout):
            if stream is not None and not stream.closed:
                stream.close()
        return process.returncode


class IpmiPower:
    kind = "ipmi"
    scope = "node-psu"

    def __init__(self, spec: Spec, timeout: float = 10.0, insecure: bool = False):
        self.host = spec.positional
        self.scope = spec.option("scope", "node-psu") or "node-psu"
        self.declared = spec.option("scope") is not None
        self.timeout = timeout
        self.argv = ["ipmitool"]
        self._password: str | None = None  # written to a private file while a session starts (-f)
        self._shell: IpmiShell | None = None
        self._lock = threading.Lock()  # the sampler's thread and mark() share the session
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
                    raise spec.fail(
                        f"no password: set {spec.option('password_env') or 'STORBENCH_BMC_PASSWORD'} "
                        f"or give password_file=PATH"
                    )
                self._password = password

    def read(self) -> Reading:
        with self._lock:
            try:
                if self._shell is None:
                    return self._start()
                return Reading(watts=parse_dcmi(self._shell.ask("dcmi power reading")))
            except PowerError:
                self._close()  # the next reading starts a new session
                raise

    def _start(self) -> Reading:
        """A new session, answered once: the private password file lives until then."""
        with private_file(self._password, "ipmi-password") if self._password else nullcontext() as path:
            self._shell = IpmiShell([*self.argv, *(["-f", str(path)] if path else [])], self.timeout)
            return Reading(watts=parse_dcmi(self._shell.ask("dcmi power reading")))

    def check(self) -> None:
        """One reading, then the session is closed: the sampler opens its own when it starts."""
        try:
            self.read()
        finally:
            self.close()

    def close(self) -> None:
        with self._lock:
            self._close()

    def _close(self) -> None:
        if self._shell is not None:
            self._shell.close()
            self._shell = None

    def describe(self) -> dict[str, Any]:
        return {
            "source": self.kind,
            "scope": self.scope,
            "host": self.host or "local",
            **({"scope_declared": True} if self.declared else {}),
        }


KINDS["ipmi"] = IpmiPower

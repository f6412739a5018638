"""Try Cassandra's well-known ``cassandra``/``cassandra`` login on every node of a starting cluster, from the moment
each node's CQL port accepts connections until the start returns (issue 38 item 3).

:class:`DefaultLoginWatch` runs on a thread beside ``services up cassandra``: it reads the service's state.json as
soon as it appears (the hosts and the CQL port), and tries a login on each node whose port is open, again and
again. One try is a bare CQL protocol v4 exchange (STARTUP, then SASL PLAIN), a few milliseconds, every 0.1 s,
so the gap a default role would leave is tried many times over, not once by a driver that takes a second to
connect.

    watch = DefaultLoginWatch(home / "services" / "cassandra").start()
    ...  # services up cassandra
    watch.stop()
    assert watch.tries and set(watch.outcomes()) <= REFUSED
"""

from __future__ import annotations

import json
import socket
import struct
import threading
from collections import Counter
from pathlib import Path

VERSION = 0x04  # protocol v4: v5 changes the framing once the connection is ready
STARTUP, READY, AUTHENTICATE, AUTH_RESPONSE, AUTH_SUCCESS, ERROR = 0x01, 0x02, 0x03, 0x0F, 0x10, 0x00
BAD_CREDENTIALS = 0x0100
# what a node answers a login it refuses: the role or password is wrong; or it could not read the role (Cassandra
# reads role `cassandra` at QUORUM, which a cluster whose system_auth is replicated to nodes not up yet cannot
# reach); both an AuthenticationException. "no answer": a try the loaded machine timed out, no login either.
REFUSED = {"bad credentials", "refused", "no answer"}
ROUND_S = 0.1  # between two rounds of tries over the open nodes
WATCHES: dict[str, "DefaultLoginWatch"] = {}  # the session's Cassandra fixture (tests/conftest.py) -> its start's watch


def _frame(opcode: int, body: bytes) -> bytes:
    return struct.pack(">BBhBi", VERSION, 0, 0, opcode, len(body)) + body


def _string(text: str) -> bytes:
    data = text.encode()
    return struct.pack(">H", len(data)) + data


def _read(sock: socket.socket, size: int) -> bytes:
    data = b""
    while len(data) < size:
        chunk = sock.recv(size - len(data))
        if not chunk:
            raise ConnectionError("closed by the node")
        data += chunk
    return data


def _answer(sock: socket.socket) -> tuple[int, bytes]:
    _, _, _, opcode, length = struct.unpack(">BBhBi", _read(sock, 9))
    return opcode, _read(sock, length)


def _error(body: bytes) -> tuple[int, str]:
    code, size = struct.unpack(">iH", body[:6])
    return code, body[6 : 6 + size].decode(errors="replace")


def try_login(host: str, port: int, username: str, password: str, timeout: float = 5.0) -> str:
    """``success``, ``bad credentials``, ``refused: WHY`` (another AuthenticationException), ``no answer: WHY``,
    ``no authentication`` (the node let a client in without a login), or ``other: WHY``; OSError when the port
    does not accept a connection."""
    with socket.create_connection((host, port), timeout=timeout) as sock:
        try:
            sock.sendall(_frame(STARTUP, struct.pack(">H", 1) + _string("CQL_VERSION") + _string("3.0.0")))
            opcode, body = _answer(sock)
            if opcode == READY:
                return "no authentication"
            if opcode != AUTHENTICATE:
                return f"other: {_error(body) if opcode == ERROR else f'opcode {opcode:#x}'} after STARTUP"
            token = b"\0" + username.encode() + b"\0" + password.encode()
            sock.sendall(_frame(AUTH_RESPONSE, struct.pack(">i", len(token)) + token))
            opcode, body = _answer(sock)
        except (OSError, struct.error) as exc:
            return f"no answer: {exc}"
    if opcode == AUTH_SUCCESS:
        return "success"
    if opcode == ERROR:
        code, message = _error(body)
        if code == BAD_CREDENTIALS:
            return "bad credentials" if "are incorrect" in message else f"refused: {message}"
        return f"other: {message}"
    return f"other: opcode {opcode:#x} after AUTH_RESPONSE"


class DefaultLoginWatch:
    """Tries ``cassandra``/``cassandra`` on each node of the cluster starting in ``workdir`` once its CQL port
    is open; ``tries`` holds (host, outcome) of every try made after a port opened."""

    def __init__(self, workdir: Path, username: str = "cassandra", password: str = "cassandra") -> None:
        self.state_file = workdir / "state.json"
        self.username, self.password = username, password
        self.tries: list[tuple[str, str]] = []
        self.opened: set[str] = set()
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._loop, name="cassandra-login-watch", daemon=True)

    def start(self) -> "DefaultLoginWatch":
        self._thread.start()
        return self

    def stop(self) -> None:
        self._stop.set()
        self._thread.join()

    def outcomes(self) -> Counter:
        return Counter(outcome.split(":", 1)[0] for _, outcome in self.tries)

    def summary(self) -> str:
        shown = Counter(self.tries).most_common(8)
        return f"{len(self.tries)} tries on {sorted(self.opened)}: " + "; ".join(f"{n}x {h} {o}" for (h, o), n in shown)

    def _target(self) -> tuple[list[str], int] | None:
        try:
            state = json.loads(self.state_file.read_text())
            return state["hosts"], state["ports"]["native"]
        except (OSError, ValueError, KeyError):  # not written yet, or being replaced
            return None

    def _loop(self) -> None:
        target = None
        while not self._stop.is_set():
            target = target or self._target()
            if target is None:
                self._stop.wait(0.05)
                continue
            hosts, port = target
            for host in hosts:
                try:
                    outcome = try_login(host, port, self.username, self.password)
                except OSError:
                    if host in self.opened:  # a port that was open and now is not: say so
                        self.tries.append((host, "other: connection refused after the port opened"))
                    continue
                self.opened.add(host)
                self.tries.append((host, outcome))
            # a round every 0.1 s: a default role, had Cassandra made one, lives seconds at least (until a client
            # drops it), so it is tried many times over; each try costs the node a role read and a hash check
            # (1657 tries every 0.02 s took a 3-node start from 46 to 63 CPU-s and 37 to 41 s)
            self._stop.wait(ROUND_S)

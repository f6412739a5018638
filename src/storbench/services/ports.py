"""Free TCP ports for the services storbench starts.

The kernel picks a random free port for each bind to port 0, and a port closed again is free to be picked by the
next call: a service given six ports in one breath could get one twice (ci34: a NodeManager's shuffle port was
the ResourceManager's tracker port, and the NodeManager read its own HTTP answer as the tracker's RPC reply).
So a port is handed out once per process.
"""

from __future__ import annotations

import socket
import threading

_given: set[int] = set()
_lock = threading.Lock()
_FORGET_AFTER = 4096  # ports handed out before the oldest may be handed out again (~1/7 of the kernel's range)


def free_port(host: str = "127.0.0.1") -> int:
    """A TCP port free on ``host`` now and not handed out before by this process."""
    with _lock:
        if len(_given) >= _FORGET_AFTER:
            _given.clear()
        while True:
            with socket.socket() as sock:
                sock.bind((host, 0))
                port = sock.getsockname()[1]
            if port not in _given:
                _given.add(port)
                return port


def free_ports(count: int, host: str = "127.0.0.1") -> list[int]:
    """``count`` distinct free TCP ports on ``host``."""
    return [free_port(host) for _ in range(count)]

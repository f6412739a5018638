"""A BMC for the real ipmitool: the peer of ipmitool's own ``dummy`` interface (``-I dummy``, a unix socket
named by ``IPMI_DUMMY_SOCK``; src/plugins/dummy in ipmitool's tree), answering DCMI Get Power Reading with
the watts it is set to and every other request with "invalid command" (ipmitool's start-up probes).

No machine here has a BMC; this lets the tests and benchmarks/power_sampling_cost.py run the real ipmitool,
its shell and its -f password file against something that answers. ``wrapper(dir)`` writes an ``ipmitool``
that runs the real one on this interface (the ``lanplus`` storbench asks for becomes ``dummy``): put its
directory first on PATH.
"""

from __future__ import annotations

import os
import shutil
import socket
import struct
import tempfile
import threading
from pathlib import Path

# ipmitool's struct dummy_rq / dummy_rs (src/plugins/dummy/dummy.h), native layout: pointers and padding included
REQUEST = struct.Struct("@BBBBHP")
RESPONSE = struct.Struct("@BBBBBiP")
NETFN_DCGRP, GET_POWER_READING, DCMI_GROUP = 0x2C, 0x02, 0xDC
BYE = (0x3F, 0xFF)
INVALID_COMMAND = 0xC1


class DummyBmc:
    def __init__(self, watts: int = 231):
        self.watts = watts
        self.readings = 0  # power readings answered
        self.connections = 0  # ipmitool processes that opened the interface
        self._dir = tempfile.mkdtemp(prefix="sb-ipmi-")  # short: a unix socket path has ~100 bytes
        self.socket_path = os.path.join(self._dir, "bmc")
        self._server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self._server.bind(self.socket_path)
        self._server.listen(8)
        self._clients: list[socket.socket] = []
        self._lock = threading.Lock()
        threading.Thread(target=self._accept, daemon=True).start()

    def wrapper(self, directory: Path) -> Path:
        """An ``ipmitool`` in ``directory`` that runs the real one on this BMC's dummy interface."""
        real = shutil.which("ipmitool")
        assert real is not None and Path(real).parent != Path(directory), "the real ipmitool is not on PATH"
        script = Path(directory) / "ipmitool"
        script.write_text(
            "#!/bin/sh\n# the real ipmitool on its dummy interface (tests/ipmi_dummy.py)\n"
            'for arg do shift; [ "$arg" = lanplus ] && arg=dummy; set -- "$@" "$arg"; done\n'
            f'IPMI_DUMMY_SOCK={self.socket_path} exec {real} -I dummy "$@"\n'
        )
        script.chmod(0o755)
        return script

    def drop(self) -> None:
        """Ends every open session (a BMC reset): ipmitool fails its next request; new sessions are served."""
        with self._lock:
            clients, self._clients = self._clients, []
        for client in clients:
            client.close()

    def stop(self) -> None:
        self._server.close()
        self.drop()
        shutil.rmtree(self._dir, ignore_errors=True)

    def _accept(self) -> None:
        while True:
            try:
                client, _ = self._server.accept()
            except OSError:
                return
            with self._lock:
                self.connections += 1
                self._clients.append(client)
            threading.Thread(target=self._serve, args=(client,), daemon=True).start()

    def _serve(self, client: socket.socket) -> None:
        try:
            while True:
                head = _receive(client, REQUEST.size)
                if head is None:
                    return
                netfn, lun, cmd, _target, length, _ = REQUEST.unpack(head)
                data = _receive(client, length) if length else b""
                if (netfn, cmd) == BYE or data is None:
                    return
                if (netfn, cmd) == (NETFN_DCGRP, GET_POWER_READING) and data[:1] == bytes([DCMI_GROUP]):
                    with self._lock:
                        self.readings += 1
                        watts = self.watts
                    # group id, current/min/max/average watts, timestamp, sampling period (ms), state (activated)
                    body = struct.pack("<BHHHHIIB", DCMI_GROUP, watts, watts, watts, watts, 1_700_000_000, 1000, 0x40)
                    client.sendall(RESPONSE.pack(netfn | 1, cmd, 0, lun, 0, len(body), 0) + body)
                else:
                    client.sendall(RESPONSE.pack(netfn | 1, cmd, 0, lun, INVALID_COMMAND, 0, 0))
        except OSError:
            return
        finally:
            client.close()


def _receive(client: socket.socket, size: int) -> bytes | None:
    data = b""
    while len(data) < size:
        chunk = client.recv(size - len(data))
        if not chunk:
            return None
        data += chunk
    return data

"""A TCP relay for tests that must see what goes over the wire (tcpdump is not installed here): it listens on a
free port of 127.0.0.1, passes every connection on to one address, and keeps each connection's bytes, both ways.
A client pointed at the relay talks to the real server; the test then reads what the client sent."""

from __future__ import annotations

import socket
import threading


class Relay:
    def __init__(self, host: str, port: int):
        self.upstream = (host, port)
        self._server = socket.create_server(("127.0.0.1", 0))
        self._server.settimeout(0.2)  # the accept loop looks at _stop this often
        self.port = self._server.getsockname()[1]
        self.connections: list[tuple[bytearray, bytearray]] = []  # (client to server, server to client) each
        self._sockets: list[socket.socket] = []
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._threads = [threading.Thread(target=self._accept, daemon=True)]
        self._threads[0].start()

    def __enter__(self) -> Relay:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def sent(self) -> bytes:
        """Every byte the clients sent, all connections together."""
        with self._lock:
            return b"".join(bytes(sent) for sent, _ in self.connections)

    def first_bytes(self) -> list[int]:
        """The first byte each connection's client sent (a TLS record starts with 0x16, a handshake)."""
        with self._lock:
            return [sent[0] for sent, _ in self.connections if sent]

    def _accept(self) -> None:
        while not self._stop.is_set():
            try:
                client, _ = self._server.accept()
            except TimeoutError:
                continue
            except OSError:
                return
            client.settimeout(None)
            try:
                server = socket.create_connection(self.upstream, timeout=10)
            except OSError:
                client.close()
                continue
            server.settimeout(None)
            sent, received = bytearray(), bytearray()
            with self._lock:
                self.connections.append((sent, received))
                self._sockets += [client, server]
            for source, sink, kept in ((client, server, sent), (server, client, received)):
                thread = threading.Thread(target=self._pump, args=(source, sink, kept), daemon=True)
                self._threads.append(thread)
                thread.start()

    def _pump(self, source: socket.socket, sink: socket.socket, kept: bytearray) -> None:
        try:
            while data := source.recv(65536):
                with self._lock:
                    kept += data
                sink.sendall(data)
        except OSError:
            pass
        finally:
            try:
                sink.shutdown(socket.SHUT_WR)
            except OSError:
                pass

    def close(self) -> None:
        self._stop.set()
        self._server.close()
        with self._lock:
            for sock in self._sockets:
                try:
                    sock.shutdown(socket.SHUT_RDWR)  # wakes a pump blocked in recv (close alone does not)
                except OSError:
                    pass
                sock.close()
        for thread in self._threads:
            thread.join(timeout=5)

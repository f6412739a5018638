"""Ports for the services storbench starts: each handed out once per process, whatever the kernel picks."""

from __future__ import annotations

from storbench.services import ports


class Kernel:
    """socket.socket standing in for the kernel's port-0 binds, which pick the ports in ``picks`` in turn."""

    def __init__(self, picks):
        self.picks = iter(picks)

    def __call__(self):
        return self

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False

    def bind(self, address):
        self.port = next(self.picks)

    def getsockname(self):
        return ("127.0.0.1", self.port)


def test_a_port_the_kernel_picks_twice_is_handed_out_once(monkeypatch):
    # ci34: the kernel picked a ResourceManager's tracker port again for a NodeManager's shuffle handler
    monkeypatch.setattr(ports, "_given", set())
    monkeypatch.setattr(ports.socket, "socket", Kernel([41001, 41002, 41001, 41002, 41003]))
    assert ports.free_ports(3) == [41001, 41002, 41003]


def test_ports_from_the_kernel_are_free_and_distinct():
    taken = ports.free_ports(20)
    assert len(set(taken)) == 20 and all(1024 <= port <= 65535 for port in taken)

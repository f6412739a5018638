"""Two lab clusters made at once (two homes) pick their /24 at random: the bridge's address is the claim, checked
once made, and given back when another interface holds one in the same /24. The `ip` calls are played by a fake
machine (the race cannot be timed on a real one); the real bridge is made in tests/lab_cluster/test_lab_cluster.py."""

import ipaddress
import random

import pytest

from storbench.lab import hosts
from storbench.lab.commands import LabError


class Machine:
    """Interfaces and their IPv4 addresses, answering the `ip` calls hosts.claim_subnet makes."""

    def __init__(self, **held: str):
        self.addresses = {name: [address] for name, address in held.items()}
        self.racer: tuple[str, str] | None = None  # (interface, address) added between our look and our claim

    def run(self, *argv: str, input_text: str | None = None) -> str:
        if argv[:4] == ("ip", "-4", "-o", "addr"):
            return "".join(
                f"{i}: {name}    inet {a} brd x scope global {name}\n"
                for i, (name, held) in enumerate(self.addresses.items(), 1)
                for a in held
            )
        if argv[:2] == ("ip", "-4"):  # routes
            return ""
        verb, address, device = argv[2], argv[3], argv[5]
        if verb == "add":
            if self.racer:
                other, taken = self.racer
                self.addresses.setdefault(other, []).append(taken)
                self.racer = None
            self.addresses.setdefault(device, []).append(address)
        else:
            self.addresses[device].remove(address)
        return ""


def first_pick(seed: int) -> ipaddress.IPv4Network:
    candidates = list(hosts.POOL.subnets(new_prefix=24))[1:-1]
    random.Random(seed).shuffle(candidates)
    return candidates[0]


def test_a_subnet_another_lab_claims_at_the_same_moment_is_given_back_for_another(monkeypatch):
    machine = Machine(eth0="192.168.1.5/24")
    taken = first_pick(7)
    machine.racer = ("sbr-beef", f"{taken.network_address + 1}/24")  # the other lab adds its bridge address first
    monkeypatch.setattr(hosts, "run", machine.run)
    subnet = hosts.claim_subnet("sbr-cafe", random.Random(7))
    assert subnet != taken
    assert machine.addresses["sbr-cafe"] == [f"{subnet.network_address + 1}/24"]  # ours given back, the new one held
    assert machine.addresses["sbr-beef"] == [f"{taken.network_address + 1}/24"]


def test_a_free_subnet_is_claimed_at_once_and_a_pool_that_stays_taken_is_one_line(monkeypatch):
    machine = Machine()
    monkeypatch.setattr(hosts, "run", machine.run)
    assert hosts.claim_subnet("sbr-cafe", random.Random(3)) == first_pick(3)

    class Crowded(Machine):  # another interface takes every /24 we add, at the moment we add it
        def run(self, *argv, input_text=None):
            if argv[2:3] == ("add",):
                self.racer = ("other", argv[3])
            return super().run(*argv, input_text=input_text)

    crowded = Crowded()
    monkeypatch.setattr(hosts, "run", crowded.run)
    with pytest.raises(LabError, match=r"^no /24 in 10\.213\.0\.0/16 stayed free .* in 8 tries$"):
        hosts.claim_subnet("sbr-cafe", random.Random(3))
    assert not crowded.addresses.get("sbr-cafe")  # nothing of ours left on the bridge

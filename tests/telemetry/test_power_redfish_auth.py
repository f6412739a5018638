"""Issue 25, Redfish: Basic auth never over plain http unless asked (--power-insecure), and the Authorization
header only ever to the BMC URL's own scheme, host and port: not on a redirect nor an @odata.id link to
another host (a second BMC on 127.0.0.2 stands for it), still on a redirect within the BMC."""

from __future__ import annotations

import pytest

from storbench.errors import InputError
from storbench.telemetry.power import open_power
from tests.fake_bmc import FakeBmc, basic, chassis_routes

PASSWORD = "CANARY25redfish"
AUTH = basic("admin", PASSWORD)


@pytest.fixture(autouse=True)
def _password(monkeypatch):
    monkeypatch.setenv("STORBENCH_BMC_PASSWORD", PASSWORD)


def _open(spec: str, insecure: bool = False):
    return open_power(spec, "--power", 0.2, local=True, has_rapl=False, snapshots=list, insecure=insecure)


def test_basic_auth_over_plain_http_is_refused_unless_asked():
    with FakeBmc(auth=AUTH) as bmc:
        with pytest.raises(InputError) as refused:
            _open(f"redfish:{bmc.url},user=admin")
        assert str(refused.value) == (
            f"--power redfish: {bmc.url} is plain http: Basic auth would send the password "
            f"in clear text; use https://, or pass --power-insecure to send it anyway"
        )
        assert bmc.seen == []  # refused before anything was sent
        assert _open(f"redfish:{bmc.url},user=admin", insecure=True).sampler.source.read().watts == 250.0
        assert _open(f"redfish:{bmc.url},user=admin,insecure").sampler.source.read().watts == 250.0
        assert {header for _, header in bmc.seen} == {AUTH}


def test_plain_http_without_credentials_is_fine(monkeypatch):
    monkeypatch.delenv("STORBENCH_BMC_PASSWORD")
    with FakeBmc() as open_bmc:  # nothing to protect
        assert _open(f"redfish:{open_bmc.url}").sampler.source.read().watts == 250.0


def test_a_redirect_to_another_host_gets_no_credentials_one_within_the_bmc_does():
    with FakeBmc(host="127.0.0.2") as other, FakeBmc(auth=AUTH) as bmc:
        other.routes["/elsewhere/Power"] = chassis_routes(111.0)["/redfish/v1/Chassis/1/Power"]
        bmc.routes["/redfish/v1/Chassis/1/Power"] = ("redirect", f"{bmc.url}/moved/Power")  # same origin
        bmc.routes["/moved/Power"] = chassis_routes(222.0)["/redfish/v1/Chassis/1/Power"]
        source = _open(f"redfish:{bmc.url},user=admin", insecure=True).sampler.source
        assert source.read().watts == 222.0 and ("/moved/Power", AUTH) in bmc.seen
        bmc.routes["/moved/Power"] = ("redirect", f"{other.url}/elsewhere/Power")  # now off to another host
        assert source.read().watts == 111.0  # followed, without the header
        assert other.seen == [("/elsewhere/Power", None)]
        # the same host name with another port is another origin too
        with FakeBmc() as same_host_other_port:
            same_host_other_port.routes["/p"] = chassis_routes(5.0)["/redfish/v1/Chassis/1/Power"]
            bmc.routes["/moved/Power"] = ("redirect", f"{same_host_other_port.url}/p")
            assert source.read().watts == 5.0 and same_host_other_port.seen == [("/p", None)]


def test_an_odata_link_to_another_host_gets_no_credentials():
    with FakeBmc(host="127.0.0.2") as other, FakeBmc(auth=AUTH) as bmc:
        other.routes["/redfish/v1/Chassis/1/Power"] = chassis_routes(99.0)["/redfish/v1/Chassis/1/Power"]
        bmc.routes["/redfish/v1/Chassis/1"] = {"Power": {"@odata.id": f"{other.url}/redfish/v1/Chassis/1/Power"}}
        power = _open(f"redfish:{bmc.url},user=admin", insecure=True)
        assert power.sampler.source.read().watts == 99.0
        assert other.seen and all(header is None for _, header in other.seen)
        assert all(header == AUTH for _, header in bmc.seen)

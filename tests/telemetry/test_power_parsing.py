"""Power sources' parsing against captured and tool-layout outputs, and the integration into joules."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from storbench.errors import InputError
from storbench.telemetry.power import open_power
from storbench.telemetry.power.base import PowerError, Reading
from storbench.telemetry.power.command import parse_watts
from storbench.telemetry.power.ipmi import parse_dcmi
from storbench.telemetry.power.sampler import integrate, power_window
from storbench.telemetry.procfs import EnergyMeter

DATA = Path(__file__).resolve().parents[1] / "data" / "power"


def _powercap(root: Path, capture: str) -> None:
    """A sysfs tree from a ``grep . /sys/class/powercap/...`` capture (rewritten in place for the next one)."""
    for line in (DATA / capture).read_text().splitlines():
        path, value = line.rsplit(":", 1)  # zone names hold ':' too: the value is after the last one
        target = root / path.lstrip("/").removeprefix("sys/")
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(value + "\n")


def test_rapl_packages_summed_and_wraparound_undone(tmp_path):
    _powercap(tmp_path, "powercap-linux-6.1-rapl-before.txt")
    meter = EnergyMeter(str(tmp_path))
    assert meter.zone_names == ["intel-rapl:0:package-0", "intel-rapl:1:package-1"]  # no core/dram sub-zones
    assert meter.read() == 0
    _powercap(tmp_path, "powercap-linux-6.1-rapl-after.txt")
    # package 0 wrapped: 1,671,150 + (262,143,328,850 - 262,140,000,000) = 5 J; package 1: 4 J
    assert meter.read() == 9_000_000


def test_rapl_dram_zone_is_its_own_scope(tmp_path):
    _powercap(tmp_path, "powercap-linux-6.1-rapl-before.txt")
    source = open_power("rapl:dram", "--power", 1.0, local=True, has_rapl=True, snapshots=list, sys_root=str(tmp_path))
    assert source.info["scope"] == "dram" and source.info["zones"] == ["intel-rapl:0:1:dram", "intel-rapl:1:1:dram"]
    rapl = source.sampler.source
    first = rapl.read().joules
    _powercap(tmp_path, "powercap-linux-6.1-rapl-after.txt")
    assert rapl.read().joules - first == pytest.approx(3.0)  # 2 J across dram 0's wrap + 1 J


def test_rapl_without_counters_is_refused_in_one_line(tmp_path):
    with pytest.raises(InputError, match=r"^--power rapl: no readable RAPL dram counters"):
        open_power("rapl:dram", "--power", 1.0, local=True, has_rapl=False, snapshots=list, sys_root=str(tmp_path))
    with pytest.raises(InputError, match=r"^--power rapl: this node has no RAPL counters"):
        open_power("rapl", "--power", 1.0, local=True, has_rapl=False, snapshots=list)


def test_ipmitool_dcmi_reading_parsed():
    assert parse_dcmi((DATA / "ipmitool-1.8.19-dcmi-power-reading.txt").read_text()) == 232.0


def test_ipmitool_deactivated_reading_is_no_reading():
    with pytest.raises(PowerError, match="deactivated"):
        parse_dcmi((DATA / "ipmitool-1.8.19-dcmi-power-reading-deactivated.txt").read_text())


@pytest.mark.real
@pytest.mark.skipif(shutil.which("ipmitool") is None, reason="Debian's ipmitool is not installed")
def test_real_ipmitool_without_a_bmc_is_one_line():
    """The real tool, as captured in the fixture: the message is its first line."""
    expected = (DATA / "ipmitool-1.8.19-dcmi-no-device.stderr").read_text().strip()
    with pytest.raises(InputError) as error:
        open_power("ipmi", "nodes.yaml: nodes[0].power", 1.0, local=True, has_rapl=False, snapshots=list)
    assert str(error.value) == f"nodes.yaml: nodes[0].power ipmi: ipmitool exited 1: {expected}"


FAKE_IPMITOOL = """#!/bin/sh
# records what it was given: its arguments, the -f file's mode and content, whether the password is in its environment;
# then answers like ipmitool's shell: a reading per 'dcmi power reading', its arguments per 'echo'
log="$(dirname "$0")/calls"
echo "argv: $*" >> "$log"
prev=""
for arg in "$@"; do
    [ "$prev" = "-f" ] && echo "file: $(stat -c %a "$arg") $(cat "$arg") $arg" >> "$log"
    prev="$arg"
done
env | grep -q s3cr3t-canary && echo "environ: canary" >> "$log"
while read -r line; do
    echo "ipmitool> $line"
    case "$line" in
        "dcmi power reading") echo "    Instantaneous power reading:                   231 Watts" ;;
        "echo "*) echo "${line#echo } " ;;
    esac
done
"""


@pytest.mark.real
def test_ipmi_password_goes_in_a_private_file_never_argv_or_environment(monkeypatch, tmp_path):
    """Through ipmitool's -f: a 0600 file in a private directory, written when the session starts and removed once
    it answered (the session goes on); the password_env variable is taken out of storbench's environment (no child
    inherits it)."""
    import os

    from storbench.telemetry.power import ALLOWED
    from storbench.telemetry.power.base import parse_spec
    from storbench.telemetry.power.ipmi import IpmiPower

    (tmp_path / "ipmitool").write_text(FAKE_IPMITOOL)
    (tmp_path / "ipmitool").chmod(0o755)
    monkeypatch.setenv("PATH", f"{tmp_path}:{os.environ['PATH']}")
    monkeypatch.setenv("BMC_PW", "s3cr3t-canary")
    monkeypatch.setenv("IPMI_PASSWORD", "")  # set or not, ipmitool's own variable is never used
    source = IpmiPower(parse_spec("ipmi:10.0.0.9,user=admin,password_env=BMC_PW", "--power", ALLOWED))
    assert "BMC_PW" not in os.environ
    assert [source.read().watts, source.read().watts] == [231.0, 231.0]
    calls = (tmp_path / "calls").read_text().splitlines()
    argv = [line for line in calls if line.startswith("argv: ")]
    files = [line.split() for line in calls if line.startswith("file: ")]
    assert len(argv) == 1 and "s3cr3t-canary" not in argv[0] and " -E " not in argv[0]  # one session, two readings
    assert argv[0].startswith("argv: -I lanplus -H 10.0.0.9 -U admin -f /") and argv[0].endswith(" shell")
    assert [(mode, secret) for _, mode, secret, _ in files] == [("600", "s3cr3t-canary")]
    path = Path(files[0][-1])
    assert source._shell.process.poll() is None and not path.exists() and not path.parent.exists()
    assert not any(line.startswith("environ:") for line in calls)
    assert "s3cr3t-canary" not in repr(source.describe())
    source.close()
    # a second node naming the same variable still finds the password
    again = IpmiPower(parse_spec("ipmi:10.0.0.10,user=admin,password_env=BMC_PW", "--power", ALLOWED))
    assert again.read().watts == 231.0
    again.close()


@pytest.mark.parametrize(
    "text, watts", [("231.5\n", 231.5), ("power: 97 W", 97.0), ("1.2e2", 120.0), ("no reading", None)]
)
def test_command_watts(text, watts):
    assert parse_watts(text) == watts


def test_trapezoid_over_real_timestamps():
    points = integrate([(10.0, Reading(watts=100)), (11.0, Reading(watts=200)), (13.0, Reading(watts=200))])
    assert [p.joules for p in points] == [0.0, 150.0, 550.0]
    window = power_window(points, 10.5, 12.0)  # joules interpolated between readings: 350 - 75
    assert window["energy_j"] == pytest.approx(275.0)
    assert window["avg_power_w"] == pytest.approx(275.0 / 1.5)
    assert window["max_power_w"] == 200
    assert power_window(points, 9.0, 12.0)["energy_j"] is None  # not covered: n/a, never extrapolated


def test_counter_readings_give_interval_watts():
    points = integrate([(0.0, Reading(joules=1000.0)), (2.0, Reading(joules=1100.0)), (3.0, Reading(joules=1250.0))])
    assert [(p.watts, p.joules) for p in points] == [(None, 0.0), (50.0, 100.0), (150.0, 250.0)]


@pytest.mark.parametrize(
    "spec, message",
    [
        ("bogus:1", "--power: unknown power source 'bogus'; allowed: rapl, ipmi, redfish, command"),
        ("command:sh -c 'echo hello'", "--power command: sh printed no number of watts: 'hello'"),
        ("redfish:http://u:p@127.0.0.1:1", "--power redfish: credentials in the URL are not accepted"),
        ("redfish:http://127.0.0.1:1,password=x", "--power redfish: a password is never given in the spec"),
        ("redfish:http://127.0.0.1:1,colour=red", "--power redfish: unknown key 'colour'"),
        (
            "command:scope=kitchen,echo 1",
            "--power command: scope 'kitchen'; allowed: cpu-package, dram, node-psu, wall",
        ),
    ],
)
def test_bad_specs_are_one_line(spec, message):
    with pytest.raises(InputError) as error:
        open_power(spec, "--power", 1.0, local=True, has_rapl=False, snapshots=list)
    assert str(error.value).startswith(message) and "\n" not in str(error.value)


def test_no_source_says_why():
    assert open_power(None, "--power", 1.0, local=True, has_rapl=False, snapshots=list).info == {
        "source": "none",
        "why": "no RAPL counters (/sys/class/powercap), no --power",
    }

"""The raw-device guard on the lab guest's own drives, as root, every time the lab runs (issue 38 item 7): a
target re-pointed to another device after the check and a device that gained a signature after the check are
refused before fio writes, and a device holding ext4 is refused by `storbench run` even with
--allow-device-overwrite. The cases run in one Python process in the guest (tests/lab/device_guard.py; each
start costs seconds under TCG); each test asserts its own. The same checks on fake probe answers:
tests/targets/test_device.py.
"""

from __future__ import annotations

import json
import os
import sys

import pytest

from tests.lab.guest import ROOT

pytestmark = pytest.mark.lab

CASES = ROOT / "tests" / "lab" / "device_guard.py"
DRIVES = ("guard1", "guard2")  # two small blank drives no other lab test uses (tests/lab/guest.py)


@pytest.fixture(scope="module")
def guard(lab) -> dict:
    """Every case's findings, from one run of device_guard.py on the guard drives."""
    first, second = (lab.device(serial) for serial in DRIVES)
    out = lab.check(f"cd /tmp && {sys.executable} {CASES} {first} {second}", 300)
    return {"first": first, "second": second, **json.loads(out.strip().splitlines()[-1])}


def test_a_device_swapped_after_the_check_is_refused_before_fio_writes(guard):
    found = guard["swapped"]
    checked, now = found["checked"], found["swapped_to"]
    assert found["refused"] == {
        "type": "TargetError",
        "line": (
            f"{found['link']} now resolves to {guard['second']} ({os.major(now)}:{os.minor(now)}), not the device "
            f"{os.major(checked)}:{os.minor(checked)} checked before; refusing to overwrite it"
        ),
    }, found
    assert found["second_unchanged"]  # fio never wrote the device swapped in


def test_a_device_that_gained_a_signature_is_refused_before_fio_writes(guard):
    found = guard["gained"]
    assert found["refused"] == {
        "type": "InputError",
        "line": f"{guard['second']} has an ext4 signature; refusing to overwrite it",
    }, found
    assert found["unchanged"]  # fio never wrote it


def test_a_device_holding_ext4_is_refused_even_with_the_flag(guard):
    found = guard["ext4"]
    assert found["code"] == 2, found
    assert found["stderr"].strip().splitlines() == [
        f"storbench: error: {guard['first']} has an ext4 signature; refusing to overwrite it"
    ], found
    assert found["runs"] == []  # refused before a run was recorded
    assert found["unchanged"]  # untouched

from pathlib import Path

import pytest

DATA = Path(__file__).resolve().parents[1] / "data" / "telemetry"


@pytest.fixture
def data() -> Path:
    return DATA


@pytest.fixture(autouse=True)
def _forget_taken_passwords():
    """A power source takes its password variable out of the environment and remembers it for the process
    (several nodes may name one variable): each test starts and ends without a remembered one."""
    from storbench.telemetry.power import base

    base._TAKEN.clear()
    yield
    base._TAKEN.clear()

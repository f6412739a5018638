from pathlib import Path

import pytest

DATA = Path(__file__).resolve().parents[1] / "data" / "telemetry"


@pytest.fixture
def data() -> Path:
    return DATA

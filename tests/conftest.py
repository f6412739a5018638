import os
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))
os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")


@pytest.fixture
def store(tmp_path):
    from storbench.results.store import ResultStore

    return ResultStore(tmp_path / "home")

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


# One real HDFS (MiniDFSCluster, 2 DataNodes on 127.0.0.1) for every test that needs it, stopped after.
@pytest.fixture(scope="session")
def hdfs(tmp_path_factory):
    from storbench import api
    from storbench.results.store import ResultStore

    home = tmp_path_factory.mktemp("hdfs-home")
    store = ResultStore(home)
    state = api.service_up("hdfs", store, datanodes=2)
    try:
        yield home, state
    finally:
        assert api.service_down("hdfs", store)
        assert api.service_status("hdfs", store) is None

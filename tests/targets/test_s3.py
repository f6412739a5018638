"""s3:// targets without a server: parsing, where endpoint and credentials come from, what is recorded.

Claim, release and delete against a real S3 server are in tests/workloads/objects.
"""

import socket

import pytest

from storbench.errors import InputError, TargetError
from storbench.targets import TargetOptions, parse_target
from storbench.targets import s3 as s3_module
from storbench.targets.s3 import S3Target, resolve_endpoint

ENDPOINT = "http://127.0.0.1:9000"
OURS = {
    "s3_endpoint": ENDPOINT,
    "server": "seaweedfs",
    "access_key": "svc-key",
    "secret_key": "svc-secret",
    "data_dir": "/srv/s3",
}


@pytest.fixture(autouse=True)
def clean_environment(monkeypatch, tmp_path):
    for name in (
        "STORBENCH_S3_ENDPOINT",
        "AWS_ENDPOINT_URL",
        "AWS_ACCESS_KEY_ID",
        "AWS_SECRET_ACCESS_KEY",
        "AWS_PROFILE",
        "AWS_REGION",
        "AWS_DEFAULT_REGION",
    ):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("AWS_SHARED_CREDENTIALS_FILE", str(tmp_path / "no-credentials"))


def test_parse_bucket_and_prefix(monkeypatch):
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", "key")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "the-secret")
    target = parse_target("s3://bench/a/b/", TargetOptions(endpoint=ENDPOINT + "/"))
    assert isinstance(target, S3Target)
    assert (target.uri, target.bucket, target.base) == ("s3://bench/a/b", "bench", "a/b")
    target.run_id = "r1"
    assert target.run_prefix() == "a/b/storbench-r1/"
    assert parse_target("s3://bench", TargetOptions(endpoint=ENDPOINT)).uri == "s3://bench"
    for text in ("s3:///x", "s3://key:secret@bench/x", "s3://host:9000/x"):
        with pytest.raises(InputError, match=r"an s3:// target is s3://BUCKET/PREFIX"):
            parse_target(text, TargetOptions(endpoint=ENDPOINT))


def test_the_manifest_records_the_endpoint_and_never_the_secret(monkeypatch):
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", "key")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "the-secret")
    monkeypatch.setenv("STORBENCH_S3_SERVER", "generic")  # declared: nothing is sniffed
    target = parse_target("s3://bench/x", TargetOptions(endpoint=ENDPOINT))
    assert isinstance(target, S3Target)
    assert target.manifest_config() == {
        "endpoint": ENDPOINT,
        "endpoint_how": "--endpoint; credentials from the environment",
        "server": "generic",
        "server_how": "$STORBENCH_S3_SERVER",
    }
    assert target.facts().server is None
    assert "the-secret" not in repr(target.endpoint)
    # held for signing in exactly one field, the one repr leaves out
    assert [name for name, value in vars(target.endpoint).items() if value == "the-secret"] == ["secret_key"]
    assert target.local_path() is None  # not our own server: its disks are elsewhere


def test_endpoint_and_credentials_order(tmp_path, monkeypatch):
    with pytest.raises(InputError, match=r"^an s3:// target needs an endpoint: pass --endpoint"):
        resolve_endpoint(None, tmp_path)
    with pytest.raises(InputError, match=r"^--endpoint 'ftp://x': expected http://HOST:PORT"):
        resolve_endpoint("ftp://x", None)
    with pytest.raises(InputError, match=rf"^no credentials for {ENDPOINT}: set AWS_ACCESS_KEY_ID"):
        resolve_endpoint(ENDPOINT, None)
    monkeypatch.setattr(s3_module, "service_status", lambda name, home: OURS)
    ours = resolve_endpoint(None, tmp_path)
    assert (ours.url, ours.access_key, ours.how) == (
        ENDPOINT,
        "svc-key",
        "storbench s3 service (seaweedfs); credentials of the storbench s3 service",
    )
    monkeypatch.setenv("AWS_ENDPOINT_URL", "https://s3.example.org/")
    profile = tmp_path / "credentials"
    profile.write_text("[default]\naws_access_key_id = pk\naws_secret_access_key = ps\n")
    monkeypatch.setenv("AWS_SHARED_CREDENTIALS_FILE", str(profile))
    found = resolve_endpoint(None, tmp_path)
    assert (found.url, found.access_key, found.service) == ("https://s3.example.org", "pk", None)
    assert found.how == "environment; credentials from the AWS profile"


def test_our_own_server_data_directory_is_local(tmp_path, monkeypatch):
    monkeypatch.setattr(s3_module, "service_status", lambda name, home: OURS)
    target = parse_target("s3://storbench/", TargetOptions(home=tmp_path))
    assert str(target.local_path()) == "/srv/s3"


def test_unreachable_endpoint_and_foreign_deletes_are_refused(monkeypatch):
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", "key")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "the-secret")
    with socket.socket() as free:
        free.bind(("127.0.0.1", 0))
        port = free.getsockname()[1]
    target = parse_target("s3://bench/x", TargetOptions(endpoint=f"http://127.0.0.1:{port}"))
    with pytest.raises(TargetError, match=rf"^target s3://bench/x: cannot connect to http://127.0.0.1:{port}"):
        target.precheck(0)
    for uri in ("s3://other-bucket/x/storbench-r1/objects", "s3://bench/"):
        with pytest.raises(TargetError, match="it is not below this run's root"):
            target.delete(uri)


def test_the_server_kind_is_declared_or_recognised_by_rgw_request_ids(monkeypatch):
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", "key")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "the-secret")
    monkeypatch.setenv("STORBENCH_S3_SERVER", "minio")
    with pytest.raises(InputError, match=r"STORBENCH_S3_SERVER='minio': allowed: rgw, generic"):
        parse_target("s3://bench/x", TargetOptions(endpoint=ENDPOINT))
    monkeypatch.setenv("STORBENCH_S3_SERVER", "rgw")
    target = parse_target("s3://bench/x", TargetOptions(endpoint=ENDPOINT))
    assert target.facts().server == "rgw"
    # Ceph 16.2's answer to a HEAD (the form is RGW's since luminous); SeaweedFS's and AWS's are not it
    assert s3_module.RGW_REQUEST_ID.fullmatch("tx000001ee461564bd3c7d7-006b076c90-102e-default")
    for other in ("18F2A4D4B1C3E5A7", "4442587FB7D0A2F9", "1732579200123456789"):
        assert not s3_module.RGW_REQUEST_ID.fullmatch(other)

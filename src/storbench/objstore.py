"""``s3://bucket/prefix`` targets: the endpoint, the credentials and the run-owned prefix.

A run claims ``<prefix>/storbench-<run-id>/`` in the bucket by writing a marker object
there (refusing when anything already exists under it) and cleanup deletes that prefix
only when the marker names this run; every other object in the bucket is left alone.

Endpoint, in order: ``--endpoint``, ``$STORBENCH_S3_ENDPOINT`` / ``$AWS_ENDPOINT_URL``,
then the running ``storbench services up s3``. Credentials, in order:
``$AWS_ACCESS_KEY_ID``/``$AWS_SECRET_ACCESS_KEY``, the storbench service's own when the
endpoint is that service, then ``~/.aws/credentials`` (``$AWS_PROFILE`` or ``default``).
They live in memory only: never in a manifest, a result or a report.
"""

from __future__ import annotations

import configparser
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import urlparse

from storbench.errors import InputError, TargetError
from storbench.targets import MARKER, Target


@dataclass
class S3Endpoint:
    url: str
    access_key: str = field(repr=False)
    secret_key: str = field(repr=False)
    region: str = "us-east-1"
    how: str = ""  # where endpoint and credentials came from (recorded; no secrets)
    service: dict[str, Any] | None = field(default=None, repr=False)  # our service's state, when it is ours


def _profile_credentials() -> tuple[str, str] | None:
    path = Path(os.environ.get("AWS_SHARED_CREDENTIALS_FILE", Path.home() / ".aws" / "credentials"))
    if not path.is_file():
        return None
    parser = configparser.ConfigParser()
    try:
        parser.read(path)
    except configparser.Error:
        return None
    section = os.environ.get("AWS_PROFILE", "default")
    if section not in parser:
        return None
    key, secret = parser[section].get("aws_access_key_id"), parser[section].get("aws_secret_access_key")
    return (key, secret) if key and secret else None


def resolve_endpoint(option: str | None, home: Path) -> S3Endpoint:
    from storbench.services import service_status

    service = service_status("s3", home)
    url = option or os.environ.get("STORBENCH_S3_ENDPOINT") or os.environ.get("AWS_ENDPOINT_URL")
    how = "--endpoint" if option else ("environment" if url else "")
    if not url:
        if not service:
            raise InputError("an s3:// target needs an endpoint: pass --endpoint http://HOST:PORT, set "
                             "AWS_ENDPOINT_URL, or start one with `storbench services up s3`")
        url, how = service["s3_endpoint"], f"storbench s3 service ({service.get('server')})"
    parsed = urlparse(url)
    if parsed.scheme not in ("http", "https") or not parsed.hostname:
        raise InputError(f"--endpoint {url!r}: expected http://HOST:PORT or https://HOST:PORT")
    url = f"{parsed.scheme}://{parsed.netloc}"
    ours = service if service and service["s3_endpoint"].rstrip("/") == url else None
    region = os.environ.get("AWS_REGION") or os.environ.get("AWS_DEFAULT_REGION") or "us-east-1"
    key, secret = os.environ.get("AWS_ACCESS_KEY_ID"), os.environ.get("AWS_SECRET_ACCESS_KEY")
    if key and secret:
        return S3Endpoint(url, key, secret, region, f"{how}; credentials from the environment", ours)
    if ours:
        return S3Endpoint(url, ours["access_key"], ours["secret_key"], region,
                          f"{how}; credentials of the storbench s3 service", ours)
    profile = _profile_credentials()
    if profile:
        return S3Endpoint(url, profile[0], profile[1], region, f"{how}; credentials from the AWS profile", None)
    raise InputError(f"no credentials for {url}: set AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY "
                     f"(or an AWS profile in ~/.aws/credentials)")


class S3Storage:
    """The run-owned prefix of an ``s3://`` target, through storbench's small S3 client."""

    def __init__(self, target: Target, endpoint: S3Endpoint):
        from storbench.s3client import S3Client

        parsed = urlparse(target.uri)
        self.target = target
        self.endpoint = endpoint
        self.bucket = parsed.netloc
        self.base = parsed.path.strip("/")
        self.client = S3Client(endpoint.url, endpoint.access_key, endpoint.secret_key, endpoint.region, timeout=10)

    def run_prefix(self, run_id: str) -> str:
        """``<prefix>/storbench-<run-id>/`` (with its trailing slash) inside the bucket."""
        return (f"{self.base}/" if self.base else "") + f"storbench-{run_id}/"

    def check(self) -> None:
        """Reachable, credentials accepted, bucket present: one line otherwise."""
        from storbench.s3client import S3Error

        try:
            exists = self.client.bucket_exists(self.bucket)
        except ConnectionRefusedError:
            raise TargetError(f"target {self.target.uri}: cannot connect to {self.endpoint.url} "
                              f"(connection refused); is the S3 server running?") from None
        except OSError as exc:
            raise TargetError(f"target {self.target.uri}: cannot reach {self.endpoint.url} "
                              f"({exc.strerror or exc})") from None
        except S3Error as exc:
            if exc.status in (401, 403):
                raise TargetError(f"target {self.target.uri}: {self.endpoint.url} refused the credentials "
                                  f"({exc.code or exc.status}); check AWS_ACCESS_KEY_ID/AWS_SECRET_ACCESS_KEY") from None
            raise TargetError(f"target {self.target.uri}: {self.endpoint.url} answered {exc}") from None
        if not exists:
            raise TargetError(f"target {self.target.uri}: bucket {self.bucket} does not exist at "
                              f"{self.endpoint.url}; create it first (storbench never creates or deletes buckets "
                              f"it was pointed at; `storbench services up s3` makes a bucket named storbench)")

    def claim(self, run_id: str) -> str:
        prefix = self.run_prefix(run_id)
        if next(iter(self.client.list(self.bucket, prefix)), None) is not None:
            raise TargetError(f"target {self.target.uri}: s3://{self.bucket}/{prefix} already holds objects; "
                              f"refusing to reuse it")
        self.client.put(self.bucket, prefix + MARKER, (run_id + "\n").encode())
        return f"s3://{self.bucket}/{prefix.rstrip('/')}"

    def owned(self, run_id: str) -> bool:
        data = self.client.get(self.bucket, self.run_prefix(run_id) + MARKER)
        return data is not None and data.decode(errors="replace").strip() == run_id

    def release(self, run_id: str) -> bool:
        """Delete everything under the run prefix, if (and only if) its marker names this run."""
        if not self.owned(run_id):
            return False
        self.client.delete_prefix(self.bucket, self.run_prefix(run_id))
        return True

    def delete_under(self, run_id: str, sub: str) -> int:
        """Delete one workload's objects: ``sub`` must lie inside this run's own prefix."""
        prefix = self.run_prefix(run_id) + sub.strip("/") + "/"
        if not sub.strip("/") or not self.owned(run_id):
            raise TargetError(f"refusing to delete s3://{self.bucket}/{prefix}: not inside this run's prefix")
        return self.client.delete_prefix(self.bucket, prefix)

    def size_bytes(self, uri: str) -> int:
        return 0

    def evict(self, uri: str) -> int:
        return 0

"""``s3://bucket/prefix`` targets: the endpoint, the credentials and the run-owned prefix.

A run claims ``<prefix>/storbench-<run-id>/`` in the bucket by writing a marker object
there (refusing when anything already exists under it) and cleanup deletes that prefix
only when the marker names this run; every other object in the bucket is left alone.

Endpoint, in order: ``--endpoint``, ``$STORBENCH_S3_ENDPOINT`` / ``$AWS_ENDPOINT_URL``,
then the running ``storbench services up s3``. Credentials, in order:
``$AWS_ACCESS_KEY_ID``/``$AWS_SECRET_ACCESS_KEY``, the storbench service's own when the
endpoint is that service, then ``~/.aws/credentials`` (``$AWS_PROFILE`` or ``default``).
They live in memory only: never in a manifest, a result or a report.

The server's kind (``server`` in the manifest): ``$STORBENCH_S3_SERVER`` (``rgw``, or ``generic`` to claim
nothing), else ``rgw`` when the endpoint is the RGW of `storbench services up ceph --rgw` or answers with
Ceph RGW's request-id form (``tx`` + 21 hex digits, ``-`` and hex fields, ``-`` its zone group), else unknown.
Engines bind settings to it (S3A on RGW: engines/s3a.py).
"""

from __future__ import annotations

import configparser
import os
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import urlparse

from storbench.errors import InputError, TargetError
from storbench.redaction import redact_url
from storbench.s3client import S3Client, S3Error
from storbench.services import service_status
from storbench.targets.base import GONE, MARKER, OTHER, OURS, Target, TargetFacts, TargetOptions, below_root, register


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


def resolve_endpoint(option: str | None, home: Path | None) -> S3Endpoint:
    service = service_status("s3", home) if home else None
    url = option or os.environ.get("STORBENCH_S3_ENDPOINT") or os.environ.get("AWS_ENDPOINT_URL")
    how = "--endpoint" if option else ("environment" if url else "")
    if not url:
        if not service:
            raise InputError(
                "an s3:// target needs an endpoint: pass --endpoint http://HOST:PORT, set "
                "AWS_ENDPOINT_URL, or start one with `storbench services up s3`"
            )
        url, how = service["s3_endpoint"], f"storbench s3 service ({service.get('server')})"
    parsed = urlparse(url)
    if parsed.scheme not in ("http", "https") or not parsed.hostname:
        raise InputError(f"--endpoint {redact_url(url)!r}: expected http://HOST:PORT or https://HOST:PORT")
    # Without any user:password@ (credentials come from the environment or a profile): this URL is
    # connected to, shown and recorded.
    url = f"{parsed.scheme}://{parsed.netloc.rpartition('@')[2]}"
    ours = service if service and service["s3_endpoint"].rstrip("/") == url else None
    region = os.environ.get("AWS_REGION") or os.environ.get("AWS_DEFAULT_REGION") or "us-east-1"
    key, secret = os.environ.get("AWS_ACCESS_KEY_ID"), os.environ.get("AWS_SECRET_ACCESS_KEY")
    if key and secret:
        return S3Endpoint(url, key, secret, region, f"{how}; credentials from the environment", ours)
    if ours:
        return S3Endpoint(
            url, ours["access_key"], ours["secret_key"], region, f"{how}; credentials of the storbench s3 service", ours
        )
    profile = _profile_credentials()
    if profile:
        return S3Endpoint(url, profile[0], profile[1], region, f"{how}; credentials from the AWS profile", None)
    raise InputError(
        f"no credentials for {url}: set AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY "
        f"(or an AWS profile in ~/.aws/credentials)"
    )


SERVERS = ("rgw", "generic")
# Ceph RGW's x-amz-request-id: tx<21 hex>-<hex: time>-<hex: instance>-<zone group>
RGW_REQUEST_ID = re.compile(r"tx[0-9a-f]{21}-[0-9a-f]+-[0-9a-f]+-\S+")


def declared_server() -> str | None:
    declared = os.environ.get("STORBENCH_S3_SERVER")
    if declared is not None and declared not in SERVERS:
        raise InputError(f"STORBENCH_S3_SERVER={declared!r}: allowed: {', '.join(SERVERS)}")
    return declared


def is_ceph_rgw(url: str, home: Path | None) -> bool:
    """Whether ``url`` is the RGW of storbench's own Ceph service in ``home``."""
    ceph = service_status("ceph", home) if home else None
    return bool(ceph and (ceph.get("s3_endpoint") or "").rstrip("/") == url)


# S3's bucket naming rule (the subset every server accepts).
BUCKET_RE = re.compile(r"[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]")


@register
class S3Target(Target):
    """The run-owned prefix of a bucket, through storbench's small S3 client."""

    scheme = "s3"
    kind = "s3://"
    usage = "s3://bucket/prefix"
    wanted = "an s3://BUCKET/PREFIX target, e.g. s3://storbench/ on `storbench services up s3`"

    def __init__(self, bucket: str, base: str, options: TargetOptions):
        super().__init__(f"s3://{bucket}" + (f"/{base}" if base else ""), options)
        self.bucket = bucket
        self.base = base  # the prefix inside the bucket, without slashes around it
        self.endpoint = resolve_endpoint(options.endpoint, options.home)
        self.client = S3Client(
            self.endpoint.url, self.endpoint.access_key, self.endpoint.secret_key, self.endpoint.region, timeout=10
        )
        self._server = declared_server()
        self._server_how = "$STORBENCH_S3_SERVER" if self._server else ""
        if self._server is None and is_ceph_rgw(self.endpoint.url, options.home):
            self._server, self._server_how = "rgw", "the storbench ceph service's RGW"

    @classmethod
    def parse(cls, text: str, options: TargetOptions) -> Target:
        bucket = urlparse(text).netloc
        if not bucket or "@" in bucket or ":" in bucket:
            raise InputError(
                f"--target {text!r}: an s3:// target is s3://BUCKET/PREFIX (the endpoint comes from "
                f"--endpoint, $AWS_ENDPOINT_URL or the running `storbench services up s3`)"
            )
        if not BUCKET_RE.fullmatch(bucket):
            raise InputError(
                f"--target {text!r}: bucket name {bucket!r} is not allowed; use 3-63 lowercase "
                f"letters, digits, '.' and '-', starting and ending with a letter or digit"
            )
        return cls(bucket, urlparse(text).path.strip("/"), options)

    def run_prefix(self) -> str:
        """``<prefix>/storbench-<run-id>/`` (with its trailing slash) inside the bucket."""
        return (f"{self.base}/" if self.base else "") + f"storbench-{self.run_id}/"

    def precheck(self, need_bytes: int) -> None:
        """Reachable, credentials accepted, bucket present: one line otherwise."""
        try:
            exists = self.client.bucket_exists(self.bucket)
        except ConnectionRefusedError:
            raise TargetError(
                f"target {self.uri}: cannot connect to {self.endpoint.url} "
                f"(connection refused); is the S3 server running?"
            ) from None
        except OSError as exc:
            raise TargetError(f"target {self.uri}: cannot reach {self.endpoint.url} ({exc.strerror or exc})") from None
        except S3Error as exc:
            if exc.status in (401, 403):
                raise TargetError(
                    f"target {self.uri}: {self.endpoint.url} refused the credentials "
                    f"({exc.code or exc.status}); "
                    f"check AWS_ACCESS_KEY_ID/AWS_SECRET_ACCESS_KEY"
                ) from None
            raise TargetError(f"target {self.uri}: {self.endpoint.url} answered {exc}") from None
        if not exists:
            raise TargetError(
                f"target {self.uri}: bucket {self.bucket} does not exist at "
                f"{self.endpoint.url}; create it first (storbench never creates or deletes buckets "
                f"it was pointed at; `storbench services up s3` makes a bucket named storbench)"
            )

    def local_path(self) -> Path | None:
        """Our own S3 server's data directory (or, for Ceph RGW, the OSDs' files) is on this host."""
        service = self.endpoint.service or {}
        where = service.get("data_dir") or service.get("ceph_workdir")
        return Path(where) if where else None

    def claim_root(self) -> str:
        prefix = self.run_prefix()
        if next(iter(self.client.list(self.bucket, prefix)), None) is not None:
            raise TargetError(
                f"target {self.uri}: s3://{self.bucket}/{prefix} already holds objects; refusing to reuse it"
            )
        self.client.put(self.bucket, prefix + MARKER, (self.run_id + "\n").encode())
        return f"s3://{self.bucket}/{prefix.rstrip('/')}"

    def _marked(self, prefix: str, run_id: str | None = None) -> bool:
        """Whether ``prefix`` (ending in /) holds a storbench marker (naming ``run_id``, when given)."""
        data = self.client.get(self.bucket, prefix + MARKER)
        return data is not None and (run_id is None or data.decode(errors="replace").strip() == run_id)

    def root_state(self) -> str:
        if self._marked(self.run_prefix(), self.run_id):
            return OURS
        return OTHER if next(iter(self.client.list(self.bucket, self.run_prefix())), None) is not None else GONE

    def release_root(self) -> bool:
        if not self.run_id or not self._marked(self.run_prefix(), self.run_id):
            return False
        self.client.delete_prefix(self.bucket, self.run_prefix())
        return True

    def server(self) -> str | None:
        """The server's kind (module doc): declared, our Ceph's RGW, or sniffed once from the request id of a
        HEAD of the bucket (unknown when it cannot be reached: precheck says why)."""
        if self._server is None and not self._server_how:
            self._server_how = "not recognised"
            try:
                _, headers, _ = self.client.request("HEAD", self.bucket)
            except (OSError, S3Error):
                return None
            if RGW_REQUEST_ID.fullmatch(headers.get("x-amz-request-id", "")):
                self._server, self._server_how = "rgw", "its x-amz-request-id is Ceph RGW's"
        return None if self._server == "generic" else self._server

    def facts(self) -> TargetFacts:
        """The endpoint and its credentials (an engine passes them on, never records them), and the server."""
        return TargetFacts(
            self.scheme,
            endpoint_url=self.endpoint.url,
            region=self.endpoint.region,
            access_key=self.endpoint.access_key,
            secret_key=self.endpoint.secret_key,
            server=self.server(),
        )

    def size_bytes(self, uri: str) -> int:
        key = urlparse(uri).path.strip("/")
        return sum(size for _, size in self.client.list_sizes(self.bucket, key + "/"))

    def delete(self, uri: str) -> bool:
        """Delete the objects under ``uri`` (a prefix; s3:// or s3a://), only below this run's own prefix, whose
        marker names this run."""
        parsed = urlparse(uri)
        key = parsed.path.lstrip("/")
        if not self.run_id or parsed.netloc != self.bucket or below_root(self.run_prefix(), key) is None:
            raise self.refuse_delete(uri)
        if not self._marked(self.run_prefix(), self.run_id):
            raise self.refuse_delete(uri, f"the run prefix's {MARKER} does not name run {self.run_id}")
        prefix = key.rstrip("/") + "/"
        deleted = self.client.delete_prefix(self.bucket, prefix) > 0
        # A store on a file system (SeaweedFS's filer) keeps emptied directories, each shown as an object DIR/
        # (HEAD 200): S3A would take the path as still there. They go too, deepest first (a DELETE of a missing
        # key is a no-op, as on AWS S3, where no such directories exist).
        for directory in [*self.client.directories(self.bucket, prefix), prefix]:
            self.client.delete(self.bucket, directory)
        return deleted

    def manifest_config(self) -> dict[str, Any]:
        """The endpoint, the server's kind and where each came from; never the credentials."""
        self.server()
        return {
            "endpoint": self.endpoint.url,
            "endpoint_how": self.endpoint.how,
            "server": self._server,
            "server_how": self._server_how,
        }

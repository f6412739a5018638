"""SeaweedFS's internal ports do not bypass its S3 identities (issue 25): the volume and filer HTTP APIs refuse
a request without a JWT signed by this start's keys, the master serves no HTTP API, every gRPC port wants a client
certificate of this start's CA, and nothing of it sits at a predictable /tmp path or on a command line."""

import os
import socket
import ssl
import stat
from pathlib import Path
from urllib.error import HTTPError
from urllib.request import Request, urlopen

import pytest

from storbench.s3client import S3Client, S3Error

pytestmark = pytest.mark.real


def _status(method: str, url: str, body: bytes | None = None) -> int:
    try:
        with urlopen(Request(url, data=body, method=method), timeout=10) as answer:
            return answer.status
    except HTTPError as exc:
        return exc.code


def _grpc_handshake(port: int, cert: tuple[Path, Path] | None) -> bytes:
    """A TLS connection to a gRPC port (with a client certificate or none), then HTTP/2's preface; the server's
    first bytes, or the TLS error it answered with."""
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
    ctx.check_hostname, ctx.verify_mode = False, ssl.CERT_NONE
    ctx.set_alpn_protocols(["h2"])
    if cert:
        ctx.load_cert_chain(*map(str, cert))
    with socket.create_connection(("127.0.0.1", port), timeout=10) as raw, ctx.wrap_socket(raw) as tls:
        tls.sendall(b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n")
        return tls.recv(64)


def test_volume_filer_and_master_ports_refuse_a_client_without_the_keys(s3):
    home, state = s3
    ports = state["ports"]
    client = S3Client(state["s3_endpoint"], state["access_key"], state["secret_key"])
    client.put("storbench", "security/probe", b"through S3")  # the S3 API works with the keys
    assert client.get("storbench", "security/probe") == b"through S3"
    with pytest.raises(S3Error) as refused:
        S3Client(state["s3_endpoint"], state["access_key"], "wrong-secret").put("storbench", "security/x", b"no")
    assert refused.value.status == 403
    volume, filer, master = (f"http://127.0.0.1:{ports[name]}" for name in ("volume", "filer", "master"))
    assert _status("PUT", f"{volume}/1,01637037d6", b"direct write") == 401  # no write JWT from the master
    assert _status("POST", f"{volume}/1,01637037d6", b"direct write") == 401
    assert _status("GET", f"{volume}/1,01637037d6") == 401  # reads want a JWT as well
    assert _status("PUT", f"{filer}/buckets/storbench/security/direct", b"direct write") == 401
    assert _status("GET", f"{filer}/buckets/storbench/security/probe") == 401
    assert _status("GET", f"{filer}/buckets/") == 401
    assert _status("GET", f"{master}/dir/assign") == 404  # -disableHttp: no write tokens handed out
    assert client.get("storbench", "security/direct") is None  # nothing got in
    workdir = Path(state["workdir"])
    cert = (workdir / "tls" / "node.crt", workdir / "tls" / "node.key")
    for name in ("master_grpc", "volume_grpc", "filer_grpc", "s3_grpc"):
        with pytest.raises(ssl.SSLError, match="CERTIFICATE_REQUIRED"):
            _grpc_handshake(ports[name], None)
        assert _grpc_handshake(ports[name], cert)[3:4] == b"\x04"  # a SETTINGS frame: the cert is accepted
    client.delete("storbench", "security/probe")


def test_keys_and_sockets_are_private_and_never_on_a_command_line(s3):
    home, state = s3
    workdir = Path(state["workdir"])
    assert stat.S_IMODE(workdir.stat().st_mode) == 0o700
    private = [
        workdir / "security.toml",
        workdir / "s3-identities.json",
        workdir / "tls" / "node.key",
        workdir / "tls" / "ca.key",
        workdir / "state.json",
    ]
    assert all(stat.S_IMODE(p.stat().st_mode) == 0o600 for p in private), private
    toml = (workdir / "security.toml").read_text()
    keys = [line.split('"')[1] for line in toml.splitlines() if line.startswith("key = ") and "tls/" not in line]
    assert len(keys) == 4 and all(len(k) > 30 for k in keys)
    secrets = [*keys, state["secret_key"], (workdir / "tls" / "node.key").read_text().splitlines()[1]]
    assert sorted(d["kind"] for d in state["daemons"]) == ["filer", "master", "s3", "volume"]
    for daemon in state["daemons"]:
        line = Path(f"/proc/{daemon['pid']}/cmdline").read_bytes().decode()
        environ = Path(f"/proc/{daemon['pid']}/environ").read_bytes().decode(errors="replace")
        assert "weed" in line and not [s for s in secrets if s in line or s in environ], daemon["kind"]
    for name, port in state["ports"].items():  # `weed server`'s fixed gRPC socket names are not used
        assert not os.path.lexists(f"/tmp/seaweedfs-{name.split('_')[0]}-grpc-{port}.sock")
    assert not list(Path("/tmp").glob(f"seaweedfs-*-{state['ports']['s3_grpc']}.sock"))
    assert sorted(p.name for p in Path(state["socket_dir"]).iterdir()) == ["filer.sock", "s3.sock"]

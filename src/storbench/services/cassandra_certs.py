"""The TLS certificate of ``services up cassandra``'s native (CQL) port, made anew at every start.

A client that asks for TLS (``cassandra://...?tls=1&ca=PATH``) checks the nodes against a CA only this
service start made: under ``tls/`` of the service directory (0700) the JDK's ``keytool`` makes a CA key
pair, signs one server certificate for every node's address (127.0.0.x) and ``localhost`` with it, and
throws the CA's private key away; what stays is ``ca.pem`` (the CA certificate, what clients trust) and
``keystore.p12`` (the nodes' key and chain, 0600). keytool takes the keystore password from a 0600 file
(removed after), never from its command line; the nodes read it from their cassandra.yaml (0600), the
only place Cassandra 5.0 reads it from; state.json (0600) keeps it too.

The nodes serve TLS and plain CQL on the same port (``optional: true``), so a loopback client without
TLS (storbench's own start-up checks, a user's cqlsh) still connects; storbench refuses a clear-text
login to any other host (``targets.cassandra_tls``).
"""

from __future__ import annotations

import secrets
import shutil
import subprocess
from pathlib import Path
from typing import Any

from storbench.errors import EngineError
from storbench.services.jvm import java_binary
from storbench.services.process import write_private

DIR = "tls"
VALID_DAYS = 825  # a service lives days at most; 825 days is what TLS clients accept of a server certificate
KEY = ("-keyalg", "EC", "-groupname", "secp256r1")  # small and quick to make; every client here speaks ECDSA


def _keytool() -> str:
    """The keytool of the JDK that runs the nodes (beside its java)."""
    tool = Path(java_binary()).resolve().parent / "keytool"
    found = str(tool) if tool.is_file() else shutil.which("keytool")
    if not found:
        raise EngineError(f"keytool (the JDK's) is not beside {java_binary()}; install a full JDK 17")
    return found


def make(workdir: Path, hosts: list[str]) -> dict[str, Any]:
    """The CA and the nodes' keystore under ``workdir/tls``; the ``tls`` part of the state: ``ca_file`` (what
    a client trusts), ``keystore`` and its ``keystore_password`` (state.json is 0600)."""
    folder = workdir / DIR
    folder.mkdir(mode=0o700)
    password = secrets.token_urlsafe(24)
    password_file = folder / "store.password"
    write_private(password_file, password + "\n")
    ca_store, keystore = folder / "ca.p12", folder / "keystore.p12"
    ca_file, request, signed = folder / "ca.pem", folder / "node.csr", folder / "node.pem"
    tool = _keytool()

    def keytool(store: Path, *args: str, stdin: bytes | None = None) -> bytes:
        argv = [
            tool,
            "-J-XX:TieredStopAtLevel=1",
            *args,
            "-keystore",
            str(store),
            "-storetype",
            "PKCS12",
            "-storepass:file",
            str(password_file),
            "-noprompt",
        ]
        done = subprocess.run(argv, input=stdin, capture_output=True, timeout=120)
        if done.returncode != 0:
            said = (done.stderr or done.stdout).decode(errors="replace").strip().splitlines()
            raise EngineError(
                f"cassandra: keytool {args[0]} failed making the CQL port's certificate: "
                f"{(said or ['no output'])[-1][:300]}"
            )
        return done.stdout

    try:
        keytool(
            ca_store,
            "-genkeypair",
            "-alias",
            "ca",
            *KEY,
            "-dname",
            "CN=storbench cassandra CA",
            "-ext",
            "bc:c",
            "-ext",
            "KU:c=keyCertSign,cRLSign",
            "-validity",
            str(VALID_DAYS),
        )
        keytool(ca_store, "-exportcert", "-rfc", "-alias", "ca", "-file", str(ca_file))
        keytool(keystore, "-genkeypair", "-alias", "node", *KEY, "-dname", "CN=localhost", "-validity", str(VALID_DAYS))
        keytool(keystore, "-certreq", "-alias", "node", "-file", str(request))
        names = ",".join([*(f"ip:{host}" for host in hosts), "dns:localhost"])
        keytool(
            ca_store,
            "-gencert",
            "-alias",
            "ca",
            "-infile",
            str(request),
            "-outfile",
            str(signed),
            "-rfc",
            "-ext",
            f"SAN={names}",
            "-ext",
            "KU:c=digitalSignature",
            "-ext",
            "EKU=serverAuth",
            "-validity",
            str(VALID_DAYS),
        )
        signed.write_text(signed.read_text() + ca_file.read_text())  # the chain: the node's, then the CA's
        keytool(keystore, "-importcert", "-trustcacerts", "-alias", "node", "-file", str(signed))
    finally:  # the CA signed its one certificate: without its key nobody signs another this cluster's clients trust
        for path in (ca_store, request, signed, password_file):
            path.unlink(missing_ok=True)
    keystore.chmod(0o600)
    ca_file.chmod(0o644)
    return {"ca_file": str(ca_file), "keystore": str(keystore), "keystore_password": password, "names": names}


def yaml(tls: dict[str, Any] | None) -> list[str]:
    """cassandra.yaml's client encryption: TLS and plain CQL on the native port (none for an older state)."""
    if not tls:
        return []
    return [
        "client_encryption_options:",
        "  enabled: true",
        "  optional: true",  # plain CQL too: loopback clients without TLS still connect
        f"  keystore: {tls['keystore']}",
        f"  keystore_password: {tls['keystore_password']}",
        "  store_type: PKCS12",
        "  require_client_auth: false",
    ]


def client_env(state: dict[str, Any]) -> dict[str, str]:
    """cqlsh's CA certificate (``cqlsh --ssl`` reads $SSL_CERTFILE) for a user's shell."""
    tls = state.get("tls")
    return {"SSL_CERTFILE": tls["ca_file"]} if tls else {}

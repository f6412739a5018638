"""How a ``cassandra://`` target's clients reach the nodes: TLS when the URL asks, and no clear-text login to
another machine.

``?tls=1``: TLS, the nodes' certificate checked against the system's trust store; ``?ca=/ABS/PATH.pem`` (with or
without ``tls=1``): TLS checked against that CA certificate (``services up cassandra`` makes one per start,
its state's ``ca_file``). Every client checks the certificate and that it names the host it dialled: the
management session (Python driver), the native engine (its job's ``cql.tls``) and YCSB's binding.

Without TLS, a login (a role and its password) goes over the wire in the clear: storbench refuses that to a
contact point that is not this machine's loopback (127.0.0.0/8, ::1, localhost) before anything connects,
unless the run says ``--cql-insecure`` (recorded in its manifest).
"""

from __future__ import annotations

import ipaddress
import ssl
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import parse_qsl

from storbench.errors import InputError
from storbench.redaction import redact_url

OPTIONS = ("tls", "ca")
FORMS = "tls=1 and/or ca=/ABS/PATH/CA.PEM (TLS)"
FLAG = "--cql-insecure"


@dataclass(frozen=True)
class Tls:
    """TLS to the nodes; ``ca_file`` the CA certificate they are checked against (None: the system's trust store)."""

    ca_file: Path | None = None

    def query(self) -> str:
        """The URL query that asks for it (what the recorded target URI keeps)."""
        return f"?ca={self.ca_file}" if self.ca_file else "?tls=1"

    def job(self) -> dict[str, Any]:
        """The native engine's ``cql.tls`` section."""
        return {"ca_file": str(self.ca_file) if self.ca_file else None}


def parse(text: str, query: str) -> Tls | None:
    """The URL's ``tls=1`` / ``ca=PATH`` (its options already checked by ``cassandra_login.parse``), or None."""
    values = dict(parse_qsl(query, keep_blank_values=True)) if query else {}
    tls, ca = values.get("tls"), values.get("ca")
    if tls is None and ca is None:
        return None
    shown = redact_url(text)
    if tls not in (None, "1", "0") or (tls == "0" and ca):
        raise InputError(
            f"--target {shown!r}: tls={tls} is not allowed; tls=1 asks for TLS (tls=0, the default, "
            f"for none; ca=PATH implies tls=1)"
        )
    if tls == "0":
        return None
    if ca is None:
        return Tls()
    path = Path(ca).expanduser()
    if not path.is_absolute():
        raise InputError(
            f"--target {shown!r}: ca={ca} is not an absolute path; give the CA certificate's full "
            f"path (`storbench services status cassandra` names its own)"
        )
    if not path.is_file():
        raise InputError(
            f"--target {shown!r}: ca={ca}: no such file; the CA certificate (PEM) the nodes' "
            f"certificate is checked against"
        )
    return Tls(path)


def is_loopback(host: str) -> bool:
    """This machine's own loopback: 127.0.0.0/8, ::1 or the name localhost (no lookup: no name is trusted)."""
    if host.lower() == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def check_clear_text(uri: str, hosts: list[str], role: str | None, tls: Tls | None, insecure: bool) -> bool:
    """Refuses (InputError, one line) a login of ``role`` sent without TLS to a host that is not loopback,
    unless ``insecure``; True when the run does send it so (the manifest says so)."""
    if tls is not None and insecure:
        raise InputError(f"{FLAG}: the target {uri} asks for TLS; {FLAG} is for a login without TLS, not both")
    remote = [host for host in hosts if not is_loopback(host)]
    if role is None or tls is not None or not remote:
        return False
    if insecure:
        return True
    raise InputError(
        f"target {uri}: the login of role {role} would cross the network to {remote[0]} in clear "
        f"text; add ?tls=1 (or ?ca=/PATH/CA.PEM) to the URL, or pass {FLAG} to send it anyway"
    )


def ssl_context(tls: Tls) -> ssl.SSLContext:
    """A client context that checks the nodes' certificate and that it names the host dialled."""
    context = ssl.create_default_context(cafile=str(tls.ca_file) if tls.ca_file else None)
    context.check_hostname, context.verify_mode = True, ssl.CERT_REQUIRED  # the defaults: stated, not assumed
    return context

"""``redfish:URL[,user=U|user_env=VAR][,password_env=VAR|password_file=PATH][,ca=PATH][,insecure]``: a BMC.

URL is the BMC (``https://10.0.0.5``: its first chassis) or one chassis
(``https://10.0.0.5/redfish/v1/Chassis/1``). The chassis' ``EnvironmentMetrics`` (``PowerWatts.Reading``)
is read when it has one, else the older ``Power`` resource (``PowerControl[0].PowerConsumedWatts``), else
its ``PowerSubsystem`` (the power supplies' ``Metrics`` ``InputPowerWatts``, summed). Certificates are
checked unless ``insecure`` is given (or ``--power-insecure``). The password comes from the
environment (default ``STORBENCH_BMC_PASSWORD``) or a file, lives in memory only and goes out only
in the Authorization header: over https (plain http only with ``--power-insecure`` or ``insecure``), and
only to the BMC URL's own scheme, host and port, never to another host a redirect or an ``@odata.id``
link names. Scope: ``node-psu``.
"""

from __future__ import annotations

import base64
import json
import os
import ssl
import urllib.error
import urllib.request
from typing import Any
from urllib.parse import urljoin, urlsplit

from storbench.telemetry.power.base import KINDS, PowerError, Reading, Spec, secret

SERVICE_ROOT = "/redfish/v1"
_PORTS = {"http": 80, "https": 443}


def origin(url: str) -> tuple[str, str, int | None]:
    """(scheme, host, port) of ``url``: where credentials may go."""
    parts = urlsplit(url)
    try:
        port = parts.port or _PORTS.get(parts.scheme)
    except ValueError:  # a port that is not a number: no origin of ours
        port = None
    return parts.scheme.lower(), (parts.hostname or "").lower(), port


class _SameOriginRedirects(urllib.request.HTTPRedirectHandler):
    """Redirects followed with the Authorization header only when they stay on the BMC's own origin (urllib
    would copy it to any host)."""

    def __init__(self, home: tuple[str, str, int | None], auth: str | None):
        self.home, self.auth = home, auth

    def redirect_request(self, req, fp, code, msg, headers, newurl):
        new = super().redirect_request(req, fp, code, msg, headers, newurl)
        if new is not None:
            new.headers.pop("Authorization", None)
            if self.auth and origin(new.full_url) == self.home:
                new.add_unredirected_header("Authorization", self.auth)
        return new


class RedfishPower:
    kind = "redfish"

    def __init__(self, spec: Spec, timeout: float = 5.0, insecure: bool = False):
        parts = urlsplit(spec.positional)
        if parts.scheme not in ("http", "https") or not parts.hostname:
            raise spec.fail(f"expected the BMC's URL, e.g. redfish:https://10.0.0.5, got {spec.positional!r}")
        if parts.username or parts.password:
            raise spec.fail("credentials in the URL are not accepted; use user=, password_env= or password_file=")
        self.scope = spec.option("scope", "node-psu") or "node-psu"
        self.declared = spec.option("scope") is not None
        self.base = f"{parts.scheme}://{parts.netloc}"
        self.path = parts.path.rstrip("/")
        self.timeout = timeout
        self.insecure = insecure or "insecure" in spec.options
        context = ssl.create_default_context(cafile=spec.option("ca") or None)
        if self.insecure:
            context.check_hostname = False
            context.verify_mode = ssl.CERT_NONE
        user = spec.option("user") or os.environ.get(spec.option("user_env") or "STORBENCH_BMC_USER", "")
        password = secret(spec, "STORBENCH_BMC_PASSWORD")
        if (user or password) and parts.scheme == "http" and not self.insecure:
            raise spec.fail(
                f"{self.base} is plain http: Basic auth would send the password in clear text; use "
                f"https://, or pass --power-insecure to send it anyway"
            )
        token = base64.b64encode(f"{user}:{password or ''}".encode()).decode()
        self._auth = f"Basic {token}" if user or password else None
        self.origin = origin(self.base)
        self._opener = urllib.request.build_opener(
            urllib.request.HTTPSHandler(context=context), _SameOriginRedirects(self.origin, self._auth)
        )
        self.resource: str | None = None  # the power resource read at each tick, found by check()
        self.how = ""

    def get(self, path: str) -> dict[str, Any]:
        request = urllib.request.Request(urljoin(self.base, path), headers={"Accept": "application/json"})
        if self._auth and origin(request.full_url) == self.origin:  # a link to another host gets no credentials
            request.add_unredirected_header("Authorization", self._auth)
        try:
            with self._opener.open(request, timeout=self.timeout) as response:
                return json.loads(response.read())
        except urllib.error.HTTPError as exc:
            raise PowerError(f"{urljoin(self.base, path)}: HTTP {exc.code} {exc.reason}") from None
        except urllib.error.URLError as exc:
            raise PowerError(f"{self.base}: {getattr(exc.reason, 'strerror', None) or exc.reason}") from None
        except (OSError, ValueError) as exc:
            raise PowerError(f"{urljoin(self.base, path)}: {exc}") from None

    def check(self) -> None:
        """Finds the chassis and its power resource; an error is one line (unreachable, refused, no power)."""
        chassis_path = self.path if "/Chassis/" in self.path else self._first_chassis()
        chassis = self.get(chassis_path)
        for key, how in (
            ("EnvironmentMetrics", "EnvironmentMetrics PowerWatts"),
            ("Power", "Power PowerControl[0].PowerConsumedWatts"),
            ("PowerSubsystem", "PowerSubsystem PowerSupplies InputPowerWatts"),
        ):
            link = (chassis.get(key) or {}).get("@odata.id")
            if link:
                self.resource, self.how = link, how
                self.read()
                return
        raise PowerError(f"{urljoin(self.base, chassis_path)} has no EnvironmentMetrics, Power or PowerSubsystem")

    def _first_chassis(self) -> str:
        members = self.get(f"{SERVICE_ROOT}/Chassis").get("Members") or []
        if not members:
            raise PowerError(f"{self.base}{SERVICE_ROOT}/Chassis lists no chassis")
        return members[0]["@odata.id"]

    def read(self) -> Reading:
        if self.resource is None:
            self.check()
            assert self.resource is not None
        data = self.get(self.resource)
        try:
            if self.how.startswith("EnvironmentMetrics"):
                watts = data["PowerWatts"]["Reading"]
            elif self.how.startswith("Power "):
                watts = data["PowerControl"][0]["PowerConsumedWatts"]
            else:
                watts = self._supplies_watts(data)
        except (KeyError, IndexError, TypeError) as exc:
            raise PowerError(f"{urljoin(self.base, self.resource)}: no reading ({exc})") from None
        if not isinstance(watts, (int, float)):
            raise PowerError(f"{urljoin(self.base, self.resource)}: the reading is {watts!r}, not watts")
        return Reading(watts=float(watts))

    def _supplies_watts(self, subsystem: dict[str, Any]) -> float:
        """The input watts of every power supply of a PowerSubsystem, summed (what the node draws)."""
        total = 0.0
        for member in self.get(subsystem["PowerSupplies"]["@odata.id"])["Members"]:
            supply = self.get(member["@odata.id"])
            total += self.get(supply["Metrics"]["@odata.id"])["InputPowerWatts"]["Reading"]
        return total

    def describe(self) -> dict[str, Any]:
        return {
            "source": self.kind,
            "scope": self.scope,
            "url": f"{self.base}{self.path}",
            "resource": self.resource,
            "reads": self.how,
            "certificate_check": (not self.insecure) if self.base.startswith("https") else None,
            **({"scope_declared": True} if self.declared else {}),
        }


KINDS["redfish"] = RedfishPower

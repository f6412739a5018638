"""Service names → their modules; state lives under ``<results home>/services/<name>/``."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from storbench.errors import InputError
from storbench.services import cassandra, ceph, hdfs, metastore, s3, spark, yarn
from storbench.services.process import service_dir

SERVICES = {
    "hdfs": hdfs,
    "s3": s3,
    "ceph": ceph,
    "spark": spark,
    "cassandra": cassandra,
    "metastore": metastore,
    "yarn": yarn,
}


def _module(name: str) -> Any:
    if name not in SERVICES:
        raise InputError(f"unknown service {name!r}; allowed: {', '.join(SERVICES)}")
    return SERVICES[name]


def service_up(name: str, home: Path, **options: Any) -> dict[str, Any]:
    """Start a service; its state has at least ``uri``, ``pid``, ``workdir`` and a one-line ``summary``."""
    module = _module(name)
    unknown = sorted(set(options) - set(module.UP_OPTIONS))
    if unknown:
        raise InputError(
            f"--{unknown[0]} does not apply to service {name}; "
            f"it takes: {', '.join('--' + o for o in module.UP_OPTIONS) or 'no options'}"
        )
    return module.up(service_dir(home, name), **options)


def service_down(name: str, home: Path) -> bool:
    return _module(name).down(service_dir(home, name))


def service_status(name: str, home: Path) -> dict[str, Any] | None:
    return _module(name).status(service_dir(home, name))


def service_env(name: str, home: Path) -> dict[str, str]:
    """The environment a shell's clients need for a running service (its module's ``client_env``): secrets."""
    module = _module(name)
    if not hasattr(module, "client_env"):
        offered = ", ".join(n for n, m in SERVICES.items() if hasattr(m, "client_env"))
        raise InputError(f"service {name} has no client environment to print; services that have one: {offered}")
    state = module.status(service_dir(home, name))
    if not state:
        raise InputError(f"{name} is not running under {home}; start it with `storbench services up {name}`")
    return module.client_env(state)

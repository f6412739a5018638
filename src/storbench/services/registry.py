"""Services found by registration; state lives under ``<results home>/services/<name>/``.

A service is one module of this package with ``up(workdir, **flags)``, ``down(workdir)``,
``status(workdir)`` and, when a shell's clients need secrets or settings, ``client_env(state)``. It
registers itself with its name and the flags ``services up`` takes for it::

    register("hdfs", __name__, Flag("datanodes", "number of DataNodes (default 2)", int))

The command line reads the registry (``up_flags``), so a new service edits nothing outside its module.
"""

from __future__ import annotations

import importlib
import pkgutil
import sys
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType
from typing import Any, Callable, Iterable

from storbench.errors import InputError
from storbench.services.process import service_dir


@dataclass(frozen=True)
class Flag:
    """A ``services up`` flag: ``--name`` (underscores as dashes) passed to ``up`` as the keyword ``name``."""

    name: str
    help: str
    type: Callable[[str], Any] | None = None  # int, ...; None: the text as given
    switch: bool = False  # present or not (store_true)
    repeatable: bool = False  # every occurrence, as a list
    metavar: str | None = None

    @property
    def option(self) -> str:
        return "--" + self.name.replace("_", "-")

    def kind(self) -> tuple[Any, bool, bool]:
        return self.type, self.switch, self.repeatable


@dataclass(frozen=True)
class Service:
    name: str
    module_name: str  # looked up on each call: the module's own functions, as it has them now
    flags: tuple[Flag, ...] = ()

    @property
    def module(self) -> ModuleType:
        return sys.modules[self.module_name]

    @property
    def has_client_env(self) -> bool:
        return hasattr(self.module, "client_env")


_SERVICES: dict[str, Service] = {}


def register(name: str, module_name: str, *flags: Flag) -> Service:
    """Called by a service's module at import: ``name`` is served by it and ``services up`` takes ``flags``."""
    known = _SERVICES.get(name)
    if known is not None and known.module_name != module_name:
        raise RuntimeError(f"service {name!r} registered twice ({known.module_name} and {module_name})")
    service = _SERVICES[name] = Service(name, module_name, tuple(flags))
    return service


def all_services() -> dict[str, Service]:
    """Every service by name, in name order, found by importing each module of this package once."""
    package = __name__.rpartition(".")[0]  # imported before this module; naming it in an import would be a circle
    for module in pkgutil.iter_modules(sys.modules[package].__path__):
        importlib.import_module(f"{package}.{module.name}")
    return dict(sorted(_SERVICES.items()))


def up_flags(services: Iterable[Service] | None = None) -> list[tuple[Flag, dict[str, str]]]:
    """Every ``services up`` flag once, with each service that takes it and its help there (default: every
    registered service, in name order). A flag two services declare must mean the same kind of value."""
    merged: dict[str, tuple[Flag, dict[str, str]]] = {}
    for service in all_services().values() if services is None else services:
        for flag in service.flags:
            first, helps = merged.setdefault(flag.name, (flag, {}))
            if first.kind() != flag.kind():
                raise RuntimeError(
                    f"service {service.name}: {flag.option} is also declared by {', '.join(helps)} "
                    f"with another type, switch or repetition"
                )
            helps[service.name] = flag.help
    return list(merged.values())


def get_service(name: str) -> Service:
    services = all_services()
    if name not in services:
        raise InputError(f"unknown service {name!r}; allowed: {', '.join(services)}")
    return services[name]


def service_up(name: str, home: Path, placement: Any = None, **options: Any) -> dict[str, Any]:
    """Start a service; its state has at least ``uri``, ``pid``, ``workdir`` and a one-line ``summary``.
    ``placement``: where its nodes run when it takes ``--lab-cluster`` (storbench.services.placement)."""
    service = get_service(name)
    takes = {flag.name: flag for flag in service.flags}
    unknown = sorted(set(options) - set(takes))
    if unknown:
        raise InputError(
            f"{Flag(unknown[0], '').option} does not apply to service {name}; "
            f"it takes: {', '.join(f.option for f in service.flags) or 'no options'}"
        )
    if options.pop("lab_cluster", None):
        options["placement"] = placement
    return service.module.up(service_dir(home, name), **options)


def service_down(name: str, home: Path) -> bool:
    return get_service(name).module.down(service_dir(home, name))


def service_status(name: str, home: Path) -> dict[str, Any] | None:
    return get_service(name).module.status(service_dir(home, name))


def service_env(name: str, home: Path) -> dict[str, str]:
    """The environment a shell's clients need for a running service (its module's ``client_env``): secrets."""
    service = get_service(name)
    if not service.has_client_env:
        offered = ", ".join(n for n, s in all_services().items() if s.has_client_env)
        raise InputError(f"service {name} has no client environment to print; services that have one: {offered}")
    state = service.module.status(service_dir(home, name))
    if not state:
        raise InputError(f"{name} is not running under {home}; start it with `storbench services up {name}`")
    return service.module.client_env(state)

"""The workload lifecycle and the registry that finds workloads by name."""

from __future__ import annotations

import importlib
import pkgutil
import re
from typing import TYPE_CHECKING, Any, ClassVar

from storbench.errors import InputError
from storbench.results.model import Sample
from storbench.workloads.params import Param

if TYPE_CHECKING:
    from storbench.analysis.metrics import MetricSpec
    from storbench.context import RunContext


class Workload:
    """One timed operation with a fixed lifecycle.

    ``check`` fails fast on bad input before anything starts; ``prepare`` runs before
    each repetition outside the timed window; ``run`` wraps exactly the timed action in
    ``ctx.measure()`` and returns extra samples; ``cleanup`` always runs once at the end.
    """

    name: ClassVar[str]
    version: ClassVar[str] = "1"
    description: ClassVar[str] = ""
    engine: ClassVar[str] = "spark"
    params: ClassVar[tuple[Param, ...]] = ()
    # The metrics this workload reports beyond the shared ones (telemetry, Spark, consistency);
    # storbench.analysis.metrics builds the catalog from them.
    metrics: ClassVar[tuple["MetricSpec", ...]] = ()

    def check(self, ctx: "RunContext", params: dict[str, Any]) -> None:
        """Raise InputError/TargetError for input that cannot work."""
        if ctx.target.scheme == "device" and self.engine != "fio":
            raise InputError(f"workload {self.name} cannot use the raw device target {ctx.target.uri}; "
                             f"only fio workloads can (use a directory on a filesystem)")
        if ctx.target.scheme == "rados" and self.engine != "rados":
            raise InputError(f"workload {self.name} cannot use the RADOS pool target {ctx.target.uri}; only the "
                             f"rados-bench workloads can (see `storbench workloads`)")
        if ctx.target.scheme == "s3" and self.engine != "native":
            raise InputError(f"workload {self.name} cannot use the s3:// target {ctx.target.uri}; only the objects "
                             f"workloads can (Spark s3a:// targets are not supported yet)")

    def engines(self, params: dict[str, Any]) -> list[str]:
        """The engines this workload runs on (the run starts only the engines its workloads name)."""
        return [self.engine]

    def estimated_bytes(self, params: dict[str, Any]) -> int:
        """Space this workload needs on the target, for the check before a run starts."""
        return 0

    def spark_conf(self, params: dict[str, Any]) -> dict[str, str]:
        """Spark settings this workload needs when the session starts (--spark-conf still wins)."""
        return {}

    def prepare(self, ctx: "RunContext", params: dict[str, Any]) -> None:
        """Untimed set-up before each repetition."""

    def run(self, ctx: "RunContext", params: dict[str, Any]) -> list[Sample]:
        raise NotImplementedError

    def cleanup(self, ctx: "RunContext", params: dict[str, Any]) -> None:
        """Remove what this workload created; runs even after a failure."""


_REGISTRY: dict[str, type[Workload]] = {}


def register(cls: type[Workload]) -> type[Workload]:
    if cls.name in _REGISTRY:
        raise RuntimeError(f"workload name {cls.name!r} registered twice "
                           f"({_REGISTRY[cls.name].__module__} and {cls.__module__})")
    _REGISTRY[cls.name] = cls
    return cls


def variant(base: type[Workload], name: str, description: str, **attrs: Any) -> type[Workload]:
    """A registered subclass of ``base`` that differs only in its name and class attributes."""
    class_name = re.sub(r"\W", "", name.title())
    return register(type(class_name, (base,), {"name": name, "description": description,
                                               "__module__": base.__module__, **attrs}))


_loaded = False


def _load_builtin() -> None:
    """Import every module and package under storbench.workloads once; their @register lines run."""
    global _loaded
    if _loaded:
        return
    import storbench.workloads as package

    for module in pkgutil.iter_modules(package.__path__):  # base and params register nothing: harmless
        importlib.import_module(f"{package.__name__}.{module.name}")
    _loaded = True


def all_workloads() -> dict[str, type[Workload]]:
    _load_builtin()
    return dict(_REGISTRY)


def get_workload(name: str, where: str = "workload") -> Workload:
    workloads = all_workloads()
    if name not in workloads:
        raise InputError(f"{where}: unknown workload {name!r}; known: {', '.join(sorted(workloads))}")
    return workloads[name]()

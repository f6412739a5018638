"""The workload lifecycle and the registry that finds workloads by name."""

from __future__ import annotations

import importlib
import pkgutil
import re
import sys
from typing import TYPE_CHECKING, Any, ClassVar

from storbench.errors import InputError
from storbench.results.metrics import DEVICE_HEADLINE, MetricSpec
from storbench.results.model import Sample
from storbench.targets import Target, target_class
from storbench.workloads.params import Param

if TYPE_CHECKING:
    from storbench.context import RunContext

OPS_UNITS = ("ops/s", "IOPS", "records/s", "rows/s")


class Workload:
    """One timed operation with a fixed lifecycle.

    ``check`` fails fast on bad input before anything starts; ``prepare`` runs before
    each repetition outside the timed window; ``run`` wraps exactly the timed action in
    ``ctx.measure()`` and returns extra samples; ``cleanup`` always runs once at the end.
    """

    name: ClassVar[str]
    version: ClassVar[str] = "1"
    description: ClassVar[str] = ""
    engine: ClassVar[str]  # the registered engine it runs on (its family names it)
    # the --target schemes this workload can use (the default: a Hadoop client's, which reaches s3:// through S3A)
    schemes: ClassVar[tuple[str, ...]] = ("file", "hdfs", "s3")
    params: ClassVar[tuple[Param, ...]] = ()
    # The metrics this workload reports beyond the shared ones (telemetry, the engines' own, consistency);
    # storbench.analysis.metrics builds the catalog from them.
    metrics: ClassVar[tuple[MetricSpec, ...]] = ()
    # The metrics its reports lead with, as its paper reports them (any declared metric, its own or shared: ycsb's
    # throughput, ops per server thread, ops per watt, p99); device telemetry follows. A metric a run lacks is
    # skipped. The default is paper 000's figures, time to complete and the device ones.
    headline: ClassVar[tuple[str, ...]] = DEVICE_HEADLINE
    # Metrics this family judges the other way than their declaration, by their wording ("lower/higher"):
    # compare colours and words their deltas so (data skipping: a lower device read rate is less read).
    directions: ClassVar[dict[str, str]] = {}
    # The workloads whose output this one reads (terasort: teragen): `storbench run <name>` runs them
    # first, untimed, when the workload runs alone.
    after: ClassVar[tuple[str, ...]] = ()

    def check_params(self, params: dict[str, Any], target: Target) -> None:
        """Raise InputError for parameters that cannot work, before anything starts: the target is parsed (its
        scheme is one of ``schemes``) but neither reached nor claimed. A check that needs no ``ctx`` belongs
        here, so that its refusal leaves nothing anywhere (a Cassandra keyspace dropped leaves snapshots)."""

    def check(self, ctx: "RunContext", params: dict[str, Any]) -> None:
        """Raise InputError/TargetError for input that cannot work (the target is claimed: see check_params)."""
        if ctx.target.scheme not in self.schemes:
            raise InputError(self.scheme_refusal(ctx.target))

    def scheme_refusal(self, target: Target) -> str:
        """One line: this workload, the target it cannot use, who can, and what it needs instead."""
        takers = sorted({family(cls) for cls in all_workloads().values() if target.scheme in cls.schemes})
        who = f"only the {_and(takers)} workloads can" if takers else "no workload can yet"
        needs = " or ".join(target_class(scheme).wanted for scheme in self.schemes)
        return (
            f"workload {self.name} cannot use the {target.kind} target {target.uri}; {who} ({self.name} needs {needs})"
        )

    def engines(self, params: dict[str, Any]) -> list[str]:
        """The engines this workload runs on (the run starts only the engines its workloads name)."""
        return [self.engine]

    def ops_per_s(self, params: dict[str, Any], samples: list[Sample], seconds: float) -> float | None:
        """The operations per second this workload did in its window (paper 003's Ops/Watt divides it by the
        watts): by default its first declared rate metric (unit ops/s, IOPS, records/s or rows/s), summed
        over its aggregate samples (per direction; not per job or per operation kind, parts of the total)."""
        rates = [spec.name for spec in self.metrics if spec.unit in OPS_UNITS]
        values = [
            s.value
            for s in samples
            if rates and s.metric == rates[0] and s.value is not None and not {"job", "op"} & set(s.labels)
        ]
        return sum(values) if values else None

    def estimated_bytes(self, params: dict[str, Any]) -> int:
        """Space this workload needs on the target, for the check before a run starts."""
        return 0

    def engine_conf(self, params: dict[str, Any]) -> dict[str, str]:
        """Settings this workload needs of its engine when it starts, by the engine's own names (the engine's
        flags still win)."""
        return {}

    def prepare(self, ctx: "RunContext", params: dict[str, Any]) -> None:
        """Untimed set-up before each repetition."""

    def run(self, ctx: "RunContext", params: dict[str, Any]) -> list[Sample]:
        raise NotImplementedError

    def cleanup(self, ctx: "RunContext", params: dict[str, Any]) -> None:
        """Remove what this workload created; runs even after a failure."""


REGISTRY: dict[str, type[Workload]] = {}  # name → class, filled by @register (a test may swap in a copy)


def register(cls: type[Workload]) -> type[Workload]:
    if cls.name in REGISTRY:
        raise RuntimeError(
            f"workload name {cls.name!r} registered twice ({REGISTRY[cls.name].__module__} and {cls.__module__})"
        )
    REGISTRY[cls.name] = cls
    return cls


def variant(base: type[Workload], name: str, description: str, **attrs: Any) -> type[Workload]:
    """A registered subclass of ``base`` that differs only in its name and class attributes."""
    class_name = re.sub(r"\W", "", name.title())
    return register(
        type(class_name, (base,), {"name": name, "description": description, "__module__": base.__module__, **attrs})
    )


def family(cls: type[Workload]) -> str:
    """A workload's family: its module or package under storbench.workloads (rados_bench → rados-bench, a package as a module)."""
    return cls.__module__.removeprefix("storbench.workloads.").split(".")[0].replace("_", "-")


def _and(names: list[str]) -> str:
    return names[0] if len(names) == 1 else f"{', '.join(names[:-1])} and {names[-1]}"


_loaded = False


def _load_builtin(rescan: bool = False) -> None:
    """Import every module and package under storbench.workloads once (``rescan``: look for new ones again);
    their @register lines run."""
    global _loaded
    if _loaded and not rescan:
        return
    package = __name__.rpartition(".")[0]  # imported before this module; naming it in an import would be a circle
    for module in pkgutil.iter_modules(sys.modules[package].__path__):  # base and params register nothing
        importlib.import_module(f"{package}.{module.name}")
    _loaded = True


def all_workloads(rescan: bool = False) -> dict[str, type[Workload]]:
    """Every registered workload by name; ``rescan``: modules added to the package's path since count too."""
    _load_builtin(rescan)
    return dict(REGISTRY)


def get_workload(name: str, where: str = "workload") -> Workload:
    workloads = all_workloads()
    if name not in workloads:
        raise InputError(f"{where}: unknown workload {name!r}; known: {', '.join(sorted(workloads))}")
    return workloads[name]()

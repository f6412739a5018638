"""The suite model and how a scale and overrides turn into each workload's parameters."""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

from storbench.errors import InputError
from storbench.workloads.base import Workload, get_workload
from storbench.units import parse_count

__all__ = ["Entry", "Suite", "parse_count"]

# The scale at which a suite reproduces its paper. `flush` (storbench.workloads.params.FLUSH) is off there by
# default: the paper's datasets are many times the page cache, so their write-back happens inside the window
# anyway, and the figures stay those of the paper's method (no sync the reference tools did not do). Below
# it the data fits in memory and the window would otherwise end before the device saw a byte. The scale's
# name, not a size threshold, decides: a threshold would depend on the machine's memory, and the same suite
# and scale must mean the same window everywhere.
PAPER_SCALE = "paper"


@dataclass
class Entry:
    workload: str
    params: dict[str, Any] = field(default_factory=dict)


@dataclass
class Suite:
    name: str
    source: str  # the YAML file it came from, for error messages
    description: str
    repetitions: int
    scales: dict[str, dict[str, Any]]
    default_scale: str
    scale_parameter: str
    partition_rows: int | None
    params: dict[str, Any]
    prepare: list[Entry]
    workloads: list[Entry]
    paper: str = ""
    sweep: dict[str, list[Any]] = field(default_factory=dict)  # one key → values (see storbench.sweep)
    sizes: list[str] = field(default_factory=list)  # the scale keys that size data or run length (not design)
    alone: bool = False  # one workload run by name, at its own defaults (loader.workload_suite)
    home: str = ""  # alone: the suite whose scales' sizes --scale takes

    def entries(self) -> list[Entry]:
        return self.prepare + self.workloads

    def instances(self) -> dict[str, Workload]:
        return {entry.workload: get_workload(entry.workload, f"{self.source}: workloads") for entry in self.entries()}

    def declared_params(self) -> dict[str, Any]:
        return {p.name: p for w in self.instances().values() for p in w.params}

    def scale_values(self, scale: str | None) -> tuple[str, dict[str, Any]]:
        """The scale's name and the parameters it sets; a number sets ``scale_parameter``."""
        scale = scale or self.default_scale
        if scale in self.scales:
            return scale, dict(self.scales[scale])
        count = parse_count(scale)
        if count is None:
            raise InputError(
                f"--scale {scale!r}: unknown scale for suite {self.name}; allowed: "
                f"{', '.join(self.scales)} or a {self.scale_parameter} count such as 5000000 or 5M"
            )
        values = dict(self.scales[self.default_scale])
        values[self.scale_parameter] = count
        if self.partition_rows:
            declared = self.declared_params().get("partitions")
            least = values.get("partitions", declared.default if declared else 1)
            values["partitions"] = max(int(least), math.ceil(count / self.partition_rows))
        return str(count), values

    def resolve(
        self, scale: str | None, overrides: dict[str, Any]
    ) -> tuple[str, dict[str, Any], dict[str, dict[str, Any]]]:
        """(scale name, suite-wide parameters, per-workload parameters), all coerced and checked."""
        scale_name, scale_values = self.scale_values(scale)
        instances = self.instances()
        declared = {p.name: p for w in instances.values() for p in w.params}
        paper = {"flush": False} if scale_name == PAPER_SCALE and "flush" in declared else {}
        layered = {**paper, **self.params, **scale_values, **overrides}
        for key in layered:
            if key not in declared:
                where = "--set" if key in overrides else self.source
                raise InputError(
                    f"{where}: unknown parameter {key!r} for suite {self.name}; allowed: {', '.join(sorted(declared))}"
                )
        per_workload: dict[str, dict[str, Any]] = {}
        for entry in self.entries():
            workload = instances[entry.workload]
            values = {**layered, **entry.params, **overrides}  # the command line wins
            params = {}
            for param in workload.params:
                where = "--set" if param.name in overrides else self.source
                params[param.name] = param.coerce(values.get(param.name, param.default), where)
            per_workload[entry.workload] = params
        suite_params = {
            name: declared[name].coerce(layered.get(name, declared[name].default), self.source)
            for name in sorted(declared)
        }
        return scale_name, suite_params, per_workload

    def differences(self, scale: str, per_workload: dict[str, dict[str, Any]], overrides: dict[str, Any]) -> str:
        """A workload alone: the first line of its run, what differs from its declared defaults and why
        (``objects-get: concurrency=16 (default 8)``); ``objects-get: defaults`` when nothing does."""
        (entry,) = self.workloads
        workload, params = self.instances()[entry.workload], per_workload[entry.workload]
        scaled = (
            ""
            if scale == self.default_scale
            else f"; {self.home}'s {scale} scale"
            if scale in self.scales
            else f"; --scale {scale}"
        )
        changed = []
        for param in workload.params:
            default = param.coerce(param.default, "default")
            if params[param.name] != default:
                why = "" if param.name in overrides else scaled
                changed.append(f"{param.name}={_shown(params[param.name])} (default {_shown(default)}{why})")
        return f"{entry.workload}: {', '.join(changed) or 'defaults'}"


def _shown(value: Any) -> str:
    if isinstance(value, list):
        value = ",".join(map(str, value))
    return "''" if value == "" else str(value)

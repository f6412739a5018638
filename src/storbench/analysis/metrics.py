"""The metric catalog: every declared metric's unit, direction, aggregation and wording, in report order.

Nothing here lists metrics. Whoever produces a metric declares its ``MetricSpec`` beside
the code that measures it, in the vocabulary of :mod:`storbench.results.metrics` (usually
as a ``metric_table``): each workload family as
``metrics`` on its workload classes (found through the workload registry), and the
producers that are not workloads as a module-level ``METRICS`` tuple in the modules named
by :data:`SHARED` (telemetry, Spark's event log, the per-second consistency figures).
:data:`CATALOG` is built from those declarations on first use (importing the workload
registry then, not with this module), in the order each source's ``METRIC_SECTION`` gives; two declarations of one metric
name must be equal, or building it fails naming both.
"""

from __future__ import annotations

import importlib
from dataclasses import fields
from typing import Iterable, Iterator, Mapping

from storbench.results.metrics import DEVICE_HEADLINE, MetricSpec, reworded

# The modules whose ``METRICS`` declare the metrics no workload owns.
SHARED = (
    "storbench.telemetry.metrics",
    "storbench.engines.eventlog",
    "storbench.engines.s3a",
    "storbench.results.consistency",
    "storbench.telemetry.sentinel",
)

# Ordering rule. The catalog's order is the reports' order: rows within a workload, metric columns, headlines
# (storbench.analysis.compare and .model sort by it). Each source (a module in SHARED, a workload family's module
# or package) places its section with a module-level ``METRIC_SECTION`` number beside its declarations, lowest
# first: paper 004's zoned figures lead (0: a zoned run's headlines are the paper's sentences, not the
# telemetry's), then the paper's time, throughput, latency and CPU (10), the dataset, Spark's own figures and
# the workload families. A source without one follows them, in discovery order (by module name), so a new
# family edits nothing outside its folder. Within a section the declaration's own order holds, and a metric
# declared again keeps the place of its first declaration.
UNPLACED = 1000


def section(source: str) -> int:
    """The ``METRIC_SECTION`` the module or package ``source`` declares (UNPLACED without one)."""
    return getattr(importlib.import_module(source), "METRIC_SECTION", UNPLACED)


def family(module: str) -> str:
    """The section a workload class declares for: its module up to the package under storbench.workloads."""
    parts = module.split(".")
    return ".".join(parts[:3]) if parts[:2] == ["storbench", "workloads"] else module


def _workloads() -> dict[str, type]:
    from storbench.workloads.base import all_workloads  # here: the registry's import is not cheap

    return all_workloads()


def workload_metrics(name: str) -> tuple[MetricSpec, ...] | None:
    """The metrics the workload ``name`` declares (its own, in its order); None when no workload has that name."""
    cls = _workloads().get(name)
    return None if cls is None else tuple(cls.metrics)


def declarations() -> list[tuple[str, tuple[MetricSpec, ...]]]:
    """(source, specs) of every declaration, in catalog order (each source's METRIC_SECTION)."""
    found: dict[str, list[MetricSpec]] = {module: list(importlib.import_module(module).METRICS) for module in SHARED}
    for cls in _workloads().values():
        found.setdefault(family(cls.__module__), []).extend(cls.metrics)
    # A family's classes share its tuple: each spec once per source (dicts keep the first order).
    return [(source, tuple(dict.fromkeys(found[source]))) for source in sorted(found, key=section)]


def build_catalog(declared: Iterable[tuple[str, Iterable[MetricSpec]]]) -> dict[str, MetricSpec]:
    """Metric name → spec, in declaration order; a name declared twice with different specs fails."""
    catalog: dict[str, MetricSpec] = {}
    sources: dict[str, str] = {}
    for source, specs in declared:
        for spec in specs:
            known = catalog.get(spec.name)
            if known is not None and known != spec:
                diff = "; ".join(
                    f"{f.name} {getattr(known, f.name)!r} vs {getattr(spec, f.name)!r}"
                    for f in fields(MetricSpec)
                    if getattr(known, f.name) != getattr(spec, f.name)
                )
                raise RuntimeError(
                    f"metric {spec.name!r} is declared differently by {sources[spec.name]} and "
                    f"{source} ({diff}); declare it once or alike"
                )
            catalog.setdefault(spec.name, spec)
            sources.setdefault(spec.name, source)
    return catalog


class _Catalog(Mapping[str, MetricSpec]):
    """The catalog, built from the declarations the first time it is read."""

    def __init__(self) -> None:
        self._specs: dict[str, MetricSpec] | None = None

    def _built(self) -> dict[str, MetricSpec]:
        if self._specs is None:
            specs = build_catalog(declarations())
            check_headlines(specs, _workloads().values())
            self._specs = specs
        return self._specs

    def __getitem__(self, name: str) -> MetricSpec:
        return self._built()[name]

    def __iter__(self) -> Iterator[str]:
        return iter(self._built())

    def __len__(self) -> int:
        return len(self._built())


CATALOG: Mapping[str, MetricSpec] = _Catalog()


def check_headlines(catalog: Mapping[str, MetricSpec], classes: Iterable[type]) -> None:
    """Every metric a workload leads with (``headline``) or judges its own way (``directions``) is declared."""
    for cls in classes:
        unknown = [name for name in (*cls.headline, *cls.directions) if name not in catalog]
        if unknown:
            raise RuntimeError(
                f"workload {cls.name} ({cls.__module__}) names {', '.join(map(repr, unknown))} in its "
                f"headline or directions, which no workload or shared module declares"
            )
        for name, said in cls.directions.items():
            reworded(catalog[name], said)  # a wording not in WORDINGS fails here, naming the metric


def headline(workload: str) -> tuple[str, ...]:
    """The metrics the workload's reports lead with, in its order; paper 000's figures for a name no workload has
    (the overall group "all operations", a run of a workload since removed)."""
    cls = _workloads().get(workload)
    return DEVICE_HEADLINE if cls is None else tuple(cls.headline)


def spec_in(workloads: Iterable[str], metric: str, unit: str = "") -> MetricSpec:
    """The spec of ``metric`` in rows of ``workloads``: reworded where every one of their families judges it the
    other way (``Workload.directions``: the same wording for all), else as declared (:func:`spec_for`)."""
    spec = spec_for(metric, unit)
    found = _workloads()
    said = {(found[w].directions.get(metric) if w in found else None) for w in workloads}
    wording = said.pop() if len(said) == 1 else None
    return reworded(spec, wording) if wording else spec


def spec_for(metric: str, unit: str = "") -> MetricSpec:
    """The spec of a metric; an unknown metric is lower-is-better-by-mean only if its unit is time."""
    if metric in CATALOG:
        return CATALOG[metric]
    if unit in ("s", "ms", "us"):
        return MetricSpec(metric, metric.replace("_", " "), unit, False, "mean", "lower", "higher")
    return MetricSpec(metric, metric.replace("_", " "), unit, True, "mean", "higher", "lower")

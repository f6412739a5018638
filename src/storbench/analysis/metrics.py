"""The metric catalog: unit, direction, aggregation over repetitions and the paper's wording.

Paper 000 aggregates throughput and CPU as the maximum of the repetitions and latency
and completion time as their mean; ``aggregation`` encodes that rule per metric.

Nothing here lists metrics. Whoever produces a metric declares its ``MetricSpec`` beside
the code that measures it (usually as a :func:`metric_table`): each workload family as
``metrics`` on its workload classes (found through the workload registry), and the
producers that are not workloads as a module-level ``METRICS`` tuple in the modules named
by :data:`SHARED` (telemetry, Spark's event log, the per-second consistency figures).
:data:`CATALOG` is built from those declarations on first use (so that workload modules
can import this one), in the order :data:`ORDER` gives; two declarations of one metric
name must be equal, or building it fails naming both.
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass, fields
from typing import Iterable, Iterator, Mapping


@dataclass(frozen=True)
class MetricSpec:
    name: str
    title: str  # as the paper names it
    unit: str
    higher_is_better: bool
    aggregation: str  # one of AGGREGATIONS (storbench.analysis.stats.aggregate)
    better_word: str  # "faster", "higher", "lower", "better usage"
    worse_word: str
    # True when one figure over all timed operations means something (paper 000's summary
    # table and headlines give maximum throughput, average latency and maximum CPU overall).
    overall: bool = False

    @property
    def direction(self) -> str:
        return "higher is better" if self.higher_is_better else "lower is better"


AGGREGATIONS = ("max", "min", "mean", "median", "sum")
# The paper's words for a change for the better and for the worse ("17% faster", "2× more
# consistent"); the wording says which way is better (True: higher is better).
WORDINGS = {"higher/lower": True, "more/fewer": True, "more/less": True, "larger/smaller": True,
            "better/worse": True, "better usage/worse usage": True,
            "lower/higher": False, "faster/slower": False, "shorter/longer": False, "fewer/more": False,
            "less/more": False, "more consistent/less consistent": False}


def metric(name: str, title: str, unit: str, aggregation: str, wording: str, overall: str = "") -> MetricSpec:
    """A spec from its wording (a key of WORDINGS); ``overall="overall"`` sets MetricSpec.overall."""
    if aggregation not in AGGREGATIONS:
        raise ValueError(f"metric {name}: aggregation {aggregation!r} is not one of: {', '.join(AGGREGATIONS)}")
    if wording not in WORDINGS:
        raise ValueError(f"metric {name}: wording {wording!r} is not one of: {', '.join(WORDINGS)}")
    if overall not in ("", "overall"):
        raise ValueError(f"metric {name}: the last column is 'overall' or nothing, not {overall!r}")
    better, worse = wording.split("/")
    return MetricSpec(name, title, unit, WORDINGS[wording], aggregation, better, worse, overall == "overall")


def metric_table(text: str) -> tuple[MetricSpec, ...]:
    """Specs from rows ``name | title | unit | aggregation | better/worse [| overall]``; # starts a comment."""
    specs = []
    for line in text.splitlines():
        cells = [cell.strip() for cell in line.split("|")]
        if not cells[0] or cells[0].startswith("#"):
            continue
        if len(cells) not in (5, 6):
            raise ValueError(f"metric row {line.strip()!r}: name | title | unit | aggregation | better/worse "
                             f"[| overall]")
        specs.append(metric(*cells))
    return tuple(specs)


# The modules whose ``METRICS`` declare the metrics no workload owns.
SHARED = ("storbench.telemetry.metrics", "storbench.engines.eventlog", "storbench.engines.s3a",
          "storbench.analysis.consistency")

# Ordering rule. The catalog's order is the reports' order: rows within a workload,
# metric columns, headlines (storbench.analysis.compare and .model sort by it). Sections
# come in this order — the paper's time, throughput, latency and CPU first, then the
# dataset, Spark's own figures and the workload families; a workload family not named here
# follows them, in discovery order (by module name). Within a section the declaration's own
# order holds, and a metric declared again keeps the place of its first declaration.
ORDER = ("storbench.telemetry.metrics", "storbench.workloads.spark_transforms", "storbench.engines.eventlog",
         "storbench.engines.s3a", "storbench.workloads.terasort", "storbench.workloads.tpcds", "storbench.workloads.dfsio",
         "storbench.workloads.fio", "storbench.workloads.rados_bench", "storbench.analysis.consistency",
         "storbench.workloads.objects")


def family(module: str) -> str:
    """The section a workload class declares for: its module up to the package under storbench.workloads."""
    parts = module.split(".")
    return ".".join(parts[:3]) if parts[:2] == ["storbench", "workloads"] else module


def declarations() -> list[tuple[str, tuple[MetricSpec, ...]]]:
    """(source, specs) of every declaration, in catalog order (see ORDER)."""
    from storbench.workloads.base import all_workloads

    found: dict[str, list[MetricSpec]] = {module: list(importlib.import_module(module).METRICS)
                                          for module in SHARED}
    for cls in all_workloads().values():
        found.setdefault(family(cls.__module__), []).extend(cls.metrics)
    rank = {source: index for index, source in enumerate(ORDER)}
    # A family's classes share its tuple: each spec once per source (dicts keep the first order).
    return [(source, tuple(dict.fromkeys(found[source])))
            for source in sorted(found, key=lambda s: rank.get(s, len(rank)))]


def build_catalog(declared: Iterable[tuple[str, Iterable[MetricSpec]]]) -> dict[str, MetricSpec]:
    """Metric name → spec, in declaration order; a name declared twice with different specs fails."""
    catalog: dict[str, MetricSpec] = {}
    sources: dict[str, str] = {}
    for source, specs in declared:
        for spec in specs:
            known = catalog.get(spec.name)
            if known is not None and known != spec:
                diff = "; ".join(f"{f.name} {getattr(known, f.name)!r} vs {getattr(spec, f.name)!r}"
                                 for f in fields(MetricSpec) if getattr(known, f.name) != getattr(spec, f.name))
                raise RuntimeError(f"metric {spec.name!r} is declared differently by {sources[spec.name]} and "
                                   f"{source} ({diff}); declare it once or alike")
            catalog.setdefault(spec.name, spec)
            sources.setdefault(spec.name, source)
    return catalog


class _Catalog(Mapping[str, MetricSpec]):
    """The catalog, built from the declarations the first time it is read."""

    def __init__(self) -> None:
        self._specs: dict[str, MetricSpec] | None = None

    def _built(self) -> dict[str, MetricSpec]:
        if self._specs is None:
            self._specs = build_catalog(declarations())
        return self._specs

    def __getitem__(self, name: str) -> MetricSpec:
        return self._built()[name]

    def __iter__(self) -> Iterator[str]:
        return iter(self._built())

    def __len__(self) -> int:
        return len(self._built())


CATALOG: Mapping[str, MetricSpec] = _Catalog()


def spec_for(metric: str, unit: str = "") -> MetricSpec:
    """The spec of a metric; an unknown metric is lower-is-better-by-mean only if its unit is time."""
    if metric in CATALOG:
        return CATALOG[metric]
    if unit in ("s", "ms", "us"):
        return MetricSpec(metric, metric.replace("_", " "), unit, False, "mean", "lower", "higher")
    return MetricSpec(metric, metric.replace("_", " "), unit, True, "mean", "higher", "lower")

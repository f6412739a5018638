"""The seed papers' published figures, as data: ``NNN.yaml`` beside this module, one per paper.

A figure is ``absolute`` (one configuration's value, in the unit the paper prints) or a ``ratio``
between two of the paper's configurations (new ÷ baseline of the quantity, with the change in the
paper's own words: "190% Higher", "17% faster"). ``measures`` maps the storbench workload that
measures it (``overall``: one figure over all timed operations) to the metric, when storbench has
one; ``analogs`` maps workloads that measure an analogous quantity, not the same one (paper 004's Ceph
rados bench figures beside fio on a zoned device: shown labelled as an analog); ``scope`` and ``scale``
(the paper's, a figure's own where it differs) say what the figure covers and at what data size;
``source`` is the exact text it was read from (tests/baselines checks it against the seed;
the seeds themselves are not shipped). ``load(paper)`` reads and checks a file; a bad one fails
naming the file and the figure.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from typing import Any

import yaml

from storbench.errors import InputError

HERE = Path(__file__).resolve().parent
KINDS = ("absolute", "ratio")
OVERALL = "overall"  # measures' key for a figure over all timed operations (paper 000's summary)
# A paper's unit → (storbench's unit, factor to it). A figure's unit must convert to its metric's.
UNITS = {
    "sec.": ("s", 1.0),
    "seconds": ("s", 1.0),
    "minutes": ("s", 60.0),
    "ms": ("ms", 1.0),
    "MB/s": ("MB/s", 1.0),
    "GB/s": ("MB/s", 1000.0),
    "GBps": ("MB/s", 1000.0),
    "%": ("%", 1.0),
    "ops/s": ("ops/s", 1.0),
    "ops/s/thread": ("ops/s/thread", 1.0),
    "Ops/Watt": ("ops/W", 1.0),
    "Ops/W": ("ops/W", 1.0),
    "IOPS": ("IOPS", 1.0),
}
_PAPER = re.compile(r"\d{3}")


@dataclass(frozen=True)
class Configuration:
    key: str
    name: str
    hardware: str


@dataclass(frozen=True)
class Figure:
    paper: str
    id: str
    quantity: str  # the paper's name for it
    where: str  # table, figure or section
    kind: str  # absolute | ratio
    source: str  # the exact text of the seed it was read from
    measures: dict[str, str] = field(default_factory=dict)  # storbench workload (or "overall") → metric
    analogs: dict[str, str] = field(default_factory=dict)  # workload → metric of an analogous quantity only
    scope: str | None = None  # what the figure covers ("per server"), when not the paper's scope
    scale: str | None = None  # the data size or run length it was measured at, when not the paper's scale
    configuration: str | None = None  # absolute: the configuration measured
    value: float | None = None  # absolute: as printed, in ``unit``
    unit: str | None = None
    of: tuple[str, str] | None = None  # ratio: (new, baseline)
    change: str | None = None  # ratio: the paper's words
    ratio: float | None = None  # ratio: new ÷ baseline of the quantity
    qualifier: str | None = None  # "up to", "just under", "approximately"
    note: str | None = None

    def value_in(self, unit: str) -> float | None:
        """The absolute value in storbench's ``unit``; None when it does not convert."""
        target, factor = UNITS.get(self.unit or "", (None, 1.0))
        return None if self.value is None or target != unit else self.value * factor

    def metric_of(self, workload: str) -> str | None:
        """The metric of ``workload`` set beside this figure: the same quantity, or an analog of it."""
        return self.measures.get(workload) or self.analogs.get(workload)

    @property
    def shown(self) -> str:
        """The figure as the paper says it: "480.93 sec.", "just under 300 seconds", "190% Higher"."""
        if self.kind == "ratio":
            return self.change or ""
        value = f"{self.value:,g}"
        said = f"{value}%" if self.unit == "%" else f"{value} {self.unit}"
        return f"{self.qualifier} {said}" if self.qualifier else said


@dataclass(frozen=True)
class Paper:
    paper: str
    title: str
    publisher: str
    suites: tuple[str, ...]
    setup: str
    configurations: dict[str, Configuration]
    comparisons: tuple[tuple[str, str], ...]  # (new, baseline)
    figures: tuple[Figure, ...]
    scope: str = ""  # what the figures cover (a cluster of four nodes, a single node, per server)
    scale: str = ""  # the data size or run length they were measured at ("10 billion records, 2.1 TB")
    size: dict[str, float] = field(default_factory=dict)  # that size as a suite's parameter: {"rows": 1e10}

    def figure(self, figure_id: str) -> Figure:
        return next(f for f in self.figures if f.id == figure_id)


def papers() -> list[str]:
    """The papers with published baselines, in order."""
    return sorted(path.stem for path in HERE.glob("*.yaml") if _PAPER.fullmatch(path.stem))


def paper_ref(text: str) -> str:
    """``003``, ``paper:003`` or ``3`` → "003"; anything else, or a paper with no baselines, is one InputError."""
    name = text.removeprefix("paper:").strip()
    known = papers()
    if name.isdigit() and len(name) <= 3 and name.zfill(3) in known:
        return name.zfill(3)
    raise InputError(
        f"paper {name or text!r}: no published baselines; papers: {', '.join(known)} (see `storbench baselines`)"
    )


@cache
def load(paper: str) -> Paper:
    """The paper's baselines, checked (``paper_ref`` first for a user's text)."""
    path = HERE / f"{paper}.yaml"
    data = yaml.safe_load(path.read_text())
    return _paper(data, path.name)


def _fail(where: str, message: str) -> ValueError:
    return ValueError(f"{where}: {message}")


def _paper(data: dict[str, Any], name: str) -> Paper:
    configurations = {
        key: Configuration(key, str(c["name"]), " ".join(str(c["hardware"]).split()))
        for key, c in (data.get("configurations") or {}).items()
    }
    comparisons = tuple((c["new"], c["baseline"]) for c in data.get("comparisons") or ())
    for pair in comparisons:
        if not set(pair) <= set(configurations):
            raise _fail(name, f"comparison {pair} names a configuration not in configurations")
    figures = tuple(
        _figure(str(data["paper"]), raw, configurations, f"{name} figure {raw.get('id')!r}")
        for raw in data.get("figures") or ()
    )
    ids = [f.id for f in figures]
    if len(set(ids)) != len(ids):
        raise _fail(name, f"figure ids repeat: {sorted({i for i in ids if ids.count(i) > 1})}")
    return Paper(
        str(data["paper"]),
        str(data["title"]),
        str(data["publisher"]),
        tuple(data.get("suites") or ()),
        " ".join(str(data.get("setup", "")).split()),
        configurations,
        comparisons,
        figures,
        " ".join(str(data.get("scope", "")).split()),
        " ".join(str(data.get("scale", "")).split()),
        {str(k): float(v) for k, v in (data.get("size") or {}).items()},
    )


def _figure(paper: str, raw: dict[str, Any], configurations: dict[str, Configuration], where: str) -> Figure:
    known = {f for f in Figure.__dataclass_fields__} - {"paper"}
    if set(raw) - known:
        raise _fail(where, f"unknown keys {sorted(set(raw) - known)}")
    for key in ("id", "quantity", "where", "kind", "source"):
        if not raw.get(key):
            raise _fail(where, f"no {key}")
    kind = raw["kind"]
    if kind not in KINDS:
        raise _fail(where, f"kind {kind!r} is not one of {', '.join(KINDS)}")
    measures = {str(w): str(m) for w, m in (raw.get("measures") or {}).items()}
    analogs = {str(w): str(m) for w, m in (raw.get("analogs") or {}).items()}
    if set(analogs) & set(measures):
        raise _fail(where, f"workloads {sorted(set(analogs) & set(measures))} both measure it and are its analog")
    if not measures and not raw.get("note"):
        raise _fail(where, "no measures: a note must say why storbench has no such metric")
    if kind == "absolute":
        if raw.get("configuration") not in configurations:
            raise _fail(where, f"configuration {raw.get('configuration')!r} is not one of {sorted(configurations)}")
        if not isinstance(raw.get("value"), (int, float)) or raw.get("unit") not in UNITS:
            raise _fail(where, f"an absolute figure needs a number value and a unit of {', '.join(UNITS)}")
        of, ratio = None, None
    else:
        of = tuple(raw.get("of") or ())
        if len(of) != 2 or not set(of) <= set(configurations):
            raise _fail(where, f"of {of!r}: two of the configurations {sorted(configurations)}, new first")
        ratio = raw.get("ratio")
        if not isinstance(ratio, (int, float)) or ratio <= 0 or not raw.get("change"):
            raise _fail(where, "a ratio figure needs change (the paper's words) and ratio (new ÷ baseline, > 0)")
        if str(raw["change"]).lower() not in " ".join(raw["source"].split()).lower():
            raise _fail(where, f"change {raw['change']!r} is not in its source text")
    return Figure(
        paper=paper,
        id=str(raw["id"]),
        quantity=str(raw["quantity"]),
        where=str(raw["where"]),
        kind=kind,
        source=str(raw["source"]),
        measures=measures,
        analogs=analogs,
        scope=raw.get("scope"),
        scale=raw.get("scale"),
        configuration=raw.get("configuration"),
        value=None if raw.get("value") is None else float(raw["value"]),
        unit=raw.get("unit"),
        of=of or None,
        change=raw.get("change"),
        ratio=None if ratio is None else float(ratio),
        qualifier=raw.get("qualifier"),
        note=raw.get("note"),
    )

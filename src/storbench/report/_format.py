"""Number formatting and the configuration table shared by every exporter."""

from __future__ import annotations

import math
from typing import Any, Callable

from storbench.analysis import wording
from storbench.analysis.model import Cell, Comparison, Delta, RunInfo
from storbench.engines.reported import settings_rows, software_rows
from storbench.report.node_config import config_fields

NA = "n/a"


def num(value: float | None) -> str:
    """A value with sensible precision: 6,369 · 941.2 · 45.05 · 0.41 · 0.0123."""
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return NA
    if isinstance(value, float) and math.isinf(value):
        return "∞" if value > 0 else "-∞"
    size = abs(value)
    if size == 0:
        return "0"
    if size >= 1000:
        return f"{value:,.0f}"
    if size >= 100:
        return f"{value:.1f}"
    if size >= 1:
        return f"{value:.2f}"
    return f"{value:.3g}"


def with_unit(value: float | None, unit: str) -> str:
    if value is None:
        return NA
    return f"{num(value)}%" if unit == "%" else f"{num(value)} {unit}".rstrip()


def spread(cell: Cell) -> str:
    """ "[min–max]" over the repetitions; "" for fewer than two values or when they are all equal."""
    if cell.n < 2 or cell.min is None or cell.max is None or cell.min == cell.max:
        return ""
    return f"[{num(cell.min)}–{num(cell.max)}]"


def cell_text(cell: Cell) -> str:
    """ "504.27 [494.2–514.4]" (aggregate and range) or "n/a"."""
    if cell.aggregate is None:
        return NA
    rng = spread(cell)
    return f"{num(cell.aggregate)} {rng}" if rng else num(cell.aggregate)


def factor(delta: Delta) -> str:
    """ "×2.9" / "÷110" when one side is at least twice the other, else ""."""
    if delta.rel is None or delta.verdict not in ("better", "worse"):
        return ""
    ratio = 1.0 + delta.rel
    if ratio >= 2:
        return f"×{ratio:.1f}" if ratio < 10 else f"×{ratio:,.0f}"
    if 0 < ratio <= 0.5:
        return f"÷{1 / ratio:.1f}" if ratio > 0.1 else f"÷{1 / ratio:,.0f}"
    return ""


def delta_text(delta: Delta | None, marker: bool = True) -> str:
    """ "190% higher (×2.9) *"."""
    if delta is None:
        return ""
    extra = factor(delta)
    text = f"{delta.words} ({extra})" if extra else delta.words
    if not marker or delta.verdict in ("no change", "n/a"):
        return text
    return f"{text} {delta.marker}".rstrip()


def ci_text(delta: Delta | None) -> str:
    """ "[+47%..+53%]": the 95% CI of a significant change (new/old − 1; "[38×..40×]" when said as a factor), else ""."""
    if delta is None or delta.significance != wording.SIGNIFICANT or delta.ci_low is None or delta.ci_high is None:
        return ""
    low, high = wording.interval_bounds(delta.ci_low, delta.ci_high, factor="×" in delta.words)
    return f"[{low}..{high}]"


def delta_ci_text(delta: Delta | None, marker: bool = True) -> str:
    """ "190% higher (×2.9) * [+162%..+215%]": :func:`delta_text` and, for a significant change, its CI."""
    ci = ci_text(delta)
    return f"{delta_text(delta, marker)} {ci}" if ci else delta_text(delta, marker)


def p_text(p: float | None) -> str:
    if p is None:
        return ""
    return "<0.001" if p < 0.001 else f"{p:.3f}"


def _devices(devices: Any) -> str:
    if not devices:
        return ""
    if isinstance(devices, (list, tuple)):
        return ", ".join(map(str, devices))
    parts = []
    for name, info in devices.items():
        facts = []
        if isinstance(info, dict):
            facts += [
                str(info[k]).strip()
                for k in ("model", "vendor", "transport")
                if info.get(k) and not str(info[k]).startswith("0x")
            ]  # PCI ids say nothing
            if info.get("size_gb"):
                facts.append(f"{num(float(info['size_gb']))} GB")
            elif info.get("size_bytes"):
                facts.append(f"{num(info['size_bytes'] / 1e9)} GB")
            if info.get("rotational") is not None:
                facts.append("HDD" if info["rotational"] else "SSD")
        parts.append(f"{name} ({', '.join(facts)})" if facts else str(name))
    return "; ".join(parts)


def _filesystem(fs: Any) -> str:
    if not isinstance(fs, dict) or not fs:
        return ""
    text = fs.get("type", "?")
    if fs.get("source"):
        text += f" on {fs['source']}"
    return text + (f" at {fs['mount']}" if fs.get("mount") else "")


def _param(value: Any) -> str:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return str(value)
    if isinstance(value, float) and value.is_integer():
        value = int(value)
    return f"{value:,}" if isinstance(value, int) else str(value)


def _repetitions(run: RunInfo) -> str | None:
    """ "3", or "4 (--repeat auto 3..10: stopped after 4 repetitions: ...)"."""
    auto = run.repeat_auto
    if run.repetitions is None or not auto:
        return None if run.repetitions is None else str(run.repetitions)
    why = "; ".join((auto.get("stopped") or {}).values()) or "the maximum, the interval still wider"
    return f"{run.repetitions} (--repeat auto {auto.get('min')}..{auto.get('max')}: {why})"


def engine_rows(
    runs: list[RunInfo], get: Callable[[Callable[[RunInfo], Any]], list[str]], rows: Callable[[RunInfo], dict]
) -> list[tuple[str, list[str]]]:
    """The engines' own rows (engines.reported), each with every run's value, in the engines' order."""
    names = dict.fromkeys(name for run in runs for name in rows(run))
    return [(name, get(lambda r, name=name: rows(r).get(name))) for name in names]


def configuration(comparison: Comparison) -> list[tuple[str, list[str], bool]]:
    """(field, value per run, whether the runs differ) like paper 000's summary table; empty fields dropped."""
    runs = comparison.runs

    def get(fn: Callable[[RunInfo], Any]) -> list[str]:
        out = []
        for run in runs:
            try:
                value = fn(run)
            except (KeyError, TypeError, AttributeError):
                value = None
            out.append("" if value is None else str(value))
        return out

    def java(r: RunInfo) -> str | None:
        version = r.software.get("java")
        vendor = r.software.get("java_vendor")
        return f"{version} ({vendor})" if version and vendor else version

    fields: list[tuple[str, list[str]]] = [
        ("Label", get(lambda r: r.name)),
        ("Run id", get(lambda r: r.run_id)),
        ("Status", get(lambda r: r.status)),
        ("Suite", get(lambda r: r.suite + (f" (paper {r.paper})" if r.paper else ""))),
        ("Scale", get(lambda r: r.scale)),
    ]
    keys = list(dict.fromkeys(k for r in runs for k in r.parameters))
    fields += [
        (f"Parameter {k}", get(lambda r, k=k: _param(r.parameters[k]) if k in r.parameters else None)) for k in keys
    ]
    fields += [
        ("Repetitions", get(_repetitions)),
        ("Design", get(lambda r: r.design)),
        ("Warm-up repetitions", get(lambda r: r.warmup or None)),
        ("Started (UTC)", get(lambda r: r.started.replace("T", " ").rstrip("Z"))),
        ("Target", get(lambda r: r.target)),
        ("Devices", get(lambda r: _devices(r.machine.get("devices")))),
        ("Telemetry interval", get(lambda r: f"{r.telemetry_interval_s:g} s" if r.telemetry_interval_s else None)),
        ("Power scope", get(lambda r: r.power_scope)),
        ("Replication", get(lambda r: r.replication)),
        ("Filesystem", get(lambda r: _filesystem(r.machine.get("filesystem")))),
        ("Zoned stack", get(lambda r: r.zoned.get("summary") if r.zoned else None)),
        ("CPU", get(lambda r: r.machine.get("cpu_model"))),
        ("Cores", get(lambda r: r.machine.get("cores"))),
        ("Memory", get(lambda r: f"{float(r.machine['memory_gb']):,.4g} GB" if r.machine.get("memory_gb") else None)),
        ("Kernel", get(lambda r: r.machine.get("kernel"))),
    ]
    fields += engine_rows(runs, get, lambda r: software_rows(r.software))
    fields += [
        ("Java", get(java)),
        ("Python", get(lambda r: r.software.get("python"))),
        ("storbench", get(lambda r: r.software.get("storbench"))),
    ]
    fields += engine_rows(runs, get, lambda r: settings_rows(r.engine_settings))
    ruled = list(dict.fromkeys(w for r in runs for w in r.window_rules))
    fields += [
        (
            f"Window {w}",
            get(
                lambda r, w=w: (
                    ", ".join(f"{k}={v}" for k, v in r.window_rules[w].items()) if w in r.window_rules else None
                )
            ),
        )
        for w in ruled
    ]
    fields += config_fields(comparison)
    unique = ("Label", "Run id", "Started (UTC)")  # differ between any two runs by nature
    return [(name, values, name not in unique and len(set(values)) > 1) for name, values in fields if any(values)]


def title(comparison: Comparison) -> str:
    base = comparison.baseline
    suite = base.suite + (f" (paper {base.paper})" if base.paper else "")
    if len(comparison.runs) == 1:
        return f"storbench run report: {base.name}, suite {suite}"
    others = ", ".join(r.name for r in comparison.runs[1:])
    return f"storbench comparison: {others} vs {base.name} (baseline), suite {suite}"

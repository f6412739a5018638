"""Load suites from YAML (built-in by name, or a file path) with errors that name file and key."""

from __future__ import annotations

import difflib
from dataclasses import replace
from pathlib import Path
from typing import Any

import yaml

from storbench.errors import InputError
from storbench.suites.model import Entry, Suite
from storbench.workloads.base import all_workloads, family, get_workload

BUILTIN_DIR = Path(__file__).parent / "builtin"
DEFAULT_SUITE = "spark-transforms"
REQUIRED_SCALES = ("tiny", "small", "paper")
TOP_KEYS = {
    "name": str,
    "description": str,
    "paper": str,
    "repetitions": int,
    "scales": dict,
    "default_scale": str,
    "scale_parameter": str,
    "partition_rows": int,
    "params": dict,
    "prepare": list,
    "workloads": list,
    "sweep": dict,
    "sizes": list,
}
ALONE_SCALE = "defaults"  # a workload alone without --scale: its own parameter defaults


def builtin_suites() -> dict[str, Path]:
    return {path.stem: path for path in sorted(BUILTIN_DIR.glob("*.yaml"))}


def load_suite(name_or_path: str | None) -> Suite:
    name_or_path = name_or_path or DEFAULT_SUITE
    builtins = builtin_suites()
    if name_or_path in builtins:
        path = builtins[name_or_path]
    elif name_or_path.endswith((".yaml", ".yml")) or "/" in name_or_path:
        path = Path(name_or_path)
        if not path.is_file():
            raise InputError(f"suite file {name_or_path!r} does not exist")
    elif name_or_path in all_workloads():
        return workload_suite(name_or_path, builtins)
    else:
        near = difflib.get_close_matches(
            name_or_path, list(dict.fromkeys([*builtins, *all_workloads()])), n=3, cutoff=0.5
        )
        hint = f" (did you mean {' or '.join(near)}?)" if near else ""
        raise InputError(
            f"unknown suite or workload {name_or_path!r}{hint}; built-in suites: {', '.join(builtins)}; "
            f"workloads: `storbench workloads` (or give a path to a .yaml file)"
        )
    return parse_suite(path.read_text(), str(path))


def workload_suite(name: str, builtins: dict[str, Path]) -> Suite:
    """One workload alone, as a one-entry suite made on the fly: its ``after`` workloads first, untimed (teragen
    before terasort), at the workloads' own parameter defaults.

    A scale is a suite's sizing of its paper's experiment and mixes data sizes with the experiment's design
    (cosbench-001's tiny scale is 8 MB objects *and* a drivers sweep 1,2). A workload alone takes nothing from a
    suite unless ``--scale`` asks for one; then only the scale's sizes (the home suite's ``sizes``: the keys
    that say how much data and for how long) come from the first built-in suite that runs it, its family's
    first. ``--set`` wins over both; the run's first line names what differs from the defaults."""
    workload = get_workload(name, "run")
    prepare = [Entry(before) for before in workload.after]
    alone = Suite(
        name=name,
        source=f"workload {name}",
        description=f"{name} alone",
        repetitions=1,
        scales={ALONE_SCALE: {}},
        default_scale=ALONE_SCALE,
        scale_parameter="rows",
        partition_rows=None,
        params={},
        prepare=prepare,
        workloads=[Entry(name)],
        alone=True,
    )
    home_first = sorted(builtins.values(), key=lambda path: path.stem != family(type(workload)))  # its family's
    for path in home_first:
        home = parse_suite(path.read_text(), str(path))
        if name in {entry.workload for entry in home.entries()}:
            sizes = set(home.sizes) & set(alone.declared_params())
            return replace(
                alone,
                source=f"workload {name} (sizes of suite {home.name})",
                home=home.name,
                scale_parameter=home.scale_parameter,
                partition_rows=home.partition_rows,
                scales={
                    ALONE_SCALE: {},
                    **{scale: {k: v for k, v in values.items() if k in sizes} for scale, values in home.scales.items()},
                },
            )
    return alone


def parse_suite(text: str, source: str) -> Suite:
    try:
        data = yaml.safe_load(text)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f"{source}:{mark.line + 1}" if mark else source
        raise InputError(f"{where}: not valid YAML ({getattr(exc, 'problem', exc)})") from None
    if not isinstance(data, dict):
        raise InputError(f"{source}: a suite is a mapping with keys {', '.join(TOP_KEYS)}")
    for key, value in data.items():
        if key not in TOP_KEYS:
            raise InputError(f"{source}: unknown key {key!r}; allowed: {', '.join(TOP_KEYS)}")
        expected = TOP_KEYS[key]
        if expected is str and isinstance(value, (int, float)):
            value = data[key] = str(value)
        if not isinstance(value, expected) or (expected is int and isinstance(value, bool)):
            raise InputError(f"{source}: key {key!r} must be a {expected.__name__}, got {type(value).__name__}")
    for key in ("name", "workloads"):
        if key not in data:
            raise InputError(f"{source}: missing required key {key!r}")
    repetitions = data.get("repetitions", 1)
    if repetitions < 1:
        raise InputError(f"{source}: repetitions must be at least 1, got {repetitions}")
    scales = data.get("scales") or {"tiny": {}}
    for scale, values in scales.items():
        if not isinstance(values, dict):
            raise InputError(f"{source}: scales.{scale} must be a mapping of parameter: value")
    default_scale = data.get("default_scale", "tiny")
    scale_parameter = data.get("scale_parameter", "rows")
    if default_scale not in scales:
        raise InputError(f"{source}: default_scale {default_scale!r} is not one of the scales: {', '.join(scales)}")
    unscaled = [
        key
        for key in data.get("sizes") or []
        if key != scale_parameter and not any(key in values for values in scales.values())
    ]
    if unscaled:
        raise InputError(f"{source}: sizes names {', '.join(map(str, unscaled))}, which no scale sets")
    if source.startswith(str(BUILTIN_DIR)):
        missing = [s for s in REQUIRED_SCALES if s not in scales]
        if missing:
            raise InputError(f"{source}: built-in suites must define scales {', '.join(missing)}")
    suite = Suite(
        name=data["name"],
        source=source,
        description=data.get("description", ""),
        repetitions=repetitions,
        scales=scales,
        default_scale=default_scale,
        scale_parameter=scale_parameter,
        partition_rows=data.get("partition_rows"),
        params=data.get("params") or {},
        prepare=_entries(data.get("prepare") or [], source, "prepare"),
        workloads=_entries(data["workloads"], source, "workloads"),
        paper=data.get("paper", ""),
        sweep=data.get("sweep") or {},
        sizes=[str(key) for key in data.get("sizes") or [scale_parameter]],
    )
    if not suite.workloads:
        raise InputError(f"{source}: 'workloads' is empty; list at least one workload")
    suite.instances()  # unknown workload names fail here, naming the file
    return suite


def _entries(items: list[Any], source: str, key: str) -> list[Entry]:
    entries = []
    for index, item in enumerate(items):
        if isinstance(item, str):
            entries.append(Entry(item))
        elif isinstance(item, dict) and "workload" in item and set(item) <= {"workload", "params"}:
            entries.append(Entry(str(item["workload"]), dict(item.get("params") or {})))
        else:
            raise InputError(
                f"{source}: {key}[{index}] must be a workload name or {{workload: NAME, params: {{...}}}}, got {item!r}"
            )
    return entries

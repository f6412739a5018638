"""Sweeps: the same suite at several settings in one run ("right-sizing", paper 001).

A suite's ``sweep:`` (or ``--sweep key=v1,v2``) names one key and its values:
- ``cores``: the Spark cores, ``local[N]`` on a local master, ``spark.cores.max`` elsewhere;
- any ``spark.*`` setting (a new Spark session per value);
- any workload parameter (for example ``size_bytes`` for several scale factors).
Each point runs the whole suite; its samples carry the label ``{key: value}``, so
reports show one row per point (time vs cores, per scale factor, ...); a secret setting's
points are labelled ``***1``, ``***2``, ... (storbench.redaction).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from storbench.errors import InputError
from storbench.redaction import MASK, is_secret_name


@dataclass(frozen=True)
class Point:
    labels: dict[str, str] = field(default_factory=dict)  # {} when there is no sweep
    params: dict[str, Any] = field(default_factory=dict)  # workload parameter overrides
    spark_conf: dict[str, str] = field(default_factory=dict)
    master: str | None = None  # a different Spark master (cores on local masters)


def parse_sweep_option(text: str) -> dict[str, list[str]]:
    key, sep, values = text.partition("=")
    items = [v.strip() for v in values.split(",") if v.strip()]
    if not sep or not key.strip() or not items:
        raise InputError(f"--sweep {text!r}: expected KEY=V1,V2,... e.g. cores=1,2 or size_bytes=1G,2G")
    return {key.strip(): items}


def sweep_points(sweep: dict[str, list[Any]] | None, declared: dict[str, Any], master: str,
                 where: str) -> list[Point]:
    """The points of a sweep; ``declared`` maps workload parameter names to their Param (for coercion)."""
    if not sweep:
        return [Point()]
    if len(sweep) != 1:
        raise InputError(f"{where}: sweep one key at a time (change one variable, as the papers do); "
                         f"got {', '.join(sweep)}")
    (key, values), = sweep.items()
    if not isinstance(values, list) or not values:
        raise InputError(f"{where}: sweep.{key} must be a non-empty list of values")
    if key == "cores":
        cores = [_positive_int(v, where) for v in values]
        if master.startswith("local"):
            return [Point({"cores": str(n)}, master=f"local[{n}]") for n in cores]
        return [Point({"cores": str(n)}, spark_conf={"spark.cores.max": str(n)}) for n in cores]
    shown = _shown(key, values)
    if key.startswith("spark."):
        return [Point({key: label}, spark_conf={key: str(v)}) for label, v in zip(shown, values)]
    if key in declared:
        return [Point({key: label}, params={key: declared[key].coerce(v, where)}) for label, v in zip(shown, values)]
    raise InputError(f"{where}: cannot sweep {key!r}; allowed: cores, a spark.* setting, or a parameter: "
                     f"{', '.join(sorted(declared))}")


def _shown(key: str, values: list[Any]) -> list[str]:
    """The label of each point. A secret setting's values are never shown: ``***1``, ``***2``, ... by
    position keep the points apart in reports without revealing anything (a hash could be guessed)."""
    if is_secret_name(key):
        return [f"{MASK}{n}" for n in range(1, len(values) + 1)]
    return [str(v) for v in values]


def _positive_int(value: Any, where: str) -> int:
    try:
        number = int(value)
    except (TypeError, ValueError):
        number = 0
    if number < 1:
        raise InputError(f"{where}: sweep cores value {value!r} must be a positive integer")
    return number

"""Sweeps: the same suite at several settings in one run ("right-sizing", paper 001).

A suite's ``sweep:`` (or ``--sweep key=v1,v2``) names one key and its values: a key an engine owns (its
``Engine.sweep``: the engine restarts with each point's options) or any workload parameter (for example
``size_bytes`` for several scale factors). Each point runs the whole suite; its samples carry the label
``{key: value}``, so reports show one row per point (time vs cores, per scale factor, ...); a secret
setting's points are labelled ``***1``, ``***2``, ... (storbench.redaction).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from storbench.engines.lifecycle import engine_sweep
from storbench.errors import InputError
from storbench.redaction import MASK, is_secret_name


@dataclass(frozen=True)
class Point:
    labels: dict[str, str] = field(default_factory=dict)  # {} when there is no sweep
    params: dict[str, Any] = field(default_factory=dict)  # workload parameter overrides
    engine_options: dict[str, Any] = field(default_factory=dict)  # engine option overrides (a restart)

    @property
    def text(self) -> str:
        return ", ".join(f"{key}={value}" for key, value in self.labels.items())


def parse_sweep_option(text: str) -> dict[str, list[str]]:
    key, sep, values = text.partition("=")
    items = [v.strip() for v in values.split(",") if v.strip()]
    if not sep or not key.strip() or not items:
        raise InputError(f"--sweep {text!r}: expected KEY=V1,V2,... e.g. cores=1,2 or size_bytes=1G,2G")
    return {key.strip(): items}


def sweep_points(sweep: dict[str, list[Any]] | None, declared: dict[str, Any], engine_options: dict[str, Any],
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
    shown = _shown(key, values)
    owned, engine_keys = engine_sweep(key, values, engine_options, where)
    if owned is not None:
        return [Point({key: label}, engine_options=point) for label, point in zip(shown, owned)]
    if key in declared:
        return [Point({key: label}, params={key: declared[key].coerce(v, where)}) for label, v in zip(shown, values)]
    raise InputError(f"{where}: cannot sweep {key!r}; allowed: {', '.join(engine_keys)}, or a parameter: "
                     f"{', '.join(sorted(declared))}")


def _shown(key: str, values: list[Any]) -> list[str]:
    """The label of each point. A secret setting's values are never shown: ``***1``, ``***2``, ... by
    position keep the points apart in reports without revealing anything (a hash could be guessed)."""
    if is_secret_name(key):
        return [f"{MASK}{n}" for n in range(1, len(values) + 1)]
    return [str(v) for v in values]

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
    items = [v.strip() for v in values.split(",")]
    if not sep or not key.strip() or not any(items):
        raise InputError(f"--sweep {text!r}: expected KEY=V1,V2,... e.g. cores=1,2 or size_bytes=1G,2G")
    if "" in items:  # `rows=1000,,2000` is a typo, not a point at the default
        raise InputError(f"--sweep {text!r}: value {items.index('') + 1} is empty; give every point a value")
    return {key.strip(): items}


def parse_sweep_options(texts: list[str]) -> dict[str, list[str]]:
    """Every ``--sweep`` of the command line, one key each: a key given twice is refused (the second does not
    replace the first); two keys are passed on, for :func:`sweep_points` to refuse (one key at a time)."""
    sweep: dict[str, list[str]] = {}
    for text in texts:
        ((key, values),) = parse_sweep_option(text).items()
        if key in sweep:
            raise InputError(
                f"--sweep {key}: given twice ({key}={','.join(sweep[key])} and {key}={','.join(values)})"
                f"; give one --sweep {key}=V1,V2,... with every value"
            )
        sweep[key] = values
    return sweep


def sweep_points(
    sweep: dict[str, list[Any]] | None,
    declared: dict[str, Any],
    engine_options: dict[str, Any],
    where: str,
    engines: list[str] | None = None,
) -> list[Point]:
    """The points of a sweep; ``declared`` maps workload parameter names to their Param (for coercion);
    ``engines``: the engines the run uses (default: every engine), the only ones whose keys it may sweep."""
    if not sweep:
        return [Point()]
    if len(sweep) != 1:
        raise InputError(
            f"{where}: sweep one key at a time (change one variable, as the papers do); got {', '.join(sweep)}"
        )
    ((key, values),) = sweep.items()
    if not isinstance(values, list) or not values:
        raise InputError(f"{where}: sweep.{key} must be a non-empty list of values")
    shown = _shown(key, values)
    owned, engine_keys, elsewhere = engine_sweep(key, values, engine_options, where, engines)
    if owned is not None:
        points = [Point({key: label}, engine_options=point) for label, point in zip(shown, owned)]
    elif key in declared:
        points = [Point({key: label}, params={key: declared[key].coerce(v, where)}) for label, v in zip(shown, values)]
    else:
        unused = f" ({key} is the {elsewhere} engine's, which this run does not use)" if elsewhere else ""
        params = f"a parameter: {', '.join(sorted(declared))}"
        allowed = f"{', '.join(engine_keys)}, or {params}" if engine_keys else params
        raise InputError(f"{where}: cannot sweep {key!r}{unused}; allowed: {allowed}")
    _refuse_repeats(key, shown, [(p.params, p.engine_options) for p in points], where)
    return points


def _refuse_repeats(key: str, shown: list[str], settings: list[Any], where: str) -> None:
    """Two points that run the same setting (``rows=1000,1000``, or ``1K`` and ``1000``) are refused."""
    for n, setting in enumerate(settings):
        if setting in settings[:n]:
            first = settings.index(setting)
            raise InputError(
                f"{where}: sweep {key}: point {n + 1} ({shown[n]}) repeats point {first + 1} "
                f"({shown[first]}); each point needs its own value"
            )


def _shown(key: str, values: list[Any]) -> list[str]:
    """The label of each point. A secret setting's values are never shown: ``***1``, ``***2``, ... by
    position keep the points apart in reports without revealing anything (a hash could be guessed)."""
    if is_secret_name(key):
        return [f"{MASK}{n}" for n in range(1, len(values) + 1)]
    return [str(v) for v in values]

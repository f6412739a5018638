"""Report formats found by registration: a format is one module of this package that registers its renderer.

::

    @register("md", "GitHub Markdown", aliases=("markdown",))
    def render_markdown(comparison: Comparison) -> str: ...

``--format``'s choices are the listed formats (``all_formats``); ``summary`` and ``verdict`` are what
``run`` prints itself and are not listed. A format that draws the runs' telemetry series says
``series=True`` and is given a ``series_loader(run) -> (rows, windows)``.
"""

from __future__ import annotations

import importlib
import pkgutil
import sys
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Callable

from storbench.errors import InputError

if TYPE_CHECKING:
    from storbench.analysis.model import Comparison
    from storbench.results.model import Run

SeriesLoader = Callable[["Run"], "tuple[list[dict[str, Any]], list[dict[str, Any]]]"]


@dataclass(frozen=True)
class Format:
    name: str
    help: str
    renderer: Callable[..., str]  # (comparison) or, with series, (comparison, series_loader)
    aliases: tuple[str, ...] = ()
    listed: bool = True  # a --format choice
    series: bool = False  # draws the runs' telemetry series: takes a series_loader

    def render(self, comparison: "Comparison", series_loader: SeriesLoader | None = None) -> str:
        return self.renderer(comparison, series_loader) if self.series else self.renderer(comparison)


_FORMATS: dict[str, Format] = {}


def register(
    name: str, help: str, *, aliases: tuple[str, ...] = (), listed: bool = True, series: bool = False
) -> Callable[[Callable[..., str]], Callable[..., str]]:
    """Decorator: the function renders format ``name`` (and its ``aliases``); a name taken twice fails at import."""

    def add(renderer: Callable[..., str]) -> Callable[..., str]:
        for key in (name, *aliases):
            known = _FORMATS.get(key)
            if known is not None and known.renderer is not renderer:
                raise RuntimeError(
                    f"report format {key!r} registered twice ({known.renderer.__module__} and {renderer.__module__})"
                )
        entry = Format(name, help, renderer, tuple(aliases), listed, series)
        _FORMATS.update(dict.fromkeys((name, *aliases), entry))
        return renderer

    return add


def _discover() -> None:
    """Import every module of this package once: their ``@register`` lines fill the registry."""
    package = __name__.rpartition(".")[0]  # imported before this module; naming it in an import would be a circle
    for module in pkgutil.iter_modules(sys.modules[package].__path__):
        importlib.import_module(f"{package}.{module.name}")


def all_formats() -> dict[str, Format]:
    """The ``--format`` choices by name, in name order (aliases and unlisted formats left out)."""
    _discover()
    return {name: entry for name, entry in sorted(_FORMATS.items()) if entry.listed and name == entry.name}


def find(fmt: str) -> Format:
    _discover()
    if fmt not in _FORMATS:
        raise InputError(f"--format {fmt!r}: allowed: {', '.join(all_formats())}")
    return _FORMATS[fmt]


def render(comparison: "Comparison", fmt: str, series_loader: SeriesLoader | None = None) -> str:
    return find(fmt).render(comparison, series_loader)

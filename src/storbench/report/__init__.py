"""Reports of a :class:`~storbench.analysis.model.Comparison`, one module per format, found by registration.

``render(comparison, fmt)`` with ``fmt`` one of ``FORMATS`` (``table`` for a terminal, ``md``, ``json``,
``csv``, ``html``, and whatever module registers another: registry.py). For a format that draws
telemetry (``html``) a ``series_loader(run) -> (rows, windows)`` adds the time series of each run.
"""

from __future__ import annotations

from typing import Any

from storbench.report.registry import Format, SeriesLoader, all_formats, find, register, render

__all__ = ["FORMATS", "Format", "SeriesLoader", "all_formats", "find", "register", "render"]


def __getattr__(name: str) -> Any:
    """``FORMATS``: the --format choices, found when first asked for (importing the package stays cheap)."""
    if name == "FORMATS":
        return tuple(all_formats())
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")

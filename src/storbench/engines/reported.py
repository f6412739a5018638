"""What a report shows of the engines, read from a stored manifest: each ``ReportedSettings`` engine's rows.

Every engine with report rows is asked for every run, whichever engines it used (a run's manifest records every
engine's options), so a stored run's report reads the same as before the rows moved into the engines.
"""

from __future__ import annotations

from typing import Any

from storbench.engines.capabilities import ReportedSettings
from storbench.engines.lifecycle import engines_with


def report_settings(manifest: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """{engine: the settings a report keeps of it} (never a secret), as the comparison's JSON form holds them."""
    return {engine.name: engine.report_settings(manifest) for engine in engines_with(ReportedSettings)}


def software_rows(software: dict[str, Any]) -> dict[str, Any]:
    """{row name: version} of the engines' own software (the shared runtime rows follow them)."""
    return {
        row: value for engine in engines_with(ReportedSettings) for row, value in engine.software_rows(software).items()
    }


def settings_rows(settings: dict[str, dict[str, Any]]) -> dict[str, Any]:
    """{row name: value} of the engines' settings, from ``report_settings``' form."""
    return {
        row: value
        for engine in engines_with(ReportedSettings)
        for row, value in engine.settings_rows(settings.get(engine.name) or {}).items()
    }

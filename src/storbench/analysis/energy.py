"""Energy figures carry their power scope, and runs of different scopes are not compared on them.

A RAPL run measured the CPU package; a PSU run (IPMI DCMI, Redfish) the whole node; a wall meter more
still. "16× more operations per watt" between them would compare different parts of the machine, so each
energy row (``ENERGY_METRICS``) gets its runs' scopes (shown after its title), and when they differ, or
one is unknown, its deltas say "not comparable (power scope)" instead of a change: no headline comes from
it. One warning line says why. The runs' other figures compare as before.
"""

from __future__ import annotations

from storbench.analysis.model import Delta, Row
from storbench.results.model import Run

NOT_COMPARABLE = "not comparable (power scope)"


def run_scope(manifest: dict) -> str | None:
    """The run's power scope in words (its configuration's "Power scope"), or None without power."""
    from storbench.telemetry.power.scope import run_scope_text  # here: telemetry.power is slow to import

    return run_scope_text(manifest)


def _row_scopes(records: list[dict], row: Row) -> list[tuple[str | None, str | None]]:
    """(scope key, words) per run for the row's node label (None: the unlabelled row)."""
    from storbench.telemetry.power.scope import scope_key, scope_text  # here: telemetry.power is slow to import

    label = row.labels.get("node") if set(row.labels) <= {"node"} else None
    return [(scope_key(r.get(label)), scope_text(r.get(label))) for r in records]


def mark_energy_rows(runs: list[Run], names: list[str], rows: list[Row]) -> str | None:
    """Sets ``scopes`` on every energy row; rows whose measured runs differ in scope get "not comparable" deltas.
    Returns the warning line, or None when every energy row compares."""
    from storbench.telemetry.power.scope import ENERGY_METRICS, UNKNOWN, node_records, run_scope_text

    records = [node_records(run.manifest) for run in runs]
    refused = False
    for row in rows:
        if row.metric not in ENERGY_METRICS:
            continue
        scopes = _row_scopes(records, row)
        row.scopes = [text for _, text in scopes]
        measured = [key for (key, _), cell in zip(scopes, row.cells) if cell.aggregate is not None]
        if len(measured) > 1 and (len(set(measured)) > 1 or UNKNOWN in measured):
            refused = True
            row.deltas = [None] + [
                Delta(i, None, None, NOT_COMPARABLE, "n/a", None, None, None, None, "n/a") for i in range(1, len(runs))
            ]
    if not refused:
        return None
    said = ", ".join(f"{name}: {run_scope_text(run.manifest) or 'none'}" for name, run in zip(names, runs))
    return (
        f"energy figures NOT COMPARABLE: power scope {said}; different parts of the machine or an unknown one, "
        f"so energy, watt and per-watt rows are not compared (the other figures are)"
    )

"""The listing commands: `runs`, `workloads`, `suites` (plain columns, or JSON with --json)."""

from __future__ import annotations

import argparse
import json
from typing import Any

from storbench import api
from storbench.errors import ResultsError
from storbench.results.store import ResultStore


def cmd_runs(args: argparse.Namespace, store: ResultStore) -> int:
    runs = api.list_runs(store, args.label, brief=True)  # the index's summary: no manifest read
    if args.label and not runs:
        raise ResultsError(f"no run with label {args.label!r} in {store.where}; labels: {store.known_labels()}")
    if args.json:
        print(
            json.dumps(
                [
                    {
                        "run_id": r.run_id,
                        "label": r.label,
                        "suite": r.suite,
                        "status": r.status,
                        "started": r.started,
                        "scale": r.manifest.get("scale"),
                        "target": r.manifest.get("config", {}).get("target"),
                        "host": r.host,
                        "path": r.path,
                    }
                    for r in runs
                ],
                indent=2,
            )
        )
        return 0
    if not runs:
        print(f"no runs stored in {store.where}")
        return 0
    shared = store.index.shared  # runs of many machines: say which one holds each run directory
    rows = [("RUN ID", "LABEL", "SUITE", "SCALE", "STATUS", "STARTED", "TARGET", *(("HOST",) if shared else ()))]
    # str(): an imported manifest may hold None (or anything) where a run of this version writes text
    rows += [
        tuple(
            str(cell or "")
            for cell in (
                r.run_id,
                r.label,
                r.suite,
                r.manifest.get("scale"),
                r.status,
                r.started,
                (r.manifest.get("config") or {}).get("target"),
                *((r.host,) if shared else ()),
            )
        )
        for r in runs
    ]
    print(_columns(rows))
    return 0


def _print_listing(args: argparse.Namespace, items: list[dict[str, Any]], lines: Any) -> int:
    """``--json``: the items as JSON; otherwise the text ``lines(item)`` gives for each."""
    print(json.dumps(items, indent=2) if args.json else "\n".join(line for item in items for line in lines(item)))
    return 0


def _workload_lines(workload: dict[str, Any]) -> list[str]:
    lines = [f"{workload['name']} (v{workload['version']}, {workload['engine']}): {workload['description']}"]
    for param in workload["params"]:
        choices = f" [{'|'.join(map(str, param['choices']))}]" if param["choices"] else ""
        lines.append(f"    {param['name']} = {param['default']!r}{choices}  {param['help']}")
    return lines


def _suite_lines(suite: dict[str, Any]) -> list[str]:
    paper = f" (paper {suite['paper']})" if suite["paper"] else ""
    return [
        f"{suite['name']}{paper}: {' → '.join(suite['workloads'])}; "
        f"{suite['repetitions']} repetitions; scales {', '.join(suite['scales'])}"
    ]


def cmd_workloads(args: argparse.Namespace, store: ResultStore) -> int:
    if args.name:
        return _print_listing(args, api.list_workloads(args.name), _workload_detail_lines)
    return _print_listing(args, api.list_workloads(), _workload_lines)


def _workload_detail_lines(workload: dict[str, Any]) -> list[str]:
    lines = _workload_lines(workload)
    lines[1:1] = ["  parameters (--set KEY=VALUE):"]
    if workload["after"]:
        lines.append(f"  run alone, it first runs (untimed): {', '.join(workload['after'])}")
    lines.append("  metrics (besides time, device, CPU and network telemetry):")
    lines += [f"    {m['name']}  {m['title']} ({m['unit']}, {m['direction']})" for m in workload["metrics"]]
    lines.append(f"  run it: storbench run {workload['name']} [--set KEY=VALUE] [--target ...]")
    return lines


def cmd_suites(args: argparse.Namespace, store: ResultStore) -> int:
    return _print_listing(args, api.list_suites(), _suite_lines)


def _columns(rows: list[tuple[str, ...]]) -> str:
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]))]
    return "\n".join("  ".join(cell.ljust(width) for cell, width in zip(row, widths)).rstrip() for row in rows)

"""The commands on stored runs: `compare`, `show`, `cleanup`, `import`, `baselines`, `grafana` (`services`:
services_command)."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from storbench import api
from storbench.errors import InputError
from storbench.results.store import ResultStore
from storbench.run.metrics_server import grafana_dashboard


def _write(flag: str, path: str, text: str) -> None:
    try:
        Path(path).write_text(text)
    except OSError as exc:  # a missing or read-only directory: one line, not a traceback
        raise InputError(f"{flag} {path}: cannot write it ({exc.strerror})") from None


def cmd_compare(args: argparse.Namespace, store: ResultStore) -> int:
    refs, paper = api.paper_refs(args.refs, args.paper)
    if paper and args.format != "table":
        raise InputError(
            f"compare: paper {paper}'s figures show in the table (--format table) and in the HTML "
            f"report of its suite's runs, not in --format {args.format}"
        )
    comparison = api.compare(refs, store, force=args.force)
    text = api.render(comparison, args.format, store)
    text += api.beside_paper(comparison, paper) if args.format == "table" else ""
    if args.output:
        _write("--output", args.output, text)
    if args.html:  # files first: a refused one leaves only its error line
        _write("--html", args.html, api.render(comparison, "html", store))
    print(f"wrote {args.output}" if args.output else text)
    if args.html:
        print(f"wrote {args.html}", file=sys.stderr)
    return 0


def cmd_cleanup(args: argparse.Namespace, store: ResultStore) -> int:
    done = api.cleanup_run(args.run_id, store, args.endpoint)
    for path in done.get("scratch_removed", []):
        print(f"removed {path} (its private scratch directory)")
    if done["removed"]:
        print(f"removed {done['root']}")
    if done["crashed"]:  # its process died: now finished, as crashed
        print(f"run {done['run_id']}: crashed (its process ended before the run finished); finished by cleanup")
    elif not done["removed"] and not done.get("scratch_removed"):
        print(f"run {done['run_id']}: {done['status']}, nothing of it left on its target: nothing to do")
    return 0


def cmd_import(args: argparse.Namespace, store: ResultStore) -> int:
    run = api.import_run(args.run_dir, store)
    print(
        f"indexed run {run.run_id} ({run.label}, {run.suite}, {run.status}, {len(run.samples)} samples) "
        f"in {store.where}"
    )
    return 0


def cmd_show(args: argparse.Namespace, store: ResultStore) -> int:
    print(api.render(api.compare([args.run_id], store), args.format, store))
    return 0


def cmd_baselines(args: argparse.Namespace, store: ResultStore) -> int:
    print(api.baselines_text(args.paper))
    return 0


def cmd_grafana(args: argparse.Namespace, store: ResultStore) -> int:
    path = grafana_dashboard()
    print(path if args.path else path.read_text(), end="\n" if args.path else "")
    return 0

"""The library entry points; the CLI and the tests call these and nothing deeper."""

from __future__ import annotations

import difflib

from pathlib import Path
from typing import Any

from storbench.errors import InputError, TargetError
from storbench.s3client import S3Error
from storbench.targets.base import MARKER
from storbench.progress import Progress
from storbench.results.model import Run
from storbench.results.store import ResultStore
from storbench.report import FORMATS as REPORT_FORMATS
from storbench.run import RunOptions, RunOutcome
from storbench.run import run as run_suite
from storbench.suites import builtin_suites, load_suite
from storbench.workloads import all_workloads


def run(options: RunOptions, store: ResultStore | None = None, progress: Progress | None = None) -> RunOutcome:
    return run_suite(options, store or ResultStore(), progress or Progress())


def list_runs(store: ResultStore | None = None, label: str | None = None) -> list[Run]:
    return (store or ResultStore()).list_runs(label)


def import_run(run_dir: str | Path, store: ResultStore | None = None) -> Run:
    """Index a run directory's manifest and samples in ``store`` (idempotent)."""
    return (store or ResultStore()).import_run(run_dir)


def list_workloads(name: str | None = None) -> list[dict[str, Any]]:
    """Every workload (or the one named: an unknown name is one line listing the nearest), with its parameters
    and the metrics it reports beyond the shared telemetry."""
    found = all_workloads()
    if name is not None:
        if name not in found:
            near = difflib.get_close_matches(name, list(found), n=3, cutoff=0.5)
            hint = f" (did you mean {' or '.join(near)}?)" if near else ""
            raise InputError(f"unknown workload {name!r}{hint}; allowed: {', '.join(sorted(found))}")
        found = {name: found[name]}
    return [{"name": key, "version": cls.version, "engine": cls.engine, "description": cls.description,
             "after": list(cls.after),
             "params": [{"name": p.name, "type": p.type.__name__, "default": p.default, "help": p.help,
                         "choices": list(p.choices) if p.choices else None} for p in cls.params],
             "metrics": [{"name": m.name, "title": m.title, "unit": m.unit, "direction": m.direction}
                         for m in cls.metrics]}
            for key, cls in sorted(found.items())]


def list_suites() -> list[dict[str, Any]]:
    suites = []
    for name in builtin_suites():
        suite = load_suite(name)
        suites.append({"name": name, "paper": suite.paper, "description": suite.description,
                       "repetitions": suite.repetitions, "scales": suite.scales,
                       "workloads": [e.workload for e in suite.entries()]})
    return suites


def compare(refs: list[str], store: ResultStore | None = None, force: bool = False) -> Any:
    """Compare the runs named by ``refs`` (labels mean their latest run); the first is the baseline.

    Runs of different suites are refused unless ``force``: their headlines would compare unlike things."""
    from storbench.analysis.compare import compare_runs

    store = store or ResultStore()
    if not refs:
        raise InputError("compare: name at least one label or run id (see `storbench runs`)")
    runs = [store.resolve(ref) for ref in refs]
    other = next((run for run in runs[1:] if run.suite != runs[0].suite), None)
    if other is not None and not force:
        raise InputError(f"compare: {runs[0].label} is a {runs[0].suite} run and {other.label} a {other.suite} "
                         f"run: runs of different suites are not comparable; pass --force to compare anyway")
    return compare_runs(runs)


def render(comparison: Any, fmt: str, store: ResultStore | None = None) -> str:
    from storbench import report

    if fmt not in (*REPORT_FORMATS, "summary"):
        raise InputError(f"--format {fmt!r}: allowed: {', '.join(REPORT_FORMATS)}")
    store = store or ResultStore()
    loader = (lambda run: (store.load_series(run), store.load_windows(run))) if fmt == "html" else None
    return report.render(comparison, fmt, series_loader=loader)


def service_up(name: str, store: ResultStore | None = None, **options: Any) -> dict[str, Any]:
    """Start a real local service (``hdfs``) under the results home; returns its state (URI, PID, dirs)."""
    from storbench.services import service_up as up

    return up(name, (store or ResultStore()).home, **options)


def service_down(name: str, store: ResultStore | None = None) -> bool:
    from storbench.services import service_down as down

    return down(name, (store or ResultStore()).home)


def service_status(name: str, store: ResultStore | None = None) -> dict[str, Any] | None:
    from storbench.services import service_status as status

    return status(name, (store or ResultStore()).home)


def write_run_report(run_id: str, store: ResultStore | None = None) -> Path:
    """The HTML and Markdown report of one run, written into its run directory."""
    store = store or ResultStore()
    comparison = compare([run_id], store)
    run_dir = store.runs_dir / run_id
    (run_dir / "report.md").write_text(render(comparison, "md", store))
    path = run_dir / "report.html"
    path.write_text(render(comparison, "html", store))
    return path


def cleanup_run(ref: str, store: ResultStore | None = None, endpoint: str | None = None) -> str:
    """What a run could not remove (its target was down): its run root, deleted now if its marker still names
    that run. Returns the root removed; an InputError says why nothing was."""
    from storbench.targets import TargetOptions, parse_target

    store = store or ResultStore()
    run = store.resolve(ref)
    if run.host and run.host != store.host:
        raise InputError(f"run {run.run_id} ran on {run.host}: its target is reached from there; "
                         f"run `storbench cleanup {run.run_id}` on {run.host}")
    config = run.manifest.get("config", {})
    root, text = config.get("run_root"), config.get("target")
    if not root or not text:
        raise InputError(f"run {run.run_id}: nothing to clean up (no run root on its target {text or 'none'})")
    target = parse_target(text, TargetOptions(store.home, config.get("replication"), endpoint))
    target.run_id, target.root_uri = run.run_id, root
    if root.startswith("hdfs://"):
        raise InputError(f"run {run.run_id}: an hdfs:// run root is removed through Spark; remove {root} with "
                         f"`hdfs dfs -rm -r` after checking its {MARKER} names {run.run_id}")
    try:
        released = target.release_root()
    except (OSError, S3Error) as exc:
        raise TargetError(f"run {run.run_id}: could not remove {root} ({exc}); nothing removed, try again when "
                          f"the target answers") from None
    if not released:
        raise InputError(f"run {run.run_id}: {root} is gone or its marker does not name this run; nothing removed")
    return root

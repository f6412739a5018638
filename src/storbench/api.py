"""The library entry points; the CLI and the tests call these and nothing deeper."""

from __future__ import annotations

import difflib

from pathlib import Path
from typing import Any

from storbench import scratch
from storbench.errors import InputError, TargetError
from storbench.s3client import S3Error
from storbench.targets.base import GONE, MARKER, OTHER
from storbench.progress import Progress
from storbench.results import liveness
from storbench.results.model import Run
from storbench.results.store import ResultStore
from storbench.report import FORMATS as REPORT_FORMATS  # noqa: F401 - the CLI's --format choices
from storbench.run import RunOptions, RunOutcome
from storbench.run import run as run_suite
from storbench.run import run_experiment
from storbench.suites import builtin_suites, load_suite
from storbench.workloads import all_workloads


def run(options: RunOptions, store: ResultStore | None = None, progress: Progress | None = None) -> RunOutcome:
    from storbench.analysis.precision import enough  # --repeat auto's rule: the run core knows no statistics

    return run_suite(options, store or ResultStore(), progress or Progress(), enough)


def run_interleaved(
    configurations: list[RunOptions],
    store: ResultStore | None = None,
    progress: Progress | None = None,
    order: str = "alternate",
) -> list[RunOutcome]:
    """Two or more configurations of one suite, repetition by repetition in rounds (storbench.run.experiment);
    one run each, linked as one experiment."""
    from storbench.analysis.precision import enough

    return run_experiment(configurations, store or ResultStore(), progress or Progress(), order, enough)


def list_runs(store: ResultStore | None = None, label: str | None = None, brief: bool = False) -> list[Run]:
    return (store or ResultStore()).list_runs(label, brief)


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
    return [
        {
            "name": key,
            "version": cls.version,
            "engine": cls.engine,
            "description": cls.description,
            "after": list(cls.after),
            "params": [
                {
                    "name": p.name,
                    "type": p.type.__name__,
                    "default": p.default,
                    "help": p.help,
                    "choices": list(p.choices) if p.choices else None,
                }
                for p in cls.params
            ],
            "metrics": [
                {"name": m.name, "title": m.title, "unit": m.unit, "direction": m.direction} for m in cls.metrics
            ],
        }
        for key, cls in sorted(found.items())
    ]


def list_suites() -> list[dict[str, Any]]:
    suites = []
    for name in builtin_suites():
        suite = load_suite(name)
        suites.append(
            {
                "name": name,
                "paper": suite.paper,
                "description": suite.description,
                "repetitions": suite.repetitions,
                "scales": suite.scales,
                "workloads": [e.workload for e in suite.entries()],
            }
        )
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
        raise InputError(
            f"compare: {runs[0].label} is a {runs[0].suite} run and {other.label} a {other.suite} "
            f"run: runs of different suites are not comparable; pass --force to compare anyway"
        )
    return compare_runs(runs)


def render(comparison: Any, fmt: str, store: ResultStore | None = None) -> str:
    from storbench import report

    chosen = report.find(fmt)  # an unknown one: one line naming the --format choices
    store = store or ResultStore()
    loader = (lambda run: (store.load_series(run), store.load_windows(run))) if chosen.series else None
    return chosen.render(comparison, series_loader=loader)


def paper_refs(refs: list[str], flag: str | None) -> tuple[list[str], str | None]:
    """``compare``'s references split into runs and the paper named by ``paper:NNN`` or ``--paper`` (one at most)."""
    from storbench.baselines import paper_ref

    named = [ref for ref in refs if ref.startswith("paper:")] + ([flag] if flag else [])
    found = list(dict.fromkeys(paper_ref(ref) for ref in named))
    if len(found) > 1:
        raise InputError(f"compare: name one paper to set the runs beside, not {' and '.join(found)}")
    return [ref for ref in refs if not ref.startswith("paper:")], (found[0] if found else None)


def beside_paper(comparison: Any, paper: str | None) -> str:
    """The terminal text of ``comparison`` beside ``paper``'s published figures ("" for none). With no paper
    named: the runs' own paper, when two or more runs of one paper's suites are compared (their ratios)."""
    from storbench.analysis.published import published
    from storbench.baselines import load, papers
    from storbench.report.published import text

    explicit = paper is not None
    if not explicit:
        own = {run.paper for run in comparison.runs}
        paper = own.pop() if len(own) == 1 and len(comparison.runs) > 1 else None
        if paper not in papers():
            return ""
    found = published(comparison, load(paper), explicit)
    return text(comparison, found) if explicit or found.ratios else ""


def baselines_text(paper: str | None = None) -> str:
    """`storbench baselines [PAPER]`: the published figures (a paper with none is one InputError)."""
    from storbench.baselines import paper_ref
    from storbench.report.published import listing

    return listing(paper_ref(paper) if paper else None)


def service_up(name: str, store: ResultStore | None = None, **options: Any) -> dict[str, Any]:
    """Start a real local service (``hdfs``) under the results home; returns its state (URI, PID, dirs)."""
    from storbench.services import service_up as up

    home = (store or ResultStore()).home
    placement = None
    if options.get("lab_cluster"):  # node K in lab host node-K (storbench lab cluster up, same home)
        from storbench.lab.placement import lab_placement

        placement = lab_placement(home, name)
    return up(name, home, placement, **options)


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


def cleanup_run(ref: str, store: ResultStore | None = None, endpoint: str | None = None) -> dict[str, Any]:
    """Finish what a run left: its run root (its target was down at the end, or its process died), deleted if its
    marker still names that run, and a run whose process died recorded as ``crashed``, finished by cleanup.

    Returns {"run_id", "root", "removed", "crashed", "status", "scratch_removed"}: ``removed`` False means nothing
    of the root was left (for a run that finished: nothing to do); ``crashed`` that the run was finished now, as
    crashed; ``scratch_removed`` the private scratch directories of this host the run had made and left (the
    manifest's ``scratch``: only those still storbench's, see :mod:`storbench.scratch`), removed first. An
    InputError says why nothing could be done: the run still runs, runs elsewhere, or its root holds another
    run's marker."""
    from storbench.targets import TargetOptions, parse_target

    store = store or ResultStore()
    run = store.resolve(ref)
    if run.host and run.host != store.host:
        raise InputError(
            f"run {run.run_id} ran on {run.host}: its target is reached from there; "
            f"run `storbench cleanup {run.run_id}` on {run.host}"
        )
    process = run.manifest.get("process") or {}
    if run.status == liveness.RUNNING:
        raise InputError(
            f"run {run.run_id} is still running (pid {process.get('pid')}): stop it first (Ctrl-C, or "
            f"kill -TERM {process.get('pid')}); it removes its own run root as it stops"
        )
    if run.status.startswith(f"{liveness.RUNNING}? (host"):
        raise InputError(
            f"run {run.run_id} ran on {process.get('host')}: whether it still runs is seen there; "
            f"run `storbench cleanup {run.run_id}` on {process.get('host')}"
        )
    crashed = run.status == liveness.CRASHED and run.manifest.get("status") == liveness.RUNNING
    # secrets first: the private scratch directories a killed run could not remove (job files, YCSB's -P file)
    scratch_removed = scratch.remove_left([p for p in run.manifest.get("scratch") or [] if isinstance(p, str)])
    config = run.manifest.get("config", {})
    root, text = config.get("run_root"), config.get("target")
    removed = bool(root and text) and _remove_root(
        run,
        root,
        parse_target(
            text,
            TargetOptions(
                store.home, config.get("replication"), endpoint, cql_insecure=bool(config.get("cql_insecure"))
            ),
        ),
    )  # as the run itself went
    if crashed:
        run = store.finish_crashed(run, root if removed else None)
    return {
        "run_id": run.run_id,
        "root": root,
        "removed": removed,
        "crashed": crashed,
        "status": run.status,
        "scratch_removed": scratch_removed,
    }


def _remove_root(run: Run, root: str, target: Any) -> bool:
    """Delete ``run``'s root if it is still there and marked for it; False when nothing of it is left."""
    target.run_id, target.root_uri = run.run_id, root
    if root.startswith("hdfs://"):
        raise InputError(
            f"run {run.run_id}: an hdfs:// run root is removed through Spark; remove {root} with "
            f"`hdfs dfs -rm -r` after checking its {MARKER} names {run.run_id}"
        )
    try:
        state = target.root_state()
        if state == GONE:
            return False
        if state != OTHER and target.release_root():
            return True
    except (OSError, S3Error) as exc:
        raise TargetError(
            f"run {run.run_id}: could not remove {root} ({exc}); nothing removed, try again when the target answers"
        ) from None
    if state == OTHER:
        raise InputError(f"run {run.run_id}: {root} is there but its {MARKER} does not name this run; nothing removed")
    raise InputError(f"run {run.run_id}: {root} is gone or its marker does not name this run; nothing removed")

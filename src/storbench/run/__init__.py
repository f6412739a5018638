"""The run core: plan → session → loop (rounds: one configuration, or several interleaved).

``plan`` resolves options, suite, scale, sweep and target into a Plan (checked before anything starts);
``session`` owns what the run holds (target claim and release, engines, telemetry, the run directory) and
its ordered cleanup; ``loop`` runs points × prepare steps × warm-ups × repetitions and turns each timed
window into samples. The core speaks only the engine and target protocols and never names an engine.
"""

from __future__ import annotations

import shutil
import tempfile

from storbench.progress import Progress
from storbench.results.store import ResultStore
from storbench.run.experiment import LocalConfiguration, note_auto, run_experiment
from storbench.run.loop import Configuration, run_rounds
from storbench.run.metrics_server import LiveRun, serve
from storbench.run.options import RunOptions, RunOutcome, validate_options
from storbench.run.plan import make_plan
from storbench.run.rounds import Enough, Schedule
from storbench.run.session import RunSession

__all__ = ["RunOptions", "RunOutcome", "run", "run_experiment"]


def run(options: RunOptions, store: ResultStore, progress: Progress, rule: Enough | None = None) -> RunOutcome:
    """One configuration: its repetitions back to back (``rule``: when --repeat auto may stop)."""
    validate_options(options)
    store.check_writable()
    live = LiveRun(progress)
    with serve(live, options.metrics_port, options.metrics_address, progress):  # a port in use: before any work
        temporary = options.target is None
        text = options.target or tempfile.mkdtemp(prefix="storbench-target-")
        try:
            plan = make_plan(options, store.home, text)
            live.planned(plan.run_id, plan.suite.name, options.label, plan.repetitions)
            with RunSession(plan, store, progress, live) as session:
                session.start()
                auto = options.repeat_auto
                schedule = Schedule(1, minimum=auto[0] if auto else None, rule=rule)
                run_rounds([Configuration(plan, session)], plan.points, plan.repetitions, schedule)
                note_auto([LocalConfiguration(plan, session)], schedule, options.repeat_auto, progress)
            return session.outcome()
        finally:
            if temporary:
                shutil.rmtree(text, ignore_errors=True)

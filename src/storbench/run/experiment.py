"""An interleaved experiment: two or more configurations of one suite, their repetitions taken in rounds.

Each configuration is its own run (its own plan, session, target claim, engines and run directory), so
``show``, ``compare``, reports and the published figures read it as any run; the runs carry one
``experiment`` record in their manifests (its id, the runs in configuration order, and each round's order),
which is what lets ``compare`` pair repetition i of one with repetition i of the other.

Every session is open for the whole experiment, so engines must be able to run side by side in one process;
one that cannot (``Engine.one_per_process``: Spark's single SparkContext) is refused before anything starts.
A configuration that fails stops the experiment: it is recorded as failed, the others as interrupted with a
line saying why, and every sample already measured stays.
"""

from __future__ import annotations

import secrets
from datetime import datetime
from typing import Any

from storbench.engines.lifecycle import engine_classes
from storbench.errors import InputError
from storbench.progress import Progress
from storbench.results.store import ResultStore
from storbench.run.loop import Configuration, run_rounds
from storbench.run.metrics_server import LiveRun, serve
from storbench.run.options import RunOptions, RunOutcome, validate_options
from storbench.run.plan import Plan, make_plan
from storbench.run.rounds import Enough, Schedule
from storbench.run.session import RunSession


def check_configurations(configurations: list[RunOptions]) -> None:
    """Two or more configurations, each with its own target and a label of its own."""
    if len(configurations) < 2:
        raise InputError("an interleaved experiment needs two or more configurations (--target A --target B)")
    for options in configurations:
        validate_options(options)
        if options.target is None:
            raise InputError(f"configuration {options.label}: interleaving needs a --target for every configuration")
    labels = [options.label for options in configurations]
    repeated = next((label for label in labels if labels.count(label) > 1), None)
    if repeated is not None:
        raise InputError(f"--label {repeated}: two configurations share it; give each --target its own --label "
                         f"(e.g. --target A --label a --target B --label b)")


def _check_alike(plans: list[Plan]) -> None:
    """The rounds need the same points and repetitions on every side; engines that cannot share a process are
    refused in one line."""
    first = plans[0]
    for plan in plans[1:]:
        if [p.labels for p in plan.points] != [p.labels for p in first.points] or plan.repetitions != first.repetitions:
            raise InputError(f"configuration {plan.options.label}: its sweep points or repetitions differ from "
                             f"{first.options.label}'s; interleaved configurations run the same rounds")
    alone = [engine.name for engine in engine_classes(first.engine_names) if engine.one_per_process]
    if alone:
        raise InputError(f"the {alone[0]} engine runs once per process, and interleaving keeps every "
                         f"configuration's engines open together: run the configurations one at a time and "
                         f"compare them (storbench compare), which says they were not interleaved")


def new_experiment_id() -> str:
    return f"{datetime.now().strftime('%Y%m%d-%H%M%S')}-x{secrets.token_hex(3)}"


class Experiment:
    """The experiment record, kept in every configuration's manifest and extended after each round."""

    def __init__(self, sessions: list[RunSession], policy: str, seed: int):
        self.sessions = sessions
        runs = [s.plan.run_id for s in sessions]
        self.record: dict[str, Any] = {
            "id": new_experiment_id(), "design": "interleaved", "order_policy": policy, "seed": seed,
            "runs": runs, "labels": [s.plan.options.label for s in sessions], "order": []}

    def write(self) -> None:
        for session in self.sessions:
            session.writer.update_manifest(experiment=self.record)

    def ran(self, repetition: int, order: list[int]) -> None:
        self.record["order"].append([self.record["runs"][k] for k in order])
        self.write()


def run_experiment(configurations: list[RunOptions], store: ResultStore, progress: Progress,
                   policy: str = "alternate", rule: Enough | None = None) -> list[RunOutcome]:
    """Run the configurations interleaved; their outcomes in configuration order."""
    check_configurations(configurations)
    seed = secrets.randbelow(2**31)
    Schedule(len(configurations), policy)  # a bad --order: one line before anything starts
    store.check_writable()
    first = configurations[0]
    live = LiveRun(progress)
    with serve(live, first.metrics_port, first.metrics_address, progress):
        plans = [make_plan(options, store.home, options.target or "") for options in configurations]
        _check_alike(plans)
        sessions: list[RunSession] = []
        running = [0]
        try:
            for k, plan in enumerate(plans):
                running[0] = k
                live.planned(plan.run_id, plan.suite.name, plan.options.label, plan.repetitions)
                sessions.append(RunSession(plan, store, progress, live).__enter__())
            for session in sessions:
                session.prefix = f"[{session.plan.options.label}] "
            experiment = Experiment(sessions, policy, seed)
            experiment.write()
            progress.plan(sum(plan.steps() for plan in plans))
            progress.info(f"experiment {experiment.record['id']}: {len(plans)} configurations "
                          f"({', '.join(experiment.record['labels'])}) interleaved, order {policy}")
            for k, session in enumerate(sessions):
                running[0] = k
                session.start()
            auto = first.repeat_auto
            schedule = Schedule(len(plans), policy, seed, auto[0] if auto else None, rule, experiment.ran)
            run_rounds([Configuration(s.plan, s) for s in sessions], schedule, running)
            note_auto(sessions, schedule)
        except BaseException as exc:
            _stop_all(sessions, exc, running[0], plans[running[0]].options.label)
            if len(sessions) <= running[0]:  # a configuration that never opened: its error is the answer
                raise
        else:
            for session in reversed(sessions):
                session.__exit__(None, None, None)
    return [session.outcome() for session in sessions]


def note_auto(sessions: list[RunSession], schedule: Schedule) -> None:
    """--repeat auto: how many rounds ran, and why they stopped (None: they reached the maximum), in every
    configuration's manifest."""
    auto = sessions[0].plan.options.repeat_auto
    if auto is None:
        return
    for session in sessions:
        session.writer.update_manifest(repetitions=schedule.done, repeat_auto={
            "min": auto[0], "max": auto[1], "stopped": schedule.stopped or None})
    for point, why in schedule.stopped.items():
        sessions[0].progress.info(f"--repeat auto{' [' + point + ']' if point else ''}: stopped {why}")


def _stop_all(sessions: list[RunSession], exc: BaseException, failing: int, label: str) -> None:
    """Every open session closes: the failing one with its own error, the others as interrupted, saying why."""
    interrupted = isinstance(exc, KeyboardInterrupt)
    for k in reversed(range(len(sessions))):
        session = sessions[k]
        if k == failing or interrupted:
            session.__exit__(type(exc), exc, exc.__traceback__)
            continue
        session.record_error("experiment", 0, f"stopped with the experiment: configuration {label} failed")
        stop = KeyboardInterrupt()
        session.__exit__(KeyboardInterrupt, stop, None)

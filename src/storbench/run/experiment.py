"""An interleaved experiment: two or more configurations of one suite, their repetitions taken in rounds.

Each configuration is its own run (its own plan, session, target claim, engines and run directory), so
``show``, ``compare``, reports and the published figures read it as any run; the runs carry one
``experiment`` record in their manifests (its id, the runs in configuration order, and each round's order),
which is what lets ``compare`` pair repetition i of one with repetition i of the other.

Every configuration's session is open for the whole experiment. Where the engines can share a process the
sessions live in this one; where one cannot (``Engine.one_per_process``: a JVM engine's single session) each
configuration runs in a worker process of its own (storbench.run.worker), driven round by round from here.
A configuration that fails stops the experiment: it is recorded as failed, the others as interrupted with a
line saying why, and every sample already measured stays.
"""

from __future__ import annotations

import secrets
from datetime import datetime
from typing import Any

from storbench import interrupts
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
from storbench.run.worker import WorkerConfiguration, WorkerStopped


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
        raise InputError(
            f"--label {repeated}: two configurations share it; give each --target its own --label "
            f"(e.g. --target A --label a --target B --label b)"
        )


def _check_alike(plans: list[Plan]) -> None:
    """The rounds need the same points and repetitions on every side."""
    first = plans[0]
    for plan in plans[1:]:
        if [p.labels for p in plan.points] != [p.labels for p in first.points] or plan.repetitions != first.repetitions:
            raise InputError(
                f"configuration {plan.options.label}: its sweep points or repetitions differ from "
                f"{first.options.label}'s; interleaved configurations run the same rounds"
            )


def in_workers(plans: list[Plan]) -> bool:
    """Whether the configurations need a process each: an engine they use runs once per process."""
    return any(engine.one_per_process for plan in plans for engine in engine_classes(plan.engine_names))


def new_experiment_id() -> str:
    return f"{datetime.now().strftime('%Y%m%d-%H%M%S')}-x{secrets.token_hex(3)}"


class LocalConfiguration(Configuration):
    """A configuration whose session lives in this process."""

    def experiment(self, record: dict[str, Any]) -> None:
        self.session.writer.update_manifest(experiment=record)

    def start(self) -> None:
        self.session.start()

    def auto(self, repetitions: int, record: dict[str, Any]) -> None:
        self.session.writer.update_manifest(repetitions=repetitions, repeat_auto=record)

    def close(self, stopped_by: str | None = None) -> RunOutcome:
        if stopped_by is None:
            self.session.__exit__(None, None, None)
        else:
            self.session.record_error(
                "experiment", 0, f"stopped with the experiment: configuration {stopped_by} failed"
            )
            self.session.__exit__(KeyboardInterrupt, KeyboardInterrupt(), None)
        return self.session.outcome()

    def fail(self, exc: BaseException) -> RunOutcome:
        """Closed with the error (or interrupt) that stopped it."""
        self.session.__exit__(type(exc), exc, exc.__traceback__)
        return self.session.outcome()

    def interrupt(self) -> RunOutcome:
        self.session.__exit__(KeyboardInterrupt, KeyboardInterrupt(), None)
        return self.session.outcome()


Member = Any  # LocalConfiguration or storbench.run.worker.WorkerConfiguration


class Experiment:
    """The experiment record, kept in every configuration's manifest and extended after each round."""

    def __init__(self, members: list[Member], plans: list[Plan], policy: str, seed: int):
        self.members = members
        self.record: dict[str, Any] = {
            "id": new_experiment_id(),
            "design": "interleaved",
            "order_policy": policy,
            "seed": seed,
            "runs": [plan.run_id for plan in plans],
            "labels": [plan.options.label for plan in plans],
            "order": [],
        }

    def write(self) -> None:
        for member in self.members:
            member.experiment(self.record)

    def ran(self, repetition: int, order: list[int]) -> None:
        self.record["order"].append([self.record["runs"][k] for k in order])
        self.write()


def run_experiment(
    configurations: list[RunOptions],
    store: ResultStore,
    progress: Progress,
    policy: str = "alternate",
    rule: Enough | None = None,
) -> list[RunOutcome]:
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
        workers = in_workers(plans)
        members: list[Member] = []
        outcomes: dict[int, RunOutcome] = {}
        running = [0]
        try:
            for k, plan in enumerate(plans):
                running[0] = k
                members.append(_open(plan, store, progress, live, workers))
            experiment = Experiment(members, plans, policy, seed)
            experiment.write()
            progress.plan(sum(plan.steps() for plan in plans))
            progress.info(
                f"experiment {experiment.record['id']}: {len(plans)} configurations "
                f"({', '.join(experiment.record['labels'])}) interleaved, order {policy}"
                + (", a process each (their engines run once per process)" if workers else "")
            )
            for k, member in enumerate(members):
                running[0] = k
                member.start()
            auto = first.repeat_auto
            schedule = Schedule(len(plans), policy, seed, auto[0] if auto else None, rule, experiment.ran)
            run_rounds(members, plans[0].points, plans[0].repetitions, schedule, running)
            note_auto(members, schedule, first.repeat_auto, progress)
        except BaseException as exc:
            outcomes = _stop_all(members, exc, running[0], plans[running[0]].options.label)
            if len(members) <= running[0] and not isinstance(exc, WorkerStopped):
                raise  # a configuration that never opened: its error is the answer
        else:
            outcomes = {k: members[k].close() for k in reversed(range(len(members)))}
    return [outcomes[k] for k in range(len(members))]


def _open(plan: Plan, store: ResultStore, progress: Progress, live: LiveRun, workers: bool) -> Member:
    """A configuration's session opened (its run recorded), here or in a worker process."""
    prefix = f"[{plan.options.label}] "
    if workers:
        return WorkerConfiguration(plan.options, plan.run_id, prefix, store, progress)
    live.planned(plan.run_id, plan.suite.name, plan.options.label, plan.repetitions)
    session = RunSession(plan, store, progress, live).__enter__()
    session.prefix = prefix
    return LocalConfiguration(plan, session)


def note_auto(members: list[Member], schedule: Schedule, auto: tuple[int, int] | None, progress: Progress) -> None:
    """--repeat auto: how many rounds ran, and why they stopped (None: they reached the maximum), in every
    configuration's manifest."""
    if auto is None:
        return
    for member in members:
        member.auto(schedule.done, {"min": auto[0], "max": auto[1], "stopped": schedule.stopped or None})
    for point, why in schedule.stopped.items():
        progress.info(f"--repeat auto{' [' + point + ']' if point else ''}: stopped {why}")


def _stop_all(members: list[Member], exc: BaseException, failing: int, label: str) -> dict[int, RunOutcome]:
    """Every open configuration closes: the failing one with its own error (a worker closed its own already),
    the others as interrupted, saying why; on a signal, every one as interrupted."""
    interrupted = isinstance(exc, KeyboardInterrupt) or (isinstance(exc, WorkerStopped) and exc.interrupted)
    outcomes = {}
    with interrupts.shielded():
        for k in reversed(range(len(members))):
            member = members[k]
            if k == failing and isinstance(exc, WorkerStopped):
                outcomes[k] = exc.outcome
            elif k == failing and not interrupted:
                outcomes[k] = member.fail(exc)
            elif interrupted:
                outcomes[k] = member.interrupt()
            else:
                outcomes[k] = member.close(stopped_by=label)
    return outcomes

"""A configuration of an interleaved experiment in a process of its own, for engines that allow one per process.

An engine that runs once per process (``Engine.one_per_process``: a JVM engine's single session) cannot serve
two configurations in the experiment's process. Each then runs in a worker (a child Python process running
:func:`main`): the worker holds the configuration's session (its plan, target claim, engines, telemetry and run
directory) and does what the experiment asks, one JSON line at a time on its stdin, answering each on a pipe of
its own (its stdout stays free for libraries that print). The experiment keeps the rounds, their order and the
experiment record, as it does in process.

Requests: ``open`` (the run options, run id, step prefix and results store: the store's password, if any,
travels here, never on a command line), ``experiment`` (the record to keep in the manifest), ``start``,
``prepare`` and ``repetition`` (a point's prepare steps and warm-ups; one recorded repetition: its samples
come back for ``--repeat auto``), ``auto`` (the rounds it took) and ``close`` (done, or stopped because
another configuration failed). A request that fails closes the session with that error (a Ctrl-C or SIGTERM:
interrupted) and the answer says so with the run's outcome; the worker then exits.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from dataclasses import asdict
from pathlib import Path
from typing import Any

from storbench import interrupts
from storbench.errors import InputError, StorbenchError
from storbench.progress import Progress
from storbench.results.model import Sample
from storbench.results.store import ResultStore
from storbench.run.loop import Configuration
from storbench.run.options import RunOptions, RunOutcome
from storbench.run.plan import make_plan
from storbench.run.session import RunSession
from storbench.run.sweep import Point

CLOSE_TIMEOUT_S = 300  # a worker's cleanup (its engines stopping, data removed) after it was told to stop


class WorkerStopped(Exception):
    """A worker's configuration failed or was interrupted: its outcome is final, its process gone."""

    def __init__(self, outcome: RunOutcome, message: str, interrupted: bool):
        super().__init__(message)
        self.outcome, self.interrupted = outcome, interrupted


def _outcome(data: dict[str, Any]) -> RunOutcome:
    return RunOutcome(data["run_id"], data["status"], Path(data["path"]), data["errors"])


def store_spec(store: ResultStore) -> dict[str, Any]:
    """What a worker needs to open the same results store."""
    index = store.index
    url = getattr(index, "url", None)
    return {"home": str(store.home), "postgres": url, "password": getattr(index, "_password", None) if url else None}


def _open_store(spec: dict[str, Any]) -> ResultStore:
    if not spec.get("postgres"):
        return ResultStore(spec["home"])
    from storbench.results.postgres import PostgresIndex

    index = PostgresIndex(spec["postgres"])
    index._password = spec.get("password")
    return ResultStore(spec["home"], index=index)


class WorkerConfiguration:
    """The experiment's side of a worker: a :class:`~storbench.run.loop.Side` whose work runs in the worker."""

    def __init__(self, options: RunOptions, run_id: str, prefix: str, store: ResultStore, progress: Progress):
        self.label, self.run_id, self.run_dir = options.label, run_id, store.runs_dir / run_id
        reply_read, reply_write = os.pipe()
        # -c, not -m: the experiment's package imports this module, which -m would run a second time
        self.process = subprocess.Popen(
            [sys.executable, "-c", "from storbench.run.worker import main; main()", str(reply_write)],
            stdin=subprocess.PIPE,
            stdout=2,  # stdout: --json's
            pass_fds=(reply_write,),
            text=True,
        )
        os.close(reply_write)
        self.replies = os.fdopen(reply_read, "r")
        self.outcome: RunOutcome | None = None
        try:
            self._ask(
                {
                    "op": "open",
                    "options": {**asdict(options), "experiment_pid": os.getpid()},
                    "run_id": run_id,
                    "prefix": prefix,
                    "store": store_spec(store),
                    "quiet": progress.quiet,
                    "started": progress.started,
                }
            )
        except KeyboardInterrupt:  # before the experiment knows this worker: it would run on, its run "running"
            with interrupts.shielded():
                self.interrupt()
            raise

    def _ask(self, request: dict[str, Any]) -> dict[str, Any]:
        assert self.process.stdin is not None
        self.process.stdin.write(json.dumps(request) + "\n")
        self.process.stdin.flush()
        return self.answer()

    def answer(self) -> dict[str, Any]:
        """The worker's next reply line, read; a refusal, a stop or a worker gone without a word raises."""
        line = self.replies.readline()
        if not line:
            self.process.wait()
            raise StorbenchError(
                f"configuration {self.label}: its worker process ended without an answer "
                f"(exit {self.process.returncode})"
            )
        answer = json.loads(line)
        if "error" in answer:  # refused before its run was recorded: the worker's one line
            self.process.wait()
            kind = InputError if answer.get("input") else StorbenchError
            raise kind(answer["error"])
        if "outcome" in answer:
            self.outcome = _outcome(answer["outcome"])
        if answer.get("stopped"):
            self.process.wait()
            assert self.outcome is not None
            raise WorkerStopped(self.outcome, answer["stopped"], bool(answer.get("interrupted")))
        return answer

    def experiment(self, record: dict[str, Any]) -> None:
        self._ask({"op": "experiment", "record": record})

    def start(self) -> None:
        self._ask({"op": "start"})

    def prepare(self, index: int, point: Point) -> None:
        self._ask({"op": "prepare", "index": index})

    def repetition(self, repetition: int, index: int, point: Point) -> dict[str, list[Sample]]:
        answer = self._ask({"op": "repetition", "repetition": repetition, "index": index})
        return {w: [Sample.from_dict(s) for s in samples] for w, samples in answer["samples"].items()}

    def auto(self, repetitions: int, record: dict[str, Any]) -> None:
        self._ask({"op": "auto", "repetitions": repetitions, "record": record})

    def close(self, stopped_by: str | None = None) -> RunOutcome:
        """Done (``None``), or stopped because configuration ``stopped_by`` failed; the run's outcome."""
        if self.outcome is None or self.process.poll() is None:
            try:
                self._ask({"op": "close", "stopped_by": stopped_by})
            except WorkerStopped:
                pass
            self.process.wait(CLOSE_TIMEOUT_S)
        assert self.outcome is not None
        return self.outcome

    def interrupt(self) -> RunOutcome:
        """A signal reached the experiment: the worker is told as a signal (SIGTERM) and its closing answer
        awaited (an answer to the request the signal cut short may come first)."""
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
        try:
            while self.outcome is None or self.outcome.status == "running":
                self.answer()
        except (WorkerStopped, StorbenchError):
            pass
        self.process.wait(CLOSE_TIMEOUT_S)
        return self.outcome or self._recorded()

    def _recorded(self) -> RunOutcome:
        """The run as its manifest says, for a worker that ended without a word (killed)."""
        try:
            manifest = json.loads((self.run_dir / "manifest.json").read_text())
        except (OSError, ValueError):
            manifest = {}
        return RunOutcome(self.run_id, manifest.get("status", "crashed"), self.run_dir, manifest.get("errors", []))


# -- the worker process -----------------------------------------------------------------------------------


class _Worker:
    def __init__(self, reply_fd: int):
        self.replies = os.fdopen(reply_fd, "w")
        self.session: RunSession | None = None
        self.side: Configuration | None = None

    def answer(self, **fields: Any) -> None:
        self.replies.write(json.dumps(fields) + "\n")
        self.replies.flush()

    def outcome(self) -> dict[str, Any]:
        assert self.session is not None
        outcome = self.session.outcome()
        return {"run_id": outcome.run_id, "status": outcome.status, "path": str(outcome.path), "errors": outcome.errors}

    def open(self, request: dict[str, Any]) -> None:
        options = RunOptions(**{**request["options"], "repeat_auto": _pair(request["options"]["repeat_auto"])})
        store = _open_store(request["store"])
        progress = Progress(quiet=request["quiet"], live=False)  # two live displays would share one terminal
        progress.started = request["started"]  # the experiment's clock: time.monotonic is the machine's
        plan = make_plan(options, store.home, options.target or "")
        plan.run_id = request["run_id"]
        self.session = RunSession(plan, store, progress).__enter__()
        self.session.prefix = request["prefix"]
        self.side = Configuration(plan, self.session)

    def serve(self) -> None:
        for line in sys.stdin:
            request = json.loads(line)
            op = request["op"]
            if op == "open":
                try:
                    self.open(request)
                except StorbenchError as exc:
                    self.answer(error=str(exc), input=isinstance(exc, InputError))
                    return
                self.answer(ok=True)
                continue
            assert self.session is not None and self.side is not None
            try:
                answer = self.do(op, request)
            except BaseException as exc:  # the run closes with it, as a run in process would
                interrupted = isinstance(exc, KeyboardInterrupt)
                self.session.__exit__(type(exc), exc, exc.__traceback__)
                self.answer(stopped=str(exc) or type(exc).__name__, interrupted=interrupted, outcome=self.outcome())
                return
            if op == "close":
                self.answer(ok=True, outcome=self.outcome())
                return
            self.answer(ok=True, **answer)

    def do(self, op: str, request: dict[str, Any]) -> dict[str, Any]:
        session, side = self.session, self.side
        assert session is not None and side is not None
        if op == "experiment":
            session.writer.update_manifest(experiment=request["record"])
        elif op == "start":
            session.start()
        elif op == "prepare":
            side.prepare(request["index"], side.plan.points[request["index"]])
        elif op == "repetition":
            samples = side.repetition(request["repetition"], request["index"], side.plan.points[request["index"]])
            return {"samples": {w: [s.to_dict() for s in found] for w, found in samples.items()}}
        elif op == "auto":
            session.writer.update_manifest(repetitions=request["repetitions"], repeat_auto=request["record"])
        elif op == "close":
            if request.get("stopped_by"):
                session.record_error(
                    "experiment", 0, f"stopped with the experiment: configuration {request['stopped_by']} failed"
                )
                session.__exit__(KeyboardInterrupt, KeyboardInterrupt(), None)
            else:
                session.__exit__(None, None, None)
        return {}


def _pair(value: Any) -> tuple[int, int] | None:
    return tuple(value) if value else None  # type: ignore[return-value]


def main() -> None:  # pragma: no cover - the worker's entry point, run as a child process
    interrupts.install()
    worker = _Worker(int(sys.argv[1]))
    try:
        worker.serve()
    except KeyboardInterrupt:  # a signal while waiting for the next request: the run is interrupted
        if worker.session is not None:
            worker.session.__exit__(KeyboardInterrupt, KeyboardInterrupt(), None)
            worker.answer(stopped="interrupted", interrupted=True, outcome=worker.outcome())
    interrupts.exiting()


if __name__ == "__main__":
    main()

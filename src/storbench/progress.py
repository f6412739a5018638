"""Progress on stderr: a live display with an ETA on a terminal (rich), plain lines otherwise.

A run plans its steps (workloads × repetitions × sweep points, see :meth:`Progress.plan`); each
finished step updates the run's ETA, from the mean step so far or a previous run's duration.
Long work inside a step (dataset generation, query streams, cosbench stages) reports what it
has done through :meth:`Progress.advance` (the workloads' ``ctx.progress``), for the step's own ETA;
other Spark work shows its Spark tasks done of those known (a step's ``poll``).
On a terminal rich draws it (and clears it when the step ends); elsewhere (CI, pipes) the same
facts are plain ``[mm:ss] ...`` lines, at most one every ``PLAIN_EVERY_S`` per step.
"""

from __future__ import annotations

import json
import sys
import threading
import time
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Iterator, TextIO

from rich.console import Console
from rich.progress import BarColumn, ProgressColumn, SpinnerColumn, Task, TextColumn
from rich.progress import Progress as RichProgress
from rich.text import Text

from storbench.errors import InputError

PLAIN_EVERY_S = 10.0  # without a terminal, a step's own progress line at most this often
POLL_S = 1.0  # how often a step's ``poll`` (Spark's tasks) is asked


@dataclass
class Plan:
    """The run's counted steps, for its ETA."""

    total: int
    expected_s: float | None  # a previous run's duration of the same suite and scale, if known
    started: float
    done: int = 0
    spent: float = 0.0  # seconds in the counted steps done

    def eta(self, now: float, fraction: float = 0.0) -> float | None:
        """Seconds left: a previous run's duration less the time so far while that holds, else the mean
        step so far × the steps left (``fraction``: how much of the current step is done)."""
        if self.expected_s is not None and self.expected_s - (now - self.started) > 0:
            return self.expected_s - (now - self.started)
        if self.done:
            return self.spent / self.done * max(self.total - self.done - fraction, 0)
        return None


def clock(seconds: float) -> str:
    seconds = max(int(seconds + 0.5), 0)
    return (
        f"{seconds // 3600}:{seconds // 60 % 60:02d}:{seconds % 60:02d}"
        if seconds >= 3600
        else f"{seconds // 60:02d}:{seconds % 60:02d}"
    )


class _EtaColumn(ProgressColumn):
    """``ETA mm:ss`` from the task's own ``eta`` callable (the run) or rich's speed estimate (a step's work)."""

    def render(self, task: Task) -> Text:
        eta_of = task.fields.get("eta")
        left = eta_of() if eta_of else (task.time_remaining if task.total else None)
        return Text(f"ETA {clock(left)}" if left is not None else "", style="cyan")


class _CountColumn(ProgressColumn):
    def render(self, task: Task) -> Text:
        if not task.total:
            return Text(f"{clock(task.elapsed or 0)}", style="dim")
        unit = task.fields.get("unit", "")
        done, total = _amount(task.completed, unit), _amount(task.total, unit)
        return Text(f"{done}/{total}" + (f" {unit}" if unit and unit != "bytes" else ""), style="dim")


def _amount(value: float, unit: str) -> str:
    if unit == "bytes":
        for scale, name in ((1 << 30, "GiB"), (1 << 20, "MiB"), (1 << 10, "KiB")):
            if value >= scale:
                return f"{value / scale:.1f} {name}"
        return f"{value:.0f} B"
    return f"{value:g}"


class Progress:
    def __init__(self, quiet: bool = False, stream: TextIO | None = None, live: bool = True):
        """``live=False``: plain lines even on a terminal (a worker process shares its terminal with others)."""
        self.quiet = quiet
        self.stream = stream or sys.stderr
        self.live = live and not quiet and _isatty(self.stream)
        self.started = time.monotonic()
        self._plan: Plan | None = None
        self._bar: RichProgress | None = None  # the live display while a step runs on a terminal
        self._work: Any = None  # the running step's own task (rich) or [label, done, total, unit, last line]
        self._lock = threading.Lock()  # query streams report from several threads
        self._own = False  # the running step's work reported its own progress
        self._console = (
            Console(file=self.stream, force_terminal=True, highlight=False, soft_wrap=True) if self.live else None
        )

    def plan(self, total_steps: int, expected_s: float | None = None) -> None:
        """The run's counted steps (``step(..., counted=True)``) and, if known, how long it took last time."""
        self._plan = Plan(total_steps, expected_s, time.monotonic())

    @property
    def steps(self) -> Plan | None:
        """The run's counted steps so far (None before :meth:`plan`): what --metrics-port shows."""
        return self._plan

    def info(self, message: str) -> None:
        if not self.quiet:
            self._line(f"[{self._clock()}] {message}")

    def warn(self, message: str) -> None:
        # Warnings show even with --quiet: they say what was not measured as asked.
        self._line(f"warning: {message}")

    @contextmanager
    def step(
        self,
        label: str,
        counted: bool = False,
        expected_s: float | None = None,
        poll: Callable[[], tuple[int, int] | None] | None = None,
    ) -> Iterator[dict[str, str]]:
        """A timed step; the caller may put a short result in ``outcome['text']``. ``counted``: one of the
        planned steps; ``expected_s``: how long it took last time (its ETA until then); ``poll``: the step's
        Spark tasks (done, known), asked every ``POLL_S`` until the work reports its own progress."""
        outcome = {"text": ""}
        start = time.monotonic()
        self._open(label, start, expected_s)
        stop = threading.Event()
        poller = None
        if poll is not None and not self.quiet:
            poller = threading.Thread(target=self._poll, args=(poll, stop), daemon=True)
            poller.start()
        status = "failed"
        bad_input = False
        try:
            yield outcome
            status = "done"
        except KeyboardInterrupt:
            status = "interrupted"
            raise
        except InputError:
            bad_input = True  # bad input is the error's one line, without a step line of its own
            raise
        finally:
            seconds = time.monotonic() - start
            stop.set()
            if poller is not None:
                poller.join(timeout=5)
            self._close()
            plan = self._plan if counted else None
            if plan is not None and status == "done":
                plan.done += 1
                plan.spent += seconds
            if not self.quiet and not bad_input:
                extra = f"  {outcome['text']}" if outcome["text"] else ""
                self._line(f"[{self._clock()}] {label}: {status} in {seconds:.2f} s{extra}{self._run_text(plan)}")

    def advance(self, done: float, total: float | None = None, unit: str = "") -> None:
        """The running step's own progress (``done`` of ``total`` ``unit``: tables, queries, bytes...)."""
        self._advance(done, total, unit, polled=False)

    def _poll(self, poll: Callable[[], tuple[int, int] | None], stop: threading.Event) -> None:
        while not stop.wait(POLL_S):
            found = poll()
            if found is not None:
                self._advance(found[0], found[1], "tasks", polled=True)

    def _advance(self, done: float, total: float | None, unit: str, polled: bool) -> None:
        if self.quiet:
            return
        with self._lock:
            if polled and self._own:  # the work's own figures (tables, queries) say more than Spark's tasks
                return
            self._own = self._own or not polled
            if self._bar is not None and self._work is not None:
                fields = {"unit": unit} if unit else {}
                self._bar.update(self._work, completed=done, total=total, **fields)
                return
            work = self._work
            if work is None or not total:
                return
            now = time.monotonic()
            if now - work[4] < PLAIN_EVERY_S or done >= total:  # the step's own line says when it is done
                return
            work[4] = now
            left = (now - work[1]) / done * (total - done) if done else None
            what = f"{_amount(done, unit)}/{_amount(total, unit)}" + (f" {unit}" if unit and unit != "bytes" else "")
            eta = f", ETA {clock(left)}" if left is not None else ""
        self._line(f"[{self._clock()}] {work[0]}: {what}{eta}")

    # -- drawing -----------------------------------------------------------------------------------------
    def _open(self, label: str, start: float, expected_s: float | None) -> None:
        with self._lock:
            self._own = False
            if not self.live:
                self._work = [label, start, None, "", start]
                return
            self._bar = RichProgress(
                SpinnerColumn(),
                TextColumn("{task.description}"),
                BarColumn(bar_width=24),
                _CountColumn(),
                _EtaColumn(),
                console=self._console,
                transient=True,
                refresh_per_second=4,
            )
            step_eta = (lambda: max(expected_s - (time.monotonic() - start), 0)) if expected_s else None
            self._work = self._bar.add_task(label, total=None, eta=step_eta)
            plan = self._plan
            if plan is not None and plan.total > 1:
                self._bar.add_task(
                    f"run: step {min(plan.done + 1, plan.total)} of {plan.total}",
                    total=plan.total,
                    completed=plan.done,
                    unit="steps",
                    eta=lambda: plan.eta(time.monotonic()),
                )
            self._bar.start()

    def _close(self) -> None:
        with self._lock:
            if self._bar is not None:
                self._bar.stop()
            self._bar, self._work = None, None

    def _run_text(self, plan: Plan | None) -> str:
        """`` [step 2/5, ETA 01:10]`` after a counted step's line, while steps are left."""
        if plan is None or plan.total < 2 or plan.done >= plan.total:
            return ""
        left = plan.eta(time.monotonic())
        return f"  [step {plan.done}/{plan.total}" + (f", ETA {clock(left)}]" if left is not None else "]")

    def _line(self, text: str) -> None:
        if self._bar is not None:
            self._bar.console.print(Text(text), soft_wrap=True)  # above the live display
            return
        self.stream.write(text + "\n")
        self.stream.flush()

    def _clock(self) -> str:
        return clock(time.monotonic() - self.started)


def _isatty(stream: TextIO) -> bool:
    try:
        return stream.isatty()
    except (AttributeError, ValueError):
        return False


def expected_duration(
    runs: list[Any], suite: str, scale: str, repetitions: int, sweep: list[dict[str, str]]
) -> float | None:
    """The latest succeeded run's duration with the same suite, scale, repetitions and sweep (seconds), from
    the runs' manifests; None when there is none."""
    from datetime import datetime

    for run in reversed(runs):
        m = run.manifest
        if (m.get("suite"), m.get("scale"), m.get("repetitions"), m.get("sweep") or [], m.get("status")) != (
            suite,
            scale,
            repetitions,
            sweep or [],
            "succeeded",
        ) or not m.get("finished"):
            continue
        try:
            started, finished = (datetime.strptime(m[k], "%Y-%m-%dT%H:%M:%SZ") for k in ("started", "finished"))
        except (KeyError, ValueError):
            continue
        return max((finished - started).total_seconds(), 1.0)
    return None


START_TIMES = "start-seconds.json"  # beside the services' state: seconds each took to start last time


def remembered_seconds(path: Path, key: str) -> float | None:
    """A duration kept by :func:`remember_seconds` (None: none, or an unreadable file)."""
    try:
        value = json.loads(path.read_text()).get(key)
    except (OSError, ValueError, AttributeError):
        return None
    return float(value) if isinstance(value, (int, float)) else None


def remember_seconds(path: Path, key: str, seconds: float) -> None:
    """Keeps ``seconds`` under ``key`` for the next ETA; a file it cannot write only costs that ETA."""
    try:
        known = json.loads(path.read_text()) if path.exists() else {}
        known = known if isinstance(known, dict) else {}
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps({**known, key: round(seconds, 1)}))
    except (OSError, ValueError):
        pass

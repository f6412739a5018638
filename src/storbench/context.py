"""What a workload sees while it runs: the target, the engine, the timer and its family's state."""

from __future__ import annotations

import shutil
import time
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Iterator, TypeVar

from storbench import scratch as private_scratch
from storbench.engines.base import Engine
from storbench.engines.capabilities import WindowCounters
from storbench.errors import EngineError, InputError
from storbench.targets import Target

T = TypeVar("T", bound=Target)
E = TypeVar("E", bound=Engine)
S = TypeVar("S")


@dataclass
class Window:
    start: float  # time.monotonic()
    end: float


@dataclass
class WindowRecord:
    """One workload window, made by the run loop before the workload runs and read back after it: the timed
    ``span`` (measure() sets it, a tool narrows it to its own operations), whether it closes on durable data
    (the workload's ``flush`` parameter) and the ``rules`` it ran under, kept beside its samples in the
    manifest's window_rules (flush: how the data was made durable, or "off"; cache; timing; dfsio: checksum)."""

    flush: bool = False
    span: Window | None = None
    rules: dict[str, str] = field(default_factory=dict)

    @classmethod
    def for_params(cls, params: dict[str, Any]) -> WindowRecord:
        """A new window's record: its flush from the workload's parameter, "off" in its rules when it has one."""
        return cls(flush=bool(params.get("flush")), rules={"flush": "off"} if "flush" in params else {})


@dataclass
class Scratch:
    dirs: dict[str, Path] = field(default_factory=dict)  # the run's private scratch directories by key


@dataclass
class RunContext:
    run_id: str
    target: Target  # where the data lives: size_bytes, evict and delete work inside the run root
    root_uri: str  # the run-owned directory on the target: file:///.../storbench-<id> or hdfs://...
    engines: dict[str, Engine] = field(default_factory=dict)  # the engines this run started, by name
    mode: str = "default"  # "default" or "compat" (reference-tool behaviour)
    mark: Callable[[], float] = time.monotonic  # the collector's mark() when telemetry runs
    # Per-family state that lives for the run (the dataset datagen wrote, terasort's input, fio's device
    # checks): one typed object per class, made on first use by ``ctx.state(Kind)``.
    states: dict[type, Any] = field(default_factory=dict)
    # The measured nodes' fingerprints by node label (cores, threads; empty: this machine alone)
    node_fingerprints: dict[str, dict[str, Any]] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)
    # --allow-device-overwrite: a raw device target may be written (fio workloads check it is blank)
    allow_device_overwrite: bool = False
    # --keep-data: cleanup leaves what the run wrote (workloads writing outside the run root check it)
    keep_data: bool = False
    # Records a workload wants kept with the run (e.g. fio job files and version); the runner
    # writes them as artifacts.json in the run directory at the end.
    artifacts: dict[str, Any] = field(default_factory=dict)
    # A workload's own progress for long work: progress(done, total, unit), e.g. (3, 24, "tables"); the
    # runner draws it with an ETA (storbench.progress). Safe from several threads.
    progress: Callable[..., None] = lambda done, total=None, unit="": None
    # The current workload's window (the runner makes a new one before each workload)
    window: WindowRecord = field(default_factory=WindowRecord)

    def engine(self, kind: type[E]) -> E:
        """This run's engine of ``kind`` (the workload declared it in ``engines``)."""
        engine = self.engines.get(kind.name)
        if not isinstance(engine, kind):
            raise EngineError(
                f"the {kind.name} engine was not started for this run; the workload must name it in Workload.engines()"
            )
        return engine

    def state(self, kind: type[S]) -> S:
        """This run's one ``kind`` object (a family's own dataclass, every field defaulted), made on first use:
        what one workload of a family leaves for the next (datagen's dataset for the transforms)."""
        if kind not in self.states:
            self.states[kind] = kind()
        return self.states[kind]

    def target_as(self, kind: type[T]) -> T:
        """This run's target as the concrete ``kind`` a workload needs (its bucket, device, pool...)."""
        if not isinstance(self.target, kind):
            raise InputError(f"this workload needs {kind.wanted}, not the {self.target.kind} target {self.target.uri}")
        return self.target

    def scratch(self, key: str) -> Path:
        """The run's private scratch directory ``key``, made on first use with ``mkdtemp``.

        Never a name derived from the run id under /tmp: another local user could create it first
        and plant a symlink or a job file in it (issue 12 item 11). mkdtemp's is unpredictable,
        mode 0700 and never reused.
        """
        scratch = self.state(Scratch).dirs
        if key not in scratch:
            scratch[key] = private_scratch.make(f"storbench-{key}-")
        return scratch[key]

    def drop_scratch(self, key: str) -> None:
        """Removes the scratch directory ``key`` if this run made one."""
        path = self.state(Scratch).dirs.pop(key, None)
        if path:
            shutil.rmtree(path, ignore_errors=True)

    def evict(self, uri: str) -> int:
        """The target's evict(uri), its outcome kept in this window's rules: "cold" when files were dropped
        from the page cache, "warm" when there was nothing to drop (the wrong place, or a remote target)."""
        count = self.target.evict(uri)
        self.window.rules["cache"] = "cold" if count else "warm"
        return count

    def tool_window(self, seconds: float | None) -> None:
        """Narrows the last window to a tool's own operation phase: the last ``seconds`` of it, as the tool
        timed them (its start-up, connect and teardown then fall outside, as the native path's do); rules
        say so as ``timing=operations``. ``None`` (the tool printed no time) leaves the window whole and says
        ``timing=process``, so compare sets it apart."""
        window = self.window.span
        if window is None:
            return
        if seconds is None or seconds <= 0:
            self.window.rules["timing"] = "process"
            return
        # the teardown after the last operation (summary, exit) is short; the window ends with the process
        self.window.span = Window(max(window.start, window.end - seconds), window.end)
        self.window.rules["timing"] = "operations"

    def data_uri(self, name: str) -> str:
        return f"{self.root_uri}/{name}"

    @contextmanager
    def measure(self) -> Iterator[None]:
        """Wraps exactly the timed action; the runner reads ``window.span`` afterwards. The engines read their
        window's own counters (S3A's requests) just outside its marks."""
        counters = [engine for engine in self.engines.values() if isinstance(engine, WindowCounters)]
        for engine in counters:
            engine.window_opens()
        start = self.mark()
        try:
            yield
            if self.window.flush:  # the writes end in the page cache; the device sees them only after this
                self.window.rules["flush"] = self.target.flush()
        finally:
            self.window.span = Window(start, self.mark())
            for engine in counters:
                engine.window_closed()

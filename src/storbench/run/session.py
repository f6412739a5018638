"""One run's resources, owned by one context manager: the target's claim, attach and release, the engines'
start, cancel, stop and collect, telemetry and power, the run directory and its manifest.

Opening checks and claims; a failure there (bad input, a failed start-up, Ctrl-C) releases the target and
leaves nothing on it. Closing runs the cleanup steps in a fixed, shielded order: engines cancel their work,
telemetry stops and is written, workloads clean up, the target is released, engines stop and are collected,
artifacts and notes are kept, the run is finished. Each step's failure is an error of the run and the steps
after it still run; a second Ctrl-C/SIGTERM cannot cut them short.
"""

from __future__ import annotations

import sys
import threading
import time
from typing import Any, Callable

from storbench import __version__, interrupts, scratch
from storbench.context import RunContext
from storbench.engines.base import EngineSetup
from storbench.engines.lifecycle import RunEngines, data_root, engine_options_config
from storbench.errors import StorbenchError
from storbench.telemetry.machine import fingerprint
from storbench.progress import Progress, expected_duration
from storbench.redaction import redact_argv
from storbench.results.store import ResultStore, RunWriter
from storbench.run.measure import MeasuredNodes, node_labelled, open_local_power, open_nodes, run_telemetry
from storbench.run.metrics_server import LiveRun
from storbench.run.options import RunOutcome
from storbench.run.plan import Plan
from storbench.targets.base import GONE
from storbench.telemetry.power.scope import default_line
from storbench.telemetry.run import RunTelemetry


class RunSession:
    def __init__(self, plan: Plan, store: ResultStore, progress: Progress, live: LiveRun | None = None):
        self.plan, self.store, self.progress = plan, store, progress
        self.live = live if live is not None else LiveRun(progress)  # what --metrics-port serves
        self.status = "failed"
        self.prefix = ""  # before each step's label: the configuration's ("[ssd-a] ") when interleaved
        self.windows: list[dict[str, Any]] = []  # each timed window, for the series file
        self.idle: dict[str | None, float | None] = {}  # --idle-s: power while nothing ran
        self.nodes: MeasuredNodes | None = None
        self.writer: RunWriter
        self.ctx: RunContext
        self.engines: RunEngines
        self.telemetry: RunTelemetry

    # -- opening: checked, claimed, recorded --------------------------------------------------------

    def __enter__(self) -> "RunSession":
        plan, options, target = self.plan, self.plan.options, self.plan.target
        deferred: list[str] = []  # warnings wait until the input is known to be good: bad input is one line
        devices, how = target.devices(options.devices, deferred.append)
        self.nodes = open_nodes(options, self.store.home, devices, deferred.append, target.nodes_file())
        power = None if self.nodes is not None else open_local_power(options)  # an unreachable BMC: one line
        target.claim(plan.run_id)
        root = data_root(plan.engine_names, target, target.root_uri or "")
        self.ctx = ctx = RunContext(
            run_id=plan.run_id,
            target=target,
            root_uri=root,
            mode=options.mode,
            allow_device_overwrite=options.allow_device_overwrite,
            keep_data=options.keep_data,
        )
        try:  # bad input, a failed start-up or Ctrl-C before the run starts: nothing stays on the target
            plan.check_workloads(ctx)  # at every sweep point
            if plan.suite.alone:  # a workload by name: its first line says what differs from its defaults
                self.progress.info(plan.suite.differences(plan.scale, plan.per_workload, options.overrides))
            for warning in deferred:
                self.progress.warn(warning)
            with interrupts.shielded() as signalled:  # the record and this session's hold on it come together
                self.writer = writer = self.store.create_run(plan.run_id, self._manifest(devices, how))
                self._start_recording_scratch()
            if signalled():
                raise KeyboardInterrupt
            if self.nodes is not None:
                members = self.nodes.telemetry.members
                writer.record(
                    "config",
                    telemetry=self.nodes.source,
                    nodes=self.nodes.telemetry.describe(),
                    nodes_from=self.nodes.nodes_from,
                )
                writer.record("machine", nodes={m.label: m.fingerprint for m in members})
                ctx.node_fingerprints = {m.label: m.fingerprint for m in members}  # ops per server thread
            self.progress.info(
                f"run {plan.run_id}: suite {plan.suite.name}, scale {plan.scale}, "
                f"{plan.repetitions} repetition(s), target {target.uri}, "
                f"devices {', '.join(devices) or 'none'}"
            )
            powers = {m.label: m.power for m in self.nodes.telemetry.members} if self.nodes else {"": power}
            said = default_line(powers, "a power: key in the nodes file" if self.nodes else "--power")
            if said:  # RAPL by default: say what it covers before any figure of it
                self.progress.info(said)
            self.progress.plan(plan.steps(), self._expected_s(writer.manifest["sweep"]))
            ctx.progress = self.progress.advance  # a workload's own progress (generation, streams, stages)
            setup = EngineSetup(
                run_dir=writer.path,
                app_name=f"storbench {plan.suite.name} {options.label}",
                options=options.engine_options,
                target=target,
                workloads=[(w, plan.per_workload[n]) for n, w in plan.workloads.items()],
                home=self.store.home,
            )
            self.engines = RunEngines(plan.engine_names, setup)
            ctx.engines = self.engines.by_name
            self.telemetry = run_telemetry(
                options, self.nodes and self.nodes.telemetry, self.engines, devices, writer, power
            )
            ctx.mark = self.telemetry.mark
            self.live.watch(self.telemetry.latest)
        except BaseException as exc:
            target.release(keep_data=False)
            if hasattr(self, "writer"):  # already recorded as running: finished now, never left "running"
                self._finish_early(exc)
            self._stop_recording_scratch()
            raise
        return self

    def _start_recording_scratch(self) -> None:
        """From now on each private scratch directory made for this run is named in its manifest (``scratch``)
        as it is made: what `storbench cleanup` removes when the run is killed before it could."""
        self._scratch_paths: list[str] = []
        self._scratch_recording = scratch.recording(self._record_scratch)
        self._scratch_recording.__enter__()

    def _record_scratch(self, path: str) -> None:
        self._scratch_paths.append(path)
        if threading.current_thread() is threading.main_thread():  # another thread's waits for the next write
            self.writer.update_manifest(scratch=list(self._scratch_paths))

    def _stop_recording_scratch(self) -> None:
        recording = getattr(self, "_scratch_recording", None)
        if recording is not None:
            self._scratch_recording = None
            recording.__exit__(None, None, None)

    def _finish_early(self, exc: BaseException) -> None:
        """A run stopped while it was being set up (Ctrl-C, SIGTERM, an engine that did not start): the CLI
        prints why; the record says it too, and that the run ended."""
        interrupted = isinstance(exc, KeyboardInterrupt)
        if not interrupted:
            error = {"workload": "run", "repetition": 0, "error": str(exc) or type(exc).__name__}
            self.writer.manifest["errors"] = [*self.writer.manifest.get("errors", []), error]
        with interrupts.shielded():
            self.writer.finish("interrupted" if interrupted else "failed")

    def _manifest(self, devices: list[str], how: str) -> dict[str, Any]:
        plan, options, target = self.plan, self.plan.options, self.plan.target
        return {
            "label": options.label,
            "suite": plan.suite.name,
            "suite_source": plan.suite.source,
            "paper": plan.suite.paper,
            "tool_version": __version__,
            "command_line": redact_argv(options.command_line or sys.argv),
            "scale": plan.scale,
            "repetitions": plan.repetitions,
            "warmup": options.warmup,
            "parameters": plan.suite_params,
            "sweep": [point.labels for point in plan.points if point.labels],
            "workload_parameters": plan.per_workload,
            "workload_versions": {name: w.version for name, w in plan.workloads.items()},
            "config": {
                "target": target.uri,
                **engine_options_config(options.engine_options),
                "devices": devices,
                "devices_how": how,
                "replication": options.replication,
                "telemetry_interval_s": options.interval,
                "mode": options.mode,
                "run_root": target.root_uri,
                **target.manifest_config(),
            },
            "machine": fingerprint(target.local_path(), devices),
            "errors": [],
        }

    def _expected_s(self, sweep: list[dict[str, str]]) -> float | None:
        """A previous run's duration of this suite at this scale, for the ETA (None: none, or unreadable)."""
        plan = self.plan
        try:
            runs = self.store.list_runs(brief=True)  # the index's summaries: no manifest is read
            return expected_duration(runs, plan.suite.name, plan.scale, plan.repetitions, sweep)
        except Exception:  # the ETA is a nicety: a store it cannot read is no reason to fail the run
            return None

    # -- starting: telemetry, engines, the target reached through them, the idle baseline ------------

    def start(self) -> None:
        writer, ctx, target = self.writer, self.ctx, self.plan.target
        self.telemetry.start()
        writer.update_manifest(software={"storbench": __version__})
        self.engines.start(self.progress.step, writer.update_manifest, dict(writer.manifest["software"]))
        if not ctx.root_uri:  # targets reached through an engine (hdfs://) claim their run root now
            target.attach(ctx.engines, self.plan.need_bytes)
            if target.root_uri:
                ctx.root_uri = target.root_uri
                writer.record("config", run_root=target.root_uri)
        self.idle = self._idle_baseline()

    def _idle_baseline(self) -> dict[str | None, float | None]:
        """--idle-s: power while nothing runs, before the first workload (per node and overall)."""
        idle_s = self.plan.options.idle_s
        if not idle_s:
            return {}
        with self.progress.step(f"idle baseline ({idle_s:g} s)") as outcome:
            start = self.telemetry.mark()
            time.sleep(idle_s)
            idle = self.telemetry.idle(start, self.telemetry.mark())
            outcome["text"] = f"{idle[None]:.1f} W" if idle.get(None) is not None else "power not measured"
        return idle

    # -- closing: the outcome, then the cleanup steps in their order ----------------------------------

    def __exit__(self, kind: type[BaseException] | None, exc: BaseException | None, tb: Any) -> bool:
        handled = False
        if exc is None:
            self.status = "succeeded"
        elif isinstance(exc, KeyboardInterrupt):
            self.status, handled = "interrupted", True
            self.progress.warn("interrupted: what was measured so far is kept")
        elif isinstance(exc, StorbenchError):
            self.record_error(*exc.where, str(exc))
            handled = True
        elif isinstance(exc, Exception):  # an engine or workload bug must still leave a readable run
            self.record_error("run", 0, f"{type(exc).__name__}: {exc}")
            handled = True
        self._close()
        return handled

    def _close(self) -> None:
        plan, writer, ctx, engines, telemetry = self.plan, self.writer, self.ctx, self.engines, self.telemetry
        with interrupts.shielded() as signalled:
            failed = lambda where, message: self.record_error(where, 0, message)  # noqa: E731
            step = self._attempt
            step("cleanup", lambda: engines.cancel(failed))
            step("telemetry", telemetry.stop)
            step("telemetry", lambda: telemetry.write_series(writer, self.windows))
            for name, workload in plan.workloads.items():  # one's failure must not stop the others' cleanup
                step(name, lambda: workload.cleanup(ctx, plan.per_workload[name]), "cleanup: ")
            step(
                "cleanup",
                self._release,
                f"could not remove {plan.target.root_uri} (later: storbench cleanup {plan.run_id}): ",
            )
            step("cleanup", lambda: engines.stop(failed))
            step("engines", lambda: self._add_engine_metrics(failed))
            if ctx.artifacts:  # what workloads asked to keep (fio: job files, version, per-second series)
                step("artifacts", lambda: writer.write_json("artifacts.json", ctx.artifacts))
            if ctx.notes:  # workload warnings (fio: I/O engine or O_DIRECT fallback)
                step("notes", lambda: writer.update_manifest(notes=list(ctx.notes)))
                for note in ctx.notes:
                    self.progress.warn(note)
            if signalled() and self.status == "succeeded":
                self.status = "interrupted"
            self._stop_recording_scratch()
            if getattr(self, "_scratch_paths", None):  # those made by other threads too
                writer.manifest["scratch"] = list(self._scratch_paths)
            step("run", lambda: writer.finish(self.status))
            if self.status == "failed":
                self._show_logs()

    def _release(self) -> None:
        """Release the target; a failure is the run's error only when it left something for `storbench cleanup`
        (an engine stopping on the same signal may have removed the last of the root while we did)."""
        target = self.plan.target
        try:
            target.release(self.plan.options.keep_data)
        except Exception:
            try:
                left = target.root_state() != GONE
            except Exception:  # the target does not answer: assume the worst, say how to remove it
                left = True
            if left:
                raise

    def outcome(self) -> RunOutcome:
        return RunOutcome(self.plan.run_id, self.status, self.writer.path, self.writer.manifest.get("errors", []))

    def _show_logs(self) -> None:
        """A failed run: the last relevant lines of each engine's own log (the terminal never showed them)."""
        for path, lines in self.engines.failure_logs():
            self.progress.warn(f"the last relevant lines of {path}:\n" + "\n".join(f"  {line}" for line in lines))

    def _add_engine_metrics(self, failed: Callable[[str, str], None]) -> None:
        """What the stopped engines measured themselves, beside the telemetry; per executor host samples
        carry the node they ran on."""
        samples, files = self.engines.collect(failed)
        if self.nodes is not None:
            samples = [node_labelled(s, self.nodes.telemetry) for s in samples]
        if samples:
            self.writer.add_samples(samples)
        for name, data in files.items():
            self.writer.write_json(name, data)

    def _attempt(self, where: str, action: Callable[[], Any], what: str = "") -> None:
        """One cleanup step: its failure is an error of the run, and the steps after it still run."""
        try:
            action()
        except Exception as exc:
            self.record_error(where, 0, f"{what}{exc}" if what else f"{type(exc).__name__}: {exc}")

    def record_error(self, workload: str, repetition: int, message: str) -> None:
        errors = list(self.writer.manifest.get("errors", []))
        errors.append({"workload": workload, "repetition": repetition, "error": message})
        try:
            self.writer.update_manifest(errors=errors)
        except OSError:  # a full disk: kept in writer.manifest, the next manifest write that succeeds carries it
            pass
        self.progress.warn(f"{workload}: {message}")

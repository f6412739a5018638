"""The run lifecycle: check → claim → prepare steps → repetitions × workloads → cleanup.

Telemetry samples the whole run; each timed operation gets the paper's device and
CPU metrics over its own window. Samples are written after every workload, so a
crash or Ctrl-C keeps what was measured and the run is marked interrupted or failed.
"""

from __future__ import annotations

import secrets
import shutil
import sys
import tempfile
import time
from dataclasses import dataclass, field, replace
from datetime import datetime
from pathlib import Path
from typing import Any

from storbench import __version__
from storbench.analysis.metrics import spec_for
from storbench.context import RunContext
from storbench.engines.eventlog import (GROUP_SEPARATOR, job_group, read_event_logs, roll_up, samples_from,
                                       stage_table, sub_labelled)
from storbench.engines.spark import DEFAULT_MASTER, SparkEngine
from storbench.errors import InputError, StorbenchError, WorkloadError
from storbench.machine import fingerprint
from storbench.progress import Progress
from storbench.results.model import Sample
from storbench.results.store import STAGES_FILE, ResultStore, RunWriter
from storbench.suites import Suite, load_suite
from storbench.sweep import Point, sweep_points
from storbench.targets import Target, TargetOptions, parse_target
from storbench.telemetry import Collector, window_metrics
from storbench.telemetry.window import interface_max_mbps, only_devices, to_csv
from storbench.telemetry.devices import devices_for_path
from storbench.workloads.base import Workload

NO_POINT = Point()
SHUFFLE_METRICS = ("max_read_mbps", "max_write_mbps", "max_util_pct", "read_mb", "written_mb")
LABEL_CHARS = set("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._-")


@dataclass
class RunOptions:
    suite: str | None = None
    label: str = "default"
    target: str | None = None  # None: a temporary directory, removed afterwards
    scale: str | None = None
    repeat: int | None = None
    overrides: dict[str, Any] = field(default_factory=dict)
    spark_master: str = DEFAULT_MASTER
    spark_conf: dict[str, str] = field(default_factory=dict)
    devices: str | None = None
    interval: float = 1.0
    mode: str = "default"
    replication: int | None = None  # HDFS replication factor for hdfs:// targets
    keep_data: bool = False
    command_line: list[str] = field(default_factory=list)
    allow_device_overwrite: bool = False  # a raw device target may be overwritten by fio workloads
    sweep: dict[str, list[str]] | None = None  # --sweep key=v1,v2: overrides the suite's sweep
    endpoint: str | None = None  # s3:// targets: the S3 endpoint URL (default: env or the storbench s3 service)


@dataclass
class RunOutcome:
    run_id: str
    status: str
    path: Path
    errors: list[dict[str, Any]]


def validate_options(options: RunOptions) -> None:
    if not options.label or not set(options.label) <= LABEL_CHARS:
        raise InputError(f"--label {options.label!r}: use letters, digits, '.', '_' and '-' only")
    if options.repeat is not None and options.repeat < 1:
        raise InputError(f"--repeat {options.repeat}: must be at least 1")
    if not 0.05 <= options.interval <= 60:
        raise InputError(f"--interval {options.interval}: must be between 0.05 and 60 seconds")
    if options.mode not in ("default", "compat"):
        raise InputError(f"--mode {options.mode!r}: allowed: default, compat")


def new_run_id(label: str) -> str:
    return f"{datetime.now().strftime('%Y%m%d-%H%M%S')}-{label}-{secrets.token_hex(2)}"


class Runner:
    def __init__(self, options: RunOptions, store: ResultStore, progress: Progress):
        self.options = options
        self.store = store
        self.progress = progress
        self._groups: dict[str, tuple[str, int, dict[str, str]]] = {}  # Spark job group → what ran in it

    def run(self) -> RunOutcome:
        options = self.options
        validate_options(options)
        suite = load_suite(options.suite)
        scale, suite_params, per_workload = suite.resolve(options.scale, options.overrides)
        repetitions = options.repeat or suite.repetitions
        workloads = suite.instances()
        temporary = options.target is None
        text = options.target or tempfile.mkdtemp(prefix="storbench-target-")
        try:
            target = parse_target(text, TargetOptions(self.store.home, options.replication, options.endpoint))
            return self._run_checked(suite, scale, suite_params, per_workload, repetitions, workloads, target)
        finally:
            if temporary:
                shutil.rmtree(text, ignore_errors=True)

    def _run_checked(self, suite: Suite, scale: str, suite_params: dict[str, Any],
                     per_workload: dict[str, dict[str, Any]], repetitions: int,
                     workloads: dict[str, Workload], target: Target) -> RunOutcome:
        options = self.options
        need_bytes = sum(w.estimated_bytes(per_workload[n]) for n, w in workloads.items())
        points = sweep_points(options.sweep or suite.sweep, suite.declared_params(), options.spark_master,
                              "--sweep" if options.sweep else suite.source)
        run_id = new_run_id(options.label)
        target.precheck(need_bytes)
        deferred: list[str] = []  # warnings wait until the input is known to be good: bad input is one line
        devices, how = target.devices(options.devices, deferred.append)
        target.claim(run_id)
        local_dir = target.spark_local_dir()
        wanted = {k: v for name, w in workloads.items() for k, v in w.spark_conf(per_workload[name]).items()}
        engine = SparkEngine(options.spark_master, {**target.spark_conf(), **wanted, **options.spark_conf},
                             local_dir, app_name=f"storbench {suite.name} {options.label}")
        # Shuffle and spill on another device than the target's: measured too, reported apart (paper 001).
        self._devices = devices
        self._shuffle_devices = [] if options.devices else shuffle_only_devices(
            options.spark_conf.get("spark.local.dir", local_dir).split(",")[0], devices)
        ctx = RunContext(run_id=run_id, target=target, root_uri=target.root_uri or "",
                         engine=engine, mode=options.mode,
                         allow_device_overwrite=options.allow_device_overwrite)
        try:
            for name, workload in workloads.items():
                workload.check(ctx, per_workload[name])
        except StorbenchError:
            target.release(keep_data=False)
            raise
        for warning in deferred:
            self.progress.warn(warning)
        writer = self.store.create_run(run_id, {
            "label": options.label, "suite": suite.name, "suite_source": suite.source, "paper": suite.paper,
            "tool_version": __version__, "command_line": options.command_line or sys.argv,
            "scale": scale, "repetitions": repetitions, "parameters": suite_params,
            "sweep": [point.labels for point in points if point.labels],
            "workload_parameters": per_workload,
            "workload_versions": {name: w.version for name, w in workloads.items()},
            "config": {"target": target.uri, "spark_master": options.spark_master,
                       "spark_conf": options.spark_conf, "devices": devices, "devices_how": how,
                       "replication": options.replication, "telemetry_interval_s": options.interval,
                       "mode": options.mode, "run_root": target.root_uri,
                       "shuffle_devices": self._shuffle_devices,
                       **target.manifest_config()},
            "machine": fingerprint(target.local_path(), devices), "errors": []})
        self.progress.info(f"run {run_id}: suite {suite.name}, scale {scale}, {repetitions} repetition(s), "
                           f"target {target.uri}, devices {', '.join(devices) or 'none'}")
        engine.event_log_dir = str(writer.path / "spark-events")
        Path(engine.event_log_dir).mkdir()
        collector = Collector(devices + self._shuffle_devices, interval=options.interval)
        ctx.mark = collector.mark
        windows: list[dict[str, Any]] = []
        status = "failed"
        try:
            collector.start()
            writer.update_manifest(software={"storbench": __version__})
            if any(w.engine == "spark" for w in workloads.values()):
                self._start_spark(engine, target, ctx, writer, need_bytes)
            for index, point in enumerate(points):
                if point.master or point.spark_conf:
                    self._restart_spark(ctx, point, writer)
                for entry in suite.prepare:
                    self._run_one(ctx, writer, collector, windows, workloads[entry.workload],
                                  {**per_workload[entry.workload], **point.params}, 0, 0, point, index)
                for repetition in range(1, repetitions + 1):
                    for entry in suite.workloads:
                        self._run_one(ctx, writer, collector, windows, workloads[entry.workload],
                                      {**per_workload[entry.workload], **point.params}, repetition, repetitions,
                                      point, index)
            status = "succeeded"
        except KeyboardInterrupt:
            status = "interrupted"
            self.progress.warn("interrupted: what was measured so far is kept")
        except StorbenchError as exc:
            self._record_error(writer, *getattr(exc, "where", ("run", 0)), str(exc))
        except Exception as exc:  # an engine or workload bug must still leave a readable run
            self._record_error(writer, "run", 0, f"{type(exc).__name__}: {exc}")
        finally:
            collector.stop()
            origin = collector.points()[0].time if collector.points() else 0.0
            for window in windows:
                window["t0"] -= origin
                window["t1"] -= origin
            writer.write_series(to_csv(collector.rates()), windows)
            writer.update_manifest(collector_cpu_s=round(collector.cpu_seconds, 4))
            self._cleanup(ctx, workloads, per_workload, writer)
            try:
                target.release(options.keep_data)
            except Exception as exc:  # the target went away: the measurements still stand
                self._record_error(writer, "cleanup", 0, f"could not remove {target.root_uri}: {exc}")
            finally:
                ctx.engine.stop()
            if engine.event_log_dir and any(Path(engine.event_log_dir).iterdir()):
                self._add_spark_metrics(writer, Path(engine.event_log_dir))
            if ctx.artifacts:  # what workloads asked to keep (fio: job files, version, per-second series)
                writer.write_json("artifacts.json", ctx.artifacts)
            if ctx.notes:  # workload warnings (fio: I/O engine or O_DIRECT fallback)
                writer.update_manifest(notes=list(ctx.notes))
                for note in ctx.notes:
                    self.progress.warn(note)
            writer.finish(status)
        return RunOutcome(run_id, status, writer.path, writer.manifest.get("errors", []))

    def _start_spark(self, engine: SparkEngine, target: Target, ctx: RunContext, writer: RunWriter,
                     need_bytes: int) -> None:
        with self.progress.step(f"starting Spark ({engine.master})"):
            started = time.monotonic()
            engine.start()
            writer.update_manifest(
                software={**writer.manifest["software"], **engine.versions()},
                spark_settings=engine.settings(),
                spark_startup_s=round(time.monotonic() - started, 3))
            target.attach(engine.session, need_bytes)
            ctx.root_uri = target.root_uri or ""
            writer.update_manifest(config={**writer.manifest["config"], "run_root": target.root_uri})

    def _restart_spark(self, ctx: RunContext, point: Point, writer: RunWriter) -> None:
        """A sweep point with its own Spark settings gets its own session (same dirs, same event log)."""
        old = ctx.engine
        old.stop()
        ctx.engine = SparkEngine(point.master or old.master, {**old.user_conf, **point.spark_conf}, old.local_dir,
                                 app_name=old.app_name)
        ctx.engine.event_log_dir = old.event_log_dir
        with self.progress.step(f"starting Spark for {_point_text(point)}"):
            ctx.engine.start()
        settings = dict(writer.manifest.get("spark_settings_by_point") or {})
        settings[_point_text(point)] = ctx.engine.settings()
        writer.update_manifest(spark_settings_by_point=settings)

    def _run_one(self, ctx: RunContext, writer: RunWriter, collector: Collector, windows: list[dict[str, Any]],
                 workload: Workload, params: dict[str, Any], repetition: int, repetitions: int,
                 point: Point = NO_POINT, index: int = 0) -> None:
        label = workload.name if repetition == 0 else f"{workload.name} (repetition {repetition}/{repetitions})"
        if point.labels:
            label += f" [{_point_text(point)}]"
        with self.progress.step(label) as outcome:
            ctx.last_window = None
            group = job_group(workload.name, repetition) + (f"{GROUP_SEPARATOR}{index}" if point.labels else "")
            self._groups[group] = (workload.name, repetition, point.labels)
            ctx.engine.set_job_group(group)
            try:
                workload.prepare(ctx, params)
                extra = workload.run(ctx, params)
            except StorbenchError as exc:
                exc.where = (workload.name, repetition)  # type: ignore[attr-defined]
                raise
            except Exception as exc:
                first = str(exc).strip().splitlines()[0] if str(exc).strip() else ""
                error = WorkloadError(f"workload {workload.name} failed: {type(exc).__name__}: {first}")
                error.where = (workload.name, repetition)  # type: ignore[attr-defined]
                raise error from exc
            window = ctx.last_window
            if window is None:
                raise WorkloadError(f"workload {workload.name} did not time its action (ctx.measure)")
            samples = [Sample(workload.name, "completion_time", window.end - window.start, "s", repetition)]
            samples += self._device_samples(workload.name, collector, window, repetition)
            for interface, value in interface_max_mbps(collector.points(), window.start, window.end,
                                                       self.options.interval).items():
                if value > 0:  # idle interfaces would only add empty rows to every report
                    samples.append(Sample(workload.name, "max_net_mbps", value, "MB/s", repetition,
                                          labels={"interface": interface}))
            writer.add_samples([replace(s, repetition=repetition, labels={**s.labels, **point.labels})
                                for s in samples + list(extra)])
            windows.append({"workload": workload.name, "repetition": repetition, **point.labels,
                            "t0": window.start, "t1": window.end})
            outcome["text"] = _short_summary(samples)

    def _device_samples(self, workload: str, collector: Collector, window: Any, repetition: int) -> list[Sample]:
        """The paper's device and host metrics over the target's devices, plus the shuffle devices' own."""
        points = collector.points()
        if self._shuffle_devices:
            points = only_devices(points, self._devices)
        samples = [Sample(workload, metric, value, spec_for(metric).unit, repetition)
                   for metric, value in window_metrics(points, window.start, window.end,
                                                       self.options.interval).items()]
        if self._shuffle_devices:
            shuffle = window_metrics(only_devices(collector.points(), self._shuffle_devices), window.start,
                                     window.end, self.options.interval)
            samples += [Sample(workload, metric, shuffle[metric], spec_for(metric).unit, repetition,
                               {"devices": "shuffle"}) for metric in SHUFFLE_METRICS]
        return samples

    def _add_spark_metrics(self, writer: RunWriter, event_logs: Path) -> None:
        """Spark's per-task metrics from the finished event log, as samples beside the telemetry."""
        try:
            groups = read_event_logs(event_logs)
        except (OSError, ValueError) as exc:
            self._record_error(writer, "spark-metrics", 0, f"could not read the Spark event log: {exc}")
            return
        writer.add_samples(samples_from(roll_up(groups), sub_labelled(self._groups.get)))
        writer.write_json(STAGES_FILE, stage_table(groups))

    def _cleanup(self, ctx: RunContext, workloads: dict[str, Workload],
                 per_workload: dict[str, dict[str, Any]], writer: RunWriter) -> None:
        for name, workload in workloads.items():
            try:
                workload.cleanup(ctx, per_workload[name])
            except Exception as exc:  # cleanup of one must not stop the others
                self._record_error(writer, name, 0, f"cleanup: {exc}")

    def _record_error(self, writer: RunWriter, workload: str, repetition: int, message: str) -> None:
        errors = list(writer.manifest.get("errors", []))
        errors.append({"workload": workload, "repetition": repetition, "error": message})
        writer.update_manifest(errors=errors)
        self.progress.warn(f"{workload}: {message}")


def shuffle_only_devices(local_dir: str, target_devices: list[str]) -> list[str]:
    """The devices behind Spark's local (shuffle/spill) directory that the target does not already use."""
    return [d for d in devices_for_path(local_dir).devices if d not in target_devices]


def _point_text(point: Point) -> str:
    return ", ".join(f"{key}={value}" for key, value in point.labels.items())


def _short_summary(samples: list[Sample]) -> str:
    values = {s.metric: s.value for s in samples}
    parts = []
    for metric, fmt in (("max_read_mbps", "read max {:.0f} MB/s"), ("max_write_mbps", "write max {:.0f} MB/s"),
                        ("max_cpu_pct", "CPU max {:.0f}%")):
        if values.get(metric) is not None:
            parts.append(fmt.format(values[metric]))
    return ", ".join(parts)

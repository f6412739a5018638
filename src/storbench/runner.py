"""The run lifecycle: check → claim → prepare steps → repetitions × workloads → cleanup.

Telemetry samples the whole run; each timed operation gets the paper's device and
CPU metrics over its own window. Samples are written after every workload, so a
crash or Ctrl-C keeps what was measured and the run is marked interrupted or failed.
"""

from __future__ import annotations

import copy
import re
import secrets
import shutil
import sys
import tempfile
import time
from dataclasses import dataclass, field, replace
from datetime import datetime
from pathlib import Path
from typing import Any, Callable

from storbench import __version__, interrupts
from storbench.context import RunContext
from storbench.engines.base import EngineSetup, Tag
from storbench.engines.lifecycle import RunEngines
from storbench.engines.eventlog import EXECUTOR_HOST
from storbench.engines.jvmlog import JVM_LOG, relevant_tail
from storbench.engines.spark import DEFAULT_MASTER
from storbench.errors import InputError, StorbenchError, WorkloadError
from storbench.machine import fingerprint
from storbench.progress import Progress, expected_duration
from storbench.redaction import redact_argv, redact_settings
from storbench.results.model import Sample
from storbench.results.store import SERIES, ResultStore, RunWriter
from storbench.services.spark import running_cluster
from storbench.suites import Suite, load_suite
from storbench.sweep import Point, sweep_points
from storbench.targets import Target, TargetOptions, parse_target
from storbench.telemetry import Collector
from storbench.telemetry.cluster import ClusterTelemetry, open_cluster
from storbench.telemetry.devices import devices_for_path
from storbench.telemetry.nodes import Cluster, cluster_from_specs, load_nodes
from storbench.telemetry.power import NodePower, open_power
from storbench.telemetry.power.derived import derived_samples
from storbench.telemetry.procfs import EnergyMeter
from storbench.telemetry.run import HostTelemetry, NodesTelemetry, RunTelemetry
from storbench.workloads.base import Workload

NO_POINT = Point()
WARMUP_REPETITION = -1  # the engines' tag of a warm-up: never sampled (SparkEngine.begin)
LABEL_CHARS = set("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._-")
MAX_LABEL = 64  # the label is part of the run directory's name
MAX_WARMUP = 100
# The master URL forms Spark accepts, checked before Spark starts (else a Java stack trace after it does).
MASTER_FORMS = "local, local[N], local[*], local[N,M], spark://HOST:PORT[,HOST:PORT], yarn, k8s://URL, mesos://URL"
MASTER_RE = re.compile(r"local(\[(\d+|\*)(\s*,\s*\d+)?\])?|yarn|spark://[^,/:\s]+:\d+(,[^,/:\s]+:\d+)*"
                       r"|(k8s|mesos)://\S+")


@dataclass
class RunOptions:
    suite: str | None = None
    label: str = "default"
    target: str | None = None  # None: a temporary directory, removed afterwards
    scale: str | None = None
    repeat: int | None = None
    warmup: int = 0  # --warmup N: unrecorded repetitions before the recorded ones, per sweep point
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
    nodes: str | None = None  # a nodes file: telemetry from every node of a cluster
    node_specs: list[str] = field(default_factory=list)  # --node name=URL[,devices=..][,role=..]
    telemetry: str | None = None  # local, node_exporter or prometheus (default: node_exporter with nodes)
    prometheus: str | None = None  # the Prometheus that scrapes the nodes' exporters (--telemetry prometheus)
    power: str | None = None  # --power KIND[:ARGS]: this machine's power source (nodes: their power: key)
    power_insecure: bool = False  # --power-insecure: do not check a BMC's certificate
    idle_s: float = 0.0  # --idle-s: an idle window before the first workload, the power baseline


@dataclass
class RunOutcome:
    run_id: str
    status: str
    path: Path
    errors: list[dict[str, Any]]


def validate_options(options: RunOptions) -> None:
    if not options.label or not set(options.label) <= LABEL_CHARS:
        raise InputError(f"--label {options.label!r}: use letters, digits, '.', '_' and '-' only")
    if len(options.label) > MAX_LABEL:
        raise InputError(f"--label: {len(options.label)} characters; at most {MAX_LABEL} allowed")
    if not MASTER_RE.fullmatch(options.spark_master):
        raise InputError(f"--spark-master {options.spark_master!r}: allowed: {MASTER_FORMS}")
    if options.repeat is not None and options.repeat < 1:
        raise InputError(f"--repeat {options.repeat}: must be at least 1")
    if not 0 <= options.warmup <= MAX_WARMUP:
        raise InputError(f"--warmup {options.warmup}: must be between 0 and {MAX_WARMUP}")
    if not 0.05 <= options.interval <= 60:
        raise InputError(f"--interval {options.interval}: must be between 0.05 and 60 seconds")
    if options.mode not in ("default", "compat"):
        raise InputError(f"--mode {options.mode!r}: allowed: default, compat")
    if not 0 <= options.idle_s <= 3600:
        raise InputError(f"--idle-s {options.idle_s}: must be between 0 and 3600 seconds")


def new_run_id(label: str) -> str:
    return f"{datetime.now().strftime('%Y%m%d-%H%M%S')}-{label}-{secrets.token_hex(2)}"


class Runner:
    def __init__(self, options: RunOptions, store: ResultStore, progress: Progress):
        self.options = options
        self.store = store
        self.progress = progress
        self._cluster: ClusterTelemetry | None = None  # the nodes measured, when not this machine alone

    def run(self) -> RunOutcome:
        options = self.options
        validate_options(options)
        self.store.check_writable()
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
        cluster = self._open_cluster(devices, deferred.append, target.nodes_file())  # an unreachable exporter:
        power = None if cluster is not None else open_power(  # one line, nothing written; an unreachable BMC too
            options.power, "--power", options.interval, local=True, has_rapl=EnergyMeter().available,
            snapshots=list, insecure=options.power_insecure)
        engine_names = [engine for name, w in workloads.items() for engine in w.engines(per_workload[name])]
        # how Spark reaches the target (s3:// through S3A: its jars), only when Spark runs; before the claim
        target_conf = target.spark_conf() if "spark" in engine_names else {}
        target.claim(run_id)
        wanted = {k: v for name, w in workloads.items() for k, v in w.spark_conf(per_workload[name]).items()}
        setup = EngineSetup(app_name=f"storbench {suite.name} {options.label}", master=options.spark_master,
                            spark_conf={**target_conf, **wanted, **options.spark_conf},
                            local_dir=target.spark_local_dir)
        ctx = RunContext(run_id=run_id, target=target, root_uri=target.spark_uri(target.root_uri or ""),
                         mode=options.mode,
                         allow_device_overwrite=options.allow_device_overwrite, keep_data=options.keep_data)
        try:  # bad input, a failed start-up or Ctrl-C before the run starts: nothing stays on the target
            for name, workload in workloads.items():
                workload.check(ctx, per_workload[name])
            for warning in deferred:
                self.progress.warn(warning)
            writer = self.store.create_run(run_id, {
                "label": options.label, "suite": suite.name, "suite_source": suite.source, "paper": suite.paper,
                "tool_version": __version__, "command_line": redact_argv(options.command_line or sys.argv),
                "scale": scale, "repetitions": repetitions, "warmup": options.warmup, "parameters": suite_params,
                "sweep": [point.labels for point in points if point.labels],
                "workload_parameters": per_workload,
                "workload_versions": {name: w.version for name, w in workloads.items()},
                "config": {"target": target.uri, "spark_master": options.spark_master,
                           "spark_conf": redact_settings(options.spark_conf), "devices": devices,
                           "devices_how": how,
                           "replication": options.replication, "telemetry_interval_s": options.interval,
                           "mode": options.mode, "run_root": target.root_uri,
                           **target.manifest_config()},
                "machine": fingerprint(target.local_path(), devices), "errors": []})
            if cluster is not None:
                writer.update_manifest(
                    config={**writer.manifest["config"], "telemetry": self._source,
                            "nodes": cluster.describe(), "nodes_from": self._cluster_source},
                    machine={**writer.manifest["machine"],
                             "nodes": {m.label: m.fingerprint for m in cluster.members}})
                ctx.node_fingerprints = {m.label: m.fingerprint for m in cluster.members}  # ops per thread
            self.progress.info(f"run {run_id}: suite {suite.name}, scale {scale}, {repetitions} repetition(s), "
                               f"target {target.uri}, devices {', '.join(devices) or 'none'}")
            self.progress.plan(len(points) * (len(suite.prepare) + (options.warmup + repetitions) * len(suite.workloads)),
                               self._expected_s(suite.name, scale, repetitions, writer.manifest["sweep"]))
            ctx.progress = self.progress.advance  # a workload's own progress (generation, streams, stages)
            setup.run_dir = writer.path
            engines = self._engines = RunEngines(engine_names, setup)
            ctx.engines = engines.by_name
            telemetry = self._telemetry(cluster, engines, devices, writer, power)
            ctx.mark = telemetry.mark
        except BaseException:
            target.release(keep_data=False)
            raise
        windows: list[dict[str, Any]] = []
        status = "failed"
        try:
            telemetry.start()
            writer.update_manifest(software={"storbench": __version__})
            engines.start(self.progress.step, writer.update_manifest, dict(writer.manifest["software"]))
            self._attach_target(target, ctx, writer, need_bytes)
            self._idle = self._idle_baseline(telemetry)
            for index, point in enumerate(points):
                if point.master or point.spark_conf:
                    engines.reconfigure(point.labels, point.master, point.spark_conf, self.progress.step,
                                        writer.manifest, writer.update_manifest)
                for entry in suite.prepare:
                    self._run_one(ctx, writer, telemetry, windows, workloads[entry.workload],
                                  {**per_workload[entry.workload], **point.params}, 0, 0, point, index)
                for warmup in range(1, options.warmup + 1):  # the JIT's and caches' start-up, not recorded
                    for entry in suite.workloads:
                        self._warm_up(ctx, workloads[entry.workload],
                                      {**per_workload[entry.workload], **point.params}, warmup, point, index)
                for repetition in range(1, repetitions + 1):
                    for entry in suite.workloads:
                        self._run_one(ctx, writer, telemetry, windows, workloads[entry.workload],
                                      {**per_workload[entry.workload], **point.params}, repetition, repetitions,
                                      point, index)
            status = "succeeded"
        except KeyboardInterrupt:
            status = "interrupted"
            self.progress.warn("interrupted: what was measured so far is kept")
        except StorbenchError as exc:
            self._record_error(writer, *exc.where, str(exc))
        except Exception as exc:  # an engine or workload bug must still leave a readable run
            self._record_error(writer, "run", 0, f"{type(exc).__name__}: {exc}")
        finally:
            # Each step on its own: a full disk while writing the series must not keep the data on the
            # target or the engines running; a second Ctrl-C/SIGTERM must not cut this short.
            with interrupts.shielded() as signalled:
                failed = lambda where, message: self._record_error(writer, where, 0, message)  # noqa: E731
                step = lambda where, action, what="": self._attempt(writer, where, action, what)  # noqa: E731
                step("cleanup", lambda: engines.cancel(failed))
                step("telemetry", telemetry.stop)
                step("telemetry", lambda: telemetry.write_series(writer, windows))
                self._cleanup(ctx, workloads, per_workload, writer)
                step("cleanup", lambda: target.release(options.keep_data), f"could not remove {target.root_uri} (later: storbench cleanup {run_id}): ")
                step("cleanup", lambda: engines.stop(failed))
                step("engines", lambda: self._add_engine_metrics(writer, engines, failed))
                if ctx.artifacts:  # what workloads asked to keep (fio: job files, version, per-second series)
                    step("artifacts", lambda: writer.write_json("artifacts.json", ctx.artifacts))
                if ctx.notes:  # workload warnings (fio: I/O engine or O_DIRECT fallback)
                    step("notes", lambda: writer.update_manifest(notes=list(ctx.notes)))
                    for note in ctx.notes:
                        self.progress.warn(note)
                if signalled() and status == "succeeded":
                    status = "interrupted"
                step("run", lambda: writer.finish(status))
                if status == "failed":
                    self._show_log(writer.path / JVM_LOG)
        return RunOutcome(run_id, status, writer.path, writer.manifest.get("errors", []))

    def _show_log(self, path: Path) -> None:
        """A failed run: the last relevant lines of the JVM's log (the terminal never showed them), with its path."""
        lines = relevant_tail(path)
        if lines:
            self.progress.warn(f"the last relevant lines of {path}:\n" + "\n".join(f"  {line}" for line in lines))

    def _attach_target(self, target: Target, ctx: RunContext, writer: RunWriter, need_bytes: int) -> None:
        """Targets reached through an engine (hdfs:// through Spark's Hadoop client) claim their run root now."""
        if ctx.root_uri:
            return
        target.attach(ctx.engines, need_bytes)
        if target.root_uri:
            ctx.root_uri = target.root_uri
            writer.update_manifest(config={**writer.manifest["config"], "run_root": target.root_uri})

    def _run_one(self, ctx: RunContext, writer: RunWriter, telemetry: RunTelemetry, windows: list[dict[str, Any]],
                 workload: Workload, params: dict[str, Any], repetition: int, repetitions: int,
                 point: Point = NO_POINT, index: int = 0) -> None:
        label = workload.name if repetition == 0 else f"{workload.name} (repetition {repetition}/{repetitions})"
        if point.labels:
            label += f" [{_point_text(point)}]"
        poll = getattr(self._engines.by_name.get("spark"), "task_progress", None)  # Spark's tasks, for progress
        with self.progress.step(label, counted=True, poll=poll) as outcome:
            tag = Tag(workload.name, repetition, index, point.labels)
            signals = interrupts.received()
            try:
                extra = self._execute(ctx, workload, params, tag)
            except Exception as exc:
                if interrupts.received() > signals:  # py4j turns an interrupt into its own error on the way up
                    raise KeyboardInterrupt from exc
                if isinstance(exc, StorbenchError):
                    exc.where = (workload.name, repetition)
                    if exc.samples:  # measured before it failed: kept, and the phase still fails
                        writer.add_samples([replace(s, repetition=repetition, labels={**s.labels, **point.labels})
                                            for s in exc.samples])
                    raise
                error = WorkloadError(f"workload {workload.name} failed: {_error_line(exc)}")
                error.where = (workload.name, repetition)
                raise error from exc
            window = ctx.last_window
            if window is None:
                raise WorkloadError(f"workload {workload.name} did not time its action (ctx.measure)")
            seconds = window.end - window.start
            samples = [Sample(workload.name, "completion_time", seconds, "s", repetition)]
            samples += telemetry.samples(workload.name, window, repetition)
            extra = list(extra)
            samples += derived_samples(workload.name, repetition, samples,
                                       workload.ops_per_s(params, extra, seconds), getattr(self, "_idle", {}))
            writer.add_samples([replace(s, repetition=repetition, labels={**s.labels, **point.labels})
                                for s in samples + extra + self._engines.end(tag)])
            windows.append({"workload": workload.name, "repetition": repetition, **point.labels,
                            "t0": window.start, "t1": window.end})
            self._record_rules(writer, f"{workload.name} [{_point_text(point)}]" if point.labels else workload.name,
                               ctx.rules)
            outcome["text"] = _short_summary(samples)

    def _expected_s(self, suite: str, scale: str, repetitions: int, sweep: list[dict[str, str]]) -> float | None:
        """A previous run's duration of this suite at this scale, for the ETA (None: none, or unreadable)."""
        try:
            return expected_duration(self.store.list_runs(), suite, scale, repetitions, sweep)
        except Exception:  # the ETA is a nicety: a store it cannot read is no reason to fail the run
            return None

    def _execute(self, ctx: RunContext, workload: Workload, params: dict[str, Any], tag: Tag) -> list[Sample]:
        """prepare + run under the engines' tag; the window's rules start from the workload's flush parameter."""
        ctx.last_window = None
        ctx.flush = bool(params.get("flush"))
        ctx.rules = {"flush": "off"} if "flush" in params else {}
        self._engines.begin(tag)
        workload.prepare(ctx, params)
        return list(workload.run(ctx, params))

    def _warm_up(self, ctx: RunContext, workload: Workload, params: dict[str, Any], warmup: int,
                 point: Point, index: int) -> None:
        """One unrecorded repetition: run as a recorded one is, its samples and engine figures dropped."""
        label = f"{workload.name} (warm-up {warmup}/{self.options.warmup})"
        if point.labels:
            label += f" [{_point_text(point)}]"
        with self.progress.step(label, counted=True):
            tag = Tag(workload.name, WARMUP_REPETITION, index, point.labels)
            signals = interrupts.received()
            kept = copy.deepcopy(ctx.artifacts)  # what the workload keeps (fio's job files and JSON) is not kept
            try:
                self._execute(ctx, workload, params, tag)
                self._engines.end(tag)
                ctx.artifacts.clear()
                ctx.artifacts.update(kept)
            except Exception as exc:
                if interrupts.received() > signals:
                    raise KeyboardInterrupt from exc
                if isinstance(exc, StorbenchError):
                    exc.where, exc.samples = (workload.name, 0), ()  # nothing of a warm-up is kept
                    raise
                error = WorkloadError(f"workload {workload.name} failed in warm-up {warmup}: {_error_line(exc)}")
                error.where = (workload.name, 0)
                raise error from exc

    def _record_rules(self, writer: RunWriter, workload: str, rules: dict[str, str]) -> None:
        """The manifest's window_rules: per workload (and sweep point), the conditions its windows ran under
        (the report shows them; compare calls runs whose rules differ not comparable)."""
        known = dict(writer.manifest.get("window_rules") or {})
        if rules and known.get(workload) != rules:
            known[workload] = {**known.get(workload, {}), **rules}
            writer.update_manifest(window_rules=known)

    def _idle_baseline(self, telemetry: RunTelemetry) -> dict[str | None, float | None]:
        """--idle-s: power while nothing runs, before the first workload (per node and overall)."""
        if not self.options.idle_s:
            return {}
        with self.progress.step(f"idle baseline ({self.options.idle_s:g} s)") as outcome:
            start = telemetry.mark()
            time.sleep(self.options.idle_s)
            idle = telemetry.idle(start, telemetry.mark())
            outcome["text"] = (f"{idle[None]:.1f} W" if idle.get(None) is not None else "power not measured")
        return idle

    def _open_cluster(self, devices: list[str], warn: Callable[[str], None],
                      target_nodes: Path | None = None) -> ClusterTelemetry | None:
        """The nodes to measure (--nodes, --node, else those of the spark master's or the target's storbench
        service), checked to answer; None: this machine alone."""
        options = self.options
        cluster: Cluster | None = None
        if options.nodes and options.node_specs:
            raise InputError("--nodes and --node: give the nodes one way, not both")
        if options.nodes:
            cluster = load_nodes(options.nodes)
        elif options.node_specs:
            cluster = cluster_from_specs(options.node_specs)
        elif (service := running_cluster(self.store.home)) and service[0] == options.spark_master:
            cluster = replace(load_nodes(service[1]), source=f"{service[1]} (services up spark)")
        elif target_nodes:
            cluster = replace(load_nodes(target_nodes), source=f"{target_nodes} (the target's storbench service)")
        source = self._telemetry_source(cluster)
        if cluster is None:
            if source != "local":
                raise InputError(f"--telemetry {source}: needs the cluster's nodes (--nodes FILE or --node ...)")
            if not options.spark_master.startswith("local"):
                warn(f"telemetry measures only this machine (the driver), not the nodes of {options.spark_master}: "
                     f"pass --nodes to measure the cluster's nodes")
            return None
        if options.prometheus:
            cluster = replace(cluster, prometheus=options.prometheus)
        if options.power:
            raise InputError(f"--power: with nodes ({cluster.source}), give each node's source as its power: key "
                             f"in a nodes file")
        self._cluster_source, self._source = cluster.source, source
        self._cluster = open_cluster(cluster, source, options.interval, devices, options.power_insecure)
        return self._cluster

    def _telemetry_source(self, cluster: Cluster | None = None) -> str:
        """--telemetry, or node_exporter when nodes are given (prometheus when the nodes file names one)."""
        if self.options.telemetry:
            return self.options.telemetry
        if cluster is None:
            return "local" if not (self.options.nodes or self.options.node_specs) else "node_exporter"
        return "prometheus" if (cluster.prometheus or self.options.prometheus) else "node_exporter"

    def _telemetry(self, cluster: ClusterTelemetry | None, engines: RunEngines, devices: list[str],
                   writer: RunWriter, power: NodePower | None = None) -> RunTelemetry:
        if cluster is not None:
            cluster.journal_to(writer.path)
            return NodesTelemetry(cluster)
        # Engine scratch (Spark's shuffle and spill) on another device than the target's: measured too,
        # reported apart (paper 001).
        shuffle = [] if self.options.devices else scratch_only_devices(engines.scratch_dirs(), devices)
        writer.update_manifest(config={**writer.manifest["config"], "shuffle_devices": shuffle})
        collector = Collector(devices + shuffle, interval=self.options.interval, journal=writer.path / SERIES)
        if power is not None and power.snapshots is not None:
            power.snapshots = collector.points  # the RAPL counters the collector reads are rapl's readings
        return HostTelemetry(collector, devices, shuffle, self.options.interval, power)

    def _attempt(self, writer: RunWriter, where: str, action: Callable[[], Any], what: str = "") -> None:
        """One cleanup step: its failure is an error of the run, and the steps after it still run."""
        try:
            action()
        except Exception as exc:
            self._record_error(writer, where, 0, f"{what}{exc}" if what else f"{type(exc).__name__}: {exc}")

    def _add_engine_metrics(self, writer: RunWriter, engines: RunEngines, failed: Any) -> None:
        """What the stopped engines measured themselves (Spark: its event log), beside the telemetry; per
        executor host samples carry the node they ran on."""
        samples, files = engines.collect(failed)
        if self._cluster is not None:
            samples = [node_labelled(s, self._cluster) for s in samples]
        if samples:
            writer.add_samples(samples)
        for name, data in files.items():
            writer.write_json(name, data)

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
        try:
            writer.update_manifest(errors=errors)
        except OSError:  # a full disk: kept in writer.manifest, the next manifest write that succeeds carries it
            pass
        self.progress.warn(f"{workload}: {message}")


def node_labelled(sample: Sample, cluster: ClusterTelemetry) -> Sample:
    """An engine's per-host sample labelled with the node of that host, where a node has it."""
    host = sample.labels.get(EXECUTOR_HOST)
    label = cluster.label_for_host(host) if host else None
    if label is None:
        return sample
    labels = {k: v for k, v in sample.labels.items() if k != EXECUTOR_HOST}
    return replace(sample, labels={**labels, "node": label})


def scratch_only_devices(scratch_dirs: list[str], target_devices: list[str]) -> list[str]:
    """The devices behind the engines' scratch (Spark's shuffle/spill) directories that the target does not use."""
    found = [d for path in scratch_dirs for d in devices_for_path(path).devices]
    return [d for d in dict.fromkeys(found) if d not in target_devices]


def _error_line(exc: Exception) -> str:
    """``Kind: first line``; for a JVM error (Py4JJavaError) its root cause, which names what failed
    (``org.apache.hadoop.hdfs.BlockMissingException: Could not obtain block ...``), not the py4j call."""
    text = str(exc).strip()
    cause = getattr(exc, "java_exception", None)
    try:
        while cause is not None and cause.getCause() is not None and not cause.getCause().equals(cause):
            cause = cause.getCause()
        if cause is not None:
            text = f"{cause.toString()}".strip()
    except Exception:  # the JVM is gone: the Python text is all there is
        cause = None
    first = text.splitlines()[0] if text else ""
    return first if cause is not None else f"{type(exc).__name__}: {first}"


def _point_text(point: Point) -> str:
    return ", ".join(f"{key}={value}" for key, value in point.labels.items())


def _short_summary(samples: list[Sample]) -> str:
    values = {s.metric: s.value for s in samples}
    parts = []
    for metric, fmt in (("max_read_mbps", "read max {:.0f} MB/s"), ("max_write_mbps", "write max {:.0f} MB/s"),
                        ("max_cpu_pct", "CPU max {:.0f}%"), ("avg_power_w", "{:.0f} W avg")):
        if values.get(metric) is not None:
            parts.append(fmt.format(values[metric]))
    return ", ".join(parts)

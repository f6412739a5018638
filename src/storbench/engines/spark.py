"""The Spark engine: one PySpark session per run (local[*] by default, any master by --spark-master).

Every workload's Spark jobs are tagged with a job group (``begin``); after the session
stops, ``collect`` reads Spark's own event log in the run directory and turns each
group's task metrics into samples of that workload (storbench.engines.eventlog).
"""

from __future__ import annotations

import os
import platform
import re
import shlex
import shutil
import sys
import time
from pathlib import Path
from typing import Any, Callable

from storbench import interrupts
from storbench.binaries import java_hint, require
from storbench.engines import s3a
from storbench.engines.base import Engine, EngineOptions, EngineSetup, Tag, register
from storbench.engines.capabilities import (
    Diagnosable,
    ReportsProgress,
    Sweepable,
    TargetBinding,
    WindowCounters,
    WritesScratch,
)
from storbench.engines.eventlog import (
    GROUP_SEPARATOR,
    job_group,
    read_event_logs,
    roll_up,
    samples_from,
    stage_table,
    sub_labelled,
)
from storbench.engines import spark_catalog, spark_jvm, spark_options
from storbench.engines.jvmlog import JVM_LOG, complete_cause, relevant_tail, root_cause
from storbench.engines.shipping import ship_code
from storbench.engines.spark_options import DEFAULT_MASTER, SparkOptions
from storbench.engines.spark_report import SparkReport
from storbench.errors import EngineError
from storbench.redaction import SPARK_REDACTION_REGEX, is_secret_name, redact_settings
from storbench.results.model import Sample
from storbench.services.jvm import extra_options, launcher_jar
from storbench.engines.spark_jvm import quiet_py4j, running_tasks


def target_conf(facts: Any) -> dict[str, str]:
    """How Spark's Hadoop client reaches the target: S3A with its endpoint and keys (never recorded: secret
    names are masked in the manifest and the event log); on HDFS, fail fast when the NameNode goes away and
    keep the replication asked for."""
    if facts.scheme == "s3":
        return s3a.spark_conf(facts.endpoint_url, facts.access_key, facts.secret_key, facts.region, facts.server)
    if facts.scheme != "hdfs":
        return {}
    conf = {"spark.hadoop.ipc.client.connect.max.retries": "2", "spark.hadoop.ipc.client.connect.timeout": "5000"}
    if facts.replication is not None:
        conf["spark.hadoop.dfs.replication"] = str(facts.replication)
    return conf


def launch_conf(conf: dict[str, str]) -> list[tuple[str, str]]:
    """The settings the JVM is launched with (on its command line): every one whose name is not secret."""
    return [(key, value) for key, value in conf.items() if not is_secret_name(key)]


STAGES_FILE = "spark-stages.json"  # per-stage detail of every tagged workload, beside the run's samples


@register
class SparkEngine(
    Engine,
    SparkOptions,
    SparkReport,
    Sweepable,
    TargetBinding,
    WritesScratch,
    WindowCounters,
    ReportsProgress,
    Diagnosable,
):
    """Starts one SparkSession for a run and records its settings, versions and task metrics."""

    name = "spark"
    one_per_process = True  # one SparkContext per process

    def __init__(
        self,
        master: str = DEFAULT_MASTER,
        conf: dict[str, str] | None = None,
        local_dir: str | None = None,
        app_name: str = "storbench",
    ):
        self.master = master
        self.user_conf = dict(conf or {})
        self.local_dir = local_dir
        self.app_name = app_name
        self.event_log_dir: str | None = None  # the run's own results directory, when the run keeps one
        self.jvm_log: Path | None = None  # where the JVM's output goes (else storbench's own stdout/stderr)
        self.session: Any = None
        self.catalog: dict[str, Any] | None = None  # the Hive metastore a catalog=hive run uses (spark_catalog)
        self._shipped: Path | None = None  # the private directory of the code zip executors import storbench from
        self._groups: dict[str, tuple[str, int, dict[str, str]]] = {}  # job group → what ran in it
        # S3A's counters per JVM when the workload's timed window opened and closed (its last window)
        self._s3a_window: tuple[dict[str, dict[str, int]] | None, dict[str, dict[str, int]] | None] = (None, None)
        self._group: str | None = None  # the job group of the workload running now
        self._explained = False  # a failure's root cause said everything (explain): no log tail after it

    # -- the run's options, sweep and target (its flags and cluster: SparkOptions) -----------------------

    @classmethod
    def sweep(cls, key: str, values: list[Any], options: EngineOptions, where: str) -> list[EngineOptions] | None:
        return spark_options.sweep(key, values, options, where)

    @classmethod
    def sweep_keys(cls) -> list[str]:
        return spark_options.SWEEP_KEYS

    @classmethod
    def check_target(cls, target: Any) -> None:
        target_conf(target.facts())  # the S3A jars are built: else one line before anything is claimed

    @classmethod
    def data_uri(cls, target: Any, uri: str) -> str:
        return s3a.spark_uri(uri)

    @classmethod
    def for_run(cls, setup: EngineSetup) -> "SparkEngine":
        # the target's settings, the workloads', then --spark-conf
        wanted = {k: v for workload, params in setup.workloads for k, v in workload.engine_conf(params).items()}
        catalog = spark_catalog.for_workloads(setup.workloads, setup.home)  # catalog=hive: its metastore
        conf = {
            **(target_conf(setup.target.facts()) if setup.target else {}),
            **wanted,
            **spark_catalog.spark_conf(catalog),
            **spark_options.conf(setup.options),
        }
        conf.update(spark_options.auth_conf(setup.options, setup.home))  # the secret of storbench's own cluster
        # --spark-master yarn: the cluster's conf dir in the environment; storbench's own YARN's container sizes
        conf = {**spark_options.yarn_conf(setup.options, setup.home), **conf}
        engine = cls(
            spark_options.master(setup.options),
            conf,
            setup.target.scratch_dir() if setup.target else None,
            setup.app_name,
        )
        engine.catalog = catalog
        if setup.run_dir is not None:
            events = setup.run_dir / "spark-events"
            events.mkdir(exist_ok=True)
            engine.event_log_dir = str(events)
            engine.jvm_log = setup.run_dir / JVM_LOG
        return engine

    def effective_conf(self) -> dict[str, str]:
        conf = {
            "spark.ui.enabled": "false",  # no web UI port to collide with; nothing reads it
            "spark.sql.adaptive.enabled": "true",
            "spark.ui.showConsoleProgress": "false",  # progress bars would garble our own lines
            "spark.sql.execution.pythonUDF.arrow.enabled": "false",  # compat UDFs run as the reference ran them
        }
        if self.master.startswith("local") or self.master == "yarn":
            # The host name does not resolve to loopback on many machines: bind the driver there.
            conf["spark.driver.host"] = "127.0.0.1"
            conf["spark.driver.bindAddress"] = "127.0.0.1"
            conf["spark.driver.memory"] = "2g"
        if self.event_log_dir:
            # Spark's own per-task metrics (shuffle, spill, GC), read back after the session stops.
            conf["spark.eventLog.enabled"] = "true"
            conf["spark.eventLog.dir"] = f"file://{self.event_log_dir}"
            conf["spark.eventLog.compress"] = "false"  # Spark 4 defaults to zstd, which Python 3.11 cannot read
        if self.local_dir:
            # Shuffle and spill go to the target's device, as on the paper's cluster nodes.
            conf["spark.local.dir"] = self.local_dir
        if options := extra_options():  # STORBENCH_JVM_OPTS: the executors' JVMs too, like the services' daemons
            conf["spark.executor.defaultJavaOptions"] = shlex.join(options)
        conf.update(self.user_conf)
        # Spark's default redaction misses some names storbench treats as secret (fs.azure.account.key...):
        # widen it, keeping any regex the user gave, so no secret reaches the event log in the run directory.
        conf["spark.redaction.regex"] = "|".join(
            filter(None, [SPARK_REDACTION_REGEX, self.user_conf.get("spark.redaction.regex")])
        )
        jar = launcher_jar()
        if jar:  # storbench's JVM-side workload code (dfsio), beside any jars the user adds
            conf["spark.jars"] = ",".join(filter(None, [self.user_conf.get("spark.jars"), str(jar)]))
        return conf

    def start(self) -> Any:
        if self.session is not None:
            return self.session
        os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")
        if self.master.startswith("local"):  # Python tasks run with this interpreter's packages (tpcds-gen: DuckDB),
            os.environ.setdefault("PYSPARK_PYTHON", sys.executable)  # not PySpark's default: python3 on the PATH
        try:
            from pyspark.sql import SparkSession
        except ImportError:
            raise EngineError("pyspark is not installed; run the set-up command from the README") from None
        if not os.environ.get("JAVA_HOME"):  # else PySpark says only that its gateway exited
            require("java", java_hint())
        quiet_py4j()
        builder = SparkSession.builder.master(self.master).appName(self.app_name)
        for key, value in self.effective_conf().items():
            builder = builder.config(key, value)
        try:
            self._launch_jvm()
            self.session = builder.getOrCreate()
        except Exception as exc:  # py4j/JVM start failures arrive as many types
            first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
            where = f" (the JVM's output is in {self.jvm_log})" if self.jvm_log else ""
            raise EngineError(f"Spark session for master {self.master!r} failed to start: {first}{where}") from exc
        interrupts.reclaim()  # Ctrl-C stops the run as SIGTERM does, not through pyspark's own handler
        self.session.sparkContext.setLogLevel("ERROR")
        if not self.master.startswith("local"):  # executors elsewhere may have Spark and Python only
            self._shipped = ship_code(self.session.sparkContext)
        return self.session

    def _launch_jvm(self) -> None:
        """Spark's JVM, launched here rather than by PySpark, for two reasons.

        Secrets: PySpark's launch passes every setting it is given as ``--conf k=v`` on the command lines of
        spark-submit and java, which any local user reads in ``ps``. The JVM starts with the settings whose
        names are not secret (:func:`launch_conf`); the builder then gives the SparkContext all of them through
        the gateway's authenticated socket, before it is created (a secret is never in an argv, environment or
        file). Output: with a run directory, the JVM's stdout and stderr go to its ``spark.log`` (start-up
        notes, log4j's lines, task errors and a cancelled job's lines stay out of storbench's own output)."""
        from pyspark import SparkConf, SparkContext
        from pyspark.java_gateway import launch_gateway

        if SparkContext._gateway is not None:
            return
        conf = SparkConf().setMaster(self.master).setAppName(self.app_name).setAll(launch_conf(self.effective_conf()))
        if self.jvm_log is None:
            with spark_jvm.killed_if_interrupted():
                SparkContext._ensure_initialized(gateway=launch_gateway(conf))
            return
        log = os.open(self.jvm_log, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)
        try:  # the JVM keeps its own descriptor
            with spark_jvm.killed_if_interrupted():
                gateway = launch_gateway(conf, popen_kwargs={"stdout": log, "stderr": log})
                SparkContext._ensure_initialized(gateway=gateway)
        finally:
            os.close(log)

    def versions(self) -> dict[str, str]:
        session = self.start()
        jvm = session.sparkContext._jvm
        return {
            "spark": session.version,
            "java": str(jvm.java.lang.System.getProperty("java.version")),
            "java_vendor": str(jvm.java.lang.System.getProperty("java.vendor")),
            "python": platform.python_version(),
        }

    def settings(self) -> dict[str, str]:
        """Spark's own view of its configuration, as recorded with the run (secret values as ***)."""
        session = self.start()
        return redact_settings(dict(sorted(session.sparkContext.getConf().getAll())))

    def set_job_group(self, group: str) -> None:
        """Tags the Spark jobs that follow, so the event log attributes them to one workload."""
        if self.session is not None:
            self.session.sparkContext.setJobGroup(group, group)

    def begin(self, tag: Tag) -> None:
        group = job_group(tag.workload, tag.repetition) + (f"{GROUP_SEPARATOR}{tag.point_index}" if tag.labels else "")
        if tag.repetition >= 0:  # a warm-up (negative) runs in a group of its own that is never sampled
            self._groups[group] = (tag.workload, tag.repetition, dict(tag.labels))
        self._group = group
        self.set_job_group(group)
        self._s3a_window = (None, None)

    def window_opens(self) -> None:
        self._s3a_window = (self._s3a_counters(), None)

    def window_closed(self) -> None:
        self._s3a_window = (self._s3a_window[0], self._s3a_counters())

    def _s3a_counters(self) -> dict[str, dict[str, int]] | None:
        """S3A's counters per JVM on s3:// targets: the driver's, and the executors' unless they run in it."""
        if self.session is None or "spark.hadoop.fs.s3a.endpoint" not in self.user_conf:
            return None
        return s3a.read_counters(self.session, executors=not re.fullmatch(r"local(\[.*\])?", self.master))

    def task_progress(self) -> tuple[int, int] | None:
        """Tasks done (or skipped) of those known in the running workload's Spark jobs, from Spark's status
        store, for the progress line (None: no session or no job yet). Polled about once a second while a
        workload runs, on a thread of the progress display; any failure only costs that line."""
        session, group = self.session, self._group
        if session is None or group is None:
            return None
        try:
            context = session.sparkContext
            store = context._jsc.sc().statusStore()
            done = total = 0
            for job in context.statusTracker().getJobIdsForGroup(group):
                data = store.job(job)
                done += data.numCompletedTasks() + data.numSkippedTasks()
                total += data.numTasks()
        except Exception:  # a job just cleaned from the store, the session stopping: no progress this time
            return None
        return (done, total) if total else None

    def end(self, tag: Tag) -> list[Sample]:
        """S3A's requests in the workload's timed window, from the driver and every executor: not its prepare
        (an earlier repetition's output removed, a warm-up write) nor its checks after the window (issue 26)."""
        before, after = self._s3a_window
        return s3a.samples_between(tag.workload, before, after) if after is not None else []

    def reconfigure(self, point: str, options: EngineOptions, step: Callable[[str], Any]) -> bool:
        """A sweep point with its own master or Spark settings gets its own session (same dirs, same event log)."""
        master, spark_conf = options.get(spark_options.MASTER), options.get(spark_options.CONF)
        if not master and not spark_conf:
            return False
        self.stop()
        self.master = master or self.master
        self.user_conf = {**self.user_conf, **(spark_conf or {})}
        with step(f"starting Spark for {point}"):
            self.start()
        return True

    def describe(self) -> str:
        return f"Spark ({self.master})"

    def scratch_dirs(self) -> list[str]:
        """Spark's local dir (--spark-conf spark.local.dir wins over the target's): shuffle and spill."""
        local = self.user_conf.get("spark.local.dir", self.local_dir or "")
        return [d for d in local.split(",")[:1] if d]

    def collect(self) -> tuple[list[Sample], dict[str, Any]]:
        """Spark's per-task metrics from the finished event log, as samples beside the telemetry."""
        if not self.event_log_dir or not any(Path(self.event_log_dir).iterdir()):
            return [], {}
        try:
            groups = read_event_logs(Path(self.event_log_dir))
        except (OSError, ValueError) as exc:
            raise EngineError(f"could not read the Spark event log: {exc}") from None
        return samples_from(roll_up(groups), sub_labelled(self._groups.get)), {STAGES_FILE: stage_table(groups)}

    def explain(self, exc: BaseException) -> str | None:
        """A JVM error (Py4JJavaError): its root cause, which names what failed, not the py4j call."""
        cause = root_cause(exc)
        complete = complete_cause(cause)
        self._explained = self._explained or complete is not None
        return complete or cause

    def failure_log(self) -> tuple[Path, list[str]] | None:
        if self._explained:  # a full disk said it all: the log's Java frames would only bury the line
            return None
        return (self.jvm_log, relevant_tail(self.jvm_log)) if self.jvm_log else None

    def hadoop_client(self) -> tuple[Any, Any] | None:
        if self.session is None:
            return None
        return self.session._jvm, self.session._jsc.hadoopConfiguration()

    def default_parallelism(self) -> int:
        return int(self.start().sparkContext.defaultParallelism)

    def cancel(self) -> None:
        """Jobs still running after an interrupt (SIGTERM reaches Python, not the JVM): cancel them and wait
        (30 s at most) until none is active, so that none reads or writes the target while it is cleaned."""
        if self.session is None:
            return
        context = self.session.sparkContext
        try:  # the killed tasks' log lines (TaskKilled, lost tasks) are noise once the run is stopping
            context.setLogLevel("OFF")
        except Exception:  # py4j's first call after an interrupted one can find its connection closed: once more
            context.setLogLevel("OFF")
        context.cancelAllJobs()
        deadline = time.monotonic() + 30
        while (context.statusTracker().getActiveJobsIds() or running_tasks(context)) and time.monotonic() < deadline:
            time.sleep(0.1)

    def stop(self) -> None:
        if self.session is not None:
            self.session.stop()
            self.session = None
        if self._shipped is not None:
            shutil.rmtree(self._shipped, ignore_errors=True)
            self._shipped = None

"""What a user asks of a run (RunOptions), checked in one line each, and what the run answers (RunOutcome)."""

from __future__ import annotations

import secrets
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

from storbench.engines.lifecycle import check_engine_options
from storbench.errors import InputError
from storbench.results.names import check_label

MAX_WARMUP = 100


@dataclass
class RunOptions:
    suite: str | None = None
    label: str = "default"
    target: str | None = None  # None: a temporary directory, removed afterwards
    scale: str | None = None
    repeat: int | None = None
    repeat_auto: tuple[int, int] | None = None  # --repeat auto / MIN..MAX: rounds until the interval is narrow
    warmup: int = 0  # --warmup N: unrecorded repetitions before the recorded ones, per sweep point
    overrides: dict[str, Any] = field(default_factory=dict)
    # The engines' own options by name (each engine checks and records its own; the CLI names them, see
    # engines.base.EngineOptions); the run core passes them on untouched.
    engine_options: dict[str, Any] = field(default_factory=dict)
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
    cql_insecure: bool = False  # --cql-insecure: a cassandra:// login may cross the network without TLS
    idle_s: float = 0.0  # --idle-s: an idle window before the first workload, the power baseline
    metrics_port: int | None = None  # --metrics-port: serve the run's progress to Prometheus (run.metrics_server)
    metrics_address: str | None = None  # --metrics-address: the IP it binds (default 127.0.0.1)
    # set by an interleaved experiment for a configuration it runs in a worker process: the experiment's PID,
    # whose tree the noise sentinel counts as the run's own (storbench.run.worker)
    experiment_pid: int | None = None


@dataclass
class RunOutcome:
    run_id: str
    status: str
    path: Path
    errors: list[dict[str, Any]]


def validate_options(options: RunOptions) -> None:
    check_label(options.label)  # the label is part of the run directory's name (results.names)
    check_engine_options(options.engine_options)
    if options.repeat is not None and options.repeat < 1:
        raise InputError(f"--repeat {options.repeat}: must be at least 1")
    if options.repeat_auto is not None and options.repeat is not None:
        raise InputError("--repeat: a number or automatic (auto, MIN..MAX), not both")
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

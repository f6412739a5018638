"""Command line: parses, calls storbench.api, prints. Errors are one line on stderr and a non-zero exit."""

from __future__ import annotations

import argparse
import json
import os
import shlex
import sys
import time
from dataclasses import replace
from pathlib import Path
from typing import Any

from storbench import __version__, api, doctor, fetch, interrupts
from storbench.engines.spark_options import CONF, DEFAULT_MASTER, MASTER, parse_conf
from storbench.errors import InputError, ResultsError, StorbenchError
from storbench.progress import START_TIMES, Progress, remember_seconds, remembered_seconds
from storbench.results.factory import open_store
from storbench.results.store import ResultStore
from storbench.keyvalue import parse_pairs
from storbench.run import RunOptions
from storbench.run.metrics_server import grafana_dashboard
from storbench.services import SERVICES, service_env
from storbench.run.rounds import ORDERS, parse_repeat
from storbench.run.sweep import parse_sweep_options
from storbench.targets.cassandra_login import take_environment as take_cql_login

EXIT_INTERRUPTED = 130  # 128 + SIGINT; SIGTERM and SIGHUP give 143 and 129 (interrupts.exit_code)
EXIT_BROKEN_PIPE = 141  # 128 + SIGPIPE, what the shell reports for a tool whose reader went away


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> None:  # one line, exit 2, like every other bad input
        raise InputError(f"{self.prog}: {message}")


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(prog="storbench", description="Storage benchmarks for distributed-analytics workloads.")
    parser.add_argument("--version", action="version", version=f"storbench {__version__}")
    parser.add_argument(
        "--results",
        metavar="DIR|URL",
        help="results home (runs and results.db; default $STORBENCH_RESULTS, $STORBENCH_HOME or "
        "~/.storbench), or postgresql://USER@HOST:PORT/DB: a shared index that records each "
        "run's host and run directory; the directories stay in this machine's home "
        "($STORBENCH_HOME or ~/.storbench). The password: PGPASSWORD or ~/.pgpass",
    )
    commands = parser.add_subparsers(dest="command", parser_class=_Parser)

    run = commands.add_parser("run", help="run a suite (default: spark-transforms at the tiny scale)")
    run.add_argument("suite", nargs="?", help="built-in suite name or a suite .yaml file")
    run.add_argument(
        "--label",
        action="append",
        default=[],
        help="name of the configuration under test "
        "(default: default); with several --target, one each in the same order",
    )
    run.add_argument(
        "--target",
        action="append",
        default=[],
        help="where the data goes: file:///path or a "
        "directory (default: a temp dir); give two or more to run them interleaved, round by round",
    )
    run.add_argument(
        "--order",
        default="alternate",
        choices=ORDERS,
        help="interleaved targets: each round's "
        "order, alternating (A B, B A, ...) or shuffled per round (default: alternate)",
    )
    run.add_argument("--scale", help="tiny, small, paper, or an explicit size (a row count, e.g. 5M)")
    run.add_argument(
        "--repeat",
        help="repetitions (default: the suite's); auto: 3 to 10, until each headline's "
        "95%% interval is within ±5%%; MIN..MAX: the same between MIN and MAX",
    )
    run.add_argument(
        "--warmup",
        type=int,
        default=0,
        metavar="N",
        help="unrecorded repetitions before the recorded ones, per sweep point (default: 0)",
    )
    run.add_argument("--set", action="append", default=[], metavar="KEY=VALUE", help="override a parameter")
    run.add_argument("--spark-master", default=DEFAULT_MASTER, help="Spark master URL (default local[*])")
    run.add_argument("--spark-conf", action="append", default=[], metavar="KEY=VALUE", help="Spark setting, repeatable")
    run.add_argument("--devices", help="comma-separated block devices to measure (default: those behind --target)")
    run.add_argument("--interval", type=float, default=1.0, help="telemetry interval in seconds (default 1)")
    run.add_argument(
        "--mode",
        default="default",
        choices=("default", "compat"),
        help="compat reproduces pyspark-benchmark's Python UDF generation and rdd.count()",
    )
    run.add_argument(
        "--sweep",
        metavar="KEY=V1,V2",
        action="append",
        default=[],
        help="run the suite at several settings: cores=1,2, a spark.* setting, or a parameter (one key)",
    )
    run.add_argument(
        "--replication", type=int, help="replication factor: HDFS (hdfs://) or the keyspace's (cassandra://, default 1)"
    )
    run.add_argument(
        "--endpoint",
        help="S3 endpoint for s3:// targets, e.g. http://127.0.0.1:8333 "
        "(default: $AWS_ENDPOINT_URL or the running `services up s3`)",
    )
    run.add_argument(
        "--nodes",
        metavar="FILE",
        help="a nodes file: measure every node of a cluster "
        "(default: the nodes of `services up spark` when --spark-master is its master)",
    )
    run.add_argument(
        "--node",
        action="append",
        default=[],
        metavar="NAME=URL[,devices=sda,sdb][,role=ROLE]",
        help="one node and its node_exporter URL (repeatable; instead of --nodes)",
    )
    run.add_argument(
        "--telemetry",
        choices=("local", "node_exporter", "prometheus"),
        help="where telemetry comes from (default: local; node_exporter with nodes)",
    )
    run.add_argument(
        "--prometheus", metavar="URL", help="a Prometheus scraping the nodes' exporters (--telemetry prometheus)"
    )
    run.add_argument(
        "--power",
        metavar="KIND[:ARGS]",
        help="this machine's power source: rapl[:package|dram], redfish:URL[,user=U,password_env=VAR"
        "|password_file=PATH], ipmi[:HOST,user=U,...], command:CMD (nodes: a power: key each)",
    )
    run.add_argument(
        "--power-insecure",
        action="store_true",
        help="do not check the BMC's HTTPS certificate, and allow Basic auth over plain http (redfish)",
    )
    run.add_argument(
        "--idle-s",
        type=float,
        default=0.0,
        metavar="SECONDS",
        help="measure power idle for SECONDS before the first workload (the baseline)",
    )
    run.add_argument(
        "--metrics-port",
        type=int,
        metavar="PORT",
        help="serve the run's live progress and each "
        "window's figures to Prometheus on PORT while it runs (dashboard: storbench grafana)",
    )
    run.add_argument("--metrics-address", metavar="IP", help="the address --metrics-port binds (default 127.0.0.1)")
    run.add_argument(
        "--cql-insecure",
        action="store_true",
        help="cassandra://: send the login to a host that is not this machine without TLS (refused "
        "otherwise; ?tls=1 in the URL is the safe way)",
    )
    run.add_argument("--keep-data", action="store_true", help="keep the generated data under the target")
    run.add_argument(
        "--allow-device-overwrite",
        action="store_true",
        help="let fio workloads write a raw device target (refused if it holds a filesystem, "
        "partition table or any signature)",
    )
    _output_flags(run)

    cleanup = commands.add_parser(
        "cleanup",
        help="remove what a run left on its target (it was down at the end, "
        "or the run's process died: the run is then finished as crashed)",
    )
    cleanup.add_argument("run_id", metavar="RUN_ID")
    cleanup.add_argument("--endpoint", help="S3 endpoint, when it is not the one the run used by default")
    show = commands.add_parser("show", help="one run's full report table (or another format)")
    show.add_argument("run_id", metavar="RUN_ID_OR_LABEL")
    show.add_argument("--format", default="table", choices=api.REPORT_FORMATS)
    compare = commands.add_parser("compare", help="compare stored runs; the first is the baseline")
    compare.add_argument(
        "refs",
        nargs="+",
        metavar="LABEL_OR_RUN_ID",
        help="runs; paper:NNN sets them beside a paper's published figures (storbench baselines)",
    )
    compare.add_argument("--paper", metavar="NNN", help="set the runs and their ratios beside this paper's figures")
    compare.add_argument("--format", default="table", choices=api.REPORT_FORMATS)
    compare.add_argument("--html", metavar="FILE", help="also write the HTML report to FILE")
    compare.add_argument("--output", "-o", metavar="FILE", help="write the --format output to FILE")
    compare.add_argument("--force", action="store_true", help="compare runs of different suites anyway")

    imported = commands.add_parser(
        "import",
        help="index a run directory in the current store (a run that lost "
        "its PostgreSQL index mid-run, or one copied from elsewhere); again: no change",
    )
    imported.add_argument("run_dir", metavar="RUN_DIR")

    runs = commands.add_parser("runs", help="list stored runs")
    runs.add_argument("--label", help="only runs with this label")
    runs.add_argument("--json", action="store_true")

    workloads = commands.add_parser("workloads", help="list workloads and their parameters")
    workloads.add_argument("name", nargs="?", help="one workload: its parameters and metrics")
    workloads.add_argument("--json", action="store_true")
    baselines = commands.add_parser("baselines", help="the seed papers' published figures (compare RUN paper:NNN)")
    baselines.add_argument("paper", nargs="?", metavar="PAPER", help="one paper, e.g. 003")
    suites = commands.add_parser("suites", help="list built-in suites")
    suites.add_argument("--json", action="store_true")
    grafana = commands.add_parser("grafana", help="print the Grafana dashboard (JSON) over --metrics-port's metrics")
    grafana.add_argument("--path", action="store_true", help="print where the file is instead")

    commands.add_parser(
        "doctor",
        help="check Java, Python, fio, the native engine and each optional part, one line "
        "each with how to get what is missing (exit 1 when the default job cannot run)",
    )
    fetched = commands.add_parser(
        "fetch",
        help="fetch a part's jars now (an installed wheel fetches them from Maven "
        "Central on first use; a clone builds them with scripts/setup.sh)",
    )
    fetched.add_argument("part", choices=(*fetch.PARTS, "all"))

    services = commands.add_parser(
        "services",
        help="start or stop real local services on 127.0.0.1; `env` prints "
        "the shell exports of a running service's clients (secrets)",
    )
    services.add_argument("action", choices=("up", "down", "status", "env"))
    services.add_argument("name", choices=sorted(SERVICES))
    services.add_argument("--datanodes", type=int, help="hdfs: number of DataNodes (default 2)")
    services.add_argument("--server", help="s3: seaweedfs (default), minio, s3proxy or ceph-rgw")
    services.add_argument("--osds", type=int, help="ceph: number of OSDs (default 1)")
    services.add_argument("--objectstore", help="ceph: bluestore (default; on a sparse file) or memstore")
    services.add_argument("--osd-gb", type=int, help="ceph: GiB per OSD (BlueStore file or memstore; default 10)")
    services.add_argument("--osd-dir", help="ceph: put the OSDs' data in this directory (default: the service dir)")
    services.add_argument("--rgw", action="store_true", default=None, help="ceph: also start an RGW with an S3 user")
    services.add_argument("--workers", type=int, help="spark: number of standalone workers (default 2)")
    services.add_argument("--cores", type=int, help="spark: cores per worker (default 1)")
    services.add_argument(
        "--memory", help="spark: memory per worker, e.g. 1g (default 1g); yarn: MB per NodeManager (default 1536)"
    )
    services.add_argument(
        "--nodes",
        type=int,
        help="cassandra: number of nodes, on 127.0.0.1.. (default 1); yarn: NodeManagers (default 2)",
    )
    services.add_argument("--heap", help="cassandra: heap per node, e.g. 1g (default 1g)")
    services.add_argument(
        "--allow-root-containers",
        action="store_true",
        default=None,
        help="yarn: start it as root although its containers then run as root for any local user who submits one",
    )
    services.add_argument(
        "--worker-dir",
        action="append",
        metavar="DIR",
        help="spark: put a worker's work and local dirs under DIR (repeatable, one per worker; "
        "default: the service dir)",
    )
    return parser


def _output_flags(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--quiet", "-q", action="store_true", help="no progress lines")
    parser.add_argument("--verbose", "-v", action="store_true", help="the full table after the run, not the summary")
    parser.add_argument("--json", action="store_true", help="print the outcome as JSON on stdout")


def _configurations(args: argparse.Namespace) -> list[tuple[str, str | None]]:
    """(label, target) per configuration: one --label per --target, or one label numbered for each."""
    targets: list[str | None] = args.target or [None]
    labels = args.label or ["default"]
    if len(targets) == 1 and len(labels) > 1:
        raise InputError(f"--label given {len(labels)} times for one --target: give one --target per --label")
    if len(labels) == 1 and len(targets) > 1:
        labels = [f"{labels[0]}-{k}" for k in range(1, len(targets) + 1)]
    if len(labels) != len(targets):
        raise InputError(
            f"--label given {len(labels)} times for {len(targets)} --target: one each, in the same "
            f"order, or one label for all (numbered -1, -2, ...)"
        )
    return list(zip(labels, targets))


def cmd_run(args: argparse.Namespace, store: ResultStore) -> int:
    repeat, auto = parse_repeat(args.repeat) if args.repeat is not None else (None, None)
    configurations = _configurations(args)
    label, target = configurations[0]
    options = RunOptions(
        suite=args.suite,
        label=label,
        target=target,
        scale=args.scale,
        repeat=repeat,
        repeat_auto=auto,
        warmup=args.warmup,
        overrides=parse_pairs(args.set, "--set"),
        engine_options={MASTER: args.spark_master, CONF: parse_conf(args.spark_conf)},
        devices=args.devices,
        interval=args.interval,
        mode=args.mode,
        replication=args.replication,
        sweep=parse_sweep_options(args.sweep) or None,
        keep_data=args.keep_data,
        command_line=["storbench", *sys.argv[1:]],
        allow_device_overwrite=args.allow_device_overwrite,
        endpoint=args.endpoint,
        nodes=args.nodes,
        node_specs=args.node,
        telemetry=args.telemetry,
        prometheus=args.prometheus,
        power=args.power,
        power_insecure=args.power_insecure,
        cql_insecure=args.cql_insecure,
        idle_s=args.idle_s,
        metrics_port=args.metrics_port,
        metrics_address=args.metrics_address,
    )
    progress = Progress(quiet=args.quiet or args.json)
    if len(configurations) > 1:
        return _run_interleaved(
            args, [replace(options, label=label, target=target) for label, target in configurations], store, progress
        )
    outcome = api.run(options, store, progress)
    report = api.write_run_report(outcome.run_id, store)
    if args.json:
        print(
            json.dumps(
                {
                    "run_id": outcome.run_id,
                    "status": outcome.status,
                    "path": str(outcome.path),
                    "report": str(report),
                    "errors": outcome.errors,
                },
                indent=2,
            )
        )
    else:
        if not args.quiet:
            comparison = api.compare([outcome.run_id], store)
            print(api.render(comparison, "table" if args.verbose else "summary", store))
        print(f"run {outcome.run_id}: {outcome.status}")
        print(f"results: {outcome.path}")
        print(f"report:  {report}")
    if outcome.status == "interrupted":
        return interrupts.exit_code()
    return 0 if outcome.status == "succeeded" else 4


def _run_interleaved(
    args: argparse.Namespace, configurations: list[RunOptions], store: ResultStore, progress: Progress
) -> int:
    """An interleaved experiment: the runs compared with the first as baseline, each run's report, and the
    comparison's HTML report in the first run's directory."""
    outcomes = api.run_interleaved(configurations, store, progress, args.order)
    ids = [outcome.run_id for outcome in outcomes]
    reports = [api.write_run_report(run_id, store) for run_id in ids]
    comparison = api.compare(ids, store)
    compared = outcomes[0].path / "experiment.html"
    compared.write_text(api.render(comparison, "html", store))
    if args.json:
        print(
            json.dumps(
                {
                    "runs": [
                        {
                            "run_id": o.run_id,
                            "status": o.status,
                            "path": str(o.path),
                            "report": str(r),
                            "errors": o.errors,
                        }
                        for o, r in zip(outcomes, reports)
                    ],
                    "comparison": str(compared),
                },
                indent=2,
            )
        )
    else:
        if not args.quiet:
            print(api.render(comparison, "table" if args.verbose else "verdict", store))
        for outcome, report in zip(outcomes, reports):
            print(f"run {outcome.run_id}: {outcome.status}  results: {outcome.path}  report: {report}")
        print(f"comparison: {compared}")
    statuses = {outcome.status for outcome in outcomes}
    if statuses == {"succeeded"}:
        return 0
    return interrupts.exit_code() if "interrupted" in statuses and "failed" not in statuses else 4


def _write(flag: str, path: str, text: str) -> None:
    try:
        Path(path).write_text(text)
    except OSError as exc:  # a missing or read-only directory: one line, not a traceback
        raise InputError(f"{flag} {path}: cannot write it ({exc.strerror})") from None


def cmd_compare(args: argparse.Namespace, store: ResultStore) -> int:
    refs, paper = api.paper_refs(args.refs, args.paper)
    if paper and args.format != "table":
        raise InputError(
            f"compare: paper {paper}'s figures show in the table (--format table) and in the HTML "
            f"report of its suite's runs, not in --format {args.format}"
        )
    comparison = api.compare(refs, store, force=args.force)
    text = api.render(comparison, args.format, store)
    text += api.beside_paper(comparison, paper) if args.format == "table" else ""
    if args.output:
        _write("--output", args.output, text)
    if args.html:  # files first: a refused one leaves only its error line
        _write("--html", args.html, api.render(comparison, "html", store))
    print(f"wrote {args.output}" if args.output else text)
    if args.html:
        print(f"wrote {args.html}", file=sys.stderr)
    return 0


def cmd_runs(args: argparse.Namespace, store: ResultStore) -> int:
    runs = api.list_runs(store, args.label, brief=True)  # the index's summary: no manifest read
    if args.label and not runs:
        raise ResultsError(f"no run with label {args.label!r} in {store.where}; labels: {store.known_labels()}")
    if args.json:
        print(
            json.dumps(
                [
                    {
                        "run_id": r.run_id,
                        "label": r.label,
                        "suite": r.suite,
                        "status": r.status,
                        "started": r.started,
                        "scale": r.manifest.get("scale"),
                        "target": r.manifest.get("config", {}).get("target"),
                        "host": r.host,
                        "path": r.path,
                    }
                    for r in runs
                ],
                indent=2,
            )
        )
        return 0
    if not runs:
        print(f"no runs stored in {store.where}")
        return 0
    shared = store.index.shared  # runs of many machines: say which one holds each run directory
    rows = [("RUN ID", "LABEL", "SUITE", "SCALE", "STATUS", "STARTED", "TARGET", *(("HOST",) if shared else ()))]
    # str(): an imported manifest may hold None (or anything) where a run of this version writes text
    rows += [
        tuple(
            str(cell or "")
            for cell in (
                r.run_id,
                r.label,
                r.suite,
                r.manifest.get("scale"),
                r.status,
                r.started,
                (r.manifest.get("config") or {}).get("target"),
                *((r.host,) if shared else ()),
            )
        )
        for r in runs
    ]
    print(_columns(rows))
    return 0


def _print_listing(args: argparse.Namespace, items: list[dict[str, Any]], lines: Any) -> int:
    """``--json``: the items as JSON; otherwise the text ``lines(item)`` gives for each."""
    print(json.dumps(items, indent=2) if args.json else "\n".join(line for item in items for line in lines(item)))
    return 0


def _workload_lines(workload: dict[str, Any]) -> list[str]:
    lines = [f"{workload['name']} (v{workload['version']}, {workload['engine']}): {workload['description']}"]
    for param in workload["params"]:
        choices = f" [{'|'.join(map(str, param['choices']))}]" if param["choices"] else ""
        lines.append(f"    {param['name']} = {param['default']!r}{choices}  {param['help']}")
    return lines


def _suite_lines(suite: dict[str, Any]) -> list[str]:
    paper = f" (paper {suite['paper']})" if suite["paper"] else ""
    return [
        f"{suite['name']}{paper}: {' → '.join(suite['workloads'])}; "
        f"{suite['repetitions']} repetitions; scales {', '.join(suite['scales'])}"
    ]


def cmd_workloads(args: argparse.Namespace, store: ResultStore) -> int:
    if args.name:
        return _print_listing(args, api.list_workloads(args.name), _workload_detail_lines)
    return _print_listing(args, api.list_workloads(), _workload_lines)


def _workload_detail_lines(workload: dict[str, Any]) -> list[str]:
    lines = _workload_lines(workload)
    lines[1:1] = ["  parameters (--set KEY=VALUE):"]
    if workload["after"]:
        lines.append(f"  run alone, it first runs (untimed): {', '.join(workload['after'])}")
    lines.append("  metrics (besides time, device, CPU and network telemetry):")
    lines += [f"    {m['name']}  {m['title']} ({m['unit']}, {m['direction']})" for m in workload["metrics"]]
    lines.append(f"  run it: storbench run {workload['name']} [--set KEY=VALUE] [--target ...]")
    return lines


def cmd_suites(args: argparse.Namespace, store: ResultStore) -> int:
    return _print_listing(args, api.list_suites(), _suite_lines)


# flags of `services up`, passed on when given
SERVICE_OPTIONS = (
    "allow_root_containers",
    "datanodes",
    "server",
    "osds",
    "objectstore",
    "osd_gb",
    "osd_dir",
    "rgw",
    "workers",
    "cores",
    "memory",
    "worker_dir",
    "nodes",
    "heap",
)


def cmd_services(args: argparse.Namespace, store: ResultStore) -> int:
    if args.action == "up":
        store.check_writable()
        options = {name: getattr(args, name) for name in SERVICE_OPTIONS if getattr(args, name) is not None}
        times = store.home / "services" / START_TIMES  # how long each service took to start last time: its ETA
        with Progress().step(f"starting {args.name}", expected_s=remembered_seconds(times, args.name)) as outcome:
            started = time.monotonic()
            state = api.service_up(args.name, store, **options)
            remember_seconds(times, args.name, time.monotonic() - started)
            outcome["text"] = state["uri"]
        print(state["uri"])  # the address to pass as --target (or the endpoint): stdout holds only that
        print(f"{args.name}: {state['summary']}; state in {state['workdir']}", file=sys.stderr)
        if state.get("nodes"):  # spark, cassandra: the nodes file a run reads its workers' telemetry from
            print(f"nodes file: {state['nodes']}", file=sys.stderr)
        if hasattr(SERVICES[args.name], "client_env"):  # the secrets only on explicit request: never in CI logs
            home = f" --results {shlex.quote(str(store.home))}" if args.results else ""
            print(f"credentials: storbench{home} services env {args.name}", file=sys.stderr)
    elif args.action == "env":
        env = service_env(args.name, store.home)
        print(f"# storbench services env {args.name}: these lines hold secrets; keep them out of logs and files")
        for key, value in env.items():
            print(f"export {key}={shlex.quote(value)}")
    elif args.action == "down":
        stopped = api.service_down(args.name, store)
        print(f"{args.name}: {'stopped' if stopped else 'was not running'}")
    else:
        state = api.service_status(args.name, store)
        print(state["uri"] if state else f"{args.name}: not running")
        if state and state.get("ca_file"):  # cassandra: its CQL port's TLS, checked against this CA
            print(
                f"{args.name}: TLS with the CA certificate {state['ca_file']} (a target's ?tls=1&ca=...)",
                file=sys.stderr,
            )
        return 0 if state else 1
    return 0


def _columns(rows: list[tuple[str, ...]]) -> str:
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]))]
    return "\n".join("  ".join(cell.ljust(width) for cell, width in zip(row, widths)).rstrip() for row in rows)


def cmd_cleanup(args: argparse.Namespace, store: ResultStore) -> int:
    done = api.cleanup_run(args.run_id, store, args.endpoint)
    for path in done.get("scratch_removed", []):
        print(f"removed {path} (its private scratch directory)")
    if done["removed"]:
        print(f"removed {done['root']}")
    if done["crashed"]:  # its process died: now finished, as crashed
        print(f"run {done['run_id']}: crashed (its process ended before the run finished); finished by cleanup")
    elif not done["removed"] and not done.get("scratch_removed"):
        print(f"run {done['run_id']}: {done['status']}, nothing of it left on its target: nothing to do")
    return 0


def cmd_import(args: argparse.Namespace, store: ResultStore) -> int:
    run = api.import_run(args.run_dir, store)
    print(
        f"indexed run {run.run_id} ({run.label}, {run.suite}, {run.status}, {len(run.samples)} samples) "
        f"in {store.where}"
    )
    return 0


def cmd_show(args: argparse.Namespace, store: ResultStore) -> int:
    print(api.render(api.compare([args.run_id], store), args.format, store))
    return 0


def cmd_baselines(args: argparse.Namespace, store: ResultStore) -> int:
    print(api.baselines_text(args.paper))
    return 0


def cmd_grafana(args: argparse.Namespace, store: ResultStore) -> int:
    path = grafana_dashboard()
    print(path if args.path else path.read_text(), end="\n" if args.path else "")
    return 0


COMMANDS = {
    "run": cmd_run,
    "show": cmd_show,
    "cleanup": cmd_cleanup,
    "import": cmd_import,
    "compare": cmd_compare,
    "runs": cmd_runs,
    "workloads": cmd_workloads,
    "suites": cmd_suites,
    "services": cmd_services,
    "baselines": cmd_baselines,
    "grafana": cmd_grafana,
}

NO_STORE = {"doctor": lambda args: doctor.run(), "fetch": lambda args: print(fetch.fetch(args.part)) or 0}


def main(argv: list[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    take_cql_login()  # $STORBENCH_CQL_PASSWORD: read once, out of the environment every child inherits
    store: ResultStore | None = None
    try:
        args = build_parser().parse_args(argv or ["run"])
        if args.command is None:
            args = build_parser().parse_args(["run", *argv])
        if args.command in NO_STORE:  # about this installation, not about runs
            return NO_STORE[args.command](args)
        store = open_store(args.results)
        code = COMMANDS[args.command](args, store)
        sys.stdout.flush()  # a closed pipe shows here, inside the try, not at interpreter exit
        return code
    except BrokenPipeError:  # `storbench workloads | head -1`: exit quietly, as other tools do
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())  # nothing more to flush at exit
        return EXIT_BROKEN_PIPE
    except StorbenchError as exc:
        print(f"storbench: error: {exc}", file=sys.stderr)
        return exc.exit_code
    except KeyboardInterrupt:
        print("storbench: interrupted", file=sys.stderr)
        return interrupts.exit_code()
    finally:
        if store is not None:
            store.index.close()  # a PostgreSQL index: its connection; SQLite: nothing held


def run_main() -> Any:  # pragma: no cover - console entry point
    interrupts.install()  # SIGTERM and SIGHUP as Ctrl-C; set here, where the process is storbench's own
    code = main()
    interrupts.exiting()
    sys.exit(code)

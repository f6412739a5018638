"""The command line's grammar: every command, its flags and their help; a bad one is one line, exit 2."""

from __future__ import annotations

import argparse

from storbench import __version__, api, fetch
from storbench.engines.lifecycle import add_engine_flags, sweep_keys_by_engine
from storbench.errors import InputError
from storbench.run.rounds import ORDERS
from storbench.suites.loader import DEFAULT_SUITE
from storbench.cli.lab_command import add_lab_parser
from storbench.cli.services_command import add_services_parser


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

    run = commands.add_parser("run", help=f"run a suite (default: {DEFAULT_SUITE} at the tiny scale)")
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
    add_engine_flags(run)  # each engine's own (engines.capabilities.AddsRunFlags): the CLI names none
    run.add_argument("--devices", help="comma-separated block devices to measure (default: those behind --target)")
    run.add_argument("--interval", type=float, default=1.0, help="telemetry interval in seconds (default 1)")
    run.add_argument(
        "--mode",
        default="default",
        choices=("default", "compat"),
        help="compat reproduces the reference benchmark's Python UDF generation and rdd.count() "
        "(datagen and the timed transforms)",
    )
    run.add_argument(
        "--sweep",
        metavar="KEY=V1,V2",
        action="append",
        default=[],
        help="run the suite at several settings (one key): a parameter, or an engine's key ("
        + "; ".join(f"{name}: {', '.join(keys)}" for name, keys in sweep_keys_by_engine().items())
        + ")",
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
        "(default: the nodes of the storbench service (`services up`) the run's engine options point at)",
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

    add_services_parser(commands)  # its flags come from the services' registry
    add_lab_parser(commands)
    return parser


def _output_flags(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--quiet", "-q", action="store_true", help="no progress lines")
    parser.add_argument("--verbose", "-v", action="store_true", help="the full table after the run, not the summary")
    parser.add_argument("--json", action="store_true", help="print the outcome as JSON on stdout")

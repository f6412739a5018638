"""The commands on stored runs and services: `compare`, `show`, `cleanup`, `import`, `baselines`, `grafana`,
`services`."""

from __future__ import annotations

import argparse
import shlex
import sys
import time
from pathlib import Path

from storbench import api
from storbench.errors import InputError
from storbench.progress import START_TIMES, Progress, remember_seconds, remembered_seconds
from storbench.results.store import ResultStore
from storbench.run.metrics_server import grafana_dashboard
from storbench.services import SERVICES, service_env


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

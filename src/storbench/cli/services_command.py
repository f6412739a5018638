"""`storbench services ACTION NAME`: its grammar, read from the services' registry, and the command.

Every service declares its own `services up` flags (storbench.services.registry); a flag two services
take (--memory: workers' memory, or a NodeManager's) is one flag whose help names both."""

from __future__ import annotations

import argparse
import shlex
import sys
import time

from storbench import api
from storbench.progress import START_TIMES, Progress, remember_seconds, remembered_seconds
from storbench.results.store import ResultStore
from storbench.services import Service, all_services, get_service, service_env, up_flags


def add_services_parser(commands: argparse._SubParsersAction, services: dict[str, Service] | None = None) -> None:
    """The `services` command's grammar for ``services`` (default: every registered one)."""
    services = all_services() if services is None else services
    parser = commands.add_parser(
        "services",
        help="start or stop real local services on 127.0.0.1; `env` prints "
        "the shell exports of a running service's clients (secrets)",
    )
    parser.add_argument("action", choices=("up", "down", "status", "env"))
    parser.add_argument("name", choices=list(services))
    for flag, helps_by_service in up_flags(services.values()):
        helps = "; ".join(f"{name}: {text}" for name, text in helps_by_service.items())
        if flag.switch:
            parser.add_argument(flag.option, action="store_true", default=None, help=helps)
        else:
            parser.add_argument(
                flag.option,
                type=flag.type,
                action="append" if flag.repeatable else "store",
                metavar=flag.metavar,
                help=helps,
            )


def cmd_services(args: argparse.Namespace, store: ResultStore) -> int:
    if args.action == "up":
        store.check_writable()
        # every flag given, whichever service declared it: service_up refuses one this service does not take
        options = {f.name: getattr(args, f.name) for f, _ in up_flags() if getattr(args, f.name) is not None}
        times = store.home / "services" / START_TIMES  # how long each service took to start last time: its ETA
        with Progress().step(f"starting {args.name}", expected_s=remembered_seconds(times, args.name)) as outcome:
            started = time.monotonic()
            state = api.service_up(args.name, store, **options)
            remember_seconds(times, args.name, time.monotonic() - started)
            outcome["text"] = state["uri"]
        print(state["uri"])  # the address to pass as --target (or the endpoint): stdout holds only that
        print(f"{args.name}: {state['summary']}; state in {state['workdir']}", file=sys.stderr)
        if state.get("nodes"):  # a service with nodes: the nodes file a run reads its telemetry from
            print(f"nodes file: {state['nodes']}", file=sys.stderr)
        if get_service(args.name).has_client_env:  # the secrets only on explicit request: never in CI logs
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

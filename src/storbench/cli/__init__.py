"""Command line: parses, calls storbench.api, prints. Errors are one line on stderr and a non-zero exit.

One module a part: the grammar (parser), `run` (run_command), the listings (listing) and the other
commands (commands); this module dispatches."""

from __future__ import annotations

import os
import sys
from typing import Any

from storbench import doctor, fetch, interrupts
from storbench.errors import StorbenchError
from storbench.results.factory import open_store
from storbench.results.store import ResultStore
from storbench.targets.cassandra_login import take_environment as take_cql_login
from storbench.cli.commands import (
    cmd_baselines,
    cmd_cleanup,
    cmd_compare,
    cmd_grafana,
    cmd_import,
    cmd_show,
)
from storbench.cli.lab_command import cmd_lab
from storbench.cli.services_command import cmd_services
from storbench.cli.listing import cmd_runs, cmd_suites, cmd_workloads
from storbench.cli.parser import build_parser
from storbench.cli.run_command import cmd_run

EXIT_INTERRUPTED = 130  # 128 + SIGINT; SIGTERM and SIGHUP give 143 and 129 (interrupts.exit_code)
EXIT_BROKEN_PIPE = 141  # 128 + SIGPIPE, what the shell reports for a tool whose reader went away


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
    "lab": cmd_lab,
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


__all__ = ["EXIT_BROKEN_PIPE", "EXIT_INTERRUPTED", "build_parser", "main", "run_main"]

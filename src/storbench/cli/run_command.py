"""`storbench run`: one configuration, or several interleaved (--target/--label pairs), through storbench.api."""

from __future__ import annotations

import argparse
import json
import sys
from dataclasses import replace

from storbench import api, interrupts
from storbench.engines.lifecycle import engine_flag_options
from storbench.errors import InputError
from storbench.progress import Progress
from storbench.results.store import ResultStore
from storbench.keyvalue import parse_pairs
from storbench.run import RunOptions
from storbench.run.rounds import parse_repeat
from storbench.run.sweep import parse_sweep_options


def labelled_targets(args: argparse.Namespace) -> list[tuple[str, str | None]]:
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
    configurations = labelled_targets(args)
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
        engine_options=engine_flag_options(args),
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

"""Spark's run options (``--spark-master``, ``--spark-conf``): their flags, grammar, the manifest's record of them,
the sweep keys Spark owns (``cores``, any ``spark.*`` setting) and the cluster they point at. The run core hands
them over untouched; :class:`SparkOptions` is the Spark engine's side of them (its class-level capabilities)."""

from __future__ import annotations

import argparse
import re
import socket
from pathlib import Path
from typing import Any

from storbench.engines.capabilities import AddsRunFlags, ChecksOptions, ClusterBacked
from storbench.errors import InputError
from storbench.keyvalue import parse_pairs
from storbench.redaction import redact_settings
from storbench.services import yarn_client
from storbench.services.spark import running_cluster
from storbench.services.spark_auth import client_conf

DEFAULT_MASTER = "local[*]"
MASTER = "spark_master"  # the keys of the run's engine options that are Spark's
CONF = "spark_conf"
# The master URL forms Spark accepts, checked before Spark starts (else a Java stack trace after it does).
MASTER_FORMS = "local, local[N], local[*], local[N,M], spark://HOST:PORT[,HOST:PORT], yarn, k8s://URL, mesos://URL"
MASTER_RE = re.compile(
    r"local(\[(\d+|\*)(\s*,\s*\d+)?\])?|yarn|spark://[^,/:\s]+:\d+(,[^,/:\s]+:\d+)*"
    r"|(k8s|mesos)://\S+"
)


def parse_conf(pairs: list[str]) -> dict[str, str]:
    """``k=v`` strings from --spark-conf into a dict; a pair without '=' is bad input."""
    return parse_pairs(pairs, "--spark-conf", "key=value, e.g. spark.executor.memory=4g")


def master(options: dict[str, Any]) -> str:
    return options.get(MASTER) or DEFAULT_MASTER


def conf(options: dict[str, Any]) -> dict[str, str]:
    return dict(options.get(CONF) or {})


def is_local(master_url: str) -> bool:
    return master_url.startswith("local")


def check(options: dict[str, Any]) -> None:
    if not MASTER_RE.fullmatch(master(options)):
        raise InputError(f"--spark-master {master(options)!r}: allowed: {MASTER_FORMS}")


def check_master_answers(options: dict[str, Any], home: Path | None = None, timeout: float = 2.0) -> None:
    """A ``spark://`` master's port takes a TCP connection (any one of an HA list): else one line now, not a
    driver that retries for a minute and ends in Java frames. ``yarn``: yarn_client.check."""
    url = master(options)
    if url == "yarn":
        yarn_client.check(home, conf(options))
        return
    if not url.startswith("spark://"):
        return
    failures = []
    for address in url.removeprefix("spark://").split(","):
        host, _, port = address.rpartition(":")
        try:
            with socket.create_connection((host, int(port)), timeout=timeout):
                return
        except OSError as exc:
            failures.append(f"{address} ({exc.strerror or exc})")
    raise InputError(
        f"--spark-master {url}: no Spark master answers at {', '.join(failures)}; start one "
        f"(storbench services up spark) or use local[*]"
    )


def manifest_config(options: dict[str, Any]) -> dict[str, Any]:
    return {"spark_master": master(options), "spark_conf": redact_settings(conf(options))}


def sweep(key: str, values: list[Any], options: dict[str, Any], where: str) -> list[dict[str, Any]] | None:
    """``cores``: ``local[N]`` on a local master, ``spark.cores.max`` elsewhere; ``spark.*``: that setting (a new
    Spark session per value). Each point's options override the run's."""
    if key == "cores":
        cores = [_positive_int(v, where) for v in values]
        if is_local(master(options)):
            return [{MASTER: f"local[{n}]"} for n in cores]
        return [{CONF: {"spark.cores.max": str(n)}} for n in cores]
    if key.startswith("spark."):
        return [{CONF: {key: str(v)}} for v in values]
    return None


SWEEP_KEYS = ["cores", "a spark.* setting"]


def service_nodes(options: dict[str, Any], home: Path) -> tuple[Path, str] | None:
    """The nodes file of `services up spark` when the run's master is that service's (`services up yarn`'s on
    --spark-master yarn, when the run uses it)."""
    if master(options) == "yarn":
        return yarn_client.service_nodes(home)
    service = running_cluster(home)
    return (service[1], "services up spark") if service and service[0] == master(options) else None


def auth_conf(options: dict[str, Any], home: Path | None) -> dict[str, str]:
    """``spark.authenticate`` and the secret of `services up spark` when the run's master is that service's
    (the engine keeps secret settings out of every command line); nothing for any other master."""
    return client_conf(home, master(options))


def yarn_conf(options: dict[str, Any], home: Path | None) -> dict[str, str]:
    """On --spark-master yarn: the environment of Spark's YARN client set (yarn_client.use) and the settings of
    storbench's own YARN; nothing for any other master."""
    return yarn_client.use(home) if master(options) == "yarn" else {}


def _positive_int(value: Any, where: str) -> int:
    try:
        number = int(value)
    except (TypeError, ValueError):
        number = 0
    if number < 1:
        raise InputError(f"{where}: sweep cores value {value!r} must be a positive integer")
    return number


class SparkOptions(AddsRunFlags, ChecksOptions, ClusterBacked):
    """The Spark engine's flags and options, checked, recorded and followed to the cluster they name."""

    @classmethod
    def add_flags(cls, parser: argparse.ArgumentParser) -> None:
        parser.add_argument("--spark-master", default=DEFAULT_MASTER, help="Spark master URL (default local[*])")
        parser.add_argument(
            "--spark-conf", action="append", default=[], metavar="KEY=VALUE", help="Spark setting, repeatable"
        )

    @classmethod
    def read_flags(cls, args: argparse.Namespace) -> dict[str, Any]:
        return {MASTER: args.spark_master, CONF: parse_conf(args.spark_conf)}

    @classmethod
    def check_options(cls, options: dict[str, Any]) -> None:
        check(options)

    @classmethod
    def options_config(cls, options: dict[str, Any]) -> dict[str, Any]:
        return manifest_config(options)

    @classmethod
    def service_nodes(cls, options: dict[str, Any], home: Path) -> tuple[Path, str] | None:
        return service_nodes(options, home)

    @classmethod
    def runs_elsewhere(cls, options: dict[str, Any]) -> str | None:
        return None if is_local(master(options)) else master(options)

    @classmethod
    def check_reachable(cls, options: dict[str, Any], home: Path | None = None) -> None:
        check_master_answers(options, home)

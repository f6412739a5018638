"""One interface for every power source: a reader of watts (or of an energy counter) on one node.

A source is built from a spec, ``KIND[:ARGS]`` (``--power`` for this machine, a node's ``power:``
key in a nodes file): ARGS are comma-separated; ``key=value`` tokens set options, the others are
the kind's positional argument (a URL, a host, a command). ``read()`` returns a :class:`Reading`
and raises ``OSError`` when the source does not answer (recorded as a gap). Each source says what
its readings cover (:data:`SCOPES`): readings of different scopes are never added.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Protocol

from storbench.errors import InputError

SCOPES = ("cpu-package", "dram", "node-psu", "wall")
KINDS: dict[str, Callable[["Spec"], "PowerSource"]] = {}  # filled by each kind's module


@dataclass(frozen=True)
class Reading:
    """Instantaneous watts, or a cumulative energy counter in joules (RAPL)."""

    watts: float | None = None
    joules: float | None = None


class PowerError(OSError):
    """A source that did not answer, or answered without a reading: one line."""


class PowerSource(Protocol):
    kind: str
    scope: str

    def read(self) -> Reading: ...
    def describe(self) -> dict[str, Any]: ...  # what the manifest records: never a secret


@dataclass(frozen=True)
class Spec:
    kind: str
    positional: str
    options: dict[str, str]
    where: str  # "--power" or "nodes.yaml: nodes[1].power": the start of every message about it

    def fail(self, message: str) -> InputError:
        return InputError(f"{self.where} {self.kind}: {message}")

    def option(self, key: str, default: str | None = None) -> str | None:
        return self.options.get(key, default)


def parse_spec(text: str, where: str, allowed: dict[str, tuple[str, ...]]) -> Spec:
    """``KIND[:ARGS]``; unknown kinds and keys are one line naming what is allowed."""
    if not isinstance(text, str) or not text.strip():
        raise InputError(f"{where}: expected KIND[:ARGS], KIND one of {', '.join(allowed)}")
    kind, _, rest = text.strip().partition(":")
    if kind not in allowed:
        raise InputError(f"{where}: unknown power source {kind!r}; allowed: {', '.join(allowed)}")
    options: dict[str, str] = {}
    positional: list[str] = []
    tokens = rest.split(",") if rest else []
    for index, token in enumerate(tokens):
        key, eq, value = token.partition("=")
        key = key.strip()
        if kind == "command" and (not eq or key not in allowed[kind]):
            positional = [",".join(tokens[index:])]  # the rest is the command, commas and all
            break
        if not eq and key in ("insecure",):
            options[key] = "1"
        elif not eq:
            positional.append(token.strip())
        elif key in ("password", "pass", "passwd"):
            raise InputError(
                f"{where} {kind}: a password is never given in the spec (it would reach the "
                f"manifest); use password_env=VAR or password_file=PATH"
            )
        elif key not in allowed[kind]:
            raise InputError(f"{where} {kind}: unknown key {key!r}; allowed: {', '.join(allowed[kind]) or 'none'}")
        else:
            options[key] = value.strip()
    if len(positional) > 1:
        raise InputError(f"{where} {kind}: more than one argument without a key: {', '.join(positional)}")
    scope = options.get("scope")
    if scope is not None and scope not in SCOPES:
        raise InputError(f"{where} {kind}: scope {scope!r}; allowed: {', '.join(SCOPES)}")
    return Spec(kind, positional[0] if positional else "", options, where)


_TAKEN: dict[str, str] = {}  # password variables taken out of the environment, by name (several nodes may share one)


def secret(spec: Spec, default_env: str) -> str | None:
    """The password from ``password_file=PATH`` or the environment variable ``password_env=VAR``
    (default ``default_env``); kept in memory only. The variable is taken out of storbench's environment
    once read, so that no process it starts (fio, Spark, ipmitool) inherits it."""
    path = spec.option("password_file")
    if path:
        try:
            return Path(path).read_text().strip()
        except OSError as exc:
            raise spec.fail(f"password_file {path}: cannot read it ({exc.strerror or exc})") from None
    name = spec.option("password_env") or default_env
    if name in os.environ:
        _TAKEN[name] = os.environ.pop(name)
    return _TAKEN.get(name) or None


def first_line(text: str) -> str:
    lines = [line.strip() for line in text.strip().splitlines() if line.strip()]
    return lines[0] if lines else ""

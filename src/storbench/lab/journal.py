"""The lab cluster's journal: every namespace, link, loop device, mount, cgroup and process it made, recorded
the moment it exists, so that ``down`` (or the roll-back of a failed ``up``) removes exactly those, by name,
and never anything found by a pattern."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

STATE = "state.json"


class Journal:
    def __init__(self, directory: Path, state: dict[str, Any] | None = None):
        self.directory = directory
        self.state = state if state is not None else {"made": []}

    @classmethod
    def load(cls, directory: Path) -> "Journal | None":
        try:
            return cls(directory, json.loads((directory / STATE).read_text()))
        except FileNotFoundError:
            return None

    def made(self, kind: str, **what: Any) -> None:
        """Record one thing made (before anything else can fail)."""
        self.state["made"].append({"kind": kind, **what})
        self.save()

    def set(self, **fields: Any) -> None:
        self.state.update(fields)
        self.save()

    def save(self) -> None:
        self.directory.mkdir(mode=0o700, parents=True, exist_ok=True)
        tmp = self.directory / f".{STATE}.{os.getpid()}"
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with os.fdopen(fd, "w") as handle:
            json.dump(self.state, handle, indent=1)
        tmp.replace(self.directory / STATE)

    def records(self) -> list[dict[str, Any]]:
        return list(self.state["made"])

    def forget(self) -> None:
        (self.directory / STATE).unlink(missing_ok=True)

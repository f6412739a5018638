"""The results model: what one run measured. Exporters and analysis read only this."""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass, field
from typing import Any

SCHEMA_VERSION = 1


@dataclass(frozen=True)
class Sample:
    """One measured value.

    ``workload`` is the workload (operation) that was running, ``repetition`` which
    repetition it came from (0 for once-only prepare steps). A value that could not
    be measured is ``None``, never 0.
    """

    workload: str
    metric: str
    value: float | None
    unit: str
    repetition: int = 1
    labels: dict[str, str] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if self.value is not None and (not isinstance(self.value, (int, float)) or math.isnan(self.value)):
            raise ValueError(
                f"sample {self.workload}/{self.metric}: value must be a number or None, got {self.value!r}"
            )

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> "Sample":
        return cls(
            workload=data["workload"],
            metric=data["metric"],
            value=data["value"],
            unit=data["unit"],
            repetition=int(data.get("repetition", 1)),
            labels=dict(data.get("labels") or {}),
        )


@dataclass
class Run:
    """One execution of a suite on one labelled configuration."""

    run_id: str
    label: str
    suite: str
    status: str  # running | succeeded | failed | interrupted | crashed; "running? (host H)": not checkable here
    started: str  # ISO 8601 UTC
    finished: str | None
    manifest: dict[str, Any]
    samples: list[Sample]
    path: str | None = None
    host: str | None = None  # the machine whose home holds the run directory (a shared index records it)

    @property
    def workload_versions(self) -> dict[str, str]:
        return dict(self.manifest.get("workload_versions", {}))

    @property
    def parameters(self) -> dict[str, Any]:
        return dict(self.manifest.get("parameters", {}))

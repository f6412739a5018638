"""A job for the native engine as its job file holds it (native/storbench-load/src/core/job.rs): the protocol's
section, the operation mix, the key space, the load model and the measured span."""

from __future__ import annotations

from typing import Any


def load_model(concurrency: int, rate: float = 0.0) -> dict[str, Any]:
    """The job's ``load``: a closed loop of ``concurrency`` workers per process, or with ``rate`` > 0 an open
    loop of ``rate`` requests per second in total with at most ``concurrency`` in flight per process."""
    if rate > 0:
        return {"model": "open", "rate": rate, "max_outstanding": concurrency}
    return {"model": "closed", "concurrency": concurrency}


def job(
    protocol: str,
    settings: dict[str, Any],
    mix: list[dict[str, Any]],
    objects: int,
    load: dict[str, Any],
    ops: int,
    duration_s: float,
    **more: Any,
) -> dict[str, Any]:
    """A job for the engine (its format: native/storbench-load/src/core/job.rs). ``protocol`` ("s3", "cql")
    names the protocol and its own section ``settings``; ``mix`` the operations (``{"op": ..., "weight": ...}``);
    ``objects`` the key space; ``ops`` the operations per process (0: time based) and ``duration_s`` the
    measured seconds (0: until ``ops``); ``more`` the other fields (object_size, warmup_s, verify...)."""
    return {
        "protocol": protocol,
        protocol: settings,
        "mix": mix,
        "objects": objects,
        "load": load,
        "ops": ops,
        "duration_s": duration_s,
        **more,
    }

"""What a label, a run id and a run reference may be: one rule for the run that creates them, ``import`` that
accepts them from a manifest, and ``show``/``compare``/``cleanup`` that read them.

A label is part of the run directory's name (``runs/<run-id>/``), so it can never name another place: letters,
digits, '.', '_' and '-', starting with a letter or digit (``.`` and ``..`` are not labels). A run reference is a
run id or a label, never a path: a run directory elsewhere is read by indexing it (``storbench import DIR``).
"""

from __future__ import annotations

import os
from pathlib import Path

import re

from storbench.errors import InputError

MAX_LABEL = 64
LABEL = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]*")
RUN_ID = re.compile(r"(\d{8}-\d{6})-(.+)-([0-9a-f]{4})")  # new_run_id: date-time, label, 4 hex digits
LABEL_RULE = "use letters, digits, '.', '_' and '-' only, starting with a letter or digit"


def check_label(label: str, where: str = "--label") -> None:
    """InputError unless ``label`` is one a run may be given (``where`` names the flag or file in the message)."""
    if not isinstance(label, str) or not LABEL.fullmatch(label):
        raise InputError(f"{where} {label!r}: {LABEL_RULE}")
    if len(label) > MAX_LABEL:
        raise InputError(f"{where}: {len(label)} characters; at most {MAX_LABEL} allowed")


def check_run_id(run_id: str, label: str, where: str) -> None:
    """InputError unless ``run_id`` is what a run labelled ``label`` is named (DATE-TIME-LABEL-XXXX)."""
    found = RUN_ID.fullmatch(run_id) if isinstance(run_id, str) else None
    if found is None or found.group(2) != label:
        raise InputError(
            f"{where} run_id {run_id!r}: not a storbench run id for label {label!r} "
            f"(expected YYYYMMDD-HHMMSS-{label}-XXXX, X a hex digit)"
        )


def check_ref(ref: str) -> None:
    """InputError unless ``ref`` can be a run id or a label: a path (``../x``, ``/abs``) is refused in one line."""
    if LABEL.fullmatch(ref) and len(ref) <= len("YYYYMMDD-HHMMSS--XXXX") + MAX_LABEL:
        return
    what = "a path" if "/" in ref or ref.startswith(".") else "not a run id or label"
    raise InputError(
        f"run {ref!r}: {what}; name a run by its id or label (see `storbench runs`); "
        f"a run directory elsewhere is read with `storbench import DIR` first"
    )


def default_home() -> Path:
    """Where runs are kept when --results says nothing: $STORBENCH_HOME, or ~/.storbench."""
    return Path(os.environ.get("STORBENCH_HOME") or Path.home() / ".storbench")

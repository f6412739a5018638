"""The programs storbench runs (fio, java, ...), found on PATH or refused in one line saying how to get them."""

from __future__ import annotations

import shutil

from storbench.errors import EngineError


def require(name: str, how_to_get: str) -> str:
    """The path of ``name`` on PATH; an EngineError naming it and ``how_to_get`` it when it is missing."""
    path = shutil.which(name)
    if not path:
        raise EngineError(f"{name} is not installed{how_to_get}")
    return path

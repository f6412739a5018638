"""Which store ``--results`` (or ``$STORBENCH_RESULTS``) names: a results home, or a shared PostgreSQL index."""

from __future__ import annotations

import os
import re
import sys

from storbench.errors import InputError
from storbench.results.postgres import PostgresIndex, is_postgres_url, password_warning
from storbench.results.store import ResultStore


def open_store(results: str | None = None) -> ResultStore:
    """``DIR``: runs and results.db there. ``postgresql://USER@HOST:PORT/DB``: the index there, shared by
    every machine; run directories stay in this machine's home ($STORBENCH_HOME or ~/.storbench)."""
    where = "--results" if results else "$STORBENCH_RESULTS"
    results = results or os.environ.get("STORBENCH_RESULTS") or None
    if results and is_postgres_url(results):
        warning = password_warning(results, where)
        if warning:
            print(f"storbench: warning: {warning}", file=sys.stderr, flush=True)
            if where == "$STORBENCH_RESULTS":
                os.environ.pop("STORBENCH_RESULTS")  # no child inherits it (the index keeps the URL)
        return ResultStore(index=PostgresIndex(results))
    if results and _URL.match(results):  # `mysql://...` is not a directory named `mysql:` made in the cwd
        scheme = results.split(":", 1)[0]  # never the rest: it may hold a password
        raise InputError(
            f"--results {scheme}://...: unknown scheme {scheme}://; allowed: a directory, "
            "postgresql://USER@HOST:PORT/DB"
        )
    return ResultStore(results)


_URL = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]*://")

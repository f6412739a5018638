"""Suites: which workloads run, with what parameters, how many times, at what scale."""

from storbench.suites.loader import builtin_suites, load_suite
from storbench.suites.model import Entry, Suite

__all__ = ["Entry", "Suite", "builtin_suites", "load_suite"]

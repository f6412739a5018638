"""Workloads: one module per family, found by name through the registry."""

from storbench.workloads.base import Workload, all_workloads, get_workload, register
from storbench.workloads.params import Param

__all__ = ["Param", "Workload", "all_workloads", "get_workload", "register"]

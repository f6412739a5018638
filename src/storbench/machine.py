"""The old place of :mod:`storbench.telemetry.machine`, kept for runner.py until the run core imports that."""

from storbench.telemetry.machine import fingerprint

__all__ = ["fingerprint"]

"""Engines: where the work runs (PySpark today)."""

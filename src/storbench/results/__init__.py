"""Run and sample model, on-disk run directories and the SQLite index."""

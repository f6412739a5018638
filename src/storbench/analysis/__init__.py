"""Statistics and comparison of stored runs."""

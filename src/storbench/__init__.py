"""storbench: storage benchmarks for distributed-analytics workloads."""

__version__ = "0.1.0"

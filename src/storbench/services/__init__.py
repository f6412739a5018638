"""Real local services (HDFS, ...) that storbench starts on 127.0.0.1 for demos and tests."""

from storbench.services.registry import SERVICES, service_down, service_env, service_status, service_up

__all__ = ["SERVICES", "service_down", "service_env", "service_status", "service_up"]

"""Real local services (HDFS, ...) that storbench starts on 127.0.0.1 for demos and tests.

Each is one module that registers itself and its `services up` flags (registry.py)."""

from storbench.services.registry import (
    Flag,
    Service,
    all_services,
    get_service,
    register,
    service_down,
    service_env,
    service_status,
    service_up,
    up_flags,
)

__all__ = [
    "Flag",
    "Service",
    "all_services",
    "get_service",
    "register",
    "service_down",
    "service_env",
    "service_status",
    "service_up",
    "up_flags",
]

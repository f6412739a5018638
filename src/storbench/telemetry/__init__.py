"""Host and device telemetry sampled from /proc and /sys while a workload runs.

``Collector`` snapshots raw counters in a background thread; ``window_metrics`` turns
the snapshots of one timed window into the paper's metrics; ``devices_for_path``
finds the disks to watch for a target directory.
"""

from storbench.telemetry.collector import Collector
from storbench.telemetry.snapshot import Snapshot
from storbench.telemetry.devices import Resolution, device_info, devices_for_path, parse_devices_option
from storbench.telemetry.window import METRICS, window_metrics

__all__ = [
    "Collector",
    "Snapshot",
    "Resolution",
    "METRICS",
    "device_info",
    "devices_for_path",
    "parse_devices_option",
    "window_metrics",
]

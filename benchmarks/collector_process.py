"""storbench's Collector as a process of its own, for collector_overhead.py.

    collector_process.py INTERVAL SECONDS [DEVICE ...]

Samples the devices every INTERVAL s for SECONDS s, as a run's collector does, and prints the number
of snapshots it took. The caller reads this process's whole rusage (interpreter start-up and imports
included), the same scope as sadc's and iostat's processes.
"""

import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))

from storbench.telemetry.collector import Collector  # noqa: E402


def main(interval: str, seconds: str, *devices: str) -> None:
    collector = Collector(list(devices), interval=float(interval))
    collector.start()
    time.sleep(float(seconds))
    collector.stop()
    print(len(collector.points()))


if __name__ == "__main__":
    main(*sys.argv[1:])

import os
import subprocess
import sys
from pathlib import Path

SRC = str(Path(__file__).resolve().parents[2] / "src")


def storbench(home: Path, *args: str, timeout: float = 600, **kwargs) -> subprocess.CompletedProcess:
    """The real CLI in a child process, with its own results home."""
    env = {**os.environ, "PYTHONPATH": SRC, "SPARK_LOCAL_IP": "127.0.0.1"}
    return subprocess.run([sys.executable, "-m", "storbench", "--results", str(home), *args],
                          capture_output=True, text=True, timeout=timeout, env=env, **kwargs)

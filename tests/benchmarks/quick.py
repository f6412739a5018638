"""Run one benchmark in its ``--quick`` smoke mode and check what every benchmark must print.

A smoke run is not a measurement: tests never judge its figures (they would be wall-time asserts). It checks
that the benchmark still runs on today's code, that its first line is its scope, and that it ends with a
verdict line (``benchmarks/harness.py``) for each figure it judges, so none can rot unseen.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

BENCHMARKS = Path(__file__).resolve().parents[2] / "benchmarks"
QUICK_ROUNDS = 1  # benchmarks/harness.py's; test_harness checks they agree
VERDICT = re.compile(
    r"^verdict: (?P<name>.+?): (?P<median>[^(]+?) \(.+ over (?P<rounds>\d+) rounds\), "
    r"(goal [≥≤] [^:]+: (met|MISSED)|no goal: reported) \[quick smoke, not a measurement\]$"
)


def run_quick(name: str, *args: str, timeout: float = 900) -> list[re.Match]:
    """``benchmarks/NAME.py --quick ARGS``: asserts exit 0, the scope line first and at least one verdict
    line of the smoke run's rounds (harness.QUICK_ROUNDS); returns the verdict lines' matches."""
    env = {**os.environ, "PYTHONPATH": str(BENCHMARKS.parent / "src"), "SPARK_LOCAL_IP": "127.0.0.1"}
    done = subprocess.run(
        [sys.executable, str(BENCHMARKS / f"{name}.py"), "--quick", *args],
        capture_output=True,
        text=True,
        env=env,
        timeout=timeout,
    )
    assert done.returncode == 0, (
        f"{name} --quick exited {done.returncode}:\n{done.stdout[-3000:]}\n{done.stderr[-3000:]}"
    )
    lines = done.stdout.splitlines()
    assert lines and lines[0].startswith("scope: ") and "peer: " in lines[0], f"{name}: first line {lines[:1]}"
    verdicts = [m for m in map(VERDICT.match, lines) if m]
    loose = [line for line in lines if line.startswith("verdict: ") and not VERDICT.match(line)]
    assert verdicts and not loose, f"{name}: verdict lines {verdicts}, malformed {loose}:\n{done.stdout[-3000:]}"
    assert all(int(m["rounds"]) >= QUICK_ROUNDS for m in verdicts), [m.group(0) for m in verdicts]
    return verdicts

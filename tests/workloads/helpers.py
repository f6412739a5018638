import json
from pathlib import Path

from tests.cli.helpers import storbench


def run_json(home: Path, *args: str, timeout: float = 300):
    """``storbench --json run ...``: (process, outcome dict or None, samples list)."""
    result = storbench(home, "run", *args, "--json", timeout=timeout)
    outcome = json.loads(result.stdout) if result.returncode in (0, 4) and result.stdout.strip() else None
    samples = []
    if outcome:
        path = Path(outcome["path"]) / "samples.jsonl"
        samples = [json.loads(line) for line in path.read_text().splitlines() if line.strip()]
    return result, outcome, samples


def fio_sample(samples, workload: str, metric: str, **labels):
    found = [
        s
        for s in samples
        if s["workload"] == workload
        and s["metric"] == metric
        and "job" not in s["labels"]
        and all(s["labels"].get(k) == v for k, v in labels.items())
    ]
    assert len(found) == 1, (workload, metric, found)
    return found[0]


def failed_run(returncode: int, stdout: str, stderr: str) -> tuple[dict, Path, dict]:
    """A run that failed cleanly (exit 4, no traceback, status failed): (outcome, its directory, manifest)."""
    assert returncode == 4, stderr
    assert "Traceback" not in stderr
    outcome = json.loads(stdout)
    run = Path(outcome["path"])
    manifest = json.loads((run / "manifest.json").read_text())
    assert outcome["status"] == manifest["status"] == "failed"
    return outcome, run, manifest

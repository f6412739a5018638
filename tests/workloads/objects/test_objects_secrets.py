"""Issue 12 secrets on the real S3 server: the engine's job files hold no key (local and Spark
fan-out), and credentials from an AWS profile never reach the run directory, results.db, reports,
progress output or the temp dir. The canary is the service's own random secret key: a value the
server must accept for the run to succeed, so it is a real credential at every step."""

import json
import os
import shutil
import stat
from pathlib import Path

import pytest

from storbench.engines import native
from tests.cli.helpers import storbench
from tests.workloads.helpers import run_json

pytestmark = pytest.mark.s3

SUITE = """name: objects-put-only
description: PUT of 40 small objects per driver
repetitions: 1
params: {size: 4k, objects: 40, ops: 40, duration_s: 0, concurrency: 4}
workloads: [objects-put]
"""


def _suite(tmp_path: Path) -> str:
    path = tmp_path / "put.yaml"
    path.write_text(SUITE)
    return str(path)


def _snooping_engine(tmp_path: Path) -> tuple[Path, Path]:
    """(a wrapper that copies every job file it is given, then runs the real engine; where the copies go)."""
    copies = tmp_path / "job-copies"
    copies.mkdir()
    wrapper = tmp_path / "storbench-load"
    wrapper.write_text(f"""#!/bin/sh
prev=""
for arg in "$@"; do
    [ "$prev" = "--job" ] && cp "$arg" "{copies}/job-$$.json"
    prev="$arg"
done
exec "{native.binary()}" "$@"
""")
    wrapper.chmod(stat.S_IRWXU)
    return wrapper, copies


def _files_holding(places: list[Path], secrets: list[str]) -> list[str]:
    files = [p for place in places for p in ([place] if place.is_file() else place.rglob("*")) if p.is_file()]
    return [f"{p}: {s[:4]}..." for p in files for s in secrets if s.encode() in p.read_bytes()]


@pytest.mark.parametrize("fanout", ["local", pytest.param("spark", marks=pytest.mark.spark)])
def test_the_engines_job_files_hold_no_credentials(s3, tmp_path, monkeypatch, fanout):
    home, state = s3
    wrapper, copies = _snooping_engine(tmp_path)
    monkeypatch.setenv("STORBENCH_LOAD_BIN", str(wrapper))
    monkeypatch.setenv("TMPDIR", str(tmp_path))
    result, outcome, samples = run_json(
        home,
        _suite(tmp_path),
        "--set",
        "drivers=2",
        "--set",
        f"fanout={fanout}",
        "--target",
        f"s3://storbench/jobs-{fanout}",
        "--label",
        f"jobs-{fanout}",
    )
    assert result.returncode == 0 and outcome["status"] == "succeeded", result.stderr
    assert [s["value"] for s in samples if s["metric"] == "obj_ops" and s["workload"] == "objects-put"] == [80]
    jobs = [json.loads(path.read_text()) for path in copies.glob("job-*.json")]
    assert len(jobs) == 2  # the two drivers' processes
    assert all(
        set(job["s3"]) >= {"endpoint", "bucket"} and not {"access_key", "secret_key"} & set(job["s3"]) for job in jobs
    )
    secrets = [state["secret_key"], state["access_key"]]
    assert _files_holding([copies, Path(outcome["path"]), tmp_path], secrets) == []
    assert not [s for s in secrets if s in result.stdout + result.stderr]


@pytest.mark.parametrize("where", ["AWS_SHARED_CREDENTIALS_FILE", "HOME"])
def test_credentials_from_an_aws_profile_never_reach_the_run(s3, tmp_path, monkeypatch, where):
    _, state = s3
    home, tmp, user_home = tmp_path / "results", tmp_path / "tmp", tmp_path / "user"
    tmp.mkdir()
    credentials = user_home / ".aws" / "credentials" if where == "HOME" else tmp_path / "private" / "creds"
    credentials.parent.mkdir(parents=True, mode=0o700)
    fd = os.open(credentials, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    with os.fdopen(fd, "w") as handle:
        handle.write(
            f"[default]\naws_access_key_id = wrong\naws_secret_access_key = wrong\n\n"
            f"[canary]\naws_access_key_id = {state['access_key']}\n"
            f"aws_secret_access_key = {state['secret_key']}\n"
        )
    for name in ("AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "STORBENCH_S3_ACCESS_KEY", "STORBENCH_S3_SECRET_KEY"):
        monkeypatch.delenv(name, raising=False)
    if where == "HOME":
        monkeypatch.delenv("AWS_SHARED_CREDENTIALS_FILE", raising=False)
        monkeypatch.setenv("HOME", str(user_home))
    else:
        monkeypatch.setenv("AWS_SHARED_CREDENTIALS_FILE", str(credentials))
    monkeypatch.setenv("AWS_PROFILE", "canary")
    monkeypatch.setenv("TMPDIR", str(tmp))
    # another results home than the service's: its credentials are not at hand, only the profile's
    result, outcome, _ = run_json(
        home,
        _suite(tmp_path),
        "--target",
        "s3://storbench/profile",
        "--label",
        "profile",
        "--endpoint",
        state["s3_endpoint"],
    )
    assert result.returncode == 0 and outcome["status"] == "succeeded", result.stderr
    manifest = json.loads((Path(outcome["path"]) / "manifest.json").read_text())
    assert "credentials from the AWS profile" in json.dumps(manifest["config"])
    report = tmp_path / "report.html"
    shown = storbench(home, "compare", "profile", "--format", "md", "--html", str(report))
    assert shown.returncode == 0, shown.stderr
    secret = state["secret_key"]
    assert secret not in result.stdout + result.stderr + shown.stdout + shown.stderr
    assert _files_holding([home, report, tmp], [secret]) == []
    assert list(tmp.iterdir()) == []  # nothing left in the temp dir at all
    shutil.rmtree(credentials.parent)

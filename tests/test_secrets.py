"""Secrets (issue 12, items 9 and 10): canaries passed every way a user can never reach the run
directory, results.db, reports, progress output or files left in the temp dir; secret-looking settings
are stored as ***, while the real value still reaches Spark. The S3 ones (engine job files, AWS profile)
are in tests/workloads/objects/test_objects_secrets.py, beside the SeaweedFS fixture."""

import json
import os
import stat
from pathlib import Path

import pytest

from storbench.engines.spark import SparkEngine
from storbench.errors import InputError
from storbench.redaction import is_secret_name, redact_argv, redact_settings, redact_values
from storbench.services import process
from storbench.run.sweep import sweep_points
from storbench.targets.s3 import resolve_endpoint
from tests.cli.helpers import storbench

CANARY = "CANARY7f3e"  # every secret below contains it


@pytest.mark.parametrize(
    "name, secret",
    [
        ("spark.hadoop.fs.s3a.secret.key", True),
        ("spark.hadoop.fs.s3a.access.key", True),
        ("spark.hadoop.fs.s3a.session.token", True),
        ("spark.ssl.keyPassword", True),
        ("javax.jdo.option.ConnectionPassword", True),
        ("spark.authenticate.secret", True),
        ("fs.s3.awsSecretAccessKey", True),
        ("hadoop.security.credential.provider.path", True),
        ("spark.sql.shuffle.partitions", False),
        ("spark.executor.memory", False),
        ("spark.kerberos.keytab", False),
        ("spark.driver.host", False),
        ("cores", False),
        ("size_bytes", False),
    ],
)
def test_which_names_are_secret(name, secret):
    assert is_secret_name(name) is secret


def test_settings_and_command_lines_are_masked():
    assert redact_settings({"spark.hadoop.fs.s3a.secret.key": CANARY, "spark.sql.shuffle.partitions": "8"}) == {
        "spark.hadoop.fs.s3a.secret.key": "***",
        "spark.sql.shuffle.partitions": "8",
    }
    argv = [
        "storbench",
        "run",
        "--spark-conf",
        f"spark.hadoop.fs.s3a.secret.key={CANARY}",
        f"--spark-conf=spark.hadoop.fs.s3a.access.key={CANARY}",
        "--sweep",
        f"spark.ssl.keyPassword=a{CANARY},b",
        "--endpoint",
        f"http://user:{CANARY}@127.0.0.1:8333",
        "--spark-conf",
        "spark.sql.shuffle.partitions=8",
    ]
    shown = redact_argv(argv)
    assert CANARY not in " ".join(shown)
    assert shown[3] == "spark.hadoop.fs.s3a.secret.key=***"
    assert shown[4] == "--spark-conf=spark.hadoop.fs.s3a.access.key=***"
    assert shown[8] == "http://***@127.0.0.1:8333" and shown[-1] == "spark.sql.shuffle.partitions=8"


def test_a_swept_secret_is_labelled_by_position_and_still_reaches_spark():
    points = sweep_points(
        {"spark.hadoop.fs.s3a.secret.key": [f"{CANARY}a", f"{CANARY}b"]}, {}, {"spark_master": "local[2]"}, "--sweep"
    )
    assert [p.labels for p in points] == [
        {"spark.hadoop.fs.s3a.secret.key": "***1"},
        {"spark.hadoop.fs.s3a.secret.key": "***2"},
    ]
    assert [p.engine_options["spark_conf"]["spark.hadoop.fs.s3a.secret.key"] for p in points] == [
        f"{CANARY}a",
        f"{CANARY}b",
    ]
    plain = sweep_points({"spark.sql.shuffle.partitions": ["4", "8"]}, {}, {"spark_master": "local[2]"}, "--sweep")
    assert [p.labels["spark.sql.shuffle.partitions"] for p in plain] == ["4", "8"]
    engine = SparkEngine("local[1]", {"spark.hadoop.fs.s3a.secret.key": CANARY})
    assert engine.effective_conf()["spark.hadoop.fs.s3a.secret.key"] == CANARY  # what Spark is given


def test_endpoint_userinfo_is_never_kept(monkeypatch):
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", "AK")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "SK")
    endpoint = resolve_endpoint(f"http://user:{CANARY}@127.0.0.1:8333", None)
    assert endpoint.url == "http://127.0.0.1:8333"
    with pytest.raises(InputError) as bad:
        resolve_endpoint(f"ftp://user:{CANARY}@127.0.0.1:8333", None)
    assert CANARY not in str(bad.value) and "***@127.0.0.1" in str(bad.value)


def test_secret_files_are_owner_only_from_the_start(tmp_path, monkeypatch):
    modes = []
    real_open = os.open
    monkeypatch.setattr(os, "open", lambda path, flags, mode=0o777: modes.append(mode) or real_open(path, flags, mode))
    (tmp_path / process.STATE).write_text("{}")  # an old, world-readable state file is replaced
    (tmp_path / process.STATE).chmod(0o644)
    process.write_state(tmp_path, {"secret_key": CANARY})
    assert modes == [0o600] and stat.S_IMODE((tmp_path / process.STATE).stat().st_mode) == 0o600
    assert json.loads((tmp_path / process.STATE).read_text()) == {"secret_key": CANARY}


@pytest.mark.real
def test_an_unreachable_endpoint_with_userinfo_fails_without_showing_it(tmp_path, monkeypatch):
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", "AK")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", f"{CANARY}env")
    done = storbench(
        tmp_path / "home",
        "run",
        "objects-basic",
        "--target",
        "s3://storbench/x",
        "--endpoint",
        f"http://user:{CANARY}@127.0.0.1:9",
        timeout=120,
    )
    assert done.returncode != 0 and "127.0.0.1:9" in done.stderr
    assert CANARY not in done.stdout + done.stderr


def _files_holding(root: Path, text: str) -> list[str]:
    return [str(path) for path in root.rglob("*") if path.is_file() and text.encode() in path.read_bytes()]


@pytest.mark.spark
def test_no_canary_anywhere_after_a_spark_run_and_its_reports(tmp_path, monkeypatch):
    home, target, tmp = tmp_path / "home", tmp_path / "target", tmp_path / "tmp"
    target.mkdir()
    tmp.mkdir()
    for name, value in (
        ("TMPDIR", str(tmp)),
        ("AWS_SECRET_ACCESS_KEY", f"{CANARY}env"),
        ("AWS_ACCESS_KEY_ID", f"{CANARY}id"),
    ):
        monkeypatch.setenv(name, value)  # the CLI's child process inherits them
    run = storbench(
        home,
        "run",
        "spark-transforms",
        "--label",
        "canary",
        "--target",
        f"file://{target}",
        "--scale",
        "20000",
        "--repeat",
        "1",
        "--interval",
        "0.5",
        "--spark-conf",
        f"spark.hadoop.fs.s3a.access.key={CANARY}access",
        "--spark-conf",
        f"spark.hadoop.fs.s3a.session.token={CANARY}token",
        # a name Spark's default event-log redaction (secret|password|token|access.key) misses
        "--spark-conf",
        f"spark.hadoop.fs.azure.account.key.acct.blob.core.windows.net={CANARY}azure",
        "--sweep",
        f"spark.hadoop.fs.s3a.secret.key={CANARY}A,{CANARY}B",
    )
    assert run.returncode == 0, run.stderr
    assert CANARY not in run.stdout + run.stderr
    assert "secret.key=***1" in run.stderr and "secret.key=***2" in run.stderr  # the progress lines
    (run_dir,) = (home / "runs").iterdir()
    manifest = json.loads((run_dir / "manifest.json").read_text())
    assert manifest["config"]["spark_conf"] == {
        "spark.hadoop.fs.s3a.access.key": "***",
        "spark.hadoop.fs.s3a.session.token": "***",
        "spark.hadoop.fs.azure.account.key.acct.blob.core.windows.net": "***",
    }
    assert manifest["spark_settings"]["spark.hadoop.fs.s3a.access.key"] == "***"
    by_point = manifest["spark_settings_by_point"]
    assert sorted(by_point) == ["spark.hadoop.fs.s3a.secret.key=***1", "spark.hadoop.fs.s3a.secret.key=***2"]
    assert all(settings["spark.hadoop.fs.s3a.secret.key"] == "***" for settings in by_point.values())
    html, md = tmp_path / "report.html", storbench(home, "compare", "canary", "--format", "md")
    assert storbench(home, "compare", "canary", "--html", str(html)).returncode == 0 and md.returncode == 0
    assert "***1" in md.stdout and CANARY not in md.stdout + html.read_text()
    assert _files_holding(home, CANARY) == [] and _files_holding(tmp, CANARY) == []  # run dir, results.db, reports
    assert list(target.iterdir()) == []


def test_a_postgresql_password_is_masked_in_every_form_it_can_take():
    from storbench.results.postgres import PostgresIndex, redact_pg

    assert (
        PostgresIndex("postgresql://bench:pa%40ss@db:5432/r?sslmode=require").where
        == "postgresql://***@db:5432/r?sslmode=require"
    )
    assert (
        PostgresIndex("postgresql://bench@db/r?password=hunter2&sslmode=require").where
        == "postgresql://***@db/r?password=***&sslmode=require"
    )
    # libpq quoting a fragment of the URL back: the value itself goes too
    assert (
        redact_pg('invalid value "pa@ss" near hunter2', "postgresql://u:pa%40ss@db/r?password=hunter2")
        == 'invalid value "***" near ***'
    )
    assert redact_argv(["storbench", "--results=postgresql://u@db/r?password=hunter2", "runs"]) == [
        "storbench",
        "--results=postgresql://***@db/r?password=***",
        "runs",
    ]


def test_keys_a_server_echoes_are_masked_longest_first():
    # SeaweedFS logs an unknown access key in its refusal; a key inside another is masked whole
    said = "key 'AKIA1' not found; signature of AKIA1x with s3cr3t"
    assert redact_values(said, "AKIA1", "AKIA1x", "s3cr3t", "") == "key '***' not found; signature of *** with ***"

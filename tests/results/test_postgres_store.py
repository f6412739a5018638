"""Issue 17: a results index shared in a real PostgreSQL; run directories stay files in each machine's home."""

import json
import os
import shutil
import socket
import subprocess
import sys
from contextlib import contextmanager

import pytest

from storbench.progress import Progress
from storbench.results.postgres import PostgresIndex
from storbench.results.store import ResultStore
from storbench.run import RunOptions, run
from tests.cli.helpers import SRC

TINY = ("--set", "size=1m", "--set", "runtime_s=0", "--set", "ramp_time_s=0", "--set", "numjobs=1")  # ~1 s
pytestmark = [pytest.mark.postgres, pytest.mark.skipif(shutil.which("fio") is None, reason="fio is not installed")]


def storbench(home, url, *args, password_env=False, url_env=False):
    """The real CLI with ``home`` as $STORBENCH_HOME and the PostgreSQL index as --results (or
    $STORBENCH_RESULTS), its password in the URL (or $PGPASSWORD)."""
    env = {**os.environ, "PYTHONPATH": SRC, "STORBENCH_HOME": str(home)}
    env.pop("STORBENCH_RESULTS", None)
    if password_env:
        user, _, rest = url.removeprefix("postgresql://").partition("@")
        env["PGPASSWORD"] = user.partition(":")[2]
        url = f"postgresql://{user.partition(':')[0]}@{rest}"
    if url_env:
        env["STORBENCH_RESULTS"] = url
    return subprocess.run(
        [sys.executable, "-m", "storbench", *(() if url_env else ("--results", url)), *args],
        capture_output=True,
        text=True,
        timeout=300,
        env=env,
    )


def _files_hold(root, secret):
    return [p for p in root.rglob("*") if p.is_file() and secret.encode() in p.read_bytes()]


def test_runs_from_two_homes_are_listed_and_compared_through_one_postgres(tmp_path, postgres, pg_url):
    home_a, home_b, home_c, target = (tmp_path / n for n in ("a", "b", "c", "target"))
    target.mkdir()
    ran = {}
    for home, label in ((home_a, "disk-a"), (home_b, "disk-b")):
        done = storbench(
            home,
            pg_url,
            "run",
            "fio-write",
            "--label",
            label,
            "--target",
            str(target),
            *TINY,
            "--quiet",
            "--json",
            password_env=label == "disk-b",
            url_env=label == "disk-b",
        )
        assert done.returncode == 0, done.stderr
        ran[label] = json.loads(done.stdout)
        assert ran[label]["path"].startswith(str(home / "runs"))  # the run directory stays in that home
    # home B's machine is gone: its run is read from the index alone (manifest and samples)
    shutil.rmtree(home_b)

    listed = storbench(home_c, pg_url, "runs", "--json")
    assert listed.returncode == 0, listed.stderr
    runs = {r["label"]: r for r in json.loads(listed.stdout)}
    assert runs["disk-a"]["run_id"] == ran["disk-a"]["run_id"] and runs["disk-a"]["status"] == "succeeded"
    assert runs["disk-b"]["path"] == f"{socket.gethostname()}:{ran['disk-b']['path']}"  # a directory not here
    assert runs["disk-a"]["host"] == runs["disk-b"]["host"] == socket.gethostname()
    table = storbench(home_c, pg_url, "runs")
    assert table.returncode == 0 and table.stdout.splitlines()[0].split()[-1] == "HOST"
    assert {line.split()[1] for line in table.stdout.splitlines()[1:]} == {"disk-a", "disk-b"}

    compared = storbench(home_c, pg_url, "compare", "disk-a", "disk-b", "--format", "json")
    assert compared.returncode == 0, compared.stderr
    report = json.loads(compared.stdout)
    assert [r["label"] for r in report["runs"]] == ["disk-a", "disk-b"]
    bandwidth = next(row for row in report["rows"] if row["metric"] == "fio_bw_mbps")
    assert [cell["run_index"] for cell in bandwidth["cells"] if cell["values"]] == [0, 1]  # B's from the index
    shown = storbench(home_c, pg_url, "show", ran["disk-b"]["run_id"])
    assert shown.returncode == 0 and "disk-b" in shown.stdout, shown.stderr

    # the password went to libpq only: no file, manifest, report or output line holds it
    for home in (home_a, home_c):
        assert _files_hold(home, postgres.password) == []
    for done in (listed, table, compared, shown):
        assert postgres.password not in done.stdout + done.stderr
    assert "--results postgresql://***@" in " ".join(
        json.loads((home_a / "runs" / ran["disk-a"]["run_id"] / "manifest.json").read_text())["command_line"]
    )


class _CutsTheIndex(Progress):
    """Progress lines as usual; when the second repetition starts, the server ends storbench's connection."""

    def __init__(self, postgres, database):
        super().__init__(quiet=True)
        self.postgres, self.database = postgres, database

    @contextmanager
    def step(self, label, **how):
        if "repetition 2/" in label:
            self.postgres.sql(
                "SELECT pg_terminate_backend(pid) FROM pg_stat_activity "
                f"WHERE application_name = 'storbench' AND datname = '{self.database}'"
            )
        with super().step(label, **how) as outcome:
            yield outcome


def test_a_lost_connection_keeps_the_run_and_import_indexes_it(tmp_path, postgres, pg_url, capfd):
    home, target = tmp_path / "home", tmp_path / "target"
    target.mkdir()
    database = pg_url.rsplit("/", 1)[1]
    store = ResultStore(home, index=PostgresIndex(pg_url))
    options = RunOptions(
        suite="fio-write",
        label="cut",
        target=str(target),
        repeat=2,
        overrides=dict(pair.split("=") for pair in TINY[1::2]),
    )
    outcome = run(options, store, _CutsTheIndex(postgres, database))
    store.index.close()

    assert outcome.status == "succeeded"
    lines = (outcome.path / "samples.jsonl").read_text().splitlines()
    assert {json.loads(line)["repetition"] for line in lines} == {1, 2}  # measured after the cut too
    hint = [line for line in capfd.readouterr().err.splitlines() if "storbench import" in line]
    assert hint == [hint[0]] and hint[0].endswith(f"index it later with: storbench import {outcome.path}")
    assert "127.0.0.1" in hint[0] and postgres.password not in hint[0]
    indexed = postgres.sql(f"SELECT status FROM runs WHERE run_id = '{outcome.run_id}'", database)
    assert indexed == [("running",)]  # the index stopped where the connection did: after repetition 1
    assert postgres.sql(f"SELECT DISTINCT repetition FROM samples WHERE run_id = '{outcome.run_id}'", database) == [
        (1,)
    ]

    for _ in range(2):  # again: the same index, not twice the samples
        done = storbench(home, pg_url, "import", str(outcome.path))
        assert done.returncode == 0, done.stderr
        assert done.stdout.startswith(f"indexed run {outcome.run_id} (cut, fio-write, succeeded, {len(lines)} samples)")
        count = postgres.sql(f"SELECT count(*) FROM samples WHERE run_id = '{outcome.run_id}'", database)
        assert count == [(len(lines),)]
    listed = storbench(tmp_path / "elsewhere", pg_url, "runs", "--json")
    assert [(r["run_id"], r["status"]) for r in json.loads(listed.stdout)] == [(outcome.run_id, "succeeded")]

    refused = storbench(home, pg_url, "import", str(target), password_env=True)  # no warning line either
    assert refused.returncode == 2
    assert refused.stderr.strip().splitlines() == [
        f"storbench: error: import {target}: not a storbench run directory (no manifest.json; "
        "expected a directory under a results home's runs/)"
    ]


def test_an_unreachable_index_is_refused_before_a_run_starts(tmp_path, postgres):
    url = postgres.url().replace(str(postgres.port), "1")  # nothing listens on port 1
    done = storbench(
        tmp_path / "home", url, "run", "fio-write", "--target", str(tmp_path), *TINY, url_env=True, password_env=True
    )
    assert done.returncode == 3
    assert done.stderr.startswith("storbench: error: results index postgresql://***@127.0.0.1:1/postgres: ")
    assert len(done.stderr.strip().splitlines()) == 1 and postgres.password not in done.stderr
    assert not (tmp_path / "home" / "runs").exists()

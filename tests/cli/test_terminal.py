"""Issue 17: progress with an ETA on a terminal, plain lines elsewhere; Spark's and the JVM's lines stay in
the run directory's spark.log, and a failure shows the log's last relevant lines with its path."""

import io
import json
import os
import pty
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from storbench import progress as progress_module
from storbench.progress import START_TIMES, Progress, remember_seconds, remembered_seconds
from tests.cli.helpers import ANSI, SRC, storbench


def _three_steps(progress: Progress) -> None:
    progress.plan(3)
    for name in ("datagen", "scan", "groupby"):
        with progress.step(name, counted=True):
            progress.advance(1, 4, "tables")
            progress.advance(4, 4, "tables")


def _read_all(fd: int) -> str:
    chunks = []
    while True:
        try:
            chunk = os.read(fd, 65536)
        except OSError:  # the other end closed (EIO on Linux)
            break
        if not chunk:
            break
        chunks.append(chunk)
    return b"".join(chunks).decode("utf-8", "replace")


def test_a_terminal_gets_a_live_display_with_an_eta(tmp_path):
    times = tmp_path / START_TIMES
    remember_seconds(times, "s3", 30)  # `services up s3` took 30 s last time
    master, slave = pty.openpty()
    with open(slave, "w", closefd=True) as stream:
        progress = Progress(stream=stream)
        _three_steps(progress)
        with progress.step("starting s3", expected_s=remembered_seconds(times, "s3")):
            pass
    text = _read_all(master)
    os.close(master)
    assert ANSI.search(text)  # drawn by rich, not plain lines
    assert re.search(r"run: step 2 of 3 .*ETA \d\d:\d\d", text), text  # the run's ETA once one step is done
    assert "tables" in text
    assert re.search(r"starting s3 .*ETA 00:[23]\d", text), text  # a service's start: last time's duration
    assert remembered_seconds(tmp_path / "missing.json", "s3") is None


def test_without_a_terminal_plain_lines_carry_the_eta(monkeypatch):
    monkeypatch.setattr(progress_module, "PLAIN_EVERY_S", 0)  # a step's own line at every report
    stream = io.StringIO()
    _three_steps(Progress(stream=stream))
    lines = stream.getvalue().splitlines()
    assert not ANSI.search(stream.getvalue())
    assert all(line.startswith("[") for line in lines), lines
    assert re.fullmatch(r"\[00:00\] datagen: 1/4 tables, ETA \d\d:\d\d", lines[0]), lines
    assert re.search(r"datagen: done in .*\[step 1/3, ETA \d\d:\d\d\]$", lines[1]), lines
    assert len(lines) == 6 and not re.search(r"ETA", lines[-1])  # nothing left after the last step
    quiet = io.StringIO()
    _three_steps(Progress(quiet=True, stream=quiet))
    assert quiet.getvalue() == ""


@pytest.mark.real
@pytest.mark.skipif(shutil.which("fio") is None, reason="fio is not installed")
def test_a_run_on_a_pseudo_terminal_shows_an_eta(tmp_path):
    target = tmp_path / "target"
    target.mkdir()
    master, slave = pty.openpty()
    env = {**os.environ, "PYTHONPATH": SRC}
    child = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "storbench",
            "--results",
            str(tmp_path / "home"),
            "run",
            "fio-randread",
            "--repeat",
            "2",
            "--target",
            str(target),
            "--set",
            "runtime_s=1",
            "--set",
            "size=4m",
        ],
        stdout=slave,
        stderr=slave,
        stdin=subprocess.DEVNULL,
        env=env,
    )
    os.close(slave)
    text = _read_all(master)
    os.close(master)
    assert child.wait(timeout=120) == 0, text
    assert re.search(r"ETA \d\d:\d\d", text), text
    assert "fio-randread (repetition 2/2): done in" in text


@pytest.mark.spark
def test_a_failed_start_shows_the_last_lines_of_spark_log(tmp_path):
    home = tmp_path / "home"
    # every JVM of the run refuses to start: Spark's session fails, its reason only in spark.log
    done = storbench(
        home,
        "run",
        "groupby",
        "--scale",
        "20K",
        "--json",
        timeout=300,
        env_extra={"JAVA_TOOL_OPTIONS": "-XX:+StorbenchNoSuchOption"},
    )
    outcome = json.loads(done.stdout)
    assert done.returncode != 0 and outcome["status"] == "failed"
    log = Path(outcome["path"]) / "spark.log"
    assert f"the last relevant lines of {log}:" in done.stderr
    assert "Unrecognized VM option 'StorbenchNoSuchOption'" in done.stderr  # the JVM's own reason, from the log
    assert "Picked up JAVA_TOOL_OPTIONS" not in done.stderr  # not a relevant line

"""Issue 17: `make run` sets up only what the default job needs; other parts are built on first use."""

import subprocess
from pathlib import Path

from storbench import buildparts

SETUP = Path(__file__).resolve().parents[1] / "scripts" / "setup.sh"


def test_an_unknown_part_is_one_line():
    done = subprocess.run(["bash", str(SETUP), "--part", "bogus"], capture_output=True, text=True, timeout=60)
    assert done.returncode == 2
    assert done.stderr.strip() == "setup: --part 'bogus': allowed: jvm, s3a, cassandra, metastore, native, ycsb, lab"


def test_the_default_setup_builds_no_optional_part():
    """Without --test, setup.sh builds nothing the default job (Spark on a local directory) does not use: each module
    of the table of build parts is built in one loop that skips the parts not wanted, by its kind's function."""
    text = SETUP.read_text()
    assert 'wants "$name" || continue' in text
    assert 'wants() { [ "$want_test" = 1 ] || [ "$part" = "$1" ]; }' in text
    for kind in {module.build for module in buildparts.MODULES}:
        assert f"build_{kind}() {{" in text, kind


def _stub(directory: Path, name: str, script: str) -> None:
    (directory / name).write_text(f"#!/bin/sh\n{script}\n")
    (directory / name).chmod(0o755)


def test_old_versions_are_one_line_each_saying_how_to_get_them(tmp_path):
    """Java 11, Python 3.9 and Debian 12's cargo 1.65: --check (and a set-up) stops before installing anything."""
    _stub(tmp_path, "java", "echo 'openjdk version \"11.0.2\" 2019-01-15' >&2")
    _stub(tmp_path, "python3", "echo 3.9.2")
    _stub(tmp_path, "cargo", 'echo "cargo 1.65.0 (4bc8f24d3 2022-10-20)"')
    env = {"PATH": f"{tmp_path}:/usr/bin:/bin"}
    done = subprocess.run(["bash", str(SETUP), "--check"], capture_output=True, text=True, timeout=60, env=env)
    assert done.returncode == 1
    lines = done.stderr.splitlines()
    assert len(lines) == 3, done.stderr
    assert lines[0].startswith("setup: Python >= 3.11 needed, python3 is 3.9.2: apt-get install python3.11")
    assert lines[1].startswith(f"setup: Java >= 17 needed, {tmp_path}/java is 11.0.2: apt-get install openjdk-17")
    assert lines[2].startswith("setup: cargo >= 1.88.0 needed for native/Cargo.lock, cargo here is 1.65.0: rustup")
    native = subprocess.run(
        ["bash", str(SETUP), "--part", "native"], capture_output=True, text=True, timeout=60, env=env
    )
    assert native.returncode == 1 and native.stderr == lines[2] + "\n"  # a part checks only what it uses


def test_a_missing_cargo_names_rustup_and_java_8_is_too_old(tmp_path):
    _stub(tmp_path, "java", "echo 'java version \"1.8.0_292\"' >&2")
    env = {"PATH": f"{tmp_path}:/usr/bin:/bin", "PYTHON": str(Path(__file__).resolve().parents[1] / ".venv/bin/python")}
    done = subprocess.run(["bash", str(SETUP), "--check"], capture_output=True, text=True, timeout=60, env=env)
    assert done.returncode == 1
    assert done.stderr.splitlines() == [
        f"setup: Java >= 17 needed, {tmp_path}/java is 1.8.0_292: apt-get install openjdk-17-jdk-headless and pick "
        "it with update-alternatives --config java (or put a JDK 17+ first in PATH)",
        "setup: cargo >= 1.88.0 is missing (the native load engine, native/Cargo.lock): install Rust with rustup "
        "(https://rustup.rs: curl https://sh.rustup.rs -sSf | sh), Debian's cargo is too old",
    ]

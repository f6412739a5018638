"""The wheel (`make dist`, hatch_build.py) installed in a fresh venv outside the clone: the default job and fio-basic
run from it, `storbench doctor` tells the truth with parts missing, and a jar is fetched from Maven Central checked
against Maven's .sha1.

The wheel is built once for the module from the clone's builds (native/target/release, jvm/*/target) without
rebuilding them (STORBENCH_DIST_ALLOW_STALE: a shared build older than its sources is bundled, with a note). The
fresh venv's dependencies (PySpark, DuckDB, ...: ~1 GB) are the shared venv's, seen through a .pth file listing a
folder of links to them without storbench itself; pip installs the wheel with --no-index and checks them.
"""

import os
import subprocess
import sys
import sysconfig
from pathlib import Path

import pytest

from storbench import fetch
from storbench.errors import EngineError

pytestmark = pytest.mark.real
REPO = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def wheel_venv(tmp_path_factory):
    """(the venv's bin folder, an environment for it: outside the clone, own results home and cache)."""
    tmp = tmp_path_factory.mktemp("wheel")
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "STORBENCH_LOAD_BIN", "JAVA_HOME")}
    built = subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", "-w", str(tmp / "dist"), str(REPO)],
        env={**env, "STORBENCH_DIST_ALLOW_STALE": "1"},
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert built.returncode == 0, built.stdout[-2000:] + built.stderr[-3000:]
    (wheel,) = (tmp / "dist").glob("storbench-*.whl")
    assert wheel.name.endswith("-py3-none-" + sysconfig.get_platform().replace("-", "_") + ".whl")

    deps = tmp / "deps"  # the shared venv's packages, less storbench (its editable install points at a clone)
    deps.mkdir()
    shared = Path(sysconfig.get_paths()["purelib"])
    for entry in shared.iterdir():
        if not (entry.name.startswith(("storbench", "__editable__")) or entry.suffix == ".pth"):
            (deps / entry.name).symlink_to(entry)
    venv = tmp / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True, timeout=120)
    site = Path(
        subprocess.run(
            [venv / "bin" / "python", "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
            capture_output=True,
            text=True,
            check=True,
        ).stdout.strip()
    )
    (site / "shared-deps.pth").write_text(f"{deps}\n")
    installed = subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "--python",
            str(venv / "bin" / "python"),
            "install",
            "-q",
            "--no-index",
            str(wheel),
        ],
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert installed.returncode == 0, installed.stderr[-3000:]
    env.update(STORBENCH_HOME=str(tmp / "home"), XDG_CACHE_HOME=str(tmp / "cache"))
    return venv / "bin", env, tmp


def _storbench(wheel_venv, *args, path=None, timeout=600):
    bin_dir, env, tmp = wheel_venv
    if path is not None:
        env = {**env, "PATH": path}
    return subprocess.run(
        [bin_dir / "storbench", *args],
        cwd=tmp,
        env=env,
        capture_output=True,
        text=True,
        timeout=timeout,
        stdin=subprocess.DEVNULL,
    )


def test_installed_package_is_the_wheel_not_the_clone(wheel_venv):
    bin_dir, env, tmp = wheel_venv
    said = subprocess.run(
        [
            bin_dir / "python",
            "-c",
            "import storbench, storbench.binaries as b; "
            "print(storbench.__file__); print(b.checkout()); print(b.native_binary())",
        ],
        cwd=tmp,
        env=env,
        capture_output=True,
        text=True,
        check=True,
    ).stdout.splitlines()
    assert said[0].startswith(str(tmp / "venv")) and said[1] == "None"
    assert said[2].startswith(str(tmp / "venv")) and said[2].endswith("_bundle/bin/storbench-load")


def test_default_job_and_fio_basic_run_from_the_wheel(wheel_venv):
    default = _storbench(wheel_venv, "run", "--repeat", "1", "--scale", "100000", "--quiet")
    assert default.returncode == 0, default.stdout[-2000:] + default.stderr[-2000:]
    assert ": succeeded" in default.stdout
    fio = _storbench(wheel_venv, "run", "fio-basic", "--repeat", "1", "--quiet")
    assert fio.returncode == 0, fio.stdout[-2000:] + fio.stderr[-2000:]
    assert ": succeeded" in fio.stdout


def test_doctor_reports_missing_java_and_jars_in_one_line_each(wheel_venv):
    bin_dir = wheel_venv[0]
    done = _storbench(wheel_venv, "doctor", path=str(bin_dir))  # a PATH with no java, fio, ceph, ...
    assert done.returncode == 1, done.stdout + done.stderr
    lines = done.stdout.splitlines()
    (java,) = [line for line in lines if line.split()[1:2] == ["java"]]
    assert java.startswith("MISSING") and "install Java 17 or newer" in java
    (fio_line,) = [line for line in lines if line.split()[1:2] == ["fio"]]
    assert fio_line.startswith("missing ") and "apt-get install fio" in fio_line
    (jvm,) = [line for line in lines if "jars: jvm" in line]
    assert jvm.startswith("missing ") and "storbench fetch jvm" in jvm
    (native,) = [line for line in lines if "native engine" in line]
    assert native.startswith("ok ") and "_bundle/bin/storbench-load" in native
    assert lines[-1] == "doctor: an installed wheel; required and missing: java"

    everything = _storbench(wheel_venv, "doctor")  # this machine's own PATH: Java is there
    assert everything.returncode == 0, everything.stdout
    assert [line for line in everything.stdout.splitlines() if line.split()[1:2] == ["java"]][0].startswith("ok ")


def test_run_without_java_is_one_line(wheel_venv):
    done = _storbench(wheel_venv, "run", "--repeat", "1", "--scale", "100000", path=str(wheel_venv[0]))
    assert done.returncode != 0
    said = [line for line in done.stderr.splitlines() if "java" in line.lower()]
    assert len(said) == 1 and "java is not installed: install Java 17 or newer" in said[0], done.stderr
    assert "Traceback" not in done.stderr and "JAVA_GATEWAY" not in done.stderr


def test_fetch_checks_maven_sha1(tmp_path, monkeypatch):
    """One small real jar from Maven Central into the cache; a wrong recorded sha1 keeps nothing."""
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    path = "org/hamcrest/hamcrest-core/1.3/hamcrest-core-1.3.jar"
    good = fetch.Artifact(path, "42a25dc3219429f0e5d060061f71acb49bf010a0", 45024)
    fetch._fetch_one(good)
    assert fetch.cached(good).stat().st_size == 45024
    assert fetch.intact(good, rehash=True)
    fetch.cached(good).unlink()
    fetch._stamp(good).unlink()  # the record of its last check (size, mtime), written with it
    wrong = fetch.Artifact(path, "0" * 40, 45024)
    with pytest.raises(EngineError, match="checksum mismatch.*nothing was kept"):
        fetch._fetch_one(wrong)
    assert list(fetch.cached(wrong).parent.iterdir()) == []

"""`storbench fetch` and doctor's jar lines, against a Maven repository on disk (file://): no network.

As an installed wheel does it: ``checkout`` answers None and ``bundled`` serves a jar list written here. What must
hold: a jar path from the list cannot leave the cache, a cached jar found damaged is fetched again (by a run, by
``fetch``) and named by ``doctor``, and a bad repository URL, an empty ``.sha1`` answer or an unwritable cache is
one line through the CLI, never a traceback.
"""

from __future__ import annotations

import hashlib
import os
from pathlib import Path

import pytest

from storbench import cli, doctor, fetch
from storbench.errors import EngineError

JAR = "org/example/demo/1.0/demo-1.0.jar"
CONTENT = b"PK\x03\x04 a small jar's bytes " * 100


@pytest.fixture()
def wheel(tmp_path, monkeypatch):
    """An installed wheel listing one jar of the jvm part, a file:// repository holding it, a cache in tmp_path."""
    repo, bundle, cache = tmp_path / "repo", tmp_path / "bundle", tmp_path / "cache"
    (repo / JAR).parent.mkdir(parents=True)
    (repo / JAR).write_bytes(CONTENT)
    sha1 = hashlib.sha1(CONTENT).hexdigest()
    (repo / (JAR + ".sha1")).write_text(f"{sha1}  demo-1.0.jar\n")
    (bundle / "maven").mkdir(parents=True)
    (bundle / "maven" / "jvm.txt").write_text(f"{JAR} {sha1} {len(CONTENT)}\n")
    monkeypatch.setattr(fetch, "checkout", lambda: None)
    monkeypatch.setattr(doctor, "checkout", lambda: None)
    monkeypatch.setattr(fetch, "bundled", lambda *parts: bundle.joinpath(*parts) if parts[0] == "maven" else None)
    monkeypatch.setenv("XDG_CACHE_HOME", str(cache))
    monkeypatch.setenv(fetch.REPOSITORY_ENV, repo.as_uri())
    return repo, bundle, cache


def one_line_error(capsys, argv: list[str]) -> str:
    code = cli.main(argv)
    err = capsys.readouterr().err.strip().splitlines()
    assert code != 0, err
    assert err and err[-1].startswith("storbench: error: "), err
    assert not any("Traceback" in line for line in err), err
    return err[-1]


def test_fetch_puts_the_jar_in_the_cache_from_a_file_repository(wheel, capsys):
    repo, bundle, cache = wheel
    assert cli.main(["fetch", "jvm"]) == 0
    assert (cache / "storbench" / "maven" / JAR).read_bytes() == CONTENT
    assert "jvm: 1 jar(s) fetched" in capsys.readouterr().out


@pytest.mark.parametrize("path", ["../../escaped.jar", "/tmp/storbench-escaped.jar", "org/../../x.jar"])
def test_a_jar_path_leaving_the_cache_is_refused_in_one_line(wheel, capsys, path):
    repo, bundle, cache = wheel
    sha1 = hashlib.sha1(CONTENT).hexdigest()
    (bundle / "maven" / "jvm.txt").write_text(f"{path} {sha1} {len(CONTENT)}\n")
    line = one_line_error(capsys, ["fetch", "jvm"])
    assert "jvm.txt:1" in line and repr(path) in line and "would leave the fetch cache" in line
    assert not (cache / "escaped.jar").exists() and not Path("/tmp/storbench-escaped.jar").exists()


def test_a_damaged_cached_jar_is_named_by_doctor_and_fetched_again_by_a_run_and_by_fetch(wheel, capsys):
    repo, bundle, cache = wheel
    assert cli.main(["fetch", "jvm"]) == 0
    target = cache / "storbench" / "maven" / JAR
    assert doctor._part("jvm").ok
    # damaged the way a write does it (same size, other bytes, its mtime moves): doctor says so, a run's
    # classpath fetches it again
    before = os.stat(target)
    target.write_bytes(CONTENT[:-1] + b"Y")
    os.utime(target, ns=(before.st_atime_ns, before.st_mtime_ns + 1_000_000_000))
    check = doctor._part("jvm")
    assert not check.ok and "damaged" in check.detail and "storbench fetch jvm" in check.detail, check.detail
    capsys.readouterr()
    classpath = fetch.classpath("jvm")
    assert classpath.endswith(str(target)) and target.read_bytes() == CONTENT
    assert "is damaged" in capsys.readouterr().err
    # other bytes with the mtime put back as it was: the quick check trusts it, `fetch` hashes anew and replaces it
    before = os.stat(target)
    target.write_bytes(CONTENT[:-1] + b"X")
    os.utime(target, ns=(before.st_atime_ns, before.st_mtime_ns))
    assert fetch.intact(fetch.artifacts("jvm")[0])
    assert "jvm: 1 jar(s) fetched (1 of them damaged in the cache, fetched again)" in fetch.fetch("jvm")
    assert target.read_bytes() == CONTENT
    target.write_bytes(CONTENT[:10])  # cut short: its size alone tells
    assert not doctor._part("jvm").ok


def test_an_empty_sha1_answer_is_one_line(wheel, capsys):
    repo, bundle, cache = wheel
    (repo / (JAR + ".sha1")).write_text("")
    line = one_line_error(capsys, ["fetch", "jvm"])
    assert f"{JAR}.sha1: the repository's answer is empty" in line
    assert not (cache / "storbench" / "maven" / JAR).exists()


def test_a_repository_that_is_not_a_url_is_one_line(wheel, capsys, monkeypatch):
    monkeypatch.setenv(fetch.REPOSITORY_ENV, "notaurl")
    line = one_line_error(capsys, ["fetch", "jvm"])
    assert f"{fetch.REPOSITORY_ENV}='notaurl': not a repository URL; allowed: http://, https://, file://" in line


def test_an_unwritable_fetch_cache_is_one_line(wheel, capsys, monkeypatch, tmp_path):
    (tmp_path / "a-file").write_text("not a directory\n")  # unwritable even for root: a file where a folder goes
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "a-file"))
    line = one_line_error(capsys, ["fetch", "jvm"])
    assert "cannot write the fetch cache" in line and "XDG_CACHE_HOME" in line


def test_the_download_checks_still_refuse_a_wrong_jar(wheel):
    repo, bundle, cache = wheel
    (repo / JAR).write_bytes(CONTENT + b"tampered")
    with pytest.raises(EngineError, match="checksum mismatch"):
        fetch.fetch("jvm")
    assert not (cache / "storbench" / "maven" / JAR).exists()

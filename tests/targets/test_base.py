"""The registry finds every scheme by discovery; options and the page-cache helper shared by all."""

import sys
import textwrap
from pathlib import Path

import pytest

import storbench.targets as package
from storbench.errors import InputError
from storbench.targets import TargetOptions, base, parse_target, registry


def test_every_scheme_is_found_and_the_default_comes_first():
    assert list(registry()) == ["file", "cassandra", "device", "hdfs", "mem", "rados", "s3"]
    assert all(cls.scheme == scheme for scheme, cls in registry().items())


def test_an_unknown_scheme_lists_the_registry():
    with pytest.raises(InputError) as refused:
        parse_target("gs://bucket/x")
    message = str(refused.value)
    assert message.startswith("--target 'gs://bucket/x': scheme gs:// is not supported; supported: file:///path")
    for cls in registry().values():
        assert cls.usage in message


def test_a_new_scheme_is_one_module_in_the_package(tmp_path, monkeypatch):
    """A module dropped into the package registers its scheme: no other file changes."""
    (tmp_path / "kv.py").write_text(
        textwrap.dedent("""
        from urllib.parse import urlparse
        from storbench.targets.base import Target, register

        @register
        class KvTarget(Target):
            scheme = "kv"
            kind = "key-value"
            usage = "kv://HOST:PORT/KEYSPACE"
            wanted = "a kv://HOST:PORT/KEYSPACE target"

            @classmethod
            def parse(cls, text, options):
                return cls(text, options)
    """)
    )
    monkeypatch.setattr(package, "__path__", [*package.__path__, str(tmp_path)])
    monkeypatch.setattr(base, "REGISTRY", dict(base.REGISTRY))
    try:
        target = parse_target("kv://127.0.0.1:9042/bench")
        assert type(target).__name__ == "KvTarget" and target.uri == "kv://127.0.0.1:9042/bench"
        with pytest.raises(InputError, match=r"kv://HOST:PORT/KEYSPACE"):
            parse_target("gs://x")
    finally:
        sys.modules.pop("storbench.targets.kv", None)


def test_a_scheme_registered_twice_fails():
    class Twin(base.Target):
        scheme = "file"

    with pytest.raises(RuntimeError, match="target scheme 'file' registered twice"):
        base.register(Twin)


def test_replication_below_one_is_refused_for_any_scheme():
    with pytest.raises(InputError, match=r"^--replication 0: must be at least 1$"):
        parse_target("hdfs://127.0.0.1:8020/x", TargetOptions(replication=0))


def test_release_without_a_claim_removes_only_the_scratch(tmp_path):
    target = parse_target("rados://pool")
    target.run_id = "r1"
    scratch = target.scratch_dir()
    assert "storbench-r1-scratch-" in scratch
    assert not target.release()
    assert not Path(scratch).exists()


def test_evict_touches_only_the_files_below(tmp_path):
    (tmp_path / "a" / "b").mkdir(parents=True)
    for name in ("a/1", "a/b/2", "3"):
        (tmp_path / name).write_bytes(b"x" * 4096)
    assert base.evict_from_page_cache(tmp_path / "a") == 2
    assert base.evict_from_page_cache(tmp_path / "missing") == 0

"""issue 38 items 4 and 8: the native engine's secrets (S3 keys, a CQL login) reach it through a pipe it
inherits, never a file: a killed storbench leaves none of them in $TMPDIR, and the job file holds no password."""

import json
import os
import tempfile
from pathlib import Path

import pytest

from storbench.engines import native, native_fanout, native_job, native_secrets
from storbench.workloads.objects import size_dist

CANARY = "pw-canary-38"


def _job(protocol: str) -> dict:
    section = (
        {"endpoint": "http://127.0.0.1:1", "bucket": "b", "access_key": "AK" + CANARY, "secret_key": "SK" + CANARY}
        if protocol == "s3"
        else {"contact_points": ["127.0.0.1:9042"], "keyspace": "ks", "username": "storbench", "password": CANARY}
    )
    mix = [{"op": "put" if protocol == "s3" else "write", "weight": 1}]
    return native_job.job(protocol, section, mix, 10, native_job.load_model(1), 10, 0, object_size=size_dist("16"))


class _Engine:
    """Stands in for subprocess.Popen: records what the engine would have been given, while it runs."""

    seen: list = []

    def __init__(self, argv, env, pass_fds=(), **_):
        work = Path(argv[argv.index("--job") + 1]).parent
        files = {p.name: p.read_bytes() for p in work.iterdir() if p.is_file()}
        path = env.get(native_secrets.SECRETS_FILE_ENV)
        handed = None
        if path:
            fd = int(path.rsplit("/", 1)[1])
            assert fd in pass_fds and path == f"/proc/self/fd/{fd}"
            with open(f"/proc/self/fd/{fd}", "rb") as pipe:  # what the engine reads at its start
                handed = json.loads(pipe.read())
        _Engine.seen.append({"files": files, "env": env, "handed": handed, "argv": argv})
        Path(argv[argv.index("--result") + 1]).write_text(json.dumps({"status": "ok"}))
        self.pid = 0

    def wait(self, timeout=None):
        return 0

    def poll(self):
        return 0


@pytest.mark.parametrize(
    "protocol, secrets",
    [
        ("s3", {"STORBENCH_S3_ACCESS_KEY": "AK" + CANARY, "STORBENCH_S3_SECRET_KEY": "SK" + CANARY}),
        ("cql", {"STORBENCH_CQL_USERNAME": "storbench", "STORBENCH_CQL_PASSWORD": CANARY}),
    ],
)
def test_secrets_reach_the_engine_through_a_pipe_never_a_file(monkeypatch, tmp_path, protocol, secrets):
    monkeypatch.setenv("TMPDIR", str(tmp_path))
    monkeypatch.setattr(tempfile, "tempdir", None)
    monkeypatch.setattr(native, "binary", lambda: "/bin/false")
    monkeypatch.setattr(native.subprocess, "Popen", _Engine)
    _Engine.seen = []
    assert native.run_local(_job(protocol), 1) == {"status": "ok"}
    (seen,) = _Engine.seen
    assert seen["handed"] == secrets  # the engine gets every secret, by the names it reads them by
    assert set(seen["files"]) == {"job-0.json"}  # the job file only: no secrets file
    job = json.loads(seen["files"]["job-0.json"])
    assert not {"access_key", "secret_key", "username", "password"} & set(job[protocol]), job
    held = [name for name, data in seen["files"].items() if CANARY.encode() in data]
    held += [name for name, value in seen["env"].items() if CANARY in value]
    assert held == [] and not [a for a in seen["argv"] if CANARY in a]
    assert list(tmp_path.iterdir()) == []  # the private directory is gone too


def test_the_pipe_holds_the_secrets_until_read_and_no_longer(tmp_path):
    read_end, path = native_secrets.secrets_pipe({"STORBENCH_S3_SECRET_KEY": CANARY})
    try:
        assert path == f"/proc/self/fd/{read_end}"
        assert json.loads(Path(path).read_bytes()) == {"STORBENCH_S3_SECRET_KEY": CANARY}  # read to its end
        assert Path(path).read_bytes() == b""  # once: nothing is left for anyone else
    finally:
        os.close(read_end)


@pytest.mark.real
def test_the_real_engine_reads_its_keys_from_the_pipe(tmp_path, monkeypatch):
    """The engine opens /proc/self/fd/N of the pipe it inherited: with the keys it gets past its credential
    check (to the unreachable endpoint); without, it stops there."""
    from storbench.errors import WorkloadError

    monkeypatch.setenv("TMPDIR", str(tmp_path))
    monkeypatch.setattr(tempfile, "tempdir", None)
    for name in ("STORBENCH_S3_ACCESS_KEY", "STORBENCH_S3_SECRET_KEY", native_secrets.SECRETS_FILE_ENV):
        monkeypatch.delenv(name, raising=False)
    keyless = _job("s3")
    keyless["s3"] = {k: v for k, v in keyless["s3"].items() if k not in native_secrets.CREDENTIAL_ENV}
    with pytest.raises(WorkloadError, match="no S3 credentials"):
        native.run_local(keyless, 1, timeout=60)
    with pytest.raises(WorkloadError) as err:
        native.run_local(_job("s3"), 1, timeout=60)
    assert "no S3 credentials" not in str(err.value) and CANARY not in str(err.value), str(err.value)
    assert list(tmp_path.iterdir()) == []


@pytest.mark.real
def test_a_spark_fanout_task_hands_the_keys_over_by_pipe_too(tmp_path, monkeypatch):
    """The barrier task's own copy of the hand-over (it runs on executors, without storbench), with a stand-in
    for pyspark's task context and the real engine: it gets past its credential check; nothing is left."""
    import sys
    import types

    class Context:
        def partitionId(self):
            return 0

        def getTaskInfos(self):
            return [types.SimpleNamespace(address="127.0.0.1:1")]

        def allGather(self, value):
            return [value]

    class Files:
        @staticmethod
        def get(name):
            raise RuntimeError("not shipped")

        @staticmethod
        def getRootDirectory():
            return str(tmp_path)

    pyspark = types.ModuleType("pyspark")
    pyspark.BarrierTaskContext = types.SimpleNamespace(get=Context)
    pyspark.SparkFiles = Files
    monkeypatch.setitem(sys.modules, "pyspark", pyspark)
    monkeypatch.setenv("TMPDIR", str(tmp_path))
    monkeypatch.setattr(tempfile, "tempdir", None)
    job, secrets = native_secrets.split_credentials(_job("s3"))
    task = native_fanout._barrier_task(job, secrets, native.binary(), "storbench-load-fanout-test38", 60)
    (answer,) = [json.loads(text) for text in task(iter([0]))]
    fatal = answer["result"]["fatal"]
    assert "no S3 credentials" not in fatal and fatal.startswith("S3 endpoint http://127.0.0.1:1"), fatal
    assert [p.name for p in tmp_path.iterdir()] == []

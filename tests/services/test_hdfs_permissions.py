"""`services up hdfs` checks permissions: the namespace belongs to the HDFS user storbench's clients act as, and a
client acting as any other user cannot write or delete there (Hadoop's own FsShell against the real cluster)."""

import json
import os
import subprocess

import pytest

from storbench.services import hdfs as hdfs_service
from storbench.services.jvm import java_command, launcher_classpath
from tests.cli.helpers import storbench


@pytest.fixture(scope="module")
def conf_dir(tmp_path_factory):
    """An empty core-site.xml for FsShell's classpath (it refuses to start without one)."""
    folder = tmp_path_factory.mktemp("hadoop-conf")
    (folder / "core-site.xml").write_text("<configuration/>\n")
    return folder


def _shell(state, user, *args, stdin=""):
    """``hadoop fs ARGS`` as HDFS user ``user`` (what HADOOP_USER_NAME says: simple authentication)."""
    env = {**os.environ, "HADOOP_USER_NAME": user}
    argv = [
        *java_command(),
        "-cp",
        f"{state['conf_dir']}:{launcher_classpath()}",
        "org.apache.hadoop.fs.FsShell",
        "-D",
        f"fs.defaultFS={state['uri']}",
        *args,
    ]
    return subprocess.run(argv, input=stdin, capture_output=True, text=True, env=env, timeout=120)


def test_only_storbench_user_writes_its_namespace(hdfs, conf_dir):
    state = {**hdfs[1], "conf_dir": conf_dir}
    user = state["client_user"]
    assert user == "storbench"
    assert hdfs_service.client_env(state) == {"HADOOP_USER_NAME": "storbench", "STORBENCH_HDFS_URI": state["uri"]}
    made = _shell(state, user, "-mkdir", "-p", "/perm-test/data")
    put = _shell(state, user, "-put", "-", "/perm-test/data/part-0", stdin="storbench's data\n")
    assert made.returncode == 0 and put.returncode == 0, made.stderr + put.stderr
    listing = _shell(state, user, "-ls", "-d", "/", "/perm-test/data/part-0").stdout
    assert "drwxr-xr-x   - storbench storbench" in listing, listing  # the root is storbench's
    assert any(
        line.startswith("-rw-r--r--") and " storbench storbench " in line and line.endswith("/part-0")
        for line in listing.splitlines()
    ), listing  # what it writes, others may only read

    # each refusal is a Hadoop client JVM: one write into storbench's directory, one removal of its file, one
    # directory at the root (removing, moving and writing are all WRITE on the parent, checked alike)
    for args in (
        ["-put", "-", "/perm-test/data/intruder"],
        ["-rm", "-skipTrash", "/perm-test/data/part-0"],
        ["-mkdir", "/elsewhere"],
    ):
        refused = _shell(state, "mallory", *args, stdin="x\n")
        assert refused.returncode != 0, args
        assert "Permission denied: user=mallory, access=WRITE" in refused.stderr, (args, refused.stderr[-600:])
    read = _shell(state, "mallory", "-cat", "/perm-test/data/part-0")
    assert read.returncode == 0 and read.stdout.splitlines()[-1] == "storbench's data"  # untouched, readable
    gone = _shell(state, user, "-rm", "-r", "-skipTrash", "/perm-test")
    assert gone.returncode == 0, gone.stderr


@pytest.mark.spark
def test_a_run_writes_as_storbench_user(hdfs, conf_dir, monkeypatch):
    """A run on the service acts as its client user (not the superuser the service runs as): what it keeps is
    storbench's, and another user cannot delete it."""
    home, state = hdfs
    state = {**state, "conf_dir": conf_dir}
    monkeypatch.delenv("HADOOP_USER_NAME", raising=False)  # the run itself chooses (this process runs as root)
    result = storbench(
        home,
        "run",
        "groupby",
        "--target",
        f"{state['uri']}/owned",
        "--scale",
        "20000",
        "--repeat",
        "1",
        "--keep-data",
        "--json",
    )
    assert result.returncode == 0 and json.loads(result.stdout)["status"] == "succeeded", result.stderr[-2000:]
    listing = _shell(state, "storbench", "-ls", "-R", "/owned").stdout
    entries = [line for line in listing.splitlines() if line[:1] in "d-" and " /owned/" in line]
    assert entries and all(line.split()[2] == "storbench" for line in entries), listing
    refused = _shell(state, "mallory", "-rm", "-r", "-skipTrash", "/owned")
    assert "Permission denied: user=mallory, access=WRITE" in refused.stderr, refused.stderr[-600:]
    assert _shell(state, "storbench", "-rm", "-r", "-skipTrash", "/owned").returncode == 0

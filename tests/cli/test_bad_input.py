"""Bad input: one clear line on stderr naming what and what is allowed, a non-zero exit, nothing stored."""

import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

from storbench import cli
from storbench.suites import builtin_suites
from tests.cli.helpers import SRC, storbench
from tests.loopdev import tmpfs

# The table runs the CLI in this process (cli.main, as `storbench` does): each refusal comes before anything
# starts, so the fast lane runs it, and its guard (tests/lanes.py) fails a row that starts a program. The tests
# below it that need a real process (a run, a closed pipe) are marked `real`.

GOLDEN_RUNS = Path(__file__).resolve().parents[1] / "data" / "golden" / "runs"  # two suites, two runs each
STORED_LABELS = "labels: cfg-a, cfg-b, pm7r-sas, sata-vendor-a"
as_root = pytest.mark.skipif(os.geteuid() == 0, reason="root writes into read-only directories")


@pytest.mark.parametrize(
    "args,code,message",
    [
        (["run", "nosuch"], 2, "unknown suite or workload 'nosuch'; built-in suites: " + ", ".join(builtin_suites())),
        # issue 17: a single workload runs by name; a near miss names the nearest suites and workloads
        (
            ["run", "terasrot"],
            2,
            "unknown suite or workload 'terasrot' (did you mean terasort or teragen or teravalidate?)",
        ),
        (["workloads", "grupby"], 2, "unknown workload 'grupby' (did you mean groupby?); allowed: broadcast-join,"),
        (
            ["run", "--scale", "medium"],
            2,
            "--scale 'medium': unknown scale for suite spark-transforms; allowed: tiny, small, paper",
        ),
        (["run", "--set", "format=orc"], 2, "--set: format='orc' is not allowed; allowed: csv, parquet"),
        (["run", "--set", "bogus=1"], 2, "--set: unknown parameter 'bogus' for suite spark-transforms; allowed:"),
        (["run", "--set", "rows"], 2, "--set 'rows': expected KEY=VALUE"),
        (["run", "--label", "a b"], 2, "--label 'a b': use letters, digits"),
        (["run", "--repeat", "0"], 2, "--repeat 0: must be at least 1"),
        (["run", "--target", "s3://bucket/x"], 2, "an s3:// target needs an endpoint: pass --endpoint"),
        (["run", "--target", "gs://bucket/x"], 2, "scheme gs:// is not supported; supported: file:///path"),
        (["run", "--scale", "paper", "--target", "{tmp}"], 2, "needs about 1760.00 GB for this run"),
        (["run", "--spark-conf", "novalue"], 2, "--spark-conf 'novalue': expected key=value"),
        (["run", "--devices", "nosuchdisk0"], 2, "nosuchdisk0"),
        (["run", "--interval", "0"], 2, "--interval 0.0: must be between 0.05 and 60 seconds"),
        (["compare", "nolabel"], 3, "no run or label named 'nolabel'"),
        (["compare", "a", "--format", "pdf"], 2, "invalid choice: 'pdf'"),
        (["frobnicate"], 2, "invalid choice: 'frobnicate'"),
        # issue 12, item 1: a /dev path is a block device or refused, never a directory made in /dev
        (
            ["run", "fio-basic", "--target", "/dev/sdz"],
            2,
            "--target '/dev/sdz': /dev/sdz is not a block device (it does not exist); a path under /dev must be one",
        ),
        # item 14: no tracebacks
        (
            ["compare", "sata-vendor-a", "--html", "{tmp}/nodir/r.html"],
            2,
            "--html {tmp}/nodir/r.html: cannot write it (No such file or directory)",
        ),
        (
            ["compare", "sata-vendor-a", "--output", "{tmp}/nodir/r.txt"],
            2,
            "--output {tmp}/nodir/r.txt: cannot write it (No such file or directory)",
        ),
        pytest.param(
            ["compare", "sata-vendor-a", "--html", "{tmp}/ro/r.html"],
            2,
            "cannot write it (Permission denied)",
            marks=as_root,
        ),
        (["--results", "{tmp}/afile", "run"], 2, "--results {tmp}/afile: {tmp}/afile is a file, not a directory"),
        (["--results", "{tmp}/afile", "runs"], 3, "--results {tmp}/afile: cannot open results.db (it is a file)"),
        pytest.param(["--results", "{tmp}/ro/home", "run"], 2, "{tmp}/ro is not writable by this user", marks=as_root),
        # item 15
        (
            ["run", "--spark-master", "bogus://x"],
            2,
            "--spark-master 'bogus://x': allowed: local, local[N], local[*], "
            "local[N,M], spark://HOST:PORT[,HOST:PORT], yarn, k8s://URL",
        ),
        (["run", "--label", "a" * 500], 2, "--label: 500 characters; at most 64 allowed"),
        (["run", "--target", "{tmp}/afile/sub"], 2, "{tmp}/afile exists and is not a directory (it is a file)"),
        (["runs", "--label", "nosuch"], 3, "no run with label 'nosuch' in {tmp}/home; " + STORED_LABELS),
        (
            ["run", "fio-basic", "--target", "s3://Bad_Bucket!/x"],
            2,
            "bucket name 'Bad_Bucket!' is not allowed; use 3-63 lowercase letters, digits, '.' and '-', starting and",
        ),
        # issue 25, case 1: YCSB's parameters are refused before Cassandra is reached (port 1: a connect fails)
        (
            ["run", "ycsb-a", "--target", "cassandra://127.0.0.1:1/ks", "--set", "fieldcount=11"],
            2,
            "ycsb-load: fieldcount=11 is above the 10 fields of the target's usertable (field0..field9)",
        ),
        (
            [
                "run",
                "ycsb-a",
                "--target",
                "cassandra://127.0.0.1:1/ks",
                "--set",
                "restore=none",
                "--set",
                "driver=ycsb",
                "--set",
                "drivers=2",
            ],
            2,
            "ycsb-load: driver=ycsb runs one YCSB client process here; drivers=2 fanout=local need driver=native",
        ),
        # case 2: an unknown URL scheme is not a directory named `mysql:` in the current directory
        (
            ["--results", "mysql://u:pw@db.example/x", "run"],
            2,
            "--results mysql://...: unknown scheme mysql://; allowed: a directory, postgresql://USER@HOST:PORT/DB",
        ),
        # case 3: a sweep gets --set's checks at each point, takes only the run's keys, one value per point, one key
        (
            ["run", "terasort", "--sweep", "checksum=false,true"],
            2,
            "--sweep point checksum=false: workload teragen: "
            "checksum=false needs format=tera on file:// (Spark's Parquet writer and HDFS always checksum)",
        ),
        (
            ["run", "fio-basic", "--sweep", "cores=1,2"],
            2,
            "--sweep: cannot sweep 'cores' (cores is the spark engine's, which this run does not use); allowed: a "
            "parameter: bs,",
        ),
        (
            ["run", "--sweep", "rows=1000,,2000"],
            2,
            "--sweep 'rows=1000,,2000': value 2 is empty; give every point a value",
        ),
        (
            ["run", "--sweep", "rows=1000,1000"],
            2,
            "--sweep: sweep rows: point 2 (1000) repeats point 1 (1000); each point needs its own value",
        ),
        (
            ["run", "--sweep", "rows=1000,2000", "--sweep", "rows=3000"],
            2,
            "--sweep rows: given twice (rows=1000,2000 and rows=3000); give one --sweep rows=V1,V2,... with every value",
        ),
        (
            ["run", "--sweep", "rows=1000,2000", "--sweep", "partitions=2,4"],
            2,
            "--sweep: sweep one key at a time (change one variable, as the papers do); got rows, partitions",
        ),
        # case 4: a node's device that is not there is refused, not reported n/a everywhere
        (
            ["run", "null", "--node", "w1=local,devices=nosuchdisk"],
            2,
            "--node: nodes[0].devices: node w1 has no device 'nosuchdisk' (this machine lists: ",
        ),
        # case 12: the scheme a workload cannot take is named before the target is reached (no "is Cassandra running?")
        (
            ["run", "fio-basic", "--target", "cassandra://127.0.0.1:1/ks"],
            2,
            "workload fio-write cannot use the cassandra:// target cassandra://127.0.0.1:1/ks; only the ycsb workloads can",
        ),
        # case 6: a master that does not answer is one line at once, not a minute of retries and Java frames
        (
            ["run", "groupby", "--spark-master", "spark://127.0.0.1:1"],
            2,
            "--spark-master spark://127.0.0.1:1: no Spark "
            "master answers at 127.0.0.1:1 (Connection refused); start one (storbench services up spark) or use local[*]",
        ),
        # case 10: a share above 100 %, an option with nothing to apply to, every scheme that takes --replication
        (
            [
                "run",
                "objects-basic",
                "--target",
                "s3://b/x",
                "--endpoint",
                "http://127.0.0.1:1",
                "--set",
                "max_error_pct=200",
            ],
            2,
            "--set: max_error_pct=200.0 is above the maximum 100",
        ),
        (
            ["run", "null", "--power-insecure"],
            2,
            "--power-insecure: applies to a Redfish power source (--power "
            "redfish:URL, or a node's power: redfish:URL in a nodes file); no --power was given",
        ),
        (
            ["run", "null", "--power-insecure", "--power", "command:echo 5"],
            2,
            "--power-insecure: applies to a Redfish "
            "power source (--power redfish:URL, or a node's power: redfish:URL in a nodes file); --power is command:echo 5",
        ),
        (["run", "null", "--replication", "0", "--target", "{tmp}"], 2, "--replication 0: must be at least 1"),
        (
            ["run", "null", "--replication", "2", "--target", "{tmp}"],
            2,
            "--replication 2: applies to cassandra:// and hdfs:// targets only; the target is file://{tmp}",
        ),
        # item 16
        (
            ["compare", "sata-vendor-a", "cfg-a"],
            2,
            "compare: sata-vendor-a is a spark-transforms run and cfg-a a mixed "
            "run: runs of different suites are not comparable; pass --force",
        ),
    ],
)
def test_bad_input_exits_with_one_line(tmp_path, monkeypatch, capsys, args, code, message):
    home = tmp_path / "home"
    shutil.copytree(GOLDEN_RUNS, home / "runs")  # stored runs for compare and runs; a refused run adds none
    (tmp_path / "afile").write_text("x")
    (tmp_path / "ro").mkdir(mode=0o555)
    (tmp_path / "cwd").mkdir()
    monkeypatch.chdir(tmp_path / "cwd")  # nothing may appear here either (`--results mysql://` made `mysql:`)
    args = [a.replace("{tmp}", str(tmp_path)) for a in args]
    missing = [Path(a) for a in args if a.startswith("/") and not Path(a).exists()]
    if "--results" not in args:
        args = ["--results", str(home), *args]
    returncode = cli.main(args)
    stderr = capsys.readouterr().err
    assert returncode == code, stderr
    lines = stderr.strip().splitlines()
    assert len(lines) == 1, stderr
    assert lines[0].startswith("storbench: error: ")
    assert message.replace("{tmp}", str(tmp_path)) in lines[0]
    assert sorted(os.listdir(home / "runs")) == sorted(os.listdir(GOLDEN_RUNS))
    assert [path for path in missing if path.exists()] == []  # no target, file or results home created
    assert os.listdir(tmp_path / "cwd") == []


@pytest.mark.real
def test_a_worker_dir_no_one_can_write_is_one_line_and_leaves_no_service_dir(tmp_path):
    """Issue 25 case 5: a read-only mount (root cannot write it either) is refused before the service directory
    is made: no traceback, nothing under the results home."""
    (tmp_path / "ro").mkdir()
    with tmpfs(tmp_path / "ro", 1, read_only=True) as read_only:
        result = storbench(tmp_path / "home", "services", "up", "spark", "--worker-dir", str(read_only), timeout=120)
    assert result.returncode == 2, result.stderr
    assert result.stderr.strip().splitlines() == [
        f"storbench: error: --worker-dir {read_only}: cannot write there (Read-only file system); give a directory "
        "this user can write"
    ]
    assert not (tmp_path / "home").exists()


@pytest.mark.spark
def test_a_disk_that_fills_during_spark_datagen_is_one_line_without_java_frames(tmp_path):
    """Issue 25 case 7: another writer fills the target's file system once the run has claimed it (the precheck
    saw room): the failure is one line naming the full disk, without the log's Java frames, and the run root
    is gone."""
    (tmp_path / "t").mkdir()
    with tmpfs(tmp_path / "t", 200) as target:
        env = {**os.environ, "PYTHONPATH": SRC, "SPARK_LOCAL_IP": "127.0.0.1"}
        child = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "storbench",
                "--results",
                str(tmp_path / "home"),
                "run",
                "datagen",
                "-q",
                "--target",
                str(target),
            ],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env=env,
        )
        try:
            while not list(target.glob("storbench-*")):  # claimed: the capacity check is behind it
                assert child.poll() is None, child.communicate()
                time.sleep(0.05)
            room = os.statvfs(target)
            (target / "filler").write_bytes(b"\0" * (room.f_bavail * room.f_frsize - (8 << 20)))
            _, stderr = child.communicate(timeout=600)
        finally:
            if child.poll() is None:
                child.kill()
                child.wait()
        left = os.listdir(target)
    assert child.returncode == 4, stderr
    warnings = [line for line in stderr.splitlines() if "tmpfs" not in line]  # no block device: said, and fine
    assert warnings == [
        "warning: datagen: workload datagen failed: java.io.IOException: No space left on device "
        "(a file system Spark writes to is full: the target, or Spark's local directories)"
    ], stderr
    assert left == ["filler"]


@pytest.mark.real
def test_target_that_is_a_file_is_refused(tmp_path):
    afile = tmp_path / "afile"
    afile.write_text("x")
    result = storbench(tmp_path / "home", "run", "--target", f"file://{afile}", timeout=120)
    assert result.returncode == 2
    assert "exists and is not a directory" in result.stderr
    assert afile.read_text() == "x"


@pytest.mark.real
def test_bad_suite_file_names_file_and_key(tmp_path):
    suite = tmp_path / "mine.yaml"
    suite.write_text("name: mine\nworkloads: [groupby]\nrepetition: 3\n")
    result = storbench(tmp_path / "home", "run", str(suite), timeout=120)
    assert result.returncode == 2
    assert f"{suite}: unknown key 'repetition'; allowed: name, description" in result.stderr


@pytest.mark.real
def test_listing_commands_work_without_spark(tmp_path):
    workloads = storbench(tmp_path / "home", "workloads")
    assert workloads.returncode == 0
    for name in ("datagen", "groupby", "repartition", "join", "broadcast-join"):
        assert f"\n{name} (v" in "\n" + workloads.stdout
    assert "format = 'csv' [csv|parquet]" in workloads.stdout
    runs = storbench(tmp_path / "home", "runs")
    assert runs.returncode == 0 and "no runs stored" in runs.stdout
    suites = storbench(tmp_path / "home", "suites")
    assert "spark-transforms (paper 000): datagen → groupby → repartition → join" in suites.stdout


@pytest.mark.real
def test_nested_target_directories_made_for_the_run_are_removed(tmp_path):
    """Issue 12 item 8: a/b are created for the run and removed after it; the existing parent stays."""
    target = tmp_path / "kept" / "a" / "b"
    (tmp_path / "kept").mkdir()
    result = storbench(
        tmp_path / "home",
        "run",
        "fio-basic",
        "-q",
        "--target",
        str(target),
        "--set",
        "runtime_s=1",
        "--set",
        "size=8m",
        timeout=300,
    )
    assert result.returncode == 0, result.stderr
    assert "succeeded" in result.stdout
    assert (tmp_path / "kept").is_dir() and os.listdir(tmp_path / "kept") == []


@pytest.mark.real
def test_compare_of_different_suites_with_force_shows_the_comparison(tmp_path):
    """Issue 12 item 16: refused in one line (the table above) unless --force, which gives today's output."""
    home = tmp_path / "home"
    shutil.copytree(GOLDEN_RUNS, home / "runs")
    result = storbench(home, "compare", "sata-vendor-a", "cfg-a", "--force", timeout=120)
    assert result.returncode == 0, result.stderr
    assert "NOT COMPARABLE: the runs differ in suite" in result.stdout
    assert "cfg-a vs sata-vendor-a" in result.stdout


@pytest.mark.real
def test_closed_pipe_exits_quietly(tmp_path):
    """Issue 12 item 14: `storbench workloads | head -1` ends without a BrokenPipeError traceback."""
    env = {**os.environ, "PYTHONPATH": SRC}
    child = subprocess.Popen(
        [sys.executable, "-m", "storbench", "--results", str(tmp_path), "workloads"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=env,
    )
    child.stdout.close()  # the reader is gone before the first line is written
    _, stderr = child.communicate(timeout=120)
    assert stderr == b""
    assert child.returncode == 141

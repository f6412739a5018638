"""Issue 25: no secret in any process's command line (/proc/PID/cmdline, which every local user reads) or
environment (/proc/PID/environ) while a run is in flight. tests/proc_watch.py polls every descendant of
this test process (the CLI it runs, the services the fixtures started, Spark's executors, the engine's and
YCSB's processes) during each kind of run: Spark on s3:// (local[*] and a standalone cluster), the objects
workload (native engine, local and Spark fan-out), YCSB with both drivers (also with the CQL password exported
in storbench's own environment), Redfish power, a PostgreSQL results index. The metastore's start is watched in
tests/services/test_metastore.py, beside its module's own metastore. Each test also checks that the processes it meant to watch were seen, and that the secret
was really used (the run succeeded against a server that needs it).

The CLI's own command line and environment hold what the test (the user) put there: they are exempt
where the test put a secret there itself, never its children."""

from __future__ import annotations

import json
import os
import secrets
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from storbench import api
from storbench.results.store import ResultStore
from storbench.services import spark as spark_service
from storbench.services import spark_auth
from tests.cli.helpers import QUICK_JVM, SRC
from tests.fake_bmc import FakeBmc, basic
from tests.proc_watch import ProcWatch

pytestmark = pytest.mark.real

CANARY = f"CANARY25{secrets.token_hex(6)}"
FIO_TINY = ("--set", "size=8m", "--set", "runtime_s=2", "--set", "ramp_time_s=0", "--set", "numjobs=1")
needs_fio = pytest.mark.skipif(shutil.which("fio") is None, reason="fio is not installed")


def watched_cli(
    home: Path,
    watch_secrets: dict[str, str],
    *args: str,
    env_extra: dict[str, str] | None = None,
    user_gave: tuple[str, ...] = (),
    results: str | None = None,
    extra_secrets: dict[str, str] | None = None,
    timeout: float = 900,
) -> tuple[subprocess.CompletedProcess, ProcWatch]:
    """The real CLI in a child process, watched from its start to its end. ``user_gave``: which of the CLI's
    own "cmdline"/"environ" hold a secret the test put there (exempt for that process alone)."""
    env = {
        **os.environ,
        "PYTHONPATH": SRC,
        "SPARK_LOCAL_IP": "127.0.0.1",
        "SPARK_SUBMIT_OPTS": os.environ.get("SPARK_SUBMIT_OPTS", QUICK_JVM),
        **(env_extra or {}),
    }
    argv = [sys.executable, "-m", "storbench", "--results", results or str(home), *args]
    watch = ProcWatch({**watch_secrets, **(extra_secrets or {})})  # extra: secrets the user never gave the CLI
    proc = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
    if "cmdline" in user_gave:
        watch.exempt_cmdline.add(proc.pid)
    if "environ" in user_gave:
        watch.exempt_environ.add(proc.pid)
    with watch:  # from before the CLI starts anything: Python's start-up takes far longer than one poll
        try:
            out, err = proc.communicate(timeout=timeout)
        except BaseException:
            proc.kill()
            proc.wait()
            raise
    return subprocess.CompletedProcess(argv, proc.returncode, out, err), watch


def _samples(done: subprocess.CompletedProcess) -> list[dict]:
    outcome = json.loads(done.stdout)
    return [json.loads(line) for line in (Path(outcome["path"]) / "samples.jsonl").read_text().splitlines()]


def _value(samples: list[dict], workload: str, metric: str) -> float:
    (value,) = [s["value"] for s in samples if s["workload"] == workload and s["metric"] == metric and not s["labels"]]
    return value


def _s3_secrets(state: dict) -> dict[str, str]:
    return {"S3 access key": state["access_key"], "S3 secret key": state["secret_key"]}


# -- Spark on s3:// ------------------------------------------------------------------------------------------


def _teragen_on_s3(s3, prefix: str, *args: str, **watch_options) -> tuple:
    """A small teragen on the S3 fixture through the watched CLI, with a secret given by --spark-conf too."""
    home, state = s3
    return watched_cli(
        home,
        {**_s3_secrets(state), "--spark-conf secret": CANARY},
        "run",
        "teragen",
        "--target",
        f"s3://storbench/{prefix}",
        "--scale",
        "20K",
        "--repeat",
        "1",
        "--set",
        "partition_mb=1",
        "--json",
        *args,
        "--spark-conf",
        f"spark.storbench.canary.password={CANARY}",
        user_gave=("cmdline",),
        **watch_options,
    )


@pytest.mark.s3
@pytest.mark.spark
def test_spark_on_s3_keeps_the_s3a_keys_and_spark_conf_secrets_out_of_every_process(s3, tmp_path):  # noqa: F811
    done, watch = _teragen_on_s3(s3, "canary-local")
    assert done.returncode == 0, done.stderr[-3000:]
    assert watch.found == [], watch.report()
    assert watch.saw("org.apache.spark.deploy.SparkSubmit")  # the driver's JVM was watched while it ran
    assert _value(_samples(done), "teragen", "s3a_write_mb") > 0  # S3A wrote with the keys it was given


def _spark_secret(state: dict) -> str:
    """The cluster's generated secret, from its private properties file."""
    lines = Path(state["auth_file"]).read_text().splitlines()
    return dict(line.split("=", 1) for line in lines if "=" in line)[spark_auth.SECRET_KEY]


@pytest.fixture(scope="module")
def spark_cluster(tmp_path_factory):
    """A standalone master and one worker (services up spark), for this module."""
    store = ResultStore(tmp_path_factory.mktemp("spark-home"))
    state = api.service_up("spark", store, workers=1, cores=1, memory="1g")
    try:
        yield state
    finally:
        api.service_down("spark", store)


def test_the_watch_names_a_child_by_its_own_command_once_it_has_exec_d():
    """A child first polled between fork and exec shows its parent's argv (a Spark worker starting an executor
    under load); the watch keeps each process's latest command line, so it is seen by its own."""
    go_r, go_w = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child: wait for the go, then exec
        os.close(go_w)
        os.read(go_r, 1)
        os.execvp("sleep", ["sleep", "30"])
    os.close(go_r)
    try:
        watch = ProcWatch({"canary": CANARY})
        watch.poll()
        assert "pytest" in watch.seen[pid] or "python" in watch.seen[pid]  # still the parent's argv
        os.write(go_w, b"x")
        for _ in range(200):
            watch.poll()
            if watch.saw("sleep 30"):
                break
            os.sched_yield()
        assert watch.saw("sleep 30") and watch.seen[pid] == "sleep 30"
    finally:
        os.close(go_w)
        os.kill(pid, 9)
        os.waitpid(pid, 0)


def test_a_kept_watch_finds_a_secret_it_learns_only_afterwards():
    """keep=True (a service's generated password, known once its start returned): what a child held while it
    lived is checked after it is gone."""
    with ProcWatch({}, keep=True) as watch:
        subprocess.run(["sleep", "0.5"], env={**os.environ, "SOME_PASSWORD": CANARY}, check=True)
    found = watch.check({"canary": CANARY})
    assert [(f.secret, f.where, f.command) for f in found] == [("canary", "environ", "sleep 0.5")]


@pytest.mark.s3
@pytest.mark.spark
def test_spark_on_a_standalone_cluster_keeps_the_keys_out_of_the_executors(s3, spark_cluster):  # noqa: F811
    done, watch = _teragen_on_s3(
        s3,
        "canary-cluster",
        "--spark-master",
        spark_cluster["uri"],
        env_extra=spark_service.client_env(spark_cluster),
        extra_secrets={"spark auth secret": _spark_secret(spark_cluster)},
    )
    assert done.returncode == 0, done.stderr[-3000:]
    # Spark's worker hands the cluster's secret to the executor it starts in its environment (_SPARK_AUTH_SECRET;
    # /proc/PID/environ is readable by its own user and root only), and the executor's children inherit it.
    # Anywhere else (any command line, the driver, the CLI) fails.
    elsewhere = [f for f in watch.found if not (f.secret == "spark auth secret" and f.where == "environ")]
    assert elsewhere == [], watch.report()
    assert not [f for f in watch.found if "SparkSubmit" in f.command or "storbench" in f.command.split()[:3]]
    assert watch.saw("org.apache.spark.executor.CoarseGrainedExecutorBackend")  # an executor JVM was watched
    samples = _samples(done)
    assert _value(samples, "teragen", "s3a_jvms") == 2  # the driver's and the executor's S3A, both with keys
    assert _value(samples, "teragen", "s3a_write_mb") > 0


# -- objects: the native engine on s3:// ---------------------------------------------------------------------

OBJECTS_SUITE = """name: objects-put-canary
description: PUTs for two seconds per driver
repetitions: 1
params: {size: 4k, objects: 40, ops: 0, duration_s: 2, concurrency: 2}
workloads: [objects-put]
"""


@pytest.mark.s3
@pytest.mark.parametrize("fanout", ["local", pytest.param("spark", marks=pytest.mark.spark)])
def test_the_native_engine_gets_its_keys_in_no_argv_or_environment(s3, tmp_path, fanout):  # noqa: F811
    home, state = s3
    suite = tmp_path / "put.yaml"
    suite.write_text(OBJECTS_SUITE)
    done, watch = watched_cli(
        home,
        _s3_secrets(state),
        "run",
        str(suite),
        "--target",
        f"s3://storbench/canary-{fanout}",
        "--set",
        "drivers=2",
        "--set",
        f"fanout={fanout}",
        "--json",
    )
    assert done.returncode == 0, done.stderr[-3000:]
    assert watch.found == [], watch.report()
    assert sum("storbench-load" in command and " run --job " in command for command in watch.seen.values()) >= 2
    assert _value(_samples(done), "objects-put", "obj_ops") > 0  # the engines signed their PUTs with the keys


# -- YCSB on Cassandra, both drivers -------------------------------------------------------------------------


def _ycsb_run(home: Path, uri: str, overrides: dict) -> object:
    from storbench.progress import Progress
    from storbench.run import RunOptions, run

    options = RunOptions(
        suite="ycsb-load", label="canary", target=uri, repeat=1, overrides={"recordcount": 3000, **overrides}
    )
    return run(options, ResultStore(home), Progress(quiet=True))


def _cassandra_secrets(state: dict) -> dict[str, str]:
    """The service's generated CQL and JMX passwords (``services up cassandra`` keeps them in its state)."""
    found = {f"cassandra {k}": str(v) for k, v in state["auth"].items() if "password" in k}
    assert len(found) == 2  # both: the CQL role's and JMX's
    return found


@pytest.mark.cassandra
def test_ycsb_core_gets_secret_properties_in_no_argv(cassandra1, tmp_path, monkeypatch):
    """driver=ycsb: a secret-named YCSB property (the canary, added to what the workload builds: the place a
    Cassandra password goes) reaches YCSB's client in a private -P file, never as -p on its command line."""
    from storbench.workloads.ycsb import core_driver

    home, state = cassandra1
    properties = core_driver.properties
    monkeypatch.setattr(
        core_driver, "properties", lambda *a, **k: {**properties(*a, **k), "cassandra.canary.password": CANARY}
    )
    with ProcWatch({"YCSB property": CANARY, **_cassandra_secrets(state)}) as watch:
        outcome = _ycsb_run(home, state["uri"], {"driver": "ycsb"})
    assert outcome.status == "succeeded", outcome.errors
    assert watch.found == [], watch.report()
    assert watch.saw("storbench.ycsb.YcsbRun") and watch.saw(" -P /")  # YCSB's JVM, given a properties file


@pytest.mark.cassandra
def test_ycsb_on_the_native_engine_keeps_secrets_out_of_every_process(cassandra1, tmp_path):
    home, state = cassandra1
    with ProcWatch({"canary": CANARY, **_cassandra_secrets(state)}) as watch:
        outcome = _ycsb_run(home, state["uri"], {})
    assert outcome.status == "succeeded", outcome.errors
    assert watch.found == [], watch.report()
    assert watch.saw("storbench-load")


@pytest.mark.cassandra
@pytest.mark.parametrize(
    "driver, args",
    [
        ("native", ("ycsb-003", "--set", "restore=none", "--set", "duration_s=1")),
        # YCSB's JVM: its load phase, which logs in as its timed phases do (a 1 s phase is too short for its
        # session to open on a loaded machine, and 5 workloads of 5 s each would add a minute)
        ("ycsb", ("ycsb-load", "--set", "recordcount=3000")),
    ],
)
def test_an_exported_cql_password_reaches_no_child_process(cassandra1, tmp_path, driver, args):
    """Issue 38 item 4: STORBENCH_CQL_PASSWORD exported in storbench's own environment (the only login this run
    has: its results home is not the service's) is read once and taken out of it: no child (the engine, YCSB's
    JVM) inherits it or gets it on a command line."""
    _, state = cassandra1
    done, watch = watched_cli(
        tmp_path / "home",
        _cassandra_secrets(state),
        "run",
        *args,
        "--target",
        state["uri"],
        "--repeat",
        "1",
        "--set",
        f"driver={driver}",
        "--json",
        env_extra={"STORBENCH_CQL_USERNAME": "storbench", "STORBENCH_CQL_PASSWORD": state["auth"]["password"]},
        user_gave=("environ",),
    )
    assert done.returncode == 0, done.stderr[-3000:]
    assert watch.found == [], watch.report()
    assert watch.saw("storbench.ycsb.YcsbRun" if driver == "ycsb" else "storbench-load")
    assert json.loads(done.stdout)["status"] == "succeeded"  # logged in with the exported password


def test_a_properties_file_reads_back_exactly_in_java(tmp_path):
    """What core_driver writes for -P is what java.util.Properties loads (escapes, spaces, non-ASCII)."""
    from storbench.workloads.ycsb.core_driver import java_properties
    from storbench.services.jvm import java_binary

    props = {"cassandra.password": " pa=ss:wo#rd\\ é€😀\tend ", "key with space=": "!x", "empty": ""}
    (tmp_path / "p.properties").write_text(java_properties(props), encoding="latin-1")
    (tmp_path / "Dump.java").write_text(
        "import java.io.*; import java.util.*;\n"
        "public class Dump { public static void main(String[] a) throws Exception {\n"
        "  Properties p = new Properties(); p.load(new FileInputStream(a[0]));\n"
        "  for (String k : new TreeSet<>(p.stringPropertyNames())) {\n"
        '    System.out.print(k + "\\u0000" + p.getProperty(k) + "\\u0000"); } } }\n'
    )
    done = subprocess.run(
        [java_binary(), str(tmp_path / "Dump.java"), str(tmp_path / "p.properties")],
        capture_output=True,
        text=True,
        encoding="utf-8",
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    fields = done.stdout.split("\0")[:-1]
    assert dict(zip(fields[::2], fields[1::2])) == props


# -- Redfish power -------------------------------------------------------------------------------------------


@needs_fio
def test_a_redfish_password_reaches_no_child_process(tmp_path):
    """The password the user exported reaches only the Authorization header: fio (and any other child) does
    not inherit it."""
    with FakeBmc(auth=basic("admin", CANARY)) as bmc:
        done, watch = watched_cli(
            tmp_path / "home",
            {"BMC password": CANARY},
            "run",
            "fio-write",
            "--target",
            str(tmp_path),
            *FIO_TINY,
            "--json",
            "--interval",
            "0.5",
            "--power",
            f"redfish:{bmc.url},user=admin",
            "--power-insecure",
            env_extra={"STORBENCH_BMC_PASSWORD": CANARY},
            user_gave=("environ",),
        )
    assert done.returncode == 0, done.stderr[-3000:]
    assert watch.found == [], watch.report()
    assert watch.saw("fio")
    assert bmc.seen and {header for _, header in bmc.seen} == {basic("admin", CANARY)}  # read with the password
    assert json.loads(done.stdout)["status"] == "succeeded"


# -- PostgreSQL results index --------------------------------------------------------------------------------


@needs_fio
@pytest.mark.postgres
@pytest.mark.parametrize("how", ["pgpassfile", "url", "pgpassword"])
def test_a_postgresql_password_reaches_no_child_process(postgres, tmp_path, how):
    """PGPASSFILE: nowhere at all. In the URL (storbench's own command line, warned about) or in PGPASSWORD
    (storbench's own environment): in no child."""
    database = postgres.new_database()
    url = postgres.url(database, password=how == "url")
    env = {"STORBENCH_HOME": str(tmp_path / "home")}
    if how == "pgpassfile":
        passfile = tmp_path / "private" / "pgpass"
        passfile.parent.mkdir(mode=0o700)
        passfile.write_text(f"127.0.0.1:{postgres.port}:{database}:bench:{postgres.password}\n")
        passfile.chmod(0o600)
        env["PGPASSFILE"] = str(passfile)
    if how == "pgpassword":
        env["PGPASSWORD"] = postgres.password
    done, watch = watched_cli(
        tmp_path / "home",
        {"PostgreSQL password": postgres.password},
        "run",
        "fio-write",
        "--target",
        str(tmp_path),
        *FIO_TINY,
        "--json",
        env_extra=env,
        user_gave={"pgpassfile": (), "url": ("cmdline",), "pgpassword": ("environ",)}[how],
        results=url,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    assert watch.found == [], watch.report()
    assert watch.saw("fio")
    assert postgres.sql("SELECT count(*) FROM runs", database) == [(1,)]  # the index was written
    warned = [line for line in done.stderr.splitlines() if "holds a password" in line]
    assert warned == (
        [
            f"storbench: warning: --results postgresql://***@127.0.0.1:{postgres.port}/{database}: the URL "
            f"holds a password (a command line is readable by every local user); put it in a 0600 file "
            f"named by PGPASSFILE (or ~/.pgpass) instead"
        ]
        if how == "url"
        else []
    )
    assert postgres.password not in done.stdout + done.stderr

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

import os
import subprocess
from pathlib import Path

import pytest

from storbench import api
from storbench.results.store import ResultStore
from storbench.services import spark as spark_service
from storbench.services import spark_auth
from tests.proc_watch import ProcWatch
from tests.secrets_cli import CANARY, samples_of, value_of, watched_cli

pytestmark = pytest.mark.real


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
    assert value_of(samples_of(done), "teragen", "s3a_write_mb") > 0  # S3A wrote with the keys it was given


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
    samples = samples_of(done)
    assert value_of(samples, "teragen", "s3a_jvms") == 2  # the driver's and the executor's S3A, both with keys
    assert value_of(samples, "teragen", "s3a_write_mb") > 0


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
    assert value_of(samples_of(done), "objects-put", "obj_ops") > 0  # the engines signed their PUTs with the keys

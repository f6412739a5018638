"""Issue 25, the clients that are not Spark's (see tests/test_secrets_proc.py for the whole story): YCSB on
Cassandra with both drivers (also with the CQL password exported in storbench's own environment), a properties
file read back in Java, a Redfish password, a PostgreSQL results index: no secret in any child process's command
line or environment while the run is in flight, and the secret really used."""

import json
import subprocess
from pathlib import Path

import pytest

from storbench.results.store import ResultStore
from tests.fake_bmc import FakeBmc, basic
from tests.proc_watch import ProcWatch
from tests.secrets_cli import CANARY, FIO_TINY, needs_fio, watched_cli

pytestmark = pytest.mark.real


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

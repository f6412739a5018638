"""Issue 27 item 3: a shared Hive metastore (`services up metastore`) and TPC-DS with --set catalog=hive.

One metastore (and its PostgreSQL) for the module; three small runs (SF 0.01, flat layout, q3/q42): run A
registers its tables and keeps them (--keep-data: its database is the neighbour), run B registers its own
and drops them, run C reads A's tables (catalog_database). Which databases exist is read from the
metastore's own PostgreSQL."""

import stat
from pathlib import Path

import pytest

from storbench.engines import spark_catalog
from storbench.errors import InputError
from storbench.services import metastore
from storbench.workloads.base import get_workload
from tests.proc_watch import ProcWatch
from tests.workloads.helpers import run_json

GEN = ["--set", "sf=0.01", "--set", "catalog=hive", "--spark-master", "local[2]", "--repeat", "1"]


@pytest.fixture(scope="module")
def service(tmp_path_factory):
    home = tmp_path_factory.mktemp("metastore-home")
    # every process the start runs (PostgreSQL's tools, psql, schematool, the metastore), watched for the
    # passwords it generates (tests/proc_watch.py; test_the_start_puts_its_passwords_in_no_process)
    with ProcWatch({}, keep=True) as watch:
        state = metastore.up(home / "services" / "metastore")
    WATCHED["start"] = watch
    yield home, state
    assert metastore.down(home / "services" / "metastore")
    assert not metastore.status(home / "services" / "metastore")


WATCHED: dict[str, ProcWatch] = {}


def _databases(state) -> set[str]:
    import psycopg

    port = next(p["port"] for p in state["processes"] if p["kind"] == "postgres")
    with psycopg.connect(
        host="127.0.0.1", port=port, user="storbench", dbname="metastore", password=state["auth"]["postgres_password"]
    ) as conn:
        return {row[0] for row in conn.execute('SELECT "NAME" FROM "DBS"')}


def _run(home, tmp, name, suite, *args):
    path = tmp / f"{name}.yaml"
    path.write_text(f"name: {name}\nworkloads: [{', '.join(suite)}]\n")
    result, outcome, samples = run_json(home, str(path), "--label", name, *args, timeout=900)
    assert result.returncode == 0, result.stderr[-3000:]
    return outcome, samples


def _per_query(samples, metric):
    return {s["labels"]["query"]: s["value"] for s in samples if s["workload"] == "tpcds" and s["metric"] == metric}


@pytest.mark.real
def test_up_is_authenticated_loopback_and_secrets_stay_private(service):
    home, state = service
    assert state["uri"].startswith("thrift://127.0.0.1:") and metastore.answers(state["uri"])
    workdir = Path(state["workdir"])
    for private in ("state.json", "credentials.jceks", "conf/metastore-site.xml"):
        assert stat.S_IMODE((workdir / private).stat().st_mode) == 0o600, private
    for entry in state["processes"]:  # no secret on a command line
        line = Path(f"/proc/{entry['pid']}/cmdline").read_bytes().decode()
        assert state["auth"]["password"] not in line and state["auth"]["postgres_password"] not in line
    assert "password" not in " ".join(metastore.client_env(state).values()).lower()
    assert "metastore" in _databases(state) or "default" in _databases(state)


@pytest.mark.real
def test_the_start_puts_its_passwords_in_no_process(service):
    """Issue 38 item 4: neither the thrift password nor PostgreSQL's was in any command line or environment
    while `services up metastore` ran (psql gets the latter in a passfile, not PGPASSWORD)."""
    _, state = service
    watch = WATCHED["start"]
    found = watch.check(
        {"metastore password": state["auth"]["password"], "PostgreSQL password": state["auth"]["postgres_password"]}
    )
    assert found == [], "\n".join(map(str, found))
    assert watch.saw("postgres") and watch.saw("MetastoreSchemaTool") and watch.saw("-Dstorbench.metastore=")


@pytest.fixture(scope="module")
def runs(service, tmp_path_factory):
    home, state = service
    tmp = tmp_path_factory.mktemp("metastore-runs")
    target = tmp / "target"
    target.mkdir()
    a, a_samples = _run(
        home,
        tmp,
        "a",
        ["tpcds-gen", "tpcds"],
        "--target",
        f"file://{target}",
        *GEN,
        "--set",
        "layout=flat",
        "--set",
        "queries=q3,q42",
        "--keep-data",
    )
    data = f"file://{target}/storbench-{a['run_id']}/tpcds"
    after_a = _databases(state)
    b, b_samples = _run(
        home, tmp, "b", ["tpcds"], "--target", f"file://{target}", *GEN, "--set", f"data={data}", "--set", "queries=q3"
    )
    after_b = _databases(state)
    own_a = "storbench_" + a["run_id"].replace("-", "_")
    c, c_samples = _run(
        home,
        tmp,
        "c",
        ["tpcds"],
        "--target",
        f"file://{target}",
        *GEN,
        "--set",
        f"data={data}",
        "--set",
        "queries=q3",
        "--set",
        f"catalog_database={own_a}",
    )
    return {
        "a": (a, a_samples),
        "b": (b, b_samples),
        "c": (c, c_samples),
        "own_a": own_a,
        "after_a": after_a,
        "after_b": after_b,
        "after_c": _databases(state),
    }


@pytest.mark.real
@pytest.mark.spark
def test_tables_registered_in_the_metastore_answer_like_duckdb_with_planning_and_calls(runs):
    _, samples = runs["a"]
    assert _per_query(samples, "query_ok") == {"q3": 1.0, "q42": 1.0}
    planning, calls = _per_query(samples, "planning_time"), _per_query(samples, "metastore_calls")
    assert set(planning) == set(calls) == {"q3", "q42"}
    assert all(v > 0 for v in planning.values()) and all(v >= 1 for v in calls.values())


@pytest.mark.real
@pytest.mark.spark
def test_run_database_is_dropped_while_a_kept_neighbour_survives(runs):
    own_a, own_b = runs["own_a"], "storbench_" + runs["b"][0]["run_id"].replace("-", "_")
    assert own_a in runs["after_a"]  # --keep-data kept it
    assert own_b not in runs["after_b"] and own_a in runs["after_b"]
    assert _per_query(runs["b"][1], "query_ok") == {"q3": 1.0}


@pytest.mark.real
@pytest.mark.spark
def test_a_second_run_reads_the_first_runs_tables_read_only(runs, service):
    c, samples = runs["c"]
    assert _per_query(samples, "query_ok") == {"q3": 1.0}
    assert runs["own_a"] in runs["after_c"]  # read, not dropped
    assert not [d for d in runs["after_c"] - runs["after_b"]]  # and no database of its own made
    run_files = "".join(p.read_text(errors="replace") for p in Path(c["path"]).rglob("*") if p.is_file())
    assert service[1]["auth"]["password"] not in run_files  # the login stays in the credential store


def test_a_metastore_that_does_not_answer_is_one_line():
    with pytest.raises(
        InputError,
        match=r"^--set catalog=hive: the metastore at thrift://127.0.0.1:1 does not "
        r"answer",
    ):
        spark_catalog.resolve({"catalog": "hive", "metastore": "thrift://127.0.0.1:1"}, None)


def test_no_metastore_running_is_one_line(tmp_path):
    with pytest.raises(InputError, match="no metastore: start one with `storbench services up metastore`"):
        spark_catalog.resolve({"catalog": "hive"}, tmp_path)
    assert spark_catalog.resolve({"catalog": "embedded"}, tmp_path) is None


@pytest.mark.parametrize(
    "workload, params, message",
    [
        ("tpcds", {"catalog_database": "x", "catalog": "embedded"}, "add --set catalog=hive"),
        ("tpcds-analyze", {"catalog_database": "x", "catalog": "hive"}, "is read-only and tpcds-analyze registers"),
    ],
)
def test_catalog_database_misuse_is_one_line(workload, params, message):
    found = get_workload(workload)
    full = {p.name: p.default for p in found.params} | params
    with pytest.raises(InputError, match=message):
        found.check_params(full, None)

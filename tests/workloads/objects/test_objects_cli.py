"""objects workloads and suites through the real CLI against the real local S3 server."""

import json
import shlex
from pathlib import Path

import pytest

from storbench.errors import TargetError
from storbench.s3client import S3Client
from storbench.targets import MARKER, TargetOptions, parse_target
from storbench.targets.s3 import S3Target
from tests.cli.helpers import storbench
from tests.workloads.helpers import run_json

pytestmark = pytest.mark.s3


def _sample(samples, workload, metric, **labels):
    found = [s for s in samples if s["workload"] == workload and s["metric"] == metric and s["labels"] == labels]
    assert len(found) == 1, (workload, metric, labels, [s for s in samples if s["metric"] == metric])
    return found[0]["value"]


def test_objects_basic_tiny_and_prefix_rule(s3, client):
    home, state = s3
    client.put("storbench", "bench/keep-me.txt", b"not ours")  # beside the run prefix
    client.put("storbench", "bench/storbench-someone-else/x", b"not ours either")
    client.put("storbench", "outside.txt", b"outside the target prefix")
    result, outcome, samples = run_json(home, "objects-basic", "--target", "s3://storbench/bench", "--label", "sw-a")
    assert result.returncode == 0, result.stderr
    assert outcome["status"] == "succeeded", outcome["errors"]
    for workload in ("objects-put", "objects-get", "objects-mixed", "objects-list", "objects-delete"):
        for size in ("4k", "1m"):
            assert _sample(samples, workload, "obj_ops_per_s", size=size) > 0, workload
            assert _sample(samples, workload, "obj_errors", size=size) == 0, workload
            assert _sample(samples, workload, "obj_lat_p99_ms", size=size) > 0
            assert _sample(samples, workload, "obj_cpu_us_per_op", size=size) > 0
    assert _sample(samples, "objects-get", "obj_mbps", size="1m") > _sample(
        samples, "objects-get", "obj_mbps", size="4k"
    )
    assert _sample(samples, "objects-mixed", "obj_ops", size="4k", op="put") > 0
    assert _sample(samples, "objects-delete", "obj_ops", size="4k") == 64
    keys = set(client.list("storbench"))
    assert {"bench/keep-me.txt", "bench/storbench-someone-else/x", "outside.txt"} <= keys
    assert not [k for k in keys if k.startswith(f"bench/storbench-{outcome['run_id']}")]
    run_dir = Path(outcome["path"])
    text = "".join(p.read_text(errors="replace") for p in run_dir.rglob("*") if p.is_file())
    assert state["secret_key"] not in text and state["access_key"] not in text
    artifacts = json.loads((run_dir / "artifacts.json").read_text())["objects"]
    phase = artifacts["workloads"]["objects-get"][0]["result"]
    assert phase["ops"]["get"]["latency"]["hdr"] and phase["series"]
    manifest = json.loads((run_dir / "manifest.json").read_text())
    assert manifest["config"]["endpoint"] == state["s3_endpoint"]


def test_cosbench_tiny_sweep_and_compare(s3):
    home, _ = s3
    runs = []
    for label in ("cos-a", "cos-b"):
        result, outcome, samples = run_json(home, "cosbench-001", "--target", "s3://storbench/", "--label", label)
        assert result.returncode == 0, result.stderr
        assert outcome["status"] == "succeeded", outcome["errors"]
        runs.append(samples)
    samples = runs[0]
    for workload in ("objects-put", "objects-get"):
        for clients in ("1", "2"):
            assert _sample(samples, workload, "obj_mbps", clients=clients) > 0
        assert _sample(samples, workload, "obj_hwm_mbps") >= _sample(samples, workload, "obj_mbps", clients="1")
        assert _sample(samples, workload, "obj_hwm_clients") in (1.0, 2.0)
    compared = storbench(home, "compare", "cos-a", "cos-b")
    assert compared.returncode == 0, compared.stderr
    for title in (
        "Object throughput",
        "Object operations per second",
        "Object latency p50",
        "Object latency p99",
        "Client CPU per operation",
        "Throughput high-water mark",
        "Clients at the high-water mark",
    ):
        assert title in compared.stdout, title


def test_bad_credentials_and_unreachable_endpoint_are_one_line(s3, monkeypatch):
    home, state = s3
    for args, words, secret in (
        (["--endpoint", state["s3_endpoint"]], "refused the credentials", "wrong-secret"),
        (["--endpoint", "http://127.0.0.1:1"], "cannot connect", "any-secret"),
    ):
        monkeypatch.setenv("AWS_ACCESS_KEY_ID", state["access_key"])
        monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", secret)
        before = sorted(home.glob("runs/*"))
        result = storbench(home, "run", "objects-basic", "--target", "s3://storbench/", *args, timeout=60)
        assert result.returncode == 2, result.stderr
        lines = [line for line in result.stderr.splitlines() if line.strip()]
        assert len(lines) == 1 and words in lines[0], result.stderr
        assert "wrong-secret" not in result.stderr
        assert sorted(home.glob("runs/*")) == before  # refused at the precheck: nothing ran, nothing recorded


def test_storage_refuses_to_delete_outside_its_run(s3, client):
    home, _ = s3
    target = parse_target("s3://storbench/guard", TargetOptions(home))
    assert isinstance(target, S3Target)
    target.precheck(0)
    root = target.claim("run-1")
    assert root == "s3://storbench/guard/storbench-run-1"
    client.put("storbench", "guard/storbench-run-1/objects/a", b"1")
    client.put("storbench", "guard/storbench-run-1/objects/b", b"1")
    client.put("storbench", "guard/storbench-run-2/objects/a", b"2")  # another run's, unmarked
    other = parse_target("s3://storbench/guard", TargetOptions(home))
    with pytest.raises(TargetError):
        other.claim("run-2")  # already holds objects
    assert not other.release_root()  # no marker of ours there: nothing deleted
    assert other.root_state() == "other" and target.root_state() == "ours"
    with pytest.raises(TargetError):
        target.delete("s3://storbench/guard/storbench-run-2/objects")
    with pytest.raises(TargetError):
        target.delete("s3://storbench/guard")  # the prefix above the run's own
    client.put("storbench", f"guard/storbench-run-2/{MARKER}", b"run-2\n")  # another run's marked prefix: not ours
    for uri in (
        "s3://storbench/guard/storbench-run-2/objects",
        "s3://storbench/guard/storbench-run-1/../storbench-run-2/objects",
    ):
        with pytest.raises(TargetError, match=f"^refusing to delete {uri}: "):
            target.delete(uri)
    assert target.delete("s3a://storbench/guard/storbench-run-1/objects")  # as Spark names it
    with pytest.raises(TargetError):
        target.claim("run-1")  # the marker is still there
    assert target.release() and target.root_state() == "gone"
    keys = set(client.list("storbench", "guard/"))
    assert keys == {"guard/storbench-run-2/objects/a", f"guard/storbench-run-2/{MARKER}"}
    client.delete_prefix("storbench", "guard/")


def test_services_cli_up_status_down(tmp_path):
    home = tmp_path / "home"
    up = storbench(home, "services", "up", "s3", timeout=120)
    assert up.returncode == 0, up.stderr
    endpoint = up.stdout.strip()
    assert endpoint.startswith("http://127.0.0.1:")
    assert f"credentials: storbench --results {home} services env s3" in up.stderr and "seaweedfs" in up.stderr
    state = json.loads((home / "services" / "s3" / "state.json").read_text())
    assert state["secret_key"] not in up.stdout + up.stderr and "AWS_SECRET_ACCESS_KEY" not in up.stdout + up.stderr
    env = storbench(home, "services", "env", "s3")  # on explicit request: the exports, a warning first
    assert env.returncode == 0, env.stderr
    lines = env.stdout.splitlines()
    assert lines[0].startswith("#") and "secrets" in lines[0] and all(line.startswith("export ") for line in lines[1:])
    exported = dict(shlex.split(line.removeprefix("export "))[0].split("=", 1) for line in lines[1:])
    assert exported["AWS_ENDPOINT_URL"] == endpoint and exported["AWS_SECRET_ACCESS_KEY"] == state["secret_key"]
    client = S3Client(endpoint, exported["AWS_ACCESS_KEY_ID"], exported["AWS_SECRET_ACCESS_KEY"])
    client.put("storbench", "env-probe", b"works")
    assert client.get("storbench", "env-probe") == b"works"
    none = storbench(home, "services", "env", "hdfs")
    assert none.returncode == 2 and none.stdout == "" and len(none.stderr.strip().splitlines()) == 1
    assert storbench(home, "services", "status", "s3").stdout.strip() == endpoint
    bad = storbench(home, "services", "up", "s3", "--server", "nope")
    assert bad.returncode == 2 and "allowed" in bad.stderr
    down = storbench(home, "services", "down", "s3")
    assert down.returncode == 0 and "stopped" in down.stdout
    assert storbench(home, "services", "status", "s3").returncode == 1
    gone = storbench(home, "services", "env", "s3")
    assert gone.returncode == 2 and gone.stdout == "" and "not running" in gone.stderr


def test_environment_credentials_and_endpoint_userinfo_never_reach_the_run(s3, tmp_path, monkeypatch):
    """Issue 12 secrets: the secret key from the environment and a user:password@ in --endpoint."""
    home, state = s3
    canary = "CANARY-userinfo-5d1"
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", state["access_key"])
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", state["secret_key"])
    monkeypatch.setenv("TMPDIR", str(tmp_path))
    endpoint = state["s3_endpoint"].replace("//", f"//user:{canary}@")
    result, outcome, _ = run_json(
        home, "objects-basic", "--target", "s3://storbench/env", "--label", "env-creds", "--endpoint", endpoint
    )
    assert result.returncode == 0 and outcome["status"] == "succeeded", result.stderr
    report = tmp_path / "report.html"
    markdown = storbench(home, "compare", "env-creds", "--format", "md", "--html", str(report))
    assert markdown.returncode == 0, markdown.stderr
    places = [Path(outcome["path"]), home / "results.db", tmp_path]
    files = [p for place in places for p in ([place] if place.is_file() else place.rglob("*")) if p.is_file()]
    shown = result.stdout + result.stderr + markdown.stdout + markdown.stderr
    for secret in (state["secret_key"], canary):
        assert secret not in shown and not [p for p in files if secret.encode() in p.read_bytes()], secret
    manifest = json.loads((Path(outcome["path"]) / "manifest.json").read_text())
    assert manifest["config"]["endpoint"] == state["s3_endpoint"]


def test_seaweedfs_leaves_nothing_in_the_temp_dir(tmp_path, monkeypatch):
    """Issue 12 item 13: weed's logs and sockets go under the service's own directory, gone at down."""
    private_tmp = tmp_path / "tmpdir"
    private_tmp.mkdir()
    monkeypatch.setenv("TMPDIR", str(private_tmp))
    home = tmp_path / "home"
    up = storbench(home, "services", "up", "s3", timeout=120)
    assert up.returncode == 0, up.stderr
    state = json.loads((home / "services" / "s3" / "state.json").read_text())
    workdir = home / "services" / "s3"
    assert list((workdir / "tmp").glob("weed*")) and list(Path(state["socket_dir"]).glob("*.sock"))
    down = storbench(home, "services", "down", "s3")
    assert down.returncode == 0 and "stopped" in down.stdout
    assert list(private_tmp.iterdir()) == [] and not workdir.exists() and not Path(state["socket_dir"]).exists()
    port = state["s3_endpoint"].rsplit(":", 1)[1]  # weed's default socket paths are /tmp's whatever TMPDIR says
    assert not Path(f"/tmp/seaweedfs-s3-{port}.sock").exists()
    assert len(state["daemons"]) == 4 and "weed_sockets" not in state


def test_a_workload_by_name_runs_at_its_defaults_with_no_sweep(s3):
    """Issue 26: `run objects-get --set concurrency=16` ran cosbench-001's drivers sweep 1,2 (its tiny scale).
    Now: the workload's defaults but the --set ones, one phase, no clients label; the first line says so."""
    from storbench.workloads.base import get_workload

    home, _ = s3
    done = storbench(
        home,
        "run",
        "objects-get",
        "--target",
        "s3://storbench/",
        "--label",
        "by-name",
        "--set",
        "concurrency=16",
        "--set",
        "duration_s=1",
        timeout=300,
    )
    assert done.returncode == 0, done.stderr
    first = done.stderr.splitlines()[0].split("] ", 1)[1]
    assert first == "objects-get: concurrency=16 (default 8), duration_s=1.0 (default 10.0)"
    run_dir = Path(next(line for line in done.stdout.splitlines() if line.startswith("results:")).split()[1])
    manifest = json.loads((run_dir / "manifest.json").read_text())
    defaults = {p.name: p.coerce(p.default, "test") for p in get_workload("objects-get").params}
    assert manifest["workload_parameters"]["objects-get"] == {**defaults, "concurrency": 16, "duration_s": 1.0}
    assert manifest["sweep"] == [] and manifest["scale"] == "defaults"
    phases = json.loads((run_dir / "artifacts.json").read_text())["objects"]["workloads"]["objects-get"]
    assert [(p["size"], p["concurrency"], p["drivers"]) for p in phases] == [("4k", 16, 1)]  # one phase: no sweep
    samples = [json.loads(line) for line in (run_dir / "samples.jsonl").read_text().splitlines()]
    assert not [s for s in samples if "clients" in s["labels"] or s["metric"].startswith("obj_hwm")]

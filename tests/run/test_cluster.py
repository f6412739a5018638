"""A run that measures a cluster's nodes, in process: the nodes come from --nodes, --node, the storbench
service an engine runs on or the target's own service, and are read from node_exporters (tests/run/exporter.py).
Each node's metrics carry its label, the cluster's carry none, and an engine's per-host samples name their node."""

import json
import os

import pytest
import yaml

from storbench.errors import InputError
from storbench.services.process import cmdline
from storbench.targets import mem
from tests.run.null_run import run_null

NODE_METRICS = {"max_read_mbps", "max_write_mbps", "avg_read_latency_ms", "max_cpu_pct", "read_mb", "energy_j"}


def nodes_file(tmp_path, exporter, **extra):
    """Two workers: worker-2's disk moves three times what worker-1's does."""
    path = tmp_path / "nodes.yaml"
    path.write_text(
        yaml.safe_dump(
            {
                "nodes": [
                    {"name": "n1", "role": "worker", "exporter": exporter.add("n1", 1.0), "host": "10.1.0.1"},
                    {"name": "n2", "role": "worker", "exporter": exporter.add("n2", 3.0), "host": "10.1.0.2"},
                ],
                **extra,
            }
        )
    )
    return path


def by_node(run, workload, metric):
    return {
        s["labels"].get("node"): s["value"] for s in run.samples if s["workload"] == workload and s["metric"] == metric
    }


def test_the_nodes_of_a_nodes_file_are_measured_each_and_across(tmp_path, exporter):
    path = nodes_file(tmp_path, exporter)
    run = run_null(tmp_path, repeat=1, nodes=str(path), overrides={"sleep_ms": "150"})
    assert run.status == "succeeded", run.errors
    config = run.manifest["config"]
    assert (config["telemetry"], config["nodes_from"]) == ("node_exporter", str(path))
    assert [(n["label"], n["name"], n["host"], n["devices"]) for n in config["nodes"]] == [
        ("worker-1", "n1", "10.1.0.1", ["sda"]),
        ("worker-2", "n2", "10.1.0.2", ["sda"]),
    ]
    assert {label: f["hostname"] for label, f in run.manifest["machine"]["nodes"].items()} == {
        "worker-1": "n1.test",
        "worker-2": "n2.test",
    }  # each node's fingerprint, from its exporter
    assert exporter.scrapes["n1"] > 2 and exporter.scrapes["n2"] > 2
    for workload in ("null-write", "null-read"):
        labelled = {
            s["labels"].get("node") for s in run.samples if s["workload"] == workload and s["metric"] in NODE_METRICS
        }
        assert labelled == {"worker-1", "worker-2", None}
        read = by_node(run, workload, "max_read_mbps")
        assert 2 < read["worker-2"] / read["worker-1"] < 4 and read[None] == read["worker-2"]
        spread = by_node(run, workload, "node_spread_pct")[None]
        assert 50 < spread < 80  # 1 MB/s against 3 MB/s: 67 %
    assert [(s["workload"], s["node"]) for s in run.manifest["slowest_nodes"]] == [
        ("null-write", "worker-1"),
        ("null-read", "worker-1"),
    ]
    assert (run.path / "telemetry-worker-1.csv").exists() and (run.path / "telemetry-worker-2.csv").exists()
    assert "telemetry stop" not in run.events  # the nodes' telemetry, not this machine's
    # the noise sentinel's figures per node, as node_exporter shows them: no processes, so no other CPU or I/O
    psi_io = by_node(run, "null-read", "noise_psi_io_pct")
    assert set(psi_io) == {"worker-1", "worker-2"} and all(15 < v < 25 for v in psi_io.values())  # 0.2 s a second
    assert by_node(run, "null-read", "noise_psi_mem_pct") == {"worker-1": 0.0, "worker-2": 0.0}
    assert by_node(run, "null-read", "noise_dirty_mb") == {"worker-1": 6.0, "worker-2": 6.0}
    assert by_node(run, "null-read", "noise_steal_pct") == {"worker-1": 0.0, "worker-2": 0.0}
    assert by_node(run, "null-read", "noise_other_cpu_pct") == {"worker-1": None, "worker-2": None}


def test_an_engine_s_per_host_samples_name_the_node_of_that_host(tmp_path, exporter):
    """A host that is a node's gets that node's label in place of the host; any other keeps its host."""
    run = run_null(
        tmp_path,
        repeat=1,
        nodes=str(nodes_file(tmp_path, exporter)),
        engine_options={"null_hosts": ["10.1.0.2", "10.9.9.9"]},
    )
    assert run.status == "succeeded", run.errors
    tasks = [(s["workload"], s["labels"], s["value"]) for s in run.samples if s["metric"] == "null_tasks"]
    assert tasks == [
        (w, labels, value)
        for w in ("null-write", "null-read")
        for labels, value in (({}, 2.0), ({"node": "worker-2"}, 1.0), ({"executor_host": "10.9.9.9"}, 1.0))
    ]


def test_without_nodes_an_engine_s_per_host_samples_keep_their_host(tmp_path):
    run = run_null(tmp_path, repeat=1, engine_options={"null_hosts": ["10.1.0.2"]})
    assert [s["labels"] for s in run.samples if s["metric"] == "null_tasks"] == [{}, {"executor_host": "10.1.0.2"}] * 2


def test_nodes_given_on_the_command_line(tmp_path, exporter):
    run = run_null(
        tmp_path,
        repeat=1,
        node_specs=[
            f"a={exporter.add('a')},role=datanode,host=10.2.0.1",
            f"b={exporter.add('b')},devices=sda,role=datanode",
        ],
    )
    assert run.status == "succeeded", run.errors
    config = run.manifest["config"]
    assert (config["telemetry"], config["nodes_from"]) == ("node_exporter", "--node")
    assert [(n["label"], n["host"]) for n in config["nodes"]] == [
        ("datanode-1", "10.2.0.1"),
        ("datanode-2", "127.0.0.1"),
    ]
    assert set(by_node(run, "null-read", "max_write_mbps")) == {"datanode-1", "datanode-2", None}


def test_the_nodes_of_the_service_an_engine_runs_on(tmp_path, exporter):
    """`services up spark` left its state (this process stands in for its master) and a nodes file: a run on
    that master measures those nodes, and says where it found them."""
    home, master = tmp_path / "home", "spark://10.0.0.1:7077"
    path = nodes_file(tmp_path, exporter)
    service = home / "services" / "spark"
    service.mkdir(parents=True)
    (service / "state.json").write_text(
        json.dumps({"uri": master, "nodes": str(path), "pid": os.getpid(), "marker": cmdline(os.getpid()).split()[0]})
    )
    run = run_null(tmp_path, repeat=1, engine_options={"spark_master": master})
    assert run.status == "succeeded", run.errors
    assert run.manifest["config"]["nodes_from"] == f"{path} (services up spark)"
    assert "measures only this machine" not in run.stderr
    assert set(run.manifest["machine"]["nodes"]) == {"worker-1", "worker-2"}


def test_the_nodes_of_the_target_s_own_service(tmp_path, exporter):
    path = nodes_file(tmp_path, exporter)
    mem.volume("x").nodes = path
    run = run_null(tmp_path, repeat=1)
    assert run.status == "succeeded", run.errors
    assert run.manifest["config"]["nodes_from"] == f"{path} (the target's storbench service)"
    assert run.manifest["config"]["telemetry"] == "node_exporter"


@pytest.mark.parametrize("how", ["--prometheus", "the nodes file"])
def test_a_prometheus_that_does_not_scrape_the_nodes_is_refused(tmp_path, exporter, how):
    """--prometheus (or the file's prometheus:) reads the nodes from that Prometheus: it must hold their series."""
    extra = {"prometheus": exporter.base} if how == "the nodes file" else {}
    options = {"prometheus": exporter.base} if how == "--prometheus" else {}
    with pytest.raises(InputError) as refused:
        run_null(tmp_path, repeat=1, nodes=str(nodes_file(tmp_path, exporter, **extra)), **options)
    port = exporter.base.rsplit(":", 1)[1]
    assert str(refused.value) == (
        f"--telemetry prometheus: {exporter.base} has no series for node n1 "
        f"(instance '127.0.0.1:{port}'); is it scraping {exporter.url('n1')}?"
    )
    assert not (tmp_path / "home" / "runs").exists() and not mem.volume("x").files


def test_a_nodes_own_telemetry_key_overrides_the_files_prometheus(tmp_path, exporter):
    """`telemetry: node_exporter` on a node reads it from its exporter even when the file names a Prometheus (one
    that holds no series here, so reading through it would be refused); the manifest says how each was read."""
    path = nodes_file(tmp_path, exporter, prometheus=exporter.base)
    data = yaml.safe_load(path.read_text())
    for node in data["nodes"]:
        node["telemetry"] = "node_exporter"
    path.write_text(yaml.safe_dump(data))
    run = run_null(tmp_path, repeat=1, nodes=str(path), overrides={"sleep_ms": "150"})
    assert run.status == "succeeded", run.errors
    assert [n.get("telemetry") for n in run.manifest["config"]["nodes"]] == ["node_exporter", "node_exporter"]
    assert exporter.scrapes["n1"] > 2 and exporter.scrapes["n2"] > 2


@pytest.mark.parametrize(
    "entry, line",
    [
        ({"telemetry": "prometheus"}, "nodes[0].telemetry: no Prometheus URL (--prometheus URL, or 'prometheus:' in"),
        ({"telemetry": "promql"}, "nodes[0].telemetry: expected one of node_exporter, prometheus, got 'promql'"),
        (
            {"telemetry": "prometheus", "exporter": "local"},
            "nodes[0].telemetry: a node with exporter: local is read from this machine's /proc, not prometheus",
        ),
    ],
)
def test_a_bad_node_telemetry_key_is_one_line(tmp_path, exporter, entry, line):
    path = nodes_file(tmp_path, exporter)
    data = yaml.safe_load(path.read_text())
    data["nodes"][0].update(entry)
    path.write_text(yaml.safe_dump(data))
    with pytest.raises(InputError) as refused:
        run_null(tmp_path, repeat=1, nodes=str(path))
    assert str(refused.value).startswith(f"{path}: {line}"), str(refused.value)
    assert not (tmp_path / "home" / "runs").exists() and not mem.volume("x").files


def test_power_for_this_machine_is_refused_with_nodes(tmp_path, exporter):
    path = nodes_file(tmp_path, exporter)
    with pytest.raises(InputError) as refused:
        run_null(tmp_path, repeat=1, nodes=str(path), power="rapl")
    assert str(refused.value) == (
        f"--power: with nodes ({path}), give each node's source as its power: key in a nodes file"
    )
    assert not exporter.scrapes and not mem.volume("x").files  # refused before any node is read


def test_this_machine_s_node_has_the_whole_noise_sentinel(tmp_path, exporter):
    path = tmp_path / "nodes.yaml"
    path.write_text(
        yaml.safe_dump(
            {
                "nodes": [
                    {"name": "here", "role": "worker", "exporter": "local"},
                    {"name": "n2", "role": "worker", "exporter": exporter.add("n2", 1.0), "host": "10.1.0.2"},
                ]
            }
        )
    )
    run = run_null(tmp_path, repeat=1, nodes=str(path), overrides={"sleep_ms": "100"})
    assert run.status == "succeeded", run.errors
    other_cpu = by_node(run, "null-read", "noise_other_cpu_pct")
    assert set(other_cpu) == {"worker-1", "worker-2"} and other_cpu["worker-2"] is None
    assert other_cpu["worker-1"] is not None and other_cpu["worker-1"] >= 0  # read from this machine's /proc

"""Per-node results of cluster runs in reports: a table per operation with one line per node instead of
``[node=…]`` rows in the operation's table; cluster lines, the slowest node, telemetry gaps; compare with a
run without nodes; and one real run against two real node_exporters."""

import json
import shutil
import subprocess
import time
import urllib.request
from pathlib import Path

import pytest

from storbench.analysis.compare import compare_runs
from storbench.report import render
from storbench.results.model import Sample
from tests.analysis.factory import make_run
from tests.cli.helpers import storbench
from storbench.services.ports import free_port

EXPORTER = "/usr/bin/prometheus-node-exporter"
NODE_METRICS = {"max_write_mbps": "MB/s", "written_mb": "MB", "avg_write_latency_ms": "ms", "max_cpu_pct": "%"}


def _cluster_run(label, tmp_path, write, names=("n1", "n2"), gaps=(), slowest="worker-2"):
    """A fio-write run over two worker nodes; ``write[k]`` is node k's max write MB/s."""
    run = make_run(label, {("fio-write", "completion_time"): [7.0]})
    run.manifest["config"]["nodes"] = [
        {
            "label": f"worker-{k}",
            "name": name,
            "role": "worker",
            "host": f"127.0.0.{20 + k}",
            "exporter": f"http://127.0.0.{20 + k}:9100/metrics",
            "devices": ["vda"],
        }
        for k, name in enumerate(names, 1)
    ]
    run.manifest["machine"]["nodes"] = {
        f"worker-{k}": {"cores": 8, "memory_gb": 31.2, "kernel": "6.1.0-k"} for k in (1, 2)
    }
    run.manifest["slowest_nodes"] = [{"workload": "fio-write", "repetition": 1, "node": slowest, "spread_pct": 12.5}]
    run.manifest["telemetry_gaps"] = list(gaps)
    for k, mbps in enumerate(write, 1):
        values = {"max_write_mbps": mbps, "written_mb": mbps * 5, "avg_write_latency_ms": 2.0, "max_cpu_pct": 50.0}
        run.samples += [
            Sample("fio-write", m, v, NODE_METRICS[m], 1, {"node": f"worker-{k}"}) for m, v in values.items()
        ]
    run.samples += [
        Sample("fio-write", "max_write_mbps", max(write), "MB/s", 1),
        Sample("fio-write", "cluster_write_mbps", sum(write), "MB/s", 1),
        Sample("fio-write", "node_spread_pct", 12.5, "%", 1),
    ]
    run.path = str(tmp_path / label)
    Path(run.path).mkdir()
    (Path(run.path) / "windows.json").write_text(
        json.dumps([{"workload": "fio-write", "repetition": 1, "t0": 10.0, "t1": 20.0}])
    )
    return run


def _main_tables(text):
    return text[: text.index("per node")]


def test_node_rows_become_a_per_node_table_with_cluster_line_and_gaps(tmp_path):
    gap = {"node": "worker-2", "name": "n2", "from_s": 12.0, "to_s": 19.0, "error": "connection refused"}
    base = _cluster_run("base", tmp_path, [400.0, 300.0])
    new = _cluster_run("new", tmp_path, [800.0, 600.0], gaps=[gap])
    comparison = compare_runs([base, new])

    table = render(comparison, "table")
    assert "[node=" not in table
    section = table[table.index("fio-write: per node") :]
    assert "worker-1 (n1)" in section and "worker-2 (n2)" in section
    worker2 = section[section.index("worker-2 (n2)") :]
    assert worker2.split("\n")[0].split()[3:5] == ["300.0", "1,500"]  # base: max write MB/s, MB written
    assert "100% higher (×2.0)" in worker2.split("\n")[2]  # new vs base
    assert "new: cluster read n/a, write 1,400 MB/s; spread between nodes 12.50%; slowest node worker-2 (n2)" in section
    assert "new: worker-2: no telemetry from 12.0 s to 19.0 s: connection refused" in section
    assert "Node worker-1" in table and "n1 (worker) · 127.0.0.21 · devices vda · 8 cores" in table

    markdown = render(comparison, "md")
    assert "[node=" not in markdown and "### fio-write: per node" in markdown
    assert "| worker-2 (n2) | base | 300.0 | 1,500 |" in markdown

    html = render(comparison, "html")
    assert "[node=" not in html and "Per-node results" in html
    assert 'data-metric="nodes:fio-write::max_write_mbps"' in html
    assert 'data-metric="nodes:fio-write::written_mb"' in html
    assert "Telemetry gap, new: worker-2: no telemetry from 12.0 s to 19.0 s" in html


def test_nodes_line_up_by_role_and_renamed_nodes_are_named_per_run(tmp_path):
    base = _cluster_run("base", tmp_path, [400.0, 300.0])
    new = _cluster_run("new", tmp_path, [400.0, 300.0], names=("m1", "n2"))
    table = render(compare_runs([base, new]), "table")
    assert "worker-1 (base: n1, new: m1)" in table and "worker-2 (n2)" in table


def test_a_gap_between_operations_is_shown_once_for_the_run(tmp_path):
    gap = {"node": "worker-1", "name": "n1", "from_s": 30.0, "to_s": 31.0, "error": "timed out"}
    run = _cluster_run("only", tmp_path, [400.0, 300.0], gaps=[gap])
    table = render(compare_runs([run]), "table")
    assert "!! telemetry gap, worker-1: no telemetry from 30.0 s to 31.0 s: timed out (between operations)" in table
    assert table.count("timed out") == 1
    assert "slowest node worker-2 (n2), 12.50% behind the busiest" in table


def test_a_run_with_nodes_against_one_without(tmp_path):
    local = make_run("local", {("fio-write", "completion_time"): [7.0], ("fio-write", "max_write_mbps"): [350.0]})
    cluster = _cluster_run("cluster", tmp_path, [400.0, 300.0])
    for runs in ([local, cluster], [cluster, local]):
        comparison = compare_runs(runs)
        assert all(render(comparison, fmt) for fmt in ("md", "html", "json", "csv"))
        table = render(comparison, "table")
        assert "Per-node telemetry in cluster only; local measured the machine storbench ran on" in table
        assert "local: no nodes (the machine storbench ran on)" in table and "[node=" not in table


def test_runs_without_nodes_have_no_node_section():
    table = render(compare_runs([make_run("a", {("groupby", "max_read_mbps"): [1.0]})]), "table")
    assert "per node" not in table and "Node " not in table


@pytest.fixture
def exporters():
    procs, urls = [], []
    try:
        for host in ("127.0.0.21", "127.0.0.22"):
            port = free_port(host)
            procs.append(
                subprocess.Popen(
                    [
                        EXPORTER,
                        f"--web.listen-address={host}:{port}",
                        r"--collector.diskstats.device-exclude=^(ram|fd)\d+$",
                    ],
                    stdout=subprocess.DEVNULL,
                    stderr=subprocess.DEVNULL,
                )
            )
            urls.append(f"http://{host}:{port}")
        for url in urls:
            for _ in range(100):
                try:
                    urllib.request.urlopen(url + "/metrics", timeout=2).read()
                    break
                except OSError:
                    time.sleep(0.1)
        yield urls
    finally:
        for proc in procs:
            proc.terminate()
            proc.wait(timeout=10)


@pytest.mark.real
@pytest.mark.skipif(
    not Path(EXPORTER).exists() or shutil.which("fio") is None, reason="needs Debian's prometheus-node-exporter and fio"
)
def test_real_run_on_two_node_exporters_has_a_per_node_table(tmp_path, exporters):
    target = tmp_path / "target"
    target.mkdir()
    home = tmp_path / "home"
    n1, n2 = exporters
    run = storbench(
        home,
        "run",
        "fio-002",
        "--scale",
        "tiny",
        "--label",
        "cluster",
        "--target",
        str(target),
        "--node",
        f"n1={n1},role=worker",
        "--node",
        f"n2={n2},role=worker",
    )
    assert run.returncode == 0, run.stderr[-2000:]
    report = storbench(home, "compare", "cluster")
    assert report.returncode == 0, report.stderr[-2000:]
    text = report.stdout
    assert "[node=" not in text
    section = text[text.index("fio-write: per node") :]
    assert "worker-1 (n1)" in section and "worker-2 (n2)" in section
    assert "cluster read" in section and "slowest node worker-" in section
    lines = section.split("\n")
    assert lines[1].split()[7:9] == ["Read", "MB"] and lines[1].split()[9:11] == ["Written", "MB"]
    written = [float(line.split()[5].replace(",", "")) for line in lines[3:5]]
    assert all(mb > 0 for mb in written)  # both nodes' devices saw fio's writes


def test_a_slowest_node_held_by_its_link_says_so_and_in_what_it_is_behind(tmp_path):
    run = _cluster_run("only", tmp_path, [400.0, 300.0])
    run.manifest["slowest_nodes"][0]["held_by"] = "link"
    table = render(compare_runs([run]), "table")
    assert "slowest node worker-2 (n2), held by its link, 12.50% behind the busiest in network rate" in table

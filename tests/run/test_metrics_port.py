"""--metrics-port in process: the exposition text (parsed with prometheus_client's own parser), the endpoint
during a null run, its bad input, and the server stopping with the run (Ctrl-C and SIGTERM too).
A real Prometheus scraping a real run: test_metrics_port_prometheus.py."""

from __future__ import annotations

import io
import json
import re
import socket
import threading
import urllib.request

import pytest
from prometheus_client.parser import text_string_to_metric_families

from storbench import cli
from storbench.errors import InputError
from storbench.progress import Progress
from storbench.results.model import Sample
from storbench.results.store import ResultStore
from storbench.run.metrics_server import LiveRun, check_endpoint, exposition, grafana_dashboard
from tests.run.null_run import NullRun, run_null
from tests.run.test_cluster import nodes_file
from storbench.services.ports import free_port


def parsed(text: str) -> dict[str, list[tuple[dict[str, str], float]]]:
    """{sample name: [(labels, value)]} of an exposition."""
    found: dict[str, list[tuple[dict[str, str], float]]] = {}
    for family in text_string_to_metric_families(text):
        for sample in family.samples:
            found.setdefault(sample.name, []).append((sample.labels, sample.value))
    return found


def closed(port: int) -> bool:
    with socket.socket() as s:
        return s.connect_ex(("127.0.0.1", port)) != 0


def test_the_exposition_shows_progress_and_the_last_window_of_each_workload():
    progress = Progress(quiet=True, stream=io.StringIO())
    progress.plan(4)
    with progress.step("a", counted=True):
        pass
    live = LiveRun(progress)
    live.planned("20260101-000000-x-ab12", "null", "x", 2)
    live.begin("null-write", 1)
    live.window(
        "null-write",
        [Sample("null-write", "null_mbps", 1.5, "MB/s", 1), Sample("null-write", "energy_j", None, "J", 1)],
    )
    live.begin("null-write", 2)
    live.window(
        "null-write",
        [
            Sample("null-write", "null_mbps", 2.5, "MB/s", 2),
            Sample("null-write", "max_net_mbps", 3.0, "MB/s", 2, {"interface": "lo"}),
        ],
    )
    found = parsed(exposition(live))
    assert found["storbench_run_info"] == [
        ({"run_id": "20260101-000000-x-ab12", "suite": "null", "label": "x", "workload": "null-write"}, 1.0)
    ]
    assert found["storbench_progress_ratio"] == [({}, 0.25)]
    assert (found["storbench_steps_done"], found["storbench_steps_planned"]) == ([({}, 1.0)], [({}, 4.0)])
    assert (found["storbench_repetition"], found["storbench_repetitions"]) == ([({}, 2.0)], [({}, 2.0)])
    assert found["storbench_windows_total"] == [({}, 2.0)]
    assert found["storbench_elapsed_seconds"][0][1] > 0
    # the second window replaced the first; n/a (energy_j None) is absent, never 0
    assert {
        (labels["metric"], labels["unit"], labels["labels"], value)
        for labels, value in found["storbench_window_value"]
        if labels["workload"] == "null-write"
    } == {("null_mbps", "MB/s", "", 2.5), ("max_net_mbps", "MB/s", "interface=lo", 3.0)}
    assert len(found["storbench_window_value"]) == 2


def test_the_telemetry_s_last_interval_is_shown_per_node_with_its_unit():
    live = LiveRun()
    live.watch(
        lambda: {
            "": {"read_mbps": 12.5, "cpu_pct": 40.0, "power_w": None},
            "worker-1": {"util_pct": 90.0, "net_mbps": 3.0},
        }
    )
    found = {
        (labels["node"], labels["metric"], labels["unit"], value)
        for labels, value in parsed(exposition(live))["storbench_telemetry_value"]
    }
    assert found == {
        ("", "read_mbps", "MB/s", 12.5),
        ("", "cpu_pct", "%", 40.0),
        ("worker-1", "util_pct", "%", 90.0),
        ("worker-1", "net_mbps", "MB/s", 3.0),
    }


def test_a_telemetry_reading_that_fails_does_not_fail_the_scrape():
    def broken() -> dict:
        raise OSError("gone")

    live = LiveRun()
    live.watch(broken)
    assert "storbench_telemetry_value" not in parsed(exposition(live))
    assert "storbench_elapsed_seconds" in parsed(exposition(live))


def test_before_the_plan_nothing_unknown_is_shown():
    found = parsed(exposition(LiveRun()))
    assert set(found) == {"storbench_elapsed_seconds", "storbench_windows_total"}


def test_no_secret_reaches_a_label():
    live = LiveRun()
    live.window(
        "w",
        [
            Sample(
                "w",
                "m",
                1.0,
                "s",
                1,
                {"spark.hadoop.fs.s3a.secret.key": "hunter2", "endpoint": "http://user:pa55word@127.0.0.1:8333/b"},
            )
        ],
    )
    text = exposition(live)
    assert "hunter2" not in text and "pa55word" not in text
    labels = parsed(text)["storbench_window_value"][0][0]["labels"]
    assert labels == "endpoint=http://***@127.0.0.1:8333/b,spark.hadoop.fs.s3a.secret.key=***"


@pytest.mark.parametrize(
    "port, address, message",
    [
        (0, None, "--metrics-port 0: must be between 1 and 65535"),
        (65536, None, "--metrics-port 65536: must be between 1 and 65535"),
        (9464, "localhost", "--metrics-address 'localhost': not an IP address (e.g. 127.0.0.1, ::1, 0.0.0.0)"),
        (None, "127.0.0.1", "--metrics-address 127.0.0.1: serves nothing without --metrics-port PORT"),
    ],
)
def test_bad_metrics_options_are_one_line(port, address, message):
    with pytest.raises(InputError) as refused:
        check_endpoint(port, address)
    assert str(refused.value) == message


def test_a_port_in_use_is_one_line_before_any_work(tmp_path):
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        with pytest.raises(InputError) as refused:
            run_null(tmp_path, metrics_port=port)
    assert str(refused.value) == f"--metrics-port {port}: 127.0.0.1:{port} is already in use; choose a free port"
    assert ResultStore(tmp_path / "home").list_runs() == []  # nothing recorded, nothing claimed


def test_an_address_not_of_this_machine_is_one_line(tmp_path):
    port = free_port()
    with pytest.raises(InputError) as refused:
        run_null(tmp_path, metrics_port=port, metrics_address="192.0.2.1")  # TEST-NET-1: nobody's
    assert str(refused.value) == (
        f"--metrics-address 192.0.2.1: cannot serve on 192.0.2.1:{port} (Cannot assign requested address)"
    )


def scraped_run(tmp_path, **fields) -> tuple[NullRun, dict[str, list[tuple[dict[str, str], float]]]]:
    """A null run with --metrics-port, scraped every 50 ms while it runs: the run and its last scrape."""
    port = free_port()
    seen: list[str] = []
    done = threading.Event()

    def scrape() -> None:
        while not done.wait(0.05):
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=2) as answer:
                    seen.append(answer.read().decode())
            except OSError:
                pass

    scraper = threading.Thread(target=scrape, daemon=True)
    scraper.start()
    try:
        run = run_null(tmp_path, metrics_port=port, **fields)
    finally:
        done.set()
        scraper.join(5)
    assert run.status == "succeeded", run.errors
    assert f"metrics: http://127.0.0.1:{port}/metrics" in run.stderr
    assert closed(port)
    return run, parsed(seen[-1])


def test_a_run_serves_its_progress_while_it_runs_and_stops_serving_after(tmp_path):
    run, last = scraped_run(tmp_path, repeat=4, overrides={"sleep_ms": "150"})
    assert last["storbench_run_info"][0][0]["run_id"] == run.manifest["run_id"]
    rates = [value for labels, value in last["storbench_window_value"] if labels["metric"] == "null_mbps"]
    assert rates and all(value > 0 for value in rates)
    live = {labels["metric"] for labels, _ in last["storbench_telemetry_value"] if labels["node"] == ""}
    assert {"cpu_pct", "mem_used_pct"} <= live  # this machine's collector, at the run's --interval


def test_a_cluster_s_nodes_are_shown_live_each_under_its_label(tmp_path, exporter):
    _, last = scraped_run(tmp_path, repeat=2, nodes=str(nodes_file(tmp_path, exporter)), overrides={"sleep_ms": "150"})
    read = {
        labels["node"]: value for labels, value in last["storbench_telemetry_value"] if labels["metric"] == "read_mbps"
    }
    assert set(read) == {"worker-1", "worker-2"}
    # their exporters move 1 and 3 MB/s; a live value is the last interval's rate, whose ends are stamped at
    # the middle of each scrape, so on a loaded machine (a scrape of 0.3 s against intervals of a second or
    # less) the ratio strays from 3: the test asserts what cannot stray, each node's figure under its own label
    assert read["worker-2"] > read["worker-1"] > 0


@pytest.mark.parametrize("fail", ["interrupt", "signal"])
def test_the_server_stops_with_an_interrupted_run(tmp_path, handlers, fail):
    port = free_port()
    run = run_null(tmp_path, repeat=3, overrides={"fail": fail, "fail_at": "2"}, metrics_port=port)
    assert run.status == "interrupted"
    assert closed(port)


def test_the_cli_passes_the_options_on():
    args = cli.build_parser().parse_args(["run", "null", "--metrics-port", "9464", "--metrics-address", "::1"])
    assert (args.metrics_port, args.metrics_address) == (9464, "::1")


def test_the_grafana_dashboard_queries_only_metrics_a_run_serves(tmp_path, capsys):
    assert cli.main(["--results", str(tmp_path), "grafana", "--path"]) == 0
    assert capsys.readouterr().out.strip() == str(grafana_dashboard())
    assert cli.main(["--results", str(tmp_path), "grafana"]) == 0
    dashboard = json.loads(capsys.readouterr().out)
    exprs = [t["expr"] for panel in dashboard["panels"] for t in panel.get("targets", [])]
    named = {name for expr in exprs for name in re.findall(r"\b(storbench_[a-z_]+)\{", expr)}
    live = LiveRun(Progress(quiet=True, stream=io.StringIO()))
    live.progress.plan(2)
    with live.progress.step("a", counted=True):  # a step done: the ETA is known
        pass
    live.planned("r", "s", "l", 1)
    live.begin("w", 1)
    live.window("w", [Sample("w", "m", 1.0, "s", 1)])
    live.watch(lambda: {"": {"read_mbps": 1.0}})
    served = set(parsed(exposition(live)))
    assert len(exprs) == len(dashboard["panels"]) and named
    assert named <= served, named - served

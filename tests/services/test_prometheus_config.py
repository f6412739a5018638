"""`services up prometheus` without a Prometheus: which exporters it scrapes, its configuration, and bad input as
one line before anything is started (the real Prometheus: test_prometheus.py)."""

from __future__ import annotations

from storbench import cli
from storbench.services import prometheus
from storbench.telemetry.nodes import Cluster, Node, dump_nodes


def _nodes_file(folder, *nodes: Node):
    folder.mkdir(parents=True, exist_ok=True)
    dump_nodes(folder / "nodes.yaml", Cluster(tuple(nodes)))
    return folder / "nodes.yaml"


def test_by_default_it_scrapes_the_exporters_of_the_services_beside_it(tmp_path):
    services = tmp_path / "services"
    _nodes_file(services / "spark", Node("worker-1", "http://127.0.0.2:9100/metrics", "worker"))
    _nodes_file(
        services / "yarn",
        Node("worker-2", "http://127.0.0.2:9100/metrics", "worker"),  # the same exporter: scraped once
        Node("worker-1", "http://127.0.0.3:9101/metrics", "worker"),  # another exporter, a name spark's took
        Node("driver", "local", "driver"),  # this machine's /proc: no exporter to scrape
    )
    _nodes_file(services / "prometheus", Node("old", "http://127.0.0.9:1/metrics"))  # its own file: not a source
    nodes = prometheus.scraped_nodes(services / "prometheus", [])
    assert [(n.name, n.instance) for n in nodes] == [
        ("worker-1", "127.0.0.2:9100"),
        ("yarn-worker-1", "127.0.0.3:9101"),
    ]


def test_one_target_per_exporter_labelled_with_its_node_one_job_per_path():
    nodes = [
        Node("w1", "http://127.0.0.2:9100/metrics", "worker"),
        Node("c1", "http://127.0.0.4:9100/node/metrics", "cassandra"),
    ]
    config = prometheus.scrape_config(nodes, 0.5)
    assert config["global"]["scrape_interval"] == "500ms"
    assert [(j["job_name"], j["metrics_path"]) for j in config["scrape_configs"]] == [
        ("node", "/metrics"),
        ("node1", "/node/metrics"),
    ]
    assert config["scrape_configs"][0]["static_configs"] == [
        {"targets": ["127.0.0.2:9100"], "labels": {"node": "w1", "role": "worker"}}
    ]


def test_bad_input_is_one_line_and_starts_nothing(tmp_path, capsys):
    home = tmp_path / "home"
    for args, says in (
        ([], "no node_exporter to scrape beside"),
        (["--scrape-interval", "0"], "--scrape-interval 0: allowed 0.1 to 300 seconds"),
        (["--nodes-file", str(tmp_path / "none.yaml")], "none.yaml: cannot read it"),
        (["--heap", "1g"], "--heap does not apply to service prometheus; it takes: --nodes-file, --scrape-interval"),
    ):
        assert cli.main(["--results", str(home), "services", "up", "prometheus", *args]) == 2, args
        lines = capsys.readouterr().err.strip().splitlines()
        assert len(lines) == 1 and says in lines[0], lines
        assert not (home / "services" / "prometheus").exists()

"""Services are found by registration: each module declares its name and its `services up` flags, and the command
line's grammar is read from the registry (issue 39 item 2). No service is started here."""

from __future__ import annotations

import argparse

import pytest

from storbench import cli
from storbench.cli.services_command import add_services_parser
from storbench.services import Flag, Service, all_services, up_flags


def _grammar(services: dict[str, Service]) -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="storbench")
    add_services_parser(parser.add_subparsers(dest="command"), services)
    return parser


def test_every_service_module_registers_itself_and_its_flags():
    services = all_services()
    assert {"cassandra", "ceph", "hdfs", "metastore", "s3", "spark", "yarn"} <= set(services)
    assert [f.name for f in services["hdfs"].flags] == ["datanodes", "lab_cluster"]
    assert services["metastore"].flags == ()
    args = cli.build_parser().parse_args(
        ["services", "up", "spark", "--workers", "3", "--worker-dir", "a", "--worker-dir", "b", "--memory", "2g"]
    )
    assert (args.name, args.workers, args.worker_dir, args.memory) == ("spark", 3, ["a", "b"], "2g")
    args = cli.build_parser().parse_args(["services", "up", "ceph", "--rgw", "--osd-gb", "2"])
    assert (args.rgw, args.osd_gb, args.datanodes) == (True, 2, None)


def test_a_flag_two_services_declare_is_one_flag_whose_help_names_both(capsys, monkeypatch):
    merged = {flag.name: helps for flag, helps in up_flags()}
    assert list(merged["memory"]) == ["spark", "yarn"] and list(merged["nodes"]) == ["cassandra", "yarn"]
    monkeypatch.setenv("COLUMNS", "400")  # one line per flag in the help
    with pytest.raises(SystemExit):
        cli.build_parser().parse_args(["services", "--help"])
    memory = next(line for line in capsys.readouterr().out.splitlines() if line.strip().startswith("--memory"))
    assert "spark: memory per worker, e.g. 1g (default 1g); yarn: MB per NodeManager (default 1536)" in memory


def test_a_new_service_is_one_declaration_the_grammar_reads():
    toy = Service("toy", __name__, (Flag("size", "how big (default 1)", int), Flag("loud", "say more", switch=True)))
    args = _grammar({"toy": toy}).parse_args(["services", "up", "toy", "--size", "3", "--loud"])
    assert (args.name, args.size, args.loud) == ("toy", 3, True)


def test_two_services_giving_one_flag_two_meanings_are_refused():
    one = Service("one", __name__, (Flag("nodes", "how many", int),))
    other = Service("other", __name__, (Flag("nodes", "a nodes file"),))
    with pytest.raises(RuntimeError, match="--nodes is also declared by one"):
        up_flags([one, other])


def test_a_flag_of_another_service_is_one_line_naming_what_it_takes(tmp_path, capsys):
    assert cli.main(["--results", str(tmp_path), "services", "up", "hdfs", "--osd-gb", "2"]) == 2
    lines = capsys.readouterr().err.strip().splitlines()
    assert lines == ["storbench: error: --osd-gb does not apply to service hdfs; it takes: --datanodes, --lab-cluster"]
    assert not (tmp_path / "services" / "hdfs").exists()

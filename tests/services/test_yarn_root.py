"""`services up yarn` as root refuses unless told: YARN runs every container as the account that started it, and
any local user can submit one by claiming a Hadoop name (issue 38 item 1; tests/services/test_yarn.py shows a
stranger's container running as the service's account)."""

import pytest

from storbench import cli
from storbench.errors import InputError
from storbench.services import yarn


def test_root_is_refused_before_anything_starts(tmp_path, monkeypatch):
    monkeypatch.setattr(yarn.os, "geteuid", lambda: 0)
    with pytest.raises(InputError, match=r"containers as root.*--allow-root-containers"):
        yarn.up(tmp_path / "yarn")
    assert not (tmp_path / "yarn").exists()


def test_the_flag_or_an_unprivileged_account_may_start_it(monkeypatch):
    monkeypatch.setattr(yarn.os, "geteuid", lambda: 0)
    yarn.refuse_root_containers(True)
    monkeypatch.setattr(yarn.os, "geteuid", lambda: 1000)
    yarn.refuse_root_containers(False)


def test_the_cli_says_it_in_one_line_and_takes_the_flag(tmp_path, monkeypatch, capsys):
    monkeypatch.setattr(yarn.os, "geteuid", lambda: 0)
    assert cli.main(["--results", str(tmp_path), "services", "up", "yarn"]) == 2
    lines = capsys.readouterr().err.strip().splitlines()
    assert len(lines) == 1 and "--allow-root-containers" in lines[0], lines
    args = cli.build_parser().parse_args(["services", "up", "yarn", "--allow-root-containers"])
    assert args.allow_root_containers is True

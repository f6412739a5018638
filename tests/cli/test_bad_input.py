"""Bad input: one clear line on stderr naming what and what is allowed, a non-zero exit, nothing stored."""

import pytest

from storbench.suites import builtin_suites
from tests.cli.helpers import storbench


@pytest.mark.parametrize("args,code,message", [
    (["run", "nosuch"], 2, "unknown suite 'nosuch'; built-in suites: " + ", ".join(builtin_suites())),
    (["run", "--scale", "medium"], 2, "--scale 'medium': unknown scale for suite spark-transforms; allowed: tiny, small, paper"),
    (["run", "--set", "format=orc"], 2, "--set: format='orc' is not allowed; allowed: csv, parquet"),
    (["run", "--set", "bogus=1"], 2, "--set: unknown parameter 'bogus' for suite spark-transforms; allowed:"),
    (["run", "--set", "rows"], 2, "--set 'rows': expected KEY=VALUE"),
    (["run", "--label", "a b"], 2, "--label 'a b': use letters, digits"),
    (["run", "--repeat", "0"], 2, "--repeat 0: must be at least 1"),
    (["run", "--target", "s3://bucket/x"], 2, "an s3:// target needs an endpoint: pass --endpoint"),
    (["run", "--target", "gs://bucket/x"], 2, "scheme gs:// is not supported; supported: file:///path"),
    (["run", "--scale", "paper", "--target", "{tmp}"], 2, "needs about 1760.00 GB for this run"),
    (["run", "--spark-conf", "novalue"], 2, "--spark-conf 'novalue': expected key=value"),
    (["run", "--devices", "nosuchdisk0"], 2, "nosuchdisk0"),
    (["run", "--interval", "0"], 2, "--interval 0.0: must be between 0.05 and 60 seconds"),
    (["compare", "nolabel"], 3, "no run or label named 'nolabel'"),
    (["compare", "a", "--format", "pdf"], 2, "invalid choice: 'pdf'"),
    (["frobnicate"], 2, "invalid choice: 'frobnicate'"),
])
def test_bad_input_exits_with_one_line(tmp_path, args, code, message):
    home = tmp_path / "home"
    args = [a.replace("{tmp}", str(tmp_path)) for a in args]
    result = storbench(home, *args, timeout=120)
    assert result.returncode == code, result.stderr
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1, result.stderr
    assert lines[0].startswith("storbench: error: ")
    assert message in lines[0]
    assert not (home / "runs").exists() or not any((home / "runs").iterdir())


def test_target_that_is_a_file_is_refused(tmp_path):
    afile = tmp_path / "afile"
    afile.write_text("x")
    result = storbench(tmp_path / "home", "run", "--target", f"file://{afile}", timeout=120)
    assert result.returncode == 2
    assert "exists and is not a directory" in result.stderr
    assert afile.read_text() == "x"


def test_bad_suite_file_names_file_and_key(tmp_path):
    suite = tmp_path / "mine.yaml"
    suite.write_text("name: mine\nworkloads: [groupby]\nrepetition: 3\n")
    result = storbench(tmp_path / "home", "run", str(suite), timeout=120)
    assert result.returncode == 2
    assert f"{suite}: unknown key 'repetition'; allowed: name, description" in result.stderr


def test_listing_commands_work_without_spark(tmp_path):
    workloads = storbench(tmp_path / "home", "workloads")
    assert workloads.returncode == 0
    for name in ("datagen", "groupby", "repartition", "join", "broadcast-join"):
        assert f"\n{name} (v" in "\n" + workloads.stdout
    assert "format = 'csv' [csv|parquet]" in workloads.stdout
    runs = storbench(tmp_path / "home", "runs")
    assert runs.returncode == 0 and "no runs stored" in runs.stdout
    suites = storbench(tmp_path / "home", "suites")
    assert "spark-transforms (paper 000): datagen → groupby → repartition → join" in suites.stdout

"""`storbench import DIR` trusts nothing in DIR: no symbolic link is followed (by the import, nor by the readers
behind `show` and `compare`), a run id already indexed from another directory is not taken over, and a manifest
nested too deeply for Python's JSON parser is one line. Each refusal is one line through the CLI, no traceback."""

from __future__ import annotations

import json
import os
import shutil

import pytest

from storbench import api, cli
from storbench.errors import ResultsError
from storbench.results.model import Sample
from storbench.results.series import to_csv
from storbench.results.store import ResultStore

R9 = "20260101-000000-copied-00a9"
SECRET = "root:$6$SECRET-HASH-FROM-SHADOW:19000:0:99999:7:::"


def _copied(tmp_path, run_id=R9, label="copied", where="elsewhere"):
    """A run directory made in another results home: what `storbench import` is handed."""
    writer = ResultStore(tmp_path / where).create_run(run_id, {"label": label, "suite": "s"})
    writer.add_samples([Sample("g", "completion_time", 1.0, "s", 1), Sample("g", "completion_time", 2.0, "s", 2)])
    writer.write_series(
        to_csv([{"t": 0.0, "read_mbps": 1.0}, {"t": 1.0, "read_mbps": 2.0}]),
        [{"workload": "g", "repetition": 1, "t0": 0.0, "t1": 1.0}],
    )
    writer.finish("succeeded")
    return writer.path


def _one_line_error(capsys, argv: list[str]) -> str:
    code = cli.main(argv)
    captured = capsys.readouterr()
    err = captured.err.strip().splitlines()
    assert code != 0, (captured.out, err)
    assert len(err) == 1 and err[0].startswith("storbench: error: "), err
    assert SECRET not in captured.out + captured.err
    return err[0]


@pytest.mark.parametrize(
    "name",
    ["telemetry.csv", "samples.jsonl", "manifest.json", "windows.json", "power.csv", "artifacts.json", "report.html"],
)
def test_import_refuses_a_symlinked_file_naming_it(tmp_path, capsys, name):
    path = _copied(tmp_path)
    outside = tmp_path / "outside" / name
    outside.parent.mkdir()
    if (path / name).exists():  # the link names the run's own file moved away: only the link is wrong
        shutil.move(path / name, outside)
    else:
        outside.write_text(SECRET + "\n")  # as /etc/shadow would be
    (path / name).symlink_to(outside)
    home = tmp_path / "home"
    line = _one_line_error(capsys, ["--results", str(home), "import", str(path)])
    assert line == (
        f"storbench: error: import {path}: {name} is a symbolic link; a run directory to import holds "
        f"regular files only: copy the files themselves in; nothing imported"
    )
    assert ResultStore(home).list_runs() == []


def test_show_and_compare_read_no_symlinked_file_of_a_run(tmp_path, capsys):
    """Linked after the import (or in a home's own runs/): the readers open no link; the HTML report says why its
    telemetry is missing, as it does for a damaged series, and shows nothing of what the link names."""
    home = tmp_path / "home"
    store = ResultStore(home)
    path = _copied(tmp_path)
    assert cli.main(["--results", str(home), "import", str(path)]) == 0
    shadow = tmp_path / "shadow"
    shadow.write_text(f"{SECRET}\ndaemon:*:19000:0:99999:7:::\n")  # as /etc/shadow is
    for name in ("telemetry.csv", "windows.json"):
        (path / name).rename(path / (name + ".moved"))
        (path / name).symlink_to(shadow)
        page = api.render(api.compare([R9], store), "html", store)
        assert SECRET not in page
        assert f"Telemetry series unavailable: ResultsError: {path / name}: a symbolic link; " in page
        capsys.readouterr()
        code = cli.main(["--results", str(home), "compare", R9, R9, "--html", str(tmp_path / "c.html")])
        captured = capsys.readouterr()
        assert SECRET not in captured.out + captured.err + (tmp_path / "c.html").read_text(), code
        with pytest.raises(ResultsError, match=f"^{path / name}: a symbolic link; "):
            store.load_series(store.resolve(R9)) if name == "telemetry.csv" else store.load_windows(store.resolve(R9))
        (path / name).unlink()
        (path / (name + ".moved")).rename(path / name)
    assert "Telemetry series unavailable" not in api.render(api.compare([R9], store), "html", store)


def test_import_refuses_a_run_id_indexed_from_another_directory(tmp_path, capsys):
    home = tmp_path / "home"
    first = _copied(tmp_path)
    assert cli.main(["--results", str(home), "import", str(first)]) == 0
    crafted = _copied(tmp_path, where="crafted")  # the same run id, other contents
    line = _one_line_error(capsys, ["--results", str(home), "import", str(crafted)])
    assert line.startswith(f"storbench: error: import {crafted}: run id {R9} exists already in ")
    assert f"(its directory: {first})" in line and line.endswith("nothing imported")
    assert [r.path for r in ResultStore(home).list_runs()] == [str(first)]
    capsys.readouterr()
    assert cli.main(["--results", str(home), "import", str(first)]) == 0  # the same directory again: as before


def test_import_of_a_deeply_nested_manifest_is_one_line(tmp_path, capsys):
    path = _copied(tmp_path)
    manifest = json.loads((path / "manifest.json").read_text())
    depth = 100_000
    text = json.dumps(manifest)[:-1] + ', "notes": ' + "[" * depth + "]" * depth + "}"
    (path / "manifest.json").write_text(text)
    line = _one_line_error(capsys, ["--results", str(tmp_path / "home"), "import", str(path)])
    assert line == (
        f"storbench: error: import {path}: manifest.json is not readable JSON (nested too deeply "
        f"(more levels than any storbench file has))"
    )


def test_the_run_directory_walk_names_a_fifo(tmp_path, capsys):
    path = _copied(tmp_path)
    os.mkfifo(path / "power.csv")  # reading it would wait forever
    line = _one_line_error(capsys, ["--results", str(tmp_path / "home"), "import", str(path)])
    assert f"import {path}: power.csv is not a regular file;" in line


def test_runs_lists_an_imported_run_without_a_target(tmp_path, capsys):
    """A manifest from elsewhere may lack config.target (None): `runs` lists it, no TypeError."""
    path = _copied(tmp_path)
    home = tmp_path / "home"
    assert cli.main(["--results", str(home), "import", str(path)]) == 0
    capsys.readouterr()
    assert cli.main(["--results", str(home), "runs"]) == 0
    out = capsys.readouterr().out
    assert R9 in out and "copied" in out

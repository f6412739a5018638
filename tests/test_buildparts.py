"""Issue 39 item 5: one table of build parts (src/storbench/buildparts.tsv) that fetch, doctor, the wheel hook, the
Makefile and scripts/setup.sh read, so a new part is one row.

A row added to a temporary copy of the table shows up in what each consumer offers (storbench imported afresh from
the copy, and the copy's setup.sh run), and no consumer names a module's path itself.
"""

from __future__ import annotations

import importlib
import shutil
import subprocess
import sys
from contextlib import contextmanager
from pathlib import Path

import pytest

from storbench import buildparts

REPO = Path(__file__).resolve().parents[1]
SRC = REPO / "src" / "storbench"
# what a copy needs to import fetch and doctor: the modules they import, and the table
COPIED = ("__init__.py", "errors.py", "binaries.py", "buildparts.py", "buildparts.tsv", "fetch.py", "doctor.py")
ROW = (
    "extra",
    "jvm/extra",
    "maven_package",
    "extra",
    "jvm/extra/target/.storbench-built",
    "jvm/extra/pom.xml",
    "jars/storbench-extra.jar=jvm/extra/target/storbench-extra-0.1.0.jar",
    "a part added by a test (Maven)",
    "the test of the table",
)
CONSUMERS = ("hatch_build.py", "Makefile", "scripts/setup.sh", *(f"src/storbench/{m}" for m in COPIED[5:]))


@contextmanager
def imported_from(src: Path):
    """storbench imported afresh from ``src`` (a copy) inside the block; the session's own modules put back after."""

    def ours() -> list[str]:
        return [name for name in sys.modules if name == "storbench" or name.startswith("storbench.")]

    own = {name: sys.modules.pop(name) for name in ours()}
    sys.path.insert(0, str(src))
    try:
        yield
    finally:
        sys.path.remove(str(src))
        for name in ours():
            del sys.modules[name]
        sys.modules.update(own)


@pytest.fixture()
def clone_with_a_new_part(tmp_path):
    """A clone's skeleton (the package's table and the modules reading it, scripts/setup.sh) with one row added."""
    (tmp_path / "src" / "storbench").mkdir(parents=True)
    for name in COPIED:
        shutil.copy(SRC / name, tmp_path / "src" / "storbench" / name)
    (tmp_path / "scripts").mkdir()
    shutil.copy(REPO / "scripts" / "setup.sh", tmp_path / "scripts" / "setup.sh")
    with open(tmp_path / "src" / "storbench" / "buildparts.tsv", "a") as table:
        table.write("\t".join(ROW) + "\n")
    return tmp_path


def test_a_row_added_to_the_table_reaches_fetch_doctor_the_wheel_and_setup(clone_with_a_new_part):
    with imported_from(clone_with_a_new_part / "src"):
        fetch = importlib.import_module("storbench.fetch")
        doctor = importlib.import_module("storbench.doctor")
        copy = importlib.import_module("storbench.buildparts")
        assert copy.TABLE == clone_with_a_new_part / "src" / "storbench" / "buildparts.tsv"
        assert fetch.PARTS["extra"] == ("extra",)  # `storbench fetch extra`, and the CLI's choices
        assert fetch.DESCRIPTIONS["extra"] == "a part added by a test (Maven)"
        (line,) = [check.line() for check in doctor.part_checks() if check.name == "jars: extra"]
        assert "not built (for the test of the table)" in line and "scripts/setup.sh --part extra" in line
        assert "extra" in copy.WHEEL_PARTS  # `make dist` builds it; hatch_build.py lists and carries it
        module = copy.with_classpath("extra")
        assert module.own_jar == ("jars/storbench-extra.jar", "jvm/extra/target/storbench-extra-0.1.0.jar")
        assert module.products == ("jvm/extra/target/storbench-extra-0.1.0.jar", "jvm/extra/target/classpath.txt")
    assert "extra" not in buildparts.PARTS and importlib.import_module("storbench.fetch").PARTS.get("extra") is None
    done = subprocess.run(
        ["bash", str(clone_with_a_new_part / "scripts" / "setup.sh"), "--part", "bogus"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 2
    assert done.stderr.strip().endswith("allowed: jvm, s3a, cassandra, metastore, native, ycsb, lab, extra")


def test_no_consumer_names_a_module_path_of_its_own():
    """Stamps, folders, classpath files and what the wheel carries are named in the table only."""
    paths = set()
    for module in buildparts.MODULES:
        paths.update(p for p in (module.stamp, module.resolved) if p)
        paths.update(p for pair in module.wheel for p in pair)
        paths.update([module.folder + "/"] if "/" in module.folder else [])
    for consumer in CONSUMERS:
        text = (REPO / consumer).read_text()
        named = sorted(p for p in paths if p in text)
        assert not named, f"{consumer} names {', '.join(named)}: read it from src/storbench/buildparts.tsv"


def test_a_malformed_row_is_one_line_naming_its_place(tmp_path):
    table = tmp_path / "buildparts.tsv"
    table.write_text("# a comment\n" + "\t".join(ROW[:4]) + "\n")
    with pytest.raises(ValueError, match=rf"^{table}:2: not a row of build parts; allowed: 9 tab-separated columns"):
        buildparts.read(table)
    table.write_text("\t".join(ROW[:7]) + "\t-\t-\n")
    with pytest.raises(ValueError, match=rf"^{table}:1: the first row of part 'extra' needs its 'about' column"):
        buildparts.read(table)

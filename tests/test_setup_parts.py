"""Issue 17: `make run` sets up only what the default job needs; other parts are built on first use."""

import subprocess
from pathlib import Path

SETUP = Path(__file__).resolve().parents[1] / "scripts" / "setup.sh"


def test_an_unknown_part_is_one_line():
    done = subprocess.run(["bash", str(SETUP), "--part", "bogus"], capture_output=True, text=True, timeout=60)
    assert done.returncode == 2
    assert done.stderr.strip() == "setup: --part 'bogus': allowed: jvm, s3a, cassandra, native, ycsb"


def test_the_default_setup_builds_no_optional_part():
    """Without --test, setup.sh builds nothing the default job (Spark on a local directory) does not use."""
    text = SETUP.read_text()
    for part in ("jvm", "s3a", "cassandra", "native", "ycsb"):
        assert f"if wants {part}" in text, part
    assert 'wants() { [ "$want_test" = 1 ] || [ "$part" = "$1" ]; }' in text

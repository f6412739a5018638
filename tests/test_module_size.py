"""No module over 400 lines, Python or Rust (issue 39): a module that grows past it does more than one job; split
it by job (a family's helpers into its package, a test module's fixtures into a conftest or a shared session
service) rather than raise the limit."""

from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
LIMIT = 400
TREES = ("src", "tests", "benchmarks", "native/storbench-load/src", "hatch_build.py")


def modules() -> list[Path]:
    found = []
    for tree in TREES:
        path = ROOT / tree
        found += [path] if path.is_file() else [*path.rglob("*.py"), *path.rglob("*.rs")]
    return found


def test_every_module_is_at_most_400_lines():
    assert len(modules()) > 100  # the trees are where this test looks
    long = {str(p.relative_to(ROOT)): n for p in modules() if (n := len(p.read_text().splitlines())) > LIMIT}
    assert not long, f"over {LIMIT} lines: {long}"

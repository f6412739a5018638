"""Golden outputs: `compare --format json|md` on stored fixture runs stay byte-identical.

The fixture runs (tests/data/golden/runs) are stored run directories; the expected
outputs were written before the plugin refactor (issue 11) and must not change with
it. After a deliberate change of the output, rewrite them with
``STORBENCH_UPDATE_GOLDEN=1 pytest tests/report/test_golden.py`` and review the diff.
"""

import os
import shutil
from pathlib import Path

import pytest

from storbench import api
from storbench.results.store import ResultStore

GOLDEN = Path(__file__).resolve().parents[1] / "data" / "golden"
CASES = {"paper-000": ["sata-vendor-a", "pm7r-sas"], "families": ["cfg-a", "cfg-b"]}


@pytest.fixture(scope="module")
def store(tmp_path_factory):
    home = tmp_path_factory.mktemp("golden-home")
    shutil.copytree(GOLDEN / "runs", home / "runs")
    store = ResultStore(home)
    assert store.reindex() == 4
    return store


@pytest.mark.parametrize("fmt", ["json", "md"])
@pytest.mark.parametrize("case", sorted(CASES))
def test_compare_output_is_golden(store, case, fmt):
    text = api.render(api.compare(CASES[case], store), fmt, store).replace(str(store.home), "<HOME>")
    expected = GOLDEN / f"{case}.{fmt}"
    if os.environ.get("STORBENCH_UPDATE_GOLDEN"):
        expected.write_text(text)
    assert text == expected.read_text()

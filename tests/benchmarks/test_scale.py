"""What the scale benchmarks (benchmarks/scale_*.py, issue 28) check by behaviour, at small synthetic sizes: a
merge of many engine results has the direct merge's percentiles; a report of many nodes names the slowest and
maps every node; ``runs`` and the ETA read no manifest. No wall time is judged here (the benchmarks print it)."""

import json
import re
import sqlite3
import sys
from types import SimpleNamespace

import pytest

from storbench import api
from storbench.progress import expected_duration
from storbench.report import nodes
from storbench.results.store import ResultStore
from storbench.run.session import RunSession
from tests.benchmarks.quick import BENCHMARKS

sys.path.insert(0, str(BENCHMARKS))  # the benchmarks' own modules, as tests/benchmarks/test_harness.py reads harness
from scale_cluster import cluster_run  # noqa: E402
from scale_results import direct_result, mismatches, synthetic_results  # noqa: E402
from scale_stores import fill  # noqa: E402


@pytest.mark.real  # storbench-load merges (a child process, no service)
def test_a_merge_of_many_results_has_the_direct_merges_percentiles_and_series():
    from storbench.engines import native

    results = synthetic_results(40, 20)
    direct = native.merge_results([direct_result(results)])
    assert mismatches(native.merge_results(results), direct) == []
    # the comparison can fail: one process's histograms and seconds left out show in the figures
    assert any(m.startswith("read.latency") for m in mismatches(native.merge_results(results[:-1]), direct))


@pytest.fixture(scope="module")
def many_nodes_page(tmp_path_factory):
    store = ResultStore(tmp_path_factory.mktemp("nodes") / "home")
    run_id = cluster_run(store, 20, 120, slow=("worker-17",))
    return api.render(api.compare([run_id], store), "html", store)


def test_a_report_of_many_nodes_has_a_heat_map_row_per_node_with_the_slowest_named(many_nodes_page):
    page = many_nodes_page
    heat = page[page.index('data-metric="series:nodes"') :]
    heat = heat[: heat.index("</svg>")]
    rows = re.findall(r'class="tick"[^>]*>(worker-\d+) \(n\d+\)</text>', heat)
    assert rows == [f"worker-{k}" for k in range(1, 21)]  # every node, in natural order
    assert re.findall(r'font-weight="700">(worker-\d+)', heat) == ["worker-17"]  # the slowest, and only it, in red
    caption = re.search(r'<p class="slowest">(.*?)</p>', page).group(1)
    assert "worker-17 (n017)" in caption and caption.count("% below") == 1


def test_a_report_of_many_nodes_folds_the_tables_names_the_slowest_and_draws_no_bar_per_node(many_nodes_page):
    page = many_nodes_page
    assert page.count("<summary>All 20 nodes' figures</summary>") == 2  # one per operation
    assert re.search(
        r"slowest nodes</b> by maximum write MB/s \(median node [\d.,]+\): worker-17 \(n017\) "
        r"[\d.,]+ \(\d+% below\)</li>",
        page,
    )
    assert 'data-metric="nodes:fio-write::max_write_mbps"' not in page  # 20 groups of bars: left out
    table = page[page.index("All 20 nodes' figures") :]
    assert table.index(">worker-2 <") < table.index(">worker-10 <")


def test_slowest_names_only_nodes_ten_percent_below_the_median():
    assert nodes.slowest([("a", 100.0), ("b", 95.0), ("c", 101.0)]) == ([], 100.0)
    slow, median = nodes.slowest([("a", 100.0), ("b", 50.0), ("c", 101.0), ("d", 80.0), ("e", 100.0)])
    assert median == 100.0 and slow == [("b", 50.0, pytest.approx(50.0)), ("d", 80.0, pytest.approx(20.0))]

    assert nodes.slowest([("a", 1.0), ("b", 2.0)]) == ([], None)


@pytest.fixture
def filled(tmp_path):
    store = ResultStore(tmp_path / "home")
    return store, fill([store], 30, 5, labels=3)


def test_a_brief_listing_and_the_eta_read_no_manifest(filled, monkeypatch):
    store, ids = filled
    full = store.list_runs()

    def no_manifest(*_args, **_kwargs):
        raise AssertionError("a manifest was read")

    monkeypatch.setattr(ResultStore, "read_run", no_manifest)
    brief = store.list_runs(brief=True)

    def keys(r):
        return (
            r.run_id,
            r.label,
            r.suite,
            r.status,
            r.started,
            r.finished,
            r.path,
            r.host,
            r.manifest.get("scale"),
            r.manifest["config"].get("target"),
            r.manifest.get("repetitions"),
        )

    assert [keys(r) for r in brief] == [keys(r) for r in full] and [r.run_id for r in brief] == ids
    plan = SimpleNamespace(suite=SimpleNamespace(name="mixed"), scale="tiny", repetitions=3)
    assert RunSession._expected_s(SimpleNamespace(plan=plan, store=store), []) == 1200.0  # the newest, 20 min long
    assert expected_duration(brief, "mixed", "other-scale", 3, []) is None


def test_an_index_written_before_summaries_gains_the_column_and_lists_from_manifests(filled):
    store, ids = filled
    with sqlite3.connect(store.db_path) as db:  # as an index before issue 28: no summary column
        db.execute("ALTER TABLE runs DROP COLUMN summary")
    runs = ResultStore(store.home).list_runs(brief=True)
    assert [r.run_id for r in runs] == ids and runs[0].manifest["machine"]["cores"] == 64  # read in full
    with sqlite3.connect(store.db_path) as db:
        assert "summary" in {row[1] for row in db.execute("PRAGMA table_info(runs)")}
        assert db.execute("SELECT count(*) FROM runs WHERE summary IS NULL").fetchone()[0] == len(ids)
    json.loads(json.dumps([r.manifest for r in runs]))  # what `runs --json` prints stays serialisable

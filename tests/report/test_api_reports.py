"""Stored runs through the library entry points: api.compare, api.render and the per-run report."""

import csv
import io
import json

from storbench import api
from storbench.results.series import to_csv
from tests.analysis.factory import manifest, paper_runs, series_loader


def _store_runs(store):
    for run in paper_runs():
        fields = manifest(run.label)
        writer = store.create_run(
            run.run_id, {k: v for k, v in fields.items() if k not in ("schema_version", "run_id", "status")}
        )
        writer.update_manifest(spark_settings=fields["spark_settings"], software=fields["software"])
        writer.add_samples(run.samples)
        rows, windows = series_loader(run)
        writer.write_series(to_csv(rows), windows)
        writer.finish("succeeded")
    return [run.label for run in paper_runs()]


def test_compare_and_render_stored_runs(store):
    labels = _store_runs(store)
    comparison = api.compare(labels, store)
    assert [r.label for r in comparison.runs] == labels
    table = api.render(comparison, "table", store)
    assert "190% higher" in table and "17% faster" in table
    assert json.loads(api.render(comparison, "json", store))["comparable"] is True
    assert list(csv.DictReader(io.StringIO(api.render(comparison, "csv", store))))
    page = api.render(comparison, "html", store)
    assert 'data-metric="series:throughput"' in page and 'data-metric="max_read_mbps"' in page
    assert "SECRET" not in page + table


def test_per_run_report_files(store):
    _store_runs(store)
    run_id = paper_runs()[0].run_id
    path = api.write_run_report(run_id, store)
    page = path.read_text()
    assert path.name == "report.html" and "Run report: sata-vendor-a" in page
    assert 'data-metric="series:cpu"' in page and "join #3" in page
    assert "sata-vendor-a" in (path.parent / "report.md").read_text()

"""Published baselines: the data checks out against the seeds and the metric catalog, and the side-by-side says
the user's figures beside the paper's in its terms, labelled as published, with the hardware of both."""

import dataclasses
from pathlib import Path

import pytest

from storbench import api, cli
from storbench.analysis.compare import compare_runs
from storbench.analysis.metrics import CATALOG
from storbench.analysis.published import LABEL, published
from storbench.baselines import OVERALL, _paper, load, paper_ref, papers
from storbench.errors import InputError
from storbench.report.svg import esc
from storbench.workloads import all_workloads
from tests.analysis.factory import make_run, paper_runs
from tests.report.test_api_reports import _store_runs

SEEDS = Path(__file__).resolve().parents[2] / ".." / "shared" / "seeds"
# Samples some workloads record under another name: the TPCx-HS total of hsgen, hssort, hsvalidate (terasort.py).
SAMPLE_WORKLOADS = {"tpcx-hs"}
ALL = [(p, fig) for p in papers() for fig in load(p).figures]


def test_five_papers_each_with_figures_and_both_kinds_overall():
    assert papers() == ["000", "001", "002", "003", "004"]
    assert all(load(p).figures for p in papers())
    assert {fig.kind for _, fig in ALL} == {"absolute", "ratio"}


@pytest.mark.parametrize("paper,figure", ALL, ids=[f"{p}-{fig.id}" for p, fig in ALL])
def test_figure_names_a_real_metric_in_a_unit_that_converts(paper, figure):
    for workload, metric in figure.measures.items():
        assert workload in {OVERALL, *SAMPLE_WORKLOADS} or workload in all_workloads(), workload
        assert metric in CATALOG, metric
        if figure.kind == "absolute":
            assert figure.value_in(CATALOG[metric].unit) is not None, (figure.unit, CATALOG[metric].unit)


def test_every_source_text_is_in_the_seed_it_names():
    if not SEEDS.is_dir():
        pytest.skip(f"{SEEDS} is absent: the seeds are not shipped")
    for paper in papers():
        (seed,) = SEEDS.glob(f"{paper}_*.txt")
        text = seed.read_text()
        absent = [fig.id for fig in load(paper).figures if fig.source not in text]
        assert not absent, f"{seed.name}: source text not found for {absent}"


def test_stated_ratios_agree_with_the_papers_own_absolutes():
    checked = 0
    for paper in papers():
        p = load(paper)
        for fig in (f for f in p.figures if f.kind == "ratio"):
            ends = [
                next(
                    (
                        a
                        for a in p.figures
                        if a.kind == "absolute" and a.configuration == key and a.measures == fig.measures
                    ),
                    None,
                )
                for key in fig.of
            ]
            if ends[0] and ends[1]:
                computed = ends[0].value / ends[1].value
                assert abs(fig.ratio - computed) <= 0.01 + 0.02 * computed, (fig.id, fig.ratio, computed)
                checked += 1
    assert checked == 8  # paper 000's eight headlines against its summary table


def test_a_bad_file_fails_naming_the_figure():
    data = {
        "paper": "000",
        "title": "t",
        "publisher": "p",
        "configurations": {"a": {"name": "A", "hardware": "h"}, "b": {"name": "B", "hardware": "h"}},
        "figures": [
            {
                "id": "x",
                "quantity": "q",
                "where": "Table 1",
                "kind": "ratio",
                "of": ["a", "b"],
                "change": "50% higher",
                "ratio": 1.5,
                "measures": {"groupby": "completion_time"},
                "source": "it was 40% higher",
            }
        ],
    }
    with pytest.raises(ValueError, match="f.yaml figure 'x': change '50% higher' is not in its source"):
        _paper(data, "f.yaml")
    data["figures"][0].update(kind="absolute", configuration="a", value=3, unit="furlongs")
    with pytest.raises(ValueError, match="figure 'x': an absolute figure needs a number value and a unit"):
        _paper(data, "f.yaml")


def test_paper_references():
    assert paper_ref("paper:003") == "003" and paper_ref("3") == "003"
    with pytest.raises(InputError, match=r"^paper '999': no published baselines; papers: 000, 001, 002, 003, 004"):
        paper_ref("paper:999")


def test_two_stored_runs_beside_paper_000_in_its_terms(store):
    comparison = api.compare(_store_runs(store), store)
    text = api.beside_paper(comparison, "000")
    assert LABEL in text
    assert (
        "your pm7r-sas vs sata-vendor-a: 2.9× Maximum read throughput (all operations); paper 000, KIOXIA PM7-R "
        "Series 24G SAS SSDs vs Vendor A 6Gb/s SATA SSDs: 2.9× (“190% Higher”, Test Results Snapshot)"
    ) in text
    assert "0.83× Time to complete (repartition)" in text and "(“17% faster”, Workload 2 test analysis)" in text
    assert "paper 000, KIOXIA PM7-R Series 24G SAS SSDs: 3 × HPE ProLiant DL385" in text
    assert "yours, pm7r-sas: CPU: AMD EPYC 7543 32-Core Processor; Cores: 64" in text
    assert api.beside_paper(comparison, None) == text  # both runs of a paper 000 suite: shown unasked
    page = api.render(comparison, "html", store)
    assert "Published figures: paper 000" in page and esc(LABEL) in page and "6,369.34 MB/s" in page


def test_one_run_gets_the_absolutes_and_its_quotient():
    comparison = compare_runs(paper_runs()[:1])
    text = api.beside_paper(comparison, "000")
    row = next(line for line in text.splitlines() if "6,369.34 MB/s" in line)
    assert "0.34×" in row  # 2,192 of the run ÷ 6,369.34 published
    assert "The paper's ratios need two runs: storbench compare RUN_A RUN_B --paper 000" in text
    assert api.beside_paper(comparison, None) == ""  # one run, no paper named: the compare output stays as it was


def _ycsb_run(label, throughput):
    run = make_run(
        label,
        {
            ("ycsb-a", "ycsb_throughput_ops_s"): throughput,
            ("ycsb-a", "ycsb_ops_per_node_thread"): [v / 56 for v in throughput],
        },
        suite="ycsb-003",
        paper="003",
    )
    return dataclasses.replace(run, suite="ycsb-003")


def test_a_metric_the_run_lacks_is_one_line_and_the_rest_goes_on():
    comparison = compare_runs([_ycsb_run("hdd", [700.0, 720.0, 710.0]), _ycsb_run("qlc", [7000.0, 7200.0, 7100.0])])
    text = api.beside_paper(comparison, "003")
    assert any(
        line.split()[:3] == ["ycsb-a", "[OVERALL]", "Throughput(ops/sec)"] and "24,766 ops/s" in line
        for line in text.splitlines()
    )
    assert (
        "your qlc vs hdd: 10× [OVERALL] Throughput(ops/sec) (ycsb-a); paper 003, Ampere eMAG with Micron 5210 "
        "ION vs 10K RPM HDD: 17× (from its two figures, Table 3 (and Table 1, Micron 5210 ION); Table 1)" in text
    )
    missing = [line for line in text.splitlines() if "not in the runs" in line]
    assert missing[0].strip() == (
        "Operations per watt (ops_per_watt of ycsb-a, ycsb-b, ycsb-c, ycsb-d, ycsb-f): "
        "not in the runs; the paper's figures of it are not shown"
    )
    assert any(
        line.strip().startswith("Database operations per second (ycsb_throughput_ops_s of ycsb-b, ycsb-c")
        for line in missing
    )


def test_a_run_with_none_of_the_papers_metrics_is_refused_in_one_line():
    comparison = compare_runs(paper_runs()[:1])
    with pytest.raises(InputError) as caught:
        published(comparison, load("003"))
    message = str(caught.value)
    assert "\n" not in message and message.startswith(
        "paper 003: sata-vendor-a (spark-transforms) is not a run of its suites"
    )


def test_cli_baselines_and_compare_with_a_paper(store, capsys):
    labels = _store_runs(store)
    home = ["--results", str(store.home)]
    assert cli.main([*home, "baselines", "004"]) == 0
    out = capsys.readouterr().out
    assert "write-avg-iops-change" in out and "58% increase" in out and LABEL in out
    assert cli.main([*home, "compare", labels[0], "paper:000"]) == 0
    assert "Published figures: paper 000" in capsys.readouterr().out
    assert cli.main([*home, "compare", labels[0], "paper:999"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "paper '999': no published baselines" in err
    assert cli.main([*home, "compare", labels[0], "--paper", "000", "--format", "json"]) == 2
    assert "show in the table (--format table)" in capsys.readouterr().err

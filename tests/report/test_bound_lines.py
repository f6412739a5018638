"""What limited each operation on one machine (a run without nodes, the case N=1): a line under each operation's
table in `show`, Markdown and HTML, and one per timed operation in the summary after a run; runs with nodes say
it per node (tests/report/test_nodes_report.py), never from the machine's figures."""

from storbench.analysis.compare import compare_runs
from storbench.report import render
from storbench.results.model import Sample
from tests.analysis.factory import make_run
from tests.report.test_nodes_report import _cluster_run

CPU_LINE = "bound by: CPU (CPU 97%, devices ≤ 5% busy): a faster disk would not change this figure"
DISK_LINE = "bound by: device (device 99% busy): the storage set this figure"


def _machine_run(label, cpu=(96.0, 97.0, 98.0)):
    """groupby held by the CPU, join by its device, over three repetitions."""
    return make_run(
        label,
        {
            ("groupby", "completion_time"): [5.0, 4.0, 4.5],
            ("groupby", "avg_cpu_pct"): list(cpu),
            ("groupby", "max_util_pct"): [5.2, 3.1, 4.0],
            ("join", "completion_time"): [9.0, 9.5, 9.2],
            ("join", "avg_cpu_pct"): [40.0, 41.0, 39.0],
            ("join", "max_util_pct"): [99.0, 98.0, 97.0],
            ("join", "max_write_mbps"): [180.0, 175.0, 178.0],
        },
    )


def _section(text, start, end):
    return text[text.index(start) : text.index(end, text.index(start))]


def test_each_operation_of_a_run_on_one_machine_says_what_held_it_in_every_format():
    comparison = compare_runs([_machine_run("laptop")])
    table = render(comparison, "table")
    assert CPU_LINE in _section(table, "\ngroupby\n", "\n\n") and DISK_LINE in _section(table, "\njoin\n", "\n\n")
    assert table.count("bound by: ") == 2  # one per operation: none for the overall group
    markdown = render(comparison, "md")
    assert f"- {CPU_LINE}" in _section(markdown, "### groupby", "### join") and f"- {DISK_LINE}" in markdown
    html = render(comparison, "html")
    assert "What limited each operation" in html and f"<b>groupby</b> {CPU_LINE}" in html
    summary = render(comparison, "summary")
    lines = [line.split() for line in summary.splitlines()]
    assert ["groupby", *CPU_LINE.removeprefix("bound by: ").split()] in lines
    assert ["join", *DISK_LINE.removeprefix("bound by: ").split()] in lines


def test_a_compare_names_the_run_of_each_line_and_a_run_without_cpu_or_device_figures_says_nothing():
    bare = make_run("bare", {("groupby", "completion_time"): [5.0], ("groupby", "max_write_mbps"): [20.0]})
    table = render(compare_runs([_machine_run("a"), _machine_run("b", cpu=(50.0, 55.0, 52.0)), bare]), "table")
    groupby = _section(table, "\ngroupby\n", "\n\n")
    assert f"a: {CPU_LINE}" in groupby and "b: bound by: nothing at capacity" in groupby
    assert "bare: bound by" not in table  # MB/s alone, with no limit stated, say nothing of capacity


def test_a_run_with_nodes_says_it_per_node_and_its_summary_too(tmp_path):
    cluster = _cluster_run("cluster", tmp_path, [400.0, 300.0])
    cluster.samples += [Sample("fio-write", "avg_cpu_pct", 97.0, "%", 1, {"node": f"worker-{k}"}) for k in (1, 2)]
    cluster.samples.append(Sample("fio-write", "avg_cpu_pct", 97.0, "%", 1))  # the machine storbench ran on
    comparison = compare_runs([cluster])
    table = render(comparison, "table")
    said = [line.strip() for line in table.splitlines() if line.strip().startswith("bound by: ")]
    assert said == [line for line in said if "on every node" in line] and len(said) == 1, said
    summary = render(comparison, "summary")
    assert "fio-write  CPU on every node (worker-1 CPU 97%" in summary

"""Cross-check drivers (rados bench vs fio's rados engine, YCSB core vs the native engine) time the same
scope: a window narrowed to the tool's own operation phase, and compare sets runs apart whose rules differ.
Without a service; the drivers' recorded rules are checked on real services in tests/workloads/rados and
tests/workloads/ycsb."""

from storbench.analysis.compare import compare_runs
from storbench.context import RunContext, Window
from storbench.targets import TargetOptions, parse_target
from tests.analysis.factory import make_run


def _ctx(tmp_path) -> RunContext:
    return RunContext(run_id="r", target=parse_target(str(tmp_path), TargetOptions(tmp_path)), root_uri="")


def test_a_tools_own_clock_narrows_the_window_to_its_operations(tmp_path):
    ctx = _ctx(tmp_path)
    ctx.window.span = Window(10.0, 15.0)  # the process ran 5 s; the tool timed 3.5 s of operations
    ctx.tool_window(3.5)
    assert (ctx.window.span.start, ctx.window.span.end, ctx.window.rules) == (11.5, 15.0, {"timing": "operations"})
    ctx.tool_window(60.0)  # never wider than the process
    assert ctx.window.span.start == 11.5
    whole = _ctx(tmp_path)
    whole.window.span = Window(10.0, 15.0)
    whole.tool_window(None)  # no clock printed: the process's window, said so
    assert (whole.window.span.start, whole.window.rules) == (10.0, {"timing": "process"})


def test_compare_sets_apart_a_cross_check_run_under_other_cache_or_timing_rules():
    values = {("rados-bench-seq", "rados_bw_mbps"): [900.0, 910.0, 905.0]}
    rules = {"rados-bench-seq": {"cache": "cold", "cache_drop": "osd caches", "timing": "operations"}}
    rados = make_run("rados", values, window_rules=rules)
    fio = make_run("fio", values, window_rules={"rados-bench-seq": {**rules["rados-bench-seq"]}})
    assert compare_runs([rados, fio]).comparable
    warm = make_run(
        "warm", values, window_rules={"rados-bench-seq": {"cache": "warm", "cache_drop": "none", "timing": "process"}}
    )
    c = compare_runs([rados, warm])
    assert not c.comparable
    assert [(d.kind, d.key, d.values) for d in c.differences] == [
        ("window", "rados-bench-seq.cache", ["cold", "warm"]),
        ("window", "rados-bench-seq.cache_drop", ["osd caches", "none"]),
        ("window", "rados-bench-seq.timing", ["operations", "process"]),
    ]
    assert "window rados-bench-seq.timing: operations (rados) vs process (warm)" in c.warnings[0]

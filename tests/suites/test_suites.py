import pytest

from storbench.errors import InputError
from storbench.suites import builtin_suites, load_suite
from storbench.suites.loader import parse_suite
from storbench.suites.model import parse_count
from storbench.workloads.base import get_workload

GOOD = """
name: mini
repetitions: 2
scales:
  tiny: {rows: 100, partitions: 2}
params: {format: parquet}
prepare: [datagen]
workloads:
  - groupby
  - {workload: repartition, params: {repartition_partitions: 7}}
"""


def test_every_builtin_suite_has_the_three_named_scales():
    suites = builtin_suites()
    assert "spark-transforms" in suites
    for name in suites:
        suite = load_suite(name)
        assert {"tiny", "small", "paper"} <= set(suite.scales)


def test_paper_scale_is_the_papers_own_size():
    suite = load_suite("spark-transforms")
    scale, params, _ = suite.resolve("paper", {})
    assert (scale, params["rows"], params["partitions"]) == ("paper", 10_000_000_000, 1000)
    assert [e.workload for e in suite.workloads] == ["groupby", "repartition", "join"]


def test_flush_is_on_below_the_paper_scale_and_off_at_it_unless_asked():
    suite = load_suite("spark-transforms")
    for scale, flush in (("tiny", True), ("small", True), ("5M", True), ("paper", False)):
        _, params, per = suite.resolve(scale, {})
        assert params["flush"] is flush and per["datagen"]["flush"] is flush, scale
        assert "flush" not in per["groupby"]  # only the workloads that write have it
    assert suite.resolve("paper", {"flush": "true"})[1]["flush"] is True  # --set wins


def test_resolve_layers_suite_scale_entry_and_overrides():
    suite = parse_suite(GOOD, "mini.yaml")
    scale, params, per = suite.resolve(None, {"seed": "7"})
    assert scale == "tiny"
    assert params["rows"] == 100 and params["format"] == "parquet" and params["seed"] == 7
    assert per["repartition"]["repartition_partitions"] == 7
    assert "repartition_partitions" not in per["groupby"]


def test_explicit_scale_sets_rows_and_scales_partitions():
    suite = load_suite("spark-transforms")
    scale, params, _ = suite.resolve("50M", {})
    assert scale == "50000000"
    assert params["rows"] == 50_000_000 and params["partitions"] == 5


@pytest.mark.parametrize(
    "text,value",
    [
        ("5000", 5000),
        ("5_000", 5000),
        ("5k", 5000),
        ("2M", 2_000_000),
        ("1e6", 1_000_000),
        ("10B", 10_000_000_000),
        ("huge", None),
        ("0", None),
    ],
)
def test_parse_count(text, value):
    assert parse_count(text) == value


@pytest.mark.parametrize(
    "text,message",
    [
        ("name: x\nworkloads: [groupby]\nbogus: 1\n", "x.yaml: unknown key 'bogus'; allowed: name,"),
        ("name: x\nworkloads: [nosuch]\n", "x.yaml: workloads: unknown workload 'nosuch'; known: broadcast-join,"),
        ("name: x\nworkloads: [groupby]\nrepetitions: 0\n", "repetitions must be at least 1"),
        ("name: x\nworkloads: [groupby]\nrepetitions: three\n", "key 'repetitions' must be a int"),
        ("name: x\n", "missing required key 'workloads'"),
        ("name: x\nworkloads: [groupby\n", "x.yaml:3: not valid YAML"),
        ("name: x\nworkloads: [{workload: groupby, extra: 1}]\n", "workloads[0] must be a workload name"),
    ],
)
def test_bad_suite_files_name_file_key_and_allowed(text, message):
    with pytest.raises(InputError) as info:
        parse_suite(text, "x.yaml")
    assert message in str(info.value)


def test_unknown_parameter_names_the_allowed_ones():
    suite = parse_suite(GOOD.replace("{format: parquet}", "{fromat: parquet}"), "mini.yaml")
    with pytest.raises(InputError, match=r"mini.yaml: unknown parameter 'fromat'.*allowed: cold_cache, flush, format"):
        suite.resolve(None, {})


@pytest.mark.parametrize(
    "override,message",
    [
        ({"format": "orc"}, "--set: format='orc' is not allowed; allowed: csv, parquet"),
        ({"rows": "many"}, "--set: rows='many' must be an integer"),
        ({"rows": "0"}, "--set: rows=0 is below the minimum 1"),
        ({"nope": "1"}, "--set: unknown parameter 'nope'"),
    ],
)
def test_bad_overrides(override, message):
    with pytest.raises(InputError) as info:
        load_suite("spark-transforms").resolve(None, override)
    assert message in str(info.value)


def test_unknown_suite_and_scale():
    with pytest.raises(InputError, match="unknown suite or workload 'nope'; built-in suites: .*spark-transforms"):
        load_suite("nope")
    with pytest.raises(InputError, match="--scale 'medium'.*allowed: tiny, small, paper or a rows count"):
        load_suite("spark-transforms").resolve("medium", {})


def test_a_workload_runs_alone_after_what_it_reads():
    """Issue 17: `storbench run WORKLOAD` is a one-entry suite, its inputs made first, untimed."""
    alone = load_suite("teravalidate")
    assert [e.workload for e in alone.workloads] == ["teravalidate"] and alone.repetitions == 1
    assert [e.workload for e in alone.prepare] == ["teragen", "terasort"]
    assert alone.source == "workload teravalidate (sizes of suite terasort)"
    assert set(alone.scales) == {"defaults", "tiny", "small", "paper"}  # its defaults, the home suite's sizes
    assert [e.workload for e in load_suite("objects-get").prepare] == []  # writes its own objects
    assert [e.workload for e in load_suite("groupby").prepare] == ["datagen"]
    assert load_suite("terasort").name == "terasort" and len(load_suite("terasort").workloads) == 3  # the suite wins


def _alone(name, scale=None, **overrides):
    suite = load_suite(name)
    scale, _, per = suite.resolve(scale, overrides)
    return scale, per, suite.differences(scale, per, overrides)


def test_a_workload_by_name_runs_at_its_own_defaults_not_a_suites_sweep():
    """Issue 26: objects-get by name ran cosbench-001's tiny scale, a drivers sweep 1,2, without saying so."""
    scale, per, first_line = _alone("objects-get", concurrency="16")
    defaults = {p.name: p.coerce(p.default, "test") for p in get_workload("objects-get").params}
    assert scale == "defaults" and per["objects-get"] == {**defaults, "concurrency": 16}
    assert per["objects-get"]["sweep"] == "" and per["objects-get"]["sweep_over"] == "concurrency"
    assert first_line == "objects-get: concurrency=16 (default 8)"
    assert _alone("objects-get")[2] == "objects-get: defaults"
    assert _alone("objects-get", concurrency="8")[2] == "objects-get: defaults"  # the default, said once


def test_a_scale_asked_for_gives_a_workload_alone_only_its_sizes():
    """--scale takes the home suite's sizes (cosbench-001: size, objects, duration_s), never its design (the
    drivers sweep, the concurrency); a row count sets the size parameter, partitions no fewer than the default."""
    _, per, first_line = _alone("objects-get", "tiny")
    got = per["objects-get"]
    assert (got["size"], got["objects"], got["duration_s"]) == ("8m", 8, 3.0)
    assert (got["sweep"], got["sweep_over"], got["concurrency"]) == ("", "concurrency", 8)
    assert first_line == (
        "objects-get: size=8m (default 4k; cosbench-001's tiny scale), objects=8 (default 100; "
        "cosbench-001's tiny scale), duration_s=3.0 (default 10.0; cosbench-001's tiny scale)"
    )
    scale, per, first_line = _alone("groupby", "20K", partitions="2")
    assert scale == "20000" and per["groupby"]["rows"] == per["datagen"]["rows"] == 20_000
    assert first_line == "groupby: rows=20000 (default 200000; --scale 20000), partitions=2 (default 4)"
    assert _alone("groupby", "5G")[1]["groupby"]["partitions"] == 500  # one per 10M rows, as the suite has it
    assert _alone("teragen", "paper")[1]["teragen"]["flush"] is False  # the paper scale's rule (PAPER_SCALE)


def test_sizes_name_only_keys_a_scale_sets():
    text = "name: s\nscales: {tiny: {rows: 10}}\nsizes: [rows, bogus]\nworkloads: [groupby]\n"
    with pytest.raises(InputError, match=r"^s.yaml: sizes names bogus, which no scale sets$"):
        parse_suite(text, "s.yaml")

"""TPC-DS query texts, Spark dialect adjustments, query selection and the result checksum (no Spark)."""

import datetime
import decimal

import pytest

from storbench.errors import InputError
from storbench.workloads.tpcds import queries as q
from storbench.workloads.tpcds import permutation
from storbench.workloads.tpcds.check import ResultSummary, mismatch, summarize


def test_104_queries_as_paper_001_counts_them():
    names = q.query_names()
    assert len(names) == 104 and len(set(names)) == 104
    for template in (14, 23, 24, 39):
        assert f"q{template}a" in names and f"q{template}b" in names and f"q{template}" not in names
    assert names[0] == "q1" and names[-1] == "ss_max"
    assert list(q.all_texts()) == names


def test_texts_come_from_duckdb_and_second_statements_are_derived():
    duck, texts = q.duckdb_texts(), q.all_texts()
    assert texts["q14a"] == duck[14] and texts["q23b"] == duck[23] and texts["q24a"] == duck[24]
    assert texts["q1"] == duck[1] and texts["q99"] == duck[99]
    # 14b: the same common table expressions, then this year's vs last year's store sales of one week
    head = duck[14][: duck[14].rindex("\nSELECT channel")]
    assert texts["q14b"].startswith(head) and "this_year" in texts["q14b"] and "d_dom = 11" in texts["q14b"]
    # 23a: the same CTEs, then the total of catalog and web sales
    assert "SELECT sum(sales) AS total_sales" in texts["q23a"] and "best_ss_customer" in texts["q23a"]
    # 24b: the template's second colour; 39b: the extra coefficient-of-variation filter
    assert texts["q24b"] == duck[24].replace("i_color = 'peach'", f"i_color = '{q.Q24B_COLOR}'")
    assert "AND inv1.cov > 1.5" in texts["q39b"] and "inv1.cov > 1.5" not in texts["q39a"]
    assert texts["ss_max"].count("max(") == len(q.STORE_SALES_COLUMNS)


def test_to_spark_backquotes_double_quoted_aliases_only():
    text = "SELECT count(*) AS \"order count\", 'say \"hi\"' AS x, 'it''s' y FROM t;\n"
    assert q.to_spark(text) == "SELECT count(*) AS `order count`, 'say \"hi\"' AS x, 'it''s' y FROM t"
    assert '"' not in q.to_spark(q.all_texts()["q16"])
    assert "`order count`" in q.to_spark(q.all_texts()["q16"])
    for text in q.spark_texts(q.query_names()).values():
        assert not text.endswith(";") and '"' not in text


def test_query_selection():
    assert q.select_queries(["all"]) == q.query_names()
    io = q.select_queries(["io"])
    assert len(io) == 56 and "q24a" in io and "q39b" in io and "q3" in io and "q1" not in io  # 54 templates
    assert q.select_queries(["q14", "q3", "Q3", "ss_max"]) == ["q14a", "q14b", "q3", "ss_max"]
    for bad in ("q100", "q14c", "q0", "store_sales"):
        with pytest.raises(InputError, match="unknown query"):
            q.select_queries([bad])


def test_stream_orders_are_seeded_permutations():
    names = q.query_names()
    first, second = permutation(names, 7, 2, 1), permutation(names, 7, 2, 2)
    assert sorted(first) == sorted(names) and first != second and first != names
    assert permutation(names, 7, 2, 1) == first  # the same seed gives the same order
    assert permutation(names, 8, 2, 1) != first


def test_checksum_tolerates_rounding_but_not_wrong_values():
    spark_rows = [("a", decimal.Decimal("12.345679"), 3, datetime.date(2000, 1, 2)), ("b", None, 4, None)]
    duck_rows = [("b", None, 4, None), ("a", 12.3456789, 3, datetime.date(2000, 1, 2))]
    assert mismatch(summarize(duck_rows), summarize(spark_rows)) is None  # order-insensitive, 1e-6 relative
    assert "rows" in mismatch(summarize(duck_rows), summarize(spark_rows[:1]))
    wrong = [("a", 12.3456789, 3, datetime.date(2000, 1, 2)), ("c", None, 4, None)]
    assert "checksum" in mismatch(summarize(duck_rows), summarize(wrong))
    off = [("a", 12.5, 3, datetime.date(2000, 1, 2)), ("b", None, 4, None)]
    assert "sum" in mismatch(summarize(duck_rows), summarize(off))
    nulls = [("a", 12.3456789, None, datetime.date(2000, 1, 2)), ("b", None, 4, None)]
    assert "NULLs" in mismatch(summarize(duck_rows), summarize(nulls))
    summary = summarize(spark_rows)
    assert ResultSummary.from_dict(summary.to_dict()) == summary and len(summary.checksum) == 8


def test_a_query_without_a_reference_says_why():
    from storbench.workloads.tpcds.outcomes import checked, references

    params = {"queries": ["q3", "q7", "q42"], "check_queries": ["q3", "q42", "q96"]}
    assert checked(params) == ["q3", "q42"]
    answers = {"q3": {"summary": {"rows": 1}}, "q42": {"error": "OutOfMemoryException: …"}}
    local = references(answers, ["q3", "q7", "q42"], ["q3", "q42"], 0.01, True, "file:///d", 1.0)
    assert local == {
        "q3": answers["q3"],
        "q7": {"why": "no reference answer: not in check_queries"},
        "q42": answers["q42"],
    }  # DuckDB's error: streams.py says "DuckDB failed: …"
    paper = references({}, ["q3"], ["q3"], 100, True, "file:///d", 1.0)
    assert paper == {"q3": {"why": "no reference answer: scale factor 100 is above check_max_sf=1"}}
    remote = references({}, ["q3"], ["q3"], 0.01, False, "s3a://b/d", 1.0)
    assert remote == {"q3": {"why": "no reference answer: DuckDB cannot read s3a://b/d from this machine"}}

"""The 104 TPC-DS queries of paper 001, their texts taken at run time from DuckDB's tpcds extension.

DuckDB (``duckdb==1.5.5`` with the ``duckdb-extension-tpcds`` wheel) ships one statement per
template, 99 in all: ``tpcds_queries()``. Paper 001 counts 104, as the TPC-DS v2.4 kit for Spark
(spark-sql-perf) does: the templates 14, 23, 24 and 39 have two statements each (99 + 4 = 103),
plus ``ss_max``, a full scan of store_sales with a count and the maximum of every column.

The four second statements are derived here, by code, from DuckDB's first ones (the common
table expressions are reused verbatim, the template's other final statement is appended),
and ``ss_max`` is built from the store_sales schema. Each derivation checks the text it starts
from, so a changed package fails loudly instead of running a different query.

Spark needs one change to DuckDB's dialect: double-quoted column aliases (``AS "order count"``)
become back-quoted identifiers; and two session settings: ANSI mode off (division by zero gives
NULL, as in DuckDB and in the Spark 3.0 of the paper) and the cost-based optimizer on (it uses
the statistics collected up front; without them Spark broadcasts the fixed-size
customer_demographics table and q10, q35 and q69 fail on a 2 GB driver).
"""

from __future__ import annotations

import re
from functools import lru_cache
from pathlib import Path
from typing import Any

from storbench.errors import EngineError, InputError

TWO_STATEMENT_TEMPLATES = (14, 23, 24, 39)
# Paper 001, note 10: "the following 54 i/o intensive TPC-DS queries" (templates; q24 and q39
# have two statements each, so the subset runs 56 statements).
IO_TEMPLATES = (
    3,
    7,
    12,
    13,
    15,
    17,
    19,
    20,
    21,
    24,
    25,
    26,
    27,
    28,
    29,
    31,
    32,
    34,
    39,
    40,
    42,
    43,
    45,
    46,
    48,
    49,
    51,
    52,
    55,
    56,
    60,
    63,
    64,
    65,
    66,
    68,
    71,
    73,
    75,
    76,
    79,
    82,
    83,
    84,
    85,
    87,
    88,
    89,
    90,
    91,
    92,
    93,
    96,
    97,
)
SESSION_CONF = {"spark.sql.ansi.enabled": "false", "spark.sql.cbo.enabled": "true"}
STORE_SALES_COLUMNS = (
    "ss_sold_date_sk",
    "ss_sold_time_sk",
    "ss_item_sk",
    "ss_customer_sk",
    "ss_cdemo_sk",
    "ss_hdemo_sk",
    "ss_addr_sk",
    "ss_store_sk",
    "ss_promo_sk",
    "ss_ticket_number",
    "ss_quantity",
    "ss_wholesale_cost",
    "ss_list_price",
    "ss_sales_price",
    "ss_ext_discount_amt",
    "ss_ext_sales_price",
    "ss_ext_wholesale_cost",
    "ss_ext_list_price",
    "ss_ext_tax",
    "ss_coupon_amt",
    "ss_net_paid",
    "ss_net_paid_inc_tax",
    "ss_net_profit",
)
Q24B_COLOR = "chiffon"  # the template's COLOR.2 (any colour other than COLOR.1 is a valid substitution)
Q14B_DAY = 11  # the template's DAY, as in the qualification queries


def query_names() -> list[str]:
    """The 104 names in template order: q1 … q14a, q14b … q99, ss_max."""
    names = []
    for number in range(1, 100):
        names += [f"q{number}a", f"q{number}b"] if number in TWO_STATEMENT_TEMPLATES else [f"q{number}"]
    return names + ["ss_max"]


def _template_names(number: int) -> list[str]:
    return [f"q{number}a", f"q{number}b"] if number in TWO_STATEMENT_TEMPLATES else [f"q{number}"]


def select_queries(spec: list[str], where: str = "--set") -> list[str]:
    """Query names from a ``queries`` parameter: ``all``, ``io`` or names (``q14`` = q14a and q14b)."""
    known = query_names()
    picked: list[str] = []
    for item in spec or ["all"]:
        name = item.strip().lower()
        if name == "all":
            picked += known
        elif name == "io":
            picked += [n for t in IO_TEMPLATES for n in _template_names(t)]
        elif name in known:
            picked.append(name)
        elif re.fullmatch(r"q\d+", name) and int(name[1:]) in TWO_STATEMENT_TEMPLATES:
            picked += _template_names(int(name[1:]))
        else:
            raise InputError(
                f"{where}: unknown query {item!r} in queries; allowed: all, io, q1 … q99 "
                f"(q14, q23, q24, q39 as …a/…b or both), ss_max"
            )
    return list(dict.fromkeys(picked))


def _extension_path() -> Path:
    try:
        import duckdb_extension_tpcds
    except ImportError:
        raise EngineError(
            "the duckdb-extension-tpcds package is not installed; run the set-up command from the README"
        ) from None
    import duckdb

    found = list(Path(duckdb_extension_tpcds.__path__[0]).glob(f"extensions/v{duckdb.__version__}/*.duckdb_extension"))
    if not found:
        raise EngineError(
            f"duckdb-extension-tpcds has no extension for duckdb {duckdb.__version__}; "
            f"install matching versions (see pyproject.toml)"
        )
    return found[0]


def duckdb_connect(database: str = ":memory:", threads: int | None = None) -> Any:
    """A DuckDB connection with the tpcds extension loaded from the installed wheel (no network)."""
    try:
        import duckdb
    except ImportError:
        raise EngineError("duckdb is not installed; run the set-up command from the README") from None
    con = duckdb.connect(database)
    con.execute(f"INSTALL '{_extension_path()}'")
    con.execute("LOAD tpcds")
    if threads:
        con.execute(f"SET threads = {int(threads)}")
    return con


@lru_cache(maxsize=1)
def duckdb_texts() -> dict[int, str]:
    """Template number → DuckDB's statement, straight from ``tpcds_queries()``."""
    con = duckdb_connect()
    try:
        rows = con.execute("SELECT query_nr, query FROM tpcds_queries() ORDER BY query_nr").fetchall()
    finally:
        con.close()
    texts = {int(number): str(text) for number, text in rows}
    if sorted(texts) != list(range(1, 100)):
        raise EngineError(f"DuckDB's tpcds_queries() returned {len(texts)} templates, expected 1 to 99")
    return texts


def _final_select(text: str, template: int) -> tuple[str, str]:
    """(the WITH … part, the final top-level SELECT) of a statement laid out as DuckDB ships it."""
    starts = [m.start() for m in re.finditer(r"(?m)^SELECT\b", text)]
    if not text.lstrip().upper().startswith("WITH") or not starts:
        raise EngineError(
            f"query {template}: DuckDB's text has an unexpected shape; cannot derive its second statement"
        )
    return text[: starts[-1]], text[starts[-1] :]


def _need(pattern: str, text: str, template: int) -> re.Match[str]:
    match = re.search(pattern, text)
    if match is None:
        raise EngineError(f"query {template}: DuckDB's text lacks {pattern!r}; cannot derive its second statement")
    return match


def _q14b(first: str) -> str:
    head, _ = _final_select(first, 14)
    year = int(_need(r"d_year BETWEEN (\d+) AND \1 \+ 2", head, 14).group(1))

    def channel(alias: str, year_expr: str) -> str:
        return (
            f"  (SELECT 'store' channel, i_brand_id, i_class_id, i_category_id,\n"
            f"          sum(ss_quantity*ss_list_price) sales, count(*) number_sales\n"
            f"   FROM store_sales, item, date_dim\n"
            f"   WHERE ss_item_sk IN (SELECT ss_item_sk FROM cross_items)\n"
            f"     AND ss_item_sk = i_item_sk\n"
            f"     AND ss_sold_date_sk = d_date_sk\n"
            f"     AND d_week_seq =\n"
            f"       (SELECT d_week_seq FROM date_dim\n"
            f"        WHERE d_year = {year_expr} AND d_moy = 12 AND d_dom = {Q14B_DAY})\n"
            f"   GROUP BY i_brand_id, i_class_id, i_category_id\n"
            f"   HAVING sum(ss_quantity*ss_list_price) > (SELECT average_sales FROM avg_sales)) {alias}"
        )

    columns = ",\n       ".join(
        f"{side}.{col} {prefix}_{name}"
        for side, prefix in (("this_year", "ty"), ("last_year", "ly"))
        for col, name in (
            ("channel", "channel"),
            ("i_brand_id", "brand"),
            ("i_class_id", "class"),
            ("i_category_id", "category"),
            ("sales", "sales"),
            ("number_sales", "number_sales"),
        )
    )
    return (
        f"{head}SELECT {columns}\nFROM\n{channel('this_year', f'{year}+1')},\n{channel('last_year', str(year))}\n"
        "WHERE this_year.i_brand_id = last_year.i_brand_id\n"
        "  AND this_year.i_class_id = last_year.i_class_id\n"
        "  AND this_year.i_category_id = last_year.i_category_id\n"
        "ORDER BY this_year.channel NULLS FIRST, this_year.i_brand_id NULLS FIRST,\n"
        "         this_year.i_class_id NULLS FIRST, this_year.i_category_id NULLS FIRST\n"
        "LIMIT 100;\n"
    )


def _q23a(second: str) -> str:
    """DuckDB's 23 is the template's per-customer statement; the first one totals the sales."""
    head, final = _final_select(second, 23)
    match = _need(r"d_year = (\d+)\s+AND d_moy = (\d+)", final, 23)
    year, month = match.group(1), match.group(2)

    def channel(prefix: str, table: str, customer: str) -> str:
        return (
            f"   SELECT {prefix}_quantity*{prefix}_list_price sales\n"
            f"   FROM {table}, date_dim\n"
            f"   WHERE d_year = {year}\n"
            f"     AND d_moy = {month}\n"
            f"     AND {prefix}_sold_date_sk = d_date_sk\n"
            f"     AND {prefix}_item_sk IN (SELECT item_sk FROM frequent_ss_items)\n"
            f"     AND {prefix}_{customer}_customer_sk IN (SELECT c_customer_sk FROM best_ss_customer)\n"
        )

    return (
        f"{head}SELECT sum(sales) AS total_sales\nFROM\n  (\n{channel('cs', 'catalog_sales', 'bill')}"
        f"   UNION ALL\n{channel('ws', 'web_sales', 'bill')}  ) sq4\nLIMIT 100;\n"
    )


def _q24b(first: str) -> str:
    match = _need(r"i_color = '([a-z]+)'", first, 24)
    if match.group(1) == Q24B_COLOR:
        raise EngineError(f"query 24: DuckDB's first statement already uses the colour {Q24B_COLOR!r}")
    return first[: match.start()] + f"i_color = '{Q24B_COLOR}'" + first[match.end() :]


def _q39b(first: str) -> str:
    match = _need(r"AND inv2\.d_moy\s*=\s*1\s*\+\s*1", first, 39)
    return first[: match.end()] + "\n  AND inv1.cov > 1.5" + first[match.end() :]


def _ss_max() -> str:
    parts = [
        "count(*) AS total",
        "count(ss_sold_date_sk) AS not_null_total",
        "count(DISTINCT ss_sold_date_sk) AS unique_days",
    ]
    parts += [f"max({column}) AS max_{column}" for column in STORE_SALES_COLUMNS]
    return "SELECT " + ",\n       ".join(parts) + "\nFROM store_sales;\n"


@lru_cache(maxsize=1)
def all_texts() -> dict[str, str]:
    """Query name → its statement in DuckDB's dialect (what DuckDB runs for the reference answers)."""
    duck = duckdb_texts()
    texts: dict[str, str] = {}
    for number in range(1, 100):
        text = duck[number]
        if number == 14:
            texts.update(q14a=text, q14b=_q14b(text))
        elif number == 23:
            texts.update(q23a=_q23a(text), q23b=text)
        elif number == 24:
            texts.update(q24a=text, q24b=_q24b(text))
        elif number == 39:
            texts.update(q39a=text, q39b=_q39b(text))
        else:
            texts[f"q{number}"] = text
    texts["ss_max"] = _ss_max()
    assert list(texts) == query_names()
    return texts


def to_spark(text: str) -> str:
    """DuckDB's statement in Spark SQL: no trailing ';', double-quoted aliases back-quoted.

    Single-quoted string literals are left as they are (a '"' inside one stays a quote).
    """
    out, i, n = [], 0, len(text)
    while i < n:
        ch = text[i]
        if ch == "'":  # a string literal, '' being an escaped quote inside it
            j = i + 1
            while j < n:
                if text[j] == "'" and j + 1 < n and text[j + 1] == "'":
                    j += 2
                    continue
                if text[j] == "'":
                    break
                j += 1
            out.append(text[i : j + 1])
            i = j + 1
        elif ch == '"':
            j = text.find('"', i + 1)
            if j < 0:
                raise ValueError("unbalanced double quote in query text")
            out.append("`" + text[i + 1 : j].replace("`", "``") + "`")
            i = j + 1
        else:
            out.append(ch)
            i += 1
    return "".join(out).strip().rstrip(";").strip()


def spark_texts(names: list[str]) -> dict[str, str]:
    texts = all_texts()
    return {name: to_spark(texts[name]) for name in names}

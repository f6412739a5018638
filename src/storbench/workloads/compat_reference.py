"""pyspark-benchmark's own DataFrame calls, rebuilt from their checked-in transcription.

``tests/data/compat/pyspark-benchmark.json`` transcribes the reference's ``generate-data.py`` and
``benchmark-shuffle.py`` call for call. These functions turn that description back into the
reference's DataFrames, so the plan test (tests/workloads/test_compat_reference.py) and the
compat benchmark (benchmarks/compat_vs_default.py) run the reference itself, not storbench's
compat workloads, beside storbench.
"""

from __future__ import annotations

import json
import timeit
import uuid
from pathlib import Path
from typing import Any

# In the repository, not in the package: the transcription is test data that the benchmark reads too.
DESCRIPTION = Path(__file__).resolve().parents[3] / "tests" / "data" / "compat" / "pyspark-benchmark.json"


def load(path: Path = DESCRIPTION) -> dict[str, Any]:
    return json.loads(path.read_text())


def dataset(spark: Any, spec: dict[str, Any], params: dict[str, Any]) -> Any:
    """generate-data.py's DataFrame; the description names the ``params`` keys for rows and partitions."""
    from pyspark.sql import functions as F

    gen = spec["generate"]
    frame = spark.range(
        gen["range"]["start"], params[gen["range"]["end"]], numPartitions=params[gen["range"]["numPartitions"]]
    )
    for name, kind, *args in gen["columns"]:
        if kind == "udf":

            def getUUID() -> str:  # noqa: N802 - the reference's function; nested, so Spark pickles it by value
                return uuid.uuid4().hex

            column = F.udf(getUUID, args[1])()
        elif kind == "substring":
            column = F.substring(F.col(args[0]), args[1], args[2])
        elif kind == "rand_times":
            column = F.rand(seed=args[0]) * args[1]
        elif kind == "cast":
            column = F.col(args[0]).cast(args[1])
        else:
            raise ValueError(f"the description names a column kind this builder does not know: {kind}")
        frame = frame.withColumn(name, column)
    return frame.drop(gen["drop"])


def write(frame: Any, spec: dict[str, Any], uri: str) -> None:
    """generate-data.py's write: df.write.csv(outfile, mode='overwrite', header=True)."""
    how = spec["generate"]["write"]
    frame.write.csv(uri, mode=how["mode"], header=how["header"])


def read(spark: Any, spec: dict[str, Any], uri: str) -> Any:
    """benchmark-shuffle.py's read, made once before every test: spark.read.csv(inputfile, header=True)."""
    how = spec["read"]
    if how["format"] != "csv" or how["schema"] is not None:
        raise ValueError(f"the description's read is not the schema-less CSV read this builder makes: {how}")
    return spark.read.csv(uri, header=how["header"])


def query(df: Any, calls: list[list[Any]], repartitions: int | None = None) -> Any:
    """One test's query; ``repartitions`` is the reference's -r N (None: its default)."""
    from pyspark.sql import functions as F

    for call, *args in calls:
        if call == "groupBy":
            df = df.groupBy(*args)
        elif call == "agg":
            df = df.agg(*[getattr(F, fn)(col).alias(alias) for fn, col, alias in args])
        elif call == "repartition":
            df = df.repartition(args[0]["default"] if repartitions is None else repartitions, args[1])
        elif call == "join_grouped":  # df.join([broadcast](df.groupBy(on).agg(count('*'))), on=, how=)
            on, how, broadcast = args
            grouped = df.groupBy(on).agg(F.count("*").alias("total_count"))
            df = df.join(F.broadcast(grouped) if broadcast else grouped, on=on, how=how)
        else:
            raise ValueError(f"the description names a call this builder does not know: {call}")
    return df


def timed_test(df: Any, spec: dict[str, Any], name: str, repartitions: int | None = None) -> tuple[float, int]:
    """One test as benchmark-shuffle.py times it: its timer (timeit.default_timer) starts before the query is
    built and stops after ``res.rdd.count()`` returns. Returns (seconds, the count)."""
    if spec["action"] != "rdd.count":
        raise ValueError(f"the description's action is not rdd.count: {spec['action']}")
    start = timeit.default_timer()
    count = query(df, spec["tests"][name], repartitions).rdd.count()
    return timeit.default_timer() - start, count

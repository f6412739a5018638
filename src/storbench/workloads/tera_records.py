"""Hadoop TeraGen's 100-byte records through storbench's JVM classes (jvm/…/tera), driven over py4j.

Every per-record step runs in the JVM: generation (an InputFormat producing TeraGen's rows for
any row range), Hadoop's raw record files (read and write), the sort (Spark's RangePartitioner:
sampled cut points, a total order across part files, as TeraSort's partitioner), and the
per-file validation pass (one task per file through java_method, as dfsio runs). Python only
wires the jobs and adds up per-file results.
"""

from __future__ import annotations

from typing import Any

PACKAGE = "storbench.jvm.tera"


def _class(spark: Any, name: str) -> Any:
    jvm = spark.sparkContext._jvm
    loader = jvm.java.lang.Thread.currentThread().getContextClassLoader()  # the one holding spark.jars
    return jvm.java.lang.Class.forName(name, True, loader)


def _conf(spark: Any, **values: Any) -> Any:
    jvm = spark.sparkContext._jvm
    conf = jvm.org.apache.hadoop.conf.Configuration(spark.sparkContext._jsc.hadoopConfiguration())
    for key, value in values.items():
        conf.set(key, str(value))
    return conf


def generated(spark: Any, records: int, splits: int, first_row: int = 0) -> Any:
    """A JavaPairRDD of (TeraRecord, null): rows first_row … first_row+records-1 in ``splits`` tasks."""
    conf = _conf(spark, **{"storbench.tera.rows": records, "storbench.tera.splits": splits,
                           "storbench.tera.first": first_row})
    return spark.sparkContext._jsc.newAPIHadoopRDD(conf, _class(spark, f"{PACKAGE}.TeraGenInputFormat"),
                                                   _class(spark, f"{PACKAGE}.TeraRecord"),
                                                   _class(spark, "org.apache.hadoop.io.NullWritable"))


def read(spark: Any, uri: str) -> Any:
    """Hadoop's record files under ``uri`` as a JavaPairRDD of (TeraRecord, null)."""
    return spark.sparkContext._jsc.newAPIHadoopFile(uri, _class(spark, f"{PACKAGE}.TeraFileInputFormat"),
                                                    _class(spark, f"{PACKAGE}.TeraRecord"),
                                                    _class(spark, "org.apache.hadoop.io.NullWritable"), _conf(spark))


def write(spark: Any, pairs: Any, uri: str) -> None:
    """Writes the records as Hadoop's 100-byte record files (part-r-NNNNN), replacing ``uri``."""
    conf = _conf(spark)
    path = spark.sparkContext._jvm.org.apache.hadoop.fs.Path(uri)
    path.getFileSystem(conf).delete(path, True)  # FileOutputFormat refuses an existing directory
    pairs.saveAsNewAPIHadoopFile(uri, _class(spark, f"{PACKAGE}.TeraRecord"),
                                 _class(spark, "org.apache.hadoop.io.NullWritable"),
                                 _class(spark, f"{PACKAGE}.TeraFileOutputFormat"), conf)


def sorted_by_key(pairs: Any, partitions: int) -> Any:
    """Range-partitioned by sampled key cut points, sorted inside each partition (TeraSort's total order)."""
    return pairs.sortByKey(True, partitions)


def frame(spark: Any, pairs: Any) -> Any:
    """The records as a DataFrame of key (10 bytes) and value (90 bytes) binary columns, built in the JVM."""
    from pyspark.sql import DataFrame

    beans = spark._jsparkSession.createDataFrame(pairs.keys(), _class(spark, f"{PACKAGE}.TeraRecord"))
    return DataFrame(beans, spark).select("key", "value")


def part_files(spark: Any, uri: str) -> list[str]:
    """The record files of an output directory in name order (the total order runs across them)."""
    conf = _conf(spark)
    path = spark.sparkContext._jvm.org.apache.hadoop.fs.Path(uri)
    statuses = path.getFileSystem(conf).listStatus(path)
    names = sorted(str(status.getPath().getName()) for status in statuses if status.isFile())
    return [f"{uri.rstrip('/')}/{name}" for name in names if not name.startswith(("_", "."))]


def scan(spark: Any, uri: str) -> list[dict[str, Any]]:
    """TeraValidate's per-file pass over every record file under ``uri``, one Spark task per file.

    Each entry: file, records, first and last key (hex), the byte offset of the first
    misordered record (-1: none) and the file's sum of record CRC32s.
    """
    files = part_files(spark, uri)
    if not files:
        return []
    listing = spark.createDataFrame([(index, name) for index, name in enumerate(files)], "index int, uri string")
    rows = (listing.repartition(len(files))
            .selectExpr("index", f"java_method('{PACKAGE}.TeraScan', 'scan', uri) AS result").collect())
    found = []
    for row in sorted(rows, key=lambda r: r["index"]):
        records, first, last, misorder, checksum = row["result"].split(",")
        found.append({"file": files[row["index"]].rsplit("/", 1)[-1], "records": int(records), "first": first,
                      "last": last, "misorder": int(misorder), "checksum": int(checksum)})
    return found

"""Hadoop TeraGen's 100-byte records through storbench's JVM classes (jvm/…/tera), driven over py4j.

Every per-record step runs in the JVM: generation (an InputFormat producing TeraGen's rows for
any row range), Hadoop's raw record files (read and write), and the per-file validation pass
(one task per file through java_method, as dfsio runs). Records travel as (10-byte key, 90-byte
value) pairs; Spark's tuple encoder turns them into key/value binary columns and back with
generated code, so the sort is Spark SQL's own (sampled range partitioning: a total order across
part files, as TeraSort's partitioner; then a sort inside each partition). Python only wires the
jobs and adds up per-file results.
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


def _pair_encoder(spark: Any) -> Any:
    encoders = spark.sparkContext._jvm.org.apache.spark.sql.Encoders
    return encoders.tuple(encoders.BINARY(), encoders.BINARY())


def generated(spark: Any, records: int, splits: int, first_row: int = 0, block: int = 1) -> Any:
    """A JavaPairRDD of (key, value) byte arrays: rows first_row … first_row+records-1 in ``splits`` tasks.

    ``block`` > 1: each pair is that many consecutive whole records and an empty value, only for
    ``write`` (Spark's per-pair costs once per block; the files are the same bytes).
    """
    conf = _conf(
        spark,
        **{
            "storbench.tera.rows": records,
            "storbench.tera.splits": splits,
            "storbench.tera.first": first_row,
            "storbench.tera.block": block,
        },
    )
    byte_array = _class(spark, "[B")
    return spark.sparkContext._jsc.newAPIHadoopRDD(
        conf, _class(spark, f"{PACKAGE}.TeraGenInputFormat"), byte_array, byte_array
    )


def read(spark: Any, uri: str) -> Any:
    """Hadoop's record files under ``uri`` as a JavaPairRDD of (key, value) byte arrays."""
    byte_array = _class(spark, "[B")
    return spark.sparkContext._jsc.newAPIHadoopFile(
        uri, _class(spark, f"{PACKAGE}.TeraFileInputFormat"), byte_array, byte_array, _conf(spark)
    )


# file:// through Hadoop's raw local file system: no CRC per 512 bytes, no .crc side files. The FileSystem
# cache is bypassed so that the session's own file:// instance (checksummed) is not replaced.
RAW_LOCAL = {"fs.file.impl": "org.apache.hadoop.fs.RawLocalFileSystem", "fs.file.impl.disable.cache": "true"}


def write(spark: Any, pairs: Any, uri: str, checksum: bool = True) -> None:
    """Writes (key, value) pairs as Hadoop's 100-byte record files (part-r-NNNNN) into ``uri``, which must not
    exist (FileOutputFormat refuses it: the caller removes an earlier output before its timed window).

    ``checksum=False`` on file:// writes through the raw local file system (Hadoop's TeraGen, like
    every Hadoop writer there, goes through the checksummed one); other schemes are unaffected.
    """
    conf = _conf(spark, **({} if checksum else RAW_LOCAL))
    byte_array = _class(spark, "[B")
    pairs.saveAsNewAPIHadoopFile(uri, byte_array, byte_array, _class(spark, f"{PACKAGE}.TeraFileOutputFormat"), conf)


def frame(spark: Any, pairs: Any) -> Any:
    """The pairs as a DataFrame of key (10 bytes) and value (90 bytes) binary columns (encoded in the JVM)."""
    from pyspark.sql import DataFrame

    dataset = spark._jsparkSession.createDataset(pairs.rdd(), _pair_encoder(spark))
    return DataFrame(dataset, spark).toDF("key", "value")


def pairs_of(spark: Any, frame: Any) -> Any:
    """A key/value DataFrame back as a JavaPairRDD of byte arrays, partitions and order kept."""
    dataset = getattr(frame.select("key", "value")._jdf, "as")(_pair_encoder(spark))
    return spark.sparkContext._jvm.org.apache.spark.api.java.JavaPairRDD.fromJavaRDD(dataset.toJavaRDD())


def sort(spark: Any, pairs: Any, partitions: int) -> Any:
    """TeraSort's order: ``partitions`` sampled key ranges, each sorted by key (unsigned bytes, as Text)."""
    return pairs_of(spark, frame(spark, pairs).repartitionByRange(partitions, "key").sortWithinPartitions("key"))


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
    rows = (
        listing.repartition(len(files))
        .selectExpr("index", f"java_method('{PACKAGE}.TeraScan', 'scan', uri) AS result")
        .collect()
    )
    found = []
    for row in sorted(rows, key=lambda r: r["index"]):
        records, first, last, misorder, checksum = row["result"].split(",")
        found.append(
            {
                "file": files[row["index"]].rsplit("/", 1)[-1],
                "records": int(records),
                "first": first,
                "last": last,
                "misorder": int(misorder),
                "checksum": int(checksum),
            }
        )
    return found

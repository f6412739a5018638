"""format=tera against Hadoop's own TeraGen, TeraSort and TeraValidate (hadoop-mapreduce-examples, run
in MapReduce local mode on file://): the same rows byte for byte, each tool's validator accepting the
other's sorted output, and equal checksums for the same row count."""

import hashlib
import shutil
import subprocess
import threading
from pathlib import Path

import pytest

from storbench.context import RunContext
from storbench.engines.spark import SparkEngine
from storbench.targets import parse_target
from storbench.workloads import get_workload
from storbench.workloads.terasort import records as tera_records
from storbench.workloads.terasort import TeraState, validate_records
from tests.cli.helpers import QUICK_JVM

pytestmark = pytest.mark.spark

ROWS = 20_000  # 2 MB: a few part files on both sides
PEER_POM = Path(__file__).resolve().parents[3] / "benchmarks" / "hadoop-examples" / "pom.xml"
LOCAL_MR = [
    "-D",
    "mapreduce.framework.name=local",
    "-D",
    "fs.defaultFS=file:///",
    "-D",
    "mapreduce.job.maps=2",
    "-D",
    "mapreduce.job.reduces=2",
]


def _hadoop_classpath(work: Path, cache) -> str:
    """The examples jar and its dependencies, as the benchmark fetches them (Maven Central; the jars are
    cached in ~/.m2, the resolved classpath in pytest's cache while every jar on it is still there)."""
    key = f"storbench/hadoop-examples-cp/{hashlib.sha256(PEER_POM.read_bytes()).hexdigest()[:16]}"
    known = cache.get(key, None)
    if known and all(Path(jar).is_file() for jar in known.split(":")):
        return known
    out = work / "hadoop.cp"
    subprocess.run(
        ["mvn", "-q", "-B", "-f", str(PEER_POM), "dependency:build-classpath", f"-Dmdep.outputFile={out}"],
        check=True,
        stdout=subprocess.DEVNULL,
        timeout=600,
    )
    cache.set(key, out.read_text().strip())
    return out.read_text().strip()


def _hadoop(classpath: str, tool: str, *args: str) -> None:
    command = [
        "java",
        "-Xmx512m",
        *QUICK_JVM.split(),
        "-cp",
        classpath,  # short JVMs, as the CLI's Spark
        "org.apache.hadoop.examples.ExampleDriver",
        tool,
        *LOCAL_MR,
        *args,
    ]
    done = subprocess.run(command, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, f"hadoop {tool}: {done.stdout[-2000:]}{done.stderr[-2000:]}"


def _bytes_of(directory: Path) -> bytes:
    return b"".join(p.read_bytes() for p in sorted(directory.glob("part-*")))


@pytest.fixture(scope="module")
def both(tmp_path_factory, request):
    """Hadoop's TeraGen + TeraSort (in a thread, its own JVMs) while storbench runs its chain with format=tera;
    then Hadoop's TeraValidate of storbench's output beside storbench's validation of Hadoop's."""
    work = tmp_path_factory.mktemp("tera-format")
    classpath = _hadoop_classpath(work, request.config.cache)
    failures: list[BaseException] = []

    def in_thread(*jobs):
        def run():
            try:
                for job in jobs:
                    _hadoop(classpath, *job)
            except BaseException as exc:  # noqa: BLE001  (re-raised in the test's thread)
                failures.append(exc)

        thread = threading.Thread(target=run)
        thread.start()
        return thread

    peer = in_thread(
        ("teragen", str(ROWS), f"file://{work}/hadoop-gen"),
        ("terasort", f"file://{work}/hadoop-gen", f"file://{work}/hadoop-sorted"),
    )
    engine = SparkEngine(local_dir=str(work / "spark-local"), app_name="storbench tera format test")
    try:
        spark = engine.start()
        target = parse_target(f"file://{work}/ours")
        target.claim("tera")
        ctx = RunContext("tera", target, str(target.root_uri), engines={"spark": engine})
        params = {
            "size_bytes": ROWS * 100,
            "partition_mb": 1,
            "seed": 0,
            "committer": "file",
            "format": "tera",
            "checksum": True,
        }
        for name in ("teragen", "terasort"):
            get_workload(name).run(ctx, params)
        validator = in_thread(("teravalidate", ctx.state(TeraState).sorted_uri, f"file://{work}/hadoop-report"))
        get_workload("teravalidate").run(ctx, params)  # raises on any problem
        peer.join()
        theirs = validate_records(spark, f"file://{work}/hadoop-sorted", ROWS, ctx.state(TeraState).checksum)
        validator.join()
        if failures:
            raise failures[0]
        yield {"work": work, "spark": spark, "tera": ctx.state(TeraState), "hadoop_sorted_problems": theirs}
    finally:
        peer.join()
        engine.stop()


def test_teragen_rows_equal_hadoop_teragen_byte_for_byte(both):
    ours = _bytes_of(Path(both["tera"].uri.removeprefix("file://")))
    theirs = _bytes_of(both["work"] / "hadoop-gen")
    assert len(ours) == len(theirs) == ROWS * 100
    assert ours == theirs


def test_hadoop_teravalidate_accepts_storbench_terasort(both):
    sorted_dir = Path(both["tera"].sorted_uri.removeprefix("file://"))
    assert len(list(sorted_dir.glob("part-r-*"))) == 2  # partition_mb=1 over 2 MB: a total order across files
    lines = _bytes_of(both["work"] / "hadoop-report").decode().splitlines()
    assert [line.split("\t")[0] for line in lines] == ["checksum"], lines  # any "error" line is a rejection
    assert lines[0].split("\t")[1] == f"{both['tera'].checksum:x}"


def test_storbench_teravalidate_accepts_hadoop_terasort(both):
    assert len(list((both["work"] / "hadoop-sorted").glob("part-r-*"))) == 2
    assert both["hadoop_sorted_problems"] == []  # order, count, and a checksum equal to storbench's teragen's


def test_misordered_record_is_named_by_partition_and_offset(both):
    spark, copy = both["spark"], both["work"] / "misordered"
    shutil.copytree(Path(both["tera"].sorted_uri.removeprefix("file://")), copy)
    victim = sorted(copy.glob("part-r-*"))[1]
    data = bytearray(victim.read_bytes())
    data[500:600], data[600:700] = data[600:700], data[500:600]  # records 5 and 6 swapped
    victim.write_bytes(bytes(data))
    (copy / f".{victim.name}.crc").unlink()  # the local file system's checksum would reject the edit itself
    problems = validate_records(spark, f"file://{copy}", ROWS, both["tera"].checksum)
    assert problems == [
        f"partition 1 ({victim.name}): the record at offset 6 has a smaller key than the record before it"
    ]
    assert [f["records"] for f in tera_records.scan(spark, f"file://{copy}")] == [
        f["records"] for f in tera_records.scan(spark, both["tera"].sorted_uri)
    ]


def test_checksum_false_writes_the_same_records_without_the_crc_layer(both):
    spark = both["spark"]
    raw = both["work"] / "raw"
    tera_records.write(spark, tera_records.generated(spark, ROWS, 2, 0, 1000), f"file://{raw}", checksum=False)
    assert list(raw.glob("part-r-*")) and not list(raw.glob(".*.crc"))  # no side files: the raw file system
    assert list(Path(both["tera"].uri.removeprefix("file://")).glob(".part-r-*.crc"))  # the default has them
    assert _bytes_of(raw) == _bytes_of(Path(both["tera"].uri.removeprefix("file://")))
    assert sum(f["checksum"] for f in tera_records.scan(spark, f"file://{raw}")) == both["tera"].checksum


def test_checksum_false_is_refused_where_it_cannot_hold(tmp_path):
    from tests.cli.helpers import storbench

    result = storbench(tmp_path / "home", "run", "teragen", "--target", str(tmp_path), "--set", "checksum=false")
    assert result.returncode == 2
    assert [line for line in result.stderr.splitlines() if line.strip()] == [
        "storbench: error: workload teragen: checksum=false needs format=tera on file:// (Spark's Parquet writer "
        "and HDFS always checksum); got format=parquet on file://"
    ]

"""Workloads declare the target schemes they take; Workload.check refuses the others in one line."""

from pathlib import Path

import pytest

from storbench.engines.spark import SparkEngine

from storbench.context import RunContext
from storbench.errors import InputError
from storbench.targets import Target, TargetOptions, parse_target, registry
from storbench.targets.device import DeviceTarget
from storbench.targets.rados import RadosTarget
from storbench.targets.s3 import S3Target
from storbench.workloads import all_workloads, get_workload
from storbench.workloads.base import Workload, family

SPARK_NEEDS = (
    "a directory on a filesystem or an hdfs://HOST:PORT/PATH or an s3://BUCKET/PREFIX target, "
    "e.g. s3://storbench/ on `storbench services up s3`"
)


@pytest.fixture
def targets(tmp_path, monkeypatch) -> dict[str, Target]:
    """One target of every scheme, built without any server."""
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", "key")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "secret")
    return {
        "file": parse_target(str(tmp_path)),
        "hdfs": parse_target("hdfs://127.0.0.1:1/x"),
        "device": DeviceTarget(Path("/dev/sdx"), TargetOptions()),
        "rados": parse_target("rados://pool"),
        "s3": parse_target("s3://bucket/x", TargetOptions(endpoint="http://127.0.0.1:1")),
    }


def context(target: Target) -> RunContext:
    return RunContext(run_id="r", target=target, root_uri="")


def test_every_workload_names_known_schemes():
    for name, cls in all_workloads().items():
        assert cls.schemes and set(cls.schemes) <= set(registry()), name


@pytest.mark.parametrize(
    "workload,scheme,message",
    [
        (
            "datagen",
            "device",
            "workload datagen cannot use the raw device target device:///dev/sdx; only the fio and "
            f"zoned workloads can (datagen needs {SPARK_NEEDS})",
        ),
        (
            "teragen",
            "rados",
            "workload teragen cannot use the RADOS pool target rados://pool; only the rados-bench "
            f"workloads can (teragen needs {SPARK_NEEDS})",
        ),
        (
            "fio-write",
            "hdfs",
            "workload fio-write cannot use the hdfs:// target hdfs://127.0.0.1:1/x; only the {takers} "
            "workloads can (fio-write needs a directory on a filesystem or a raw device /dev/NAME)",
        ),
        (
            "objects-put",
            "file",
            "workload objects-put cannot use the directory target file://{tmp}; only the {takers} "
            "workloads can (objects-put needs an s3://BUCKET/PREFIX target, e.g. s3://storbench/ on "
            "`storbench services up s3`)",
        ),
        (
            "rados-bench-write",
            "device",
            "workload rados-bench-write cannot use the raw device target device:///dev/sdx; "
            "only the fio and zoned workloads can (rados-bench-write needs a RADOS pool "
            "target: rados://POOL on `storbench services up ceph` or rados://POOL?conf=PATH)",
        ),
    ],
)
def test_a_workload_refuses_the_schemes_it_does_not_take(targets, tmp_path, workload, scheme, message):
    with pytest.raises(InputError) as refused:
        get_workload(workload).check(context(targets[scheme]), {})
    if "{takers}" in message:
        message = message.replace("{takers}", takers(scheme))
    assert str(refused.value) == message.replace("{tmp}", str(tmp_path))


@pytest.mark.parametrize("workload", ["groupby", "teragen", "terasort", "dfsio-write"])
def test_spark_workloads_take_s3_through_s3a(targets, workload):
    params = {p.name: p.default for p in get_workload(workload).params}
    get_workload(workload).check(context(targets["s3"]), params)  # no refusal
    assert SparkEngine.data_uri(targets["s3"], "s3://bucket/x/storbench-r") == "s3a://bucket/x/storbench-r"


def takers(scheme: str) -> str:
    """The families that take ``scheme``, as the refusal lists them (several Spark families take file and hdfs)."""
    names = sorted({family(cls) for cls in all_workloads().values() if scheme in cls.schemes})
    assert {"dfsio", "spark-transforms", "terasort", "tpcds"} <= set(names)  # the paper families, at least
    return ", ".join(names[:-1]) + f" and {names[-1]}"


def test_a_scheme_no_workload_takes_says_so(targets):
    class FileOnly(Workload):
        name = "file-only"
        schemes = ("file",)

    class Nowhere(Target):
        scheme = "nowhere"
        kind = "nowhere"

    target = Nowhere("nowhere://x", TargetOptions())
    assert FileOnly().scheme_refusal(target) == (
        "workload file-only cannot use the nowhere target nowhere://x; "
        "no workload can yet (file-only needs a directory on a filesystem)"
    )


def test_families_are_the_workload_modules():
    workloads = all_workloads()
    assert family(workloads["rados-bench-write"]) == "rados-bench"
    assert family(workloads["dfsio-write"]) == "dfsio"
    assert family(workloads["tpcds-gen"]) == "tpcds"


def test_target_as_gives_the_concrete_target_or_one_clear_line(targets):
    ctx = context(targets["s3"])
    assert ctx.target_as(S3Target).bucket == "bucket"
    with pytest.raises(
        InputError,
        match=r"^this workload needs a RADOS pool target: rados://POOL .* not the s3:// "
        r"target s3://bucket/x$",
    ):
        ctx.target_as(RadosTarget)

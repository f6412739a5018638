"""The rados-004 suite as shipped (paper 004: 4 MB objects, 16 threads, 1800 s) and its parameters. No cluster."""

import pytest

from storbench.errors import InputError
from storbench.suites import load_suite
from storbench.workloads.rados_bench import sizes


def test_paper_scale_is_the_papers_run_and_a_number_sets_the_duration():
    suite = load_suite("rados-004")
    assert suite.paper == "004"
    assert [e.workload for e in suite.workloads] == ["rados-bench-write", "rados-bench-seq", "rados-bench-rand"]
    scale, params, per = suite.resolve("paper", {})
    assert (scale, params["duration_s"], params["object_size"], params["threads"]) == ("paper", 1800, "4m", 16)
    assert sizes(per["rados-bench-write"]) == (4 << 20, 4 << 20)
    assert suite.resolve("300", {})[1]["duration_s"] == 300
    assert suite.resolve(None, {})[1]["duration_s"] <= 5  # tiny: three phases well under a minute


@pytest.mark.parametrize(
    "override, message",
    [
        ({"threads": "0"}, "threads=0 is below the minimum 1"),
        ({"object_size": "big"}, "object_size='big' is not a size"),
        ({"driver": "s3"}, "driver='s3' is not allowed; allowed: rados, fio"),
        ({"op_timeout_s": "1"}, "op_timeout_s=1 is below the minimum 5"),
    ],
)
def test_bad_parameters_name_the_key_and_the_allowed_values(override, message):
    with pytest.raises(InputError, match=message.replace("(", r"\(")):
        load_suite("rados-004").resolve(None, override)


def test_op_size_defaults_to_the_object_size():
    assert sizes({"object_size": "4m", "op_size": ""}) == (4 << 20, 4 << 20)
    assert sizes({"object_size": "4m", "op_size": "64k"}) == (4 << 20, 64 << 10)

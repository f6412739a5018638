"""S3A's counters per JVM → a workload's samples: each JVM's change summed, latencies as weighted means."""

import pytest

from storbench.engines.s3a import _parse, samples_between


def test_each_jvms_change_is_summed_and_a_new_executor_counts_from_zero():
    before = dict(
        [_parse("1@a/5 object_put_request=10 action_http_head_request.mean=4:40"), _parse("2@b/6 object_put_request=3")]
    )
    after = dict(
        [
            _parse("1@a/5 object_put_request=12 action_http_head_request.mean=6:100"),
            _parse("2@b/6 object_put_request=7 action_http_head_request.mean=2:20"),
            _parse("3@c/7 object_put_request=1 object_put_bytes=2000000"),
        ]
    )  # started during the workload
    by = {s.metric: (s.value, s.unit) for s in samples_between("w", before, after)}
    assert by["s3a_put_requests"] == (2 + 4 + 1, "requests")
    assert by["s3a_write_mb"] == (2.0, "MB")
    assert by["s3a_head_ms"][0] == pytest.approx((60 + 20) / (2 + 2))  # 4 new HEADs took 80 ms in all
    assert by["s3a_jvms"] == (3, "JVMs")
    assert "s3a_get_ms" not in by  # not timed: no sample rather than 0


def test_a_jvm_without_s3a_gives_no_samples():
    assert samples_between("w", None, dict([_parse("1@a/5")])) == []

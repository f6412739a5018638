"""The native engine against a real S3 server: every operation, verification, fail-fast, open loop, merge."""

import os
import signal
import subprocess
import threading
import time

import pytest

from storbench.engines import native
from storbench.engines.native_results import result_samples
from storbench.errors import WorkloadError
from storbench.workloads.objects import NAMES
from tests.workloads.objects.jobs import base_job

pytestmark = pytest.mark.s3


def _ok(result, op, ops=None):
    stats = result["ops"][op]
    assert stats["errors"] == 0, result["errors"]
    if ops is not None:
        assert stats["ops"] == ops
    return stats


def test_rust_unit_tests_pass():
    """The engine core's own tests (payload, histograms, SigV4 vectors, sizes) through cargo, in the unit profile
    (native/Cargo.toml: no LTO, no optimization; --release spent about 3.5 min of CPU on its thin LTO link)."""
    manifest = native.REPO / "native" / "Cargo.toml"
    done = subprocess.run(
        ["cargo", "test", "--profile", "unit", "--quiet", "--manifest-path", str(manifest)],
        capture_output=True,
        text=True,
        timeout=900,
    )
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    assert "test result: ok" in done.stdout


def test_every_operation(s3, client):
    _, state = s3
    prefix = "ops-test/"
    put = native.run_job(base_job(state, prefix))
    stats = _ok(put, "put", 50)
    assert stats["bytes"] == 50 * 4096 and stats["latency"]["count"] == 50 and stats["ttfb"]["p50_ms"] > 0
    assert put["cpu"]["cpu_us_per_op"] > 0 and put["processes"] == 1
    assert "access_key" not in put["job"]["s3"] and "secret_key" not in put["job"]["s3"]
    assert len([k for k in client.list("storbench", prefix)]) == 50

    get = native.run_job(base_job(state, prefix, mix=[{"op": "get"}], ops=200, verify=True))
    assert _ok(get, "get", 200)["bytes"] == 200 * 4096
    ranged = native.run_job(base_job(state, prefix, mix=[{"op": "get", "range_bytes": 100}], ops=40, verify=True))
    assert _ok(ranged, "get_range", 40)["bytes"] == 40 * 100
    head = native.run_job(base_job(state, prefix, mix=[{"op": "head"}], ops=40, verify=True))
    _ok(head, "head", 40)
    listing = native.run_job(base_job(state, prefix, mix=[{"op": "list"}], ops=6, s3={"list_max_keys": 20}))
    assert _ok(listing, "list", 6)["bytes"] > 0
    mixed = native.run_job(
        base_job(state, prefix, mix=[{"op": "get", "weight": 8}, {"op": "head", "weight": 2}], ops=500, verify=True)
    )
    assert mixed["total"]["ops"] == 500 and mixed["total"]["errors"] == 0
    assert 300 < mixed["ops"]["get"]["ops"] < 480 and mixed["ops"]["head"]["ops"] > 20

    delete = native.run_job(base_job(state, prefix, mix=[{"op": "delete"}], ops=0, duration_s=30))
    _ok(delete, "delete", 50)  # each key once, then the run ends by itself
    assert delete["measured_s"] < 30  # not a speed goal: under duration_s, so the keys ran out, not the clock
    assert list(client.list("storbench", prefix)) == []


def test_multipart_put_and_verified_get(s3, client):
    _, state = s3
    prefix = "multipart-test/"
    big = {"dist": "fixed", "bytes": 12 * 1024 * 1024}
    put = native.run_job(
        base_job(
            state,
            prefix,
            objects=2,
            ops=2,
            object_size=big,
            s3={"multipart_threshold": 6 * 1024 * 1024, "part_size": 5 * 1024 * 1024},
        )
    )
    _ok(put, "put", 2)
    get = native.run_job(base_job(state, prefix, objects=2, ops=4, object_size=big, mix=[{"op": "get"}], verify=True))
    assert _ok(get, "get", 4)["bytes"] == 4 * big["bytes"]
    client.delete_prefix("storbench", prefix)


def test_verification_catches_a_corrupted_object(s3, client):
    _, state = s3
    prefix = "verify-test/"
    native.run_job(base_job(state, prefix, objects=4, ops=4))
    name = f"{prefix}obj-0000000002"
    data = bytearray(client.get("storbench", name))
    data[1000] ^= 0xFF  # one flipped byte
    client.put("storbench", name, bytes(data))
    get = native.run_job(
        base_job(
            state,
            prefix,
            objects=4,
            ops=8,
            mix=[{"op": "get", "keys": "sequential"}],
            verify=True,
            load={"model": "closed", "concurrency": 1},
        )
    )
    assert get["errors"]["verify"]["count"] == 2  # key 2 read twice, both times caught
    assert "obj-0000000002" in get["errors"]["verify"]["example"]
    assert get["ops"]["get"]["ops"] == 6 and get["ops"]["get"]["errors"] == 2
    unverified = native.run_job(base_job(state, prefix, objects=4, ops=8, mix=[{"op": "get"}]))
    assert unverified["total"]["errors"] == 0  # without verify nothing is checked
    client.delete_prefix("storbench", prefix)


def test_wrong_credentials_and_unreachable_endpoint_fail_fast(s3):
    _, state = s3
    for override, words in (
        ({"secret_key": "not-the-secret"}, "refused the credentials"),
        ({"endpoint": "http://127.0.0.1:1"}, "cannot connect"),
        ({"bucket": "no-such-bucket"}, "does not exist"),
    ):
        with pytest.raises(WorkloadError) as caught:  # a retry loop would end in the 60 s guard's own message
            native.run_job(base_job(state, "x/", s3=override), timeout=60)
        message = str(caught.value)
        assert words in message and "\n" not in message, message
        assert "not-the-secret" not in message


def test_open_loop_latency_includes_a_paused_server(s3):
    """Server stopped (SIGSTOP) for 1.5 s mid-run: requests scheduled in the pause count their wait."""
    _, state = s3
    prefix = "openloop-test/"
    native.run_job(base_job(state, prefix, objects=20, ops=20))
    job = base_job(
        state,
        prefix,
        objects=20,
        ops=0,
        duration_s=5,
        mix=[{"op": "get"}],
        load={"model": "open", "rate": 40, "max_outstanding": 8},
    )
    pid = state["pid"]

    def pause():
        time.sleep(2.0)
        os.kill(pid, signal.SIGSTOP)
        try:
            time.sleep(1.5)
        finally:
            os.kill(pid, signal.SIGCONT)

    pauser = threading.Thread(target=pause)
    pauser.start()
    try:
        result = native.run_job(job)
    finally:
        pauser.join()
        os.kill(pid, signal.SIGCONT)
    stats = _ok(result, "get")
    latency, service = stats["latency"], stats["service"]
    assert result["load"]["model"] == "open" and result["load"]["scheduled"] == 200
    assert stats["ops"] >= 190  # the backlog was worked off after the pause
    assert latency["max_ms"] >= 1300  # the first request of the pause waited all of it
    # ~60 of 200 requests were due in the pause: latency from their intended start is long...
    assert latency["p90_ms"] >= 250, latency
    # ...while only the few in flight when it began had a long service time
    assert service["p90_ms"] < latency["p90_ms"] / 3, (service, latency)
    assert result["load"]["late_starts"] >= 30
    late = [s for s in result["series"] if s["max_ms"] is not None and s["max_ms"] >= 1000]
    assert late, result["series"]


def test_no_operation_is_null_not_zero(s3):
    """A second in which no request completed has no latency, and a run with no operation no CPU per operation:
    null in the engine's JSON and None in the samples, never 0.0 (which reads as free work)."""
    _, state = s3
    prefix = "na-test/"
    native.run_job(base_job(state, prefix, objects=4, ops=4))
    # open loop at 0.5/s for 2.1 s: requests due at 0 s and 2 s, none in second 1
    sparse = native.run_job(
        base_job(
            state,
            prefix,
            objects=4,
            ops=0,
            duration_s=2.1,
            mix=[{"op": "get"}],
            load={"model": "open", "rate": 0.5, "max_outstanding": 1},
        )
    )
    series = sparse["series"]
    assert [s["ops"] for s in series] == [1, 0, 1], series
    assert series[1]["mean_ms"] is None and series[1]["max_ms"] is None
    assert all(s["mean_ms"] > 0 and s["max_ms"] >= s["mean_ms"] for s in (series[0], series[2])), series
    assert sparse["cpu"]["cpu_us_per_op"] > 0
    # every GET of a key never written fails: no operation done
    missing = native.run_job(
        base_job(state, "na-absent/", objects=4, ops=6, mix=[{"op": "get"}], load={"model": "closed", "concurrency": 1})
    )
    assert (missing["total"]["ops"], missing["total"]["errors"]) == (0, 6), missing["errors"]
    assert missing["cpu"]["cpu_us_per_op"] is None and missing["cpu"]["cpu_s"] > 0
    assert all(s["mean_ms"] is None and s["max_ms"] is None for s in missing["series"]), missing["series"]
    samples = {s.metric: s.value for s in result_samples("objects-get", missing, NAMES, per_op=False)}
    assert samples["obj_cpu_us_per_op"] is None and samples["obj_lat_p50_ms"] is None
    assert samples["obj_ops"] == 0.0 and samples["obj_errors"] == 6.0  # counts: real zeros


def test_local_fanout_merges_histograms_exactly(s3, tmp_path):
    _, state = s3
    prefix = "fanout-test/"
    native.run_job(base_job(state, prefix, objects=40, ops=40))
    records = tmp_path / "ops.zst"
    job = base_job(state, prefix, objects=40, ops=150, mix=[{"op": "get"}], verify=True)
    merged = native.run_local(job, 2, records=records)
    assert merged["processes"] == 2 and merged["total"]["ops"] == 300 and merged["total"]["errors"] == 0
    assert sorted(p["process_index"] for p in merged["per_process"]) == [0, 1]
    latencies = []
    for index in (0, 1):
        raw = subprocess.run(["zstd", "-dc", str(tmp_path / f"ops-{index}.zst")], capture_output=True, text=True)
        assert raw.returncode == 0, raw.stderr  # the set-up installs zstd: a failure here is the records' fault
        rows = raw.stdout.splitlines()[1:]
        assert len(rows) == 150
        latencies += [int(row.split(",")[3]) for row in rows]
    latencies.sort()
    hist = merged["ops"]["get"]["latency"]
    assert hist["count"] == 300
    assert hist["max_ms"] == pytest.approx(max(latencies) / 1000, rel=0.002)
    p99 = latencies[int(0.99 * 300) - 1] / 1000
    assert hist["p99_ms"] == pytest.approx(p99, rel=0.01, abs=0.002)

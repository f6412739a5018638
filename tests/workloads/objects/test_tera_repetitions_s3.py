"""Issue 26: a repetition's S3 requests are its operation's alone. From the second repetition on, teragen,
terasort and dfsio-write find the previous repetition's output in place; removing it is set-up (``prepare``,
through the target's own S3 client), not part of the window, and S3A's counters cover the window alone (not
dfsio-write's warm-up write in its first prepare, nor teragen's verify read after). So on the session's real
SeaweedFS, repetition 2 makes exactly the S3A requests repetition 1 made, for both record formats (before the
fix, parquet teragen's repetition 2 made 4 more LISTs, 1 more HEAD, 1 fewer PUT and DELETE; dfsio-write's
repetition 1 counted its 2 MB warm-up; format=tera after a parquet point failed: the output was still there).

PUT, LIST, HEAD, DELETE, COPY requests and multipart uploads are asserted equal: the two repetitions write the
same rows (same seed) to the same keys from the same starting state (the output prefix absent), in one JVM,
through the same committer. Two figures cannot be exact, and why:
- GETs with format=tera: teragen's verify pass reads part-r-NNNNN back; in repetition 2 those keys hold the
  same bytes (the same ETag) as in repetition 1, so S3A's analytics stream may serve them from its cache in this
  JVM without a GET. Repetition 2 makes at most repetition 1's GETs; parquet's part files have new names each
  time, so there they are equal.
- Bytes written and read: the data files are the same bytes, but S3A's committer also writes and reads its JSON
  summaries, which carry timings (a few bytes longer or shorter). Equal within 100 bytes.
Bytes fetched by the prefetching reader and request latencies are not compared (a cache, a clock).
"""

import json

import pytest

from tests.cli.helpers import storbench

pytestmark = [pytest.mark.s3, pytest.mark.spark, pytest.mark.real]

SUITE = """\
name: tera-repetitions
repetitions: 2
workloads:
  - {workload: teragen, params: {size_bytes: 400000, partition_mb: 1}}
  - {workload: terasort, params: {size_bytes: 400000, partition_mb: 1}}
  - {workload: dfsio-write, params: {files: 2, file_size: 300000}}
"""
EXACT = (
    "s3a_put_requests",
    "s3a_list_requests",
    "s3a_head_requests",
    "s3a_delete_requests",
    "s3a_copy_requests",
    "s3a_multipart_initiated",
)
BYTES = ("s3a_write_mb", "s3a_read_mb")


def test_repetition_2_makes_the_s3_requests_repetition_1_made(s3, client, tmp_path):
    home, state = s3
    suite = tmp_path / "tera.yaml"
    suite.write_text(SUITE)
    run = storbench(
        home,
        "run",
        str(suite),
        "--target",
        f"s3://{state['bucket']}/reps",
        "--label",
        "reps",
        "--sweep",
        "format=parquet,tera",
        "--interval",
        "0.5",
        timeout=900,
    )
    assert run.returncode == 0, run.stderr[-3000:]
    (run_dir,) = [p for p in (home / "runs").iterdir() if "-reps-" in p.name]
    samples = [json.loads(line) for line in (run_dir / "samples.jsonl").read_text().splitlines()]
    by: dict[tuple[str, str, str, int], float] = {}
    for s in samples:
        if s["metric"].startswith("s3a_"):
            by[(s["labels"]["format"], s["workload"], s["metric"], s["repetition"])] = s["value"]
    for form in ("parquet", "tera"):
        for workload in ("teragen", "terasort"):
            first, second = (
                {m: by.get((form, workload, m, r)) for m in (*EXACT, *BYTES, "s3a_get_requests")} for r in (1, 2)
            )
            where = (form, workload, first, second)
            assert first["s3a_put_requests"] > 0 and first["s3a_write_mb"] > 0.4, where  # 400 kB of records
            assert {m: first[m] for m in EXACT} == {m: second[m] for m in EXACT}, where
            assert all(abs(first[m] - second[m]) <= 100e-6 for m in BYTES), where
            if form == "parquet":
                assert second["s3a_get_requests"] == first["s3a_get_requests"], where
            else:
                assert second["s3a_get_requests"] <= first["s3a_get_requests"], where
        dfsio = [{m: by.get((form, "dfsio-write", m, r)) for m in (*EXACT, *BYTES, "s3a_get_requests")} for r in (1, 2)]
        assert dfsio[0]["s3a_write_mb"] == dfsio[1]["s3a_write_mb"] == 0.6 and dfsio[0] == dfsio[1], dfsio
    assert list(client.list(state["bucket"], "reps")) == []  # the run's prefix is gone

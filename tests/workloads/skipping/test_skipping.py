"""The skipping pair on real targets: file:// (two runs and compare's sentence) and hdfs:// (the session's HDFS,
--sweep skipping=off,on in one run), at a tiny size; s3:// is spark-s3-001's pair on the session's Ceph RGW
(tests/workloads/rados/test_s3a_rgw.py). Skipping on must read fewer bytes from the target and scan fewer rows,
with the same answers (each query checks its answer against the generator's arithmetic and the other mode's)."""

import json
import re

import pytest

from tests.cli.helpers import storbench

pytestmark = pytest.mark.spark

TINY = ("--scale", "60000", "--set", "dates=6", "--set", "row_group_kb=32", "--repeat", "1", "--interval", "0.5")
QUERIES = ("skipping-point", "skipping-range", "skipping-lookup", "skipping-join")


def _run(home, target, label, *args):
    done = storbench(home, "run", "skipping", "--target", target, "--label", label, *TINY, *args, "--json", timeout=900)
    assert done.returncode == 0, done.stderr[-3000:]
    outcome = json.loads(done.stdout)
    assert outcome["status"] == "succeeded", outcome["errors"]
    run_dir = home / "runs" / outcome["run_id"]
    samples = [json.loads(line) for line in (run_dir / "samples.jsonl").read_text().splitlines()]
    return run_dir, samples


def _by_mode(samples, metric):
    out = {}
    for s in samples:
        if s["metric"] == metric and s["workload"] in QUERIES:
            out.setdefault(s["workload"], {})[s["labels"]["skipping"]] = s["value"]
    return out


def _assert_skipping_saves(run_dir, samples, *extra):
    for metric in ("target_read_mb", "rows_scanned", *extra):
        for query, modes in _by_mode(samples, metric).items():
            assert modes["on"] < modes["off"], (metric, query, modes)
    files = _by_mode(samples, "files_read")["skipping-join"]
    assert files["on"] < files["off"], files  # dynamic partition pruning read the selected dates' files only
    answers = json.loads((run_dir / "artifacts.json").read_text())["skipping"]
    assert set(answers) == {"point", "range", "lookup", "join"}
    for query, checksums in answers.items():
        assert checksums["on"] == checksums["off"], (query, checksums)


def test_pair_on_file_and_compare_says_it(tmp_path):
    home, target = tmp_path / "home", f"file://{tmp_path / 'data'}"
    (tmp_path / "data").mkdir()
    refused = storbench(home, "run", "skipping", "--target", target, "--set", "format=csv", timeout=120)
    assert refused.returncode != 0 and "skipping=on needs a format with statistics" in refused.stderr
    assert len(refused.stderr.strip().splitlines()) == 1 and "Spark" not in refused.stderr
    read = {}
    for mode in ("off", "on"):
        _, samples = _run(home, target, mode, "--set", f"skipping={mode}")
        read[mode] = {s["workload"]: s["value"] for s in samples if s["metric"] == "target_read_mb"}
    assert all(read["on"][q] < read["off"][q] for q in QUERIES), read
    table = storbench(home, "compare", "off", "on")
    assert table.returncode == 0, table.stderr
    said = re.findall(
        r"on vs off: (skipping-\w+) read ([\d.,]+× fewer|\d+% fewer) bytes and ran "
        r"([\d.,]+×|\d+%) (faster|slower)",
        table.stdout,
    )
    assert said, table.stdout
    # the time's word is the direction its measured change has (faster when the time fell), not either
    rows = json.loads(storbench(home, "compare", "off", "on", "--format", "json").stdout)["rows"]
    times = {
        row["workload"]: row["deltas"][1]
        for row in rows
        if row["metric"] == "completion_time" and row["phase"] == "timed" and not row["labels"]
    }
    for query, _, _, word in said:  # the sentence words the time as a factor: its direction is the check
        assert (word == "faster") == (times[query]["rel"] < 0), (query, word, times[query])


def test_pair_on_hdfs(hdfs):
    home, state = hdfs
    run_dir, samples = _run(home, f"{state['uri']}/skipping", "skipping-hdfs", "--sweep", "skipping=off,on")
    _assert_skipping_saves(run_dir, samples)

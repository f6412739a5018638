"""benchmarks/rados_overhead.py in its --quick smoke mode on the session's Ceph (--service-home): it runs, prints
its scope line and a verdict line per figure over 3 rounds, and both sides leave the pool as they found it."""

import pytest

from tests.benchmarks.quick import run_quick
from tests.workloads.rados.ceph_tools import rados_cmd

pytestmark = pytest.mark.ceph

PHASES = ("rados-bench-write", "rados-bench-seq", "rados-bench-rand")


def test_rados_overhead_quick_on_the_session_cluster(ceph):
    home, state, _ = ceph
    before = set(rados_cmd(state, state["pool"], "ls").split())
    verdicts = run_quick("rados_overhead", "--service-home", str(home))
    assert [m["name"] for m in verdicts] == [
        "whole process, storbench run / bare rados bench script (time)",
        "whole process, seconds storbench adds",
        *(f"{phase} bandwidth on rados bench's own clock, storbench / bare" for phase in PHASES),
    ]
    # storbench's cleanup and the bare script's `rados cleanup` removed every object their writes made
    assert set(rados_cmd(state, state["pool"], "ls").split()) == before

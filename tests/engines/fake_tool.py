"""A stand-in for the fio engine, for tests of the fio-family workloads without a fio binary.

``FakeFio`` is the real FioEngine with one step replaced: instead of starting fio (``launch``) it writes
the output a real fio 3.x wrote (tests/data/fio) where fio would write it, and the per-second logs the job
asked for, one per job. Everything around that step is the engine's own: the job file, fio's JSON read back
and checked, and the workload's parsing of both (engines.fio_results). Its probe says every I/O engine
works; its version is ``fio-3.16 (fake)``. Each FioSpec it was given is kept in ``FakeFio.specs``.

Use it with ``storbench.engines.tool.stand_in(FakeFio)``: while that block runs it is the engine named
``fio`` for the run core (which builds it) and the workloads' checks alike.
"""

from __future__ import annotations

import subprocess
from pathlib import Path
from typing import ClassVar

from storbench.engines.fio import FioEngine
from storbench.engines.fio_job import FioSpec, JobSpec

DATA = Path(__file__).resolve().parents[1] / "data" / "fio"
CANNED = DATA / "fio-3.16-layout-constructed-write-4jobs-grouped.json"  # 4 jobs grouped: 1500 IOPS, 1572.87 MB/s
# per job, each second: (bandwidth in KiB/s, IOPS); fio's log line is "msec, value, direction (1: write), bs, offset"
PER_SECOND = ((400_000, 380), (360_000, 350), (390_000, 370))


class FakeFio(FioEngine):
    specs: ClassVar[list[FioSpec]] = []

    def read_version(self) -> str:
        return "fio-3.16 (fake)"

    def probe(self, engine: str, direct: bool, location: str, is_device: bool) -> tuple[bool, str]:
        return True, ""

    def launch(
        self, spec: FioSpec, job_file: Path, output_path: Path, timeout: float | None
    ) -> subprocess.CompletedProcess:
        FakeFio.specs.append(spec)
        output_path.write_text(CANNED.read_text())
        job = spec.job
        if isinstance(job, JobSpec) and job.log_prefix and not job.create_only:
            for number in range(1, job.numjobs + 1):
                for kind, column in (("bw", 0), ("iops", 1)):
                    lines = [f"{1000 * s}, {values[column]}, 1, 0, 0" for s, values in enumerate(PER_SECOND, 1)]
                    Path(f"{job.log_prefix}_{kind}.{number}.log").write_text("\n".join(lines) + "\n")
        return subprocess.CompletedProcess(["fio (fake)", str(job_file)], 0, "", "")

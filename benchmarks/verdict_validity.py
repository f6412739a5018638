"""Verdict validity: A/A compares of one fio configuration, sequential vs interleaved, with and without a neighbour.

Both sides of every pair are the SAME configuration (one directory, one suite), so every "significant"
headline is a false one. Four designs, each run for N pairs, their order rotated round by round:

- sequential, quiet: ``storbench run`` twice, one after the other, then ``storbench compare`` (today's way);
- sequential, neighbour: the same, with a synthetic neighbour (a CPU burner and a writer syncing 4 MiB blocks
  to the same disk, started by this benchmark, outside storbench's process tree) present during one run of the
  pair (the first in odd rounds, the second in even ones) and absent during the other;
- interleaved, quiet: one ``storbench run --target D --target D`` (two configurations on one directory,
  rounds alternating), then ``compare`` of its two runs, which pairs repetition i with repetition i;
- interleaved, neighbour: the same, the neighbour arriving halfway through the experiment and staying: the step
  change that back-to-back repetitions turn into a "difference" falls on both sides of each round alike.

Named peer: today's sequential design, measured in the same script on the same directory. Figures: the share
of pairs whose compare has any significant headline (the false-positive rate), and for the sequential pairs
with a neighbour, the share where the noise sentinel marks the disturbed run busy (and the quiet one not) and
where ``compare`` says so next to its verdict. Marked means busy and at least ``CPU_POINTS`` (10) points of a
core more of other processes' CPU than the quiet run: on a shared machine other work can make both busy.
Goals (issue 37): interleaved with a neighbour <= 1 in 10; sentinel marks and compare says so in >= 9 of 10.

    .venv/bin/python benchmarks/verdict_validity.py [--rounds 10] [--target DIR] [--quick]
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from harness import parser, rotated, scope, share_verdict  # noqa: E402
from peers import run_cli  # noqa: E402

from storbench import api  # noqa: E402
from storbench.analysis.disturbance import CPU_POINTS, disturbance  # noqa: E402
from storbench.results.store import ResultStore  # noqa: E402

SUITE = """name: verdict-validity
description: fio sequential 1m write and random 4k read, {runtime} s each (0 = size bytes), three repetitions.
repetitions: 3
default_scale: tiny
scale_parameter: size
scales:
  tiny: {{size: {size}, runtime_s: {runtime}, ramp_time_s: 0}}
params: {{numjobs: 1, iodepth: 16, ioengine: libaio, direct: true}}
workloads:
  - {{workload: fio-write, params: {{bs: 1m}}}}
  - {{workload: fio-randread, params: {{bs: 4k}}}}
"""
DESIGNS = ("interleaved, quiet", "interleaved, neighbour", "sequential, quiet", "sequential, neighbour")
NEIGHBOUR_LIMIT_S = 600  # the neighbour's processes end by themselves after this, whatever happens here

BURNER = "import time\nend = time.monotonic() + {limit}\nwhile time.monotonic() < end:\n    pass\n"
WRITER = """import os, time
end = time.monotonic() + {limit}
block = os.urandom(4 << 20)
fd = os.open({path!r}, os.O_WRONLY | os.O_CREAT, 0o600)
while time.monotonic() < end:
    for k in range(16):  # 64 MiB, rewritten in place: bounded on disk
        os.pwrite(fd, block, k << 22)
        os.fsync(fd)
"""


class Neighbour:
    """A CPU burner and a syncing writer on the target's disk: this benchmark's children, not storbench's."""

    def __init__(self, directory: Path):
        self.directory = directory
        self.processes: list[subprocess.Popen] = []

    def start(self) -> None:
        path = self.directory / "neighbour.bin"
        for code in (BURNER.format(limit=NEIGHBOUR_LIMIT_S), WRITER.format(limit=NEIGHBOUR_LIMIT_S, path=str(path))):
            self.processes.append(subprocess.Popen([sys.executable, "-c", code], stdin=subprocess.DEVNULL))

    def stop(self) -> None:
        for process in self.processes:
            process.kill()
        for process in self.processes:
            process.wait()
        self.processes.clear()
        (self.directory / "neighbour.bin").unlink(missing_ok=True)


@dataclass
class Pair:
    significant: int  # headlines compare called significant (all false: both sides are one configuration)
    disturbed: str | None  # the run the neighbour was present in (sequential), else None
    marked: bool | None  # the sentinel judged the disturbed run busy and the quiet one not
    said: bool | None  # compare's notes name the disturbed run's disturbance
    wall_s: float
    headlines: list[str]


class Bench:
    def __init__(self, home: Path, base: Path, suite: Path):
        self.home, self.base, self.suite = home, base, suite
        self.interleaved_s: list[float] = []  # quiet interleaved experiments' walls: when halfway is

    def _run(self, *args: str) -> tuple[dict, float]:
        return run_cli(self.home, "run", str(self.suite), *args)

    def _compare(self, a: str, b: str) -> dict:
        """What `storbench compare A B --format json` prints, in process (one interpreter start less a pair)."""
        return api.compare([a, b], ResultStore(self.home)).to_dict()

    def _pair(self, ids: list[str], disturbed: str | None, wall: float) -> Pair:
        comparison = self._compare(*ids)
        significant = [h for h in comparison["headlines"] if h["significance"] == "significant"]
        marked = said = None
        if disturbed is not None:
            store = ResultStore(self.home)
            quiet = next(i for i in ids if i != disturbed)
            noisy, calm = (disturbance(store.resolve(ref).samples) for ref in (disturbed, quiet))
            # marked: busy, and clearly more than the quiet run (which other work on a shared machine can
            # make busy too); said: compare's note gives the disturbed run's figures
            marked = bool(noisy and calm and noisy.busy and (noisy.lead() or 0) - (calm.lead() or 0) >= CPU_POINTS)
            name = next(r["name"] for r in comparison["runs"] if r["run_id"] == disturbed)
            said = any(f"{name}'s windows" in note for note in comparison["warnings"])
        return Pair(len(significant), disturbed, marked, said, wall, [h["text"] for h in significant])

    def sequential(self, k: int, neighbour: bool) -> Pair:
        ids, started = [], time.monotonic()
        for side in ("a", "b"):
            present = neighbour and (side == "a") == (k % 2 == 1)
            noise = Neighbour(self.base) if present else None
            if noise:
                noise.start()
            try:
                outcome, _ = self._run("--target", str(self.base), "--label", f"seq{k}-{side}")
            finally:
                if noise:
                    noise.stop()
            ids.append(outcome["run_id"])
            if present:
                disturbed = outcome["run_id"]
        return self._pair(ids, disturbed if neighbour else None, time.monotonic() - started)

    def interleaved(self, k: int, neighbour: bool) -> Pair:
        noise = Neighbour(self.base) if neighbour else None
        timer = None
        if noise:
            halfway = (sorted(self.interleaved_s)[len(self.interleaved_s) // 2] if self.interleaved_s else 20.0) / 2
            timer = threading.Timer(halfway, noise.start)
            timer.start()
        started = time.monotonic()
        try:
            outcome, wall = self._run(
                "--target", str(self.base), "--target", str(self.base), "--label", f"il{k}-a", "--label", f"il{k}-b"
            )
        finally:
            if timer:
                timer.cancel()
                noise.stop()
        if not neighbour:
            self.interleaved_s.append(wall)
        return self._pair([run["run_id"] for run in outcome["runs"]], None, time.monotonic() - started)


def main() -> None:
    p = parser(__doc__)
    p.add_argument("--target", help="a directory on the disk to test (default: a private one under /var/tmp)")
    args = p.parse_args()
    runtime, size = (0, "4m") if args.quick else (1, "64m")  # --quick: 4 MiB per job, not time based
    base = Path(tempfile.mkdtemp(prefix="verdict-validity-", dir=args.target or "/var/tmp"))
    home = Path(tempfile.mkdtemp(prefix="verdict-validity-home-"))
    suite = home / "verdict-validity.yaml"
    suite.write_text(SUITE.format(runtime=runtime, size=size))
    load = os.getloadavg()
    scope(
        f"A/A: storbench run of fio-write (1m) + fio-randread (4k), {runtime} s each, 3 repetitions, direct I/O, "
        f"on {base}, then storbench compare of the pair's two runs; {args.rounds} pairs per design "
        f"({'; '.join(DESIGNS if not args.quick else [d for d in DESIGNS if d.endswith('neighbour')])}); load average before: {load[0]:.2f} {load[1]:.2f} {load[2]:.2f}",
        peer="today's sequential design (two runs back to back), same suite and directory, same script",
        parallelism="one fio job at iodepth 16 on both designs; the neighbour: one CPU burner and one writer "
        "syncing 4 MiB blocks to the same disk",
        startup="each storbench CLI from nothing (interpreter, probes, telemetry) on both designs",
        cache="direct I/O (fio's direct=1); fio's files laid out untimed before each read",
        clock="storbench's windows (time.monotonic); compare's tests at q < 0.05",
    )
    bench = Bench(home, base, suite)
    designs = [d for d in DESIGNS if d.endswith("neighbour")] if args.quick else list(DESIGNS)  # the same paths
    sides = {
        design: (lambda k, d=design: getattr(bench, d.split(",")[0])(k, d.endswith("neighbour"))) for design in designs
    }
    try:
        results = rotated(sides, args.rounds)
    finally:
        shutil.rmtree(home, ignore_errors=True)
        shutil.rmtree(base, ignore_errors=True)
    for design in designs:
        print(
            f"{design}: significant headlines per pair {[pair.significant for pair in results[design]]}, "
            f"walls {[round(pair.wall_s) for pair in results[design]]} s"
        )
        for k, pair in enumerate(results[design]):
            for text in pair.headlines[:3]:
                print(f"  pair {k + 1}: {text}")
    for design in designs:
        hits = [pair.significant > 0 for pair in results[design]]
        goal = 0.1 if design.startswith("interleaved") else None
        share_verdict(f"{design}: A/A pairs with a significant headline", hits, goal=goal, at_least=False)
    disturbed = results["sequential, neighbour"]
    share_verdict(
        "sequential, neighbour: the sentinel marks the disturbed run busy and the quiet one not",
        [bool(pair.marked) for pair in disturbed],
        goal=0.9,
    )
    share_verdict(
        "sequential, neighbour: compare says so next to its verdict", [bool(pair.said) for pair in disturbed], goal=0.9
    )


if __name__ == "__main__":
    main()

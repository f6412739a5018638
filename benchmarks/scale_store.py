"""SIMULATED scale: a results store holding 10,000 runs and 10⁶ samples, in SQLite and in PostgreSQL:
``storbench runs`` < 1 s, ``storbench show RUN`` and ``storbench compare A B`` < 2 s, the ETA's look-up of
the previous run reported.

The store is synthetic (benchmarks/scale_stores.py: copies of the golden run cfg-a, 100 samples each, 100
labels of 100 runs each, indexed as storbench indexes them). Each command is the CLI's ``main`` as a user's
command runs it, in this process (the interpreter's start and storbench's imports are left out of the timer and
reported on their own: a new process's ``storbench runs`` on an empty home), on the same run directories: once with the
SQLite index in the home (``--results HOME``), once with a real PostgreSQL (Debian's, initdb in a mkdtemp
directory on 127.0.0.1, fsync off, started and stopped here; ``--results postgresql://...``, the run
directories in ``$STORBENCH_HOME``). ``show`` and ``compare`` name the newest runs of two labels by label
(the index's label look-up). The ETA figure is the look-up a run makes before it starts
(``Session._expected_s``: the previous succeeded run of the same suite and scale), in process; it is reported,
its limit is behavioural (it reads no manifest: tests/benchmarks/test_scale.py).

The peer is the stated limit of each command. Issue 28, full size, machine loaded by other agents: before its fix
(every listing read each run's manifest) runs 2.59 s SQLite / 2.46 s PostgreSQL (MISSED), the ETA look-up
1.98 s / 2.92 s; after (the index's summaries) runs 0.217 s / 0.316 s, the ETA 0.186 s / 0.249 s; show and
compare 0.02–0.05 s both times.

    .venv/bin/python benchmarks/scale_store.py [--runs 10000] [--samples 100] [--rounds 3] [--quick]
"""

from __future__ import annotations

import io
import os
import subprocess
import sys
import time
from contextlib import redirect_stdout
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))
sys.path.insert(0, str(ROOT))

from harness import parser, private_dir, rotated, scope, spread, verdict  # noqa: E402
from scale_stores import fill  # noqa: E402
from storbench.cli import main as main_cli  # noqa: E402
from storbench.progress import expected_duration  # noqa: E402
from storbench.results.postgres import PostgresIndex  # noqa: E402
from storbench.results.store import ResultStore  # noqa: E402
from tests.pgserver import USER, PgServer  # noqa: E402

LIMITS = {"runs": 1.0, "show": 2.0, "compare": 2.0}


def cli(results: str, *args: str) -> float:
    """``storbench --results RESULTS ARGS`` in this process (its output discarded): seconds."""
    out = io.StringIO()
    start = time.perf_counter()
    with redirect_stdout(out):
        code = main_cli(["--results", results, *args])
    seconds = time.perf_counter() - start
    if code != 0:
        raise SystemExit(f"storbench {' '.join(args)} exited {code}")
    return seconds


def interpreter_start(env: dict[str, str], empty: Path) -> float:
    """A new process's ``storbench runs`` on an empty home: what every command adds to the figures above."""
    start = time.perf_counter()
    subprocess.run(
        [sys.executable, "-m", "storbench", "--results", str(empty), "runs"],
        capture_output=True,
        env=env,
        timeout=120,
        check=True,
    )
    return time.perf_counter() - start


def eta_lookup(store: ResultStore) -> float:
    start = time.perf_counter()
    found = expected_duration(store.list_runs(brief=True), "mixed", "tiny", 3, [])
    seconds = time.perf_counter() - start
    if found is None:
        raise SystemExit("the ETA found no previous run in the simulated store")
    return seconds


def main() -> None:
    p = parser(__doc__)
    p.add_argument("--runs", type=int, default=10_000, help="runs in the store (default 10000)")
    p.add_argument("--samples", type=int, default=100, help="samples per run (default 100: 10⁶ in all)")
    args = p.parse_args()
    runs, per_run = (500, 20) if args.quick else (args.runs, args.samples)
    scope(
        f"SIMULATED: a results store of {runs} runs and {runs * per_run} samples; storbench runs, show (by "
        "label), compare (two labels) through the CLI's main, and the ETA look-up in process; SQLite index and "
        "PostgreSQL index over the same run directories",
        peer="the stated limits (runs 1 s, show and compare 2 s)",
        parallelism="one command at a time",
        startup="the CLI's main in process: interpreter start and "
        "imports outside the timer (reported apart), each command opens its own store and connection; "
        "PostgreSQL's start outside",
        cache="run directories and the indexes in page cache; PostgreSQL fsync off",
        clock="perf_counter",
    )
    with private_dir("storbench-scale-store-") as work:
        server = PgServer()
        try:
            home = work / "home"
            lite = ResultStore(home)
            pgpass = work / "pgpass"
            pgpass.write_text(f"127.0.0.1:{server.port}:*:{USER}:{server.password}\n")
            pgpass.chmod(0o600)
            url = server.url(server.new_database(), password=False)
            os.environ["PGPASSFILE"] = str(pgpass)  # the URL holds no password, libpq reads this file
            shared = ResultStore(home, index=PostgresIndex(url))
            ids = fill([lite, shared], runs, per_run)  # one set of run directories, indexed in both
            os.environ["STORBENCH_HOME"] = str(home)  # where a PostgreSQL store's run directories are
            env = {**os.environ, "PYTHONPATH": str(ROOT / "src")}
            newest = [ids[-1].split("-", 2)[2].rsplit("-", 1)[0], ids[-2].split("-", 2)[2].rsplit("-", 1)[0]]

            def side(results: str, store: ResultStore):
                def measure(_k: int) -> dict[str, float]:
                    return {
                        "runs": cli(results, "runs"),
                        "show": cli(results, "show", newest[0]),
                        "compare": cli(results, "compare", *newest),
                        "eta": eta_lookup(store),
                    }

                return measure

            found = rotated(
                {
                    "sqlite": side(str(home), lite),
                    "postgresql": side(url, shared),
                    "start": lambda _k: {"start": interpreter_start(env, work / "empty")},
                },
                args.rounds,
            )
            shared.index.close()
        finally:
            server.stop()
    starts = found.pop("start")
    for backend, rounds in found.items():
        for command, limit in LIMITS.items():
            verdict(
                f"{backend}: storbench {command} over {runs} runs",
                spread([r[command] for r in rounds]),
                goal=limit,
                at_least=False,
                unit=" s",
            )
        verdict(f"{backend}: ETA look-up over {runs} runs", spread([r["eta"] for r in rounds]), goal=None, unit=" s")
    verdict(
        "a new process's start (storbench runs on an empty home), to add to each command",
        spread([r["start"] for r in starts]),
        goal=None,
        unit=" s",
    )


if __name__ == "__main__":
    main()

"""The generic layers name no engine: what is Spark's lives in engines/spark*.py and in the Spark workload
families, reached through neutral names (engine capabilities, ``engine_conf``, ``RunInfo.engine_settings``)."""

from pathlib import Path

SRC = Path(__file__).resolve().parents[1] / "src" / "storbench"
NEUTRAL = [
    *sorted((SRC / "cli").glob("*.py")),
    SRC / "workloads" / "base.py",
    *sorted((SRC / "run").glob("*.py")),
    SRC / "analysis" / "model.py",
    SRC / "report" / "_format.py",
]


def test_the_cli_run_core_and_report_model_name_no_engine():
    named = {
        str(path.relative_to(SRC)): [
            n for n, line in enumerate(path.read_text().splitlines(), 1) if "spark" in line.lower()
        ]
        for path in NEUTRAL
    }
    assert {path: lines for path, lines in named.items() if lines} == {}  # path: the lines that name Spark

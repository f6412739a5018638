"""Spark's plan of each TPC-DS text over generated data, without running a job: parse, resolve, optimize, plan.

It runs in a child Python with its own local Spark (the tests' driver options from the environment), so no
test worker keeps a Spark gateway another module's session would inherit.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from storbench.workloads.tpcds.data import TABLES

ROOT = Path(__file__).resolve().parents[3]

PLAN = """
import json, sys
from tests.spark_local import local_session
request = json.loads(sys.stdin.read())
spark = local_session("tpcds-plans-test", "local[1]", **{"spark.sql.cbo.enabled": "true"})  # as the workload plans
for table in request["tables"]:
    spark.read.parquet(request["data"] + "/" + table).createOrReplaceTempView(table)
failures = {}
for name, text in request["texts"].items():
    try:
        spark.sql(text)._jdf.queryExecution().executedPlan()
    except Exception as exc:  # the first line is Spark's reason
        failures[name] = (str(exc).strip().splitlines() or [type(exc).__name__])[0][:300]
spark.stop()
print(json.dumps(failures))
"""


def plan_in_spark(data: Path, texts: dict[str, str], timeout: float = 600) -> dict[str, str]:
    """Each of ``texts`` (name → Spark SQL) planned over the Parquet tables under ``data``; name → why it was not."""
    env = {**os.environ, "SPARK_LOCAL_IP": "127.0.0.1", "PYSPARK_PYTHON": sys.executable}
    env["PYTHONPATH"] = os.pathsep.join(
        filter(None, [str(ROOT / "src"), str(ROOT), env.get("PYTHONPATH")])
    )  # tests.spark_local
    request = {"data": data.as_uri(), "tables": list(TABLES), "texts": texts}
    done = subprocess.run(
        [sys.executable, "-c", PLAN],
        input=json.dumps(request),
        capture_output=True,
        text=True,
        env=env,
        timeout=timeout,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    return json.loads(done.stdout.strip().splitlines()[-1])

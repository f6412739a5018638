"""The scan workload (spark-scan suite): a real local Spark reads the generated dataset whole."""

import pytest

from storbench.analysis.metrics import CATALOG
from tests.cli.helpers import storbench
from tests.workloads.helpers import run_json


@pytest.mark.spark
def test_spark_scan_reads_the_whole_dataset_and_reports_its_rate(tmp_path):
    home = tmp_path / "home"
    result, outcome, samples = run_json(
        home, "spark-scan", "--target", str(tmp_path / "t"), "--scale", "20000", "--repeat", "1", "--label", "scan-a"
    )
    assert result.returncode == 0, result.stderr
    assert outcome["status"] == "succeeded", outcome["errors"]
    scan = {s["metric"]: s["value"] for s in samples if s["workload"] == "scan"}
    assert scan["scan_rows_per_s"] > 0 and scan["scan_mbps"] > 0 and scan["completion_time"] > 0
    # rows/s is the dataset's rows over the timed window, nothing else
    assert scan["scan_rows_per_s"] == pytest.approx(20000 / scan["completion_time"], rel=1e-6)
    assert CATALOG["scan_mbps"].title == "Dataset scan rate (size / time)"  # declared by the module, no list
    shown = storbench(home, "compare", "scan-a")
    assert shown.returncode == 0 and "Rows scanned per second" in shown.stdout

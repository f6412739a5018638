"""The native engine's YCSB key choice against YCSB core 0.17.0's own, run in the JVM.

Both sides draw key numbers for the same seed-free CoreWorkload properties: the Rust side with
``storbench-load ycsb-keys`` (the chooser the cql protocol uses), the JVM side with
``storbench.ycsb.YcsbKeys`` (jvm/ycsb: ``CoreWorkload.init`` then its own ``nextKeynum``). The
two samples must agree: the same hottest keys, the top-100 keys' shares within a tolerance, and
a two-sample chi-square homogeneity statistic below its 1e-4 critical value. The thresholds are
shown to reject a wrong zipfian constant and a wrong key-space size.
"""

from __future__ import annotations

import json
import math
import subprocess
from pathlib import Path

import pytest

from storbench.engines import native

pytestmark = pytest.mark.real  # YCSB itself, on a JVM

YCSB_DIR = Path(__file__).resolve().parents[2] / "jvm" / "ycsb"
DRAWS = 1_000_000
Z_CRIT = 3.719  # standard normal quantile at 1 - 1e-4


def ycsb_classpath() -> str:
    classes, deps = YCSB_DIR / "target" / "classes", YCSB_DIR / "target" / "classpath.txt"
    if not classes.is_dir() or not deps.is_file():
        pytest.fail(f"YCSB core's key tool is not built ({YCSB_DIR}/target): run scripts/setup.sh --test")
    return f"{classes}:{deps.read_text().strip()}"


def counts_of(argv: list[str]) -> dict[int, int]:
    done = subprocess.run(argv, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr
    doc = json.loads(done.stdout)
    assert doc["draws"] == DRAWS
    return {int(k): v for k, v in doc["counts"].items()}


def java_counts(props: dict[str, object]) -> dict[int, int]:
    args = [f"{k}={v}" for k, v in props.items()]
    return counts_of(["java", "-cp", ycsb_classpath(), "storbench.ycsb.YcsbKeys", f"draws={DRAWS}", *args])


def rust_counts(props: dict[str, object], seed: int = 1) -> dict[int, int]:
    args = [f"{k}={v}" for k, v in props.items()]
    return counts_of([native.binary(), "ycsb-keys", f"draws={DRAWS}", f"seed={seed}", *args])


def chi_square(a: dict[int, int], b: dict[int, int]) -> tuple[float, int]:
    """Two-sample chi-square homogeneity statistic over keys, pooling keys of few draws into one bin."""
    na, nb = sum(a.values()), sum(b.values())
    ka, kb = math.sqrt(nb / na), math.sqrt(na / nb)
    stat, bins, pool_a, pool_b = 0.0, 0, 0, 0
    for key in set(a) | set(b):
        x, y = a.get(key, 0), b.get(key, 0)
        if x + y < 20:
            pool_a, pool_b = pool_a + x, pool_b + y
            continue
        stat += (x * ka - y * kb) ** 2 / (x + y)
        bins += 1
    if pool_a + pool_b:
        stat += (pool_a * ka - pool_b * kb) ** 2 / (pool_a + pool_b)
        bins += 1
    return stat, bins - 1


def chi_square_critical(df: int, z: float = Z_CRIT) -> float:
    """Wilson–Hilferty approximation of the chi-square quantile."""
    return df * (1 - 2 / (9 * df) + z * math.sqrt(2 / (9 * df))) ** 3


def top(counts: dict[int, int], n: int) -> list[int]:
    return [k for k, _ in sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))[:n]]


def disagreement(rust: dict[int, int], java: dict[int, int], hottest: int) -> list[str]:
    """What differs between the two samples (empty: they agree)."""
    problems = []
    if set(rust) - set(java) and max(rust) > max(java):
        problems.append(f"keys beyond YCSB's range: max {max(rust)} vs {max(java)}")
    if hottest and set(top(rust, hottest)) != set(top(java, hottest)):
        problems.append(f"top-{hottest} keys differ: {top(rust, hottest)} vs {top(java, hottest)}")
    # each sample's own 100 most frequent keys (the same selection on both sides, so its bias cancels)
    share_r = sum(rust[k] for k in top(rust, 100)) / DRAWS
    share_j = sum(java[k] for k in top(java, 100)) / DRAWS
    # sampling error of a share p of DRAWS draws, for both samples, at Z_CRIT
    tolerance = Z_CRIT * math.sqrt(2 * share_j * (1 - share_j) / DRAWS) + 1e-4
    if abs(share_r - share_j) > tolerance:
        problems.append(f"top-100 share {share_r:.4f} vs YCSB {share_j:.4f} (tolerance {tolerance:.4f})")
    stat, df = chi_square(rust, java)
    if stat > chi_square_critical(df):
        problems.append(f"chi-square {stat:.1f} above {chi_square_critical(df):.1f} (df {df})")
    return problems


CASES = {
    # workloads A/B/C/F: scrambled zipfian over the records
    "zipfian": ({"recordcount": 10000, "operationcount": 100000, "requestdistribution": "zipfian"}, 10),
    # workload E's sizing: the zipfian's key space is recordcount + 2 * expected inserts
    "zipfian_with_inserts": (
        {"recordcount": 10000, "operationcount": 20000, "insertproportion": 0.05, "requestdistribution": "zipfian"},
        10,
    ),
    # workload D: the latest records most popular
    "latest": ({"recordcount": 10000, "operationcount": 100000, "requestdistribution": "latest"}, 10),
    "hotspot": (
        {
            "recordcount": 10000,
            "operationcount": 100000,
            "requestdistribution": "hotspot",
            "hotspotdatafraction": 0.2,
            "hotspotopnfraction": 0.8,
        },
        0,
    ),
    "uniform": ({"recordcount": 10000, "operationcount": 100000, "requestdistribution": "uniform"}, 0),
}


@pytest.fixture(scope="module")
def ycsb_samples():
    return {}


def java_sample(cache: dict, name: str) -> dict[int, int]:
    if name not in cache:
        cache[name] = java_counts(CASES[name][0])
    return cache[name]


@pytest.mark.parametrize("name", list(CASES))
def test_key_frequencies_agree_with_ycsb_core(name, ycsb_samples):
    props, hottest = CASES[name]
    java = java_sample(ycsb_samples, name)
    rust = rust_counts(props)
    assert disagreement(rust, java, hottest) == []
    # and the sample is what the distribution says: the whole key range, nothing outside it
    assert min(rust) >= 0 and max(rust) < props["recordcount"]


@pytest.mark.parametrize(
    "case, wrong, caught",
    [
        # a zipfian constant of 0.98 instead of 0.99 (0.95 fails by far more)
        ("zipfian", {"zipfianconstant": 0.98}, ("chi-square", "top-100 share")),
        # a key space that ignores the inserts YCSB expects (recordcount + 2 x operationcount x insertproportion)
        ("zipfian_with_inserts", {"insertproportion": 0}, ("chi-square", "top-10 keys differ")),
    ],
)
def test_a_wrong_zipfian_constant_or_key_space_is_caught(ycsb_samples, case, wrong, caught):
    """The thresholds above are not loose: a wrong generator fails them, a second seed of the right one passes."""
    props, hottest = CASES[case]
    java = java_sample(ycsb_samples, case)
    problems = disagreement(rust_counts({**props, **wrong}), java, hottest)
    for what in caught:
        assert any(p.startswith(what) for p in problems), problems
    assert disagreement(rust_counts(props, seed=2), java, hottest) == []

"""Deltas in the papers' words, and the significance verdict attached to them.

Definitions (one rule for every metric, chosen so paper 000's headlines come out as printed):

* The relative change of a compared run against the baseline is ``rel = new / old - 1``.
  Its size is said as a whole percent, **truncated** toward zero: paper 000 prints
  6,369.34 vs 2,192.34 MB/s as "190% higher" (190.5%), 0.41 vs 45.05 ms as "99% lower"
  (1 - new/old = 99.1%), 36.41 vs 210.87 ms as "82% lower" (82.7%) and 95 vs 80% CPU
  as "18% better usage" (18.75%).
* The word comes from the metric's direction: an increase of a higher-is-better metric
  is its ``better_word`` ("higher"), a decrease its ``worse_word`` ("lower"); for a
  lower-is-better metric a decrease is the better word. For completion time that makes
  "faster" the reduction of time, ``1 - new/old`` (paper 000: 941.15 vs 1,136.80 s is
  "17% faster"), and "slower" its increase, ``new/old - 1`` ("12% slower").
* Below :data:`NO_CHANGE_PCT` (2%) either way the delta reads "no change".
* Where one run is at least twice the other an extra factor is given: ``new/old`` for
  an increase ("2.9× higher"), ``old/new`` for a decrease ("110× lower", "2.0× faster").
* With no baseline value, a zero baseline or no compared value the delta is "n/a".
* Efficiency metrics (a quantity per watt or per kWh, :data:`EFFICIENCY_UNITS`) are said like
  consistency metrics, as a factor once one run is at least twice the other, and before their
  subject as paper 003 says it: "16× more operations per watt", "45% more GB moved per kWh".
  Counted rates worded "more/fewer" (:data:`COUNTED_RATES`: YCSB's throughput, operations per
  server thread) are said the same way, before what they count rather than their title:
  paper 003's "39× more operations per second" for ``[OVERALL] Throughput(ops/sec)``.
* Consistency metrics (a spread such as the stddev of per-second IOPS, whose words are
  "more/less consistent") are said as a factor once one run is at least twice the
  other, as paper 004 says a 10× smaller stddev: "10× more consistent", not "90% more
  consistent"; below 2× they read as a percent like any other metric. A metric declared
  ``factor`` is said so too ("10× lower IOPS standard deviation").
* A metric declared ``words-first`` is said with the change before its title, as paper 004
  writes "58% higher average IOPS".
* A workload's bytes read from the target and its time, when both changed, are said in one sentence as
  paper 001 says what data skipping saves: "skipping-join read 14× fewer bytes and ran 6.0× faster"
  (:data:`READ_AND_RAN`), each as a factor once one run is at least twice the other.
"""

from __future__ import annotations

import math
from dataclasses import replace

from storbench.analysis.stats import RatioTest, TTest
from storbench.results.metrics import MetricSpec

NO_CHANGE_PCT = 2.0
ALPHA = 0.05
MIN_REPETITIONS = 3

SIGNIFICANT = "significant"
NOISE = "may be noise"
TOO_FEW = "too few repetitions"
NOT_AVAILABLE = "n/a"

MARKERS = {SIGNIFICANT: "*", NOISE: "~", TOO_FEW: "?", NOT_AVAILABLE: ""}
PAIRED, WELCH = "paired", "welch"
TEST_WORDS = {PAIRED: "paired", WELCH: "Welch"}


def marker_legend(tested: int | None = None) -> str:
    """The significance legend; ``tested``: the number of rows Benjamini–Hochberg ran over (one compared run),
    else "the tested rows" (of each compared run, separately).

    Why BH over the rows of one compare: ~30+ metrics each tested at 5% make headlines by chance in an A/A
    compare. Under the complete null (nothing differs) BH keeps the chance of ANY false "significant" row at
    5%; with real differences present it keeps far more power than Holm, and tolerates metrics that move
    together (throughput, latency, time). The raw p stays in the data."""
    rows = f"the {tested} tested rows" if tested is not None else "the tested rows of each compared run"
    return (
        f"* significant (q < {ALPHA:g} after Benjamini–Hochberg over {rows}; paired t-test on interleaved "
        f"repetitions, Welch otherwise); ~ may be noise (q >= {ALPHA:g}); "
        f"? too few repetitions (< {MIN_REPETITIONS} on a side) for a test; "
        f'changes under {NO_CHANGE_PCT:g}% read "no change"; '
        f"[+a%..+b%] after a significant change: its 95% CI (Welch: of the ratio of the means; paired: of the "
        f"rounds' ratios, whose geometric mean is then the change said)"
    )


MARKER_LEGEND = marker_legend()


def relative_change(new: float | None, old: float | None) -> float | None:
    """``new / old - 1``; ``None`` when either is missing or the baseline is zero."""
    if new is None or old is None or old == 0:
        return None
    return new / old - 1.0


def whole_percent(rel: float) -> int:
    """The size of a relative change as a whole percent, truncated as paper 000 prints it."""
    # The small guard keeps 1.17/1.00 - 1 = 0.16999999999999993 at 17, not 16.
    return int(math.floor(abs(rel) * 100.0 + 1e-9))


def verdict(spec: MetricSpec, rel: float | None) -> str:
    """ "better", "worse", "no change" or "n/a"."""
    if rel is None:
        return NOT_AVAILABLE
    if abs(rel) * 100.0 < NO_CHANGE_PCT:
        return "no change"
    return "better" if (rel > 0) == spec.higher_is_better else "worse"


CONSISTENCY_WORDS = ("more consistent", "less consistent")
EFFICIENCY_UNITS = ("ops/W", "GB/kWh")
# unit of a rate worded "more/fewer" -> what it counts, as paper 003 says it
COUNTED_RATES = {"ops/s": "operations per second", "ops/s/thread": "operations per second per server CPU thread"}


def _counted_rate(spec: MetricSpec) -> bool:
    return spec.unit in COUNTED_RATES and spec.better_word == "more"


def phrase(spec: MetricSpec, subject: str, words: str) -> str:
    """ "groupby maximum read throughput 190% higher"; efficiency first: "16× more operations per watt";
    a counted rate by what it counts: "39× more operations per second"."""
    if words in (NOT_AVAILABLE, "no change"):
        return f"{subject} {words}"
    if _counted_rate(spec):
        return f"{words} {COUNTED_RATES[spec.unit]}"
    if spec.unit in EFFICIENCY_UNITS or spec.words_first:
        return f"{words} {subject}"
    return f"{subject} {words}"


def delta_words(spec: MetricSpec, rel: float | None) -> str:
    """ "190% higher", "17% faster", "12% slower", "10× more consistent", "no change" or "n/a"."""
    kind = verdict(spec, rel)
    if kind in (NOT_AVAILABLE, "no change"):
        return kind
    assert rel is not None
    word = spec.better_word if kind == "better" else spec.worse_word
    if (
        spec.factor or spec.better_word in CONSISTENCY_WORDS or spec.unit in EFFICIENCY_UNITS or _counted_rate(spec)
    ) and rel > -1.0:
        factor = 1.0 + rel if rel > 0 else 1.0 / (1.0 + rel)
        if factor >= 2.0:
            return f"{factor:.1f}× {word}" if factor < 10 else f"{factor:,.0f}× {word}"
    return f"{whole_percent(rel)}% {word}"


def factor_words(spec: MetricSpec, new: float | None, old: float | None) -> str | None:
    """ "2.9× higher" / "110× lower" when one value is at least twice the other, else ``None``."""
    rel = relative_change(new, old)
    kind = verdict(spec, rel)
    if rel is None or kind not in ("better", "worse") or new is None or old is None or new == 0:
        return None
    ratio = new / old
    if ratio <= 0:
        return None
    factor = ratio if ratio >= 1 else 1.0 / ratio
    if factor < 2.0:
        return None
    word = spec.better_word if kind == "better" else spec.worse_word
    text = f"{factor:.1f}" if factor < 10 else f"{factor:,.0f}"
    return f"{text}× {word}"


def significance(test: TTest | RatioTest | None, n_new: int, n_old: int, q_value: float | None = None) -> str:
    """The verdict on noise: a test needs :data:`MIN_REPETITIONS` values on both sides; significant when the
    Benjamini–Hochberg q (``q_value``, compare sets it over all of a run's tested rows) is under :data:`ALPHA`,
    or, before that adjustment, the raw p."""
    if n_new == 0 or n_old == 0:
        return NOT_AVAILABLE
    if n_new < MIN_REPETITIONS or n_old < MIN_REPETITIONS or test is None:
        return TOO_FEW
    return SIGNIFICANT if (test.p_value if q_value is None else q_value) < ALPHA else NOISE


def percent_bound(ratio: float, digits: int = 0) -> str:
    """A ratio as a signed percent change: 1.47 -> "+47%", 0.81 -> "-19%"."""
    return f"{(ratio - 1.0) * 100.0:+.{digits}f}%"


def _factor_bound(ratio: float, digits: int) -> str:
    factor = ratio if ratio >= 1 else 1.0 / ratio
    text = f"{factor:.{max(digits, 1 if factor < 10 else 0)}f}" if factor < 100 else f"{factor:,.{digits}f}"
    return f"{text}×" if ratio >= 1 else f"÷{text}"


def interval_bounds(low: float, high: float, factor: bool = False) -> tuple[str, str]:
    """Both bounds as signed whole percents ("+47%", "-19%"), with up to two decimals when whole ones would read
    the same or as 0; with ``factor`` (the delta is said as one, "39× more") as factors ("38×", "÷113") when the interval
    is on one side of 1."""
    if factor and (low >= 1.0 or 0.0 < high <= 1.0):
        for digits in (0, 1, 2):
            said = (_factor_bound(low, digits), _factor_bound(high, digits))
            if said[0] != said[1]:
                break
        return said
    for digits in (0, 1, 2):  # "-0%" would hide which side of no change a bound is on
        said = (percent_bound(low, digits), percent_bound(high, digits))
        if said[0] != said[1] and not any(b.strip("+-0.%") == "" for b in said):
            break
    return said


def interval_words(
    low: float | None, high: float | None, test: str | None, factor: bool = False, mde_pct: float | None = None
) -> str | None:
    """ "95% CI +47% to +53%, paired, detects ≥4%" (the CI on new/old as a change; "38× to 40×" with ``factor``;
    the smallest change the test detects with 80% power, where known); "95% CI unbounded, Welch" when it has no
    bounds; ``None`` without a test."""
    if test is None:
        return None
    name = TEST_WORDS.get(test, test)
    detects = f", detects ≥{mde_words(mde_pct)}" if mde_pct is not None else ""
    if low is None or high is None:
        return f"95% CI unbounded, {name}{detects}"
    lo, hi = interval_bounds(low, high, factor)
    return f"95% CI {lo} to {hi}, {name}{detects}"


def mde_words(mde_pct: float) -> str:
    """The smallest detectable change: "4%", "0.5%", or a factor ("3.2×") once it is 100% or more."""
    if mde_pct >= 100:
        return f"{1 + mde_pct / 100:.1f}×"
    return f"{mde_pct:.1f}%" if mde_pct < 1 else f"{mde_pct:.0f}%"


def undetected_words(mdes: list[float]) -> str | None:
    """What "no significant differences" could have missed: "changes under 6–41% (by metric) could not be told
    from noise with these repetitions"; None when no row was tested."""
    if not mdes:
        return None
    low, high = min(mdes), max(mdes)
    span = mde_words(low) if mde_words(low) == mde_words(high) else f"{mde_words(low)}–{mde_words(high)}"
    return f"changes under {span} (by metric) could not be told from noise with these repetitions"


def lower_first(title: str) -> str:
    """ "Maximum read throughput" -> "maximum read throughput"; acronyms ("CPU ...") stay."""
    if len(title) > 1 and title[1].isupper():
        return title
    return title[:1].lower() + title[1:]


# (bytes read from the target, time): said together per workload by read_and_ran
READ_AND_RAN = ("target_read_mb", "completion_time")


def read_and_ran(workload: str, read_spec: MetricSpec, read_rel: float, time_spec: MetricSpec, time_rel: float) -> str:
    """ "skipping-join read 14× fewer bytes and ran 6.0× faster" (both deltas are changes, not "no change")."""
    read = delta_words(replace(read_spec, factor=True), read_rel)
    ran = delta_words(replace(time_spec, factor=True), time_rel)
    return f"{workload} read {read} bytes and ran {ran}"

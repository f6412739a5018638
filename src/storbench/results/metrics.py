"""The metric vocabulary: how a producer declares a metric (unit, direction, aggregation, the paper's wording).

Paper 000 aggregates throughput and CPU as the maximum of the repetitions and latency
and completion time as their mean; ``aggregation`` encodes that rule per metric.

Whoever measures a metric declares its :class:`MetricSpec` here beside :class:`~storbench.results.model.Sample`,
usually as a :func:`metric_table`, so producers (workloads, engines, telemetry) need nothing
above the results layer. The catalog of every declaration is the comparison stage's
(:mod:`storbench.analysis.metrics`).
"""

from __future__ import annotations

from dataclasses import dataclass, replace


@dataclass(frozen=True)
class MetricSpec:
    name: str
    title: str  # as the paper names it
    unit: str
    higher_is_better: bool
    aggregation: str  # one of AGGREGATIONS (storbench.analysis.stats.aggregate)
    better_word: str  # "faster", "higher", "lower", "better usage"
    worse_word: str
    # True when one figure over all timed operations means something (paper 000's summary
    # table and headlines give maximum throughput, average latency and maximum CPU overall).
    overall: bool = False
    # Said as the paper says it, the change before the title: "58% higher average IOPS" (paper 004).
    words_first: bool = False
    # A spread said as a factor once one run is at least twice the other: "10× lower IOPS standard deviation".
    factor: bool = False

    @property
    def direction(self) -> str:
        return "higher is better" if self.higher_is_better else "lower is better"


AGGREGATIONS = ("max", "min", "mean", "median", "sum")
# The paper's words for a change for the better and for the worse ("17% faster", "2× more
# consistent"); the wording says which way is better (True: higher is better).
WORDINGS = {
    "higher/lower": True,
    "more/fewer": True,
    "more/less": True,
    "larger/smaller": True,
    "better/worse": True,
    "better usage/worse usage": True,
    "lower/higher": False,
    "faster/slower": False,
    "shorter/longer": False,
    "fewer/more": False,
    "less/more": False,
    "more consistent/less consistent": False,
}


# What a report leads with for a workload family that declares no ``headline`` of its own (``Workload.headline``):
# paper 000's figures, time to complete and the device telemetry of the timed window.
DEVICE_HEADLINE = (
    "completion_time",
    "max_read_mbps",
    "max_write_mbps",
    "avg_read_latency_ms",
    "avg_write_latency_ms",
    "max_cpu_pct",
)

FLAGS = ("overall", "words-first", "factor")  # the optional last column: MetricSpec.overall, .words_first, .factor


def metric(name: str, title: str, unit: str, aggregation: str, wording: str, flags: str = "") -> MetricSpec:
    """A spec from its wording (a key of WORDINGS); ``flags`` names FLAGS, space-separated ("overall")."""
    if aggregation not in AGGREGATIONS:
        raise ValueError(f"metric {name}: aggregation {aggregation!r} is not one of: {', '.join(AGGREGATIONS)}")
    if wording not in WORDINGS:
        raise ValueError(f"metric {name}: wording {wording!r} is not one of: {', '.join(WORDINGS)}")
    unknown = [flag for flag in flags.split() if flag not in FLAGS]
    if unknown:
        raise ValueError(f"metric {name}: the last column names {', '.join(FLAGS)} or nothing, not {unknown[0]!r}")
    better, worse = wording.split("/")
    given = flags.split()
    return MetricSpec(
        name,
        title,
        unit,
        WORDINGS[wording],
        aggregation,
        better,
        worse,
        "overall" in given,
        "words-first" in given,
        "factor" in given,
    )


def reworded(spec: MetricSpec, wording: str) -> MetricSpec:
    """``spec`` with another better/worse wording (a key of WORDINGS): its direction where a family sees it
    the other way (data skipping: a lower device read throughput is the point, less was read)."""
    if wording not in WORDINGS:
        raise ValueError(f"metric {spec.name}: wording {wording!r} is not one of: {', '.join(WORDINGS)}")
    better, worse = wording.split("/")
    return replace(spec, higher_is_better=WORDINGS[wording], better_word=better, worse_word=worse)


def metric_table(text: str) -> tuple[MetricSpec, ...]:
    """Specs from rows ``name | title | unit | aggregation | better/worse [| flags]``; # starts a comment."""
    specs = []
    for line in text.splitlines():
        cells = [cell.strip() for cell in line.split("|")]
        if not cells[0] or cells[0].startswith("#"):
            continue
        if len(cells) not in (5, 6):
            raise ValueError(f"metric row {line.strip()!r}: name | title | unit | aggregation | better/worse [| flags]")
        specs.append(metric(*cells))
    return tuple(specs)

"""The verdict printed after an interleaved experiment: what ``compare`` would warn about, then its headlines.

The full table is one ``storbench compare`` away (the last line names the command); the reports hold everything.
"""

from __future__ import annotations

import textwrap

from storbench.analysis.model import Comparison
from storbench.report.registry import register


@register("verdict", "warnings and headlines printed after an interleaved experiment", listed=False)
def verdict_text(comparison: Comparison) -> str:
    lines = []
    for note in comparison.warnings:
        lines += textwrap.wrap(note, 100, initial_indent="!! ", subsequent_indent="   ")
    lines.append("Headlines")
    lines += [f"  - {h.text}" for h in comparison.headlines] or [f"  {comparison.no_headline_text()}"]
    lines.append(f"Full table: storbench compare {' '.join(run.run_id for run in comparison.runs)}")
    return "\n".join(lines)

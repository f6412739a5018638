"""What a compare delta's words must say given its measured change: tests of real runs use it instead of
accepting any of "faster", "slower" and "no change" (a wording that reversed the direction passed those)."""

from __future__ import annotations

from typing import Any

NO_CHANGE = 0.02  # analysis.wording.NO_CHANGE_PCT


def time_words_agree(delta: dict[str, Any]) -> bool:
    """A time's delta (JSON): "no change" under 2% either way, "faster" when it fell, "slower" when it rose."""
    rel, words = delta["rel"], delta["words"]
    if rel is None:
        return words == "n/a"
    if abs(rel) < NO_CHANGE:
        return words == "no change"
    return words.endswith(" faster") if rel < 0 else words.endswith(" slower")

"""tests.analysis.direction: the check that replaced "any of faster/slower/no change" fails on a reversed word."""

import json
from pathlib import Path

from tests.analysis.direction import time_words_agree

GOLDEN = Path(__file__).resolve().parents[1] / "data" / "golden" / "families.json"


def test_every_golden_time_delta_agrees_and_a_reversed_word_does_not():
    rows = json.loads(GOLDEN.read_text())["rows"]
    deltas = [d for row in rows if row["metric"] == "completion_time" for d in row["deltas"] if d]
    assert len(deltas) >= 3 and all(time_words_agree(d) for d in deltas), deltas
    swapped = {" faster": " slower", " slower": " faster"}
    for d in deltas:
        if d["words"] != "no change":
            end = d["words"][-7:]
            assert not time_words_agree({**d, "words": d["words"][:-7] + swapped[end]}), d
    assert not time_words_agree({"rel": 0.28, "words": "no change"})
    assert not time_words_agree({"rel": 0.01, "words": "1% slower"})

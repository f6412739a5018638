"""``KEY=VALUE`` options (``--set``, ``--spark-conf``): one parser, one bad-input line naming the flag."""

from __future__ import annotations

from storbench.errors import InputError


def parse_pairs(items: list[str], flag: str, expected: str = "KEY=VALUE") -> dict[str, str]:
    """``k=v`` strings into a dict (later keys win); a pair without '=' or key is bad input."""
    result: dict[str, str] = {}
    for item in items:
        key, sep, value = item.partition("=")
        if not sep or not key.strip():
            raise InputError(f"{flag} {item!r}: expected {expected}")
        result[key.strip()] = value.strip()
    return result

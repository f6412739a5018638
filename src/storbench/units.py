"""Units in one place: sizes and counts as users write them, and bytes as people read them.

The rule (the README's "Units" says the same):

- **Sizes in I/O syntax are binary.** A block, object, op or per-job size written as text
  (``bs=4k``, ``size=256m``, ``object_size=4m``, objects' ``size=16m``) counts ``k`` as 1024
  bytes, ``m`` as 1024², ``g`` as 1024³ (``t``, ``p`` likewise; ``4k``, ``4K``, ``4kb`` and
  ``4KiB`` are all 4096 bytes), as fio and rados bench read it: :func:`parse_size` with its
  default ``base=BINARY``.
- **Numbers are decimal.** A value given where an integer is expected — rows and records,
  ``size_bytes=1G``, ``part_size``, ``--scale 10G`` — counts ``k`` as 10³, ``m`` as 10⁶,
  ``g`` (or ``b``, billion) as 10⁹ and ``t`` as 10¹²: :func:`parse_count`. So
  ``--scale 10G`` gives a fio job 10 GB (10¹⁰ bytes) while ``--set size=10g`` gives it 10 GiB.
- **Everything reported is decimal.** MB is 10⁶ bytes, MB/s 10⁶ bytes per second, GB 10⁹
  bytes (:func:`human_bytes`); figures a tool prints in MiB (TestDFSIO, rados bench) are
  converted before they become samples.
"""

from __future__ import annotations

import re
from typing import Any

from storbench.errors import InputError

BINARY = 1024
DECIMAL = 1000
PREFIXES = "kmgtp"  # kilo … peta, in order: the n-th stands for base ** n


def factor(prefix: str, base: int) -> int:
    """``""`` → 1, ``k`` → base, ``m`` → base², … ``p`` → base⁵."""
    return base ** (PREFIXES.index(prefix) + 1) if prefix else 1


def parse_size(
    text: Any, *, base: int = BINARY, prefixes: str = PREFIXES, name: str = "size", what: str = "a size"
) -> int:
    """Bytes of a whole number with an optional prefix and ``b``/``ib`` (``4k``, ``1GiB``, ``65536``).

    ``prefixes`` narrows the prefixes allowed; anything else, or no more than 0 bytes, is
    an InputError ``{name}={text!r} is not {what}; use ...`` saying what is allowed.
    """
    match = re.fullmatch(rf"\s*(\d+)\s*([{prefixes}]?)(?:i?b)?\s*", str(text), re.IGNORECASE)
    value = int(match.group(1)) * factor(match.group(2).lower(), base) if match else 0
    if value <= 0:
        letters = ", ".join(prefixes[:-1]) + f" or {prefixes[-1]}" if len(prefixes) > 1 else prefixes
        raise InputError(
            f"{name}={text!r} is not {what}; use bytes or a whole number with {letters} "
            f"({base}-based: 4k = {4 * base} bytes), e.g. 4k, 1m, 512m"
        )
    return value


def parse_count(text: Any) -> int | None:
    """'5000000', '5_000_000', '5M', '1.5k', '1e6', '10B' (billion) → int, decimal; anything else → None."""
    text = str(text).strip().lower().replace("_", "")
    match = re.fullmatch(r"(\d+(?:\.\d+)?(?:e\d+)?)([kmbgt]?)", text)
    if not match:
        return None
    prefix = "g" if match.group(2) == "b" else match.group(2)
    value = float(match.group(1)) * factor(prefix, DECIMAL)
    return int(value) if value >= 1 else None


def human_bytes(value: float) -> str:
    """Bytes for people, decimal: ``1.5 GB``, ``512.0 MB``, ``12 B``."""
    for unit, size in (("TB", 1e12), ("GB", 1e9), ("MB", 1e6), ("kB", 1e3)):
        if value >= size:
            return f"{value / size:.1f} {unit}"
    return f"{value:.0f} B"

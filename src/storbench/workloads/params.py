"""Declared workload parameters: type, default, allowed values, and coercion with clear errors.

Integers accept decimal prefixes (``5k``, ``1.5G``: storbench.units.parse_count); a
:class:`SizeParam` holds a size in I/O syntax, binary (``4k`` = 4096 bytes: storbench.units).
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from typing import Any

from storbench.errors import InputError
from storbench.units import parse_count, parse_size

_TYPE_NAMES = {int: "an integer", float: "a number", str: "a string", bool: "true or false", list: "a list"}


@dataclass(frozen=True)
class Param:
    name: str
    type: type
    default: Any
    help: str
    choices: tuple[Any, ...] | None = None
    minimum: float | None = None
    item_choices: tuple[str, ...] | None = None  # for lists: allowed items
    maximum: float | None = None

    def coerce(self, value: Any, where: str) -> Any:
        """The value converted to this parameter's type; ``where`` names the source in errors."""
        value = self._convert(value, where)
        if self.choices is not None and value not in self.choices:
            raise InputError(
                f"{where}: {self.name}={value!r} is not allowed; allowed: "
                + ", ".join(str(c) if c != "" else "'' (empty)" for c in self.choices)
            )
        if self.minimum is not None and value < self.minimum:
            raise InputError(f"{where}: {self.name}={value!r} is below the minimum {self.minimum:g}")
        if self.maximum is not None and value > self.maximum:
            raise InputError(f"{where}: {self.name}={value!r} is above the maximum {self.maximum:g}")
        if self.item_choices is not None:
            bad = [item for item in value if item not in self.item_choices]
            if bad:
                raise InputError(
                    f"{where}: {self.name} has unknown item(s) {', '.join(map(str, bad))}; "
                    f"allowed: {', '.join(self.item_choices)}"
                )
        return value

    def _convert(self, value: Any, where: str) -> Any:
        try:
            if self.type is bool:
                if isinstance(value, bool):
                    return value
                if str(value).lower() in ("true", "yes", "1", "on"):
                    return True
                if str(value).lower() in ("false", "no", "0", "off"):
                    return False
                raise ValueError
            if self.type is int:
                if isinstance(value, bool):
                    raise ValueError
                if isinstance(value, float) and not value.is_integer():
                    raise ValueError
                if isinstance(value, str):
                    if re.fullmatch(r"\s*[-+]?\d+\s*", value.replace("_", "")):
                        return int(value.replace("_", ""))
                    count = parse_count(value)  # 5k, 64M, 1.5G
                    if count is None:
                        raise ValueError
                    return count
                return int(value)
            if self.type is float:
                number = float(value)
                if not math.isfinite(number):  # nan passes every comparison with a minimum or maximum
                    raise ValueError
                return number
            if self.type is list:
                if isinstance(value, str):
                    return [item.strip() for item in value.split(",") if item.strip()]
                if isinstance(value, (list, tuple)):
                    return [str(item) for item in value]
                raise ValueError
            return str(value)
        except (TypeError, ValueError):
            raise InputError(f"{where}: {self.name}={value!r} must be {_TYPE_NAMES[self.type]}") from None

    def describe(self) -> str:
        allowed = f" (one of: {', '.join(map(str, self.choices))})" if self.choices else ""
        return f"{self.name}={self.default!r}: {self.help}{allowed}"


@dataclass(frozen=True)
class SizeParam(Param):
    """A size in I/O syntax (``4k``, ``1m``, ``512m``, ``1g`` or bytes; 1024-based), kept as text.

    ``empty`` says what an empty value (or 0) means, e.g. "the object size"; without it a
    size is required. ``what`` names the size in errors ("a fio size").
    """

    empty: str = ""
    what: str = "a size"

    def coerce(self, value: Any, where: str) -> Any:
        text = str(super().coerce(value, where)).strip()
        if self.empty and text in ("", "0"):
            return ""
        what = f"{self.what} (or empty for {self.empty})" if self.empty else self.what
        parse_size(value, name=f"{where}: {self.name}", what=what)
        return text


# Shared by every workload that writes to the target (storbench.context.RunContext.measure does the flush).
# On by default; Suite.resolve turns it off at a suite's "paper" scale (see PAPER_SCALE there).
FLUSH = Param(
    "flush",
    bool,
    True,
    "end the timed window only when the written data is durable (file://: syncfs; hdfs://: the "
    "DataNodes' directories when they are local; s3://: nothing to do); default off at the paper scale",
)

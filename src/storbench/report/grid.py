"""Grids of cells as lines: aligned plain text for a terminal and Markdown tables. The lowest report module: every
format and section module draws its tables with these."""

from __future__ import annotations


def align(
    rows: list[list[str]], right: frozenset[int] | set[int] = frozenset(), indent: str = "  ", head: int = 1
) -> list[str]:
    """Columns padded to their widest cell; the first ``head`` rows are the header, underlined."""
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]

    def line(cells: list[str]) -> str:
        return (
            indent
            + "  ".join(
                c.rjust(w) if i in right else c.ljust(w) for i, (c, w) in enumerate(zip(cells, widths))
            ).rstrip()
        )

    return (
        [line(r) for r in rows[:head]] + [indent + "  ".join("-" * w for w in widths)] + [line(r) for r in rows[head:]]
    )


def markdown_table(
    header: list[str], rows: list[list[str]], right: frozenset[int] | set[int] = frozenset()
) -> list[str]:
    rule = ["---:" if i in right else "---" for i in range(len(header))]
    return ["| " + " | ".join(row) + " |" for row in [header, rule, *rows]]

"""Plain-text tables for terminal reports."""

from __future__ import annotations

from collections.abc import Sequence

__all__ = ["format_table", "format_value"]


def format_value(value: object) -> str:
    """Floats with 4 decimals (trec_eval's precision), everything else as ``str``."""
    if isinstance(value, float):
        return f"{value:.4f}"
    return "-" if value is None else str(value)


def format_table(headers: Sequence[str], rows: Sequence[Sequence[object]], *, title: str | None = None) -> str:
    """Render a table: the first column left-aligned, the others right-aligned.

    >>> print(format_table(["metric", "@10"], [["ndcg", 0.5], ["recall", 1.0]]))
    metric     @10
    ------  ------
    ndcg    0.5000
    recall  1.0000
    """
    cells = [[format_value(v) for v in row] for row in rows]
    widths = [len(h) for h in headers]
    for row in cells:
        for i, cell in enumerate(row):
            widths[i] = max(widths[i], len(cell))

    def line(values: Sequence[str]) -> str:
        parts = [values[0].ljust(widths[0])] + [v.rjust(w) for v, w in zip(values[1:], widths[1:], strict=True)]
        return "  ".join(parts).rstrip()

    out = [] if title is None else [title]
    out.append(line(list(headers)))
    out.append("  ".join("-" * w for w in widths))
    out.extend(line(row) for row in cells)
    return "\n".join(out)

"""Fixed-width text tables for the chapters (nbval compares text outputs exactly, so they must be stable)."""
from __future__ import annotations

__all__ = ["format_table"]


def format_table(rows, columns, formats=None) -> str:
    """A fixed-width text table: ``rows`` are dicts, ``columns`` their keys in order, ``formats`` optional specs."""
    formats = formats or {}

    def cell(row, col):
        value = row[col]
        spec = formats.get(col)
        if spec is None or isinstance(value, str):
            return str(value)
        return format(value, spec)

    cells = [[cell(r, c) for c in columns] for r in rows]
    widths = [max([len(c)] + [len(r[i]) for r in cells]) for i, c in enumerate(columns)]
    lines = ["  ".join(c.ljust(w) for c, w in zip(columns, widths)).rstrip(),
             "  ".join("-" * w for w in widths)]
    for r in cells:
        lines.append("  ".join(v.ljust(w) if i == 0 else v.rjust(w) for i, (v, w) in enumerate(zip(r, widths))).rstrip())
    return "\n".join(lines)

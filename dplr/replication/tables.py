"""Results tables for the chapters: HTML for the site, fixed-width text for ``text/plain`` and the PDF.

A chapter displays a :class:`ResultTable` (built by :func:`result_table`). Jupyter stores both of its forms:
``text/html``, a pandas Styler with a fixed uuid whose cells are strings already rounded here (so the HTML is a
deterministic function of the rounded values, and nbval can compare it exactly), and ``text/plain``, the same
table as fixed-width text (:func:`format_table`), which nbval compares as well and the PDF prints. Numbers are
right-aligned; a verdict that fails ("NOT reproduced", "FAILS", "[¬Re]") is set in bold in the theme's danger
colour, which pydata-sphinx-theme defines for its light and its dark mode.
"""
from __future__ import annotations

import html as _html
import numbers

__all__ = ["format_table", "result_table", "ResultTable", "FAILED_VERDICTS"]

#: Cell texts marked as failed verdicts.
FAILED_VERDICTS = frozenset({"NOT reproduced", "not reproduced", "FAILS", "fails", "[¬Re]", "False"})


def _cell(value, spec):
    if isinstance(value, str):
        return value
    if spec is None:
        return str(value)
    return format(value, spec)


def format_table(rows, columns, formats=None) -> str:
    """A fixed-width text table: ``rows`` are dicts, ``columns`` their keys in order, ``formats`` optional specs."""
    formats = formats or {}
    return _fixed_width([str(c) for c in columns], [[_cell(r[c], formats.get(c)) for c in columns] for r in rows])


def _fixed_width(headers, cells, right=None) -> str:
    """Columns padded to their widest cell; the columns ``right`` (indices; default all but the first) right-aligned."""
    right = set(range(1, len(headers))) if right is None else set(right)
    widths = [max([len(h)] + [len(r[i]) for r in cells]) for i, h in enumerate(headers)]
    lines = ["  ".join(h.ljust(w) for h, w in zip(headers, widths)).rstrip(),
             "  ".join("-" * w for w in widths)]
    for r in cells:
        lines.append("  ".join(v.rjust(w) if i in right else v.ljust(w) for i, (v, w) in enumerate(zip(r, widths))).rstrip())
    return "\n".join(lines)


class ResultTable:
    """A table a chapter displays: ``_repr_html_`` (Styler HTML) for the site, ``repr`` (fixed-width text) otherwise.

    ``cells`` are rows of strings (already rounded); ``numeric`` the columns to right-align; ``verdicts`` the
    columns whose failed verdicts (:data:`FAILED_VERDICTS`) are marked; ``name`` the Styler's uuid (unique on
    its page: the CSS of one table must not style another).
    """

    def __init__(self, columns, cells, *, name, numeric=(), verdicts=(), caption=None):
        self.columns = list(columns)
        self.cells = [list(r) for r in cells]
        self.name = name
        self.numeric = [c for c in self.columns if c in set(numeric)]
        self.verdicts = [c for c in self.columns if c in set(verdicts)]
        self.caption = caption

    @property
    def text(self) -> str:
        return (self.caption + "\n" if self.caption else "") + _fixed_width(self.columns, self.cells,
                                                                               [i for i, c in enumerate(self.columns)
                                                                                if c in self.numeric])

    def failed(self, row, column) -> bool:
        return column in self.verdicts and row[self.columns.index(column)] in FAILED_VERDICTS

    def styler(self):
        """The pandas Styler (pandas and jinja2 are imported here, on first display)."""
        import pandas as pd  # imported here: only the HTML form needs pandas' Styler (and jinja2)

        frame = pd.DataFrame(self.cells, columns=range(len(self.columns)))
        styler = frame.style.set_uuid(self.name).hide(axis="index").format(escape="html")
        styler = styler.relabel_index(self.columns, axis="columns")
        classes = pd.DataFrame([["dplr-failed" if self.failed(r, c) else "" for c in self.columns] for r in self.cells],
                               columns=frame.columns)
        styler = styler.set_td_classes(classes)
        styles = [{"selector": "", "props": "font-size: 0.85em; border-collapse: collapse; margin-bottom: 1em;"},
                  {"selector": "th, td", "props": "padding: 0.15em 0.6em; vertical-align: top;"},
                  {"selector": "th", "props": "text-align: left;"},
                  {"selector": ".dplr-failed", "props": "font-weight: bold; color: var(--pst-color-danger, #c62828);"}]
        for i, column in enumerate(self.columns):
            if column in self.numeric:
                styles.append({"selector": f".col{i}", "props": "text-align: right; white-space: nowrap;"})
        styler = styler.set_table_styles(styles).set_table_attributes('class="dplr-table"')
        if self.caption:
            styler = styler.set_caption(_html.escape(self.caption))
        return styler

    @property
    def html(self) -> str:
        return self.styler().to_html()

    def _repr_html_(self):
        return self.html

    def __repr__(self):
        return self.text


def result_table(rows, columns=None, formats=None, *, name, verdicts=(), caption=None, rename=None) -> ResultTable:
    """A :class:`ResultTable` from ``rows`` (dicts or a DataFrame): ``columns`` to show, ``formats`` their specs.

    Columns whose values are numbers are right-aligned; ``rename`` maps column keys to the headers shown.
    """
    if hasattr(rows, "to_dict"):
        rows = rows.to_dict("records")
    rows = list(rows)
    columns = list(columns or rows[0])
    formats = formats or {}
    numeric = [c for c in columns if rows and all(isinstance(r[c], numbers.Number) and not isinstance(r[c], bool)
                                                  for r in rows) or c in formats]
    cells = [[_cell(r[c], formats.get(c)) for c in columns] for r in rows]
    rename = rename or {}
    headers = [rename.get(c, c) for c in columns]
    return ResultTable(headers, cells, name=name, numeric=[rename.get(c, c) for c in numeric],
                       verdicts=[rename.get(c, c) for c in verdicts], caption=caption)

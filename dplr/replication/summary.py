"""One table for every published number and our verdict on it (the book's replication summary page).

Each replication chapter turns its verdict table into :class:`SummaryRow` objects and glues
:func:`html_table` of them (an HTML output, checked by nbval like any other output); the summary page
and the landing page paste those glued tables and counts across documents (myst-nb pastes text, HTML
and images from another page), so nothing on them is typed by hand. The published values come from the
package's data (:mod:`dplr.replication.paper.published` for the paper,
:mod:`dplr.replication.thesis.published` for the thesis), each with its source.
"""
from __future__ import annotations

import html
from dataclasses import dataclass

__all__ = ["SummaryRow", "ItemRow", "figure1_summary_rows", "thesis_summary_rows", "figure2_summary_rows",
           "thesis_figure_rows", "html_table", "items_html_table", "verdict_counts", "RESCIENCE"]

_FAILED_STYLE = "font-weight: bold; color: var(--pst-color-danger, #c62828)"
#: ReScience's marks for a reproduced and a not reproduced item.
RESCIENCE = {True: "[Re]", False: "[¬Re]"}

_METHOD_NAMES = {"standard": "Standard LR", "sensitivity": "Sensitivity method (Alg. 1)",
                 "objective": "New method (Alg. 2)"}


@dataclass(frozen=True)
class SummaryRow:
    """One published number beside ours.

    ``interval`` is the range of published values our verdict rule accepts (see
    :func:`dplr.replication.verdicts.replication_verdict`); ``reproduced`` is that rule's outcome.
    """

    source: str  # e.g. "NIPS 2008, Figure 1 (p. 6)"
    quantity: str  # what the number is, e.g. "separable · Sensitivity method (Alg. 1) · mean test error"
    published: str  # as printed in the source
    ours: float
    low: float
    high: float
    reproduced: bool

    @property
    def verdict(self) -> str:
        return "reproduced" if self.reproduced else "not reproduced"


@dataclass(frozen=True)
class ItemRow:
    """One published statement or figure panel beside what we measured: a verdict without a number's interval."""

    source: str  # e.g. "NIPS 2008, Figure 2(c) (p. 7)"
    item: str  # what is judged, e.g. "separable · plotting window"
    published: str  # the statement, quoted, or what the figure shows
    ours: str  # what we measured
    reproduced: bool

    @property
    def verdict(self) -> str:
        return "reproduced" if self.reproduced else "not reproduced"


def figure2_summary_rows(table, source="NIPS 2008, Figure 2({panel}) and its text (pp. 6-7)"):
    """Rows for the paper's Figure 2 from :meth:`dplr.replication.paper.study.Replication.figure2_judgements`."""
    return [ItemRow(source.format(panel=r.panel), f"({r.panel}) {r.data} · {r.item}", r.published, r.ours,
                    bool(r.holds)) for r in table.itertuples()]


def thesis_figure_rows(table):
    """Rows for the thesis' Figures 4-9 from :meth:`dplr.replication.thesis.study.ThesisStudy.figure_claims`."""
    return [ItemRow(f"Veldhuizen 2020, {r.figure}, {r.where}", f"{r.figure} · {r.data} · {r.curve} curve · {r.test}",
                    f"“{r.quote}”", r.measured, bool(r.holds)) for r in table.itertuples()]


def figure1_summary_rows(table, source="NIPS 2008, Figure 1 (p. 6)", decimals=4):
    """Rows for the paper's Figure 1 from :meth:`dplr.replication.paper.study.Replication.figure1_table`.

    Two rows per entry: the mean test error and its "standard deviation over five folds".
    """
    rows = []
    for r in table.itertuples():
        name = f"{r.data} · {_METHOD_NAMES[r.method]}"
        rows.append(SummaryRow(source, f"{name} · mean test error", f"{r.published_mean:.{decimals}f}",
                               float(r.mean), max(float(r.mean_low), 0.0), float(r.mean_high),
                               bool(r.mean_reproduced)))
        rows.append(SummaryRow(source, f"{name} · std over five folds", f"{r.published_std:.{decimals}f}",
                               float(r.std), max(float(r.std_low), 0.0), float(r.std_high), bool(r.std_reproduced)))
    return rows


def thesis_summary_rows(table, values, reading):
    """Rows for the thesis' Table 2 from :func:`dplr.replication.thesis.cells.verdicts` (one row per published test error).

    ``values`` are the published :class:`dplr.replication.thesis.published.ThesisValue` objects (for their source);
    ``reading`` names the pipeline our numbers come from (e.g. "as described").
    """
    where = {(v.data, v.method): v.where for v in values}
    rows = []
    for r in table.itertuples():
        rows.append(SummaryRow(f"Veldhuizen 2020, {where[(r.data, r.method)]}",
                               f"{r.data} · {_METHOD_NAMES[r.method]} · mean test error ({reading})", r.thesis,
                               float(r.ours), max(float(r.low), 0.0), float(r.high), bool(r.reproduced)))
    return rows


def html_table(rows, decimals=4):
    """An HTML table: source, quantity, published, ours, accepted range, verdict (bold when reproduced)."""
    head = "".join(f"<th>{h}</th>" for h in ("source", "quantity", "published", "ours", "accepted range",
                                               "verdict"))
    body = []
    for row in rows:
        verdict = (f"<strong>{RESCIENCE[True]} {row.verdict}</strong>" if row.reproduced
                   else f'<span class="dplr-failed" style="{_FAILED_STYLE}">{RESCIENCE[False]} {row.verdict}</span>')
        cells = (html.escape(row.source), html.escape(row.quantity), html.escape(row.published),
                 f"{row.ours:.{decimals}f}", f"[{row.low:.{decimals}f}, {row.high:.{decimals}f}]", verdict)
        body.append("<tr>" + "".join(f"<td>{c}</td>" for c in cells) + "</tr>")
    return (f'<table class="table replication-summary"><thead><tr>{head}</tr></thead>'
            f"<tbody>{''.join(body)}</tbody></table>")


def items_html_table(rows):
    """An HTML table of :class:`ItemRow`: source, item, published, ours, verdict ([Re] in bold, [¬Re] marked)."""
    head = "".join(f"<th>{h}</th>" for h in ("source", "item", "published", "ours", "verdict"))
    body = []
    for row in rows:
        verdict = (f"<strong>{RESCIENCE[True]} {row.verdict}</strong>" if row.reproduced
                   else f'<span class="dplr-failed" style="{_FAILED_STYLE}">{RESCIENCE[False]} {row.verdict}</span>')
        cells = (html.escape(row.source), html.escape(row.item), html.escape(row.published), html.escape(row.ours),
                 verdict)
        body.append("<tr>" + "".join(f"<td>{c}</td>" for c in cells) + "</tr>")
    return (f'<table class="table replication-summary"><thead><tr>{head}</tr></thead>'
            f"<tbody>{''.join(body)}</tbody></table>")


def verdict_counts(rows):
    """``(reproduced, total)``."""
    return sum(row.reproduced for row in rows), len(rows)

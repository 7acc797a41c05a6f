"""Results tables for the chapters: HTML for the site, a Markdown table for the PDF, fixed-width text otherwise.

A chapter displays a :class:`ResultTable` (built by :func:`result_table`), or a pandas Styler it formats itself
through :func:`styled` (:class:`StyledTable`: the Styler's HTML, and its cells as a Markdown table and as text).
Jupyter stores three forms of each, and ``pytest --nbval`` compares all three exactly: ``text/html``, a pandas
Styler with a fixed uuid whose cells are strings already rounded here (so the HTML is a deterministic function of
the rounded values), which the site shows; ``text/markdown``, the same cells as a MyST table (``_markdown_table``: a
pipe table in a ``{table}`` directive with the caption, LaTeX's column types before it, every ASCII punctuation
character of a cell escaped), which the PDF's LaTeX builder prefers to text (myst-nb's priority for LaTeX; the book
renders Markdown outputs as MyST, ``nb_render_markdown_format``), so the PDF typesets a real table within the page; and
``text/plain``, the table as fixed-width text (:func:`format_table`), for a terminal. Numbers are right-aligned; a
verdict that fails ("NOT reproduced", "FAILS", "[¬Re]") is set in bold, on the site in the theme's danger colour,
which pydata-sphinx-theme defines for its light and its dark mode.

The site's content column is about 750 px wide at 1280 px. A table with many columns is built ``compact``: its
headers wrap, its text cells may break after ``/`` and ``_`` (``<wbr>`` in the HTML only) and its padding is
smaller, so it fits. Printed lines are kept to :data:`WIDTH` characters (:func:`wrap`), which fit the column.

(Over 400 lines: the studies' table builders sit beside the three forms every table shares.)
"""
from __future__ import annotations

import html as _html
import math
import numbers
import re
import textwrap

__all__ = ["format_table", "result_table", "ResultTable", "styled", "StyledTable", "FAILED_VERDICTS", "verdict",
           "PDF_TABLE_CHARACTERS", "PDF_COLUMN_CHARACTERS", "PDF_WIDE_SIZES",
           "figure1_tables", "thesis_verdict_table", "thesis_ranking_table", "THESIS_SWITCHES", "WIDTH", "wrap",
           "real_comparison_table", "CONTENDER_NAMES", "modern_error_table", "modern_loss_error_table",
           "modern_comparison_table", "signed"]

#: The widest printed line (characters) that fits the site's content column at 1280 px (about 85 fit).
WIDTH = 80


def wrap(text, width=WIDTH) -> str:
    """``text`` with every line longer than ``width`` wrapped, continuation lines indented by two more spaces
    than the line's own indentation (so a printed result fits the content column)."""
    out = []
    for line in str(text).split("\n"):
        indent = line[:len(line) - len(line.lstrip())]
        out.extend(textwrap.wrap(line, width, subsequent_indent=indent + "  ", break_on_hyphens=False,
                                 break_long_words=False) or [line])
    return "\n".join(out)

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
        padded = (v.rjust(w) if i in right else v.ljust(w) for i, (v, w) in enumerate(zip(r, widths)))
        lines.append("  ".join(padded).rstrip())
    return "\n".join(lines)


#: ASCII punctuation: backslash-escaped in a Markdown cell (CommonMark lets every one be escaped), so that MyST reads
#: ``$``, ``|``, ``*``, ``_``, ``[`` and the rest as text.
_PUNCTUATION = re.compile(r"([!-/:-@\[-`{-~])")


def _markdown_text(text):
    return _PUNCTUATION.sub(r"\\\1", str(text))


#: The widest table (characters of its widest cells, two more per column) the PDF's text width takes in natural
#: columns (tables of 92 characters in nine columns overflowed it); a wider one gets relative column widths, and its
#: cells wrap.
PDF_TABLE_CHARACTERS = 80
#: The widest column (characters) of a table that wraps: longer cells break into lines.
PDF_COLUMN_CHARACTERS = 24
#: The sizes of a wide table in the PDF, the first whose columns' longest words fit: LaTeX's size, its column
#: padding (``\tabcolsep``, each side), about how many characters (average ones, padding included) a line holds at
#: that size, and how many of them a column's padding takes.
PDF_WIDE_SIZES = (("footnotesize", "6pt", 100, 3), ("scriptsize", "3pt", 114, 2))


def _markdown_table(headers, cells, right=(), bold=lambda i, j: False, caption=None) -> str:
    """A MyST table for the PDF: a pipe table (cell ``(i, j)`` bold where ``bold`` says so) in a ``{table}`` directive
    (a colon fence: a caption may hold any character) with the ``caption`` and class ``longtable`` (the PDF breaks a
    long table across pages instead of moving it whole), after a ``{tabularcolumns}`` directive that gives LaTeX its
    column types: ``l`` and ``r`` (the columns ``right``) when the table fits the page, else -- wider than
    :data:`PDF_TABLE_CHARACTERS` -- fractions of the line width, ragged, in a smaller size (the first of
    :data:`PDF_WIDE_SIZES` where the columns' longest words fit; a ``{raw} latex`` block on each side, which the site
    ignores): each column its longest word, and what else a line holds shared among the columns whose text is longer,
    up to :data:`PDF_COLUMN_CHARACTERS` each, so that the cells wrap at their spaces within the page. Line breaks in a
    cell become spaces; a table without rows gets one saying "(none)" (LaTeX's table needs a body)."""
    def cell(text):
        return _markdown_text(" ".join(str(text).split()))

    right = set(right)
    if not cells:
        cells, bold = [["(none)"] + [""] * (len(headers) - 1)], (lambda i, j: False)
    lines = ["| " + " | ".join(cell(h) for h in headers) + " |",
             "|" + "|".join("---:" if j in right else ":---" for j in range(len(headers))) + "|"]
    for i, row in enumerate(cells):
        lines.append("| " + " | ".join((f"**{cell(c)}**" if bold(i, j) and cell(c) else cell(c))
                                       for j, c in enumerate(row)) + " |")
    text = [[" ".join(str(h).split()) for h in headers]] + [[" ".join(str(c).split()) for c in row] for row in cells]
    natural = [max(len(row[j]) for row in text) for j in range(len(headers))]
    options = ":class: longtable\n"
    if sum(natural) + 2 * len(natural) > PDF_TABLE_CHARACTERS:
        # each column at least its longest word (a header wraps at its spaces, a cell too, within at most
        # PDF_COLUMN_CHARACTERS); what the line holds beyond that goes to the columns that can wrap, in proportion
        # to how much longer their text is; a column's padding is LaTeX's, whatever its width
        least = [max([3] + [len(word) for row in text for word in row[j].split()]) for j in range(len(headers))]
        most = [max([least[j]] + [min(len(row[j]), PDF_COLUMN_CHARACTERS) for row in text[1:]])
                for j in range(len(headers))]
        size, padding, line, pad = next((size for size in PDF_WIDE_SIZES
                                         if sum(least) + size[3] * len(headers) <= size[2]), PDF_WIDE_SIZES[-1])
        room = line - sum(least) - pad * len(headers)
        extra = sum(m - l for m, l in zip(most, least))
        share = 1.0 if extra <= max(room, 0) else max(room, 0) / extra  # no room left: every column its longest word
        widths = [pad + l + math.floor((m - l) * share) for l, m in zip(least, most)]  # down: within the line
        columns = " ".join(rf">{{\{'raggedleft' if j in right else 'raggedright'}\arraybackslash}}\X{{{w}}}{{{sum(widths)}}}"
                           for j, w in enumerate(widths))
        small = (f":::{{raw}} latex\n\\begingroup\\{size}\\setlength{{\\tabcolsep}}{{{padding}}}\n:::\n\n",
                 "\n\n:::{raw} latex\n\\endgroup\n:::")
    else:
        columns = "".join("r" if j in right else "l" for j in range(len(headers)))
        small = ("", "")
    table = "\n".join(lines)
    return (f":::{{tabularcolumns}} {columns}\n:::\n\n{small[0]}"
            f":::{{table}}{' ' + cell(caption) if caption else ''}\n{options}\n{table}\n:::{small[1]}")


def _breakable(text):
    """``text`` escaped for HTML, with a line-break opportunity (``<wbr>``) after every ``/`` and ``_``."""
    return _html.escape(text, quote=False).replace("/", "/<wbr>").replace("_", "_<wbr>")


class ResultTable:
    """A table a chapter displays: ``_repr_html_`` (Styler HTML) for the site, ``repr`` (fixed-width text) otherwise.

    ``cells`` are rows of strings (already rounded); ``numeric`` the columns to right-align; ``verdicts`` the
    columns whose failed verdicts (:data:`FAILED_VERDICTS`) are marked; ``name`` the Styler's uuid (unique on
    its page: the CSS of one table must not style another); ``compact`` lets a table of many columns fit the
    content column (headers wrap, text cells may break after ``/`` and ``_``, less padding).
    """

    def __init__(self, columns, cells, *, name, numeric=(), verdicts=(), caption=None, compact=False):
        self.columns = list(columns)
        self.cells = [list(r) for r in cells]
        self.name = name
        self.numeric = [c for c in self.columns if c in set(numeric)]
        self.verdicts = [c for c in self.columns if c in set(verdicts)]
        self.caption = caption
        self.compact = compact

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
        if self.compact:  # a line may break after / and _ in a text cell (escaped first: only <wbr> is markup)
            text = [i for i, c in enumerate(self.columns) if c not in self.numeric]
            styler = styler.format(_breakable, subset=text)
        styler = styler.relabel_index(self.columns, axis="columns")
        classes = pd.DataFrame([["dplr-failed" if self.failed(r, c) else "" for c in self.columns] for r in self.cells],
                               columns=frame.columns)
        styler = styler.set_td_classes(classes)
        styles = [{"selector": "", "props": "font-size: 0.85em; border-collapse: collapse; margin-bottom: 1em;"},
                  {"selector": "th, td", "props": "padding: 0.15em 0.6em; vertical-align: top;"},
                  {"selector": "th", "props": "text-align: left;"},
                  {"selector": ".dplr-failed", "props": "font-weight: bold; color: var(--pst-color-danger, #c62828);"}]
        if self.compact:  # smaller, and headers wrap (th.col_heading outranks the numeric columns' .colN)
            styles[0] = {"selector": "", "props": "font-size: 0.8em; border-collapse: collapse; margin-bottom: 1em;"}
            styles[1] = {"selector": "th, td", "props": "padding: 0.15em 0.35em; vertical-align: top;"}
            styles.append({"selector": "th.col_heading", "props": "white-space: normal; vertical-align: bottom;"})
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

    @property
    def markdown(self) -> str:
        """The table as MyST Markdown (:func:`_markdown_table`): what the PDF typesets."""
        right = [j for j, c in enumerate(self.columns) if c in self.numeric]
        return _markdown_table(self.columns, self.cells, right, lambda i, j: self.failed(self.cells[i], self.columns[j]),
                               self.caption)

    def _repr_markdown_(self):
        return self.markdown

    def __repr__(self):
        return self.text


class StyledTable:
    """A table a chapter styles itself (a pandas Styler with a fixed uuid): the Styler's own HTML for the site, and its
    formatted cells as fixed-width text for ``text/plain`` and the PDF (a bare Styler prints there as
    ``<pandas.io.formats.style.Styler at 0x...>``, and the PDF would show no table). The text has the caption, one
    header line (multi-line headers and index names joined) and every index label repeated."""

    def __init__(self, styler):
        self.styler = styler

    def _header_and_rows(self):
        """The formatted cells: one header row (multi-line headers and index names joined) and the body rows."""
        lines = self.styler.to_string(delimiter="\t", sparse_index=False, sparse_columns=False).rstrip("\n")
        rows = [line.split("\t") for line in lines.split("\n")]
        n_header = len(rows) - len(self.styler.data)
        width = max(len(r) for r in rows)
        rows = [r + [""] * (width - len(r)) for r in rows]
        return [" ".join(part for part in parts if part) for parts in zip(*rows[:n_header])], rows[n_header:]

    @property
    def text(self) -> str:
        header, rows = self._header_and_rows()
        caption = self.styler.caption
        return (f"{caption}\n" if caption else "") + _fixed_width(header, rows)

    @property
    def markdown(self) -> str:
        """The formatted cells as a MyST table (the PDF's form), numbers right-aligned as in :attr:`text`."""
        header, rows = self._header_and_rows()
        return _markdown_table(header, rows, range(1, len(header)), caption=self.styler.caption)

    def _repr_html_(self):
        return self.styler.to_html()

    def _repr_markdown_(self):
        return self.markdown

    def __repr__(self):
        return self.text


def styled(styler) -> StyledTable:
    """:class:`StyledTable` of ``styler``: display it instead of the bare Styler, so that the PDF prints the table."""
    return StyledTable(styler)


def result_table(rows, columns=None, formats=None, *, name, verdicts=(), caption=None, rename=None,
                 footer=None, right=(), compact=False) -> ResultTable:
    """A :class:`ResultTable` from ``rows`` (dicts or a DataFrame): ``columns`` to show, ``formats`` their specs.

    Columns whose values are numbers are right-aligned; ``rename`` maps column keys to the headers shown;
    ``footer`` is one more row (a dict; missing columns stay empty), e.g. the published numbers under a ranking;
    ``right`` names more columns to right-align (numbers already formatted as strings); ``compact`` as in
    :class:`ResultTable`.
    """
    if hasattr(rows, "to_dict"):
        rows = rows.to_dict("records")
    rows = list(rows)
    columns = list(columns or rows[0])
    formats = formats or {}
    numeric = [c for c in columns if rows and all(isinstance(r[c], numbers.Number) and not isinstance(r[c], bool)
                                                  for r in rows) or c in formats or c in right]
    if footer is not None:
        rows = rows + [{c: footer.get(c, "") for c in columns}]
    cells = [[_cell(r[c], formats.get(c)) for c in columns] for r in rows]
    rename = rename or {}
    headers = [rename.get(c, c) for c in columns]
    return ResultTable(headers, cells, name=name, numeric=[rename.get(c, c) for c in numeric],
                       verdicts=[rename.get(c, c) for c in verdicts], caption=caption, compact=compact)


def verdict(reproduced) -> str:
    """The chapters' word for the verdict rule's outcome."""
    return "reproduced" if reproduced else "NOT reproduced"


#: The methods as the paper's Figure 1 names them, and as the thesis does.
PAPER_METHOD_NAMES = {"standard": "Standard LR", "sensitivity": "Sensitivity method", "objective": "New method"}
THESIS_METHOD_NAMES = {"standard": "standard LR", "sensitivity": "Algorithm 1", "objective": "Algorithm 2"}
#: The same, short, for the headers of wide tables.
THESIS_SHORT_NAMES = {"standard": "LR", "sensitivity": "Alg. 1", "objective": "Alg. 2"}


def _interval(low, high, decimals, clip=False):
    return f"[{max(low, 0) if clip else low:.{decimals}f}, {high:.{decimals}f}]"


def figure1_tables(table, name, caption):
    """The paper's Figure 1 judged: a table of the means and one of the standard deviations over five folds.

    ``table`` is :meth:`dplr.replication.paper.study.Replication.figure1_table`; ours to four decimals as the
    paper prints, with the 95% interval over folds (means) and the verdict rule's accepted range ("accepts",
    clipped at 0: errors and standard deviations are not negative).
    """
    means, stds = [], []
    for r in table.itertuples():
        mean_printed, std_printed = r.published.split("±")
        head = {"data": r.data, "method": PAPER_METHOD_NAMES[r.method]}
        means.append({**head, "published": mean_printed, "ours": f"{r.mean:.4f}",
                      "95% CI": _interval(r.ci_low, r.ci_high, 4),
                      "accepts": _interval(r.mean_low, r.mean_high, 4, clip=True),
                      "verdict": verdict(r.mean_reproduced)})
        stds.append({**head, "published": std_printed, "ours": f"{r.std:.4f}",
                     "accepts": _interval(r.std_low, r.std_high, 4, clip=True), "verdict": verdict(r.std_reproduced)})
    numeric = ("published", "ours", "95% CI", "accepts")
    return (ResultTable(list(means[0]), [list(r.values()) for r in means], name=f"{name}-mean", numeric=numeric,
                        verdicts=["verdict"], caption=f"{caption}: mean test error"),
            ResultTable(list(stds[0]), [list(r.values()) for r in stds], name=f"{name}-std", numeric=numeric,
                        verdicts=["verdict"], caption=f"{caption}: standard deviation over five folds"))


def thesis_verdict_table(table, name, caption):
    """The thesis' Table 2 (or a part of it) judged: ``table`` is :func:`dplr.replication.thesis.cells.verdicts`."""
    rows = [{"data": r.data, "method": THESIS_METHOD_NAMES[r.method], "thesis": r.thesis, "ours": f"{r.ours:.3f}",
             "accepts": _interval(r.low, r.high, 3), "verdict": verdict(r.reproduced)} for r in table.itertuples()]
    return ResultTable(list(rows[0]), [list(r.values()) for r in rows], name=name,
                       numeric=("thesis", "ours", "accepts"), verdicts=["verdict"], caption=caption)


#: The switches of the thesis pipeline (:mod:`dplr.replication.thesis.pipeline`), as its search tables name them.
THESIS_SWITCHES = ("normalisation", "labels", "penalty", "noise", "noise_n", "rule")


def thesis_ranking_table(table, k, *, name, caption, published, switches=THESIS_SWITCHES, errors=None,
                         headers=None, deviation_format=".3f"):
    """The ``k`` best combinations of a thesis pipeline search, and the thesis' numbers in a last row.

    ``table`` is a ranking of :attr:`dplr.replication.thesis.study.ThesisStudy.rankings` (best first; one column per
    switch, the errors, ``max_deviation`` and ``reproduced``); ``published`` maps error columns to the thesis' numbers
    (its keys, in order, are the error columns unless ``errors`` names them); ``headers`` renames error columns
    (methods are headed by their short names, :data:`THESIS_SHORT_NAMES`). Errors are printed to three decimals as
    the thesis prints them; the table is :class:`ResultTable` ``compact``.
    """
    errors = list(errors or published)
    rename = {"noise_n": "N", "max_deviation": "max dev", "reproduced": "repr.", **THESIS_SHORT_NAMES,
              **(headers or {})}
    footer = {switches[0]: "thesis", **{c: f"{v:.3f}" for c, v in published.items()}}
    return result_table(table.head(k), [*switches, *errors, "max_deviation", "reproduced"],
                        {**{c: ".3f" for c in errors}, "max_deviation": deviation_format}, name=name,
                        caption=caption, rename=rename, footer=footer, right=["reproduced"], compact=True)


def signed(x, decimals=4) -> str:
    """``x`` to ``decimals`` decimals with its sign (differences of error rates of a few in 10,000 test records are
    compared at four); a value that rounds to zero is printed unsigned ("0.0000"), whatever its sign."""
    text = f"{x:+.{decimals}f}"
    return text[1:] if float(text) == 0 else text


def _p_value(p):
    return "< 0.001" if p < 0.001 else f"{p:.3f}"


def real_comparison_table(points, comparisons, part, name, caption=None):
    """The real-data study's paired comparisons (:func:`dplr.replication.real.study.paired_comparisons`) of one
    ``part`` (``"tradeoff"`` or ``"curve"``) with both methods' mean test errors: one row per data set, loss, ε
    (and training size for the curves), the mean difference Algorithm 2 − Algorithm 1 with its 95% interval, the
    Holm-adjusted p-value and the verdict of the fixed rule."""
    means = points[points.part == part].pivot_table(index=["data", "loss", "epsilon", "n"], columns="method",
                                                    values="mean")
    rows, order = [], {"adult": 0, "kdd": 1, "logistic": 0, "huber": 1}
    chosen = comparisons[comparisons.part == part]
    chosen = chosen.assign(_d=chosen.data.map(order), _l=chosen.loss.map(order)).sort_values(["_d", "_l", "epsilon", "n"])
    for _, c in chosen.iterrows():
        m = means.loc[(c.data, c.loss, c.epsilon, c.n)]
        row = {"data": {"adult": "Adult", "kdd": "KDDCup99"}.get(c.data, c.data),
               "loss": {"logistic": "logistic", "huber": "Huber"}.get(c.loss, c.loss), "ε": f"{c.epsilon:g}"}
        if part == "curve":
            row["n"] = f"{int(c.n):,}"
        row.update({"Alg. 2": f"{m['objective']:.3f}", "Alg. 1": f"{m['sensitivity']:.3f}",
                    "Alg. 2 − Alg. 1 [95% CI]": f"{signed(c.mean_difference)} [{signed(c.ci_low)}, {signed(c.ci_high)}]",
                    "p (Holm)": _p_value(c.p_holm), "verdict": c.verdict})
        rows.append(row)
    right = ["ε", "n", "Alg. 2", "Alg. 1", "Alg. 2 − Alg. 1 [95% CI]", "p (Holm)"]
    return result_table(rows, name=name, caption=caption, right=[r for r in right if r in rows[0]], compact=True)


#: Short names of the contenders of :mod:`dplr.replication.modern` (and diffprivlib's recorded run) in tables.
CONTENDER_NAMES = {"objective": "Alg. 2", "sensitivity": "Alg. 1", "gaussian_output": "Gauss. output",
                   "gaussian_objective": "Gauss. objective", "amp": "AMP", "dpsgd": "DP-SGD",
                   "diffprivlib": "diffprivlib"}
_LOSS_NAMES = {"logistic": "logistic", "huber": "Huber"}


def _by_loss_and_epsilon(frame):
    order = {"logistic": 0, "huber": 1}
    return frame.assign(_l=frame.loss.map(order)).sort_values(["_l", "epsilon"])


def modern_error_table(points, key, name, caption=None):
    """Mean test error ± the half-width of its 95% t-interval of every contender (columns, in the order of
    :data:`CONTENDER_NAMES`) at every loss and ε (rows) of data set ``key``."""
    sub = points[points.data == key]
    methods = [m for m in CONTENDER_NAMES if m in set(sub.method)]
    wide = sub.pivot_table(index=["loss", "epsilon"], columns="method", values=["mean", "ci_low", "ci_high"])
    rows = []
    keys = _by_loss_and_epsilon(wide.index.to_frame(index=False))
    for loss, eps in zip(keys.loss, keys.epsilon):
        row = {"loss": _LOSS_NAMES.get(loss, loss), "ε": f"{eps:g}"}
        for m in methods:
            mean = wide.loc[(loss, eps), ("mean", m)]
            half = (wide.loc[(loss, eps), ("ci_high", m)] - wide.loc[(loss, eps), ("ci_low", m)]) / 2
            row[CONTENDER_NAMES[m]] = "" if math.isnan(mean) else f"{mean:.3f}±{half:.3f}"
        rows.append(row)
    return result_table(rows, name=name, caption=caption, right=["ε"] + [CONTENDER_NAMES[m] for m in methods],
                        compact=True)


def modern_loss_error_table(points, key, loss, name, caption=None):
    """:func:`modern_error_table` of one loss of data set ``key``, without its loss column: the same cells, every ε a
    row and every contender a column, narrow enough for the site's content column with all seven contenders."""
    table = modern_error_table(points[points.loss == loss], key, name, caption)
    assert table.columns[0] == "loss" and {row[0] for row in table.cells} <= {_LOSS_NAMES.get(loss, loss)}
    return ResultTable(table.columns[1:], [row[1:] for row in table.cells], name=name, numeric=table.numeric,
                       caption=caption, compact=True)


def modern_comparison_table(comparisons, key, name, caption=None, reference="objective"):
    """The paired comparisons with the reference (:func:`dplr.replication.modern.study.paired_comparisons`) on data set
    ``key``: per loss and ε (rows) and contender (columns), the mean difference contender − reference in test error
    and the fixed rule's verdict: "better" or "worse" than the reference where the Holm-corrected test supports it,
    "~" where it does not."""
    sub = comparisons[comparisons.data == key]
    methods = [m for m in CONTENDER_NAMES if m in set(sub.method)]
    cells = sub.set_index(["loss", "epsilon", "method"])
    keys = _by_loss_and_epsilon(sub[["loss", "epsilon"]].drop_duplicates())
    rows = []
    for loss, eps in zip(keys.loss, keys.epsilon):
        row = {"loss": _LOSS_NAMES.get(loss, loss), "ε": f"{eps:g}"}
        for m in methods:
            if (loss, eps, m) not in cells.index:
                row[CONTENDER_NAMES[m]] = ""
                continue
            c = cells.loc[(loss, eps, m)]
            word = "~" if c.verdict == "no difference shown" else ("better" if c.verdict.startswith(m) else "worse")
            shown = signed(c.mean_difference)
            if shown == "0.000" and word != "~":  # a supported difference below 0.0005: one more digit shows its sign
                shown = f"{c.mean_difference:+.4f}"
            row[CONTENDER_NAMES[m]] = f"{shown} {word}"
        rows.append(row)
    return result_table(rows, name=name, caption=caption, right=["ε"] + [CONTENDER_NAMES[m] for m in methods],
                        compact=True)

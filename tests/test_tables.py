"""dplr.replication.tables: fixed-width text tables for the chapters."""
import json
import math
import re
from pathlib import Path

import pytest

from dplr.replication.tables import format_table


def test_format_table():
    text = format_table([{"a": "x", "b": 1.23456}], ["a", "b"], {"b": ".2f"})
    assert text.splitlines() == ["a  b", "-  ----", "x  1.23"]


def test_format_table_aligns_text_left_and_numbers_right():
    rows = [{"name": "long name", "value": 1.5}, {"name": "x", "value": 12.25}]
    lines = format_table(rows, ["name", "value"], {"value": ".2f"}).splitlines()
    assert lines == ["name       value", "---------  -----", "long name   1.50", "x          12.25"]


def test_result_table_html_is_deterministic_and_marks_failed_verdicts():
    pytest.importorskip("jinja2")  # pandas' Styler needs it: installed with the book (and dplr[dask]), not by dplr alone
    from dplr.replication.tables import result_table

    rows = [{"data": "a<b", "ours": 0.12345, "verdict": "NOT reproduced"},
            {"data": "c", "ours": 1.0, "verdict": "reproduced"}]
    table = result_table(rows, formats={"ours": ".3f"}, name="t1", verdicts=["verdict"], footer={"data": "paper"})
    html = table._repr_html_()
    assert html == result_table(rows, formats={"ours": ".3f"}, name="t1", verdicts=["verdict"],
                                footer={"data": "paper"})._repr_html_()
    assert 'id="T_t1"' in html and "a&lt;b" in html and "0.123" in html
    assert html.count("dplr-failed") == 2  # its CSS rule and the one failed cell
    assert "#T_t1 .col1" in html and "#T_t1 .col2" not in html  # numbers right-aligned, verdicts not
    assert repr(table).splitlines() == ["data   ours   verdict", "-----  -----  --------------",
                                        "a<b    0.123  NOT reproduced", "c      1.000  reproduced", "paper"]


def test_compact_table_lets_text_cells_and_headers_break():
    pytest.importorskip("jinja2")
    from dplr.replication.tables import result_table

    rows = [{"rule": "sign/mis_x<", "error": 0.5}]
    html = result_table(rows, formats={"error": ".3f"}, name="t2", compact=True)._repr_html_()
    assert ">sign/<wbr>mis_<wbr>x&lt;</td>" in html  # escaped first, then the break opportunities
    assert "#T_t2 th.col_heading {\n  white-space: normal;" in html and ">0.500</td>" in html
    assert "<wbr>" not in result_table(rows, name="t3")._repr_html_()  # the default form is unchanged


def test_wrap_keeps_lines_within_the_width_and_indents_continuations():
    from dplr.replication.tables import WIDTH, wrap

    text = wrap("word " * 40 + "\n  " + "x " * 60)
    lines = text.splitlines()
    assert max(map(len, lines)) <= WIDTH and len(lines) == 5
    assert lines[1].startswith("  word") and lines[3].startswith("  x") and lines[4].startswith("    x")
    assert wrap("short\nlines") == "short\nlines"


def test_thesis_ranking_table_puts_the_thesis_numbers_under_the_ranking():
    pd = pytest.importorskip("pandas")
    from dplr.replication.tables import thesis_ranking_table

    ranking = pd.DataFrame([{"normalisation": "row", "labels": "pm1", "penalty": "l1_mean", "noise": "gamma_scale",
                             "noise_n": "train", "rule": "sign/correct", "standard": 0.1234, "max_deviation": 0.02,
                             "reproduced": 1}] * 3)
    table = thesis_ranking_table(ranking, 2, name="r", caption="c", published={"standard": 0.391})
    assert table.columns[-3:] == ["LR", "max dev", "repr."] and table.compact
    assert table.cells[-1][0] == "thesis" and table.cells[-1][6] == "0.391" and len(table.cells) == 3
    assert table.cells[0][6] == "0.123" and table.cells[0][-1] == "1"


def test_real_comparison_table_orders_rows_and_prints_interval_p_and_verdict():
    import pandas as pd

    from dplr.replication.tables import real_comparison_table

    points = pd.DataFrame([dict(data=d, loss=l, part="tradeoff", method=m, epsilon=1.0, n=100, mean=v)
                           for d in ("kdd", "adult") for l in ("huber", "logistic")
                           for m, v in (("objective", 0.1234), ("sensitivity", 0.2))])
    comparisons = pd.DataFrame([dict(data=d, loss=l, part="tradeoff", epsilon=1.0, n=100, mean_difference=-0.0766,
                                     ci_low=-0.08, ci_high=-0.07, p_holm=p, verdict=v)
                                for (d, l), p, v in zip([("kdd", "huber"), ("kdd", "logistic"), ("adult", "huber"),
                                                         ("adult", "logistic")], [1e-5, 0.2, 0.01, 0.04],
                                                        ["objective better", "no difference shown",
                                                         "objective better", "objective better"])])
    table = real_comparison_table(points, comparisons, "tradeoff", name="t")
    assert [row[:2] for row in table.cells] == [["Adult", "logistic"], ["Adult", "Huber"], ["KDDCup99", "logistic"],
                                                ["KDDCup99", "Huber"]]
    assert table.cells[0][3:] == ["0.123", "0.200", "-0.0766 [-0.0800, -0.0700]", "0.040", "objective better"]
    assert table.cells[3][6] == "< 0.001" and "n" not in table.columns


def test_a_styled_table_keeps_the_stylers_html_and_prints_its_cells_as_text():
    # A bare Styler prints as "<pandas.io.formats.style.Styler at 0x...>": the PDF would show no table. styled() keeps
    # the HTML exactly and prints the formatted cells, index labels repeated and index names in the header.
    pytest.importorskip("jinja2")  # pandas' Styler needs it: installed with the book, not by dplr alone
    import pandas as pd

    from dplr.replication.tables import styled

    frame = pd.DataFrame({"R": [1, 1, 10], "x": [0.5, 0.25, 0.125], "value": [1.23456, 2.0, 3.0]}).set_index(["R", "x"])
    styler = frame.style.format("{:.3f}").format_index("{:g}").set_uuid("t-styled").set_caption("a caption")
    table = styled(styler)
    assert table._repr_html_() == styler._repr_html_()
    assert repr(table).split("\n") == ["a caption",  # headers left-aligned; the first column too, the others right
                                       "R   x      value",
                                       "--  -----  -----",
                                       "1     0.5  1.235",
                                       "1    0.25  2.000",
                                       "10  0.125  3.000"]
    hidden = styled(pd.DataFrame({"a": [0.5], "b": ["x"]}).style.format({"a": "{:.2f}"}).hide(axis="index"))
    assert repr(hidden).split("\n") == ["a     b", "----  -", "0.50  x"]
    assert "Styler at" not in repr(table) and "Styler at" not in repr(hidden)


def test_result_table_markdown_is_a_myst_table_the_pdf_typesets():
    from dplr.replication.tables import result_table

    rows = [{"data": "a<b|$x$_*", "ours": 0.12345, "verdict": "NOT reproduced"},
            {"data": "c", "ours": 1.0, "verdict": "reproduced"}]
    table = result_table(rows, formats={"ours": ".3f"}, name="t1", verdicts=["verdict"], caption="Figure `1`: [95%]")
    # LaTeX's column types (numbers right-aligned), then the table: a colon fence (a caption may hold backticks), the
    # caption and class longtable (a long table breaks across pages), every ASCII punctuation escaped (MyST would
    # read $x$ as math, | as a cell border, _ and * as emphasis), a failed verdict in bold
    assert table._repr_markdown_().splitlines() == [
        ":::{tabularcolumns} lrl", ":::", "", ":::{table} Figure \\`1\\`\\: \\[95\\%\\]", ":class: longtable", "",
        "| data | ours | verdict |", "|:---|---:|:---|", "| a\\<b\\|\\$x\\$\\_\\* | 0\\.123 | **NOT reproduced** |",
        "| c | 1\\.000 | reproduced |", ":::"]
    assert "\n:::{table}\n:class: longtable\n\n| data |" in result_table(rows, name="t2")._repr_markdown_()


def test_a_table_without_rows_gets_one_for_latex():
    from dplr.replication.tables import ResultTable

    markdown = ResultTable(["a", "b"], [], name="e", numeric=["b"])._repr_markdown_()
    assert "| a | b |\n|:---|---:|\n| \\(none\\) |  |\n:::" in markdown  # LaTeX's longtable needs a body


def _pdf_columns(markdown):
    """(LaTeX size or None, [(width, total) of each \\X column]) of a table's MyST form."""
    spec = markdown.split("\n", 1)[0]
    size = re.search(r"\\begingroup\\(\w+)\\setlength", markdown)
    return (size.group(1) if size else None), [(int(w), int(t)) for w, t in re.findall(r"\\X\{(\d+)\}\{(\d+)\}", spec)]


def test_a_wide_table_gets_column_widths_so_that_its_cells_wrap_in_the_pdf():
    from dplr.replication.tables import PDF_COLUMN_CHARACTERS, PDF_TABLE_CHARACTERS, PDF_WIDE_SIZES, result_table

    narrow = result_table([{"a": "x" * 10, "b": 1.0}], name="n")._repr_markdown_()
    assert "begingroup" not in narrow and narrow.startswith(":::{tabularcolumns} lr\n")
    row = {"name": "KDDCup99", "text": "word " * 30, "value": 1.5, "more": "w " * 20}
    assert sum(len(str(v)) for v in row.values()) > PDF_TABLE_CHARACTERS
    wide = result_table([row], name="w")._repr_markdown_()
    # each column at least its longest word; the rest of the line shared among the columns that wrap, in proportion to
    # how much longer their text is (at most PDF_COLUMN_CHARACTERS); the padding of the first size, which fits
    size, padding, line, pad = PDF_WIDE_SIZES[0]
    least, most = [8, 4, 5, 4], [8, PDF_COLUMN_CHARACTERS, 5, PDF_COLUMN_CHARACTERS]
    share = min(1.0, (line - sum(least) - pad * 4) / (sum(most) - sum(least)))
    widths = [pad + l + math.floor((m - l) * share) for l, m in zip(least, most)]
    columns = " ".join(rf">{{\{'raggedleft' if j == 2 else 'raggedright'}\arraybackslash}}\X{{{w}}}{{{sum(widths)}}}"
                       for j, w in enumerate(widths))
    assert wide.startswith(f":::{{tabularcolumns}} {columns}\n:::\n\n:::{{raw}} latex\n"
                           f"\\begingroup\\{size}\\setlength{{\\tabcolsep}}{{{padding}}}\n:::")
    assert wide.endswith(":::\n\n:::{raw} latex\n\\endgroup\n:::")


@pytest.mark.parametrize("columns, word", [(9, 9), (10, 8), (12, 7)])
def test_a_table_whose_longest_words_overfill_the_first_size_takes_the_next(columns, word):
    # Words of 9 characters in 9 columns need 9 * (9 + 3) = 108 at the first size's padding, more than its line holds:
    # the chapters had tables like this, whose columns LaTeX then set narrower than their words (overfull in the PDF).
    from dplr.replication.tables import PDF_WIDE_SIZES, result_table

    row = {f"c{j}": "x" * word + " y" * 20 for j in range(columns)}
    size, fractions = _pdf_columns(result_table([row], name="s")._repr_markdown_())
    first, second = PDF_WIDE_SIZES[0], PDF_WIDE_SIZES[1]
    assert columns * (word + first[3]) > first[2] and size == second[0]
    # at that size every column's share of the line holds its longest word and its padding
    assert all(w / t * second[2] >= word + second[3] - 1e-9 for w, t in fractions)


def test_a_table_of_unbreakable_words_wider_than_the_page_gets_each_column_its_longest_word():
    # nothing can wrap and the words alone exceed every size's line: every column gets its longest word and the widths
    # stay in proportion (the PDF test then finds the overflow; a review of the chapters found this shape raising
    # ZeroDivisionError, which IPython turned into a silent error output)
    from dplr.replication.tables import PDF_WIDE_SIZES, result_table

    row = {f"c{j}": "x" * 14 for j in range(10)}
    size, fractions = _pdf_columns(result_table([row], name="u")._repr_markdown_())
    pad = PDF_WIDE_SIZES[-1][3]
    assert size == PDF_WIDE_SIZES[-1][0] and fractions == [(14 + pad, 10 * (14 + pad))] * 10


@pytest.mark.parametrize("chapter", sorted((Path(__file__).resolve().parents[1] / "book").glob("*.ipynb")),
                         ids=lambda path: path.stem)
def test_every_stored_wide_table_gives_each_column_its_longest_word(chapter):
    # The chapters' wide tables as stored (what the PDF typesets): at their size, a column's share of the line holds
    # its longest word, unless no size can (then the PDF test reports the overflow).
    from dplr.replication.tables import PDF_WIDE_SIZES

    lines = {size: (line, pad) for size, _, line, pad in PDF_WIDE_SIZES}
    for cell in json.loads(chapter.read_text())["cells"]:
        for output in cell.get("outputs", []):
            markdown = "".join(output.get("data", {}).get("text/markdown", ""))
            size, fractions = _pdf_columns(markdown)
            if not fractions:
                continue
            body = [[c.replace("\\", "") for c in row.strip("|").split(" | ")]
                    for row in markdown.splitlines() if row.startswith("| ")]
            longest = [max(len(w) for row in body for w in row[j].replace("**", "").split() or [""])
                       for j in range(len(fractions))]
            line, pad = lines[size]
            assert all(w / t * line >= word + pad - 1e-9 for (w, t), word in zip(fractions, longest)), (
                chapter.name, size, fractions, longest)


def test_styled_table_markdown_has_the_formatted_cells():
    pd = pytest.importorskip("pandas")
    pytest.importorskip("jinja2")
    from dplr.replication.tables import styled

    frame = pd.DataFrame({"a": [1.234, 2.0], "b": ["x", "y_z"]}, index=["r1", "r2"])
    table = styled(frame.style.format({"a": "{:.2f}"}).set_caption("cap").set_uuid("u"))
    assert table._repr_markdown_().splitlines() == [":::{tabularcolumns} lrr", ":::", "", ":::{table} cap",
                                                    ":class: longtable", "", "|  | a | b |", "|:---|---:|---:|",
                                                    "| r1 | 1\\.23 | x |", "| r2 | 2\\.00 | y\\_z |", ":::"]

"""The chapters' stored outputs against the nbval sanitizer's float rule (tests/nbval_sanitize.cfg).

nbval compares a long float after truncating it to 6 decimals, so that last-bit differences between CPUs and BLAS
libraries do not fail it. Truncation is safe for a value whose dropped digits are far from a boundary (another
machine's value, a few ulps away, truncates the same), and unsafe for one that sits on it: a quantity that is
mathematically a short decimal (a mean of counts, 0.1 computed through exp and log) is printed as
0.16021900000000003 here and may be 0.16021899999999998 elsewhere, and the two truncate differently. Such values
must be rounded where they are computed (or glued). This test finds those that were stored in their long form; it
cannot see a value that happened to print short here (0.022941) and may print long elsewhere (0.022940999999999986):
glue a computed mean rounded whether or not this test flags it.
"""
import configparser
import json
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
CHAPTERS = sorted((ROOT / "book").glob("*.ipynb"))
#: A dropped tail closer than this to a truncation boundary (in units of the 6th decimal) is flagged: 1e-9 absolute
#: at the units digit, a million times the relative rounding of a float64 result near 1.
MARGIN = 1e-3


def _float_rule():
    config = configparser.ConfigParser()
    config.read(ROOT / "tests" / "nbval_sanitize.cfg")
    rules = [config[s]["regex"] for s in config.sections() if s.startswith("full-precision floats")]
    assert len(rules) == 1 and rules[0].endswith(r"\d+"), "the sanitizer's float rule changed: update this test"
    return re.compile(rules[0][:-len(r"\d+")] + r"(\d+)")  # the digits it drops, as the last group


def _compared(cell):
    """Whether nbval compares the cell's outputs (a cell marked ``# NBVAL_IGNORE_OUTPUT``, or tagged
    ``nbval-ignore-output``, holds measurements such as timings, which differ between runs whatever their digits)."""
    source = "".join(cell.get("source", ""))
    return "NBVAL_IGNORE_OUTPUT" not in source and "nbval-ignore-output" not in cell.get("metadata", {}).get("tags", [])


def _texts(notebook, compared_only=False):
    for index, cell in enumerate(notebook["cells"]):
        if compared_only and not _compared(cell):
            continue
        for output in cell.get("outputs", []):
            if "text" in output:
                yield index, "".join(output["text"])
            for kind, value in output.get("data", {}).items():
                if "text" in kind:
                    yield index, value if isinstance(value, str) else "".join(value)


def on_the_boundary(text, rule=None):
    """The long floats of ``text`` whose digits past the 6th decimal lie within MARGIN of a truncation boundary
    (formatted numbers whose dropped digits are all zeros, such as ``1.00000000``, are not: they were rounded)."""
    rule = rule or _float_rule()
    found = []
    for match in rule.finditer(text):
        tail = match.group(match.lastindex)
        if set(tail) == {"0"} and len(tail) < 6:
            continue
        fraction = float("0." + tail)
        if min(fraction, 1 - fraction) < MARGIN:
            found.append(match.group(0))
    return found


def test_the_check_finds_values_on_the_boundary_and_passes_others():
    assert on_the_boundary("0.16021900000000003 and 0.09999999999999432") == ["0.16021900000000003",
                                                                                "0.09999999999999432"]
    assert on_the_boundary("0.33208955223880593, 1.00000000, 0.0151, 0.160219") == []


@pytest.mark.parametrize("chapter", CHAPTERS, ids=[p.stem for p in CHAPTERS])
def test_no_stored_float_sits_on_the_sanitizers_truncation_boundary(chapter):
    rule = _float_rule()
    notebook = json.loads(chapter.read_text())
    found = [(index, value) for index, text in _texts(notebook, compared_only=True)
             for value in on_the_boundary(text, rule)]
    assert not found, (f"{chapter.name}: cell index and value of stored floats on a 6-decimal boundary {found}; "
                       "another machine may print them a few ulps lower or higher, and nbval's truncation would then "
                       "differ. Fix: round them where they are computed or glued (e.g. round(x, 9)).")


@pytest.mark.parametrize("chapter", CHAPTERS, ids=lambda path: path.stem)
def test_no_stored_output_prints_a_bare_pandas_styler(chapter):
    # The PDF prints text/plain: a bare Styler there is "<pandas.io.formats.style.Styler at 0x...>", no table. A chapter
    # displays a ResultTable (dplr.replication.tables.result_table) or its Styler through tables.styled.
    notebook = json.loads(chapter.read_text(encoding="utf-8"))
    bare = [index for index, text in _texts(notebook) if "pandas.io.formats.style.Styler at 0x" in text]
    assert not bare, (f"{chapter.name}: cells {bare} print a bare Styler; display it through "
                      "dplr.replication.tables.styled")


@pytest.mark.parametrize("chapter", CHAPTERS, ids=lambda path: path.stem)
def test_every_stored_table_has_the_form_the_pdf_typesets(chapter):
    # A displayed table's text/plain has a fixed-width header rule ("----  ----"), or its HTML a <table>; the PDF would
    # print the text unless the output also holds the MyST table (text/markdown) that dplr.replication.tables gives
    # every table. A printed (stream) table has no MyST form: print tables through display, not print.
    notebook = json.loads(chapter.read_text(encoding="utf-8"))
    missing = []
    for index, cell in enumerate(notebook["cells"]):
        for output in cell.get("outputs", []):
            data = output.get("data", {})
            plain = "".join(data.get("text/plain", "")) + "".join(output.get("text", ""))  # printed tables too
            table = re.search(r"^-+(  -+)+$", plain, re.M) or "<table" in "".join(data.get("text/html", ""))
            if table and ":::{table}" not in "".join(data.get("text/markdown", "")):
                missing.append(index)
    assert not missing, (f"{chapter.name}: cells {missing} display a fixed-width table without its MyST form: display "
                         f"a dplr.replication.tables.ResultTable, or a pandas Styler through tables.styled")


@pytest.mark.parametrize("chapter", CHAPTERS, ids=lambda path: path.stem)
def test_no_stored_output_is_an_error(chapter):
    # A cell that raises stops the chapter, but an exception in a display method (a _repr_markdown_, say) becomes an
    # "error" output beside the forms that worked, and nbval would compare it with itself on the next run.
    notebook = json.loads(chapter.read_text(encoding="utf-8"))
    errors = [(index, output.get("ename")) for index, cell in enumerate(notebook["cells"])
              for output in cell.get("outputs", []) if output.get("output_type") == "error"]
    assert not errors, f"{chapter.name}: error outputs stored (cell index, exception): {errors}"

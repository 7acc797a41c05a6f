"""dplr.replication.tables: fixed-width text tables for the chapters."""
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

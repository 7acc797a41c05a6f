"""dplr.replication.tables: fixed-width text tables for the chapters."""
from dplr.replication.tables import format_table


def test_format_table():
    text = format_table([{"a": "x", "b": 1.23456}], ["a", "b"], {"b": ".2f"})
    assert text.splitlines() == ["a  b", "-  ----", "x  1.23"]


def test_format_table_aligns_text_left_and_numbers_right():
    rows = [{"name": "long name", "value": 1.5}, {"name": "x", "value": 12.25}]
    lines = format_table(rows, ["name", "value"], {"value": ".2f"}).splitlines()
    assert lines == ["name       value", "---------  -----", "long name   1.50", "x          12.25"]

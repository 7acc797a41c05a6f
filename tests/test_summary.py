"""The replication summary rows and table."""
import pandas as pd

from dplr.replication.summary import figure1_summary_rows, html_table, thesis_summary_rows, verdict_counts
from dplr.replication.thesis.published import TABLE2


def _table():
    return pd.DataFrame([
        {"data": "separable", "method": "sensitivity", "published_mean": 0.2962, "published_std": 0.0617,
         "mean": 0.0641, "mean_low": 0.05, "mean_high": 0.07, "mean_reproduced": False,
         "std": 0.003, "std_low": -0.001, "std_high": 0.006, "std_reproduced": False},
        {"data": "unseparable", "method": "standard", "published_mean": 0.0530, "published_std": 0.1105,
         "mean": 0.0489, "mean_low": 0.045, "mean_high": 0.0531, "mean_reproduced": True,
         "std": 0.004, "std_low": 0.0, "std_high": 0.008, "std_reproduced": False},
    ])


def test_two_rows_per_figure1_entry_with_verdicts_from_the_table():
    rows = figure1_summary_rows(_table())
    assert [r.quantity.split(" · ")[-1] for r in rows] == ["mean test error", "std over five folds"] * 2
    assert [r.reproduced for r in rows] == [False, False, True, False]
    assert rows[1].low == 0.0  # negative lower ends are clipped: an error or std is >= 0
    assert rows[2].published == "0.0530" and rows[2].verdict == "reproduced"
    assert verdict_counts(rows) == (1, 4)


def test_html_table_lists_every_row_and_bolds_reproduced():
    rows = figure1_summary_rows(_table())
    table = html_table(rows)
    assert table.count("<tr>") == 1 + len(rows)
    assert table.count("<strong>[Re] reproduced</strong>") == 1
    assert "0.0641" in table and "[0.0450, 0.0531]" in table


def test_thesis_rows_carry_the_published_source():
    table = pd.DataFrame([{"data": "real", "method": "sensitivity", "thesis": "0.395", "ours": 0.489, "low": 0.41,
                           "high": 0.57, "reproduced": False}])
    (row,) = thesis_summary_rows(table, TABLE2, "as described")
    assert row.source.startswith("Veldhuizen 2020, Table 2") and row.published == "0.395"
    assert "as described" in row.quantity and not row.reproduced


def test_verdicts_carry_rescience_marks():
    rows = figure1_summary_rows(_table())
    table = html_table(rows)
    assert table.count("[Re] reproduced") == 1 and table.count("[¬Re] not reproduced") == 3


def test_item_rows_from_figure2_judgements_and_thesis_claims():
    from dplr.replication.summary import figure2_summary_rows, items_html_table, thesis_figure_rows

    fig2 = pd.DataFrame([{"panel": "c", "data": "separable", "item": "plotting window", "published": "0.1 to 0.6",
                          "ours": "13 of 24 inside", "holds": False}])
    thesis = pd.DataFrame([{"figure": "Figure 9", "data": "real", "curve": "epsilon", "test": "algorithm1_all",
                            "where": "Section 5.3 (p. 17)", "quote": "algorithm 1 <better>", "measured": "0 of 7",
                            "holds": True}])
    rows = figure2_summary_rows(fig2) + thesis_figure_rows(thesis)
    assert rows[0].source == "NIPS 2008, Figure 2(c) and its text (pp. 6-7)" and not rows[0].reproduced
    assert rows[1].source.startswith("Veldhuizen 2020, Figure 9") and rows[1].reproduced
    table = items_html_table(rows)
    assert table.count("<tr>") == 3 and "&lt;better&gt;" in table and "[¬Re] not reproduced" in table
    assert verdict_counts(rows) == (1, 2)

"""dplr.replication.modern: the comparison's study, its fixed rule and its record."""
from types import SimpleNamespace

import numpy as np
import pandas as pd
import pytest

from dplr.replication.modern import record
from dplr.replication.modern.study import REFERENCE, paired_comparisons, run_modern_study


def _dataset(n=1200, n_test=400, d=5, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n + n_test, d))
    X /= np.maximum(1.0, np.linalg.norm(X, axis=1))[:, None]
    y = np.where(X @ np.ones(d) + 0.3 * rng.standard_normal(n + n_test) > 0, 1.0, -1.0)
    return SimpleNamespace(X_train=X[:n], y_train=y[:n], X_test=X[n:], y_test=y[n:])


KWARGS = dict(datasets=("adult",), losses=("logistic",), contenders=("objective", "gaussian_output", "amp"),
              repeats={"objective": 3, "gaussian_output": 3, "amp": 2}, epsilons=(0.3, 3.0), seed=5)


def test_study_does_not_depend_on_threads_or_processes_and_pairs_on_the_split():
    data = {"adult": _dataset()}
    one = run_modern_study(n_jobs=1, data=data, **KWARGS)
    pd.testing.assert_frame_equal(one.rows, run_modern_study(n_jobs=2, data=data, **KWARGS).rows)
    pd.testing.assert_frame_equal(one.rows, run_modern_study(n_jobs=2, processes=True, data=data, **KWARGS).rows)
    assert len(one.rows) == (3 + 3 + 2) * 2
    # a contender with fewer repeats is compared on the repeats both ran
    amp = one.comparisons[one.comparisons.method == "amp"]
    assert set(amp.repeats) == {2} and set(one.comparisons.method) == {"gaussian_output", "amp"}
    assert (one.points.ci_low <= one.points["mean"]).all() and (one.points["mean"] <= one.points.ci_high).all()
    assert set(one.references.columns) >= {"chance", "error_nonprivate_best", "n_test"}


def _rows(shift, repeats=30, seed=1):
    rng = np.random.default_rng(seed)
    base = rng.uniform(0.1, 0.3, repeats)
    return pd.concat([pd.DataFrame({"data": "x", "loss": "logistic", "epsilon": 1.0, "repeat": np.arange(repeats),
                                    "method": method, "error_private": base + extra + rng.normal(0, 0.01, repeats)})
                      for method, extra in ((REFERENCE, 0.0), ("dpsgd", shift))], ignore_index=True)


def test_the_rule_finds_a_clear_difference_either_way_and_not_a_null_one():
    # a shift of 0.05 against per-repeat noise sd 0.014 over 30 paired repeats: p < 1e-15 at this seed
    assert paired_comparisons(_rows(-0.05)).iloc[0].verdict == "dpsgd better"
    assert paired_comparisons(_rows(0.05)).iloc[0].verdict == "objective better"
    # no shift: this seed gives p = 0.7; a correct test fails here with probability 0.05 over seeds
    assert paired_comparisons(_rows(0.0)).iloc[0].verdict == "no difference shown"


def test_rows_without_the_reference_give_no_comparison():
    # a run of some contenders alone (e.g. one recomputed after a fix): nothing is paired, and nothing fails
    rows = _rows(0.0)
    table = paired_comparisons(rows[rows.method != REFERENCE])
    assert table.empty and {"p_holm", "verdict", "mean_difference"} <= set(table.columns)


def test_the_record_round_trips_and_its_check_fails_on_a_change(tmp_path):
    data = {"adult": _dataset(seed=2)}
    study = run_modern_study(n_jobs=1, data=data, **KWARGS)
    path = tmp_path / "modern.csv.gz"
    record.write_record(study, path)
    rows, settings = record.read_record(path)
    assert settings["repeats"] == KWARGS["repeats"] and settings["epsilons"] == [0.3, 3.0]
    assert record.check_against_record(rows, study.rows) == len(study.rows)
    # a run at one epsilon is part of the record (streams named by contender and epsilon)
    part = run_modern_study(n_jobs=1, data=data, **{**KWARGS, "epsilons": (3.0,)})
    assert record.check_against_record(rows, part.rows) == len(part.rows)
    changed = rows.copy()
    changed.loc[changed.index[-1], "error_private"] += 1 / 400
    with pytest.raises(AssertionError, match="error_private"):
        record.check_against_record(changed, study.rows)
    changed = rows.copy()
    changed.loc[changed.index[0], "candidate"] = (changed.loc[changed.index[0], "candidate"] + 1) % 5
    with pytest.raises(AssertionError, match="candidate"):
        record.check_against_record(changed, study.rows)
    assert record.compare_records(path, path) == len(rows)


def test_unknown_contenders_are_refused():
    with pytest.raises(ValueError, match="unknown contenders"):
        run_modern_study(contenders=("objective", "magic"), data={"adult": _dataset()}, datasets=("adult",))


def test_counts_recommendations_and_costs_read_the_comparisons():
    from dplr.replication.modern.study import costs, points, recommendations, verdict_counts
    rows = pd.concat([_rows(-0.05), _rows(0.05).query("method == 'dpsgd'").assign(method="amp"),
                      _rows(0.0, seed=3).query("method == 'dpsgd'").assign(method="sensitivity")], ignore_index=True)
    comparisons = paired_comparisons(rows)
    counts = verdict_counts(comparisons).set_index("method")
    assert counts.loc["dpsgd", "better"] == 1 and counts.loc["amp", "worse"] == 1
    assert counts.loc["sensitivity", "no_difference"] == 1
    advice = recommendations(comparisons, points(rows)).iloc[0]
    assert advice.use == "dpsgd" and advice.shown_worse == ("amp",) and advice.not_distinguished == ("sensitivity",)
    cost = costs({"x/logistic/dpsgd": 20.0}, {"dpsgd": 2}, n_epsilons=5).iloc[0]
    assert cost.models == 10 and cost.per_model == 2.0 and cost.per_fit == 0.4


def test_error_and_comparison_tables(tmp_path):
    from dplr.replication.modern.study import points
    from dplr.replication.tables import modern_comparison_table, modern_error_table
    rows = _rows(-0.05)
    errors = modern_error_table(points(rows), "x", name="t-errors")
    assert errors.columns == ["loss", "ε", "Alg. 2", "DP-SGD"] and errors.cells[0][1] == "1"
    comparison = modern_comparison_table(paired_comparisons(rows), "x", name="t-comparisons")
    assert comparison.columns == ["loss", "ε", "DP-SGD"] and comparison.cells[0][2].endswith("better")
    assert comparison.cells[0][2].startswith("-0.05")


def test_equal_differences_that_differ_in_their_last_bit_are_equal():
    from dplr.replication.statistics import paired_t_test
    diff = np.array([0.3 - 0.1, 0.4 - 0.2, 0.5 - 0.3])  # all 0.2, not bitwise
    assert np.ptp(diff) > 0
    low, high, p = paired_t_test(diff)
    assert low == high == pytest.approx(0.2) and p == 0.0

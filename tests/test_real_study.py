"""dplr.replication.real: the fixed comparison rule (Holm, paired t) and a small study across threads."""
from types import SimpleNamespace

import numpy as np
import pandas as pd
import pytest

from dplr.replication.real.study import holm, paired_comparisons, run_real_study


def _dataset(n=1500, n_test=500, d=6, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n + n_test, d))
    X /= np.maximum(1.0, np.linalg.norm(X, axis=1))[:, None]
    y = np.where(X @ np.ones(d) + 0.3 * rng.standard_normal(n + n_test) > 0, 1.0, -1.0)
    return SimpleNamespace(X_train=X[:n], y_train=y[:n], X_test=X[n:], y_test=y[n:])


def test_holm_adjusts_step_down():
    # sorted: 0.01 * 4 = 0.04; 0.03 * 3 = 0.09; 0.04 * 2 = 0.08 -> 0.09 (monotone); 0.2 * 1 = 0.2
    np.testing.assert_allclose(holm([0.01, 0.04, 0.03, 0.2]), [0.04, 0.09, 0.09, 0.2])
    np.testing.assert_allclose(holm([0.5, 0.9]), [1.0, 1.0])


def _rows(shift, repeats=30, seed=1):
    rng = np.random.default_rng(seed)
    base = rng.uniform(0.1, 0.3, repeats)
    frames = []
    for method, extra in (("sensitivity", 0.0), ("objective", shift)):
        frames.append(pd.DataFrame({"data": "x", "loss": "logistic", "part": "tradeoff", "epsilon": 1.0, "n": 100,
                                    "repeat": np.arange(repeats), "method": method,
                                    "error_private": base + extra + rng.normal(0, 0.01, repeats)}))
    return pd.concat(frames, ignore_index=True)


def test_paired_comparison_rule_finds_a_clear_difference_and_not_a_null_one():
    # A shift of -0.05 against per-repeat noise sd 0.014 over 30 paired repeats: p = 2e-18 with this seed.
    clear = paired_comparisons(_rows(-0.05)).iloc[0]
    assert clear.verdict == "objective better" and clear.ci_high < 0
    # No shift: this fixed seed gives p = 0.71; over seeds a correct test would fail here with probability 0.05.
    null = paired_comparisons(_rows(0.0)).iloc[0]
    assert null.verdict == "no difference shown" and null.ci_low < 0 < null.ci_high


def test_signed_rank_check_agrees_on_clear_cases_and_differs_from_the_t_test_on_an_outlier():
    # The same seeds as above: the clear shift gives p < 1e-5 by the signed-rank test too, the null p = 0.78.
    assert paired_comparisons(_rows(-0.05), test="signed-rank").iloc[0].verdict == "objective better"
    assert paired_comparisons(_rows(0.0), test="signed-rank").iloc[0].verdict == "no difference shown"
    # 29 differences of -0.01 and one of +0.99: the t-test is dominated by the outlier (mean +0.023, p = 0.49), the
    # ranks are not (p = 2.6e-6, and the signed-rank sum points the other way)
    rows = _rows(0.0)
    objective = rows.method == "objective"
    rows.loc[objective, "error_private"] = rows.loc[rows.method == "sensitivity", "error_private"].to_numpy() - 0.01
    rows.loc[objective & (rows.repeat == 0), "error_private"] += 1.0
    t, ranks = paired_comparisons(rows).iloc[0], paired_comparisons(rows, test="signed-rank").iloc[0]
    assert t.verdict == "no difference shown" and ranks.verdict == "objective better"
    assert ranks.p < 1e-4 < 0.05 < t.p and t.mean_difference > 0 > ranks.signed_rank_sum
    with pytest.raises(ValueError, match="signed-rank"):
        paired_comparisons(rows, test="wilcoxon")


def test_signed_rank_test_sums_signed_ranks_and_drops_zeros():
    from dplr.replication.statistics import paired_signed_rank_test
    # ranks of |d| = (1, 2, 3) after the zero is dropped, signs (-, +, -): S = -1 + 2 - 3
    assert paired_signed_rank_test([0.0, -0.1, 0.2, -0.3])[1] == -2.0
    assert paired_signed_rank_test(np.zeros(20)) == (1.0, 0.0)
    # 30 equal differences that are zero up to rounding (0.3 - 0.1 - 0.2 is 2.8e-17): no difference, p = 1; unrounded
    # they would give p ~ 4e-8
    assert paired_signed_rank_test(np.full(30, 0.3 - 0.1 - 0.2)) == (1.0, 0.0)


@pytest.mark.parametrize("loss", ["logistic", "huber"])
def test_small_study_does_not_depend_on_threads(loss):
    data = {"adult": _dataset()}
    kwargs = dict(datasets=("adult",), losses=(loss,), n_repeats=3, sizes=(0.5, 1.0), epsilons=(0.1, 1.0),
                  curve_epsilons=(0.1,), data=data, seed=7)
    one, two = run_real_study(n_jobs=1, **kwargs), run_real_study(n_jobs=2, **kwargs)
    pd.testing.assert_frame_equal(one.rows, two.rows)
    pd.testing.assert_frame_equal(one.comparisons, two.comparisons)
    assert set(one.points.part) == {"tradeoff", "curve"} and set(one.points.n) == {750, 1500}
    assert (one.points.ci_low <= one.points["mean"]).all() and (one.points["mean"] <= one.points.ci_high).all()


def test_small_study_is_the_same_on_processes():
    kwargs = dict(datasets=("adult",), losses=("logistic",), n_repeats=2, sizes=(0.5, 1.0), epsilons=(0.1, 1.0),
                  curve_epsilons=(0.1,), data={"adult": _dataset(seed=3)}, seed=9)
    here = run_real_study(n_jobs=1, **kwargs)
    pd.testing.assert_frame_equal(here.rows, run_real_study(n_jobs=2, processes=True, **kwargs).rows)


def test_holm_family_counts_the_whole_set_curve_point_once():
    rows = pd.concat([_rows(-0.05), _rows(-0.05).assign(part="curve"), _rows(0.0, seed=2).assign(n=50, part="curve")],
                     ignore_index=True)
    table = paired_comparisons(rows)
    assert len(table) == 3
    # two distinct comparisons in the family: the smallest p is multiplied by 2, not by 3
    smallest = table.p.min()
    np.testing.assert_allclose(table.p_holm.min(), 2 * smallest)
    assert table[table.n == 100].p_holm.nunique() == 1


def test_a_shorter_run_is_the_prefix_of_a_longer_one_and_the_record_checks_it(tmp_path):
    # The chapter recomputes the first repeats of the recorded study: repeat r must not depend on how many follow.
    from dplr.replication.real.record import check_against_record, read_record, write_record

    kwargs = dict(datasets=("adult",), losses=("logistic",), sizes=(0.5, 1.0), epsilons=(0.1, 1.0),
                  curve_epsilons=(0.1,), data={"adult": _dataset(seed=5)}, seed=11)
    long, short = run_real_study(n_repeats=3, **kwargs), run_real_study(n_repeats=2, **kwargs)
    path = tmp_path / "record.csv.gz"
    write_record(long.rows, {"adult": 500}, path, seed=11, n_repeats=3)
    rows, settings = read_record(path)
    assert settings == {"seed": 11, "n_repeats": 3, "n_test": {"adult": 500}}
    for column in ("error_private", "error_nonprivate", "error_best", "lam_private"):  # exact round trip
        np.testing.assert_array_equal(rows[column].to_numpy(float), long.rows[column].to_numpy(float))
    assert check_against_record(rows, short.rows) == len(short.rows) > 0
    # a record that the code does not produce is caught: one test error off by one test point
    changed = rows.copy()
    first = changed.index[(changed.repeat == 1) & (changed.method == "objective")][0]
    changed.loc[first, "error_private"] += 1 / 500
    with pytest.raises(AssertionError, match="differ from the record in error_private"):
        check_against_record(changed, short.rows)
    with pytest.raises(AssertionError, match="not in the record"):
        check_against_record(rows[rows.repeat == 0], short.rows)
    # two whole records: equal ones agree, a shorter run's does not stand in for the full one
    from dplr.replication.real.record import compare_records

    assert compare_records(path, path) == len(long.rows)
    write_record(short.rows, {"adult": 500}, tmp_path / "short.csv.gz", seed=11, n_repeats=2)
    with pytest.raises(AssertionError, match="settings"):
        compare_records(tmp_path / "short.csv.gz", path)
    # ... but it is checked as the record's prefix: its rows are the record's first two repeats, and only those
    assert compare_records(tmp_path / "short.csv.gz", path, prefix=True) == len(short.rows)
    with pytest.raises(AssertionError, match="prefix of the record needs"):
        compare_records(path, tmp_path / "short.csv.gz", prefix=True)  # more repeats than the reference
    write_record(changed[changed.repeat < 2], {"adult": 500}, tmp_path / "changed.csv.gz", seed=11, n_repeats=2)
    with pytest.raises(AssertionError, match="differ from the record in error_private"):
        compare_records(tmp_path / "changed.csv.gz", path, prefix=True)
    write_record(short.rows, {"adult": 500}, tmp_path / "seed.csv.gz", seed=12, n_repeats=2)
    with pytest.raises(AssertionError, match="settings"):
        compare_records(tmp_path / "seed.csv.gz", path, prefix=True)

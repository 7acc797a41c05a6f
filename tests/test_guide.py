"""The decision guide reads its choices off the comparisons and points it is given, and marks what was not shown."""
import numpy as np
import pandas as pd
import pytest

from dplr.replication import guide


def _frames(verdict_sensitivity, verdict_dpsgd):
    points = pd.DataFrame([
        {"data": "a", "loss": "logistic", "method": m, "epsilon": 1.0, "mean": mean, "ci_low": mean - 0.01,
         "ci_high": mean + 0.01, "repeats": 10}
        for m, mean in (("objective", 0.20), ("sensitivity", 0.25), ("dpsgd", 0.18))])
    comparisons = pd.DataFrame([
        {"data": "a", "loss": "logistic", "method": "sensitivity", "epsilon": 1.0, "verdict": verdict_sensitivity},
        {"data": "a", "loss": "logistic", "method": "dpsgd", "epsilon": 1.0, "verdict": verdict_dpsgd}])
    use = "dpsgd" if verdict_dpsgd == "dpsgd better" else "objective"
    recommendations = pd.DataFrame([{"data": "a", "loss": "logistic", "epsilon": 1.0, "use": use}])
    references = pd.DataFrame([{"data": "a", "loss": "logistic", "error_nonprivate_best": 0.15}])
    costs = pd.DataFrame([{"data": "a", "loss": "logistic", "method": m, "per_model": s}
                          for m, s in (("objective", 0.1), ("sensitivity", 0.1), ("dpsgd", 0.8))])
    return comparisons, recommendations, points, references, costs


def test_choices_follow_the_rule_and_mark_what_was_not_shown():
    row = guide.choices(*_frames("objective better", "dpsgd better")).iloc[0]
    assert (row.pure, row.pure_shown, row.approx, row.approx_shown) == ("objective", True, "dpsgd", True)
    assert np.isclose(row.pure_excess, 0.05) and np.isclose(row.approx_excess, 0.03) and row.approx_seconds == 0.8
    kept = guide.choices(*_frames("no difference shown", "no difference shown")).iloc[0]
    assert (kept.pure, kept.pure_shown, kept.approx, kept.approx_shown) == ("objective", False, "objective", False)


def test_algorithm_1_is_chosen_only_where_it_was_shown_better():
    # its mean is the higher here: the rule's verdict, not the means, decides
    row = guide.choices(*_frames("sensitivity better", "no difference shown")).iloc[0]
    assert (row.pure, row.pure_shown) == ("sensitivity", True)


def test_size_table_takes_the_lower_mean_and_one_reference_per_size():
    rows = []
    for part, ns in (("curve", (100, 200)), ("tradeoff", (200,))):
        for n in ns:
            rows.append({"data": "a", "loss": "logistic", "part": part, "method": "nonprivate", "epsilon": np.inf,
                         "n": n, "mean": 0.1})
            for m, mean in (("objective", 0.3 if n == 100 else 0.2), ("sensitivity", 0.35)):
                rows.append({"data": "a", "loss": "logistic", "part": part, "method": m, "epsilon": 1.0, "n": n,
                             "mean": mean})
    table = guide.size_table(pd.DataFrame(rows))
    assert list(table.n) == [100, 200] and list(table.method) == ["objective", "objective"]
    assert np.allclose(table.excess, [0.2, 0.1])


def test_a_constant_feature_keeps_rows_in_the_ball_and_refuses_a_bad_scale():
    import pytest

    from dplr.ball import rows_outside_ball
    from dplr.preprocessing import append_constant_feature

    rng = np.random.default_rng(3)
    X = rng.standard_normal((500, 4))
    X /= np.linalg.norm(X, axis=1)[:, None]  # on the sphere, some rows outside by rounding
    X = np.vstack([X, np.zeros((1, 4))])
    for scale in (1e-3, 0.5, 2 ** -0.5, 0.999):
        out = append_constant_feature(X, scale)
        assert out.shape == (501, 5) and np.allclose(out[:, -1], scale, rtol=2e-15, atol=0)
        assert not rows_outside_ball(out).any() and np.linalg.norm(out, axis=1).max() <= 1.0
        # the other features are shrunk by one public factor (up to the two checks' shrinks, 1.5 d + 5 ulps each for
        # d = 4 and 5, and rounding)
        assert np.allclose(out[:, :-1], np.sqrt(1 - scale ** 2) * X, rtol=4e-15, atol=0)
    for bad in (0.0, 1.0, 1.5, -0.5, np.nan):
        with pytest.raises(ValueError):
            append_constant_feature(X, bad)
    with pytest.raises(ValueError):
        append_constant_feature(2 * X, 0.5)  # rows outside the ball are refused, not rescaled


def test_paired_gains_pairs_repeat_by_repeat_and_corrects_per_data_set_and_loss():
    from dplr.replication.real import intercept

    record = pd.DataFrame([{"data": "a", "loss": "logistic", "part": "tradeoff", "method": m, "epsilon": e,
                            "repeat": r, "error_private": 0.3 + 0.001 * r, "error_nonprivate": 0.2}
                           for m in ("objective", "sensitivity") for e in (0.1, 1.0) for r in range(20)])
    with_constant = record.drop(columns="part").copy()
    shift = np.where((with_constant.method == "objective") & (with_constant.epsilon == 0.1), -0.05, 0.0)
    with_constant["error_private"] += shift + 0.001 * np.sin(with_constant.repeat)  # noise in the differences
    gains = intercept.paired_gains(with_constant, record)
    verdict = gains.set_index(["method", "epsilon"]).verdict
    assert verdict["objective", 0.1] == "constant better"
    assert (verdict.drop(("objective", 0.1)) == "no difference shown").all()
    with pytest.raises(ValueError):
        intercept.paired_gains(with_constant.assign(repeat=with_constant.repeat + 100), record)


def test_deployed_offsets_subtract_the_baseline_from_the_reference():
    baseline = pd.DataFrame([
        {"data": "a", "loss": "logistic", "stage": "B0", "method": "nonprivate", "lam": 1e-7, "error": 0.14},
        {"data": "a", "loss": "logistic", "stage": "B1", "method": "nonprivate", "lam": 1e-6, "error": 0.15},
        {"data": "a", "loss": "huber", "stage": "B0", "method": "nonprivate", "lam": 1e-7, "error": 0.14}])
    references = pd.DataFrame([{"data": "a", "loss": "logistic", "error_nonprivate_best": 0.17},
                               {"data": "a", "loss": "huber", "error_nonprivate_best": 0.13}])
    offsets = guide.deployed_offsets(baseline, references).set_index("loss")
    assert np.isclose(offsets.loc["logistic", "offset"], 0.03) and offsets.loc["logistic", "deployed_lam"] == 1e-7
    assert np.isclose(offsets.loc["huber", "offset"], -0.01)  # a reference below the baseline is kept, signed
    assert "-0.0100" in str(guide.deployed_table(guide.deployed_offsets(baseline, references), name="t"))


def test_tuning_table_marks_only_the_verdicts_of_the_rule():
    comparisons = pd.DataFrame([
        {"contender": "objective", "contrast": "rule - algorithm3", "epsilon": 1.0, "mean_difference": -0.04,
         "verdict": "rule better"},
        {"contender": "objective", "contrast": "selection - algorithm3", "epsilon": 1.0, "mean_difference": 0.02,
         "verdict": "algorithm3 better"},
        {"contender": "objective", "contrast": "rule - selection", "epsilon": 1.0, "mean_difference": -0.06,
         "verdict": "rule better"},
        {"contender": "dpsgd", "contrast": "selection - algorithm3", "epsilon": 1.0, "mean_difference": -0.03,
         "verdict": "no difference shown"}])
    text = str(guide.tuning_table(comparisons, name="t"))
    assert "-0.040 better" in text and "+0.020 worse" in text and "-0.030" in text and "-0.030 better" not in text
    assert "-0.060" not in text  # the tuners are compared with Algorithm 3 only
    assert "fixed λ" in text and "DP-SGD" in text

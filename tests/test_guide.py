"""The decision guide reads its choices off the comparisons and points it is given, and marks what was not shown."""
import numpy as np
import pandas as pd

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

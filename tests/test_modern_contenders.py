"""dplr.replication.modern.contenders: every contender is a private learner that Algorithm 3 can tune."""
import numpy as np
import pytest

from dplr.replication.modern.contenders import CONTENDERS, DELTA, check_delta, learner
from dplr.tuning import private_tuning_with


def _data(n=600, d=4, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, d))
    X /= np.maximum(1.0, np.linalg.norm(X, axis=1))[:, None]
    y = np.where(X @ np.ones(d) + 0.3 * rng.standard_normal(n) > 0, 1.0, -1.0)
    return X, y


@pytest.mark.parametrize("name", list(CONTENDERS))
def test_every_contender_is_tuned_by_algorithm_3_and_learns_at_a_large_epsilon(name):
    if name == "dpsgd":
        pytest.importorskip("dp_accounting")
    X, y = _data()
    contender = CONTENDERS[name]
    rows = private_tuning_with(learner(name), X, y, X, y, contender.candidates, [8.0], 2, name=name,
                               random_state=1, n_jobs=1)
    assert len(rows) == 2 and set(rows.method) == {name}
    # at epsilon = 8 every contender beats the majority class (error about 0.5) by far on this easy problem
    assert rows.error_private.max() < 0.3, rows
    again = private_tuning_with(learner(name), X, y, X, y, contender.candidates, [8.0], 2, name=name,
                                random_state=1, n_jobs=2)
    assert rows.equals(again)


def test_delta_must_be_below_one_over_n():
    assert check_delta(DELTA, 32_561) == DELTA
    with pytest.raises(ValueError, match="delta < 1/n"):
        check_delta(1e-3, 32_561)


def test_a_subset_of_epsilons_gives_the_same_rows_for_those_epsilons():
    # the noise and selection streams are named by the method and epsilon, so the chapter can recompute any epsilon
    X, y = _data()
    contender = CONTENDERS["gaussian_output"]
    run = lambda eps: private_tuning_with(learner("gaussian_output"), X, y, X, y, contender.candidates, eps, 2,  # noqa: E731
                                          name="gaussian_output", random_state=3, n_jobs=1)
    every, some = run([0.1, 1.0, 3.0]), run([3.0, 0.1])
    merged = some.merge(every, on=["repeat", "epsilon"], suffixes=("", "_all"))
    assert len(merged) == 4
    for column in ("candidate", "error_private", "p_chosen_best"):
        np.testing.assert_array_equal(merged[column], merged[column + "_all"])
    # and the streams differ between epsilons and between methods (a shared stream would be a bug)
    assert not np.array_equal(every[every.epsilon == 0.1].p_chosen_best, every[every.epsilon == 1.0].p_chosen_best)

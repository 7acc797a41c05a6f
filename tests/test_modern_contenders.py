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

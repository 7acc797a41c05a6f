"""The batched Newton solver against scipy.optimize and scikit-learn."""
import numpy as np
import pytest
from scipy.optimize import minimize
from sklearn.exceptions import ConvergenceWarning
from sklearn.linear_model import LogisticRegression

from dplr.mechanisms import sample_vector_laplace
from dplr.solver import regularized_erm_gradient, regularized_erm_objective, solve_regularized_erm


def _problem(n, d, seed, noise=0.3):
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, d))
    X /= np.maximum(1.0, np.linalg.norm(X, axis=1, keepdims=True))
    w = rng.standard_normal(d)
    y = np.where(X @ w + noise * rng.standard_normal(n) > 0, 1.0, -1.0)
    return X, y


CASES = [  # (n, d, lam, loss, delta, beta of b or None)
    (300, 2, 1e-2, "logistic", 0.0, None),
    (500, 5, 1e-3, "logistic", 0.0, 0.05),
    (200, 10, 1.0, "logistic", 0.3, 0.5),
    (400, 4, 1e-2, "huber", 0.0, 0.05),
    (150, 3, 1e-1, "huber", 0.05, None),
]


@pytest.mark.parametrize("n, d, lam, loss, delta, beta", CASES)
def test_matches_scipy_lbfgs_to_high_accuracy(n, d, lam, loss, delta, beta):
    X, y = _problem(n, d, seed=n + d)
    b = None if beta is None else sample_vector_laplace(beta, d, random_state=d)
    result = solve_regularized_erm(X, y, lam, loss, b=b, delta=delta)
    assert result.converged and result.grad_norm[0] <= 1e-8

    def fun(w):
        return regularized_erm_objective(w, X, y, lam, loss, b=b, delta=delta)[0]

    def jac(w):
        return regularized_erm_gradient(w, X, y, lam, loss, b=b, delta=delta)[0]

    reference = minimize(fun, np.zeros(d), jac=jac, method="L-BFGS-B",
                         options={"gtol": 1e-11, "ftol": 0, "maxiter": 10_000})
    # Strong convexity: ||w - w*|| <= ||grad|| / (lam + delta); both gradients are tiny.
    bound = (np.linalg.norm(jac(reference.x)) + 1e-8) / (lam + delta)
    assert np.linalg.norm(result.coef - reference.x) <= bound + 1e-12
    assert fun(result.coef) <= fun(reference.x) + 1e-12


def test_batch_equals_one_at_a_time():
    X, y = _problem(400, 6, seed=3)
    B = sample_vector_laplace(0.05, 6, size=7, random_state=11)
    batch = solve_regularized_erm(X, y, 0.01, b=B).coef
    singles = np.array([solve_regularized_erm(X, y, 0.01, b=B[j]).coef for j in range(7)])
    np.testing.assert_allclose(batch, singles, atol=1e-10)
    assert batch.shape == (7, 6)


def test_agrees_with_sklearn_logistic_regression_when_objectives_coincide():
    # lam/2 ||w||^2 + mean loss  ==  (1/(n lam)) * [ ||w||^2/2 + C * sum loss ] with C = 1/(n lam).
    X, y = _problem(600, 5, seed=8)
    lam = 0.01
    ours = solve_regularized_erm(X, y, lam).coef
    theirs = LogisticRegression(C=1 / (len(y) * lam), fit_intercept=False, tol=1e-12, max_iter=10_000).fit(X, y)
    np.testing.assert_allclose(ours, theirs.coef_[0], atol=1e-7)


def test_bad_inputs():
    X, y = _problem(50, 3, seed=0)
    with pytest.raises(ValueError, match="lam"):
        solve_regularized_erm(X, y, 0.0)
    with pytest.raises(ValueError, match="-1, \\+1"):
        solve_regularized_erm(X, (y > 0).astype(float), 0.1)
    with pytest.raises(ValueError, match="shape"):
        solve_regularized_erm(X, y, 0.1, b=np.zeros((2, 4)))
    with pytest.raises(ValueError, match="delta"):
        solve_regularized_erm(X, y, 0.1, delta=-1.0)


def test_warns_when_not_converged():
    X, y = _problem(100, 3, seed=1)
    with pytest.warns(ConvergenceWarning, match="did not reach"):
        result = solve_regularized_erm(X, y, 1e-4, max_iter=1)
    assert not result.converged

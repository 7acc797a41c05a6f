"""The regularised, perturbed ERM objective (dplr.objective): gradient and Hessian against finite differences."""
import numpy as np
import pytest

from dplr.losses import HuberLoss, LogisticLoss
from dplr.objective import RegularizedERM, regularized_erm_gradient, regularized_erm_objective


def _data(n=40, d=3, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, d))
    X /= np.maximum(1.0, np.linalg.norm(X, axis=1, keepdims=True))
    return X, np.where(rng.random(n) < 0.5, 1.0, -1.0)


@pytest.mark.parametrize("loss", [LogisticLoss(), HuberLoss(0.5)])
@pytest.mark.parametrize("layout", ["shared", "per problem"])
def test_gradient_and_hessian_are_the_derivatives_of_the_value(loss, layout):
    X, y = _data()
    rng = np.random.default_rng(1)
    k, d = 3, X.shape[1]
    U = X * y[:, None] if layout == "shared" else np.stack([_data(seed=s)[0] * _data(seed=s)[1][:, None]
                                                            for s in range(k)])
    problem = RegularizedERM(U, 0.05, loss, b=rng.standard_normal((k, d)), ridge=np.array([0.0, 0.1, 0.3]),
                             weights=rng.dirichlet(np.ones(40)))
    W = rng.standard_normal((k, d))
    h = 1e-6
    numeric = np.stack([(problem.value(W + h * e) - problem.value(W - h * e)) / (2 * h) for e in np.eye(d)], axis=1)
    np.testing.assert_allclose(problem.gradient(W), numeric, rtol=1e-6, atol=1e-7)
    numeric_h = np.stack([(problem.gradient(W + h * e) - problem.gradient(W - h * e)) / (2 * h) for e in np.eye(d)],
                         axis=2)
    # Huber's second derivative jumps at 1 +- h; away from the kinks (almost surely here) they agree
    np.testing.assert_allclose(problem.hessian(W), numeric_h, rtol=1e-5, atol=1e-6)


def test_default_weights_are_the_average_loss_and_the_functions_match_the_object():
    X, y = _data()
    W = np.random.default_rng(2).standard_normal((2, 3))
    b = np.ones((2, 3))
    problem = RegularizedERM(X * y[:, None], 0.1, LogisticLoss(), b=b, ridge=0.2)
    direct = 0.15 * np.sum(W**2, axis=1) + (b * W).sum(axis=1) / 40 + np.logaddexp(0, -(W @ (X * y[:, None]).T)).mean(1)
    np.testing.assert_allclose(problem.value(W), direct, rtol=1e-14)
    np.testing.assert_array_equal(regularized_erm_objective(W, X, y, 0.1, b=b, ridge=0.2), problem.value(W))
    np.testing.assert_array_equal(regularized_erm_gradient(W, X, y, 0.1, b=b, ridge=0.2), problem.gradient(W))
    # one b for every row
    np.testing.assert_array_equal(regularized_erm_gradient(W, X, y, 0.1, b=b[0], ridge=0.2), problem.gradient(W))

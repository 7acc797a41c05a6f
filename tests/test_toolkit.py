"""dplr.analysis.toolkit: Algorithm 1's privacy-loss law, exact expected errors, elastic net, exponential mechanism, add/remove."""
import numpy as np
import pytest

from dplr.algorithms import sensitivity_method, standard_erm
from dplr.analysis.privacy_loss import vector_laplace_halfspace_probability
from dplr.analysis.toolkit import (
    add_remove_sensitivity_bound,
    elastic_net_erm,
    elastic_net_kkt_violation,
    exponential_mechanism_log_ratios,
    margin_tail_dominance,
    normalised_margins,
    projection_tail,
    sensitivity_method_expected_error,
    sensitivity_method_loss_cdf,
    sensitivity_method_loss_moment,
)
from dplr.mechanisms import sample_vector_laplace
from dplr.tuning import exponential_mechanism


def _sampled_losses(a, d, size, seed):
    xi = sample_vector_laplace(1.0, d, size=size, random_state=seed)
    e = np.zeros(d)
    e[0] = a
    return np.linalg.norm(xi + e, axis=1) - np.linalg.norm(xi, axis=1)


@pytest.mark.parametrize("d", [1, 2, 5])
def test_loss_law_matches_samples(d):
    a, size = 0.7, 100_000
    L = _sampled_losses(a, d, size, seed=d)
    grid = np.linspace(-a, a, 12)[1:-1]
    distance = np.max(np.abs(sensitivity_method_loss_cdf(grid, a, d) - np.searchsorted(np.sort(L), grid, "right") / size))
    # KS 0.1% critical value; the grid statistic is at most the full one, so a correct law fails w.p. < 0.001
    assert distance < 1.95 / np.sqrt(size)
    assert np.all(np.abs(L) <= a + 1e-12)
    assert sensitivity_method_loss_moment(a, d, lambda x: np.exp(-x)) == pytest.approx(1.0, abs=1e-9)
    sd = L.std()
    assert abs(sensitivity_method_loss_moment(a, d, lambda x: x) - L.mean()) < 4 * sd / np.sqrt(size)


def test_loss_law_d1_atoms():
    a = 0.5
    assert sensitivity_method_loss_cdf(-a, a, 1) == pytest.approx(0.5 * np.exp(-a))
    assert sensitivity_method_loss_cdf(a - 1e-12, a, 1) == pytest.approx(0.5)
    assert sensitivity_method_loss_cdf(a, a, 1) == 1.0 and sensitivity_method_loss_cdf(-a - 1e-9, a, 1) == 0.0


def test_a_wrong_law_is_rejected():
    # the same check fails for a wrong a: the sampled law is not the closed form at 0.8 a
    a, size = 0.7, 100_000
    L = _sampled_losses(a, 2, size, seed=0)
    grid = np.linspace(-a, a, 12)[1:-1]
    wrong = sensitivity_method_loss_cdf(grid, 0.8 * a, 2)
    assert np.max(np.abs(wrong - np.searchsorted(np.sort(L), grid, "right") / size)) > 1.95 / np.sqrt(size)


@pytest.mark.parametrize("d, beta", [(1, 2.0), (2, 0.5), (10, 7.0)])
def test_projection_tail_matches_quadrature(d, beta):
    s = np.array([-3.0, -0.2, 0.0, 0.05, 0.7, 2.5]) * d / beta
    exact = [vector_laplace_halfspace_probability(float(v), beta, d) for v in s]
    np.testing.assert_allclose(projection_tail(s, beta, d), exact, atol=1e-10)


def test_expected_error_matches_sampling():
    rng = np.random.default_rng(3)
    X = rng.standard_normal((300, 3))
    X /= np.maximum(1.0, np.linalg.norm(X, axis=1))[:, None]
    y = np.where(X[:, 0] + 0.5 * rng.standard_normal(300) > 0, 1.0, -1.0)
    lam, eps = 0.05, 0.5
    w = standard_erm(X, y, lam)
    beta = len(y) * lam * eps / 2
    W = sensitivity_method(X, y, eps, lam, n_draws=20_000, random_state=4)
    errors = np.mean(np.where(X @ W.T > 0, 1.0, -1.0) != y[:, None], axis=0)
    exact = sensitivity_method_expected_error(w, X, y, beta)
    assert abs(errors.mean() - exact) < 4 * errors.std() / np.sqrt(errors.size)


def test_margin_tail_dominance():
    assert margin_tail_dominance([0.5, 0.4, -0.3]) == 0  # min over t: reached above the largest margin
    assert margin_tail_dominance([0.1, 0.1, -0.5]) == -1  # better than chance, but the tail condition fails
    X = np.array([[1.0, 0.0], [0.0, 0.5], [0.0, 0.0]])
    np.testing.assert_allclose(normalised_margins([2.0, 1.0], X, [1.0, -1.0, 1.0]), [2.0, -1.0, 0.0])


def test_elastic_net():
    rng = np.random.default_rng(5)
    X = rng.standard_normal((40, 3)) / 2
    X /= np.maximum(1.0, np.linalg.norm(X, axis=1))[:, None]
    y = np.where(rng.random(40) < 0.6, 1.0, -1.0)
    w = elastic_net_erm(X, y, 0.1, 0.05)
    assert elastic_net_kkt_violation(w, X, y, 0.1, 0.05) < 1e-6
    assert elastic_net_kkt_violation(w + 0.01, X, y, 0.1, 0.05) > 1e-4
    np.testing.assert_allclose(elastic_net_erm(X, y, 0.1, 0.0), standard_erm(X, y, 0.1, tol=1e-12), atol=1e-6)


def test_exponential_mechanism_log_ratios():
    rng = np.random.default_rng(6)
    u = -rng.integers(0, 30, size=(500, 4)).astype(float)
    v = u + rng.integers(-1, 2, size=u.shape)
    r = exponential_mechanism_log_ratios(u, v, 0.3)
    assert np.max(np.abs(r)) <= 0.3 + 1e-12
    p = exponential_mechanism(u[0], 0.3, random_state=0)[1]
    q = exponential_mechanism(v[0], 0.3, random_state=0)[1]
    np.testing.assert_allclose(np.log(p / q), r[0], atol=1e-12)
    # a mechanism without the factor 1/2 would exceed epsilon on this pair
    hard = exponential_mechanism_log_ratios(np.r_[-99.0, 0, 0, 0], np.r_[-100.0, 1, 1, 1], 0.3)[0]
    assert 0.29 < hard <= 0.3


def test_add_remove_sensitivity_bound_holds():
    rng = np.random.default_rng(7)
    for _ in range(30):
        n, lam = int(rng.integers(2, 40)), float(10 ** rng.uniform(-3, 0))
        X = rng.standard_normal((n + 1, 2))
        X /= np.maximum(1.0, np.linalg.norm(X, axis=1))[:, None]
        y = np.where(rng.random(n + 1) < 0.5, 1.0, -1.0)
        move = np.linalg.norm(standard_erm(X[:n], y[:n], lam, tol=1e-12) - standard_erm(X, y, lam, tol=1e-12))
        assert move <= add_remove_sensitivity_bound(n, lam) * (1 + 1e-9)
    with pytest.raises(ValueError):
        add_remove_sensitivity_bound(0, 0.1)

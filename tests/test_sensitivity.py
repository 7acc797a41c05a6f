"""Adversarial sensitivity search (dplr.analysis.sensitivity, dplr.analysis.lasso): it never beats the proven
2/(n lambda) for L2, and it does for L1."""
import numpy as np
import pytest
from scipy import optimize
from scipy.special import expit

from dplr.analysis.lasso import l1_kkt_violation, l1_logistic_regression, l1_neighbour_distance, l1_sensitivity_search
from dplr.analysis.neighbours import NeighbouringPair, anchored_pair, l1_tie_breaking_pair
from dplr.analysis.sensitivity import (
    adversarial_sensitivity_search,
    anchored_sensitivity_search,
    distance_and_gradient,
    gap_factors,
    neighbour_distance,
    random_neighbour_distances,
    sharper_sensitivity_bound,
)
from dplr.calibration import sensitivity_bound
from dplr.datasets.simulated import make_unseparable
from dplr.losses import LogisticLoss


def test_single_record_distance_has_closed_form():
    # n = 1, d = 1, u = 1 vs u' = -1: w solves lam w = sigmoid(-w), and w' = -w.
    lam = 0.3
    w = optimize.brentq(lambda t: lam * t - expit(-t), 0, 10)
    pair = NeighbouringPair(np.array([[1.0]]), np.array([1.0]), np.array([[-1.0]]), np.array([1.0]))
    assert neighbour_distance(pair, lam) == pytest.approx(2 * w, rel=1e-9)


def test_implicit_gradient_matches_finite_differences():
    rng = np.random.default_rng(0)
    k, m, d, lam = 2, 4, 2, 0.3
    shared, u, up = rng.uniform(-0.5, 0.5, (k, m, d)), rng.uniform(-0.5, 0.5, (k, d)), rng.uniform(-0.5, 0.5, (k, d))
    zero = np.zeros((k, d))
    _, g_shared, g_u, g_up, _, _ = distance_and_gradient(shared, u, up, zero, zero, lam, LogisticLoss())

    def half_sq(s, a, b):
        return 0.5 * distance_and_gradient(s, a, b, zero, zero, lam, LogisticLoss())[0] ** 2

    h = 1e-6
    e = np.zeros((k, d))
    e[:, 1] = h
    np.testing.assert_allclose((half_sq(shared, u + e, up) - half_sq(shared, u - e, up)) / (2 * h), g_u[:, 1],
                               rtol=1e-5)
    np.testing.assert_allclose((half_sq(shared, u, up + e) - half_sq(shared, u, up - e)) / (2 * h), g_up[:, 1],
                               rtol=1e-5)
    E = np.zeros_like(shared)
    E[:, 2, 0] = h
    np.testing.assert_allclose((half_sq(shared + E, u, up) - half_sq(shared - E, u, up)) / (2 * h),
                               g_shared[:, 2, 0], rtol=1e-5)


@pytest.mark.parametrize("n, lam", [(1, 0.5), (5, 0.01), (5, 1.0), (20, 0.1)])
def test_l2_search_never_exceeds_the_bound_and_beats_random_pairs(n, lam):
    res = adversarial_sensitivity_search(n, 2, lam, n_restarts=4, n_steps=150, random_state=1)
    assert 0 < res.distance <= sensitivity_bound(n, lam)
    assert res.ratio == pytest.approx(res.factors.gradient_factor * res.factors.curvature_factor, rel=1e-6)
    assert res.factors.gradient_factor <= 1 and res.factors.curvature_factor <= 1
    assert np.all(np.diff(res.history) >= 0)
    if n > 1:
        X, y = make_unseparable(n, d=2, random_state=2)
        assert res.distance >= random_neighbour_distances(X, y, lam, 10, random_state=3).max()


def test_search_with_fixed_shared_records_keeps_them():
    X, y = make_unseparable(9, d=2, random_state=4)
    res = adversarial_sensitivity_search(10, 2, 0.05, X_shared=X, y_shared=y, n_restarts=3, n_steps=80,
                                         random_state=5)
    np.testing.assert_allclose(res.pair.X[:-1] * res.pair.y[:-1, None], X * y[:, None])
    assert res.distance <= sensitivity_bound(10, 0.05)


def test_anchored_pairs_approach_the_bound_for_large_n():
    # Corollary 2 is asymptotically tight: with many short shared records the worst ratio nears 1.
    small = anchored_sensitivity_search(20, 1e-3 * 50)  # n lam = 1
    large = anchored_sensitivity_search(2000, 1e-3 / 2)  # n lam = 1
    assert small.ratio < large.ratio <= 1
    assert large.ratio > 0.9
    assert anchored_pair(5, 0.1, [0.0, 1.0], [0.0, -1.0]).n == 5


def test_gap_factors_of_a_symmetric_pair_at_heavy_regularisation():
    # lam large: w ~ 0, the records' gradients are -u/2 and -u'/2 with u' = -u: gradient factor 1/2.
    pair = NeighbouringPair(np.array([[1.0, 0.0]]), np.array([1.0]), np.array([[-1.0, 0.0]]), np.array([1.0]))
    f = gap_factors(pair, 100.0)
    assert f.gradient_factor == pytest.approx(0.5, abs=2e-3)
    assert f.curvature_factor == pytest.approx(1.0, abs=3e-3)


def test_l1_solver_satisfies_kkt():
    X, y = make_unseparable(40, d=3, random_state=6)
    w = l1_logistic_regression(X, y, 0.02)
    assert l1_kkt_violation(w, X, y, 0.02) < 1e-6
    assert l1_kkt_violation(w + 0.1, X, y, 0.02) > 1e-3  # the check can fail


@pytest.mark.parametrize("n, lam", [(50, 0.1), (500, 0.05)])
def test_l1_tie_breaking_pair_moves_more_than_two_over_n_lambda(n, lam):
    pair = l1_tie_breaking_pair(n, tilt=0.1)
    dist = l1_neighbour_distance(pair, lam)
    assert dist > 5 * sensitivity_bound(n, lam)
    # the same pair with the L2 penalty stays within the bound
    assert neighbour_distance(pair, lam) <= sensitivity_bound(n, lam)


def test_l1_search_finds_more_than_the_l2_bound():
    n, lam = 12, 0.1
    pair = l1_tie_breaking_pair(n)
    res = l1_sensitivity_search(pair.X[:-1], pair.y[:-1], lam, n_restarts=2, max_evals=80, random_state=7)
    assert res.ratio > 1
    assert res.kkt_violation < 1e-6


def test_sharper_bound_is_respected_and_tends_to_the_papers():
    for lam in (0.3, 1.0, 3.0):
        res = anchored_sensitivity_search(200, lam)
        assert res.distance <= sharper_sensitivity_bound(200, lam) < sensitivity_bound(200, lam)
    assert sharper_sensitivity_bound(10, 1e-4) == pytest.approx(sensitivity_bound(10, 1e-4), rel=1e-12)

"""DP-SGD (dplr.dpsgd): the iteration against a plain loop, and the accounting against published values.

The accounting tests need Google's dp-accounting (the optional extra dplr[accounting]) and skip without it,
each on its own (`make test-oldest` runs without extras); the iteration needs nothing optional.
"""
from fractions import Fraction

import numpy as np
import pytest

from dplr.algorithms import calibration_used, standard_erm
from dplr.datasets.simulated import make_unseparable
from dplr.dpsgd import (DPSGD_ROUNDINGS, clip_caps, covered_clip_norm, dp_sgd, dpsgd_calibration, dpsgd_epsilon,
                        dpsgd_noise_multiplier, dpsgd_train, dpsgd_train_with_clipping, noise_scale)
from dplr.losses import get_loss
from dplr.validation import check_training_data

X, Y = check_training_data(*make_unseparable(300, d=3, random_state=1))


def _accounting():
    pytest.importorskip("dp_accounting")  # the optional extra dplr[accounting]


def _plain_dpsgd(X, y, sigma, C, q, steps, eta, lam, loss, rng):
    """Abadi et al.'s Algorithm 1, one record at a time: the reference for the vectorised iteration."""
    n, d = X.shape
    w = np.zeros(d)
    for _ in range(steps):
        lot = rng.random((1, n))[0] < q
        total = np.zeros(d)
        for i in range(n):
            g = loss.derivative(y[i] * X[i] @ w) * y[i] * X[i]
            g = g / max(1.0, np.linalg.norm(g) / C)
            total += g if lot[i] else 0.0
        total += rng.standard_normal((1, d))[0] * sigma * C
        w = w - eta * (total / (q * n) + lam * w)
    return w


@pytest.mark.parametrize("loss, C, q, lam", [("logistic", 0.3, 0.2, 0.0), ("huber", 0.05, 1.0, 0.01),
                                              ("logistic", 5.0, 0.5, 0.1)])
def test_vectorised_iteration_is_the_per_example_algorithm(loss, C, q, lam):
    expected = _plain_dpsgd(X[:40], Y[:40], 1.5, C, q, 7, 0.5, lam, get_loss(loss), np.random.default_rng(9))
    got = dpsgd_train(X[:40], Y[:40], 1.5, C, q, 7, 0.5, lam=lam, loss=loss, random_state=9)
    np.testing.assert_allclose(got, expected, rtol=1e-12, atol=1e-14)


def test_iteration_is_reproducible_and_one_draw_is_the_single_run():
    a = dpsgd_train(X, Y, 1.0, 1.0, 0.1, 20, 1.0, n_draws=4, random_state=5)
    np.testing.assert_array_equal(a, dpsgd_train(X, Y, 1.0, 1.0, 0.1, 20, 1.0, n_draws=4, random_state=5))
    assert a.shape == (4, 3) and not np.allclose(a[0], a[1])
    np.testing.assert_array_equal(dpsgd_train(X, Y, 1.0, 1.0, 0.1, 20, 1.0, n_draws=1, random_state=5)[0],
                                  dpsgd_train(X, Y, 1.0, 1.0, 0.1, 20, 1.0, random_state=5))


def test_without_noise_and_sampling_it_is_gradient_descent_to_the_regularised_minimiser():
    # sigma = 0, q = 1, C >= 1 (never clips rows in the unit ball): plain gradient descent on the lambda-strongly
    # convex objective, which converges to standard_erm's minimiser (step 1 < 2/(lam + 1/4)).
    w = dpsgd_train(X, Y, 0.0, 1.0, 1.0, 3000, 1.0, lam=0.05, random_state=0)
    np.testing.assert_allclose(w, standard_erm(X, Y, 0.05), atol=1e-8)


@pytest.mark.parametrize("kwargs, message", [
    (dict(noise_multiplier=-1.0), "noise_multiplier"), (dict(sampling_rate=1.5), "0 < q <= 1"),
    (dict(clip_norm=0.0), "clip_norm"), (dict(steps=0), "steps"), (dict(lam=-1.0), "lam"),
    (dict(learning_rate=0.0), "learning_rate"),
])
def test_bad_training_parameters_are_refused(kwargs, message):
    args = dict(noise_multiplier=1.0, clip_norm=1.0, sampling_rate=0.1, steps=5, learning_rate=1.0) | kwargs
    with pytest.raises(ValueError, match=message):
        dpsgd_train(X, Y, **args)


# ----------------------------------------------------------------------------------------------
# Accounting (dp-accounting)
# ----------------------------------------------------------------------------------------------
def test_abadi_et_al_mnist_setting_is_within_the_moments_accountants_value():
    _accounting()
    # Abadi et al. (CCS 2016), Section 3.1: q = 0.01, sigma = 4, T = 10,000, delta = 1e-5 gives eps ~ 1.26 with the
    # moments accountant (add/remove neighbours). dp-accounting's RDP accountant (a tighter RDP-to-DP conversion)
    # gives 1.035 and its PLD accountant (near-exact, pessimistic) 0.947 with version 0.6.0: both at most 1.26 and
    # not far below it, and PLD <= RDP.
    rdp = dpsgd_epsilon(4.0, 0.01, 10_000, 1e-5, neighbouring="add_remove", accountant="rdp")
    pld = dpsgd_epsilon(4.0, 0.01, 10_000, 1e-5, neighbouring="add_remove", accountant="pld")
    assert 0.95 <= rdp <= 1.26
    assert 0.85 <= pld <= rdp


def test_replacing_a_record_costs_more_than_adding_one_and_rdp_refuses_it():
    _accounting()
    add_remove = dpsgd_epsilon(2.0, 0.05, 200, 1e-5, neighbouring="add_remove")
    replace = dpsgd_epsilon(2.0, 0.05, 200, 1e-5, neighbouring="replace")
    assert add_remove < replace
    with pytest.raises(ValueError, match="accountant='pld'"):
        dpsgd_epsilon(2.0, 0.05, 200, 1e-5, neighbouring="replace", accountant="rdp")
    with pytest.raises(ValueError, match="neighbouring must be"):
        dpsgd_epsilon(2.0, 0.05, 200, 1e-5, neighbouring="swap")


@pytest.mark.parametrize("epsilon, q, steps, rtol", [(0.6, 0.01, 1000, 1e-3), (2.0, 0.05, 100, 1e-2)])
def test_noise_multiplier_is_the_smallest_reaching_the_target(epsilon, q, steps, rtol):
    _accounting()
    sigma = dpsgd_noise_multiplier(epsilon, 1e-5, q, steps, rtol=rtol)
    assert dpsgd_epsilon(sigma, q, steps, 1e-5) <= epsilon
    assert dpsgd_epsilon(sigma / (1 + 2 * rtol), q, steps, 1e-5) > epsilon


def test_dp_sgd_trains_with_the_calibrated_noise():
    _accounting()
    W = dp_sgd(X, Y, 0.6, 1e-5, 0.01, 1000, 1.0, n_draws=2, random_state=3)
    cal = calibration_used(dp_sgd, X, Y, 0.6, 1e-5, 0.01, 1000, 1.0)
    assert cal == dpsgd_calibration(0.6, 1e-5, 0.01, 1000) and cal.epsilon <= 0.6
    assert cal.mechanism(3).sigma == cal.noise_multiplier * cal.clip_norm
    np.testing.assert_array_equal(W, dpsgd_train(X, Y, cal.noise_multiplier, 1.0, 0.01, 1000, 1.0, n_draws=2,
                                                 random_state=3))


def test_add_remove_needs_a_public_lot_size():
    # under add/remove the number of records is what differs between neighbours: dividing the lot's noisy sum by
    # q * n would make the release depend on it outside the accountant's model, so a public lot size is required
    _accounting()
    with pytest.raises(ValueError, match="Fix: pass lot_size, a public expected lot size"):
        dp_sgd(X, Y, 1.0, 1e-5, 0.5, 5, 1.0, neighbouring="add_remove", accountant="rdp")
    public = dp_sgd(X, Y, 1.0, 1e-5, 0.5, 5, 1.0, neighbouring="add_remove", accountant="rdp", lot_size=200.0,
                    random_state=4)
    cal = dpsgd_calibration(1.0, 1e-5, 0.5, 5, neighbouring="add_remove", accountant="rdp")
    np.testing.assert_array_equal(public, dpsgd_train(X, Y, cal.noise_multiplier, 1.0, 0.5, 5, 1.0, lot_size=200.0,
                                                      random_state=4))
    # the same data with one record removed: the divisor, a public constant, does not move
    with_fewer = dpsgd_train(X[1:], Y[1:], 0.0, 1.0, 1.0, 1, 1.0, lot_size=200.0)
    by_hand = -(get_loss("logistic").derivative(np.zeros(len(Y) - 1)) * Y[1:]) @ X[1:] / 200.0
    np.testing.assert_allclose(with_fewer, by_hand, rtol=1e-12)
    # under replace the default q * n is the same on both data sets
    np.testing.assert_array_equal(dpsgd_train(X, Y, 1.0, 1.0, 0.5, 5, 1.0, random_state=4),
                                  dpsgd_train(X, Y, 1.0, 1.0, 0.5, 5, 1.0, random_state=4, lot_size=0.5 * len(Y)))


def test_the_clipped_fraction_counts_the_lots_gradients_above_the_clip_norm():
    X, y = make_unseparable(300, d=4, random_state=0)
    args = dict(noise_multiplier=1.0, sampling_rate=0.2, steps=30, learning_rate=0.5, random_state=7)
    plain = dpsgd_train(X, y, clip_norm=0.4, **args)
    coef, clipped = dpsgd_train_with_clipping(X, y, clip_norm=0.4, **args)
    assert np.array_equal(plain, coef)  # the diagnostic does not touch the run
    # |l'| * ||x|| <= 1 for the logistic loss on rows in the unit ball: C = 1 never clips; a C far below every
    # gradient's norm clips them all
    assert dpsgd_train_with_clipping(X, y, clip_norm=1.0, **args)[1] == 0.0
    assert dpsgd_train_with_clipping(X, y, clip_norm=1e-9, **args)[1] == 1.0
    assert 0.0 < clipped < 1.0
    _, many = dpsgd_train_with_clipping(X, y, clip_norm=0.4, n_draws=3, **args)
    assert many.shape == (3,)


# --- float64, covered (rounding="directed") ---------------------------------------------------------------------

def _exact_squared_norms(U):
    return [sum(Fraction(float(v)) ** 2 for v in row) for row in U]


def test_clip_caps_bound_every_clipped_gradient_by_the_clip_norm_exactly():
    # rows of norm exactly 1 ([0.6, 0.8] is not: its float64 norm rounds), random rows, tiny and subnormal rows; the
    # old rescaling g / max(1, ||g||/C) in float64 exceeds C (exact rationals) on many of them, the caps never do
    rng = np.random.default_rng(11)
    U = rng.standard_normal((300, 5))
    U /= np.linalg.norm(U, axis=1, keepdims=True)
    U = np.vstack([U, [[0.6, 0.8, 0, 0, 0]], np.full((1, 5), 1e-160), np.full((1, 5), 5e-324), np.zeros((1, 5))])
    first = rng.uniform(-3.0, 3.0, len(U))
    exact_norms = _exact_squared_norms(U)
    for C in (0.3, 1.0, 0.05):
        caps = clip_caps(U, C)
        clipped = np.clip(first, -caps, caps)
        assert all(Fraction(float(c)) ** 2 * s <= Fraction(C) ** 2 for c, s in zip(clipped, exact_norms))
        old = first / np.maximum(1.0, np.abs(first) * np.linalg.norm(U, axis=1) / C)
        assert sum(Fraction(float(c)) ** 2 * s > Fraction(C) ** 2 for c, s in zip(old, exact_norms)) > 10
        assert np.all(caps[:-4] >= C * (1 - 1e-14))  # the caps cost a few ulps, no more


def test_the_float_sum_of_a_lot_exceeds_the_clip_norm_and_the_noise_covers_it():
    # One step, no noise, every record in the lot, divisor 1: w = -(the float64 sum of the clipped gradients).
    # Replacing one record by a zero row changes that sum by more than C on many clip norms (the sum of the others
    # rounds differently with and without it): the accountant's assumption fails for the old noise sigma*C; the
    # covered clip norm (Higham's bound) is never exceeded.
    n = 12
    X1, y1 = np.ones((n, 1)), np.ones(n)
    X2 = X1.copy()
    X2[-1] = 0.0
    beyond = 0
    for C in np.linspace(0.01, 0.4, 100):
        for rounding in DPSGD_ROUNDINGS:
            w1, w2 = (dpsgd_train(Z, y1, 0.0, C, 1.0, 1, 1.0, lot_size=1.0, random_state=0, rounding=rounding)
                      for Z in (X1, X2))
            change = Fraction(float(abs(w1 - w2)[0]))
            beyond += change > Fraction(C)
            assert change <= covered_clip_norm(C, n, 1)
    assert beyond > 10


def test_the_directed_noise_is_sigma_times_the_covered_clip_norm_rounded_up(monkeypatch):
    import dplr.dpsgd as module
    widths = []
    original = module.IsotropicGaussian.from_sigma
    monkeypatch.setattr(module.IsotropicGaussian, "from_sigma",
                        classmethod(lambda cls, dim, sigma: widths.append(sigma) or original(dim, sigma)))
    for rounding in DPSGD_ROUNDINGS:
        dpsgd_train(X, Y, 1.3, 0.7, 0.2, 2, 0.5, random_state=0, rounding=rounding)
    directed, nearest = widths
    assert directed == noise_scale(1.3, 0.7, *X.shape) > nearest == noise_scale(1.3, 0.7)
    assert Fraction(directed) >= Fraction(1.3) * Fraction(0.7) * (1 + 2 * len(X) ** 2 * Fraction(1, 2**53))
    assert directed < nearest * (1 + 1e-10)  # a rounding term: 300 records cost 2e-11 of the noise


def test_records_arithmetic_is_reachable_and_differs_only_in_rounding():
    directed = dpsgd_train(X, Y, 1.0, 0.3, 0.2, 20, 0.5, random_state=4)
    nearest = dpsgd_train(X, Y, 1.0, 0.3, 0.2, 20, 0.5, random_state=4, rounding="nearest")
    np.testing.assert_allclose(directed, nearest, rtol=1e-9)
    with pytest.raises(ValueError, match="rounding"):
        dpsgd_train(X, Y, 1.0, 0.3, 0.2, 20, 0.5, rounding="up")
    with pytest.raises(ValueError, match="rounding"):
        dp_sgd(X, Y, 1.0, 1e-5, 0.2, 20, 0.5, rounding="up")

"""Algorithm 2's hardened release (release="certified_grid"; the book's theorem thm-op-certified-grid): the calibration
rounds safely where float arithmetic does not, the outputs are exact grid points of the integer mechanism, the
privacy bookkeeping needs the grid's rounding term, and the support attacks find nothing.

No statistical test here: every assertion is exact (rationals) or on fixed seeds with a deterministic outcome."""
import math
from fractions import Fraction

import numpy as np
import pytest

from dplr import ObjectivePerturbation
from dplr.algorithms import calibration_used, gaussian_objective_perturbation, objective_perturbation
from dplr.analysis import floating_point as fp
from dplr.calibration import (CERTIFIED_OUTPUT_FRACTION, SCALE_DENOMINATOR,
                              CertifiedObjectivePerturbationGridCalibration,
                              certified_objective_perturbation_calibration,
                              certified_objective_perturbation_grid_calibration)
from dplr.datasets.simulated import make_unseparable
from dplr.losses import get_loss
from dplr.release import certified_point
from dplr.tuning import private_tuning_experiment
from dplr.validation import check_training_data

X, Y = check_training_data(*make_unseparable(400, d=4, random_state=0))
LAM = 0.01


def _cases(k=300, seed=17):
    """Random (n, lam, epsilon, gamma, d), log-uniform over the book's ranges and beyond."""
    rng = np.random.default_rng(seed)
    return [(int(rng.integers(10, 10**6)), float(10 ** rng.uniform(-7, 0)), float(10 ** rng.uniform(-3, 1.5)),
             float(10 ** rng.uniform(-12, -4)), int(rng.integers(1, 60))) for _ in range(k)]


def _spent(cal, dim):
    r"""The bookkeeping of thm-op-certified-grid, exactly: :math:`\varepsilon_1 + 2\Delta_1/\tau`."""
    out = cal.output_calibration(dim)
    return Fraction(cal.epsilons[0]) + 2 * Fraction(out.l1_sensitivity) / out.scale


def test_the_calibration_rounds_the_safe_way_where_float_arithmetic_does_not():
    wrong_way = 0
    for n, lam, eps, gamma, dim in _cases():
        cal = certified_objective_perturbation_grid_calibration(eps, n, lam, gamma)
        assert cal.certified == certified_objective_perturbation_calibration(eps, n, lam, gamma)  # same split, r
        out = cal.output_calibration(dim)
        distance = Fraction(gamma) / (Fraction(lam) + Fraction(cal.ridge))  # r = gamma/(lam + Delta), exact
        grid = Fraction(out.grid)
        # Delta_1 >= sqrt(d) r/g + d, i.e. (Delta_1 - d + 1) g > sqrt(d) r, exactly (the index distance is an integer)
        assert (out.l1_sensitivity - dim + 1) ** 2 * grid**2 > dim * distance**2
        assert _spent(cal, dim) <= Fraction(eps)   # epsilon_1 + 2 Delta_1/tau <= epsilon
        # round-to-nearest: the same formulas in float64 (split, r, tau = 2 Delta_1/epsilon_2)
        naive_2 = eps * CERTIFIED_OUTPUT_FRACTION
        naive_tau = Fraction(round(out.l1_sensitivity * SCALE_DENOMINATOR / (naive_2 / 2)), SCALE_DENOMINATOR)
        wrong_way += Fraction(eps - naive_2) + 2 * out.l1_sensitivity / naive_tau > Fraction(eps)
    assert wrong_way > 20  # round-to-nearest spends more than epsilon in many of these cases


def test_the_bookkeeping_needs_the_grids_rounding_term():
    # certified and exact points at L2 distance r, placed where rounding to the grid hurts most: each coordinate's
    # two values straddle a grid midpoint, |w_j - w*_j| = u g with u just above an even integer 2m, so their indices
    # differ by 2m + 1 > u. Their index distance must stay within Delta_1 (what the noise is calibrated to); it exceeds
    # the bound without the rounding term, floor(sqrt(d) r/g), so a calibration that leaves the term out fails here.
    beyond = 0
    for n, lam, eps, gamma, dim in _cases(60, seed=18):
        cal = certified_objective_perturbation_grid_calibration(eps, n, lam, gamma)
        out = cal.output_calibration(dim)
        mech, g = out.mechanism(), Fraction(out.grid)
        r = Fraction(gamma) / (Fraction(lam) + Fraction(cal.ridge))
        u = math.isqrt(math.floor(r**2 / (g**2 * dim)))   # u <= r/(g sqrt d)
        u -= u % 2                                        # even
        while dim * ((u + Fraction(1, 2**20)) * g) ** 2 > r**2:
            u -= 2
        step = (u + Fraction(1, 2**20)) * g
        assert dim * step**2 <= r**2
        exact_point = np.array([float((k + Fraction(1, 2)) * g - step / 2) for k in range(dim)])
        certified = np.array([float((k + Fraction(1, 2)) * g + step / 2) for k in range(dim)])
        assert all(Fraction(c) - Fraction(e) == step for c, e in zip(certified, exact_point))  # exact doubles
        apart = int(np.sum(np.abs(mech.snap(certified) - mech.snap(exact_point))))
        assert apart == dim * (u + 1) <= out.l1_sensitivity
        # the privacy loss of comparing the two integer laws, both ways: at most epsilon_2 in all
        assert 2 * Fraction(apart) / out.scale <= Fraction(cal.epsilons[1])
        beyond += apart > math.isqrt(math.floor(dim * r**2 / g**2))   # floor(sqrt(d) r/g), exactly
    assert beyond > 0


def test_the_release_is_the_certified_point_on_the_grid_plus_exact_integer_noise():
    W = objective_perturbation(X, Y, 1.0, LAM, n_draws=5, random_state=3, release="certified_grid")
    cal = calibration_used(objective_perturbation, X, Y, 1.0, LAM, release="certified_grid")
    assert isinstance(cal, CertifiedObjectivePerturbationGridCalibration) and cal.gamma == 1 / 400**2
    mech = cal.output_mechanism(4)
    indices = [Fraction(v) / Fraction(mech.grid) for v in W.ravel()]
    assert all(k.denominator == 1 and abs(k) < 2**53 for k in indices)  # exact grid points, float64 exactly
    rng = np.random.default_rng(3)
    b = cal.mechanism(4).sample(5, rng)            # the stream: the objective's noise first,
    points = certified_point(X, Y, LAM, get_loss("logistic"), cal, b)
    noise = np.vstack([mech.noise.sample(None, rng) for _ in range(5)])   # then one integer draw per point
    assert np.array_equal(W, (mech.snap(points.ravel()).reshape(5, 4) + noise) * mech.grid)
    # the certified float release draws the same b and certifies the same points
    float_cal = calibration_used(objective_perturbation, X, Y, 1.0, LAM)
    assert float_cal == cal.certified
    assert np.array_equal(points, certified_point(X, Y, LAM, get_loss("logistic"), float_cal, b))


def test_the_estimator_releases_on_the_grid():
    model = ObjectivePerturbation(epsilon=1.0, lam=LAM, random_state=1, release="certified_grid").fit(X, Y)
    assert isinstance(model.calibration_, CertifiedObjectivePerturbationGridCalibration)
    grid = Fraction(model.calibration_.output_mechanism(4).grid)
    assert all((Fraction(v) / grid).denominator == 1 for v in model.coef_)
    again = ObjectivePerturbation(epsilon=1.0, lam=LAM, random_state=1, release="certified_grid").fit(X, Y)
    assert np.array_equal(model.coef_, again.coef_)


@pytest.mark.parametrize("call, message", [
    (lambda: objective_perturbation(X, Y, [0.5, 1.0], LAM, release="certified_grid"), "scalar epsilon"),
    (lambda: objective_perturbation(X, Y, 1.0, LAM, noise=np.zeros(4), release="certified_grid"), "scalar epsilon"),
    (lambda: gaussian_objective_perturbation(X, Y, 1.0, 1e-5, LAM, release="certified_grid"), "release must be"),
    (lambda: private_tuning_experiment(X, Y, X, Y, [0.01, 0.1], [1.0], 1, release="certified_grid"), "release must"),
])
def test_the_grid_release_is_refused_where_it_is_not_implemented(call, message):
    with pytest.raises(ValueError, match=message):
        call()


def _one_dimensional_pair(n=300, seed=5):
    rng = np.random.default_rng(seed)
    x = rng.uniform(-1, 1, n)
    y = np.where(rng.random(n) < 1 / (1 + np.exp(-3 * x)), 1.0, -1.0)
    X1, X2, y2 = x[:, None].copy(), x[:, None].copy(), y.copy()
    X1[-1], X2[-1], y2[-1] = -1.0, 1.0, -y[-1]
    return X1, y, X2, y2


def test_the_certified_float_release_gives_the_support_test_nothing_in_one_dimension():
    X1, y1, X2, y2 = _one_dimensional_pair()
    rate, own = fp.certified_release_attack(X1, y1, X2, y2, 1.0, 0.01, 60, 300, random_state=4)
    assert own == 0 and rate.count == 0
    with pytest.raises(ValueError, match="one dimension"):
        fp.certified_release_attack(X, Y, X, Y, 1.0, LAM, 5, 5)


def test_a_witness_is_an_exact_output_and_a_far_candidate_is_none():
    cal = calibration_used(objective_perturbation, *_one_dimensional_pair()[:2], 1.0, 0.01)
    out = objective_perturbation(*_one_dimensional_pair()[:2], 1.0, 0.01, random_state=2)
    assert fp.certified_witnesses(out, out - 1e-3 * cal.distance, cal.output_rate)[0]
    assert not fp.certified_witnesses(out, out + 1e6, cal.output_rate)[0]   # beyond the noise's main range


def test_the_grid_release_gives_the_support_test_nothing():
    X1, y1, X2, y2 = _one_dimensional_pair()
    cal = calibration_used(objective_perturbation, X1, y1, 1.0, 0.01, release="certified_grid")
    grid = Fraction(cal.output_mechanism(1).grid)

    def release(data, size, rng):
        features, labels = (X1, y1) if data == 0 else (X2, y2)
        return np.array([objective_perturbation(features, labels, 1.0, 0.01, random_state=int(s),
                                                release="certified_grid")[0]
                         for s in rng.integers(0, 2**63, size)])

    def producible(outputs, data):   # M(D') gives every grid point g k, |k| < 2^53, positive probability
        return np.array([(Fraction(o) / grid).denominator == 1 and abs(Fraction(o) / grid) < 2**53 for o in outputs])

    rate = fp.distinguishing_rate(release, producible, 0, 1, 100, np.random.default_rng(6))
    assert rate.count == 0

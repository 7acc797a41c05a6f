"""The hardened (epsilon, delta) release: the exact discrete Gaussian sampler's law, the grid, the calibration's safe
direction, the attack and the audit.

Statistical tests use fixed seeds (so they are deterministic); each rejects at p < 1e-6, so a correct sampler fails
one of them with probability below 1e-6 per test over the choice of seed (below 1e-5 for the file). The audits run
at alpha = 1e-3: a correct mechanism is refuted with probability at most 0.1 %.
"""
import decimal
import math
from fractions import Fraction

import mpmath
import numpy as np
import pytest
from scipy import stats

from dplr import GaussianOutputPerturbation
from dplr.analysis import broken
from dplr.analysis import floating_point as fp
from dplr.analysis.audit import check_claim
from dplr.analysis.auditable import GridGaussianMechanism
from dplr.calibration import SCALE_DENOMINATOR, release_grid
from dplr.directed_rounding import log1p_lower
from dplr.gaussian import (GaussianOutputPerturbationGridCalibration, grid_gaussian_calibration,
                           gaussian_output_perturbation_grid_calibration, zcdp_rho)
from dplr.datasets.simulated import make_separable
from dplr.mechanisms import DiscreteGaussian, GridGaussian, IsotropicGaussian
from dplr.release import grid_gaussian_release

P_MIN = 1e-6  # rejection level of every statistical test below


class IntegersOnly(np.random.Generator):
    """A Generator whose float samplers raise: the exact sampler may use only its uniform integers."""

    def _refuse(self, *args, **kwargs):
        raise AssertionError("the exact sampler called a floating-point sampler of the Generator")

    random = laplace = exponential = standard_exponential = standard_normal = normal = gamma = uniform = _refuse


def exact_pmf(k, variance):
    """The discrete Gaussian's probabilities at integers k, normalised by a sum over +-60 sigma (50 digits)."""
    with mpmath.workdps(50):
        v = mpmath.mpf(variance.numerator) / variance.denominator
        top = int(60 * mpmath.sqrt(v)) + 5
        norm = mpmath.fsum(mpmath.exp(-mpmath.mpf(j) ** 2 / (2 * v)) for j in range(-top, top + 1))
        return np.array([float(mpmath.exp(-mpmath.mpf(int(j)) ** 2 / (2 * v)) / norm) for j in k])


@pytest.mark.parametrize("variance", [Fraction(1, 4), Fraction(2), Fraction(21, 2), Fraction(100), Fraction(7, 3)])
def test_discrete_gaussian_has_its_law(variance):
    draws = DiscreteGaussian.from_variance(1, variance).sample(20_000, np.random.default_rng(21))[:, 0]
    edge = max(int(3 * math.sqrt(variance)), 1)  # bins -edge..edge, the two tails pooled at the ends
    values = np.clip(draws, -edge, edge)
    observed = np.array([np.sum(values == k) for k in range(-edge, edge + 1)])
    p = exact_pmf(range(-edge, edge + 1), variance)
    tail = 0.5 * (1 - p.sum()) + p[0]  # P(K <= -edge) = P(K >= edge), by symmetry
    p[0] = p[-1] = tail
    assert p.sum() == pytest.approx(1.0, abs=1e-12)
    assert stats.chisquare(observed, p * draws.size).pvalue > P_MIN


def test_probability_of_zero_is_exact():
    # an exact-probability (binomial) test at sigma^2 = 1/2, t = 1: the rejection step with large exponents
    variance = Fraction(1, 2)
    draws = DiscreteGaussian.from_variance(1, variance).sample(20_000, np.random.default_rng(22))[:, 0]
    p0 = exact_pmf([0], variance)[0]
    assert stats.binomtest(int(np.sum(draws == 0)), draws.size, p0).pvalue > P_MIN
    assert stats.binomtest(int(np.sum(draws > 0)), draws.size, (1 - p0) / 2).pvalue > P_MIN


def test_sampler_uses_only_uniform_integers_and_is_deterministic():
    mech = DiscreteGaussian.from_sigma(3, 2.5)
    draws = mech.sample(300, IntegersOnly(np.random.PCG64(3)))
    assert draws.dtype == np.int64 and draws.shape == (300, 3)
    assert np.array_equal(draws, mech.sample(300, IntegersOnly(np.random.PCG64(3))))  # the same stream, the same draws
    assert np.array_equal(mech.sample(50, 8), mech.sample(50, 8))  # an int seed
    rng = np.random.default_rng(8)
    first, second = mech.sample(50, rng), mech.sample(50, rng)  # a Generator is advanced
    assert not np.array_equal(first, second)
    assert mech.sample(random_state=1).shape == (3,)
    assert DiscreteGaussian.from_sigma(1, Fraction(3, 2)).variance == Fraction(9, 4)  # sigma squared exactly
    with pytest.raises(ValueError, match="positive rational"):
        DiscreteGaussian.from_variance(1, 0)


def test_exact_epsilon_matches_the_continuous_gaussian_at_large_sigma():
    # the discrete Gaussian's tight (epsilon, delta) is that of the continuous one up to tiny terms for sigma >> 1
    for sigma, shift in ((50.0, 7), (3000.0, 3000)):
        discrete = DiscreteGaussian.from_sigma(1, sigma).epsilon(shift, 1e-5)
        continuous = IsotropicGaussian(1, sigma).epsilon(float(shift), 1e-5)
        assert discrete == pytest.approx(continuous, rel=1e-4)
    # and a small sigma is worse than the continuous one: a continuous calibration would not do there
    assert DiscreteGaussian.from_sigma(1, 0.7).epsilon(1, 1e-5) > IsotropicGaussian(1, 0.7).epsilon(1.0, 1e-5)


def test_log1p_lower_is_a_lower_bound():
    context = decimal.Context(prec=120)
    for x in (Fraction(1, 10**9), Fraction(3, 10**6), Fraction(1, 3), Fraction(5), Fraction(10**8 + 1, 7)):
        true = Fraction(context.add(1, context.divide(x.numerator, x.denominator)).ln(context))
        bound = log1p_lower(x)
        assert bound <= true and true - bound <= true * Fraction(1, 10**48)
    assert log1p_lower(0) == 0


def test_zcdp_budget_is_safe_and_near_the_best():
    rng = np.random.default_rng(23)

    def renyi_epsilon(a, r, d):  # the epsilon at delta of rho-zCDP at Renyi order a (the conversion's formula)
        return a * r + mpmath.log(1 - 1 / a) - mpmath.log(a * d) / (a - 1)

    for _ in range(40):
        epsilon, delta = float(rng.uniform(0.01, 5)), float(10 ** rng.uniform(-12, -2))
        rho = zcdp_rho(epsilon, delta)
        with mpmath.workdps(60):
            r, e, d = mpmath.mpf(rho.numerator) / rho.denominator, mpmath.mpf(epsilon), mpmath.mpf(delta)
            standard = r + 2 * mpmath.sqrt(r * mpmath.log(1 / d))
            # the best order, by golden-section search on log(a - 1) in 60 digits
            low, high = mpmath.mpf(-12), mpmath.mpf(12)
            for _ in range(200):
                m1, m2 = low + (high - low) * 0.382, low + (high - low) * 0.618
                if renyi_epsilon(1 + mpmath.exp(m1), r, d) < renyi_epsilon(1 + mpmath.exp(m2), r, d):
                    high = m2
                else:
                    low = m1
            best = renyi_epsilon(1 + mpmath.exp(low), r, d)
            assert min(standard, best) <= e  # rho-zCDP implies (epsilon, delta) by one of the two conversions
            assert best >= e * (1 - mpmath.mpf("1e-6"))  # and rho is (nearly) the largest the conversion allows


def test_calibration_is_safe_and_round_to_nearest_is_not():
    rng = np.random.default_rng(24)
    nearest_too_small = 0
    for _ in range(300):
        sensitivity, epsilon = float(rng.uniform(1e-4, 10)), float(rng.uniform(0.05, 5))
        delta, dim = float(10 ** rng.uniform(-10, -3)), int(rng.integers(1, 60))
        cal = grid_gaussian_calibration(sensitivity, epsilon, delta, dim)
        grid, s = Fraction(cal.grid), Fraction(sensitivity)
        assert grid == release_grid(sensitivity, dim)
        assert (cal.l2_sensitivity - s / grid) ** 2 >= dim  # the rounding term: sqrt(d) grid steps, at least
        assert cal.rho == zcdp_rho(epsilon, delta)
        assert cal.l2_sensitivity**2 / (2 * cal.variance) <= cal.rho  # the zCDP of the integer mechanism, exactly
        assert cal.variance.denominator <= SCALE_DENOMINATOR
        nearest = Fraction(round(cal.l2_sensitivity**2 / (2 * cal.rho) * SCALE_DENOMINATOR), SCALE_DENOMINATOR)
        nearest_too_small += cal.l2_sensitivity**2 / (2 * nearest) > cal.rho
    assert nearest_too_small > 60  # round to nearest would break the bound about half of the time


def test_snapped_neighbours_stay_within_the_l2_bound():
    # values at L2 distance S, placed where rounding hurts most (just either side of a grid midpoint)
    dim, sensitivity = 5, 0.01
    cal = grid_gaussian_calibration(sensitivity, 1.0, 1e-5, dim)
    mech, g = cal.mechanism(), cal.grid
    rng = np.random.default_rng(25)
    worst = 0.0
    for _ in range(2000):
        direction = rng.choice([-1.0, 1.0], dim) * rng.uniform(0.5, 1, dim)
        direction *= sensitivity / np.linalg.norm(direction) * (1 - 1e-12)
        base = (rng.integers(-100, 100, dim) + 0.5) * g - direction / 2
        worst = max(worst, float(np.sum((mech.snap(base + direction) - mech.snap(base)) ** 2)))
    assert worst <= cal.l2_sensitivity**2
    assert worst > (sensitivity / g) ** 2  # the rounding term is reached, in part


def test_release_is_exactly_on_the_grid_and_is_the_integer_mechanism():
    mech = grid_gaussian_calibration(0.25, 0.5, 1e-6, 3).mechanism()
    assert isinstance(mech, GridGaussian)
    value = np.array([0.1, -1 / 3, 2.0 + 1e-13])
    released = mech.release(value, 300, np.random.default_rng(26))
    indices = released / mech.grid
    assert np.all(indices == np.round(indices))
    assert np.array_equal(indices.astype(np.int64), mech.snap(value) + mech.noise.sample(300, np.random.default_rng(26)))
    out = grid_gaussian_release(0.3, 1.0, 1.0, 1e-5, n_draws=100, random_state=0)
    grid = grid_gaussian_calibration(1.0, 1.0, 1e-5, 1).grid
    assert out.shape == (100,) and np.all(out / grid == np.round(out / grid))
    with pytest.raises(ValueError, match="finite"):
        grid_gaussian_release([np.inf], 1.0, 1.0, 1e-5)


def test_estimator_releases_on_the_grid():
    X, y = make_separable(500, d=4, margin=0.03, random_state=0)
    model = GaussianOutputPerturbation(epsilon=1.0, lam=0.01, random_state=1, release="grid").fit(X, y)
    assert isinstance(model.calibration_, GaussianOutputPerturbationGridCalibration)
    cal = model.calibration_.calibration(4)
    assert np.all(model.coef_ / cal.grid == np.round(model.coef_ / cal.grid))
    again = GaussianOutputPerturbation(epsilon=1.0, lam=0.01, random_state=1, release="grid").fit(X, y)
    assert np.array_equal(model.coef_, again.coef_)
    assert model.calibration_ == gaussian_output_perturbation_grid_calibration(500, 0.01, 1.0, 1e-5, solver_tol=1e-8)
    with pytest.raises(ValueError, match="release must be one of"):
        GaussianOutputPerturbation(release="exact").fit(X, y)


def test_grid_calibration_refuses_what_float64_cannot_hold():
    with pytest.raises(ValueError, match="exceeds"):
        grid_gaussian_calibration(1e140, 1e-30, 1e-200, 2)
    with pytest.raises(ValueError, match="grid point"):
        grid_gaussian_calibration(1e-305, 1.0, 1e-5, 2)


def test_attack_finds_nothing():
    # Mironov's support test: every output of M(0) has positive probability under M(1)
    mech = grid_gaussian_calibration(1.0, 1.0, 1e-5, 1).mechanism()

    def release(v, n, rng):
        return mech.release(np.array([v]), n, rng)[:, 0]

    def producible(outputs, v):
        return np.isfinite(mech.log_density(outputs[:, None] - mech.snap(np.array([v])) * mech.grid))

    rate = fp.distinguishing_rate(release, producible, 0.0, 1.0, 500, np.random.default_rng(27))
    assert rate.count == 0 and rate.high < 0.01


def test_audit_passes_the_release_and_catches_rho_as_epsilon():
    pair = (np.zeros(1), np.ones(1))  # L2 distance 1 = S
    ok = check_claim("grid gaussian", GridGaussianMechanism(1.0, 1.0, 1e-5), pair, 1.0, 10_000, batch_size=5_000,
                     random_state=7, delta=1e-5, alpha=1e-3)
    assert ok.exact <= 1.0 and not ok.audit_refutes
    bad = check_claim("rho as epsilon", broken.RhoAsEpsilonGridGaussian(1.0, 1.0, 1e-5), pair, 1.0, 10_000,
                      batch_size=5_000, random_state=7, delta=1e-5, alpha=1e-3)
    assert bad.exact > 3.0 and bad.audit_refutes
    with pytest.raises(ValueError, match="one coordinate"):
        GridGaussianMechanism(1.0, 1.0, 1e-5).max_privacy_loss((np.zeros(2), np.full(2, 0.5)))

"""The hardened release: the exact samplers' laws, the outputs on the grid, the calibration's safe direction.

Statistical tests use fixed seeds (so they are deterministic); each rejects at p < 1e-6, so a correct sampler fails
one of them with probability below 1e-6 per test over the choice of seed (about 1e-5 for the file).
"""
import math
from fractions import Fraction

import numpy as np
import pytest
from scipy import stats

from dplr import SensitivityMethod
from dplr.analysis import broken
from dplr.analysis import floating_point as fp
from dplr.analysis.audit import audit, check_claim
from dplr.analysis.audit_scores import float_grid_score
from dplr.analysis.auditable import GridLaplaceMechanism
from dplr.calibration import (GRID_REFINEMENT, SCALE_DENOMINATOR, grid_laplace_calibration,
                              sensitivity_method_grid_calibration)
from dplr.datasets.simulated import make_separable
from dplr.mechanisms import DiscreteLaplace, GridLaplace
from dplr.release import grid_laplace_release

P_MIN = 1e-6  # rejection level of every statistical test below


class IntegersOnly(np.random.Generator):
    """A Generator whose float samplers raise: the exact samplers may use only its uniform integers."""

    def _refuse(self, *args, **kwargs):
        raise AssertionError("the exact sampler called a floating-point sampler of the Generator")

    random = laplace = exponential = standard_exponential = standard_normal = normal = gamma = uniform = _refuse


def discrete_laplace_pmf(k, scale):
    rate = 1 / scale
    return (1 - math.exp(-rate)) / (1 + math.exp(-rate)) * np.exp(-rate * np.abs(k))


@pytest.mark.parametrize("scale", [Fraction(1, 3), Fraction(3, 2), Fraction(7), Fraction(2049, 1024)])
def test_discrete_laplace_has_its_law(scale):
    draws = DiscreteLaplace.from_scale(1, scale).sample(20_000, np.random.default_rng(11))[:, 0]
    edge = int(3 * scale) + 1  # bins -edge..edge, the two tails pooled at the ends
    values = np.clip(draws, -edge, edge)
    observed = np.array([np.sum(values == k) for k in range(-edge, edge + 1)])
    p = discrete_laplace_pmf(np.arange(-edge, edge + 1), float(scale))
    tail = discrete_laplace_pmf(edge, float(scale)) / (1 - math.exp(-1 / float(scale)))  # P(K >= edge)
    p[0] = p[-1] = tail
    assert p.sum() == pytest.approx(1.0, abs=1e-12)
    assert stats.chisquare(observed, p * draws.size).pvalue > P_MIN


def test_bernoulli_exp_is_exact_in_law():
    # P(K = 0) = tanh(1/(2 scale)) for the discrete Laplace: an exact-probability (binomial) test at scale 1/2,
    # where the sampler's Bernoulli(exp(-gamma)) runs with gamma up to 2 (its integer-part loop)
    scale = Fraction(1, 2)
    draws = DiscreteLaplace.from_scale(1, scale).sample(20_000, np.random.default_rng(12))[:, 0]
    zero = int(np.sum(draws == 0))
    assert stats.binomtest(zero, draws.size, math.tanh(1.0)).pvalue > P_MIN
    assert stats.binomtest(int(np.sum(draws > 0)), draws.size, (1 - math.tanh(1.0)) / 2).pvalue > P_MIN


def test_sampler_uses_only_uniform_integers():
    # a naive float sampler (rng.laplace, or exp/log of rng.random()) fails here
    rng = IntegersOnly(np.random.PCG64(3))
    draws = DiscreteLaplace.from_scale(4, Fraction(5, 3)).sample(200, rng)
    assert draws.dtype == np.int64 and draws.shape == (200, 4)
    with pytest.raises(AssertionError, match="floating-point sampler"):
        IntegersOnly(np.random.PCG64(3)).laplace()


def test_large_denominators_stay_exact():
    # scales whose numerator exceeds int64 go through the chunked uniform integers; the law's sign is fair
    scale = Fraction(2**70 + 1, 2**70)
    draws = DiscreteLaplace.from_scale(1, scale).sample(4000, IntegersOnly(np.random.PCG64(5)))[:, 0]
    p0 = math.tanh(1 / (2 * float(scale)))
    assert stats.binomtest(int(np.sum(draws == 0)), draws.size, p0).pvalue > P_MIN


def test_release_is_exactly_on_the_grid_and_is_the_integer_mechanism():
    mech = grid_laplace_calibration(0.25, 0.5, 3).mechanism()
    value = np.array([0.1, -1 / 3, 2.0 + 1e-13])
    released = mech.release(value, 500, np.random.default_rng(4))
    indices = released / mech.grid
    assert np.all(indices == np.round(indices))  # a float release value + noise (unsnapped) fails this
    noise = mech.noise.sample(500, np.random.default_rng(4))
    assert np.array_equal(indices.astype(np.int64), mech.snap(value) + noise)
    assert np.array_equal(mech.snap(value), [round(Fraction(v) / Fraction(mech.grid)) for v in value])
    naive = value + mech.sample(500, np.random.default_rng(4))  # the float addition the grid release avoids
    assert not np.all(naive / mech.grid == np.round(naive / mech.grid))


def test_scalar_release_and_estimator_are_on_the_grid():
    out = grid_laplace_release(0.3, 1.0, 1.0, n_draws=100, random_state=0)
    grid = grid_laplace_calibration(1.0, 1.0, 1).grid
    assert out.shape == (100,) and np.all(out / grid == np.round(out / grid))
    X, y = make_separable(500, d=4, margin=0.03, random_state=0)
    model = SensitivityMethod(epsilon=1.0, lam=0.01, random_state=1, release="grid").fit(X, y)
    cal = model.calibration_.calibration(4)
    assert np.all(model.coef_ / cal.grid == np.round(model.coef_ / cal.grid))
    again = SensitivityMethod(epsilon=1.0, lam=0.01, random_state=1, release="grid").fit(X, y)
    assert np.array_equal(model.coef_, again.coef_)


def test_release_option_is_validated():
    X, y = make_separable(100, d=3, margin=0.03, random_state=0)
    with pytest.raises(ValueError, match="release must be one of"):
        SensitivityMethod(release="exact").fit(X, y)
    with pytest.raises(ValueError, match="finite"):
        grid_laplace_release([np.nan], 1.0, 1.0)


def test_calibration_is_safe_and_round_to_nearest_is_not():
    rng = np.random.default_rng(6)
    nearest_too_small = 0
    for _ in range(500):
        sensitivity = float(rng.uniform(1e-4, 10))
        epsilon = float(rng.uniform(0.01, 5))
        dim = int(rng.integers(1, 60))
        cal = grid_laplace_calibration(sensitivity, epsilon, dim)
        grid, s = Fraction(cal.grid), Fraction(sensitivity)
        # the grid: a power of two, at most S / (GRID_REFINEMENT sqrt d), the largest such
        assert grid.numerator == 1 or grid.denominator == 1
        assert (grid * GRID_REFINEMENT) ** 2 * dim <= s**2 < (2 * grid * GRID_REFINEMENT) ** 2 * dim * (1 + 1e-9)
        # the L1 bound in grid steps: l1 - d >= floor(sqrt(d) S / g), i.e. (l1 - d + 1) g > sqrt(d) S
        assert (cal.l1_sensitivity - dim + 1) ** 2 * grid**2 > dim * s**2
        # the scale: l1 / tau <= epsilon exactly, the privacy loss bound of the discrete Laplace
        assert cal.l1_sensitivity / cal.scale <= Fraction(epsilon)
        assert DiscreteLaplace.from_scale(dim, cal.scale).max_privacy_loss(cal.l1_sensitivity) <= Fraction(epsilon)
        assert cal.scale.denominator <= SCALE_DENOMINATOR
        nearest = Fraction(round(cal.l1_sensitivity * SCALE_DENOMINATOR / Fraction(epsilon)), SCALE_DENOMINATOR)
        nearest_too_small += cal.l1_sensitivity / nearest > Fraction(epsilon)
    assert nearest_too_small > 100  # round to nearest would break the bound about half of the time


def test_snapped_neighbours_stay_within_the_l1_bound():
    # values at L2 distance S, placed where rounding hurts most (just either side of a grid midpoint)
    dim, sensitivity = 5, 0.01
    cal = grid_laplace_calibration(sensitivity, 1.0, dim)
    mech, g = cal.mechanism(), cal.grid
    rng = np.random.default_rng(8)
    worst = 0
    for _ in range(2000):
        direction = rng.choice([-1.0, 1.0], dim) * rng.uniform(0.5, 1, dim)
        direction *= sensitivity / np.linalg.norm(direction) * (1 - 1e-12)
        base = (rng.integers(-100, 100, dim) + 0.5) * g - direction / 2
        worst = max(worst, int(np.sum(np.abs(mech.snap(base + direction) - mech.snap(base)))))
    assert worst <= cal.l1_sensitivity


def test_attack_finds_nothing():
    # Mironov's support test: every output of M(0) has positive probability under M(1)
    mech = grid_laplace_calibration(1.0, 1.0, 1).mechanism()

    def release(v, n, rng):
        return mech.release(np.array([v]), n, rng)[:, 0]

    def producible(outputs, v):
        return np.isfinite(mech.log_density(outputs[:, None] - mech.snap(np.array([v])) * mech.grid))

    rate = fp.distinguishing_rate(release, producible, 0.0, 1.0, 500, np.random.default_rng(9))
    assert rate.count == 0 and rate.high < 0.01


def test_grid_calibration_refuses_what_float64_cannot_hold():
    with pytest.raises(ValueError, match="exceeds"):
        grid_laplace_calibration(1e140, 1e-20, 2)
    with pytest.raises(ValueError, match="sensitivity"):
        grid_laplace_calibration(-1.0, 1.0, 2)
    with pytest.raises(ValueError, match="grid point"):
        grid_laplace_calibration(1e300, 1e10, 2)  # 2**985: g * 2**53 would overflow
    with pytest.raises(ValueError, match="grid point"):
        grid_laplace_calibration(1e-305, 1.0, 2)  # below float64's normal range
    cal = sensitivity_method_grid_calibration(1000, 0.01, 1.0, solver_tol=1e-8)
    assert isinstance(cal.mechanism(3), GridLaplace)


def test_audit_finds_no_low_bits_and_the_exact_loss_holds():
    # the least-significant-bits score that refutes the float Laplace release (test_audit.py) finds nothing here
    centre = np.array([0.1])
    mech = GridLaplaceMechanism(0.1, 1.0)
    res = audit(mech, (centre, np.zeros(1)), 10_000, score=float_grid_score(centre), batch_size=5_000,
                random_state=6)
    assert res.epsilon_lb <= 1.0
    from_zero = mech(np.zeros(1), np.random.default_rng(10), 20_000)
    assert float_grid_score(centre)(from_zero).sum() == 0  # the float release from 0 lands there about 1 in 5
    assert mech.max_privacy_loss((centre, np.zeros(1))) <= 1.0
    # the adversarial pair along the diagonal: at most epsilon, exactly
    pair = (np.zeros(4), np.full(4, 0.5))  # L2 distance 1 = S
    ok = check_claim("grid", GridLaplaceMechanism(1.0, 1.0), pair, 1.0, 10_000, batch_size=5_000, random_state=7,
                     alpha=1e-3)  # the audit's false refutation rate: at most 0.1 %
    assert ok.exact <= 1.0 and not ok.audit_refutes


def test_the_l2_calibrated_grid_release_is_caught():
    # the exact check catches the slip (the black-box audit's default score, at 20,000 runs, only just does:
    # lower bounds 1.01 to 1.22 on seeds 8-10, so it is not asserted)
    pair = (np.zeros(4), np.full(4, 0.5))
    assert broken.L2GridLaplace(1.0, 1.0).max_privacy_loss(pair) > 1.9  # about sqrt(4) = 2 times epsilon
    assert GridLaplaceMechanism(1.0, 1.0).max_privacy_loss(pair) <= 1.0
    outputs = broken.L2GridLaplace(1.0, 1.0)(np.zeros(4), np.random.default_rng(0), 10)
    grid = grid_laplace_calibration(1.0, 1.0, 4).grid
    assert np.all(outputs / grid == np.round(outputs / grid))

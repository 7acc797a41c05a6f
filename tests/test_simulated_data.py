"""The simulated data of NIPS 2008, Section 6, and its readings (dplr.datasets.simulated)."""
import numpy as np
import pytest
from scipy import stats

from dplr.ball import uniform_in_ball
from dplr.datasets.simulated import (
    MARGIN_METHODS,
    SUPPORTS,
    band_probability,
    generating_separator,
    make_separable,
    make_unseparable,
    sample_unit_sphere,
)
from dplr.validation import check_random_state


def sample_unit_ball(n, d, random_state=None):
    """The simulated data's ball sampler, as make_separable(support="ball") draws it."""
    return uniform_in_ball(check_random_state(random_state), (n, d))


def _original_make_separable(n, d=10, margin=0.03, random_state=None):
    """The implementation dplr.datasets.simulated had before the readings were added (defaults: sphere, rejection, e_1)."""
    rng = np.random.default_rng(random_state)
    u = np.zeros(d)
    u[0] = 1.0
    kept = np.empty((0, d))
    while kept.shape[0] < n:
        batch = rng.standard_normal((max(2 * (n - kept.shape[0]), 64), d))
        batch /= np.linalg.norm(batch, axis=1, keepdims=True)
        kept = np.vstack([kept, batch[np.abs(batch @ u) >= margin]])
    X = kept[:n]
    return X, np.where(X @ u >= 0, 1.0, -1.0)


def _original_make_unseparable(n, d=10, margin=0.1, flip_probability=0.2, random_state=None):
    rng = np.random.default_rng(random_state)
    u = np.zeros(d)
    u[0] = 1.0
    X = rng.standard_normal((n, d))
    X /= np.linalg.norm(X, axis=1, keepdims=True)
    scores = X @ u
    y = np.where(scores >= 0, 1.0, -1.0)
    flip = (np.abs(scores) <= margin) & (rng.random(n) < flip_probability)
    y[flip] *= -1
    return X, y


def test_defaults_reproduce_the_original_streams_exactly():
    # Other chapters call the two generators with their old signatures: the defaults must not move.
    for seed in (0, 7):
        X, y = make_separable(500, random_state=seed)
        X0, y0 = _original_make_separable(500, random_state=seed)
        np.testing.assert_array_equal(X, X0)
        np.testing.assert_array_equal(y, y0)
        X, y = make_unseparable(500, random_state=seed)
        X0, y0 = _original_make_unseparable(500, random_state=seed)
        np.testing.assert_array_equal(X, X0)
        np.testing.assert_array_equal(y, y0)


@pytest.mark.parametrize("support", SUPPORTS)
@pytest.mark.parametrize("margin_method", MARGIN_METHODS)
def test_separable_band_is_empty_and_labels_follow_the_separator(support, margin_method):
    X, y = make_separable(3000, margin=0.03, random_state=1, support=support, margin_method=margin_method)
    t = X[:, 0]
    norms = np.linalg.norm(X, axis=1)
    assert X.shape == (3000, 10)
    assert np.abs(t).min() >= 0.03 - 1e-12
    assert np.all(norms <= 1 + 1e-12)
    if support == "sphere":
        np.testing.assert_allclose(norms, 1.0, atol=1e-12)
    np.testing.assert_array_equal(y, np.where(t >= 0, 1.0, -1.0))
    assert set(np.unique(y)) == {-1.0, 1.0}


def test_projection_moves_only_band_points_and_puts_mass_on_the_edges():
    n, d, margin = 20_000, 10, 0.03
    X, _ = make_separable(n, d, margin, random_state=3, margin_method="projection")
    raw = sample_unit_sphere(n, d, np.random.default_rng(3))  # the same draws before the move
    outside = np.abs(raw[:, 0]) >= margin
    np.testing.assert_array_equal(X[outside], raw[outside])
    on_edge = np.isclose(np.abs(X[:, 0]), margin, atol=1e-12)
    np.testing.assert_array_equal(on_edge, ~outside)
    # Fraction on the edges ~ P(band); binomial sd ~ 0.0013, tolerance 5 sd (false failure < 1e-6).
    assert abs(on_edge.mean() - band_probability(margin, d)) < 5 * np.sqrt(0.02 * 0.98 / n)


def test_shift_is_monotone_in_the_separator_coordinate():
    X, _ = make_separable(5000, margin=0.1, random_state=4, margin_method="shift")
    raw = sample_unit_sphere(5000, 10, np.random.default_rng(4))
    order = np.argsort(raw[:, 0])
    assert np.all(np.diff(X[order, 0]) >= -1e-12)
    assert np.abs(X[:, 0]).min() >= 0.1 - 1e-12


def test_ball_radius_law():
    # P(||x|| <= r) = r^d. KS test at level 1e-3 on fixed seeds: false-failure rate 0.1% per seed.
    X = sample_unit_ball(5000, 10, random_state=5)
    radii = np.linalg.norm(X, axis=1)
    assert stats.kstest(radii**10, "uniform").pvalue > 1e-3


@pytest.mark.parametrize("support", SUPPORTS)
def test_band_probability_and_separator_coordinate_law(support):
    # u'x has (t+1)/2 ~ Beta(a, a); KS at level 1e-3 (false-failure rate 0.1%), band probability within 5 sd.
    sampler = sample_unit_sphere if support == "sphere" else sample_unit_ball
    X = sampler(20_000, 10, random_state=6)
    a = 4.5 if support == "sphere" else 5.5
    assert stats.kstest((X[:, 0] + 1) / 2, stats.beta(a, a).cdf).pvalue > 1e-3
    p = band_probability(0.1, 10, support)
    assert abs(np.mean(np.abs(X[:, 0]) <= 0.1) - p) < 5 * np.sqrt(p * (1 - p) / 20_000)


@pytest.mark.parametrize("support", SUPPORTS)
def test_unseparable_flips_only_inside_the_band_at_the_given_rate(support):
    n = 40_000
    X, y = make_unseparable(n, margin=0.1, flip_probability=0.2, random_state=8, support=support)
    clean = np.where(X[:, 0] >= 0, 1.0, -1.0)
    band = np.abs(X[:, 0]) <= 0.1
    assert np.all(y[~band] == clean[~band])
    flipped = (y != clean)[band]
    # Binomial(n_band, 0.2): tolerance 5 sd (false-failure rate < 1e-6).
    assert abs(flipped.mean() - 0.2) < 5 * np.sqrt(0.2 * 0.8 / band.sum())


def test_random_separator_is_drawn_first_from_the_stream():
    X, y = make_separable(2000, separator="random", random_state=9)
    u = generating_separator(10, "random", np.random.default_rng(9))
    assert np.isclose(np.linalg.norm(u), 1.0)
    np.testing.assert_array_equal(y, np.where(X @ u >= 0, 1.0, -1.0))
    assert np.abs(X @ u).min() >= 0.03 - 1e-12


def test_explicit_separator_and_bad_inputs():
    u = np.ones(10) / np.sqrt(10)
    X, y = make_unseparable(1000, separator=u, flip_probability=0.0, random_state=2)
    np.testing.assert_array_equal(y, np.where(X @ u >= 0, 1.0, -1.0))
    with pytest.raises(ValueError, match="unit vector"):
        make_separable(10, separator=np.ones(10))
    with pytest.raises(ValueError, match="support"):
        make_separable(10, support="cube")
    with pytest.raises(ValueError, match="margin_method"):
        make_separable(10, margin_method="drop")
    with pytest.raises(ValueError, match="flip_probability"):
        make_unseparable(10, flip_probability=1.5)
    with pytest.raises(ValueError, match="separator"):
        make_separable(10, separator="diagonal")

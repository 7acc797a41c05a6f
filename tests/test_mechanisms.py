"""The vector Laplace distribution (dplr.mechanisms.VectorLaplace): its law, its reproducibility, its privacy loss."""
import numpy as np
import pytest
from scipy import stats

from dplr.mechanisms import (
    PolarDraws,
    VectorLaplace,
    laplace_mechanism,
    sample_vector_laplace,
    vector_laplace_log_density,
    vector_laplace_norm_distribution,
    vector_laplace_privacy_loss,
)


@pytest.mark.parametrize("beta, dim", [(0.05, 10), (2.0, 1), (7.0, 3)])
def test_norm_follows_gamma_shape_d_scale_inverse_beta(beta, dim):
    # KS test at level 0.001 on a fixed seed: a correct sampler fails with probability 0.001 per case.
    draws = sample_vector_laplace(beta, dim, size=20_000, random_state=1234)
    result = stats.kstest(np.linalg.norm(draws, axis=1), stats.gamma(a=dim, scale=1 / beta).cdf)
    assert result.pvalue > 1e-3


def test_norm_test_detects_a_wrong_parameterisation():
    # The same KS test must reject Gamma(d, beta) (rate read as scale): it is not a test that cannot fail.
    draws = sample_vector_laplace(2.0, 10, size=20_000, random_state=1234)
    result = stats.kstest(np.linalg.norm(draws, axis=1), stats.gamma(a=10, scale=2.0).cdf)
    assert result.pvalue < 1e-6


@pytest.mark.parametrize("dim", [2, 3, 10])
def test_direction_is_uniform_on_the_sphere(dim):
    # For u uniform on S^{d-1} and any fixed unit vector e, (1 + e.u)/2 ~ Beta((d-1)/2, (d-1)/2).
    # KS test at level 0.001 per axis on fixed seeds (false-failure rate <= 0.002 per case, 2 axes).
    draws = sample_vector_laplace(1.0, dim, size=20_000, random_state=99)
    directions = draws / np.linalg.norm(draws, axis=1, keepdims=True)
    law = stats.beta((dim - 1) / 2, (dim - 1) / 2)
    rng = np.random.default_rng(5)
    for axis in (np.eye(dim)[0], rng.standard_normal(dim)):
        axis = axis / np.linalg.norm(axis)
        assert stats.kstest((1 + directions @ axis) / 2, law.cdf).pvalue > 1e-3
    # Mean resultant: n*d*||mean||^2 ~ chi^2_d under uniformity (Rayleigh test); level 0.001.
    rayleigh = len(directions) * dim * np.sum(directions.mean(axis=0) ** 2)
    assert stats.chi2(dim).sf(rayleigh) > 1e-3


def test_same_seed_same_draws_and_generator_is_advanced():
    a = sample_vector_laplace(1.0, 4, size=5, random_state=7)
    b = sample_vector_laplace(1.0, 4, size=5, random_state=7)
    np.testing.assert_array_equal(a, b)
    rng = np.random.default_rng(7)
    first, second = sample_vector_laplace(1.0, 4, 5, rng), sample_vector_laplace(1.0, 4, 5, rng)
    assert not np.allclose(first, second)
    assert sample_vector_laplace(1.0, 4, random_state=0).shape == (4,)
    assert sample_vector_laplace(1.0, 4, size=3, random_state=0).shape == (3, 4)


@pytest.mark.parametrize("beta", [0, -1.0, np.inf, np.nan, "1"])
def test_bad_beta_is_rejected(beta):
    with pytest.raises(ValueError, match="beta"):
        sample_vector_laplace(beta, 3, random_state=0)


def test_legacy_random_state_is_rejected():
    with pytest.raises(TypeError, match="default_rng"):
        sample_vector_laplace(1.0, 3, random_state=np.random.RandomState(0))


def test_log_density_is_the_laplace_density_in_one_dimension_and_normalised_in_two():
    beta = 1.7
    t = np.linspace(-5, 5, 11)[:, None]
    np.testing.assert_allclose(vector_laplace_log_density(t, beta), stats.laplace(scale=1 / beta).logpdf(t[:, 0]))
    # In d = 2, integrate in polar coordinates: 2*pi * int r h(r) dr = 1.
    r = np.linspace(0, 40, 400_001)
    h = np.exp(vector_laplace_log_density(np.stack([r, np.zeros_like(r)], axis=1), beta))
    assert np.trapezoid(2 * np.pi * r * h, r) == pytest.approx(1.0, rel=1e-6)


def test_norm_distribution_object():
    law = vector_laplace_norm_distribution(4.0, 3)
    assert law.mean() == pytest.approx(3 / 4.0)


def test_privacy_loss_is_the_log_density_ratio_and_is_attained_on_the_ray():
    # The closed form against the ratio of the two (independently normalised) densities; a bound |L| <= beta |c1 - c2|
    # at random outputs would hold by the triangle inequality whatever the code did, so it is not tested here (the
    # sampler itself is tested against the exact law in tests/test_sampling_checks.py).
    beta, c1, c2 = 2.0, np.array([0.0, 0.0]), np.array([0.3, 0.4])
    rng = np.random.default_rng(0)
    outputs = rng.normal(scale=3.0, size=(10_000, 2))
    loss = vector_laplace_privacy_loss(outputs, c1, c2, beta)
    ratio = vector_laplace_log_density(outputs - c1, beta) - vector_laplace_log_density(outputs - c2, beta)
    np.testing.assert_allclose(loss, ratio, atol=1e-12)
    on_ray = c1 - 5.0 * (c2 - c1)  # beyond c1, away from c2: the bound is attained
    assert vector_laplace_privacy_loss(on_ray, c1, c2, beta) == pytest.approx(beta * 0.5)


def test_laplace_mechanism_keeps_shape_and_scale():
    assert np.shape(laplace_mechanism(3.0, 1.0, 1.0, random_state=0)) == ()
    out = np.array([laplace_mechanism(0.0, 2.0, 0.5, random_state=s) for s in range(4000)])
    # Laplace with scale S/eps = 4 has mean |X| = 4; the standard error of the mean is 4/sqrt(4000) ~ 0.063,
    # so a 0.4 tolerance is > 6 standard errors (false-failure rate < 1e-8).
    assert np.mean(np.abs(out)) == pytest.approx(4.0, abs=0.4)


def test_laplace_mechanism_draws_one_coordinate_per_entry_of_an_array():
    # a matrix value is one vector of its entries (L2 sensitivity over all of them): no two rows share a draw, which
    # would release the differences of rows without noise
    value = np.array([[0.3, 0.7], [0.0, 0.0]])
    out = laplace_mechanism(value, 1.0, 0.1, random_state=0)
    expected = VectorLaplace.from_rate(4, 0.1).sample(random_state=0).reshape(2, 2) + value
    np.testing.assert_array_equal(out, expected)
    assert not np.allclose(out[0] - out[1], value[0] - value[1])
    # a vector's release is as before: one draw of its dimension
    np.testing.assert_array_equal(laplace_mechanism(value[0], 1.0, 0.1, random_state=0),
                                  value[0] + VectorLaplace.from_rate(2, 0.1).sample(random_state=0))


def test_rate_and_scale_are_kept_as_given_and_reciprocal():
    by_rate, by_scale = VectorLaplace.from_rate(3, 4.0), VectorLaplace.from_scale(3, 0.25)
    assert (by_rate.rate, by_rate.scale) == (4.0, 0.25) and (by_scale.rate, by_scale.scale) == (4.0, 0.25)
    assert by_rate.norm_distribution().mean() == pytest.approx(3 * 0.25)
    with pytest.raises(ValueError, match="scale"):
        VectorLaplace.from_scale(3, -1.0)
    with pytest.raises(ValueError, match="dim"):
        VectorLaplace.from_rate(0, 1.0)


def test_samples_are_standardised_draws_times_the_scale():
    # One stream: Gamma(d, 1) radii, then directions; the scale multiplies, a rate divides (common random numbers).
    draws = PolarDraws.sample(4, 6, np.random.default_rng(3))
    np.testing.assert_allclose(np.linalg.norm(draws.directions, axis=1), 1.0)
    np.testing.assert_array_equal(VectorLaplace.from_scale(4, 0.3).sample(6, np.random.default_rng(3)),
                                  draws.vectors(scale=0.3))
    np.testing.assert_allclose(draws.vectors(rate=2.0), draws.vectors(scale=0.5), rtol=1e-15)
    np.testing.assert_array_equal(sample_vector_laplace(2.5, 4, 6, np.random.default_rng(3)),
                                  VectorLaplace.from_rate(4, 2.5).sample(6, np.random.default_rng(3)))
    with pytest.raises(ValueError, match="exactly one"):
        draws.vectors(scale=1.0, rate=1.0)


def test_privacy_map_is_the_supremum_of_the_privacy_loss():
    noise = VectorLaplace.from_rate(2, 1.5)
    c1, c2 = np.array([0.0, 0.0]), np.array([0.6, 0.8])
    assert noise.max_privacy_loss(1.0) == pytest.approx(1.5)
    ray = c1 + np.outer(np.linspace(0.0, 10.0, 5), c1 - c2)  # from c1, away from c2
    np.testing.assert_allclose(noise.privacy_loss(ray, c1, c2), 1.5)
    rng = np.random.default_rng(1)
    assert np.abs(noise.privacy_loss(rng.normal(size=(1000, 2)) * 4, c1, c2)).max() <= 1.5 + 1e-12


def test_the_law_refuses_points_and_sizes_that_do_not_fit_it():
    law = VectorLaplace.from_rate(3, 2.0)
    with pytest.raises(ValueError, match="eta has 5 coordinates, the law 3"):
        law.log_density(np.ones(5))  # used to return a density of a 5-dimensional law
    with pytest.raises(ValueError, match="non-negative integer"):
        law.sample(size=2.7, random_state=0)  # used to draw 2
    assert law.sample(size=np.int64(2), random_state=0).shape == (2, 3)


def test_laplace_coordinates_draws_generator_laplace_and_has_its_density():
    from dplr.mechanisms import LaplaceCoordinates

    law = LaplaceCoordinates.from_scale(3, 0.7)
    assert np.array_equal(law.sample(4, np.random.default_rng(1)),
                          np.random.default_rng(1).laplace(0.0, 0.7, size=(4, 3)))
    assert law.sample(random_state=2).shape == (3,)
    eta = np.random.default_rng(3).standard_normal((5, 3))
    np.testing.assert_allclose(law.log_density(eta), stats.laplace(scale=0.7).logpdf(eta).sum(axis=1), rtol=1e-13)
    c1, c2 = np.zeros(3), np.array([0.1, -0.2, 0.3])
    np.testing.assert_allclose(law.privacy_loss(eta, c1, c2), law.log_density(eta - c1) - law.log_density(eta - c2),
                               rtol=1e-12, atol=1e-12)
    with pytest.raises(ValueError):
        LaplaceCoordinates.from_scale(3, 0.0)

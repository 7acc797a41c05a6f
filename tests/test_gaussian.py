"""Gaussian noise for (ε, δ)-DP: dplr.mechanisms.IsotropicGaussian and the calibrations of dplr.gaussian."""
import numpy as np
import pytest
from scipy import integrate, stats

from dplr.gaussian import (
    AMP_HESSIAN_RANK,
    GAUSSIAN_SIGMA_RTOL,
    analytic_gaussian_delta,
    analytic_gaussian_sigma,
    approximate_minima_perturbation_calibration,
    classical_gaussian_sigma,
    gaussian_mechanism,
    gaussian_objective_perturbation_calibration,
    gaussian_objective_perturbation_epsilon,
    gaussian_output_perturbation_calibration,
)
from dplr.analysis.privacy_loss import log_abs_det_jacobian, perturbation_from_output
from dplr.losses import get_loss
from dplr.solver import solve_regularized_erm
from dplr.mechanisms import IsotropicGaussian

GRID = [(eps, delta, sens) for eps in (0.05, 0.5, 1.0, 3.0, 20.0) for delta in (1e-2, 1e-5, 1e-12)
        for sens in (1.0, 0.02)]


# ----------------------------------------------------------------------------------------------
# The noise object
# ----------------------------------------------------------------------------------------------
def test_isotropic_gaussian_draws_follow_their_law_and_are_reproducible():
    noise = IsotropicGaussian.from_sigma(3, 2.5)
    draws = noise.sample(20_000, random_state=3)
    assert draws.shape == (20_000, 3) and noise.sample(random_state=3).shape == (3,)
    # KS test of every coordinate against N(0, 2.5^2) at level 0.001 (false-failure rate <= 0.003 in all).
    for column in draws.T:
        assert stats.kstest(column, stats.norm(scale=2.5).cdf).pvalue > 1e-3
    np.testing.assert_array_equal(draws, noise.sample(20_000, random_state=3))
    # the stream is Generator.standard_normal, times sigma
    np.testing.assert_array_equal(draws, np.random.default_rng(3).standard_normal((20_000, 3)) * 2.5)


def test_isotropic_gaussian_density_and_privacy_loss_are_exact():
    noise = IsotropicGaussian.from_sigma(4, 0.7)
    eta = np.random.default_rng(0).standard_normal((5, 4))
    expected = stats.multivariate_normal(np.zeros(4), 0.49 * np.eye(4)).logpdf(eta)
    np.testing.assert_allclose(noise.log_density(eta), expected, rtol=1e-12)
    c1, c2 = np.array([0.1, 0.0, -0.2, 0.3]), np.array([0.0, 0.5, 0.0, 0.0])
    np.testing.assert_allclose(noise.privacy_loss(eta, c1, c2),
                               noise.log_density(eta - c1) - noise.log_density(eta - c2), rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("sigma, distance, epsilon", [(1.0, 1.0, 0.5), (0.3, 1.0, 2.0), (4.0, 0.5, 0.1), (1.0, 2.0, 0.0)])
def test_privacy_profile_is_the_hockey_stick_divergence(sigma, distance, epsilon):
    # delta(eps) = integral of max(0, p1(t) - e^eps p2(t)) dt for N(0, s^2) and N(distance, s^2): Balle & Wang,
    # Theorem 8, checked by quadrature (deterministic).
    p1, p2 = stats.norm(0.0, sigma), stats.norm(distance, sigma)
    value, _ = integrate.quad(lambda t: max(0.0, p1.pdf(t) - np.exp(epsilon) * p2.pdf(t)), -40 * sigma,
                              40 * sigma + distance, points=[distance / 2 - epsilon * sigma**2 / distance], limit=400)
    assert IsotropicGaussian(1, sigma).delta(distance, epsilon) == pytest.approx(value, rel=1e-7, abs=1e-13)
    assert analytic_gaussian_delta(sigma, epsilon, distance) == IsotropicGaussian(1, sigma).delta(distance, epsilon)


# ----------------------------------------------------------------------------------------------
# The analytic Gaussian calibration
# ----------------------------------------------------------------------------------------------
@pytest.mark.parametrize("epsilon, delta, sensitivity", GRID)
def test_analytic_sigma_meets_the_exact_condition_with_equality(epsilon, delta, sensitivity):
    sigma = analytic_gaussian_sigma(epsilon, delta, sensitivity)
    assert analytic_gaussian_delta(sigma, epsilon, sensitivity) <= delta          # rounded up: private
    smaller = sigma / (1.0 + 10 * GAUSSIAN_SIGMA_RTOL)
    assert analytic_gaussian_delta(smaller, epsilon, sensitivity) > delta          # and the smallest, to tolerance
    assert analytic_gaussian_delta(sigma, epsilon, sensitivity) == pytest.approx(delta, rel=1e-6)
    # it scales with the sensitivity exactly as the condition does (Delta/sigma is what counts)
    assert analytic_gaussian_sigma(epsilon, delta, 1.0) * sensitivity == pytest.approx(sigma, rel=1e-8)


@pytest.mark.parametrize("epsilon", [0.01, 0.1, 0.5, 0.99])
@pytest.mark.parametrize("delta", [1e-3, 1e-5, 1e-10])
def test_analytic_sigma_is_below_the_classical_for_epsilon_below_one(epsilon, delta):
    classical = classical_gaussian_sigma(epsilon, delta, 2.0)
    assert classical == pytest.approx(2.0 * np.sqrt(2 * np.log(1.25 / delta)) / epsilon)
    assert analytic_gaussian_sigma(epsilon, delta, 2.0) < classical
    # the classical sigma is private too (Dwork & Roth, Theorem A.1), as the exact condition confirms
    assert analytic_gaussian_delta(classical, epsilon, 2.0) <= delta


def test_gaussian_mechanism_adds_the_analytic_noise():
    sigma = analytic_gaussian_sigma(0.5, 1e-6, 2.0)
    value = np.array([1.0, -2.0, 0.5])
    expected = value + np.random.default_rng(8).standard_normal((1, 3))[0] * sigma
    np.testing.assert_array_equal(gaussian_mechanism(value, 2.0, 0.5, 1e-6, random_state=8), expected)
    assert np.shape(gaussian_mechanism(3.0, 1.0, 1.0, 1e-5, random_state=0)) == ()
    # a matrix is one vector of its entries: each its own draw (shared rows would release row differences exactly)
    matrix = np.array([[0.3, 0.7], [0.0, 0.0]])
    out = gaussian_mechanism(matrix, 2.0, 0.5, 1e-6, random_state=8)
    np.testing.assert_array_equal(out, matrix + np.random.default_rng(8).standard_normal((1, 4))[0].reshape(2, 2)
                                  * sigma)
    # 20,000 releases of 0: the sample standard deviation is within 3 % of sigma (its relative standard error is
    # 0.5 %, so a correct sampler fails with probability below 1e-9)
    draws = [gaussian_mechanism(0.0, 2.0, 0.5, 1e-6, random_state=s) for s in range(20_000)]
    assert np.std(draws) == pytest.approx(sigma, rel=0.03)


@pytest.mark.parametrize("call, message", [
    (lambda: gaussian_mechanism(1.0, 1.0, 1.0, 0.0), "0 < delta < 1"),
    (lambda: analytic_gaussian_sigma(1.0, 0.0), "0 < delta < 1"),
    (lambda: analytic_gaussian_sigma(1.0, 1.0), "0 < delta < 1"),
    (lambda: analytic_gaussian_sigma(0.0, 1e-5), "epsilon"),
    (lambda: analytic_gaussian_sigma(1.0, 1e-5, -1.0), "sensitivity"),
    (lambda: classical_gaussian_sigma(1.5, 1e-5), "only for epsilon < 1"),
    (lambda: IsotropicGaussian.from_sigma(2, 0.0), "sigma"),
    (lambda: IsotropicGaussian.from_sigma(2, 1.0).delta(-1.0, 1.0), "distance"),
])
def test_bad_privacy_parameters_are_refused_with_the_fix(call, message):
    with pytest.raises(ValueError, match=message):
        call()


# ----------------------------------------------------------------------------------------------
# The algorithms' calibrations
# ----------------------------------------------------------------------------------------------
def test_output_perturbation_calibration_uses_the_minimisers_sensitivity():
    cal = gaussian_output_perturbation_calibration(1000, 0.01, 0.5, 1e-6)
    assert cal.sensitivity == pytest.approx(2 / (1000 * 0.01))
    assert cal.sigma == analytic_gaussian_sigma(0.5, 1e-6, cal.sensitivity)
    assert cal.mechanism(3) == IsotropicGaussian(3, cal.sigma)
    assert gaussian_output_perturbation_calibration(1000, 0.01, 0.5, 1e-6, lipschitz=2.0).sensitivity == \
        pytest.approx(2 * cal.sensitivity)


@pytest.mark.parametrize("epsilon, delta, n, lam, c", [(0.1, 1e-5, 1000, 1e-4, 0.25), (1.0, 1e-6, 100, 0.01, 0.25),
                                                       (2.0, 1e-8, 50_000, 1e-3, 1.0), (0.5, 1e-3, 10, 1.0, 0.25)])
def test_kifer_smith_thakurta_calibration_meets_both_halves_of_its_proof(epsilon, delta, n, lam, c):
    cal = gaussian_objective_perturbation_calibration(epsilon, delta, n, lam, curvature=c)
    # the formula: sigma = 2L sqrt(8 log(4/delta) + 4 eps)/eps, Delta = max(0, 2c/(n eps) - lam)
    assert cal.sigma == pytest.approx(2 * np.sqrt(8 * np.log(4 / delta) + 4 * epsilon) / epsilon)
    assert cal.ridge == pytest.approx(max(0.0, 2 * c / (n * epsilon) - lam))
    # (i) Jacobian half: log(1 + c / (n (lam + Delta))) <= eps / 2
    assert np.log1p(c / (n * (lam + cal.ridge))) <= epsilon / 2 + 1e-15
    # (ii) noise half, on the event |b.x|, |b.x'| <= sigma sqrt(2 log(4/delta)) (probability >= 1 - delta):
    # |log nu(b)/nu(b+u)| <= 2L sqrt(2 log(4/delta))/sigma + (2L)^2/(2 sigma^2) <= eps / 2
    bound = 2 * np.sqrt(2 * np.log(4 / delta)) / cal.sigma + 2.0 / cal.sigma**2
    assert bound <= epsilon / 2
    # and that event has probability >= 1 - delta: two-sided Gaussian tails, union bound
    assert 2 * 2 * stats.norm.sf(np.sqrt(2 * np.log(4 / delta))) <= delta


def test_amp_calibration_is_the_papers_in_the_packages_convention():
    n, lam, gamma = 2000, 1e-4, 1e-6
    cal = approximate_minima_perturbation_calibration(1.0, 1e-5, n, lam, gamma)
    eps3, eps1_minus_eps3, eps2 = cal.epsilons  # the paper's notation: (noise, regulariser, output)
    assert sum(cal.epsilons) == pytest.approx(1.0) and sum(cal.deltas) == pytest.approx(1e-5)
    assert cal.epsilons == pytest.approx((0.891, 0.099, 0.01)) and cal.deltas == pytest.approx((0.99e-5, 0.01e-5))
    assert (lam + cal.ridge) * n == pytest.approx(AMP_HESSIAN_RANK * 0.25 / eps1_minus_eps3)  # Lambda = r beta/(e1-e3)
    # b = n b1, b1 ~ N(0, sigma1^2), sigma1 = (2L/n)(1 + sqrt(2 log(1/delta1)))/eps3
    assert cal.sigma == pytest.approx(n * (2 / n) * (1 + np.sqrt(2 * np.log(1 / cal.deltas[0]))) / eps3)
    # sigma2: the analytic Gaussian mechanism at (eps2, delta2) for a shift of 2 n gamma / Lambda (two neighbours'
    # approximate points about one exact minimiser): it meets Balle & Wang's condition there, and half of it does not
    big_lambda = n * (lam + cal.ridge)
    shift = 2 * n * gamma / big_lambda
    assert IsotropicGaussian(1, cal.output_sigma).delta(shift, eps2) <= cal.deltas[1]
    assert IsotropicGaussian(1, 0.5 * cal.output_sigma).delta(shift, eps2) > cal.deltas[1]
    # the authors' sigma2, the classical bound at half that shift, does not meet it at this epsilon
    authors = n * gamma / big_lambda * (1 + np.sqrt(2 * np.log(1 / cal.deltas[1]))) / eps2
    assert IsotropicGaussian(1, authors).delta(shift, eps2) > cal.deltas[1]
    assert cal.output_mechanism(2).sigma == cal.output_sigma and cal.mechanism(2).sigma == cal.sigma
    with pytest.raises(ValueError, match="epsilon_1 - epsilon_3 < 1"):
        approximate_minima_perturbation_calibration(20.0, 1e-5, n, lam, gamma)
    with pytest.raises(ValueError, match="summing to 1"):
        approximate_minima_perturbation_calibration(1.0, 1e-5, n, lam, gamma, epsilon_split=(0.5, 0.5, 0.5))
    with pytest.raises(ValueError, match="gamma"):
        approximate_minima_perturbation_calibration(1.0, 1e-5, n, lam, 0.0)


# ----------------------------------------------------------------------------------------------
# The book's theorem for Gaussian objective perturbation (replace one) and what it proves
# ----------------------------------------------------------------------------------------------
def test_gaussian_objective_privacy_map_is_the_theorems_bound():
    # eps_b = 2L sqrt(2 log(1/delta))/sigma + 2L^2/sigma^2, eps_J = log(1 + c/(n (lam + Delta))), by hand
    sigma, delta, n, lam, ridge, c, L = 4.0, np.exp(-8.0), 50, 0.01, 0.03, 0.5, 1.5
    by_hand = 2 * 1.5 * 4.0 / 4.0 + 2 * 1.5**2 / 16.0 + np.log(1 + 0.5 / (50 * 0.04))
    assert gaussian_objective_perturbation_epsilon(sigma, delta, n, lam, ridge, c, L) == pytest.approx(by_hand, rel=1e-14)
    with pytest.raises(ValueError, match="ridge"):
        gaussian_objective_perturbation_epsilon(sigma, delta, n, lam, -1.0)


@pytest.mark.parametrize("c", [0.25, 1.0])
@pytest.mark.parametrize("n, lam", [(10, 1.0), (5426, 1e-3), (100_000, 1e-4)])
def test_kifer_smith_thakurta_calibration_is_proved_for_replace_one(n, lam, c):
    for epsilon in (1e-3, 0.01, 0.1, 1.0, 3.0, 10.0, 100.0):
        for delta in (1e-12, 1e-6, 1e-3, 0.1, 0.5):
            cal = gaussian_objective_perturbation_calibration(epsilon, delta, n, lam, curvature=c)
            proven = gaussian_objective_perturbation_epsilon(cal.sigma, delta, n, lam, cal.ridge, c)
            assert proven <= epsilon * (1 + 1e-12), (epsilon, delta)
            # not vacuous: with 60% of the noise the theorem no longer gives epsilon at small epsilon and delta
            if epsilon <= 0.1 and delta <= 1e-3:
                assert gaussian_objective_perturbation_epsilon(0.6 * cal.sigma, delta, n, lam, cal.ridge, c) > epsilon


def test_amp_objective_step_is_proved_or_the_split_is_refused():
    n, lam, gamma = 5426, 1e-3, 1e-8
    for epsilon in (0.01, 0.1, 1.0, 3.0, 10.0):  # the default split, delta = 1e-5: the modern study's settings
        cal = approximate_minima_perturbation_calibration(epsilon, 1e-5, n, lam, gamma)
        eps3, eps_ridge, _ = cal.epsilons
        proven = gaussian_objective_perturbation_epsilon(cal.sigma, cal.deltas[0], n, lam, cal.ridge)
        a = np.sqrt(2 * np.log(1 / cal.deltas[0]))  # the closed form of the noise part: eps3 (a/(1+a) + eps3/(2(1+a)^2))
        assert proven - np.log1p(0.25 / (n * (lam + cal.ridge))) == pytest.approx(
            eps3 * (a / (1 + a) + eps3 / (2 * (1 + a) ** 2)), rel=1e-12)
        assert eps3 <= 2 * (1 + a)  # so the noise part is at most eps3, and the ridge part below eps1 - eps3
    # outside the proof: a large delta_1 at epsilon 10, or a split with most of a large epsilon on the noise
    with pytest.raises(ValueError, match="not covered by the proof"):
        approximate_minima_perturbation_calibration(10.0, 0.2, n, lam, gamma)
    with pytest.raises(ValueError, match="smaller first fraction"):
        approximate_minima_perturbation_calibration(50.0, 1e-5, n, lam, gamma, epsilon_split=(0.98, 0.01, 0.01))
    # epsilon_3 <= 2 is always covered, whatever delta_1
    approximate_minima_perturbation_calibration(2.0, 0.5, n, lam, gamma, epsilon_split=(0.98, 0.01, 0.01))


@pytest.mark.parametrize("loss", ["logistic", "huber"])
def test_exact_privacy_loss_of_gaussian_objective_perturbation_obeys_the_proof(loss):
    """Exact privacy loss at sampled outputs of a small neighbouring pair (replace one): the proof's pointwise bound
    eps_J + 2L ||Pb||/sigma^2 + 2L^2/sigma^2 holds at every output (deterministic; it fails if the density, the
    projection or the Jacobian bound were wrong), and the loss exceeds eps_b + eps_J at most as often as
    ||Pb|| > sigma sqrt(2 log(1/delta)), an event of probability exactly delta (the records span a plane)."""
    rng = np.random.default_rng(20261126)
    d, n, lam, sigma, delta = 3, 5, 0.02, 1.5, 0.05
    shared = rng.normal(size=(n - 1, d))
    shared /= np.maximum(1.0, np.linalg.norm(shared, axis=1))[:, None]
    u, u_prime = np.array([0.0, 1.0, 0.0]), np.array([0.8, -0.6, 0.0])  # near-opposite: |v| up to about 1.9
    X, X_prime = np.vstack([shared, u]), np.vstack([shared, u_prime])
    y = np.ones(n)
    lossf = get_loss(loss)
    B = rng.normal(scale=sigma, size=(20_000, d))
    W = solve_regularized_erm(X, y, lam, loss, b=B, tol=1e-12).coef
    assert np.allclose(perturbation_from_output(W, X, y, lam, loss), B, atol=1e-9)  # W are the outputs of B
    B_prime = perturbation_from_output(W, X_prime, y, lam, loss)
    privacy_loss = ((B_prime**2).sum(1) - (B**2).sum(1)) / (2 * sigma**2) \
        + log_abs_det_jacobian(W, X, y, lam, loss) - log_abs_det_jacobian(W, X_prime, y, lam, loss)
    plane = np.linalg.qr(np.column_stack([u, u_prime]))[0]
    projected = np.linalg.norm(B @ plane, axis=1)
    L, c = lossf.lipschitz, lossf.curvature
    eps_J = np.log1p(c / (n * lam))
    assert np.all(privacy_loss <= eps_J + 2 * L * projected / sigma**2 + 2 * L**2 / sigma**2 + 1e-9)
    epsilon = gaussian_objective_perturbation_epsilon(sigma, delta, n, lam, 0.0, c, L)
    outside = projected > sigma * np.sqrt(2 * np.log(1 / delta))
    # the theorem's conclusion on this pair: the hockey-stick divergence at epsilon, E[(1 - e^(epsilon - loss))_+] under
    # D, is at most delta (here it is 0: the largest loss is below epsilon; a privacy map that dropped a term would
    # give an epsilon below the losses the mechanism has)
    assert np.mean(np.maximum(0.0, 1.0 - np.exp(epsilon - privacy_loss))) <= delta
    # the proof's event has probability exactly delta: Binomial(20000, 0.05), mean 1000, sd 31; outside 845-1155
    # with probability 5e-7
    assert 845 <= outside.sum() <= 1155


def test_analytic_sigma_meets_the_condition_in_high_precision():
    # the float64 profile cancels at small epsilon or tiny delta: its root fell 9e-9 relative below the exact one
    import mpmath

    from dplr.gaussian import analytic_gaussian_sigma

    for eps, delta in ((1e-6, 1e-30), (0.1, 1e-300), (1.0, 1e-5), (5.0, 1e-10), (1e-3, 1e-12)):
        sigma = analytic_gaussian_sigma(eps, delta)
        with mpmath.workdps(200):
            a, b = 1 / (2 * mpmath.mpf(sigma)), mpmath.mpf(eps) * mpmath.mpf(sigma)
            profile = mpmath.ncdf(a - b) - mpmath.exp(mpmath.mpf(eps)) * mpmath.ncdf(-a - b)
            assert profile <= mpmath.mpf(delta)
            # and not far above the root: 1e-8 smaller already fails the condition
            s2 = mpmath.mpf(sigma) * (1 - mpmath.mpf("1e-8"))
            a2, b2 = 1 / (2 * s2), mpmath.mpf(eps) * s2
            assert mpmath.ncdf(a2 - b2) - mpmath.exp(mpmath.mpf(eps)) * mpmath.ncdf(-a2 - b2) > mpmath.mpf(delta)

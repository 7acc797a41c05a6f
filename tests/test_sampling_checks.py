"""The half-space check of sampled outputs: it passes the library's samplers and fails wrong ones."""
import numpy as np
import pytest

from dplr.algorithms import sensitivity_method, standard_erm
from dplr.calibration import sensitivity_method_noise_rate
from dplr.mechanisms import sample_vector_laplace
from dplr.analysis.sampling_checks import halfspace_check
from dplr.analysis.sensitivity import anchored_sensitivity_search

OFFSETS = np.array([0.0, 1.0, 4.0])


def _draws(beta, d, centre, n, seed):
    return centre + sample_vector_laplace(beta, d, size=n, random_state=seed)


@pytest.mark.parametrize("d", [1, 2, 10])
def test_correct_sampler_passes_and_wrong_scales_fail(d):
    # alpha = 1e-3 with Bonferroni over 6 counts: the first assertion fails with probability at most 0.001 (fixed seeds)
    beta, c1, c2 = 2.0, np.zeros(d), np.r_[0.5, np.zeros(d - 1)]
    offsets = OFFSETS / beta
    ok = halfspace_check(_draws(beta, d, c1, 100_000, 1), _draws(beta, d, c2, 100_000, 2), c1, c2, beta, offsets)
    assert ok.passed
    for row in ok.rows:  # the sampled event losses agree with the exact ones (5 standard errors: false failure ~1e-6)
        assert abs(row.log_ratio_hat - row.log_ratio) < 5 * row.log_ratio_se
        assert row.log_ratio <= ok.supremum + 1e-12
    # the check has power: noise a fifth too small or too large, or the second centre misplaced, is rejected
    for wrong_beta in (1.2 * beta, 0.8 * beta):
        bad = halfspace_check(_draws(wrong_beta, d, c1, 100_000, 3), _draws(wrong_beta, d, c2, 100_000, 4), c1, c2,
                              beta, offsets)
        assert not bad.passed
    shifted = halfspace_check(_draws(beta, d, c1, 100_000, 5), _draws(beta, d, 2 * c2, 100_000, 6), c1, c2, beta,
                              offsets)
    assert not shifted.passed


def test_algorithm1_on_its_worst_pair_draws_from_the_law_of_theorem_1():
    # replaces a check that compared beta * ||w1 - w2|| with itself: the sampler of dplr.sensitivity_method is tested
    # on half-spaces beyond w*(D) (false-failure rate at most 1e-3), and the supremum is at most epsilon (Corollary 2)
    n, lam, eps = 1000, 1e-3, 0.5
    pair = anchored_sensitivity_search(n, lam).pair
    beta = sensitivity_method_noise_rate(n, lam, eps)
    w1, w2 = standard_erm(pair.X, pair.y, lam), standard_erm(pair.X_prime, pair.y_prime, lam)
    out = sensitivity_method(pair.X, pair.y, eps, lam, n_draws=200_000, random_state=7)
    out_p = sensitivity_method(pair.X_prime, pair.y_prime, eps, lam, n_draws=200_000, random_state=8)
    check = halfspace_check(out, out_p, w1, w2, beta, OFFSETS / beta)
    assert check.passed
    assert check.supremum <= eps
    assert check.rows[-1].log_ratio > check.rows[0].log_ratio  # the events approach the supremum as they move out
    # a half-scale sampler (the sensitivity taken as 1/(n lambda)) is caught
    out_half = w1 + sample_vector_laplace(2 * beta, 2, size=200_000, random_state=9)
    out_half_p = w2 + sample_vector_laplace(2 * beta, 2, size=200_000, random_state=10)
    assert not halfspace_check(out_half, out_half_p, w1, w2, beta, OFFSETS / beta).passed


def test_input_validation():
    with pytest.raises(ValueError, match="coincide"):
        halfspace_check(np.zeros((3, 2)), np.zeros((3, 2)), np.zeros(2), np.zeros(2), 1.0, [0.0])
    with pytest.raises(ValueError, match="same dimension"):
        halfspace_check(np.zeros((3, 2)), np.zeros((3, 3)), np.zeros(2), np.ones(2), 1.0, [0.0])

"""The (ε, δ) mechanisms under the black-box audit: correct ones not refuted, a broken variant of each caught.

The auditor (dplr.analysis.audit) already handles δ: it refutes (ε, δ)-DP when the Clopper-Pearson bounds give
Pr[M(D') in S] > e^eps Pr[M(D) in S] + delta for its chosen event, i.e. eps_lb = log((1 - delta - FNR)/FPR) > eps.
Statistical tests run on fixed seeds. For a correct mechanism the audit's guarantee bounds the chance that
eps_lb exceeds eps by alpha; those tests use alpha = 1e-3 (false-failure rate at most 0.1 % each). For the broken
variants each comment gives the mean and standard deviation of eps_lb over seeds 0-9.
"""
import numpy as np
import pytest

from dplr.analysis import broken
from dplr.analysis.audit import audit, check_claim
from dplr.analysis.auditable import (
    ApproximateMinimaPerturbationMechanism,
    DPSGDMechanism,
    GaussianMechanism,
    GaussianObjectivePerturbationMechanism,
    GaussianOutputPerturbationMechanism,
)
from dplr.analysis.neighbours import NeighbouringPair
from dplr.analysis.privacy_loss_search import worst_case_objective_perturbation_privacy_loss
from dplr.analysis.sensitivity import anchored_sensitivity_search
from dplr.dpsgd import dpsgd_epsilon, dpsgd_noise_multiplier
from dplr.gaussian import analytic_gaussian_sigma

N = 40_000
BATCH = 10_000
STRICT = 1e-3
POINTS = (np.zeros(1), np.ones(1))
# DP-SGD's pair: nine records at x = 0 (gradient 0) and one record x = 1 whose label flips: the lot's gradient sum
# moves by 2 |l'| <= 2 C after clipping, by up to 2 * 0.5 = 1 = 10 C without it (C = 0.1, |l'(0)| = 1/2).
DPSGD_PAIR = NeighbouringPair.from_records(np.zeros((9, 1)), np.ones(9), [1.0], 1.0, [1.0], -1.0)
# sigma = dpsgd_noise_multiplier(1.0, 1e-5, 0.5, 3) with dp-accounting 0.6.0 (PLD, replace one): 6.4463; fixed here
# so that the audits need no accountant (the accounting test below recomputes it).
DPSGD_SIGMA = 6.446323377535616
# sigma = dpsgd_noise_multiplier(1.0, 1e-5, 0.05, 3), the same at a tenth of the rate: what WrongRateDPSGD(parts=10)
# hands the accountant while it samples at 0.5 (its accounting test below recomputes it).
WRONG_RATE_SIGMA = 1.1387886347566916


def test_audit_coverage_on_a_tight_gaussian_mechanism():
    # The 1-D Gaussian mechanism at the analytic sigma has exactly (1, 0.05)-DP on centres at distance S, and
    # half-line events attain the privacy profile, so this is the hardest case for the (eps, delta) bound's validity:
    # the audit refutes when the lower bound of Pr[M(D') in S] exceeds e^eps (upper bound of Pr[M(D) in S]) + delta.
    # 200 audits at alpha = 0.05: the number with eps_lb > 1 is at most Binomial(200, 0.05); failing needs more
    # than 22 (probability < 0.1 %).
    mech = GaussianMechanism(1.0, 1.0, 0.05)
    root = np.random.SeedSequence(2026).spawn(200)
    over = sum(audit(mech, POINTS, 2000, delta=0.05, batch_size=2000, random_state=s).epsilon_lb > 1.0 for s in root)
    assert over <= 22


def test_gaussian_mechanism_exact_epsilon_is_the_claim_at_the_sensitivity():
    mech = GaussianMechanism(1.0, 2.0, 1e-5)
    assert mech.sigma == analytic_gaussian_sigma(2.0, 1e-5, 1.0)
    assert mech.max_privacy_loss(POINTS) == pytest.approx(2.0, rel=1e-8)            # tight at distance S
    assert mech.max_privacy_loss((np.zeros(1), np.full(1, 0.5))) < 1.0               # less at a smaller distance
    result = audit(mech, POINTS, N, alpha=STRICT, delta=1e-5, batch_size=BATCH, random_state=71)
    assert not result.refutes(2.0)


def test_gaussian_output_perturbation_passes_and_half_sigma_fails():
    pair = anchored_sensitivity_search(1000, 1e-4).pair  # minimisers 0.955 of the bound 2/(n lam) apart
    eps, delta = 1.0, 1e-3
    ok = check_claim("Gaussian output perturbation", GaussianOutputPerturbationMechanism(eps, delta, 1e-4), pair,
                     eps, N, alpha=STRICT, delta=delta, batch_size=BATCH, random_state=51)
    assert ok.exact <= eps and not ok.exact_violates and not ok.audit_refutes
    # seeds 0-9 at alpha = 0.05: mean 1.634, sd 0.066 (exact epsilon at delta: 2.15)
    bad = check_claim("half sigma", broken.HalfSigmaGaussianOutputPerturbation(eps, delta, 1e-4), pair, eps, N,
                      delta=delta, batch_size=BATCH, random_state=52)
    assert bad.exact > 2 * eps and bad.exact_violates
    assert bad.audit_refutes


def test_gaussian_objective_perturbation_is_not_refuted():
    pair = anchored_sensitivity_search(200, 1e-3).pair
    mech = GaussianObjectivePerturbationMechanism(1.0, 1e-3, 1e-3)
    result = check_claim("KST", mech, pair, 1.0, 20_000, exact=False, alpha=STRICT, delta=1e-3, batch_size=BATCH,
                         random_state=81)
    assert not result.audit_refutes


@pytest.fixture(scope="module")
def small_n_lambda_pair():
    # n lambda = 1e-3: the pair on which Algorithm 2 as printed in NIPS 2008 (no Jacobian term) is worst; nine
    # records at 0 add no curvature, so only the ridge Delta bounds the Jacobian ratio 1 + c/(n(lambda + Delta)).
    return worst_case_objective_perturbation_privacy_loss(np.zeros((9, 1)), np.ones(9), 1.0, 1e-4,
                                                          form="nips2008").pair


@pytest.mark.parametrize("correct, wrong, seed", [
    # seeds 0-9 at alpha = 0.05, 100,000 runs: mean 3.136, sd 1.178, smallest 1.16 (a second mode near 1.2)
    (GaussianObjectivePerturbationMechanism(1.0, 1e-3, 1e-4), broken.NoRidgeGaussianObjectivePerturbation(1.0, 1e-3, 1e-4),
     91),
    # seeds 0-9 at alpha = 0.05, 100,000 runs: mean 1.568, sd 0.061
    (ApproximateMinimaPerturbationMechanism(1.0, 1e-3, 1e-4), broken.no_ridge_approximate_minima_perturbation(
        1.0, 1e-3, 1e-4), 92),
], ids=["kifer-smith-thakurta", "approximate-minima"])
def test_objective_perturbation_with_its_ridge_passes_and_without_it_fails(small_n_lambda_pair, correct, wrong, seed):
    ok = audit(correct, small_n_lambda_pair, N, score="histogram", alpha=STRICT, delta=1e-3, batch_size=BATCH,
               random_state=seed)
    assert not ok.refutes(1.0)
    bad = audit(wrong, small_n_lambda_pair, 100_000, score="histogram", delta=1e-3, batch_size=20_000,
                random_state=seed + 100)
    assert bad.refutes(1.0)


def test_dpsgd_passes_and_without_clipping_fails():
    mech = DPSGDMechanism(DPSGD_SIGMA, 0.1, 0.5, 3, 1.0)
    ok = audit(mech, DPSGD_PAIR, N, alpha=STRICT, delta=1e-5, batch_size=BATCH, random_state=61)
    assert not ok.refutes(1.0)
    # seeds 0-9 at alpha = 0.05: mean 2.970, sd 0.134
    bad = audit(broken.UnclippedDPSGD(DPSGD_SIGMA, 0.1, 0.5, 3, 1.0), DPSGD_PAIR, N, delta=1e-5, batch_size=BATCH,
                random_state=62)
    assert bad.refutes(1.0)


def test_dpsgd_accounted_at_a_tenth_of_its_rate_fails():
    # The setting of test_dpsgd_passes_and_without_clipping_fails, where the correct DP-SGD is not refuted (at
    # alpha = 1e-3); only the rate given to the accountant differs. seeds 0-9 at alpha = 0.05: mean 3.554, sd 0.200
    bad = audit(broken.WrongRateDPSGD(WRONG_RATE_SIGMA, 0.1, 0.5, 3, 1.0, parts=10), DPSGD_PAIR, N, delta=1e-5,
                batch_size=BATCH, random_state=63)
    assert bad.refutes(1.0)


def test_dpsgd_claim_is_the_accountants():
    pytest.importorskip("dp_accounting")  # the optional extra dplr[accounting]
    assert dpsgd_noise_multiplier(1.0, 1e-5, 0.5, 3, rtol=1e-2) == pytest.approx(DPSGD_SIGMA, rel=1e-2)
    mech = broken.UnclippedDPSGD(DPSGD_SIGMA, 0.1, 0.5, 3, 1.0)
    assert mech.epsilon(1e-5) <= 1.0  # the broken variant claims what the correct one does


def test_wrong_rate_claim_is_the_slipped_accountants():
    pytest.importorskip("dp_accounting")  # the optional extra dplr[accounting]
    # what dpsgd_noise_multiplier(1.0, 1e-5, 0.05, 3) returns, by its definition: the claim holds at the fixed sigma and
    # fails 1 % below it (epsilon decreases in sigma)
    assert dpsgd_epsilon(WRONG_RATE_SIGMA / 1.01, 0.05, 3, 1e-5) > 1.0
    mech = broken.WrongRateDPSGD(WRONG_RATE_SIGMA, 0.1, 0.5, 3, 1.0, parts=10)
    assert mech.claimed_rate == 0.05
    assert mech.epsilon(1e-5) <= 1.0  # what it claims
    # the accountant at the rate actually used bounds its epsilon by far more (an upper bound, not a refutation:
    # the audit above is the refutation)
    assert dpsgd_epsilon(WRONG_RATE_SIGMA, 0.5, 3, 1e-5) > 5.0
    with pytest.raises(ValueError, match="parts"):
        broken.WrongRateDPSGD(WRONG_RATE_SIGMA, 0.1, 0.5, 3, 1.0, parts=0)

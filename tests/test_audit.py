"""Privacy audit: Clopper-Pearson bounds, the black-box auditor, and the broken variants caught.

Statistical tests run on fixed seeds. For a correct mechanism the audit's guarantee bounds the chance that
epsilon_lb exceeds epsilon by alpha; those tests use alpha = 1e-3, so each such assertion would fail for at
most 0.1 % of seeds. For the broken variants each comment gives the mean and standard deviation of
epsilon_lb over ten other seeds (0-9), so the reader can see how far the assertion is from failing.
"""
import numpy as np
import pytest
from scipy import stats

from dplr.analysis import broken
from dplr.analysis.audit import (
    audit,
    audit_outputs,
    check_claim,
    clopper_pearson_upper,
    epsilon_lower_bound,
    run_mechanism,
    seed_sequence,
)
from dplr.analysis.audit_scores import float_grid_score, histogram_score
from dplr.analysis.auditable import LaplaceMechanism, ObjectivePerturbationMechanism, SensitivityMethodMechanism
from dplr.analysis.neighbours import l1_tie_breaking_pair
from dplr.analysis.privacy_loss import vector_laplace_halfspace_tradeoff
from dplr.analysis.privacy_loss_search import worst_case_objective_perturbation_privacy_loss
from dplr.analysis.sensitivity import anchored_sensitivity_search
from dplr.mechanisms import laplace_mechanism

N = 40_000  # runs per data set in the statistical tests
BATCH = 10_000
STRICT = 1e-3  # alpha for "stays below epsilon" assertions: false-failure rate at most 0.1 % each
POINTS = (np.zeros(1), np.ones(1))  # two query values at distance S = 1: the hardest pair for the sampler


# ----------------------------------------------------------------------------------------------
# Clopper-Pearson and the bound
# ----------------------------------------------------------------------------------------------
def test_clopper_pearson_matches_closed_forms_and_scipy():
    assert clopper_pearson_upper(0, 50, 0.05) == pytest.approx(1 - 0.05 ** (1 / 50), rel=1e-12)
    assert clopper_pearson_upper(7, 7, 0.05) == 1.0
    ci = stats.binomtest(13, 80).proportion_ci(confidence_level=0.9, method="exact")
    assert clopper_pearson_upper(13, 80, 0.05) == pytest.approx(ci.high, rel=1e-10)
    np.testing.assert_allclose(clopper_pearson_upper(np.array([13, 0]), 80, 0.05),
                               [ci.high, 1 - 0.05 ** (1 / 80)], rtol=1e-10)
    with pytest.raises(ValueError):
        clopper_pearson_upper(5, 4, 0.05)


def test_clopper_pearson_coverage_exactly():
    # No randomness: for each true p, sum the binomial pmf over the counts whose bound misses p.
    n, alpha = 40, 0.05
    upper = clopper_pearson_upper(np.arange(n + 1), n, alpha)
    misses = [stats.binom.pmf(np.arange(n + 1), n, p)[upper < p].sum() for p in np.linspace(0.001, 0.999, 999)]
    assert max(misses) <= alpha + 1e-12
    assert max(misses) > 0.6 * alpha  # and the bound is not vacuously wide


def test_epsilon_lower_bound_formula():
    a = 0.0125
    fpr_u, fnr_u = clopper_pearson_upper(10, 1000, a), clopper_pearson_upper(400, 1000, a)
    assert epsilon_lower_bound(10, 1000, 400, 1000, a) == pytest.approx(np.log((1 - fnr_u) / fpr_u))
    assert epsilon_lower_bound(10, 1000, 400, 1000, a, delta=0.1) == pytest.approx(np.log((0.9 - fnr_u) / fpr_u))
    assert epsilon_lower_bound(500, 1000, 1000, 1000, a) == -np.inf  # no run on D' in the event


def test_audit_result_bookkeeping_on_synthetic_outputs():
    rng = np.random.default_rng(0)
    same = audit_outputs(rng.standard_normal(20_000), rng.standard_normal(20_000), alpha=0.05)
    # identical laws: the bound is a valid lower bound on 0 (false positive rate <= 5 %: guarantee)
    assert same.epsilon_lb == 0.0
    apart = audit_outputs(rng.uniform(0, 1, 20_000), rng.uniform(2, 3, 20_000), alpha=0.05)
    # disjoint supports: zero false positives; the bound is then capped by the number of runs
    best = apart.best
    assert best.false_positives == 0 and best.false_negatives == 0
    cap = np.log(1 / clopper_pearson_upper(0, apart.n_evaluation, 0.05 / 4))
    assert apart.epsilon_lb == pytest.approx(np.log(1 - clopper_pearson_upper(0, apart.n_evaluation, 0.0125)) + cap)
    assert apart.n_selection == 4000 and apart.n_evaluation == 16_000
    assert apart.refutes(8.0) and not apart.refutes(8.5)  # the cap: log(16000 / log(80)) = 8.2


# ----------------------------------------------------------------------------------------------
# Running mechanisms: seeds, batching, fidelity to the library
# ----------------------------------------------------------------------------------------------
def test_runs_are_seeded_per_run_and_per_block():
    mech = LaplaceMechanism(1.0, 1.0)
    a = run_mechanism(mech, np.zeros(2), 50, random_state=3)
    np.testing.assert_array_equal(a, run_mechanism(mech, np.zeros(2), 50, random_state=np.random.SeedSequence(3)))
    # run i is the library's laplace_mechanism called with the i-th child seed
    child = np.random.SeedSequence(3).spawn(50)[7]
    np.testing.assert_array_equal(a[7], laplace_mechanism(np.zeros(2), 1.0, 1.0,
                                                          random_state=np.random.default_rng(child)))
    # batched: block j is one call with the j-th child; the result depends on the block size only
    b = run_mechanism(mech, np.zeros(2), 50, random_state=3, batch_size=20)
    first = mech(np.zeros(2), np.random.default_rng(np.random.SeedSequence(3).spawn(3)[0]), 20)
    np.testing.assert_array_equal(b[:20], first)
    assert b.shape == (50, 2)
    assert not np.array_equal(a, b)
    with pytest.raises(TypeError):
        seed_sequence(np.random.RandomState(0))


# ----------------------------------------------------------------------------------------------
# The guarantee holds at its stated rate
# ----------------------------------------------------------------------------------------------
def test_audit_coverage_on_a_tight_mechanism():
    # The 1-D Laplace mechanism on centres at distance S has epsilon exactly 1 on this pair, and
    # half-line events attain it, so this is the hardest case for the bound's validity. 200 audits:
    # the number with epsilon_lb > 1 is at most Binomial(200, 0.05); failing needs more than 22
    # (probability < 0.1 %).
    root = np.random.SeedSequence(2024).spawn(200)
    over = sum(audit(LaplaceMechanism(1.0, 1.0), POINTS, 2000, batch_size=2000, random_state=s).epsilon_lb > 1.0
               for s in root)
    assert over <= 22


# ----------------------------------------------------------------------------------------------
# Correct mechanisms stay below epsilon, broken ones are caught
# ----------------------------------------------------------------------------------------------
@pytest.mark.parametrize("epsilon", [0.5, 2.0])
def test_sampler_passes_and_the_standard_deviation_reading_fails(epsilon):
    ok = audit(LaplaceMechanism(1.0, epsilon), POINTS, N, alpha=STRICT, batch_size=BATCH, random_state=11)
    assert ok.epsilon_lb <= epsilon
    assert ok.epsilon_lb > 0.8 * epsilon  # ... and the audit has power: 1-D half-lines attain epsilon
    # seeds 0-9 at alpha = 0.05: eps 0.5 -> mean 0.678, sd 0.011; eps 2 -> mean 2.759, sd 0.022
    sd = audit(broken.StandardDeviationLaplace(1.0, epsilon), POINTS, N, batch_size=BATCH, random_state=12)
    assert sd.epsilon_lb > epsilon
    assert broken.StandardDeviationLaplace(1.0, epsilon).max_privacy_loss(POINTS) == pytest.approx(
        np.sqrt(2) * epsilon)


def test_standard_deviation_reading_has_that_standard_deviation():
    # per-coordinate sd of the broken noise is S/eps (d = 3); 200,000 draws: the sd estimate has
    # relative standard error about 0.4 % (heavy-ish tails), the tolerance 3 % is > 7 of them
    mech = broken.StandardDeviationLaplace(0.5, 2.0)
    draws = mech(np.zeros(3), np.random.default_rng(1), 200_000)
    np.testing.assert_allclose(draws.std(axis=0), 0.25, rtol=0.03)


def test_algorithm1_passes_and_half_scale_noise_fails():
    pair = anchored_sensitivity_search(1000, 1e-4).pair  # the worst pair of dplr.analysis.sensitivity (d = 2)
    ok = check_claim("Algorithm 1", SensitivityMethodMechanism(1.0, 1e-4), pair, 1.0, N, alpha=STRICT,
                     batch_size=BATCH, random_state=21)
    assert ok.exact <= 1.0 and ok.audit.epsilon_lb <= ok.exact
    # seeds 0-9 at alpha = 0.05: mean 1.573, sd 0.021
    bad = check_claim("half scale", broken.HalfScaleSensitivityMethod(1.0, 1e-4), pair, 1.0, N, batch_size=BATCH,
                      random_state=22)
    assert bad.exact == pytest.approx(2 * ok.exact, rel=1e-12)
    assert bad.exact_violates and bad.audit_refutes


def test_objective_perturbation_corrected_passes_and_nips2008_fails_at_small_n_lambda():
    shared, lam, eps = np.zeros((9, 1)), 0.001, 1.0  # n lambda = 0.01; records at 0 add no curvature
    hard_c = worst_case_objective_perturbation_privacy_loss(shared, np.ones(9), eps, lam, form="corrected").pair
    hard_n = worst_case_objective_perturbation_privacy_loss(shared, np.ones(9), eps, lam, form="nips2008").pair
    # the exact minimiser: the object of the exact loss (the certified default has no closed-form density)
    ok = check_claim("corrected", ObjectivePerturbationMechanism(eps, lam, release="exact_minimiser"), hard_c, eps, N,
                     score="histogram", alpha=STRICT, batch_size=BATCH, random_state=31)
    assert ok.exact <= eps and not ok.audit_refutes
    # seeds 0-9 at alpha = 0.05: mean 2.662, sd 0.110
    bad = check_claim("NIPS 2008", broken.nips2008_objective_perturbation(eps, lam), hard_n, eps, N,
                      score="histogram", batch_size=BATCH, random_state=32)
    assert bad.exact > 2.5 * eps
    assert bad.audit_refutes


def test_l1_regularisation_with_the_l2_bound_fails():
    pair, lam, eps = l1_tie_breaking_pair(20), 0.1, 1.0
    mech = broken.L1SensitivityMethod(eps, lam)
    # seeds 0-9 at alpha = 0.05: mean 3.050, sd 0.053
    bad = check_claim("L1", mech, pair, eps, N, batch_size=BATCH, random_state=41)
    assert bad.exact > 3 * eps and bad.audit_refutes
    # the same pair and noise with the L2 penalty Algorithm 1 was proved for: fine
    ok = check_claim("L2", SensitivityMethodMechanism(eps, lam), pair, eps, N, alpha=STRICT, batch_size=BATCH,
                     random_state=42)
    assert ok.exact <= eps and not ok.audit_refutes


# ----------------------------------------------------------------------------------------------
# Floating point and dimension
# ----------------------------------------------------------------------------------------------
def test_least_significant_bits_refute_the_correct_sampler():
    centre = np.array([0.1])
    mech = LaplaceMechanism(0.1, 1.0)
    score = float_grid_score(centre)
    # deterministic fact (proof in the docstring): fl(c + eta) never lands in the event
    assert score(run_mechanism(mech, centre, 100_000, random_state=5, batch_size=BATCH)).sum() == 0
    res = audit(mech, (centre, np.zeros(1)), N, score=score, batch_size=BATCH, random_state=6)
    # zero false positives; about a fifth of the runs from 0 hit the event: epsilon_lb ~ 7 (seeds vary by < 0.3)
    assert res.best.false_positives == 0
    assert res.epsilon_lb > 5.0


def test_histogram_score_is_a_binned_log_ratio():
    score = histogram_score(np.r_[np.zeros(90), np.ones(10)], np.r_[np.zeros(10), np.ones(90)], n_bins=4)
    np.testing.assert_allclose(score(np.array([0.0, 1.0])), [np.log(10.5 / 90.5), np.log(90.5 / 10.5)])


def test_halfspaces_reach_epsilon_only_in_one_dimension():
    p1, r1 = vector_laplace_halfspace_tradeoff(1.0, 1, [0.0, 2.0])
    np.testing.assert_allclose(r1, 1.0, rtol=1e-12)
    np.testing.assert_allclose(p1, 0.5 * np.exp(-1.0 - np.array([0.0, 2.0])), rtol=1e-12)
    _, r5 = vector_laplace_halfspace_tradeoff(1.0, 5, [0.0, 5.0, 30.0])
    assert np.all(np.diff(r5) > 0) and r5[-1] < 1.0 and r5[0] < 0.5

"""The stopping certificate of released points (dplr.solver.stopping).

The lemma says that the true gradient norm of a float64 point is at most the certified bound computed from the
solver's float64 norm. Here the true norm is computed from the same float64 inputs in 60-digit decimal arithmetic
(dplr.analysis.rounding.exact_gradient_norm: Python's decimal module, whose exp is correctly rounded), for the
solvers' own outputs on problems chosen to make rounding large (rows on the unit sphere, small lambda so that ||w||
is large, cancelling gradient terms, folded equal rows, perturbations b, a batch large enough for the Taylor start).
The checks are deterministic (fixed seeds). The bound checks have no false failures: the lemma is a proof, and a
failure means the bound or an assumption of it is wrong on this machine. One check is empirical (that the computed
norm alone is sometimes below the true one); its false-failure rate is stated where it is made.
"""
import dataclasses

import numpy as np
import pytest

from dplr.algorithms import approximate_minima_perturbation, gaussian_output_perturbation, sensitivity_method
from dplr.analysis.rounding import certificate_check, exact_gradient_norm
from dplr.losses import get_loss
from dplr.solver import certified_gradient_norm, gradient_rounding_bound, solve_regularized_erm, stopping_tolerance


def unit_rows(rng, n, d):
    X = rng.normal(size=(n, d))
    return X / np.linalg.norm(X, axis=1, keepdims=True) * (1 - 1e-15)  # inside the unit ball after rounding


def cases():
    """The solvers' outputs (dplr.analysis.rounding.certificate_check) on problems that make rounding large: rows on
    the unit sphere, random labels (cancelling gradient terms) and separable ones (large margins), small lambda
    (large ||w||), perturbations b, folded equal rows."""
    rng = np.random.default_rng(20261126)
    out = []
    for loss in ("logistic", "huber"):
        for n, d, lam in ((400, 3, 1e-5), (1000, 8, 1e-4), (2000, 12, 1e-3)):
            X = unit_rows(rng, n, d)
            for y in (np.where(rng.random(n) < 0.5, 1.0, -1.0), np.where(X[:, 0] > 0, 1.0, -1.0)):
                out += certificate_check(X, y, lam, loss, random_state=rng)
        # the batched solver's Taylor start (a shared third- or fourth-order start: k >= d(d+1)/2 problems)
        X = unit_rows(rng, 500, 3)
        out += certificate_check(X, np.where(rng.random(500) < 0.5, 1.0, -1.0), 1e-4, loss, n_perturbed=8,
                                 random_state=rng)
    return out


CASES = cases()


def test_exact_gradient_norm_agrees_with_float64_where_float64_is_accurate():
    rng = np.random.default_rng(1)
    X, y, w = unit_rows(rng, 50, 3), np.where(rng.random(50) < 0.5, 1.0, -1.0), rng.normal(size=3)
    for loss in (get_loss("logistic"), get_loss("huber", 0.5)):
        g = 0.1 * w + (loss.derivative(y * (X @ w)) * y) @ X / 50 + np.ones(3) / 50
        assert exact_gradient_norm(X, y, w, 0.1, loss, b=np.ones(3)) == pytest.approx(np.linalg.norm(g), rel=1e-13)


def test_the_true_gradient_norm_never_exceeds_the_certified_bound():
    assert {case.path for case in CASES} == {"unperturbed", "perturbed", "folded"} and len(CASES) == 68
    for case in CASES:
        assert case.exact <= case.certified, case
    # The certificate is needed: the computed norm alone is below the true one in some cases (rounding goes either
    # way; all 68 on one side by chance would have probability about 2**-68)
    assert any(case.exact > case.computed for case in CASES)


def test_the_bound_is_small_beside_the_default_tolerance_as_the_module_docstring_says():
    for loss, limit in ((get_loss("logistic"), 1e-10), (get_loss("huber", 0.5), 3e-10)):
        n, d, lam = 40_000, 123, 1e-4
        radius = 2 * (1 + 1e-8) / lam  # stopping_tolerance's a-priori radius
        assert gradient_rounding_bound(n, d, lam, loss, radius) < limit
        assert 1e-8 - limit < stopping_tolerance(1e-8, n, d, lam, loss) < 1e-8
        # and grows as 1/lambda
        ratio = gradient_rounding_bound(n, d, lam / 10, loss, 10 * radius) / gradient_rounding_bound(n, d, lam, loss,
                                                                                                      radius)
        assert 5 < ratio <= 10


def test_a_tolerance_float64_cannot_certify_is_refused_with_the_fix():
    with pytest.raises(ValueError, match="too small for float64.*Fix: a larger tol .at least .* or a larger lam"):
        stopping_tolerance(1e-9, 1000, 50, 1e-7, get_loss("logistic"))  # the margins' rounding, ~ d u / lam
    with pytest.raises(ValueError, match="too small for float64.*Fix: a larger tol, at least .* whatever lam"):
        stopping_tolerance(1e-14, 100_000, 50, 1e-3, get_loss("logistic"))  # the sums' rounding, ~ n u
    # approximate minima perturbation's default gamma = 1/n^2 from about 160,000 records on, whatever lambda (as its
    # docstring says): the sums' rounding alone, about n u, exceeds half of it
    logistic = get_loss("logistic")
    assert stopping_tolerance(1 / 150_000 ** 2, 150_000, 10, 1.0, logistic, name="gamma") > 0
    with pytest.raises(ValueError, match="gamma = .* too small.*Fix: a larger gamma, at least .* whatever lam"):
        stopping_tolerance(1 / 170_000 ** 2, 170_000, 10, 1.0, logistic, name="gamma")
    assert certified_gradient_norm(float("nan"), np.zeros(3), 10, 1.0, get_loss("logistic")) == float("inf")
    assert certified_gradient_norm(1e-9, np.ones(3), 10, 1.0, get_loss("logistic")) > 1e-9


def _at_the_tolerance(solve, tol_of):
    """A solver whose returned points report a computed gradient norm of exactly the caller's certified tolerance."""
    def solver(*args, **kwargs):
        result = solve(*args, **kwargs)
        return dataclasses.replace(result, grad_norm=np.full_like(result.grad_norm, tol_of(kwargs)))
    return solver


@pytest.mark.parametrize("release", ["sensitivity", "gaussian_output", "amp"])
def test_a_release_whose_computed_norm_only_just_meets_tol_falls_back(monkeypatch, release):
    # A computed norm equal to tol passes "<= tol", but rounding may hide part of the true norm: the certified bound
    # is above tol, and the solver's point must not be released: the fallback's is (dplr.solver.fixed_step_descent),
    # not a refusal. The solve itself runs to stopping_tolerance, below tol.
    import dplr.release as release_path  # the one release path solves and certifies (dplr.release)

    rng = np.random.default_rng(3)
    X = unit_rows(rng, 200, 4)
    y = np.where(X[:, 0] > 0, 1.0, -1.0)
    tols = []

    def claimed(kwargs):
        tols.append(kwargs["tol"])
        return 1e-8 if release != "amp" else 1.0 / 200 ** 2

    monkeypatch.setattr(release_path, "solve_regularized_erm", _at_the_tolerance(solve_regularized_erm, claimed))
    run = {"sensitivity": lambda: sensitivity_method(X, y, 1.0, 0.01, random_state=0),
           "gaussian_output": lambda: gaussian_output_perturbation(X, y, 1.0, 1e-5, 0.01, random_state=0),
           "amp": lambda: approximate_minima_perturbation(X, y, 1.0, 1e-5, 0.01, random_state=0)}[release]
    before = release_path.fallback_count()
    fallen_back = run()
    assert release_path.fallback_count() == before + 1
    assert tols and tols[0] < (1e-8 if release != "amp" else 1.0 / 200 ** 2)
    monkeypatch.undo()
    certified = run()  # the real solver's stop passes the certificate: no fallback
    assert release_path.fallback_count() == before + 1
    # the same noise on two points within tol/lam (gamma/(lam + Delta)) of one minimiser
    assert 0 < np.linalg.norm(fallen_back - certified) <= 2 * (1e-8 if release != "amp" else 1.0 / 200 ** 2) / 0.01

"""The fallback of a release whose solve is not certified (dplr.solver.fixed_step_plan, fixed_step_descent).

The theorem says the fallback's float64 point is within tol/rho of the exact minimiser on every data set. Here the
exact minimiser is located by a reference point (the damped Newton solver's) whose true gradient norm is computed in
60-digit decimal arithmetic (dplr.analysis.rounding.exact_gradient_norm): ||w* - w_ref|| <= that norm / rho (strong
convexity), so ||w_K - w*|| <= ||w_K - w_ref|| + norm / rho is checked against the plan's distance. The problems are
chosen to be hard for it: rows on the unit sphere, all labels equal or separable, duplicated rows, large
perturbations b, the Huber loss. Deterministic (fixed seeds); the bound is a proof, so a failure means a bug, not
chance.
"""
import numpy as np
import pytest

from dplr.analysis.rounding import exact_gradient_norm
from dplr.losses import get_loss
from dplr.objective import RegularizedERM
from dplr.solver import damped_newton, fixed_step_descent, fixed_step_plan, stopping_tolerance


def _sphere(rng, n, d):
    X = rng.normal(size=(n, d))
    return X / np.linalg.norm(X, axis=1, keepdims=True) * (1 - 2 ** -50)


def _problems():
    rng = np.random.default_rng(8)
    X = _sphere(rng, 60, 3)
    yield "separable", X, np.where(X[:, 0] > 0, 1.0, -1.0), 0.05, "logistic", None
    yield "one label", X, np.ones(60), 0.02, "logistic", None
    twins = np.repeat(_sphere(rng, 5, 3), 12, axis=0)
    yield "duplicates", twins, np.where(rng.random(60) < 0.5, 1.0, -1.0), 0.05, "logistic", None
    yield "perturbed", X, np.ones(60), 0.05, "logistic", rng.normal(size=(2, 3)) * 30
    yield "huber", X, np.where(X[:, 1] > 0, 1.0, -1.0), 0.05, "huber", None


@pytest.mark.parametrize("name, X, y, rho, loss_name, b", list(_problems()), ids=[p[0] for p in _problems()])
def test_the_fallbacks_point_is_within_the_planned_distance_of_the_exact_minimiser(name, X, y, rho, loss_name, b):
    loss = get_loss(loss_name)
    n, d = X.shape
    tol = 1e-9
    b_norm = 0.0 if b is None else float(np.max(np.linalg.norm(b, axis=1)))
    plan = fixed_step_plan(tol, n, d, rho, loss, perturbation_norm=b_norm)
    W = np.reshape(fixed_step_descent(X, y, loss, plan, b=b), (-1, d))
    problem = RegularizedERM(y[:, None] * X, rho, loss, b=b)
    reference = damped_newton(problem, np.zeros((len(W), d)), tol=1e-14, max_iter=200).coef
    for j, (w, w_ref) in enumerate(zip(W, reference)):
        exact_norm = exact_gradient_norm(X, y, w_ref, rho, loss_name, b=None if b is None else b[j])
        assert np.linalg.norm(w - w_ref) + exact_norm / rho <= plan.distance
    # and the bound is not vacuous: a tenth of the steps does not get there on the hardest coordinate
    short = fixed_step_descent(X, y, loss, type(plan)(plan.steps // 10, plan.step, plan.reg, plan.distance,
                                                      plan.start_distance, plan.step_error), b=b)
    assert np.max(np.linalg.norm(np.reshape(short, (-1, d)) - reference, axis=1)) > 10 * tol / rho


def test_the_plan_refuses_a_tolerance_float64_cannot_reach_from_public_quantities_alone():
    # no data anywhere: the plan's arguments are n, d, rho, tol and the loss
    with pytest.raises(ValueError, match="depends only on public quantities, not on the data"):
        fixed_step_plan(1e-13, 40_000, 100, 1e-4, get_loss("logistic"))


def test_a_public_refusal_comes_before_the_data_are_read(monkeypatch):
    import dplr.release as release_path
    from dplr.algorithms import sensitivity_method

    def no_solve(*args, **kwargs):
        raise AssertionError("the data were read")

    monkeypatch.setattr(release_path, "solve_regularized_erm", no_solve)
    monkeypatch.setattr(release_path, "fixed_step_descent", no_solve)
    X = _sphere(np.random.default_rng(1), 50, 3)
    with pytest.raises(ValueError, match="too small for float64"):
        sensitivity_method(X, np.ones(50), 1.0, 1e-9, random_state=0)


def test_the_plan_never_refuses_where_the_certificate_accepts():
    # so that no release the fast solver certifies today is refused by the fallback's public condition
    loss = get_loss("logistic")
    for n in (100, 10_000, 1_000_000):
        for lam in 10.0 ** np.arange(-9, 1):
            for tol in (1e-12, 1e-10, 1e-8, 1e-6):
                try:
                    stopping_tolerance(tol, n, 123, lam, loss)
                except ValueError:
                    continue
                assert fixed_step_plan(tol, n, 123, lam, loss).steps >= 0


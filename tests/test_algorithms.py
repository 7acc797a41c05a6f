"""The seam (dplr.algorithms): calibrate, draw, solve -- one call, or the noise alone for batched callers."""
import numpy as np
import pytest

from dplr.algorithms import (
    calibration_used,
    approximate_minima_perturbation,
    gaussian_objective_perturbation,
    gaussian_output_perturbation,
    objective_perturbation,
    objective_perturbation_noise,
    sensitivity_method,
    sensitivity_method_noise,
    standard_erm,
)
from dplr.calibration import objective_perturbation_calibration
from dplr.datasets.simulated import make_unseparable
from dplr.solver import solve_regularized_erm
from dplr.validation import check_training_data

X, Y = make_unseparable(400, d=4, random_state=0)
LAM = 0.01


def test_objective_perturbation_is_its_noise_then_the_solver():
    b, cal = objective_perturbation_noise(400, 4, 0.1, LAM, n_draws=5, random_state=3)
    assert b.shape == (5, 4) and cal == objective_perturbation_calibration(0.1, 400, LAM)
    # the algorithm solves on the checked data (rows outside the ball by rounding projected onto it)
    X_checked, _ = check_training_data(X, Y)
    W = solve_regularized_erm(X_checked, Y, LAM, b=b, ridge=cal.ridge).coef
    # the papers' idealisation (release="exact_minimiser"): the solver's point for the drawn noise, released as it is
    np.testing.assert_array_equal(objective_perturbation(X, Y, 0.1, LAM, n_draws=5, random_state=3,
                                                         release="exact_minimiser"), W)
    # the same noise passed in: the same classifiers
    np.testing.assert_array_equal(objective_perturbation(X, Y, 0.1, LAM, noise=b, release="exact_minimiser"), W)


def test_sensitivity_method_is_the_minimiser_plus_its_noise():
    eta, cal = sensitivity_method_noise(400, 4, 0.5, LAM, n_draws=3, random_state=4, solver_tol=1e-8)
    W = sensitivity_method(X, Y, 0.5, LAM, n_draws=3, random_state=4)
    cal2 = calibration_used(sensitivity_method, X, Y, 0.5, LAM, n_draws=3)
    np.testing.assert_array_equal(W, standard_erm(X, Y, LAM) + eta)
    # the noise covers the solver's tolerance: S = 2(L + n tol)/(n lam), not the exact minimiser's 2L/(n lam)
    assert cal == cal2 and cal.sensitivity == pytest.approx(2 * (1 + 400 * 1e-8) / (400 * LAM), rel=1e-15)
    assert cal.noise_rate == pytest.approx(400 * LAM * 0.5 / 2 / (1 + 400 * 1e-8), rel=1e-15)
    # the exact minimiser's calibration is the paper's, bit for bit
    assert sensitivity_method_noise(400, 4, 0.5, LAM, solver_tol=0.0)[1].noise_rate == 400 * LAM * 0.5 / 2
    # the tolerance is required: a solver's point composed with the exact minimiser's noise is a choice written down
    with pytest.raises(ValueError, match="needs solver_tol"):
        sensitivity_method_noise(400, 4, 0.5, LAM)


def test_output_perturbation_covers_the_points_its_solver_releases():
    # neighbours in d = 1 (a reviewer's pair): the last record replaced. At tol = 0.05 the solver stops at its start
    # on D and near the minimiser on D': the released points differ by more than the exact minimisers' 2/(n lam),
    # which is why the noise is calibrated to 2(1 + n tol)/(n lam); by no more than that.
    n, lam, tol = 100, 0.01, 0.05
    signs = np.where(np.arange(n) % 2 == 0, 1.0, -1.0)

    def data(last):
        u = np.full(n, 0.1)
        u[-1] = last
        return (u * signs)[:, None]

    w, w_other = (solve_regularized_erm(data(last), signs, lam, tol=tol).coef for last in (-1.0, 1.0))
    distance = float(np.linalg.norm(w - w_other))
    _, cal = sensitivity_method_noise(n, 1, 1.0, lam, solver_tol=tol)
    assert 2 / (n * lam) < distance <= cal.sensitivity == pytest.approx(2 / (n * lam) + 2 * tol / lam)


def test_output_perturbation_releases_the_fallback_where_the_solver_stopped_above_tol():
    # a refusal would depend on the data: the point of dplr.solver.fixed_step_descent is released instead, with the
    # same noise (the same stream), and it is within tol/lam of the solver's converged point's minimiser
    from dplr.losses import get_loss
    from dplr.solver import fixed_step_descent, fixed_step_plan

    logistic = get_loss("logistic")
    fallback = fixed_step_descent(X, Y, logistic, fixed_step_plan(1e-8, len(X), 4, 0.05, logistic))
    for release in (lambda **kw: sensitivity_method(X, Y, 0.5, 0.05, random_state=3, **kw),
                    lambda **kw: gaussian_output_perturbation(X, Y, 0.5, 1e-5, 0.05, random_state=3, **kw)):
        with pytest.warns(Warning, match="did not reach"):
            forced = release(max_iter=1)
        converged = release()
        assert np.allclose(forced - converged, fallback - standard_erm(X, Y, 0.05), rtol=0, atol=1e-12)
        assert np.linalg.norm(forced - converged) <= 2e-8 / 0.05


def test_an_epsilon_array_solves_one_problem_per_value_with_its_own_calibration():
    epsilons = [0.01, 1.0, 0.05, 1.0]  # Delta > 0 for the small ones at n lam = 4
    streams = [np.random.default_rng(s) for s in range(4)]
    # an epsilon array is the idealisation's (release="exact_minimiser"); the certified default refuses it
    with pytest.raises(ValueError, match="one call per epsilon"):
        objective_perturbation(X, Y, epsilons, LAM, random_state=streams)
    W = objective_perturbation(X, Y, epsilons, LAM, random_state=streams, release="exact_minimiser")
    cals = calibration_used(objective_perturbation, X, Y, epsilons, LAM, release="exact_minimiser")
    assert W.shape == (4, 4) and [c.epsilon for c in cals] == epsilons and cals[0].ridge > 0 == cals[1].ridge
    for j, eps in enumerate(epsilons):
        single = objective_perturbation(X, Y, eps, LAM, random_state=np.random.default_rng(j), release="exact_minimiser")
        # both solve to gradient norm 1e-8 of a lam-strongly convex objective: |difference| <= 2e-8 / lam
        np.testing.assert_allclose(W[j], single, rtol=0, atol=2e-8 / LAM)
    with pytest.raises(ValueError, match="n_draws"):
        objective_perturbation(X, Y, epsilons, LAM, n_draws=2, release="exact_minimiser")
    with pytest.raises(ValueError, match="random states"):
        objective_perturbation(X, Y, epsilons, LAM, random_state=streams[:2], release="exact_minimiser")


def test_inputs_are_checked_once_at_the_boundary():
    far = X * 2.0
    for algorithm in (sensitivity_method, objective_perturbation):
        with pytest.raises(ValueError, match="Euclidean norm"):
            algorithm(far, Y, 0.1, LAM, random_state=0)
        with pytest.raises(ValueError, match="epsilon"):
            algorithm(X, Y, -0.1, LAM, random_state=0)
        with pytest.raises(ValueError, match="lam"):
            algorithm(X, Y, 0.1, 0.0, random_state=0)
    with pytest.raises(ValueError, match="-1, \\+1"):
        standard_erm(X, (Y > 0).astype(float), LAM)
    # check_input=False is for callers that checked the data themselves: nothing is checked twice
    assert objective_perturbation(far, Y, 0.1, LAM, random_state=0, check_input=False).shape == (4,)


@pytest.mark.parametrize("noise", [np.zeros(3), np.array([np.nan, 0, 0, 0]), np.zeros((2, 2, 4))])
def test_pre_drawn_noise_of_the_wrong_shape_or_not_finite_is_refused(noise):
    with pytest.raises(ValueError, match="noise must be finite, of shape"):
        objective_perturbation(X, Y, 0.1, LAM, noise=noise, release="exact_minimiser")
    with pytest.raises(ValueError, match="release='certified' \\(the default\\) takes a scalar epsilon"):
        objective_perturbation(X, Y, 0.1, LAM, noise=noise)


def _private_algorithms():
    from dplr.dpsgd import dp_sgd
    # each with arguments that run it quickly: (function, privacy target and its other positional arguments)
    return [(sensitivity_method, (0.5, LAM)), (objective_perturbation, (0.5, LAM)),
            (gaussian_output_perturbation, (0.5, 1e-5, LAM)), (gaussian_objective_perturbation, (0.5, 1e-5, LAM)),
            (approximate_minima_perturbation, (0.5, 1e-5, LAM)), (dp_sgd, (1.0, 1e-5, 0.1, 20, 1.0))]


@pytest.mark.parametrize("function, args", _private_algorithms(), ids=lambda v: getattr(v, "__name__", ""))
def test_each_algorithm_returns_its_coefficients_only_and_calibration_used_is_its_calibration(function, args,
                                                                                                monkeypatch):
    """One return type per function (issue 37): no ``return_calibration`` flag, never a tuple; the calibration
    :func:`calibration_used` gives is the very record the release was calibrated with."""
    import inspect

    import dplr.algorithms
    import dplr.dpsgd

    if function.__name__ == "dp_sgd":
        pytest.importorskip("dp_accounting")  # the optional extra dplr[accounting]
    parameters = inspect.signature(function).parameters
    assert "return_calibration" not in parameters
    assert not any(p.kind is inspect.Parameter.VAR_KEYWORD for p in parameters.values())
    with pytest.raises(TypeError):
        function(X, Y, *args, return_calibration=True)
    # the calibration the release uses, caught where it is handed on
    used = []
    if function.__name__ == "dp_sgd":
        calibrate = dplr.dpsgd.dpsgd_calibration
        monkeypatch.setattr(dplr.dpsgd, "dpsgd_calibration", lambda *a, **k: used.append(calibrate(*a, **k)) or used[-1])
    else:
        release = dplr.algorithms.private_release
        monkeypatch.setattr(dplr.algorithms, "private_release",
                            lambda X, y, lam, loss, calibration, *a, **k: used.append(calibration) or
                            release(X, y, lam, loss, calibration, *a, **k))
    for n_draws, shape in ((None, (4,)), (3, (3, 4))):
        coef = function(X, Y, *args, n_draws=n_draws, random_state=1)
        assert type(coef) is np.ndarray and coef.shape == shape
        assert used[-1] == calibration_used(function, X, Y, *args, n_draws=n_draws, random_state=1)
    assert len(used) == 2


def test_calibration_used_refuses_what_is_not_a_private_algorithm():
    with pytest.raises(ValueError, match="one of the private algorithms"):
        calibration_used(standard_erm, X, Y, LAM)

"""The (ε, δ) algorithms of dplr.algorithms: Gaussian output and objective perturbation, approximate minima perturbation."""
import numpy as np
import pytest
from sklearn.exceptions import ConvergenceWarning

from dplr.algorithms import (
    calibration_used,
    approximate_minima_perturbation,
    gaussian_objective_perturbation,
    gaussian_output_perturbation,
    standard_erm,
)
from dplr.datasets.simulated import make_unseparable
from dplr.gaussian import (
    approximate_minima_perturbation_calibration,
    gaussian_objective_perturbation_calibration,
    gaussian_output_perturbation_calibration,
)
from dplr.losses import get_loss
from dplr.objective import RegularizedERM
from dplr.solver import damped_newton
from dplr.validation import check_training_data

X, Y = check_training_data(*make_unseparable(400, d=4, random_state=0))
LAM = 0.01


def _gradient(W, b, ridge, loss="logistic"):
    problem = RegularizedERM(X * Y[:, None], LAM, get_loss(loss), np.atleast_2d(b), ridge)
    return problem.gradient(np.atleast_2d(W))


def test_gaussian_output_perturbation_is_the_minimiser_plus_analytic_gaussian_noise():
    W = gaussian_output_perturbation(X, Y, 0.5, 1e-5, LAM, n_draws=3, random_state=4)
    cal = calibration_used(gaussian_output_perturbation, X, Y, 0.5, 1e-5, LAM)
    # calibrated to the points the solver releases: within tol/lam of the minimiser (tol = 1e-8, the default)
    assert cal == gaussian_output_perturbation_calibration(400, LAM, 0.5, 1e-5, solver_tol=1e-8)
    assert cal.sensitivity == pytest.approx(2 * (1 + 400 * 1e-8) / (400 * LAM), rel=1e-15)
    eta = cal.mechanism(4).sample(3, np.random.default_rng(4))
    np.testing.assert_allclose(W, standard_erm(X, Y, LAM) + eta, rtol=0, atol=1e-14)
    np.testing.assert_array_equal(W, gaussian_output_perturbation(X, Y, 0.5, 1e-5, LAM, n_draws=3, random_state=4))
    assert gaussian_output_perturbation(X, Y, 0.5, 1e-5, LAM, random_state=4).shape == (4,)


@pytest.mark.parametrize("loss, epsilon", [("logistic", 0.1), ("logistic", 2.0), ("huber", 0.5)])
def test_gaussian_objective_perturbation_solves_its_perturbed_objective(loss, epsilon):
    W = gaussian_objective_perturbation(X, Y, epsilon, 1e-6, LAM, loss=loss, n_draws=6, random_state=7,
                                        release="exact_minimiser")
    cal = calibration_used(gaussian_objective_perturbation, X, Y, epsilon, 1e-6, LAM, loss=loss,
                           release="exact_minimiser")
    assert cal == gaussian_objective_perturbation_calibration(epsilon, 1e-6, 400, LAM, get_loss(loss).curvature)
    assert (cal.ridge > 0) == (2 * get_loss(loss).curvature / (400 * epsilon) > LAM)
    b = cal.mechanism(4).sample(6, np.random.default_rng(7))
    # optimality: the gradient of (lam + Delta)/2 |w|^2 + b.w/n + mean loss vanishes at every released w
    assert np.max(np.linalg.norm(_gradient(W, b, cal.ridge, loss), axis=1)) <= 1e-8
    # and the reference solver finds the same minimisers
    reference = damped_newton(RegularizedERM(X * Y[:, None], LAM, get_loss(loss), b, cal.ridge), np.zeros((6, 4)))
    np.testing.assert_allclose(W, reference.coef, atol=1e-7)
    np.testing.assert_array_equal(W, gaussian_objective_perturbation(X, Y, epsilon, 1e-6, LAM, loss=loss, n_draws=6,
                                                                     random_state=7, release="exact_minimiser"))


def test_gaussian_objective_perturbation_does_not_depend_on_the_solvers_chunking():
    kwargs = dict(n_draws=20, random_state=2)
    one = gaussian_objective_perturbation(X, Y, 0.3, 1e-5, LAM, solver_options={"chunk_size": 20}, **kwargs)
    many = gaussian_objective_perturbation(X, Y, 0.3, 1e-5, LAM, solver_options={"chunk_size": 3, "n_threads": 2},
                                           **kwargs)
    np.testing.assert_allclose(one, many, atol=1e-9)


def test_approximate_minima_perturbation_releases_a_gamma_approximate_minimiser_plus_output_noise():
    gamma = 1e-4
    W = approximate_minima_perturbation(X, Y, 1.0, 1e-5, LAM, gamma=gamma, n_draws=5, random_state=11)
    cal = calibration_used(approximate_minima_perturbation, X, Y, 1.0, 1e-5, LAM, gamma=gamma)
    assert cal == approximate_minima_perturbation_calibration(1.0, 1e-5, 400, LAM, gamma)
    rng = np.random.default_rng(11)
    b = cal.mechanism(4).sample(5, rng)              # the stream: objective noise first,
    out = cal.output_mechanism(4).sample(5, rng)     # then the output noise
    assert np.max(np.linalg.norm(_gradient(W - out, b, cal.ridge), axis=1)) <= gamma
    # the default gamma is the authors' 1/n^2
    assert calibration_used(approximate_minima_perturbation, X, Y, 1.0, 1e-5, LAM).gamma == 1 / 400**2


def test_approximate_minima_perturbation_falls_back_where_the_solver_stops_above_gamma():
    # the solver's warning is left as it is (no warning filter changed: AMP runs in worker threads); its point is not
    # released, nor is the release refused (a refusal would depend on the data): the fallback's point is, within
    # gamma/(lam + Delta) of the minimiser, with the same output noise
    import dplr.release as release_path

    before = release_path.fallback_count()
    with pytest.warns(ConvergenceWarning, match="did not reach"):
        forced = approximate_minima_perturbation(X, Y, 1.0, 1e-5, LAM, gamma=1e-10, random_state=0,
                                                 solver_options={"max_iter": 1, "warm_start": False})
    cal = calibration_used(approximate_minima_perturbation, X, Y, 1.0, 1e-5, LAM, gamma=1e-10)
    assert release_path.fallback_count() == before + 1
    converged = approximate_minima_perturbation(X, Y, 1.0, 1e-5, LAM, gamma=1e-10, random_state=0)
    assert release_path.fallback_count() == before + 1
    assert np.linalg.norm(forced - converged) <= 2 * 1e-10 / (LAM + cal.ridge)


@pytest.mark.parametrize("call, message", [
    (lambda: gaussian_output_perturbation(X, Y, 1.0, 0.0, LAM), "0 < delta < 1"),
    (lambda: gaussian_objective_perturbation(X, Y, 1.0, 1e-5, 0.0), "lam"),
    (lambda: gaussian_objective_perturbation(X * 2, Y, 1.0, 1e-5, LAM), "Euclidean norm"),
    (lambda: approximate_minima_perturbation(X, Y, -1.0, 1e-5, LAM), "epsilon"),
])
def test_bad_inputs_are_refused_at_the_boundary(call, message):
    with pytest.raises(ValueError, match=message):
        call()

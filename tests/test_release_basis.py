"""A calibration record carries what it was computed for (n, λ, the loss's constants, the solver tolerance it covers),
and dplr.release.private_release refuses a release on anything else: a calibration made for one (n, λ, tol) must
not noise a release of another (issue 38; the security review's finding A)."""
import numpy as np
import pytest

from dplr.calibration import (certified_objective_perturbation_calibration, objective_perturbation_calibration,
                              sensitivity_method_calibration, sensitivity_method_grid_calibration)
from dplr.datasets.simulated import make_unseparable
from dplr.gaussian import (approximate_minima_perturbation_calibration,
                           certified_gaussian_objective_perturbation_calibration,
                           gaussian_objective_perturbation_calibration, gaussian_output_perturbation_calibration)
from dplr.losses import get_loss
from dplr.release import private_release
from dplr.validation import check_training_data

X, Y = check_training_data(*make_unseparable(200, d=3, random_state=0))
N = X.shape[0]
LAM = 0.05
LOGISTIC, HUBER = get_loss("logistic"), get_loss("huber", 0.1)  # Huber: curvature 5, not the logistic 1/4


def _release(calibration, **kwargs):
    return private_release(X, Y, LAM, LOGISTIC, calibration, random_state=0, **kwargs)


def test_output_perturbation_refuses_a_tolerance_other_than_the_calibrations():
    # noise for a point certified at 1e-10, released at a point certified only at 1e-6: too little noise
    calibration = sensitivity_method_calibration(N, LAM, 1.0, solver_tol=1e-10)
    with pytest.raises(ValueError, match=r"solver_tol = 1e-10.*Fix"):
        _release(calibration, tol=1e-6)
    # the record's own tolerance when none is given, and the same tolerance given agrees with it
    np.testing.assert_array_equal(_release(calibration), _release(calibration, tol=1e-10))


@pytest.mark.parametrize("calibrate", [
    lambda n, lam, L: sensitivity_method_calibration(n, lam, 1.0, L, solver_tol=1e-8),
    lambda n, lam, L: sensitivity_method_grid_calibration(n, lam, 1.0, L, solver_tol=1e-8),
    lambda n, lam, L: gaussian_output_perturbation_calibration(n, lam, 1.0, 1e-5, L, solver_tol=1e-8),
])
def test_output_perturbation_refuses_another_n_or_lam(calibrate):
    _release(calibrate(N, LAM, 1.0))  # the calibration's own (n, lam) passes
    with pytest.raises(ValueError, match=r"n = 400.*Fix"):
        _release(calibrate(2 * N, LAM, 1.0))  # noise for twice the records: half the noise needed
    with pytest.raises(ValueError, match=r"lam = 0\.1.*Fix"):
        _release(calibrate(N, 2 * LAM, 1.0))


def test_output_perturbation_refuses_the_exact_minimisers_calibration_for_a_solvers_point():
    calibration = sensitivity_method_calibration(N, LAM, 1.0, solver_tol=0.0)  # the papers' idealisation
    with pytest.raises(ValueError, match=r"exact_minimiser=True.*Fix"):
        _release(calibration)
    _release(calibration, exact_minimiser=True)  # stated as the idealisation: allowed
    with pytest.raises(ValueError, match=r"exact_minimiser=True.*Fix"):  # and only a calibration at solver_tol=0
        _release(sensitivity_method_calibration(N, LAM, 1.0, solver_tol=1e-8), exact_minimiser=True)


@pytest.mark.parametrize("calibrate", [
    lambda n, lam, loss: objective_perturbation_calibration(1.0, n, lam, loss.curvature, loss.lipschitz),
    lambda n, lam, loss: gaussian_objective_perturbation_calibration(1.0, 1e-5, n, lam, loss.curvature,
                                                                     loss.lipschitz),
    lambda n, lam, loss: certified_objective_perturbation_calibration(1.0, n, lam, 1e-6, loss.curvature,
                                                                      loss.lipschitz),
    lambda n, lam, loss: certified_gaussian_objective_perturbation_calibration(1.0, 1e-5, n, lam, 1e-6,
                                                                               loss.curvature, loss.lipschitz),
    lambda n, lam, loss: approximate_minima_perturbation_calibration(1.0, 1e-5, n, lam, 1e-6, loss.curvature,
                                                                     loss.lipschitz),
])
def test_objective_perturbation_refuses_another_n_lam_or_loss(calibrate):
    _release(calibrate(N, LAM, LOGISTIC))
    with pytest.raises(ValueError, match=r"n = 400.*Fix"):
        _release(calibrate(2 * N, LAM, LOGISTIC))
    with pytest.raises(ValueError, match=r"lam = 0\.1.*Fix"):
        _release(calibrate(N, 2 * LAM, LOGISTIC))
    with pytest.raises(ValueError, match=r"curvature = 5\.0.*Fix"):  # Delta for the Huber loss, the logistic solved
        _release(calibrate(N, LAM, HUBER))


def test_replicas_count_the_records_the_calibration_was_made_for():
    calibration = objective_perturbation_calibration(1.0, 3 * N, LAM, LOGISTIC.curvature, LOGISTIC.lipschitz)
    _release(calibration, replicas=3)
    with pytest.raises(ValueError, match=r"n = 600.*Fix"):
        _release(calibration)
    exact = sensitivity_method_calibration(3 * N, LAM, 1.0, solver_tol=0.0)
    _release(exact, exact_minimiser=True, replicas=3)
    with pytest.raises(ValueError, match=r"n = 600.*Fix"):
        _release(exact, exact_minimiser=True)
    with pytest.raises(ValueError, match=r"replicas.*Fix"):  # the certified path solves the records as given
        _release(certified_objective_perturbation_calibration(1.0, 3 * N, LAM, 1e-6), replicas=3)


def test_each_problem_of_a_tuple_is_checked():
    good = objective_perturbation_calibration(1.0, N, LAM)
    bad = objective_perturbation_calibration(2.0, N, 2 * LAM)
    with pytest.raises(ValueError, match=r"lam = 0\.1.*Fix"):
        private_release(X, Y, LAM, LOGISTIC, (good, bad), random_state=[0, 1])

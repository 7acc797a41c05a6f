"""The privacy maps (dplr.calibration): Corollary 2's bound, Algorithm 1's rate, Algorithm 2's two forms."""
import numpy as np
import pytest

from dplr.calibration import (
    objective_perturbation_calibration,
    sensitivity_bound,
    sensitivity_method_calibration,
    sensitivity_method_noise_rate,
)


def test_sensitivity_method_calibration_is_the_papers():
    n, lam, eps = 1000, 0.01, 0.1
    cal = sensitivity_method_calibration(n, lam, eps)
    assert cal.sensitivity == sensitivity_bound(n, lam) == pytest.approx(2 / (n * lam))
    assert cal.noise_rate == sensitivity_method_noise_rate(n, lam, eps) == pytest.approx(n * lam * eps / 2)
    assert cal.noise_scale == pytest.approx(1 / cal.noise_rate, rel=1e-15)  # NIPS 2008: Gamma(d, 2/(n lam eps))
    assert cal.mechanism(5).rate == cal.noise_rate and cal.mechanism(5).dim == 5
    # a loss with |l'| <= L: sensitivity 2L/(n lam), rate divided by L
    assert sensitivity_method_calibration(n, lam, eps, lipschitz=2.0).noise_rate == pytest.approx(cal.noise_rate / 2)


def test_objective_perturbation_forms():
    nips = objective_perturbation_calibration(0.1, 100, 0.01, form="nips2008")
    assert (nips.epsilon_prime, nips.ridge, nips.noise_rate) == (0.1, 0.0, 0.05)
    # corrected, large n lam: eps' = eps - log(1 + 2c/(n lam) + c^2/(n lam)^2) > 0 and Delta = 0
    big = objective_perturbation_calibration(1.0, 10_000, 0.01)
    ratio = 0.25 / 100
    assert big.epsilon_prime == pytest.approx(1.0 - np.log1p(2 * ratio + ratio**2)) and big.ridge == 0.0
    assert big.noise_rate == pytest.approx(big.epsilon_prime / 2)
    # corrected, small n lam: eps' = eps / 2 and Delta = c/(n (e^{eps/4} - 1)) - lam > 0
    small = objective_perturbation_calibration(0.1, 100, 0.01)
    assert small.epsilon_prime == 0.05 and small.ridge == pytest.approx(0.25 / (100 * np.expm1(0.025)) - 0.01)
    assert small.mechanism(3).rate == small.noise_rate


@pytest.mark.parametrize("kwargs, message", [
    (dict(epsilon=0.0, n=10, lam=0.1), "epsilon"), (dict(epsilon=0.1, n=0, lam=0.1), "n \\(the number"),
    (dict(epsilon=0.1, n=10, lam=-1.0), "lam"), (dict(epsilon=0.1, n=10, lam=0.1, form="2011"), "form must be one of"),
])
def test_calibrations_check_their_inputs(kwargs, message):
    with pytest.raises(ValueError, match=message):
        objective_perturbation_calibration(**kwargs)


def test_check_input_false_skips_the_checks_and_nothing_else():
    checked = objective_perturbation_calibration(0.3, 50, 0.02)
    assert objective_perturbation_calibration(0.3, 50, 0.02, check_input=False) == checked
    assert sensitivity_method_calibration(50, 0.02, 0.3, check_input=False) == sensitivity_method_calibration(50, 0.02, 0.3)


@pytest.mark.parametrize("kwargs, message", [
    (dict(curvature=-0.01), "curvature .* must be a finite number >= 0"),  # used to give epsilon' > epsilon
    (dict(curvature=float("nan")), "curvature .* must be a finite number >= 0"),
    (dict(lipschitz=-1.0), "lipschitz .* must be a finite number > 0"),
    (dict(lipschitz=0.0), "lipschitz .* must be a finite number > 0"),
])
def test_a_calibration_refuses_wrong_loss_constants(kwargs, message):
    with pytest.raises(ValueError, match=message):
        objective_perturbation_calibration(0.1, 1000, 0.01, **kwargs)


@pytest.mark.parametrize("call", [
    lambda: sensitivity_method_calibration(100, 0.01, 0.1, lipschitz=0),
    lambda: sensitivity_method_calibration(100, 0.01, 0.1, solver_tol=-1e-8),
    lambda: sensitivity_bound(100, 0.1, -1),
    lambda: sensitivity_bound(-5, 0.1),
])
def test_the_sensitivity_refuses_wrong_constants(call):
    with pytest.raises(ValueError, match="must be a (finite number|positive integer)"):
        call()


def test_the_sensitivity_covers_the_solvers_tolerance():
    assert sensitivity_bound(100, 0.01) == 2.0  # the exact minimiser: 2L/(n lam)
    assert sensitivity_bound(100, 0.01, solver_tol=1e-3) == pytest.approx(2.0 + 2 * 1e-3 / 0.01, rel=1e-15)
    cal = sensitivity_method_calibration(100, 0.01, 0.5, solver_tol=1e-3)
    assert cal.sensitivity == sensitivity_bound(100, 0.01, solver_tol=1e-3) and cal.noise_rate == 0.5 / cal.sensitivity

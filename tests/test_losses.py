"""Losses: derivatives, the constants the proofs use, and numerical stability."""
import warnings

import numpy as np
import pytest

from dplr.losses import HuberLoss, LogisticLoss, get_loss

LOSSES = [LogisticLoss(), HuberLoss(0.5), HuberLoss(0.1)]
GRID = np.concatenate([np.linspace(-20, 20, 4001), [-1e300, -1e6, -745.0, 745.0, 1e6, 1e300]])


@pytest.mark.parametrize("loss", LOSSES, ids=repr)
def test_derivatives_match_finite_differences(loss):
    z = np.linspace(-6, 6, 1201) + 0.000123  # avoid the Huber joints exactly
    step = 1e-6
    np.testing.assert_allclose(loss.derivative(z), (loss.value(z + step) - loss.value(z - step)) / (2 * step),
                               atol=1e-6)
    fd2 = (loss.derivative(z + step) - loss.derivative(z - step)) / (2 * step)
    near_joint = isinstance(loss, HuberLoss) & (np.abs(np.abs(1 - z) - getattr(loss, "h", 0)) < 2 * step)
    np.testing.assert_allclose(loss.second_derivative(z)[~near_joint], fd2[~near_joint], atol=1e-5)


@pytest.mark.parametrize("loss", LOSSES, ids=repr)
def test_constants_of_the_proofs_hold_everywhere_without_overflow(loss):
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        value, d1, d2 = loss.value(GRID), loss.derivative(GRID), loss.second_derivative(GRID)
    assert np.all(np.isfinite(value)) and np.all(value >= 0)
    assert np.all(np.abs(d1) <= loss.lipschitz)
    assert np.all((d2 >= 0) & (d2 <= loss.curvature + 1e-15))
    assert np.max(d2) == pytest.approx(loss.curvature)  # the bound c is tight


def test_logistic_values_at_large_margins():
    loss = LogisticLoss()
    assert loss.value(1000.0) == pytest.approx(np.exp(-1000.0), abs=1e-300)
    assert loss.value(-1000.0) == pytest.approx(1000.0)
    assert loss.derivative(-1000.0) == -1.0 and loss.derivative(1000.0) == pytest.approx(0.0, abs=1e-300)
    assert loss.curvature == 0.25 and loss.lipschitz == 1.0


def test_huber_is_continuous_and_tends_to_hinge():
    loss = HuberLoss(0.5)
    for joint in (0.5, 1.5):
        assert loss.value(joint - 1e-12) == pytest.approx(loss.value(joint + 1e-12), abs=1e-9)
        assert loss.derivative(joint - 1e-12) == pytest.approx(loss.derivative(joint + 1e-12), abs=1e-9)
    z = np.linspace(-3, 3, 601)
    np.testing.assert_allclose(HuberLoss(1e-6).value(z), np.maximum(0, 1 - z), atol=1e-6)
    assert HuberLoss(0.25).curvature == 2.0


def test_get_loss():
    assert isinstance(get_loss("logistic"), LogisticLoss)
    assert get_loss("huber", 0.2).h == 0.2
    with pytest.raises(ValueError, match="logistic"):
        get_loss("hinge")
    with pytest.raises(ValueError, match="huber_h"):
        HuberLoss(0.0)


@pytest.mark.parametrize("loss", LOSSES, ids=repr)
def test_derivatives_at_once_equal_the_separate_ones(loss):
    z = np.concatenate([np.linspace(-40, 40, 801), [-1e6, -745.0, 745.0, 1e6]])
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        first, second = loss.derivatives(z)
    np.testing.assert_allclose(first, loss.derivative(z), rtol=1e-14, atol=1e-300)
    np.testing.assert_allclose(second, loss.second_derivative(z), rtol=1e-12, atol=2e-16)
    assert loss.derivatives(z, second=False)[1] is None


@pytest.mark.parametrize("loss", LOSSES, ids=repr)
def test_value_and_derivative_at_once_equal_the_separate_ones(loss):
    # the logistic loss: the same numbers; the Huber loss: within rounding, and exact on its flat and linear pieces
    z = np.concatenate([GRID, [1.0 - loss.curvature, 0.5, 1.5, 1.0]])
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        value, first = loss.value_and_derivative(z)
    if isinstance(loss, LogisticLoss):
        np.testing.assert_array_equal(value, loss.value(z))
        np.testing.assert_array_equal(first, loss.derivatives(z, second=False)[0])
    else:
        np.testing.assert_allclose(value, loss.value(z), rtol=1e-15, atol=1e-15)
        np.testing.assert_allclose(first, loss.derivative(z), rtol=0, atol=1e-15)
        outside = np.abs(1.0 - z) > loss.h * (1 + 1e-12)
        np.testing.assert_array_equal(first[outside], loss.derivative(z[outside]))
        np.testing.assert_array_equal(value[z > 1.0 + loss.h], 0.0)


def test_logistic_derivatives_keep_float32_and_write_into_out():
    z = np.linspace(-5, 5, 11)
    first32, second32 = LogisticLoss.derivatives(z.astype(np.float32))
    assert first32.dtype == np.float32 and second32.dtype == np.float32
    np.testing.assert_allclose(first32, LogisticLoss.derivative(z), rtol=1e-6)
    buffer = z.copy()
    first, _ = LogisticLoss.derivatives(buffer, second=False, out=buffer)
    assert first is buffer
    np.testing.assert_allclose(buffer, LogisticLoss.derivative(z), rtol=1e-14)


def test_logistic_third_and_fourth_derivatives_match_finite_differences():
    z = np.linspace(-8, 8, 1601)
    step = 1e-5
    loss = LogisticLoss()
    fd3 = (loss.second_derivative(z + step) - loss.second_derivative(z - step)) / (2 * step)
    fd4 = (loss.third_derivative(z + step) - loss.third_derivative(z - step)) / (2 * step)
    np.testing.assert_allclose(loss.third_derivative(z), fd3, atol=1e-9)
    np.testing.assert_allclose(loss.fourth_derivative(z), fd4, atol=1e-9)
    assert np.max(np.abs(loss.third_derivative(z))) == pytest.approx(1 / (6 * np.sqrt(3)), rel=1e-4)


def test_huber_curvature_is_rounded_up():
    from fractions import Fraction

    from dplr.losses import HuberLoss

    for h in (0.7, 1 / 3, 0.1, 0.5, 0.3, 2.0):
        loss = HuberLoss(h)
        assert Fraction(loss.curvature) >= 1 / (2 * Fraction(h))  # 0.7 and 1/3 fail with round-to-nearest

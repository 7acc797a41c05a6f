"""Bad input: one test per case, each error naming the problem and the fix; nothing altered silently."""
import numpy as np
import pytest

from dplr import ObjectivePerturbation, PrivacyLeakWarning, SensitivityMethod, StandardLR
from dplr.preprocessing import clip_to_unit_ball, scale_by_max_norm, scale_by_public_bounds

ESTIMATORS = [StandardLR, SensitivityMethod, ObjectivePerturbation]


@pytest.fixture
def xy():
    rng = np.random.default_rng(0)
    X = rng.uniform(-0.5, 0.5, size=(40, 3))
    y = np.where(X[:, 0] > 0, 1, -1)
    return X, y


@pytest.mark.parametrize("cls", ESTIMATORS)
def test_rows_outside_the_unit_ball_are_rejected_with_the_fix(cls, xy):
    X, y = xy
    X = X.copy()
    X[7] = [1.0, 1.0, 0.0]
    with pytest.raises(ValueError, match=r"1 of 40 rows have Euclidean norm > 1.*clip_to_unit_ball"):
        cls().fit(X, y)


@pytest.mark.parametrize("cls", ESTIMATORS)
@pytest.mark.parametrize("bad", [np.nan, np.inf, -np.inf])
def test_nan_and_infinite_values_are_rejected(cls, bad, xy):
    X, y = xy
    X = X.copy()
    X[3, 1] = bad
    with pytest.raises(ValueError, match="NaN or infinite.*remove those rows"):
        cls().fit(X, y)


@pytest.mark.parametrize("cls", ESTIMATORS)
def test_a_single_class_is_rejected(cls, xy):
    X, _ = xy
    with pytest.raises(ValueError, match="Only one class.*include examples of both labels"):
        cls().fit(X, np.ones(len(X)))


@pytest.mark.parametrize("cls", ESTIMATORS)
def test_more_than_two_classes_are_rejected(cls, xy):
    X, _ = xy
    with pytest.raises(ValueError, match="Only binary classification is supported.*one-vs-rest"):
        cls().fit(X, np.arange(len(X)) % 3)


@pytest.mark.parametrize("cls", [SensitivityMethod, ObjectivePerturbation])
@pytest.mark.parametrize("epsilon", [0, -0.1, np.inf, np.nan])
def test_epsilon_must_be_positive_and_finite(cls, epsilon, xy):
    with pytest.raises(ValueError, match="epsilon must be a finite number > 0.*StandardLR"):
        cls(epsilon=epsilon).fit(*xy)


@pytest.mark.parametrize("cls", ESTIMATORS)
@pytest.mark.parametrize("lam", [0, -0.01, np.inf])
def test_lambda_must_be_positive(cls, lam, xy):
    with pytest.raises(ValueError, match="lam .* must be a finite number > 0.*lam=0.01"):
        cls(lam=lam).fit(*xy)


@pytest.mark.parametrize("cls", ESTIMATORS)
def test_mismatched_lengths_are_rejected(cls, xy):
    X, y = xy
    with pytest.raises(ValueError, match="inconsistent numbers of samples.*one label per row"):
        cls().fit(X, y[:-1])


@pytest.mark.parametrize("cls", ESTIMATORS)
def test_empty_input_is_rejected(cls):
    with pytest.raises(ValueError, match="0 sample.*non-empty"):
        cls().fit(np.empty((0, 3)), np.empty(0))


def test_unknown_form_is_rejected(xy):
    with pytest.raises(ValueError, match="form must be one of"):
        ObjectivePerturbation(form="nips").fit(*xy)


def test_fit_does_not_alter_the_input(xy):
    X, y = xy
    X_before, y_before = X.copy(), y.copy()
    ObjectivePerturbation(random_state=0).fit(X, y)
    np.testing.assert_array_equal(X, X_before)
    np.testing.assert_array_equal(y, y_before)


def test_clip_to_unit_ball_projects_only_rows_outside():
    X = np.array([[3.0, 4.0], [0.3, 0.4], [0.0, 0.0]])
    clipped = clip_to_unit_ball(X)
    np.testing.assert_allclose(clipped, [[0.6, 0.8], [0.3, 0.4], [0.0, 0.0]])
    assert X[0, 0] == 3.0  # a new array
    np.testing.assert_allclose(np.linalg.norm(clip_to_unit_ball(X, radius=0.25), axis=1), [0.25, 0.25, 0.0])


def test_scale_by_max_norm_warns_about_the_leak():
    with pytest.warns(PrivacyLeakWarning, match="not ε-DP"):
        scaled = scale_by_max_norm(np.array([[3.0, 4.0], [0.3, 0.4]]))
    assert np.linalg.norm(scaled, axis=1).max() == pytest.approx(1.0)


def test_scale_by_public_bounds_refuses_values_beyond_the_bound():
    X = np.array([[10.0, 1.0], [-20.0, 0.5]])
    np.testing.assert_allclose(scale_by_public_bounds(X, [40.0, 2.0]), [[0.25, 0.5], [-0.5, 0.25]])
    with pytest.raises(ValueError, match="exceed their public bound"):
        scale_by_public_bounds(X, [15.0, 2.0])

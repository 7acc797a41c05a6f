"""Bad input: one test per case, each error naming the problem and the fix; nothing altered silently."""
import inspect

import numpy as np
import pytest

from dplr import ObjectivePerturbation, PrivacyLeakWarning, SensitivityMethod, StandardLR
from dplr.algorithms import standard_erm
from dplr.preprocessing import clip_to_unit_ball, scale_by_max_norm, scale_by_public_bounds
from dplr.ball import check_rows_in_ball, project_onto_ball, rows_outside_ball

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


# failures a user can act on (issue 19, item 4)

def _rows_normalised_by_their_own_norm(dtype, n=2000, d=7):
    X = np.random.default_rng(1).normal(size=(n, d)).astype(dtype)
    return X / np.linalg.norm(X, axis=1, keepdims=True)


@pytest.mark.parametrize("cls", ESTIMATORS)
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_rows_outside_only_by_rounding_are_accepted_and_projected(cls, dtype):
    from sklearn.preprocessing import Normalizer

    X = Normalizer().fit_transform(_rows_normalised_by_their_own_norm(dtype))
    assert np.linalg.norm(X.astype(np.float64), axis=1).max() > 1  # the case in question: rounding above 1
    y = np.where(X[:, 0] > 0, 1, -1)
    assert cls().fit(X, y).coef_.shape == (7,)
    projected = check_rows_in_ball(X, dtype=X.dtype)
    assert np.linalg.norm(projected, axis=1).max() <= 1.0
    # moved by the rounding of the input and the radial step's shrink by k = 1.5 d + 5 units of roundoff (dplr.ball)
    np.testing.assert_allclose(projected, X, rtol=4 * np.finfo(dtype).eps + (1.5 * 7 + 9) * 2.0 ** -53, atol=0)


def test_rows_beyond_rounding_are_refused_with_the_digits_that_show_why():
    X = _rows_normalised_by_their_own_norm(np.float64, n=10)
    X[3] *= 1 + 1e-9  # a thousand float32 ulps below float32's rounding, but far beyond float64's
    with pytest.raises(ValueError, match=r"largest 1\.000000001.*up to 1\.0000000000000009"):
        check_rows_in_ball(X)
    check_rows_in_ball(X.astype(np.float32), dtype=np.float32)  # within float32's rounding: accepted


def test_the_norm_error_advises_centring_and_public_bounds_not_just_norm_bound(xy):
    X, y = xy
    with pytest.raises(ValueError, match=r"scale_by_public_bounds\(X, bounds, centre=.*norm_bound=R.*only rescales"):
        StandardLR().fit(X + 5.0, y)


def test_clip_to_unit_ball_guarantees_the_bound_in_floating_point_and_refuses_sparse_input():
    from scipy import sparse

    X = np.random.default_rng(2).normal(scale=50.0, size=(5000, 9))
    for radius in (1.0, 0.3, 7.0):
        assert np.linalg.norm(clip_to_unit_ball(X, radius), axis=1).max() <= radius
    with pytest.raises(TypeError, match=r"sparse.*X\.toarray\(\)"):
        clip_to_unit_ball(sparse.csr_matrix(X))


def test_scale_by_public_bounds_centres_with_public_midpoints():
    X = np.array([[10.0, 1.0], [30.0, 0.5]])  # public ranges [0, 40] and [0, 2]
    np.testing.assert_allclose(scale_by_public_bounds(X, [20.0, 1.0], centre=[20.0, 1.0]),
                               [[-0.5, 0.0], [0.5, -0.5]])


@pytest.mark.parametrize("cls", [SensitivityMethod, ObjectivePerturbation])
@pytest.mark.parametrize("epsilon", [1e-300, 1e-310])
def test_an_epsilon_too_small_to_calibrate_is_refused(cls, epsilon, xy):
    with pytest.raises(ValueError, match=r"too small to calibrate in float64.*Fix: a larger epsilon"):
        cls(epsilon=epsilon).fit(*xy)


@pytest.mark.parametrize("cls", ESTIMATORS)
@pytest.mark.parametrize("tol", [-1.0, 0.0, np.nan, np.inf, "1e-8"])
def test_tol_must_be_positive_and_finite(cls, tol, xy):
    with pytest.raises(ValueError, match=r"tol \(the solver's tolerance on the gradient norm\) must be a finite"):
        cls(tol=tol).fit(*xy)


def test_the_convergence_warning_names_parameters_that_exist(xy):
    from sklearn.exceptions import ConvergenceWarning

    X, y = xy
    with pytest.warns(ConvergenceWarning, match=r"raise max_iter \(of dplr.algorithms.standard_erm") as record:
        standard_erm(X, y, 0.01, tol=1e-30, max_iter=1)
    # it no longer advises loosening tol: for a private release tol is part of the guarantee
    assert "loosen" not in str(record[0].message) and "part of the guarantee" in str(record[0].message)
    assert "tol" in StandardLR().get_params() and "max_iter" in inspect.signature(standard_erm).parameters


def _outside_exactly(X, radius=1.0):
    """The reference: each row's squared norm in exact rational arithmetic, against radius**2."""
    from fractions import Fraction

    return np.array([sum(Fraction(float(v)) ** 2 for v in row) > Fraction(float(radius)) ** 2 for row in X])


def _rows_on_the_sphere(n, d, seed):
    """Rows divided by their computed norm, some nudged by an ulp or three either way: about half of them lie outside
    the unit ball exactly though numpy computes norm <= 1 for most."""
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d))
    X /= np.linalg.norm(X, axis=1, keepdims=True)
    X[::5] *= 1.0 + 2.0 ** -53 * rng.integers(-3, 4, size=(len(X[::5]), 1))
    return X


@pytest.mark.parametrize("d", [2, 3, 12, 105])
def test_rows_outside_ball_is_exact(d):
    X = _rows_on_the_sphere(1500, d, seed=d)
    X[0] = 0.0
    X[1] = 0.0
    X[1, -1] = 1.0
    reference = _outside_exactly(X)
    assert reference.sum() > 300  # the case in question is common, not contrived
    assert (np.linalg.norm(X[reference], axis=1) <= 1.0).sum() > 100  # and numpy's norm does not see it
    np.testing.assert_array_equal(rows_outside_ball(X), reference)
    for radius in (0.3, 7.0, 2.0 ** -450, 2.0 ** 450):  # the fast path, and fractions beyond its range
        np.testing.assert_array_equal(rows_outside_ball(X * radius, radius), _outside_exactly(X * radius, radius))


def test_rows_outside_ball_at_subnormal_radii():
    # Below 2**-1022 a radius keeps few bits, and r / sqrt(d) can round up by half a subnormal step: a screen on it once
    # accepted this row, of true norm 2 sqrt(3) s > 3 s.
    s = 2.0 ** -1074
    assert list(rows_outside_ball(np.full((1, 3), 2 * s), 3 * s)) == [True]
    with pytest.raises(ValueError):
        check_rows_in_ball(np.full((1, 3), 2 * s), 3 * s)
    rng = np.random.default_rng(11)
    for exponent in (-1074, -1070, -1050, -1022, -700, -401):
        radius = float(np.ldexp(rng.uniform(0.5, 1.0), exponent + 1)) if exponent > -1074 else 5 * s
        X = _rows_on_the_sphere(200, 3, seed=-exponent) * radius * rng.choice([1.0, 0.5, 1.0 + 1e-15], size=(200, 1))
        X[:5] = rng.integers(0, 4, size=(5, 3)) * s  # a few rows of whole subnormal steps
        np.testing.assert_array_equal(rows_outside_ball(X, radius), _outside_exactly(X, radius))


def test_rows_outside_ball_with_entries_whose_squares_underflow_or_whose_split_overflows():
    X = np.array([[1.0, 2.0 ** -600], [0.6, 0.8], [1e-300, 0.0], [0.6, 0.8000000000000002], [2.0 ** 500, 0.0],
                  [1.0, 0.0], [np.nextafter(1.0, 2.0), 0.0]])
    np.testing.assert_array_equal(rows_outside_ball(X), _outside_exactly(X))
    assert list(rows_outside_ball(X)) == [True, True, False, True, True, False, True]


@pytest.mark.parametrize("radius", [1.0, 0.3, 7.0, 2.0 ** -390, 2.0 ** 390])
def test_projection_puts_every_row_inside_the_ball_exactly(radius):
    X = _rows_on_the_sphere(600, 9, seed=4) * radius * np.r_[np.full(300, 1.5), np.full(300, 1.0)][:, None]
    projected = project_onto_ball(X, radius)
    assert not _outside_exactly(projected, radius).any()
    # rows are moved by rounding only beyond the radial step: within a few units of roundoff of x r/||x||
    np.testing.assert_allclose(projected, X * np.minimum(1.0, radius / np.linalg.norm(X, axis=1))[:, None],
                               rtol=1e-14, atol=0)


def test_check_rows_in_ball_projects_rows_whose_computed_norm_hides_a_norm_above_one():
    # numpy computes norm 1 for this row, but 0.6**2 + 0.8**2 > 1 for the float64 numbers 0.6 and 0.8: before the
    # exact test it passed unchanged, and the proofs' ||x|| <= 1 failed for it by a few units of roundoff
    X = np.array([[0.6, 0.8], [0.3, 0.4]])
    assert np.linalg.norm(X[0]) <= 1.0 and _outside_exactly(X)[0]
    checked = check_rows_in_ball(X)
    assert not _outside_exactly(checked).any()
    assert checked[1].tolist() == [0.3, 0.4] and X[0].tolist() == [0.6, 0.8]  # others untouched, input not altered
    np.testing.assert_allclose(checked[0], X[0], rtol=1e-15, atol=0)


def test_projection_keeps_numpys_norm_within_the_radius_whatever_the_input_layout():
    # a DataFrame's .values is column-major; numpy's row norms are summed in another order there (a review found
    # rows of computed norm 1.0000000000000009 when the result kept the input's layout)
    X = np.asfortranarray(np.random.default_rng(5).normal(size=(2000, 400)))
    projected = project_onto_ball(X)
    assert projected.flags.c_contiguous and (np.linalg.norm(projected, axis=1) <= 1.0).all()
    assert not rows_outside_ball(projected).any()


def test_projection_of_rows_whose_squares_overflow_or_underflow():
    # the radial step takes each norm of the row scaled by a power of two: no overflow to inf (which zeroed the row)
    np.testing.assert_allclose(project_onto_ball(np.array([[1e200, 1e200]])), [[2 ** -0.5, 2 ** -0.5]], rtol=1e-15)
    tiny = np.array([[3e-101, 4e-101]])
    np.testing.assert_allclose(project_onto_ball(tiny, 1e-101), [[0.6e-101, 0.8e-101]], rtol=1e-15)
    assert not _outside_exactly(project_onto_ball(tiny, 1e-101), 1e-101).any()


@pytest.mark.parametrize("radius", [1e-200, 1e200])
def test_the_ball_helpers_refuse_a_radius_float64_cannot_serve(radius):
    # below 2**-400 the squares underflow and the projection could not finish (a review found it raising "a bug")
    on_the_sphere = np.array([[radius * 0.6, radius * 0.8]])  # outside exactly (0.6**2 + 0.8**2 > 1 in float64)
    for helper in (project_onto_ball, check_rows_in_ball):
        with pytest.raises(ValueError, match=r"outside \[2\*\*-400, 2\*\*400\].*rescale the data by a public constant"):
            helper(on_the_sphere, radius)
    assert check_rows_in_ball(on_the_sphere * 0.5, radius) is not None  # nothing to project: accepted
    assert not rows_outside_ball(on_the_sphere * 0.5, radius).any() and rows_outside_ball(on_the_sphere * 2, radius).all()


def test_rows_exactly_on_the_sphere_are_inside():
    one_hot = np.eye(105)[np.random.default_rng(6).integers(0, 105, size=500)]
    halves = np.zeros((500, 105))
    halves[:, :4] = 0.5
    for X in (one_hot, halves, -halves):
        assert not rows_outside_ball(X).any() and not _outside_exactly(X).any()
        # inside exactly, but a computed sum of squares cannot tell a row on the sphere from one just outside: the
        # check shrinks them by 1.5 d + 5 units of roundoff (dplr.ball), and the result passes unchanged
        checked = check_rows_in_ball(X)
        np.testing.assert_allclose(checked, X, rtol=(1.5 * 105 + 6) * 2.0 ** -53, atol=0)
        assert check_rows_in_ball(checked) is checked
    inside = one_hot * 0.999
    assert check_rows_in_ball(inside) is inside  # rows inside by more than the sum's error bound: nothing moves


def test_a_row_is_refused_only_when_it_is_outside_exactly():
    # the refusal rests on the true norm, not the computed one: a row at most r (1 + 4 eps) exactly is never refused
    # (the bound of dplr.ball proves it for any summation order), while a row outside by more than rounding is
    inside = project_onto_ball(np.array([[0.6, 0.8]]))  # exactly inside, on the sphere to a few ulps
    X = np.vstack([inside, [[0.6, 0.9]]])
    with pytest.raises(ValueError, match=r"1 of 2 rows have Euclidean norm > 1\.0 \(largest 1\.08"):
        check_rows_in_ball(X)
    checked = check_rows_in_ball(X[:1])
    assert not _outside_exactly(checked).any()
    np.testing.assert_allclose(checked, X[:1], rtol=1e-13, atol=0)


@pytest.mark.parametrize("radius", [-1.0, 0.0, float("nan"), float("inf")])
def test_the_ball_helpers_refuse_a_radius_that_is_not_positive_and_finite(radius):
    X = np.array([[3.0, 4.0]])
    for helper in (project_onto_ball, check_rows_in_ball):  # -1 used to loop forever, NaN to pass a row of norm 5
        with pytest.raises(ValueError, match="radius must be a positive finite number"):
            helper(X, radius)


@pytest.mark.parametrize("bad", [float("nan"), float("inf")])
def test_the_ball_helpers_refuse_rows_that_are_not_finite(bad):
    X = np.array([[0.1, 0.2], [bad, 0.0]])
    with pytest.raises(ValueError, match="NaN or infinite"):
        check_rows_in_ball(X)  # NaN > radius is False: without this check the row passed
    with pytest.raises(ValueError, match="NaN or infinite"):
        project_onto_ball(X)
    with pytest.raises(ValueError, match="NaN or infinite"):
        rows_outside_ball(X)


def test_public_bounds_accept_values_on_the_documented_bound():
    from dplr.preprocessing import scale_by_public_bounds

    # the recipe centre = (a + b)/2, bound = (b - a)/2 maps a and b onto -1 and 1, whatever the rounding
    rng = np.random.default_rng(3)
    for a, b in rng.uniform(-10, 10, size=(500, 2)):
        a, b = min(a, b), max(a, b) + 1e-3
        scaled = scale_by_public_bounds(np.array([[a], [b]]), [(b - a) / 2], centre=[(a + b) / 2])
        assert np.all(np.abs(scaled) <= 1.0) and scaled[0, 0] == pytest.approx(-1) and scaled[1, 0] == pytest.approx(1)
    with pytest.raises(ValueError, match="exceed their public bound"):
        scale_by_public_bounds(np.array([[1.001]]), [1.0])

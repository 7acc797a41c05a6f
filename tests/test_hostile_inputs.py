"""Hostile inputs, for every estimator and both losses: a clear error that names the fix, or a correct result.

Nothing beyond rounding is rescaled or clipped silently (rows outside the ball by rounding: test_validation.py).
Each refusal is asserted on its message; each acceptance on what the model must then be.
"""
import numpy as np
import pytest
from scipy import sparse

from dplr import ObjectivePerturbation, SensitivityMethod, StandardLR

ESTIMATORS = [StandardLR, SensitivityMethod, ObjectivePerturbation]
PRIVATE = [SensitivityMethod, ObjectivePerturbation]
LOSSES = ["logistic", "huber"]

RNG = np.random.default_rng(0)
X = RNG.uniform(-0.5, 0.5, size=(60, 3))
Y = np.where(X[:, 0] > 0, 1, -1)  # separable through the origin


def model(cls, loss, **params):
    if cls is not StandardLR:
        params.setdefault("random_state", 0)
    return cls(loss=loss, **params)


def _with(X_, row, value):
    X_ = X_.copy()
    X_[row] = value
    return X_


BAD_DATA = {
    "NaN": (lambda: (_with(X, 3, [np.nan, 0, 0]), Y), ValueError, r"NaN or infinite values.*remove those rows, or impute"),
    "inf": (lambda: (_with(X, 3, [np.inf, 0, 0]), Y), ValueError, r"NaN or infinite values.*remove those rows, or impute"),
    "norm > bound": (lambda: (_with(X, 3, [1.0, 1.0, 0.0]), Y), ValueError,
                     r"1 of 60 rows have Euclidean norm > 1\.0 \(largest 1\.414.*Fix: bring the features into the ball"),
    "empty": (lambda: (np.zeros((0, 3)), np.zeros(0)), ValueError, r"0 sample\(s\).*need a non-empty"),
    "zero features": (lambda: (np.zeros((60, 0)), Y), ValueError, r"0 feature\(s\).*need a non-empty"),
    "one row": (lambda: (X[:1], Y[:1]), ValueError, r"Only one class.*Fix: include examples of both labels"),
    "one class": (lambda: (X, np.ones(60)), ValueError, r"Only one class.*Fix: include examples of both labels"),
    "three classes": (lambda: (X, np.arange(60) % 3), ValueError,
                      r"Only binary classification.*3 classes.*Fix: reduce the task to two classes"),
    "continuous labels": (lambda: (X, X[:, 0]), ValueError, r"Unknown label type: continuous.*classifier"),
    "NaN label": (lambda: (X, np.where(Y > 0, np.nan, 0.0)), ValueError, r"y contains NaN.*one label per row"),
    "length mismatch": (lambda: (X, Y[:10]), ValueError, r"inconsistent numbers of samples.*one label per row"),
    "1-D X": (lambda: (X[:, 0], Y), ValueError, r"(?s)Expected 2D array.*Reshape your data"),
    "non-numeric X": (lambda: (np.array([["a", 0.1, 0.2]] * 60, dtype=object), Y), ValueError,
                      r"could not convert string to float.*numeric X"),
    "sparse X": (lambda: (sparse.csr_matrix(X), Y), TypeError, r"Sparse data.*dense data is required.*toarray"),
}


@pytest.mark.parametrize("case", list(BAD_DATA))
@pytest.mark.parametrize("loss", LOSSES)
@pytest.mark.parametrize("cls", ESTIMATORS)
def test_bad_data_is_refused_with_the_fix(cls, loss, case):
    make_data, error, message = BAD_DATA[case]
    with pytest.raises(error, match=message):
        model(cls, loss).fit(*make_data())


LABELS = {
    "bool": Y > 0,
    "str": np.where(Y > 0, "yes", "no"),
    "int 0/1": (Y > 0).astype(int),
    "float 0/1": (Y > 0).astype(float),
    "-1/+1": Y,
}


@pytest.mark.parametrize("labels", list(LABELS))
@pytest.mark.parametrize("loss", LOSSES)
@pytest.mark.parametrize("cls", ESTIMATORS)
def test_any_two_labels_give_the_model_of_the_signed_labels(cls, loss, labels):
    y = LABELS[labels]
    fitted = model(cls, loss).fit(X, y)
    np.testing.assert_array_equal(fitted.classes_, np.unique(y))
    np.testing.assert_array_equal(fitted.coef_, model(cls, loss).fit(X, Y).coef_)
    assert set(fitted.predict(X)) <= set(np.unique(y))


INPUTS = {
    "float32": (lambda: X.astype(np.float32), 1e-6),
    "list": (lambda: X.tolist(), 0.0),
    "int": (lambda: np.eye(3, dtype=int)[np.arange(60) % 3] * np.where(np.arange(60) % 2, 1, -1)[:, None], 0.0),
}


@pytest.mark.parametrize("kind", list(INPUTS))
@pytest.mark.parametrize("loss", LOSSES)
@pytest.mark.parametrize("cls", ESTIMATORS)
def test_other_numeric_inputs_give_the_model_of_their_float64_values(cls, loss, kind):
    make_X, rtol = INPUTS[kind]
    X_in = make_X()
    X64 = np.asarray(X_in, dtype=np.float64)
    y = Y if kind != "int" else np.where(X64.sum(axis=1) > 0, 1, -1)
    np.testing.assert_allclose(model(cls, loss).fit(X_in, y).coef_, model(cls, loss).fit(X64, y).coef_,
                               rtol=rtol, atol=rtol)


POSITIVE = r"must be a (positive )?finite number"
BAD_PARAMETERS = [
    *[("epsilon", v, rf"epsilon {POSITIVE}.*(StandardLR|> 0)") for v in (0, -1.0, np.inf, np.nan)],
    ("epsilon", "0.1", rf"epsilon {POSITIVE}"),
    ("epsilon", 1e-300, r"too small to calibrate in float64.*Fix: a larger epsilon"),
    *[("lam", v, rf"lam \(the regularisation parameter λ\) {POSITIVE}.*try lam=0\.01") for v in (0, -1.0, np.inf, np.nan)],
    ("lam", "0.01", rf"lam {POSITIVE}"),
    *[("huber_h", v, rf"huber_h {POSITIVE}") for v in (0, -1.0, np.inf, np.nan, "0.5")],
    ("huber_h", 1e-300, r"huber_h must be at least 1e-08.*Fix: huber_h=0\.5"),
    *[("norm_bound", v, rf"norm_bound {POSITIVE}") for v in (0, -1.0, np.inf, np.nan, "1")],
    ("norm_bound", 1e-300, r"60 of 60 rows have Euclidean norm > 1e-300.*Fix"),
    ("tol", -1.0, r"tol \(the solver's tolerance on the gradient norm\) must be a finite number > 0"),
    ("loss", "squared", r"loss must be 'logistic' or 'huber'"),
    ("random_state", -1, r"random_state must be a non-negative integer"),
    ("random_state", "0", r"random_state must be None, a non-negative int.*default_rng"),
    ("random_state", np.random.RandomState(0), r"RandomState objects are not accepted: pass np.random.default_rng"),
    ("form", "jmlr", r"form must be one of \('corrected', 'nips2008'\)"),
]


BAD_PARAMETER_CASES = [(cls, *case) for cls in ESTIMATORS for case in BAD_PARAMETERS if case[0] in cls().get_params()]


@pytest.mark.parametrize("cls, name, value, message", BAD_PARAMETER_CASES,
                         ids=[f"{cls.__name__}-{name}={value!r}"[:50] for cls, name, value, _ in BAD_PARAMETER_CASES])
@pytest.mark.parametrize("loss", LOSSES)
def test_bad_parameters_are_refused_with_the_fix(cls, loss, name, value, message):
    params = {"loss": value} if name == "loss" else {name: value}
    estimator = cls(**params) if name == "loss" else model(cls, loss, **params)
    with pytest.raises((ValueError, TypeError), match=message):
        estimator.fit(X, Y)


@pytest.mark.parametrize("loss", LOSSES)
@pytest.mark.parametrize("cls", PRIVATE)
def test_a_huge_epsilon_gives_the_non_private_model(cls, loss):
    certified = {"gamma": 1e-10} if "gamma" in cls().get_params() else {}  # certified: within gamma/lam
    np.testing.assert_allclose(model(cls, loss, epsilon=1e300, **certified).fit(X, Y).coef_,
                               StandardLR(loss=loss).fit(X, Y).coef_, atol=1e-7)


@pytest.mark.parametrize("loss", LOSSES)
@pytest.mark.parametrize("cls", ESTIMATORS)
def test_a_huge_lambda_gives_the_zero_classifier(cls, loss):
    coef = model(cls, loss, lam=1e300).fit(X, Y).coef_
    assert np.all(np.abs(coef) < 1e-250)


@pytest.mark.parametrize("loss", LOSSES)
def test_a_tiny_lambda_is_handled_by_each_algorithm_as_its_proof_says(loss):
    # standard ERM: a separating classifier; Algorithm 2 (corrected): Delta takes over the regularisation;
    # Algorithm 1: its noise scale 2/(n lam eps) overflows, refused
    assert StandardLR(loss=loss, lam=1e-300).fit(X, Y).score(X, Y) == 1.0
    fitted = ObjectivePerturbation(loss=loss, lam=1e-300, random_state=0).fit(X, Y)
    assert np.all(np.isfinite(fitted.coef_)) and fitted.calibration_.ridge > 0.1
    with pytest.raises(ValueError, match=r"too small to calibrate in float64.*lam=1e-300.*or a larger lam"):
        SensitivityMethod(loss=loss, lam=1e-300).fit(X, Y)


@pytest.mark.parametrize("cls", ESTIMATORS)
def test_a_huge_huber_width_and_a_huge_public_bound_give_finite_models(cls):
    assert np.all(np.isfinite(model(cls, "huber", huber_h=1e300).fit(X, Y).coef_))
    # a public bound far above the data is legitimate: the model is fit to x / R, near 0
    assert np.all(np.isfinite(model(cls, "logistic", norm_bound=1e300).fit(X, Y).coef_))

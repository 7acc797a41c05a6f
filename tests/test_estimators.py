"""scikit-learn compatibility and the statistical behaviour of the three estimators."""
import warnings

import numpy as np
import pytest
from scipy import stats
from sklearn.linear_model import LogisticRegression
from sklearn.utils.estimator_checks import parametrize_with_checks

from dplr import ObjectivePerturbation, SensitivityMethod, StandardLR
from dplr.algorithms import calibration_used, objective_perturbation, sensitivity_method, standard_erm
from dplr.calibration import (certified_objective_perturbation_calibration, objective_perturbation_calibration,
                              sensitivity_method_noise_rate)
from dplr.datasets.simulated import make_separable


# scikit-learn's common checks feed data with row norms far above 1 (blobs, 3*uniform, ...), which
# our estimators reject by design (the privacy proofs need ||x|| <= norm_bound). The checks test the
# API, not privacy, so they run with a public bound norm_bound=1e3 that covers their data, and with
# epsilon=1e4 where a check asserts training accuracy (a private model at epsilon=0.1 on 30 points is
# near chance, as it should be). No check is marked as expected to fail; scikit-learn itself skips
# check_array_api_input (it needs SCIPY_ARRAY_API=1, and our estimators are NumPy-only).
# Private estimators are deterministic given an integer random_state, so they are not tagged
# non_deterministic and run every check.
@parametrize_with_checks([
    StandardLR(norm_bound=1e3),
    StandardLR(loss="huber", norm_bound=1e3),
    SensitivityMethod(epsilon=1e4, norm_bound=1e3),
    SensitivityMethod(epsilon=1e4, loss="huber", norm_bound=1e3),
    SensitivityMethod(epsilon=1e4, norm_bound=1e3, release="grid"),
    ObjectivePerturbation(epsilon=1e4, norm_bound=1e3),
    ObjectivePerturbation(epsilon=1e4, form="nips2008", norm_bound=1e3),
    ObjectivePerturbation(epsilon=1e4, loss="huber", norm_bound=1e3),
])
def test_sklearn_estimator_checks(estimator, check):
    check(estimator)


@pytest.fixture(scope="module")
def data():
    return make_separable(800, d=5, margin=0.03, random_state=0)


PRIVATE = [SensitivityMethod, ObjectivePerturbation]


@pytest.mark.parametrize("cls", PRIVATE)
def test_same_seed_same_model_different_seed_different_model(cls, data):
    X, y = data
    a = cls(random_state=1).fit(X, y).coef_
    b = cls(random_state=1).fit(X, y).coef_
    c = cls(random_state=2).fit(X, y).coef_
    np.testing.assert_array_equal(a, b)
    assert not np.allclose(a, c)
    rng = np.random.default_rng(3)
    assert not np.allclose(cls(random_state=rng).fit(X, y).coef_, cls(random_state=rng).fit(X, y).coef_)


@pytest.mark.parametrize("cls", PRIVATE)
@pytest.mark.parametrize("loss", ["logistic", "huber"])
def test_huge_epsilon_recovers_the_non_private_model(cls, loss, data):
    X, y = data
    # a certified release (the objective perturbations' default) is within gamma/lam of the minimiser: gamma 1e-10
    certified = {"gamma": 1e-10} if "gamma" in cls().get_params() else {}
    private = cls(epsilon=1e12, loss=loss, random_state=0, **certified).fit(X, y).coef_
    np.testing.assert_allclose(private, StandardLR(loss=loss).fit(X, y).coef_, atol=1e-7)


def test_algorithm_1_noise_norm_has_the_gamma_law(data):
    # ||w_priv - w*|| ~ Gamma(d, 2(1 + n tol)/(n lam eps)), tol = 1e-8 the solver's (the noise covers its distance
    # from the exact minimiser). KS at level 0.001 on fixed seeds (false-failure rate 0.001 per call); once through
    # the batched function and once through 300 estimator fits.
    X, y = data
    n, d = X.shape
    lam, eps = 0.01, 0.1
    law = stats.gamma(a=d, scale=2 * (1 + n * 1e-8) / (n * lam * eps))
    w_star = standard_erm(X, y, lam)
    draws = sensitivity_method(X, y, eps, lam, n_draws=5000, random_state=42)
    assert stats.kstest(np.linalg.norm(draws - w_star, axis=1), law.cdf).pvalue > 1e-3
    fits = [SensitivityMethod(epsilon=eps, lam=lam, random_state=s).fit(X, y).coef_ for s in range(300)]
    assert stats.kstest(np.linalg.norm(np.array(fits) - w_star, axis=1), law.cdf).pvalue > 1e-3
    assert SensitivityMethod(epsilon=eps, lam=lam).fit(X, y).noise_rate_ == pytest.approx(
        n * lam * eps / (2 * (1 + n * 1e-8)), rel=1e-14)


def test_sensitivity_method_exposes_its_calibration_like_the_other_estimators(data):
    X, y = data
    model = SensitivityMethod(epsilon=0.1, lam=0.01, random_state=0).fit(X, y)
    assert model.calibration_ == calibration_used(sensitivity_method, X, y, 0.1, 0.01)
    assert model.noise_rate_ == model.calibration_.noise_rate  # the alias the chapters read
    assert not hasattr(SensitivityMethod(), "calibration_") and not hasattr(SensitivityMethod(), "noise_rate_")


def test_standard_lr_equals_sklearn(data):
    X, y = data
    lam = 0.01
    ours = StandardLR(lam=lam).fit(X, y)
    theirs = LogisticRegression(C=1 / (len(y) * lam), fit_intercept=False, tol=1e-12, max_iter=10_000).fit(X, y)
    np.testing.assert_allclose(ours.coef_, theirs.coef_[0], atol=1e-7)
    np.testing.assert_array_equal(ours.predict(X), theirs.predict(X))


@pytest.mark.parametrize("labels", [(-1, 1), (0, 1), ("benign", "malignant"), (3, 7)])
def test_any_two_labels_map_sorted_to_minus_and_plus_one(labels, data):
    X, y = data
    y_custom = np.where(y > 0, labels[1], labels[0])
    model = StandardLR().fit(X, y_custom)
    np.testing.assert_array_equal(model.classes_, np.array(sorted(labels)))
    reference = StandardLR().fit(X, y)
    np.testing.assert_allclose(model.coef_, reference.coef_)
    np.testing.assert_array_equal(model.predict(X), np.where(reference.decision_function(X) > 0, labels[1], labels[0]))


def test_norm_bound_is_a_fixed_public_rescaling(data):
    X, y = data
    scaled = StandardLR(norm_bound=5.0).fit(5.0 * X, y)
    unit = StandardLR().fit(X, y)
    np.testing.assert_allclose(scaled.coef_ * 5.0, unit.coef_, atol=1e-12)
    np.testing.assert_array_equal(scaled.predict(5.0 * X), unit.predict(X))


def test_corrected_calibration_spends_at_most_epsilon():
    # JMLR 2011: the Jacobian costs log((1 + c/(n(lam + Delta)))^2); noise costs eps'. Total <= eps.
    for n_lam in np.logspace(-2, 3, 26):
        for eps in (0.05, 0.1, 1.0, 5.0):
            for c in (0.25, 1.0):
                cal = objective_perturbation_calibration(eps, 100, n_lam / 100, curvature=c)
                jacobian = 2 * np.log1p(c / (100 * (n_lam / 100 + cal.ridge)))
                assert cal.epsilon_prime > 0 and cal.ridge >= 0
                assert cal.epsilon_prime + jacobian <= eps * (1 + 1e-12)
                assert cal.noise_rate == pytest.approx(cal.epsilon_prime / 2)
    large = objective_perturbation_calibration(0.1, 17_500, 0.01)
    assert large.ridge == 0 and 0.09 < large.epsilon_prime < 0.1
    small = objective_perturbation_calibration(0.1, 100, 0.001)
    assert small.ridge > 0 and small.epsilon_prime == pytest.approx(0.05)
    nips = objective_perturbation_calibration(0.1, 100, 0.001, form="nips2008")
    assert (nips.epsilon_prime, nips.ridge, nips.noise_rate) == (0.1, 0.0, 0.05)


def test_objective_perturbation_estimator_reports_its_calibration(data):
    X, y = data
    model = ObjectivePerturbation(epsilon=0.1, lam=0.001, random_state=0).fit(X, y)  # certified: the default
    assert model.calibration_ == certified_objective_perturbation_calibration(0.1, len(y), 0.001, 1.0 / len(y) ** 2)
    assert model.calibration_.objective == objective_perturbation_calibration(0.099, len(y), 0.001)
    idealised = ObjectivePerturbation(epsilon=0.1, lam=0.001, random_state=0, release="exact_minimiser").fit(X, y)
    assert idealised.calibration_ == objective_perturbation_calibration(0.1, len(y), 0.001)
    batched = objective_perturbation(X, y, 0.1, 0.001, n_draws=3, random_state=0)
    assert batched.shape == (3, X.shape[1])


def test_sensitivity_method_noise_rate_matches_paper():
    assert sensitivity_method_noise_rate(17_500, 0.01, 0.1) == pytest.approx(17_500 * 0.01 * 0.1 / 2)


# scikit-learn conventions (issue 19, item 2)

@pytest.mark.parametrize("model", [StandardLR(), SensitivityMethod(epsilon=1.0, random_state=0),
                                   ObjectivePerturbation(epsilon=1.0, random_state=0)])
def test_logistic_probabilities_are_the_sigmoid_of_the_released_score(model, data):
    X, y = data
    model.fit(X, y)
    scores = model.decision_function(X)
    proba = model.predict_proba(X)
    np.testing.assert_allclose(proba[:, 1], 1 / (1 + np.exp(-scores)), rtol=1e-12)
    np.testing.assert_allclose(proba.sum(axis=1), 1.0)
    np.testing.assert_allclose(model.predict_log_proba(X), np.log(proba), rtol=1e-10)
    decided = scores != 0
    np.testing.assert_array_equal(model.classes_[proba.argmax(axis=1)][decided], model.predict(X)[decided])
    assert model.intercept_ == 0.0


@pytest.mark.parametrize("cls", [StandardLR, SensitivityMethod, ObjectivePerturbation])
def test_huber_models_have_no_probabilities(cls, data):
    X, y = data
    model = cls(loss="huber").fit(X, y)
    assert not hasattr(model, "predict_proba") and not hasattr(model, "predict_log_proba")
    with pytest.raises(AttributeError, match="has no attribute 'predict_proba'") as raised:
        model.predict_proba(X)
    assert "Huber SVM score is not a probability" in str(raised.value.__cause__)


def test_common_scikit_learn_tools_work(data):
    import pickle

    from sklearn.base import clone
    from sklearn.inspection import permutation_importance
    from sklearn.model_selection import GridSearchCV
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import FunctionTransformer

    X, y = data
    model = ObjectivePerturbation(epsilon=1.0, random_state=0)
    search = GridSearchCV(make_pipeline(FunctionTransformer(), model),
                          {"objectiveperturbation__lam": [0.01, 0.1]}, cv=3).fit(X, y)
    assert search.best_params_["objectiveperturbation__lam"] in (0.01, 0.1)
    fitted = clone(model).fit(X, y)
    np.testing.assert_array_equal(pickle.loads(pickle.dumps(fitted)).coef_, fitted.coef_)
    importance = permutation_importance(fitted, X, y, n_repeats=2, random_state=0)
    assert importance.importances_mean.shape == (X.shape[1],)


@pytest.mark.parametrize("cls", [StandardLR, SensitivityMethod, ObjectivePerturbation])
def test_sample_weight_is_refused_naming_the_estimator(cls, data):
    X, y = data
    with pytest.raises(TypeError, match=rf"{cls.__name__} does not support sample_weight.*weight 1/n"):
        cls().fit(X, y, sample_weight=np.ones(len(y)))


def test_privacy_leak_warning_is_importable_from_the_top_level():
    from dplr import PrivacyLeakWarning
    from dplr.preprocessing import scale_by_max_norm

    with pytest.warns(PrivacyLeakWarning):
        scale_by_max_norm(np.ones((3, 2)))


@pytest.mark.parametrize("cls", PRIVATE)
def test_legacy_random_state_is_refused_with_the_fix(cls, data):
    X, y = data
    with pytest.raises(TypeError, match=r"RandomState objects are not accepted: pass np.random.default_rng"):
        cls(random_state=np.random.RandomState(0)).fit(X, y)


def test_the_nips2008_form_warns_where_it_is_not_proven_private(data):
    from dplr.validation import PrivacyLeakWarning

    X, y = data
    n = len(y)
    with pytest.warns(PrivacyLeakWarning, match="Fix: form='corrected'"):
        ObjectivePerturbation(epsilon=0.1, lam=1e-5, form="nips2008", loss="huber", random_state=0).fit(X, y)
    with pytest.warns(PrivacyLeakWarning, match="n\\*lam"):  # logistic below n lam = 2/epsilon
        ObjectivePerturbation(epsilon=0.1, lam=1.0 / n, form="nips2008", random_state=0).fit(X, y)
    with warnings.catch_warnings():
        warnings.simplefilter("error", PrivacyLeakWarning)  # proven: logistic, n lam >= 2/epsilon
        ObjectivePerturbation(epsilon=0.1, lam=25.0 / n, form="nips2008", random_state=0).fit(X, y)
        ObjectivePerturbation(epsilon=0.1, lam=1e-5, form="corrected", random_state=0).fit(X, y)

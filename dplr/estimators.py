r"""scikit-learn estimators: standard (non-private) ERM, Algorithm 1 and Algorithm 2.

All three are linear classifiers through the origin, as in the paper (NIPS 2008, Section 2:
prediction :math:`\operatorname{sgn}(w^\top x)`), trained on

.. math::

    \frac{\lambda}{2}\lVert w\rVert^2 + \frac1n \sum_{i=1}^n \ell(y_i\, w^\top x_i),

with the logistic loss (``loss="logistic"``, logistic regression) or the Huber hinge loss
(``loss="huber"``, the private SVM of the talk and of JMLR 2011).

Labels
    Any two classes. ``classes_ = numpy.unique(y)`` (sorted); ``classes_[0]`` is coded
    :math:`-1` and ``classes_[1]`` is coded :math:`+1`. ``predict`` returns ``classes_[1]`` where
    :math:`w^\top x > 0` and ``classes_[0]`` otherwise (ties go to ``classes_[0]``).

Feature scale
    The privacy proofs need :math:`\lVert x_i\rVert \le 1`. ``norm_bound=R`` declares a *public*
    bound :math:`\lVert x_i\rVert \le R`; the estimator trains on :math:`x_i/R` (a fixed,
    data-independent scale) and reports ``coef_`` for the original features. A row beyond the
    bound raises ``ValueError``: nothing is clipped silently (see
    :func:`dplr.preprocessing.clip_to_unit_ball`).
"""
from __future__ import annotations

import numpy as np
from sklearn.base import BaseEstimator, ClassifierMixin
from sklearn.utils.multiclass import check_classification_targets
from sklearn.utils.validation import check_is_fitted, validate_data

from dplr.algorithms import objective_perturbation, sensitivity_method, standard_erm
from dplr.losses import get_loss
from dplr.validation import check_positive_finite, check_rows_in_ball, encode_binary_labels

__all__ = ["StandardLR", "SensitivityMethod", "ObjectivePerturbation"]

_INPUT_HINT = "dplr estimators need a non-empty 2-D numeric X (n_samples, n_features) and one label per row of X."


class _LinearClassifierThroughOrigin(ClassifierMixin, BaseEstimator):
    """Shared validation, label coding and prediction; subclasses implement ``_fit_coef``.

    ``fit`` checks the data once (shape, finiteness, two classes, rows within ``norm_bound``) and hands
    clean arrays to :mod:`dplr.algorithms` with ``check_input=False``; the algorithms check the privacy
    parameters (ε, λ, form) once.
    """

    def _validate_training_data(self, X, y):
        try:
            X, y = validate_data(self, X, y, dtype=np.float64, ensure_all_finite=False)
        except ValueError as err:
            raise ValueError(f"{err} {_INPUT_HINT}") from err
        if not np.all(np.isfinite(X)):
            raise ValueError(
                "Input X contains NaN or infinite values. The estimators do not impute: remove those rows, "
                "or impute with a rule that does not depend on the private data, before fitting."
            )
        check_classification_targets(y)
        y_signed, classes = encode_binary_labels(y)
        norm_bound = check_positive_finite(self.norm_bound, "norm_bound")
        check_rows_in_ball(X, norm_bound)
        return X / norm_bound, y_signed, classes, norm_bound

    def fit(self, X, y):
        """Fit on ``X`` (n, d) and labels ``y`` (two classes). Returns ``self``."""
        X_unit, y_signed, classes, norm_bound = self._validate_training_data(X, y)
        loss = get_loss(self.loss, self.huber_h)
        coef = self._fit_coef(X_unit, y_signed, loss)
        self.classes_ = classes
        self.coef_ = coef / norm_bound
        return self

    def decision_function(self, X):
        r"""Scores :math:`w^\top x`; positive means ``classes_[1]``."""
        check_is_fitted(self)
        X = validate_data(self, X, dtype=np.float64, reset=False)
        return X @ self.coef_

    def predict(self, X):
        """``classes_[1]`` where the score is positive, else ``classes_[0]``."""
        scores = self.decision_function(X)
        return self.classes_[(scores > 0).astype(int)]

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.classifier_tags.multi_class = False
        return tags


class StandardLR(_LinearClassifierThroughOrigin):
    r"""Non-private regularised ERM ("Standard LR" of NIPS 2008, Figure 1).

    :math:`w^* = \arg\min_w \frac\lambda2\lVert w\rVert^2 + \frac1n\sum_i \ell(y_i w^\top x_i)`.
    It equals ``sklearn.linear_model.LogisticRegression(C=1/(n*lam), fit_intercept=False)``.

    Parameters
    ----------
    lam : float, default 0.01
        Regularisation :math:`\lambda > 0` (the paper's tuned value is 0.01).
    loss : {"logistic", "huber"}, default "logistic"
    huber_h : float, default 0.5
        Width :math:`h` of the Huber hinge's quadratic zone (used when ``loss="huber"``).
    norm_bound : float, default 1.0
        Public bound :math:`R` on :math:`\lVert x_i\rVert`; the model is fit to :math:`x/R`.
    tol : float, default 1e-8
        Solver tolerance on the gradient norm.

    Attributes
    ----------
    coef_ : ndarray (n_features,)
    classes_ : ndarray (2,)
    n_features_in_ : int
    """

    def __init__(self, lam=0.01, loss="logistic", huber_h=0.5, norm_bound=1.0, tol=1e-8):
        self.lam = lam
        self.loss = loss
        self.huber_h = huber_h
        self.norm_bound = norm_bound
        self.tol = tol

    def _fit_coef(self, X, y, loss):
        return standard_erm(X, y, self.lam, loss, tol=self.tol, check_input=False)


class SensitivityMethod(_LinearClassifierThroughOrigin):
    r"""Algorithm 1 of NIPS 2008 (output perturbation, "sensitivity method").

    Computes the non-private :math:`w^*` and releases :math:`w^* + \eta` with
    :math:`h(\eta) \propto e^{-\frac{n\lambda\varepsilon}{2}\lVert\eta\rVert}`: the norm of
    :math:`\eta` is :math:`\Gamma(d, 2/(n\lambda\varepsilon))`, its direction uniform. ε-DP when
    :math:`\lVert x_i\rVert \le 1` (Theorem 1, via the sensitivity bound :math:`2/(n\lambda)` of
    Corollary 2), for the logistic and the Huber loss alike (:math:`|\ell'| \le 1`).

    Parameters
    ----------
    epsilon : float, default 0.1
        Privacy parameter :math:`\varepsilon > 0` (finite).
    lam, loss, huber_h, norm_bound, tol : as in :class:`StandardLR`.
    random_state : None, int or numpy.random.Generator
        Source of the noise. An int gives the same model on every fit.

    Attributes
    ----------
    coef_, classes_, n_features_in_ : as in :class:`StandardLR`.
    noise_rate_ : float
        :math:`\beta = n\lambda\varepsilon/2` of the noise density that was used.
    """

    def __init__(self, epsilon=0.1, lam=0.01, loss="logistic", huber_h=0.5, norm_bound=1.0, random_state=None,
                 tol=1e-8):
        self.epsilon = epsilon
        self.lam = lam
        self.loss = loss
        self.huber_h = huber_h
        self.norm_bound = norm_bound
        self.random_state = random_state
        self.tol = tol

    def _fit_coef(self, X, y, loss):
        coef, calibration = sensitivity_method(X, y, self.epsilon, self.lam, loss, random_state=self.random_state,
                                               tol=self.tol, return_calibration=True, check_input=False)
        self.noise_rate_ = calibration.noise_rate
        return coef


class ObjectivePerturbation(_LinearClassifierThroughOrigin):
    r"""Algorithm 2 (objective perturbation), corrected (JMLR 2011, default) or as in NIPS 2008.

    Draws :math:`b` from :math:`e^{-\beta\lVert b\rVert}` and releases

    .. math::

        \arg\min_w \frac{\lambda+\Delta}{2}\lVert w\rVert^2 + \frac{b^\top w}{n}
        + \frac1n\sum_i \ell(y_i w^\top x_i).

    ``form="corrected"`` (Chaudhuri, Monteleoni & Sarwate, JMLR 2011, Algorithm 2): with :math:`c`
    the bound on :math:`\ell''` (1/4 logistic, :math:`1/(2h)` Huber),
    :math:`\varepsilon' = \varepsilon - \log(1 + 2c/(n\lambda) + c^2/(n\lambda)^2)`; if
    :math:`\varepsilon' > 0` then :math:`\Delta = 0`, else :math:`\Delta = c/(n(e^{\varepsilon/4}-1))
    - \lambda` and :math:`\varepsilon' = \varepsilon/2`; :math:`\beta = \varepsilon'/2`. This is ε-DP.

    ``form="nips2008"`` (NIPS 2008, Algorithm 2): :math:`\beta = \varepsilon/2`, :math:`\Delta = 0`.
    Kept for replication. Its proof omits the Jacobian of :math:`w \mapsto b`; it is **not** ε-DP
    when :math:`n\lambda` is small.

    Parameters
    ----------
    epsilon, lam, loss, huber_h, norm_bound, random_state, tol : as in :class:`SensitivityMethod`.
    form : {"corrected", "nips2008"}, default "corrected"

    Attributes
    ----------
    coef_, classes_, n_features_in_ : as in :class:`StandardLR`.
    calibration_ : dplr.calibration.ObjectivePerturbationCalibration
        :math:`\varepsilon'`, :math:`\Delta` and :math:`\beta` used in the fit.
    """

    def __init__(self, epsilon=0.1, lam=0.01, loss="logistic", huber_h=0.5, form="corrected", norm_bound=1.0,
                 random_state=None, tol=1e-8):
        self.epsilon = epsilon
        self.lam = lam
        self.loss = loss
        self.huber_h = huber_h
        self.form = form
        self.norm_bound = norm_bound
        self.random_state = random_state
        self.tol = tol

    def _fit_coef(self, X, y, loss):
        coef, self.calibration_ = objective_perturbation(
            X, y, self.epsilon, self.lam, loss, form=self.form, random_state=self.random_state, tol=self.tol,
            return_calibration=True, check_input=False)
        return coef

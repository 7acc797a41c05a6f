r"""scikit-learn estimators: standard (non-private) ERM, Algorithm 1, Algorithm 2 and the (ε, δ) algorithms.

The module is over 400 lines because every estimator shares one base class (validation, label coding,
prediction and the fit) and differs only in its parameters and docstring: splitting it would separate them from it.
Each estimator names its learner (:data:`dplr.learners.LEARNERS`), whose algorithm the fit calls with the estimator's
parameters of the same names; every estimator has ``calibration_`` after ``fit``.

All are linear classifiers through the origin, as in the paper (NIPS 2008, Section 2:
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
    :func:`dplr.preprocessing.clip_to_unit_ball`), except rows beyond the bound by no more than the
    rounding of their own dtype (:func:`dplr.ball.check_rows_in_ball` states the rule), which are
    projected onto the ball so that the proofs' assumption holds exactly in float64.

scikit-learn conventions, and where the paper overrides them
    ``intercept_`` is ``0.0`` always: the paper's separators pass through the origin (append a public
    constant feature to fit an offset). ``predict_proba`` and ``predict_log_proba`` exist for the logistic
    loss only: :math:`P(y = \texttt{classes\_[1]} \mid x) = \sigma(w^\top x) = 1/(1 + e^{-w^\top x})`, the
    model of logistic regression. Computed from the released :math:`w`, it is post-processing and costs no
    privacy (Dwork & Roth 2014, Proposition 2.1); it is *not* calibrated, since the noise shrinks or inflates
    :math:`\lVert w\rVert`. A Huber-loss score has no probability reading, so with ``loss="huber"`` the
    two methods raise ``AttributeError`` (``hasattr(model, "predict_proba")`` is ``False``).
    ``sample_weight`` is refused: the privacy proofs weigh every record by :math:`1/n`.
    ``random_state`` takes ``None``, an int, a ``numpy.random.SeedSequence`` or a
    ``numpy.random.Generator``; the legacy ``numpy.random.RandomState`` is refused (``TypeError`` naming the
    fix): dplr draws through the ``Generator`` interface and would have to turn a ``RandomState`` into a
    ``Generator`` by drawing a seed from it, a stream the caller never asked for.
"""
from __future__ import annotations

import numpy as np
from scipy.special import expit, log_expit
from sklearn.base import BaseEstimator, ClassifierMixin
from sklearn.utils.metaestimators import available_if
from sklearn.utils.multiclass import check_classification_targets
from sklearn.utils.validation import check_is_fitted, validate_data

from dplr.ball import check_rows_in_ball
from dplr.learners import LEARNERS
from dplr.losses import get_loss
from dplr.validation import (
    check_positive_finite,
    encode_binary_labels,
    warn_privacy_leak,
)

__all__ = [
    "StandardLR",
    "SensitivityMethod",
    "ObjectivePerturbation",
    "GaussianOutputPerturbation",
    "GaussianObjectivePerturbation",
    "ApproximateMinimaPerturbation",
    "DPSGD",
]

_INPUT_HINT = ("dplr estimators need a non-empty, dense, 2-D numeric X (n_samples, n_features) and one label per "
               "row of X.")


_NOT_FINITE = ("Input X contains NaN or infinite values. The estimators do not impute: remove those rows, or impute "
               "with a rule that does not depend on the private data, before fitting.")


def _logistic_loss(estimator):
    if getattr(estimator.loss, "name", estimator.loss) != "logistic":  # a name or a loss object
        raise AttributeError(
            f"{type(estimator).__name__} with loss={estimator.loss!r} has no predict_proba / predict_log_proba: "
            f"a Huber SVM score is not a probability. Use decision_function, or loss='logistic'."
        )
    return True


class _LinearClassifierThroughOrigin(ClassifierMixin, BaseEstimator):
    """Shared validation, label coding, fit and prediction; subclasses name their learner (``_learner``).

    ``fit`` checks the data once (shape, finiteness, two classes, rows within ``norm_bound``) and hands
    clean arrays to :mod:`dplr.algorithms` with ``check_input=False``; the algorithms check the privacy
    parameters (ε, λ, form) once.
    """

    def _validate_training_data(self, X, y):
        try:
            # float32 stays float32 here, so that the rounding allowed on the norms is float32's
            X, y = validate_data(self, X, y, dtype=[np.float64, np.float32], ensure_all_finite=False)
        except ValueError as err:
            raise ValueError(f"{err} {_INPUT_HINT}") from err
        norm_bound = check_positive_finite(self.norm_bound, "norm_bound")
        # float64; refuses rows beyond rounding, and NaN or infinite entries in the same pass over X
        X = check_rows_in_ball(X, norm_bound, dtype=X.dtype, not_finite=_NOT_FINITE)
        try:
            y_signed, classes = encode_binary_labels(y)
        except ValueError:
            check_classification_targets(y)  # scikit-learn's verdict on the target first, as before
            raise
        # scikit-learn's type_of_target calls a 1-D target of two integer, boolean or string values, or of two
        # finite integral floats, "binary" (its only other questions are about the values): no need to ask it then
        if not (y.dtype.kind in "iubU" or (y.dtype.kind == "f" and np.all(np.isfinite(classes))
                                            and np.all(classes == np.round(classes)))):
            check_classification_targets(y)
        if norm_bound == 1.0:  # X / 1 is X, bit for bit: checked already
            return X, y_signed, classes, norm_bound
        # dividing by R can itself round a norm of exactly R to 1 + 2e-16: project again (float64 rounding only)
        return check_rows_in_ball(X / norm_bound), y_signed, classes, norm_bound

    def fit(self, X, y, **fit_params):
        """Fit on ``X`` (n, d) and labels ``y`` (two classes). Returns ``self``.

        No fit parameters are accepted (``sample_weight`` included: the privacy proofs weigh every record
        by :math:`1/n`); passing one raises ``TypeError`` naming the fix.
        """
        if fit_params:
            name = type(self).__name__
            raise TypeError(
                f"{name}.fit takes X and y only, got {', '.join(sorted(fit_params))}. {name} does not support "
                f"sample_weight: its privacy guarantee and sensitivity bound 2/(n*lam) assume every record has "
                f"weight 1/n. Fix: fit without sample_weight (in a Pipeline or GridSearchCV, do not route "
                f"sample_weight to this step)."
            )
        X_unit, y_signed, classes, norm_bound = self._validate_training_data(X, y)
        loss = get_loss(self.loss, self.huber_h)
        coef = self._fit_coef(X_unit, y_signed, loss)
        self.classes_ = classes
        self.coef_ = coef / norm_bound
        self.intercept_ = 0.0
        return self

    def _fit_coef(self, X, y, loss):
        """The coefficients from the estimator's learner (:data:`dplr.learners.LEARNERS`), its parameters read from the
        estimator's of the same names; sets ``calibration_`` (``None`` for the non-private learner)."""
        learner = LEARNERS[self._learner]
        parameters = {name: getattr(self, name) for name in learner.parameters}
        if learner.guarantee == "none":
            self.calibration_ = None
            return learner.release(X, y, loss=loss, check_input=False, **parameters)
        target = {name: getattr(self, name) for name in learner.privacy_target}
        # the calibration the release used, calibrated once (dplr.algorithms.calibrated_release)
        coef, calibration = learner.calibrated_release(X, y, **target, loss=loss, random_state=self.random_state,
                                                       check_input=False, **parameters)
        self.calibration_ = calibration
        return coef

    def decision_function(self, X):
        r"""Scores :math:`w^\top x`; positive means ``classes_[1]``."""
        check_is_fitted(self)
        X = validate_data(self, X, dtype=np.float64, reset=False)
        return X @ self.coef_

    def predict(self, X):
        """``classes_[1]`` where the score is positive, else ``classes_[0]``."""
        scores = self.decision_function(X)
        return self.classes_[(scores > 0).astype(int)]

    @available_if(_logistic_loss)
    def predict_proba(self, X):
        r"""Columns :math:`1 - \sigma(w^\top x)` and :math:`\sigma(w^\top x)`, for ``classes_[0]`` and ``classes_[1]``.

        Logistic loss only; post-processing of the released :math:`w` (module docstring).
        """
        p1 = expit(self.decision_function(X))
        return np.column_stack([1.0 - p1, p1])

    @available_if(_logistic_loss)
    def predict_log_proba(self, X):
        r"""Logarithms of :meth:`predict_proba`, computed stably: :math:`\log\sigma(\mp w^\top x)`."""
        scores = self.decision_function(X)
        return np.column_stack([log_expit(-scores), log_expit(scores)])

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
        Solver tolerance on the gradient norm (> 0); a ``ConvergenceWarning`` says when it was not reached. For the
        output perturbations it is part of the privacy guarantee: their noise covers it, and where a solve misses
        it the point of a fallback with a public number of steps is released (:func:`dplr.solver.fixed_step_descent`).

    Attributes
    ----------
    coef_ : ndarray (n_features,)
    intercept_ : float
        Always 0.0: the separator passes through the origin (NIPS 2008, Section 2).
    classes_ : ndarray (2,)
    n_features_in_ : int
    """

    def __init__(self, lam=0.01, loss="logistic", huber_h=0.5, norm_bound=1.0, tol=1e-8):
        self.lam = lam
        self.loss = loss
        self.huber_h = huber_h
        self.norm_bound = norm_bound
        self.tol = tol

    _learner = "standard"


class SensitivityMethod(_LinearClassifierThroughOrigin):
    r"""Algorithm 1 of NIPS 2008 (output perturbation, "sensitivity method").

    Computes the non-private :math:`w^*` to gradient norm ``tol`` and releases :math:`w^* + \eta` with
    :math:`h(\eta) \propto e^{-\beta\lVert\eta\rVert}`, :math:`\beta = n\lambda\varepsilon/(2(1 + n\,\text{tol}))`: the
    norm of :math:`\eta` is :math:`\Gamma(d, 1/\beta)`, its direction uniform. ε-DP when :math:`\lVert x_i\rVert \le 1`
    (Theorem 1, via the sensitivity bound :math:`2/(n\lambda)` of Corollary 2, plus :math:`2\,\text{tol}/\lambda` for the
    solver's point: :func:`dplr.calibration.sensitivity_bound`), for the logistic and the Huber loss alike
    (:math:`|\ell'| \le 1`).

    Parameters
    ----------
    epsilon : float, default 0.1
        Privacy parameter :math:`\varepsilon > 0` (finite).
    lam, loss, huber_h, norm_bound, tol : as in :class:`StandardLR`.
    random_state : None, int, numpy.random.SeedSequence or numpy.random.Generator
        Source of the noise. An int gives the same model on every fit; a ``Generator`` is advanced.
        ``numpy.random.RandomState`` is refused (module docstring).
    release : "float" (default) or "grid"
        ``"float"``: the paper's noise law drawn by float64 samplers, ε-DP over the real numbers only (the book's
        chapter on floating point attacks it). ``"grid"``: the hardened release, ε-DP for the float64 numbers it
        outputs: the certified point rounded to a power-of-two grid plus discrete Laplace noise per coordinate,
        drawn exactly in integers (:class:`dplr.calibration.SensitivityMethodGridCalibration`); ``coef_`` (for
        ``norm_bound=1``) lies on the grid. It costs some accuracy (per-coordinate noise calibrated to
        :math:`\sqrt d` times the L2 sensitivity).

    Attributes
    ----------
    coef_, intercept_, classes_, n_features_in_ : as in :class:`StandardLR`.
    calibration_ : dplr.calibration.SensitivityMethodCalibration (``release="grid"``: SensitivityMethodGridCalibration)
        What the fit's noise was calibrated to (as the other estimators' ``calibration_``).
    noise_rate_ : float
        ``calibration_.noise_rate``, :math:`\beta` of the noise density that was used
        (:math:`n\lambda\varepsilon/(2(1 + n\,\text{tol}))`); an alias the book's chapters read.
    """

    def __init__(self, epsilon=0.1, lam=0.01, loss="logistic", huber_h=0.5, norm_bound=1.0, random_state=None,
                 tol=1e-8, release="float"):
        self.epsilon = epsilon
        self.lam = lam
        self.loss = loss
        self.huber_h = huber_h
        self.norm_bound = norm_bound
        self.random_state = random_state
        self.tol = tol
        self.release = release

    _learner = "sensitivity"

    @property
    def noise_rate_(self):
        """``calibration_.noise_rate``: :math:`\\beta` of the noise density the fit used (``release="float"`` only)."""
        if self.release == "grid" and hasattr(self, "calibration_"):
            raise AttributeError("noise_rate_ is the float release's beta; release='grid' has "
                                 "calibration_.calibration(n_features_in_) (grid, L1 sensitivity, discrete scale).")
        return self.calibration_.noise_rate


class ObjectivePerturbation(_LinearClassifierThroughOrigin):
    r"""Algorithm 2 (objective perturbation), corrected (JMLR 2011, default) or as in NIPS 2008.

    Draws :math:`b` from :math:`e^{-\beta\lVert b\rVert}`, minimises

    .. math::

        J(w) = \frac{\lambda+\Delta}{2}\lVert w\rVert^2 + \frac{b^\top w}{n}
        + \frac1n\sum_i \ell(y_i w^\top x_i)

    and, by default (``release="certified"``), releases the solver's point certified at
    :math:`\lVert\nabla J\rVert \le \gamma` plus output noise :math:`\propto e^{-\beta_2\lVert\eta\rVert}`, ε split
    into :math:`\varepsilon_1` (the calibration below) and :math:`\varepsilon_2` = 1 % (the book's theorem
    ``thm-op-certified``: :func:`dplr.calibration.certified_objective_perturbation_calibration`).

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
    release : {"certified", "certified_grid", "exact_minimiser"}, default "certified"
        What is released (:func:`dplr.algorithms.objective_perturbation`): the point certified at gradient norm
        ``gamma`` plus output noise, which the book's theorem ``thm-op-certified`` covers (then ``tol`` is unused); the
        same point on a power-of-two grid plus exact discrete Laplace noise (``"certified_grid"``, the theorem
        ``thm-op-certified-grid`` of the chapter on floating point); or the solver's point as if it were the exact
        minimiser (the papers' idealisation, which no theorem covers).
    gamma : float or None, default None
        ``release="certified"`` only: the certified gradient norm; ``None``: :math:`1/n^2`.

    Attributes
    ----------
    coef_, intercept_, classes_, n_features_in_ : as in :class:`StandardLR`.
    calibration_ : dplr.calibration.CertifiedObjectivePerturbationCalibration
        The split, :math:`\gamma`, the output rate and (``objective``) :math:`\varepsilon'`, :math:`\Delta` and
        :math:`\beta` used in the fit (a :class:`~dplr.calibration.CertifiedObjectivePerturbationGridCalibration` for
        ``release="certified_grid"``, an :class:`~dplr.calibration.ObjectivePerturbationCalibration` for
        ``release="exact_minimiser"``).
    """

    def __init__(self, epsilon=0.1, lam=0.01, loss="logistic", huber_h=0.5, form="corrected", norm_bound=1.0,
                 random_state=None, tol=1e-8, release="certified", gamma=None):
        self.release = release
        self.gamma = gamma
        self.epsilon = epsilon
        self.lam = lam
        self.loss = loss
        self.huber_h = huber_h
        self.form = form
        self.norm_bound = norm_bound
        self.random_state = random_state
        self.tol = tol

    _learner = "objective"

    def _fit_coef(self, X, y, loss):
        coef = super()._fit_coef(X, y, loss)
        # the NIPS 2008 form is proven epsilon-DP only for the logistic loss with n lam >= 2/epsilon (the book's coupled
        # bound); below that, and for the Huber loss at any n lam, neighbouring pairs lose more than epsilon
        if self.form == "nips2008" and (loss.name != "logistic" or X.shape[0] * self.lam < 2.0 / self.epsilon):
            warn_privacy_leak(f"form='nips2008' is not proven epsilon-DP here ({loss.name} loss, n*lam = "
                              f"{X.shape[0] * self.lam:.3g}; the proof needs the logistic loss and n*lam >= "
                              f"2/epsilon), and pairs of data sets are known that lose more. Fix: form='corrected'.")
        return coef


class _GaussianPerturbation(_LinearClassifierThroughOrigin):
    """The parameters shared by the two Gaussian perturbation estimators (``_learner`` differs)."""

    def __init__(self, epsilon=1.0, delta=1e-5, lam=0.01, loss="logistic", huber_h=0.5, norm_bound=1.0,
                 random_state=None, tol=1e-8):
        self.epsilon = epsilon
        self.delta = delta
        self.lam = lam
        self.loss = loss
        self.huber_h = huber_h
        self.norm_bound = norm_bound
        self.random_state = random_state
        self.tol = tol



class GaussianOutputPerturbation(_GaussianPerturbation):
    r"""Output perturbation with analytic Gaussian noise, (ε, δ)-DP (:func:`dplr.algorithms.gaussian_output_perturbation`).

    Releases :math:`w^* + N(0, \sigma^2 I)`, :math:`\sigma` the smallest for the sensitivity
    :math:`2L/(n\lambda) + 2\,\text{tol}/\lambda` of the solver's point (Balle & Wang 2018, Theorem 8; :mod:`dplr.gaussian`).

    Parameters
    ----------
    epsilon : float, default 1.0
    delta : float, default 1e-5
        :math:`0 < \delta < 1`; choose it far below :math:`1/n`.
    lam, loss, huber_h, norm_bound, random_state, tol : as in :class:`SensitivityMethod`.
    release : "float" (default) or "grid"
        ``"float"``: float64 normals, (ε, δ)-DP over the real numbers only. ``"grid"``: the hardened release, (ε,
        δ)-DP for the float64 numbers it outputs: the certified point rounded to a power-of-two grid plus discrete
        Gaussian noise per coordinate, drawn exactly in integers
        (:class:`dplr.gaussian.GaussianOutputPerturbationGridCalibration`); ``coef_`` (for ``norm_bound=1``) lies on
        the grid. Its σ is larger (the conversion from zCDP, :func:`dplr.gaussian.zcdp_rho`).

    Attributes
    ----------
    coef_, intercept_, classes_, n_features_in_ : as in :class:`StandardLR`.
    calibration_ : dplr.gaussian.GaussianOutputPerturbationCalibration (``release="grid"``:
        GaussianOutputPerturbationGridCalibration)
    """

    _learner = "gaussian_output"

    def __init__(self, epsilon=1.0, delta=1e-5, lam=0.01, loss="logistic", huber_h=0.5, norm_bound=1.0,
                 random_state=None, tol=1e-8, release="float"):
        super().__init__(epsilon, delta, lam, loss, huber_h, norm_bound, random_state, tol)
        self.release = release


class GaussianObjectivePerturbation(_GaussianPerturbation):
    r"""Objective perturbation with Gaussian noise (Kifer, Smith & Thakurta 2012), (ε, δ)-DP.

    :func:`dplr.algorithms.gaussian_objective_perturbation`; the calibration and its proof for replace-one
    neighbours in :func:`dplr.gaussian.gaussian_objective_perturbation_calibration`.

    Parameters
    ----------
    epsilon, delta, lam, loss, huber_h, norm_bound, random_state, tol : as in :class:`GaussianOutputPerturbation`.
    release, gamma : as in :class:`ObjectivePerturbation` (``"certified"``, the default:
        :func:`dplr.gaussian.certified_gaussian_objective_perturbation_calibration`).

    Attributes
    ----------
    coef_, intercept_, classes_, n_features_in_ : as in :class:`StandardLR`.
    calibration_ : dplr.gaussian.GaussianObjectivePerturbationCalibration (or its certified record)
    """

    _learner = "gaussian_objective"

    def __init__(self, epsilon=1.0, delta=1e-5, lam=0.01, loss="logistic", huber_h=0.5, norm_bound=1.0,
                 random_state=None, tol=1e-8, release="certified", gamma=None):
        super().__init__(epsilon, delta, lam, loss, huber_h, norm_bound, random_state, tol)
        self.release = release
        self.gamma = gamma


class ApproximateMinimaPerturbation(_LinearClassifierThroughOrigin):
    r"""Approximate minima perturbation (Iyengar et al., IEEE S&P 2019), (ε, δ)-DP.

    :func:`dplr.algorithms.approximate_minima_perturbation`.

    Parameters
    ----------
    epsilon, delta, lam, loss, huber_h, norm_bound, random_state : as in :class:`GaussianOutputPerturbation`.
    gamma : float or None, default None
        The gradient-norm bound the solver must reach; ``None``: :math:`1/n^2`.
    epsilon_split, delta_split : the split of ε into (objective noise, regulariser, output) and of δ into
        (objective, output), as fractions (:func:`dplr.gaussian.approximate_minima_perturbation_calibration`).

    Attributes
    ----------
    coef_, intercept_, classes_, n_features_in_ : as in :class:`StandardLR`.
    calibration_ : dplr.gaussian.ApproximateMinimaPerturbationCalibration
    """

    def __init__(self, epsilon=1.0, delta=1e-5, lam=0.01, gamma=None, loss="logistic", huber_h=0.5, norm_bound=1.0,
                 random_state=None, epsilon_split=(0.891, 0.099, 0.01), delta_split=(0.99, 0.01)):
        self.epsilon = epsilon
        self.delta = delta
        self.lam = lam
        self.gamma = gamma
        self.loss = loss
        self.huber_h = huber_h
        self.norm_bound = norm_bound
        self.random_state = random_state
        self.epsilon_split = epsilon_split
        self.delta_split = delta_split

    _learner = "amp"


class DPSGD(_LinearClassifierThroughOrigin):
    r"""DP-SGD (Abadi et al., CCS 2016) on the package's losses, (ε, δ)-DP by Google's accountant (:func:`dplr.dpsgd.dp_sgd`).

    Needs the optional extra ``dplr[accounting]`` (``dp-accounting``). Unlike the other estimators it has no
    ``lam`` by default: the privacy of DP-SGD comes from clipping and noise, not from strong convexity.

    Parameters
    ----------
    epsilon, delta : the privacy target; the noise multiplier is the smallest the accountant accepts
        (:func:`dplr.dpsgd.dpsgd_noise_multiplier`).
    sampling_rate : float, default 0.01
        Poisson sampling probability :math:`q` of each record per step.
    steps : int, default 1000
    learning_rate : float, default 1.0
    clip_norm : float, default 1.0
        :math:`C`; the rows of the unit ball have gradients of norm at most 1, so :math:`C \ge 1` never clips them.
    lam : float, default 0.0
        Optional ridge term :math:`\frac\lambda2\lVert w\rVert^2` (no privacy cost).
    neighbouring, accountant : as in :func:`dplr.dpsgd.dpsgd_epsilon`.
    lot_size : float or None, default None
        The public number each lot's noisy gradient sum is divided by; ``None``: :math:`q n`, allowed only under
        ``neighbouring="replace"`` (:func:`dplr.dpsgd.dp_sgd`).
    loss, huber_h, norm_bound, random_state : as in :class:`SensitivityMethod`.

    Attributes
    ----------
    coef_, intercept_, classes_, n_features_in_ : as in :class:`StandardLR`.
    calibration_ : dplr.dpsgd.DPSGDCalibration
    """

    def __init__(self, epsilon=1.0, delta=1e-5, sampling_rate=0.01, steps=1000, learning_rate=1.0, clip_norm=1.0,
                 lam=0.0, loss="logistic", huber_h=0.5, norm_bound=1.0, random_state=None, neighbouring="replace",
                 accountant="pld", lot_size=None):
        self.epsilon = epsilon
        self.delta = delta
        self.sampling_rate = sampling_rate
        self.steps = steps
        self.learning_rate = learning_rate
        self.clip_norm = clip_norm
        self.lam = lam
        self.loss = loss
        self.huber_h = huber_h
        self.norm_bound = norm_bound
        self.random_state = random_state
        self.neighbouring = neighbouring
        self.accountant = accountant
        self.lot_size = lot_size

    _learner = "dpsgd"

r"""The pipeline of Veldhuizen (2020) as switches, a sound pipeline, and what both fit and evaluate.

D. Veldhuizen, *Handling privacy preservation for binary classification data*, BSc thesis, Erasmus
School of Economics, 2020 (``seeds/004_2389f0caa551afc2.txt``). It re-runs the two algorithms of
Chaudhuri & Monteleoni (NIPS 2008) on two simulated sets and on five features of the Wisconsin
Diagnostic Breast Cancer data (:mod:`dplr.replication.thesis.data`).

The thesis' method, as printed (Section 4)
-----------------------------------------
* **Standard LR** ("regularised logistic regression", eq. 7): minimise
  :math:`-\ell(\beta) + \lambda\sum_j|\beta_j|` -- an L1 (Lasso) penalty on the *summed* log-likelihood,
  with :math:`P[Y_i = 1] = 1/(1 + e^{-X_i\beta})` and the indicator :math:`I[Y_i = 1]` (eq. 4).
* **Algorithm 1**: that Lasso estimate plus noise "from the Laplace distribution with mean 0 and
  standard deviation :math:`2/(N\varepsilon\lambda)`", drawn as a uniform direction times a norm
  :math:`\sim \mathrm{Gam}(d, 2/(N\varepsilon\lambda))`.
* **Algorithm 2**: :math:`\arg\min_w \frac{\lambda}{2}w^\top w + \frac{b^\top w}{N} + \frac1N\sum_i
  \ln(1 + e^{-Y_iX_i w})` with :math:`\lVert b\rVert \sim \mathrm{Gam}(d, 2/\varepsilon)` -- the NIPS
  2008 form, with an L2 penalty and the labels :math:`Y_i` entering the loss as numbers.
* **Prediction** (Section 4.5): "If the sum of coefficients multiplied with their corresponding
  variables is negative, we predict 1 ... Is this not the case, we predict -1." **Test error**: "the
  fraction of correct predictions", while its eq. 11 counts :math:`I[\hat Y_i \ne Y_i]`.
* **Labels**: :math:`\pm1` for the simulated data; for the real data "equals one if there is a
  diagnosis of cancer, and zero if this is not the case" (Section 3).
* **Normalisation**: "Normalising every data vector secures this restriction [:math:`\lVert X_i\rVert
  \le 1`]" (Section 3); the real data are "a real normalised data set".
* λ = 0.01 from 25 candidates by five-fold CV of standard LR (Section 5.1); ε of Table 2 not stated
  (we use the paper's 0.1); five folds × 200 restarts.

Every choice the text leaves open, or states in two incompatible ways, is a switch of
:class:`ThesisPipeline`; :func:`dplr.replication.thesis.diagnosis.diagnosis_search` measures which combinations reproduce the published
numbers. :class:`SoundPipeline` is what the same study should have run: public feature ranges,
:math:`\lVert x\rVert \le 1` by construction, labels :math:`\pm1`, the paper's L2 objective, the sign
rule, the misclassification rate, and the corrected (JMLR 2011) Algorithm 2.

Randomness: every fold task draws from ``SeedSequence(seed, spawn_key=key)`` with ``key`` computed
from the task's content (:func:`dplr.replication.seeding.task_seed_sequence`, :func:`restart_stream`) -- data set, fold, training
size, algorithm -- never from ε, λ, the pipeline or the worker. Pipelines and ε values therefore share
their Gamma, direction and Laplace draws (common random numbers, so comparisons are paired), and
results do not depend on ``n_jobs``.
"""

from __future__ import annotations

import warnings
import dataclasses
from dataclasses import dataclass
from functools import lru_cache

import numpy as np
from sklearn.exceptions import ConvergenceWarning
from sklearn.linear_model import LogisticRegression

from dplr.analysis.lasso import l1_logistic_regression
from dplr.calibration import objective_perturbation_calibration
from dplr.datasets.breast_cancer import scale_wdbc_public
from dplr.mechanisms import LaplaceCoordinates, PolarDraws
from dplr.replication.seeding import task_seed_sequence
from dplr.replication.thesis.data import normalise, thesis_dataset
from dplr.replication.thesis.published import THESIS_SEED
from dplr.solver import solve_regularized_erm

__all__ = [
    "settings_repr",
    "ThesisPipeline",
    "SWITCHES",
    "LITERAL",
    "SoundPipeline",
    "fit_l1_logistic",
    "thesis_fit",
    "code_labels",
    "ThesisDraws",
    "noise_vectors",
    "thesis_objective_perturbation",
    "thesis_errors",
    "prepared_data",
    "restart_stream",
]


# --------------------------------------------------------------------------------------------------
# The pipelines
# --------------------------------------------------------------------------------------------------
#: Every switch of :class:`ThesisPipeline` and its values; the first value of each is the literal reading.
SWITCHES = {
    "normalisation": ("row", "max_norm", "column_max", "min_max", "zscore"),
    "labels": ("M1B0", "B1M0", "pm1"),
    "penalty": ("l1_sum", "l1_mean", "lassoglm", "l2_mean"),
    "noise": ("gamma_scale", "gamma_rate", "laplace_std"),
    "noise_n": ("train", "total"),
    "prediction": ("inverted", "sign"),
    "error": ("correct", "misclassified"),
}


def settings_repr(settings, note):
    """``Name(field=value, ...)  # note``: a dataclass' fields (still valid Python) and what the object is not."""
    fields = ", ".join(f"{f.name}={getattr(settings, f.name)!r}" for f in dataclasses.fields(settings))
    return f"{type(settings).__name__}({fields})  # {note}"


@dataclass(frozen=True, repr=False)
class ThesisPipeline:
    r"""Not an estimator and not differentially private by design: the thesis' pipeline, one switch per open step.

    One switch per step the thesis' text leaves open or states inconsistently; the literal reading
    (:data:`LITERAL`) normalises with the data and is not ε-DP -- it is here to be replicated and diagnosed,
    not used. For a private model use :mod:`dplr.estimators`.

    ``normalisation`` (real data only; see :data:`dplr.replication.thesis.data.NORMALISATIONS`)
        ``"row"`` (literal: "normalising every data vector"), ``"max_norm"``, ``"column_max"``,
        ``"min_max"``, ``"zscore"``; applied to all 565 records before the folds. (Raw features are
        not a reading: the text says the data are normalised.)
    ``labels`` (real data only)
        ``"M1B0"``: malignant 1, benign 0 (the thesis' words); ``"B1M0"``: benign 1, malignant 0
        (scikit-learn's target coding); ``"pm1"``: malignant +1, benign -1. Standard LR and Algorithm
        1 use the labels through :math:`I[Y_i = 1]` (eq. 4), Algorithm 2 through the product
        :math:`Y_iX_iw` (its printed objective, so a label 0 contributes the constant :math:`\ln 2`),
        and the test error compares the predictions :math:`\pm1` with the labels as coded.
    ``penalty`` (standard LR and Algorithm 1)
        ``"l1_sum"``: :math:`\sum_i\ell_i + \lambda\lVert\beta\rVert_1` (eq. 7 as printed);
        ``"l1_mean"``: :math:`\frac1n\sum_i\ell_i + \lambda\lVert\beta\rVert_1`; ``"lassoglm"``: MATLAB
        ``lassoglm``'s defaults, :math:`\frac1n\mathrm{deviance} + \lambda\lVert\beta\rVert_1` on
        standardised columns with an unpenalised intercept, the intercept then dropped (the thesis
        predicts with :math:`X_i\beta` only); ``"l2_mean"``: the paper's
        :math:`\frac1n\sum_i\ell_i + \frac\lambda2\lVert\beta\rVert^2`. Algorithm 2 always uses its printed
        L2 objective.
    ``noise`` (both algorithms, one helper as in the thesis' ``Noise`` code)
        ``"gamma_scale"``: norm :math:`\sim\Gamma(d, \theta)` with :math:`\theta` a scale (as printed;
        MATLAB's ``gamrnd``); ``"gamma_rate"``: :math:`\theta` read as a rate; ``"laplace_std"``:
        independent Laplace coordinates with *standard deviation* :math:`\theta` (scale
        :math:`\theta/\sqrt2`), the words "Laplace ... standard deviation". :math:`\theta =
        2/(N\varepsilon\lambda)` for Algorithm 1, :math:`2/\varepsilon` for Algorithm 2.
    ``noise_n``
        ``"train"``: :math:`N` in the noise is the training size; ``"total"``: the data set size.
    ``prediction``
        ``"inverted"``: predict 1 when :math:`X_i\beta < 0` (literal); ``"sign"``: predict 1 when
        :math:`X_i\beta > 0`. Otherwise -1.
    ``error``
        ``"correct"``: the fraction of correct predictions (literal); ``"misclassified"``: eq. 11.
    ``form``
        Algorithm 2 as printed (``"nips2008"``) or corrected (JMLR 2011, ``"corrected"``).

    On labels :math:`\pm1` the literal pair (inverted rule, fraction correct) equals the usual pair
    (sign rule, misclassification rate) except where :math:`X_i\beta = 0` exactly.
    """

    normalisation: str = "row"
    labels: str = "M1B0"
    penalty: str = "l1_sum"
    noise: str = "gamma_scale"
    noise_n: str = "train"
    prediction: str = "inverted"
    error: str = "correct"
    form: str = "nips2008"

    def __post_init__(self):
        for name, allowed in SWITCHES.items():
            if getattr(self, name) not in allowed:
                raise ValueError(f"ThesisPipeline.{name} must be one of {allowed}, got {getattr(self, name)!r}.")
        if self.form not in ("nips2008", "corrected"):
            raise ValueError(f"form must be 'nips2008' or 'corrected', got {self.form!r}.")

    def __repr__(self):
        return settings_repr(self, "a reading of the thesis' pipeline: not an estimator, not differentially private")

    def switches(self):
        return {name: getattr(self, name) for name in SWITCHES}

    def label(self, kinds=("real",)):
        keys = list(SWITCHES) if "real" in kinds else [k for k in SWITCHES if k not in ("normalisation", "labels")]
        return ", ".join(f"{k}={getattr(self, k)}" for k in keys)


#: The pipeline read literally, each open step at its first reading.
LITERAL = ThesisPipeline()


@dataclass(frozen=True, repr=False)
class SoundPipeline:
    """Not an estimator: the settings of a sound version of the study (public ranges, labels ±1, L2, sign rule).

    Public ranges, labels ±1, the L2 objective, the sign rule and the misclassification rate.

    Real data: :func:`dplr.datasets.breast_cancer.scale_wdbc_public` with ``scale`` and ``widen`` (public ranges,
    an intercept column, :math:`\\lVert x\\rVert\\le1`). Simulated data are used as generated. The
    algorithms are :func:`dplr.algorithms.standard_erm`, Algorithm 1 as the papers state it (the minimiser plus
    :func:`~dplr.algorithms.sensitivity_method_noise` for the exact minimiser) and
    :func:`~dplr.algorithms.objective_perturbation` (``form``, corrected by default: ε-DP).
    """

    scale: str = "log"
    widen: float = 1.0
    form: str = "corrected"

    def __repr__(self):
        return settings_repr(self, "settings of the study's sound pipeline, not an estimator")

    def label(self, kinds=("real",)):
        return f"sound ({self.scale} public ranges, widen {self.widen:g}, {self.form})"


# --------------------------------------------------------------------------------------------------
# Fitting, noise and evaluation
# --------------------------------------------------------------------------------------------------
def fit_l1_logistic(X, y, alpha, intercept=False):
    r"""Minimise :math:`\frac1n\sum_i \ln(1 + e^{-y_i(x_i^\top\beta + c)}) + \alpha\lVert\beta\rVert_1`, labels ±1.

    Without intercept: scikit-learn's ``liblinear`` (``C = 1/(n\alpha)``, tolerance 1e-8; a
    :class:`~sklearn.exceptions.ConvergenceWarning` is raised as an error, never shown). With an
    unpenalised intercept :math:`c` (liblinear would penalise it):
    :func:`dplr.analysis.lasso.l1_logistic_regression` (relative decrease 1e-15, projected gradient 1e-10,
    at most 40,000 evaluations). Returns ``(beta, c)``.
    """
    X = np.asarray(X, dtype=float)
    y = np.asarray(y, dtype=float)
    n, d = X.shape
    if not intercept:
        with warnings.catch_warnings():
            warnings.simplefilter("error", ConvergenceWarning)
            model = LogisticRegression(C=1.0 / (n * alpha), l1_ratio=1.0, solver="liblinear", fit_intercept=False,
                                       tol=1e-8, max_iter=100_000, random_state=0).fit(X, y)
        return model.coef_.ravel().copy(), 0.0
    return l1_logistic_regression(X, y, alpha, tol=1e-15, intercept=True, gtol=1e-10, max_evaluations=40_000)


def thesis_fit(X, y, lam, penalty):
    """The coefficient vector standard LR returns under a ``penalty`` reading (labels ±1); see :class:`ThesisPipeline`."""
    X = np.asarray(X, dtype=float)
    n = X.shape[0]
    if penalty == "l2_mean":
        return solve_regularized_erm(X, y, lam).coef
    if penalty == "l1_sum":
        return fit_l1_logistic(X, y, lam / n)[0]
    if penalty == "l1_mean":
        return fit_l1_logistic(X, y, lam)[0]
    if penalty == "lassoglm":
        centre, spread = X.mean(axis=0), X.std(axis=0)
        spread = np.where(spread > 0, spread, 1.0)
        # (1/n) deviance + λ||β||₁ = 2 × [(1/n) Σ ℓ + (λ/2)||β||₁]
        beta, _ = fit_l1_logistic((X - centre) / spread, y, lam / 2.0, intercept=True)
        return beta / spread  # coefficients on the original scale; the intercept is dropped
    raise ValueError(f"penalty must be one of {SWITCHES['penalty']}, got {penalty!r}.")


def code_labels(malignant, coding):
    """Labels of the real data under a coding: ``"M1B0"``, ``"B1M0"`` (0/1) or ``"pm1"`` (malignant +1)."""
    malignant = np.asarray(malignant, dtype=bool)
    if coding == "M1B0":
        return malignant.astype(float)
    if coding == "B1M0":
        return (~malignant).astype(float)
    if coding == "pm1":
        return np.where(malignant, 1.0, -1.0)
    raise ValueError(f"coding must be one of {SWITCHES['labels']}, got {coding!r}.")


@dataclass(frozen=True)
class ThesisDraws:
    r"""Standardised noise draws of one task: the vector Laplace family's radii and directions, and Laplace coordinates.

    ``polar`` (:class:`~dplr.mechanisms.PolarDraws`: radii :math:`\Gamma(d, 1)`, uniform directions)
    serves both Gamma readings of the thesis' noise; ``laplace`` (k, d) unit-scale Laplace coordinates
    serve the "standard deviation" reading (:class:`~dplr.mechanisms.LaplaceCoordinates` of scale 1). Drawn in that order
    from one stream.
    """

    polar: PolarDraws
    laplace: np.ndarray  # (k, d)

    @classmethod
    def sample(cls, rng, k, d):
        return cls(PolarDraws.sample(d, k, rng), LaplaceCoordinates.from_scale(d, 1.0).sample(k, rng))


def noise_vectors(draws: ThesisDraws, theta, reading):
    r"""Noise vectors for the parameter :math:`\theta` under a ``noise`` reading (see :class:`ThesisPipeline`).

    ``"gamma_scale"``: the vector Laplace law with norm scale :math:`\theta`; ``"gamma_rate"``: with
    rate :math:`\theta`; ``"laplace_std"``: independent Laplace coordinates of standard deviation
    :math:`\theta` (scale :math:`\theta/\sqrt2`).
    """
    if reading == "gamma_scale":
        return draws.polar.vectors(scale=theta)
    if reading == "gamma_rate":
        return draws.polar.vectors(rate=theta)
    if reading == "laplace_std":
        return draws.laplace * (theta / np.sqrt(2.0))
    raise ValueError(f"noise must be one of {SWITCHES['noise']}, got {reading!r}.")


def thesis_objective_perturbation(X, y_coded, epsilon, lam, draws, noise="gamma_scale", n_noise=None,
                                  form="nips2008"):
    r"""Algorithm 2 as the thesis prints it, with the labels entering :math:`\ln(1 + e^{-Y_iX_iw})` as coded.

    Rows with :math:`Y_i = 0` contribute the constant :math:`\ln 2` and drop out of the minimisation
    (the objective keeps :math:`1/N` with :math:`N` all training rows). ``n_noise`` is the :math:`N` of
    the calibration (default: the training size). Returns ``(k, d)`` minimisers.
    """
    X = np.asarray(X, dtype=float)
    y_coded = np.asarray(y_coded, dtype=float)
    n = X.shape[0]
    n_noise = n if n_noise is None else int(n_noise)
    cal = objective_perturbation_calibration(epsilon, n_noise, lam, form=form)
    b = noise_vectors(draws, 1.0 / cal.noise_rate, noise)
    keep = y_coded != 0
    m = int(keep.sum())
    if m == 0:
        # Every loss term is constant: the minimiser of (λ+Δ)/2||w||² + bᵀw/n is -b/(n(λ+Δ)).
        return -b / (n * (lam + cal.ridge))
    # Multiply the objective by n/m: the solver's form with λ' = λn/m, Δ' = Δn/m and bᵀw/m.
    return solve_regularized_erm(X[keep], y_coded[keep], lam * n / m, b=b, ridge=cal.ridge * n / m).coef


def thesis_errors(scores, y_coded, prediction="sign", error="misclassified"):
    """Test error of each column of ``scores`` (n_test, k) under the prediction rule and error definition."""
    scores = np.asarray(scores, dtype=float)
    if prediction == "sign":
        predicted = np.where(scores > 0, 1.0, -1.0)
    elif prediction == "inverted":
        predicted = np.where(scores < 0, 1.0, -1.0)
    else:
        raise ValueError(f"prediction must be 'sign' or 'inverted', got {prediction!r}.")
    wrong = predicted != np.asarray(y_coded, dtype=float)[:, None]
    if error == "misclassified":
        return wrong.mean(axis=0)
    if error == "correct":
        return 1.0 - wrong.mean(axis=0)
    raise ValueError(f"error must be 'misclassified' or 'correct', got {error!r}.")


# --------------------------------------------------------------------------------------------------
# What a pipeline trains on, and its random streams
# --------------------------------------------------------------------------------------------------
@lru_cache(maxsize=64)
def prepared_data(kind, pipeline, seed=THESIS_SEED):
    """Features and coded labels a pipeline trains on (real data normalised over all 565 records)."""
    X, labels = thesis_dataset(kind, seed)
    if kind != "real":
        return X, labels
    if isinstance(pipeline, SoundPipeline):
        return scale_wdbc_public(X, scale=pipeline.scale, widen=pipeline.widen), code_labels(labels, "pm1")
    return normalise(X, pipeline.normalisation, warn=False), code_labels(labels, pipeline.labels)


def restart_stream(seed, kind, fold, n_train, algorithm):
    """The random stream of one fold task's restarts: content-addressed, shared by pipelines and ε."""
    return np.random.default_rng(task_seed_sequence(seed, "thesis-restarts", kind, fold, n_train, algorithm))

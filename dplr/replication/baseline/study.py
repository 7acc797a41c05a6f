r"""The cost of privacy on Adult and KDDCup99: the best non-private linear model, and the gap to each private pipeline
split into four parts (issue 39, §1).

**The chain.** Five pipelines on the same training and test sets, each differing from the next in one step:

* ``B0`` -- the baseline a practitioner would deploy: scikit-learn's ``LogisticRegression`` on *standardised*
  features (each column of the book's features centred and scaled by its training mean and standard deviation) with
  an unpenalised intercept, λ chosen by 5-fold cross-validation on the training set over :data:`WIDE_LAMBDAS`
  (:math:`10^{-8}, 10^{-7.5}, \dots, 10^{-1}`; scikit-learn's ``C`` is :math:`1/(n\lambda)`, so its objective is the
  book's :math:`\frac1n\sum_i\ell + \frac\lambda2\lVert w\rVert^2`);
* ``B1`` -- the same on the book's features (unit-ball rows, public bounds) with no intercept;
* ``B2`` -- the same, λ restricted to the study's grid :data:`~dplr.replication.real_data.LAMBDAS`
  (:math:`10^{-3}, \dots, 10^{-1}`), refitted by :func:`dplr.algorithms.standard_erm`;
* ``whole`` -- the private learner (Algorithm 1, ``sensitivity``; corrected Algorithm 2, ``objective``) at ε on the
  whole training set at B2's λ (a λ chosen on the data without privacy: a reference point, not a private pipeline);
* ``tuned`` -- Algorithm 3 (:func:`dplr.tuning.private_tuning_experiment`): the split into six parts, one candidate
  per λ of the grid, each trained privately on its part, the exponential mechanism's choice -- the private
  pipeline of the real-data study, on the same streams (its repeats are the real-data record's first ones).

**The parts** (:func:`decompose`), per data set, method and ε, sum exactly to the total gap ``tuned − B0``:
(i) feature map ``B1 − B0``; (ii) candidate grid ``B2 − B1``; (iv) noise ``whole − B2``; (iii) split and private
selection ``tuned − whole``. The order of the chain matters where steps interact (the noise is measured at the whole
set's size, the split after it). Intervals (95%, Student t): (i) and (ii) are deterministic given the data, and
their intervals are paired over the test records (the per-record difference of two classifiers' 0/1 losses: the
uncertainty from the test set); (iii) pairs ``tuned`` and ``whole`` by repeat, (iv) and the total are intervals over
the repeats (the private pipelines' randomness, on the fixed test set). Also recorded: ``split``, the non-private
choice among the same parts' non-private candidates (Algorithm 3's split without noise).

Only the logistic loss: the Huber SVM's non-private solves at the small λ that cross-validation needs do not
converge in the solver's Newton iterations (tens of seconds each, gradient norm above 1e-8), so its baseline is
left open.

Streams: CV folds from :func:`~dplr.replication.seeding.task_stream` ``(seed, data, loss, "cv")``; the private
learners on the whole set from ``(seed, data, loss, "whole", method, repeat, ε)``; Algorithm 3 from
:func:`~dplr.replication.real_data.tradeoff_stream`. Repeat ``r`` draws the same in a run of any length.
"""
from __future__ import annotations

import time
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from dplr.algorithms import objective_perturbation, sensitivity_method, standard_erm
from dplr.replication.real_data import DATASETS, DEFAULT_SEED, EPSILONS, HUBER_H, LAMBDAS, study_data, tradeoff_stream
from dplr.replication.seeding import task_stream
from dplr.replication.statistics import paired_t_test, t_interval
from dplr.tuning import private_tuning_experiment

__all__ = ["WIDE_LAMBDAS", "LOSSES", "METHODS", "N_FOLDS", "DEFAULT_REPEATS", "PARTS", "BaselineStudy",
           "cv_errors", "fit_baseline", "nonprivate_chain", "private_rows", "decompose", "run_baseline_study",
           "study_from_rows"]

#: The λ grid of cross-validation: half decades from 1e-8 to 1e-1 (it contains the study's grid).
WIDE_LAMBDAS = tuple(10.0 ** np.arange(-8.0, -0.75, 0.5))
#: The losses of the study (the Huber SVM's baseline is open: see the module docstring).
LOSSES = ("logistic",)
#: The private learners.
METHODS = ("sensitivity", "objective")
#: Folds of the cross-validation.
N_FOLDS = 5
#: Repeats of the private pipelines in the book's record.
DEFAULT_REPEATS = 10
#: The parts of the gap, in the order of the chain, with the stages they compare.
PARTS = (("feature map", "B1", "B0"), ("candidate grid", "B2", "B1"), ("noise", "whole", "B2"),
         ("split and selection", "tuned", "whole"))


def _wrong(scores, y):
    return (scores > 0) != (y > 0)


def fit_baseline(X, y, lam, intercept):
    """scikit-learn's ``LogisticRegression`` minimising :math:`\\frac1n\\sum_i\\ell + \\frac\\lambda2\\lVert w\\rVert^2`
    (``C`` = 1/(nλ); the intercept, when fitted, unpenalised). Returns ``(coef, intercept)``."""
    from sklearn.linear_model import LogisticRegression  # imported here: scikit-learn is heavy
    model = LogisticRegression(C=1.0 / (len(y) * lam), fit_intercept=intercept, tol=1e-8, max_iter=5000)
    model.fit(X, y)
    return model.coef_.ravel(), float(model.intercept_[0]) if intercept else 0.0


def cv_errors(X, y, lambdas, intercept, random_state):
    """Validation errors (counts summed over :data:`N_FOLDS` folds) of :func:`fit_baseline` at each λ of
    ``lambdas``; the folds are a random permutation of the records from ``random_state`` cut into equal parts."""
    order = random_state.permutation(len(y))
    folds = np.array_split(order, N_FOLDS)
    errors = np.zeros(len(lambdas), dtype=int)
    for k in range(N_FOLDS):
        fit = np.concatenate([folds[j] for j in range(N_FOLDS) if j != k])
        for i, lam in enumerate(lambdas):
            coef, b = fit_baseline(X[fit], y[fit], lam, intercept)
            errors[i] += int(np.count_nonzero(_wrong(X[folds[k]] @ coef + b, y[folds[k]])))
    return errors


def _standardise(X, X_test):
    mean, scale = X.mean(axis=0), X.std(axis=0)
    scale[scale == 0] = 1.0
    return (X - mean) / scale, (X_test - mean) / scale


def nonprivate_chain(X, y, X_test, y_test, key, loss="logistic", seed=DEFAULT_SEED):
    """Rows of B0, B1, B2 (module docstring): the chosen λ, the test error, and the 95% t-interval, paired over the
    test records, of the difference with the previous stage (``diff_low``, ``diff_high``; NaN for B0)."""
    Z, Z_test = _standardise(X, X_test)
    wide = np.array(WIDE_LAMBDAS)
    on_grid = np.isin(wide, np.array(LAMBDAS))
    cv_std = cv_errors(Z, y, wide, True, task_stream(seed, key, loss, "cv"))
    cv_book = cv_errors(X, y, wide, False, task_stream(seed, key, loss, "cv"))
    lam0, lam1 = wide[np.argmin(cv_std)], wide[np.argmin(cv_book)]
    lam2 = wide[on_grid][np.argmin(cv_book[on_grid])]
    coef, b = fit_baseline(Z, y, lam0, True)
    wrong = {"B0": _wrong(Z_test @ coef + b, y_test)}
    coef, _ = fit_baseline(X, y, lam1, False)
    wrong["B1"] = _wrong(X_test @ coef, y_test)
    wrong["B2"] = _wrong(X_test @ standard_erm(X, y, lam2, loss, huber_h=HUBER_H), y_test)
    rows, previous = [], None
    for stage, lam in zip(("B0", "B1", "B2"), (lam0, lam1, lam2)):
        low = high = np.nan
        if previous is not None:
            low, high, _ = paired_t_test(wrong[stage].astype(float) - wrong[previous].astype(float))
        rows.append({"data": key, "loss": loss, "stage": stage, "method": "nonprivate", "epsilon": np.inf,
                     "repeat": 0, "lam": float(lam), "error": float(np.count_nonzero(wrong[stage]) / y_test.size),
                     "diff_low": low, "diff_high": high})
        previous = stage
    return rows


def private_rows(X, y, X_test, y_test, key, lam, n_repeats, loss="logistic", seed=DEFAULT_SEED,
                 epsilons=EPSILONS, methods=METHODS):
    """Rows of ``whole`` (each method at each ε on the whole training set at ``lam``), ``tuned`` (Algorithm 3) and
    ``split`` (its non-private choice among the same parts' non-private candidates), ``n_repeats`` each."""
    rows = []
    base = {"data": key, "loss": loss, "diff_low": np.nan, "diff_high": np.nan}
    for r in range(n_repeats):
        streams = [task_stream(seed, key, loss, "whole", "objective", r, repr(float(e))) for e in epsilons]
        coefs = {}
        if "objective" in methods:
            coefs["objective"] = objective_perturbation(X, y, np.array(epsilons, dtype=float), lam, loss, HUBER_H,
                                                        random_state=streams)
        if "sensitivity" in methods:
            coefs["sensitivity"] = np.vstack([
                sensitivity_method(X, y, e, lam, loss, HUBER_H,
                                   random_state=task_stream(seed, key, loss, "whole", "sensitivity", r,
                                                            repr(float(e))))
                for e in epsilons])
        for method, coef in coefs.items():
            errors = np.count_nonzero(_wrong(X_test @ coef.T, y_test[:, None]), axis=0) / y_test.size
            rows += [{**base, "stage": "whole", "method": method, "epsilon": float(e), "repeat": r,
                      "lam": float(lam), "error": float(err)} for e, err in zip(epsilons, errors)]
    tuned = private_tuning_experiment(X, y, X_test, y_test, LAMBDAS, list(epsilons), n_repeats, loss=loss,
                                      huber_h=HUBER_H, methods=methods, random_state=tradeoff_stream(seed, key, loss))
    for row in tuned.itertuples():
        if row.method == "nonprivate":
            rows.append({**base, "stage": "split", "method": "nonprivate", "epsilon": np.inf, "repeat": row.repeat,
                         "lam": row.lam_nonprivate, "error": row.error_nonprivate})
        else:
            rows.append({**base, "stage": "tuned", "method": row.method, "epsilon": row.epsilon,
                         "repeat": row.repeat, "lam": row.lam_private, "error": row.error_private})
    return rows


def decompose(rows, level=0.95):
    """The gap ``tuned − B0`` and its four parts (module docstring) per data set, loss, method and ε: one row per
    part with its mean, 95% interval and the number of pairs, and a row ``total``. The parts' means sum to the
    total's."""
    out = []
    for (key, loss), group in rows.groupby(["data", "loss"], sort=False):
        fixed = group[group.stage.isin(["B0", "B1", "B2"])].set_index("stage")
        private = group[group.stage.isin(["whole", "tuned"])]
        for (method, eps), cell in private.groupby(["method", "epsilon"], sort=True):
            wide = cell.pivot_table(index="repeat", columns="stage", values="error")
            common = {"data": key, "loss": loss, "method": method, "epsilon": eps}
            for part, later, earlier in PARTS[:2]:
                out.append({**common, "part": part, "mean": fixed.error[later] - fixed.error[earlier],
                            "ci_low": fixed.diff_low[later], "ci_high": fixed.diff_high[later],
                            "pairs": "test records"})
            noise = wide["whole"].to_numpy() - fixed.error["B2"]
            split = wide["tuned"].to_numpy() - wide["whole"].to_numpy()
            total = wide["tuned"].to_numpy() - fixed.error["B0"]
            for part, values in (("noise", noise), ("split and selection", split), ("total", total)):
                low, high, _ = paired_t_test(values, level)
                out.append({**common, "part": part, "mean": float(values.mean()), "ci_low": low, "ci_high": high,
                            "pairs": f"{values.size} repeats"})
    return pd.DataFrame(out)


@dataclass(frozen=True)
class BaselineStudy:
    """The study's results: ``rows`` (the record's), ``parts`` (:func:`decompose`), settings and wall-clock seconds."""

    seed: int
    n_repeats: int
    rows: pd.DataFrame
    parts: pd.DataFrame
    n_test: dict
    wall_seconds: dict = field(default_factory=dict)


def study_from_rows(rows, seed, n_repeats, n_test, wall_seconds=None):
    """A :class:`BaselineStudy` from its ``rows`` (a run's, or a record's)."""
    return BaselineStudy(seed=seed, n_repeats=n_repeats, rows=rows, parts=decompose(rows), n_test=dict(n_test),
                         wall_seconds=wall_seconds or {})


def run_baseline_study(datasets=DATASETS, n_repeats=DEFAULT_REPEATS, seed=DEFAULT_SEED, epsilons=EPSILONS,
                       subsample=None, data=None, nonprivate=True):
    """Run the study (logistic loss); ``subsample`` keeps that many training records (tests, quick looks).
    ``nonprivate=False`` skips the cross-validation (the chain's λ for ``whole`` is then required from ``data``:
    not supported; used by checks that recompute only the private rows with ``lam`` from a record -- see
    :func:`private_rows`). Returns a :class:`BaselineStudy`."""
    start = time.perf_counter()
    rows, n_test, seconds = [], {}, {}
    for key in datasets:
        X, y, X_test, y_test = study_data(key, seed, data, subsample)
        n_test[key] = len(y_test)
        for loss in LOSSES:
            t = time.perf_counter()
            chain = nonprivate_chain(X, y, X_test, y_test, key, loss, seed)
            seconds[f"{key}-nonprivate"] = round(time.perf_counter() - t, 1)
            t = time.perf_counter()
            rows += chain + private_rows(X, y, X_test, y_test, key, chain[-1]["lam"], n_repeats, loss, seed,
                                         epsilons)
            seconds[f"{key}-private"] = round(time.perf_counter() - t, 1)
    seconds["total"] = round(time.perf_counter() - start, 1)
    return study_from_rows(pd.DataFrame(rows), seed, n_repeats, n_test, seconds)

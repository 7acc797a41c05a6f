r"""The cost of privacy on Adult and KDDCup99: the best non-private linear model, and the gap to each private pipeline
split into four parts (issue 39, §1).

**The chain.** Five pipelines on the same training and test sets, each differing from the next in one step:

* ``B0`` -- the baseline a practitioner would deploy: logistic regression on *standardised* features (each column of
  the book's features centred and scaled by its training mean and standard deviation) with an unpenalised
  intercept, λ chosen by 5-fold cross-validation on the training set over :data:`WIDE_LAMBDAS`
  (:math:`10^{-8}, 10^{-7.5}, \dots, 10^{-1}`), refitted on the whole training set by scikit-learn's
  ``LogisticRegression`` (the reference implementation; ``C`` is :math:`1/(n\lambda)`, so its objective is the
  book's :math:`\frac1n\sum_i\ell + \frac\lambda2\lVert w\rVert^2`). The same ``B0`` serves both losses: scikit-learn
  has no Huber-SVM classifier, and the model a practitioner deploys without privacy is the best deployable linear
  model, whatever loss the private pipeline uses (``SGDClassifier(loss="modified_huber")`` is another loss, fitted
  by a stochastic method whose answer depends on its step schedule, not a minimiser to a tolerance). For the Huber
  SVM part (i) is therefore the feature map *and* the change of loss;
* ``B1`` -- the same on the book's features (unit-ball rows, public bounds) with no intercept and the pipeline's
  loss; refitted by scikit-learn (logistic) or :func:`dplr.algorithms.standard_erm` (Huber, :data:`HUBER_H`);
* ``B2`` -- the same, λ restricted to the study's grid :data:`~dplr.replication.real_data.LAMBDAS`
  (:math:`10^{-3}, \dots, 10^{-1}`), refitted by :func:`dplr.algorithms.standard_erm`;
* ``whole`` -- the private learner (Algorithm 1, ``sensitivity``; corrected Algorithm 2, ``objective``; dplr's
  default release) at ε on the whole training set at B2's λ (a λ chosen on the data without privacy: a reference
  point, not a private pipeline);
* ``tuned`` -- Algorithm 3 (:func:`dplr.tuning.private_tuning_experiment`): the split into six parts, one candidate
  per λ of the grid, each trained privately on its part, the exponential mechanism's choice -- the private
  pipeline of the real-data study. Not recomputed: :func:`tuned_rows` reads its first repeats from the real-data
  record (:mod:`dplr.replication.real.record`), whose repeat ``r`` pairs with repeat ``r`` here by index.

**Cross-validation** (:func:`cv_errors`): on each fold the whole λ path is solved by :func:`newton_path`, damped
Newton from the largest λ to the smallest, each λ started at the previous minimiser (warm start), stopped at gradient
norm :data:`CV_TOL` (enough to choose λ: the chosen model is refitted at :data:`FIT_TOL`). A λ at which some
fold's solve did not reach :data:`CV_TOL` in :data:`CV_MAX_ITER` iterations is dropped from that stage's grid (the
study's settings list the grid used). Ties go to the largest λ.

**The parts** (:func:`decompose`), per data set, loss, method and ε, sum exactly to the total gap ``tuned − B0``:
(i) feature map ``B1 − B0``; (ii) candidate grid ``B2 − B1``; (iii) noise ``whole − B2``; (iv) split and private
selection ``tuned − whole``. The order of the chain matters where steps interact (the noise is measured at the whole
set's size, the split after it). Intervals (95%, Student t): (i) and (ii) are deterministic given the data, and
their intervals are paired over the test records (the per-record difference of two classifiers' 0/1 losses: the
uncertainty from the test set); (iii) and the total are intervals over the repeats (the private pipelines'
randomness, on the fixed test set); (iv) pairs ``tuned`` and ``whole`` by repeat index (independent streams: a valid
pairing that removes no variance).

Streams: CV folds from :func:`~dplr.replication.seeding.task_stream` ``(seed, data, "cv")`` (the same folds for
every stage and loss); the private learners on the whole set from ``(seed, data, loss, "whole", method, repeat, ε)``.
Repeat ``r`` draws the same in a run of any length.
"""
from __future__ import annotations

import time
import warnings
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from dplr.algorithms import objective_perturbation, sensitivity_method, standard_erm
from dplr.losses import get_loss
from dplr.replication.real_data import DATASETS, DEFAULT_SEED, EPSILONS, HUBER_H, LAMBDAS, study_data
from dplr.replication.seeding import task_stream
from dplr.replication.statistics import paired_t_test

__all__ = ["WIDE_LAMBDAS", "LOSSES", "METHODS", "N_FOLDS", "DEFAULT_REPEATS", "CV_TOL", "FIT_TOL", "CV_MAX_ITER",
           "PARTS", "BaselineStudy", "newton_path", "cv_errors", "nonprivate_chain", "private_rows", "tuned_rows",
           "decompose", "run_baseline_study", "study_from_rows", "recompute_rows"]

#: The λ grid of cross-validation: half decades from 1e-8 to 1e-1 (it contains the study's grid).
WIDE_LAMBDAS = tuple(10.0 ** np.arange(-8.0, -0.75, 0.5))
#: The losses of the study.
LOSSES = ("logistic", "huber")
#: The private learners.
METHODS = ("sensitivity", "objective")
#: Folds of the cross-validation.
N_FOLDS = 5
#: Repeats of the private pipelines in the book's record.
DEFAULT_REPEATS = 10
#: Gradient norm at which a cross-validation solve stops (choosing λ), and at which the chosen model is refitted.
CV_TOL, FIT_TOL = 1e-6, 1e-8
#: Newton iterations at most per λ of a cross-validation path.
CV_MAX_ITER = 100
#: The parts of the gap, in the order of the chain, with the stages they compare.
PARTS = (("feature map", "B1", "B0"), ("candidate grid", "B2", "B1"), ("noise", "whole", "B2"),
         ("split and selection", "tuned", "whole"))


def _wrong(scores, y):
    return (scores > 0) != (y > 0)


def newton_path(X, y, lambdas, loss="logistic", intercept=False, tol=CV_TOL, max_iter=CV_MAX_ITER):
    r"""Minimisers of :math:`J_\lambda(w, b) = \frac1n\sum_i \ell(y_i(w^\top x_i + b)) + \frac\lambda2\lVert w
    \rVert^2` for each λ of ``lambdas`` (:math:`b = 0` unless ``intercept``; it is not penalised), by Newton's method
    with backtracking (Armijo) line search, from the largest λ to the smallest, each started at the previous
    minimiser (a warm start: along a path of half decades a few steps each). Returns ``(coefs, grad_norms)``:
    ``coefs[j]`` the point for ``lambdas[j]`` (the intercept last when fitted), ``grad_norms[j]`` its gradient norm
    (above ``tol`` where ``max_iter`` steps did not suffice)."""
    loss_fn = get_loss(loss, HUBER_H)
    A = np.hstack([X, np.ones((len(y), 1))]) if intercept else np.asarray(X, dtype=float)
    n, d = A.shape
    penalised = np.ones(d)
    if intercept:
        penalised[-1] = 0.0
    lambdas = np.asarray(lambdas, dtype=float)
    coefs, norms = np.empty((lambdas.size, d)), np.empty(lambdas.size)
    w = np.zeros(d)

    def objective(point, lam):
        return float(np.mean(loss_fn.value(y * (A @ point))) + 0.5 * lam * np.sum(penalised * point * point))

    for j in np.argsort(-lambdas, kind="stable"):
        lam = lambdas[j]
        for _ in range(max_iter + 1):
            first, second = loss_fn.derivatives(y * (A @ w))
            grad = A.T @ (y * first) / n + lam * penalised * w
            norm = float(np.linalg.norm(grad))
            if norm <= tol:
                break
            band = second > 0  # the Huber loss's curvature is 0 outside its band: those rows add nothing
            rows = A[band] * np.sqrt(second[band])[:, None]
            hessian = rows.T @ rows / n + np.diag(lam * penalised)
            try:
                step = np.linalg.solve(hessian, grad)
            except np.linalg.LinAlgError:
                step = np.linalg.lstsq(hessian, grad, rcond=None)[0]
            value, slope, t = objective(w, lam), float(grad @ step), 1.0
            while t > 1e-12 and objective(w - t * step, lam) > value - 1e-4 * t * slope:
                t /= 2
            if t <= 1e-12:
                break
            w = w - t * step
        coefs[j], norms[j] = w, norm
    return coefs, norms


def cv_errors(X, y, lambdas, loss, intercept, random_state):
    """``(errors, converged)``: validation errors (counts summed over :data:`N_FOLDS` folds) at each λ of
    ``lambdas`` (:func:`newton_path` on each fold), and whether every fold's solve reached :data:`CV_TOL` there. The
    folds are a random permutation of the records from ``random_state`` cut into equal parts."""
    folds = np.array_split(random_state.permutation(len(y)), N_FOLDS)
    errors, converged = np.zeros(len(lambdas), dtype=int), np.ones(len(lambdas), dtype=bool)
    for k in range(N_FOLDS):
        fit = np.concatenate([folds[j] for j in range(N_FOLDS) if j != k])
        coefs, norms = newton_path(X[fit], y[fit], lambdas, loss, intercept)
        A = np.hstack([X[folds[k]], np.ones((len(folds[k]), 1))]) if intercept else X[folds[k]]
        errors += np.count_nonzero(_wrong(A @ coefs.T, y[folds[k]][:, None]), axis=0)
        converged &= norms <= CV_TOL
    return errors, converged


def _choose(lambdas, errors, allowed):
    """The λ with the fewest errors among ``allowed``; ties go to the largest λ."""
    candidates = np.flatnonzero(allowed)
    if candidates.size == 0:
        raise RuntimeError("no λ of the cross-validation grid converged; raise CV_MAX_ITER or use larger λ.")
    best = candidates[errors[candidates] == errors[candidates].min()]
    return float(lambdas[best[np.argmax(lambdas[best])]])


def _sklearn_logistic(X, y, lam, intercept):
    """scikit-learn's ``LogisticRegression`` (Newton-Cholesky, gradient tolerance :data:`FIT_TOL`) at λ:
    ``(coef, intercept)``."""
    from sklearn.linear_model import LogisticRegression  # imported here: scikit-learn is heavy
    model = LogisticRegression(C=1.0 / (len(y) * lam), fit_intercept=intercept, solver="newton-cholesky",
                               tol=FIT_TOL, max_iter=1000)
    with warnings.catch_warnings():
        warnings.simplefilter("error", category=UserWarning)  # ConvergenceWarning is a UserWarning: fail loudly
        model.fit(X, y)
    return model.coef_.ravel(), float(model.intercept_[0]) if intercept else 0.0


def _standardise(X, X_test):
    mean, scale = X.mean(axis=0), X.std(axis=0)
    scale[scale == 0] = 1.0
    return (X - mean) / scale, (X_test - mean) / scale


def nonprivate_chain(X, y, X_test, y_test, key, losses=LOSSES, seed=DEFAULT_SEED):
    """``(rows, grids)``: rows of B0, B1, B2 (module docstring) for each loss -- the chosen λ, the test error, and
    the 95% t-interval, paired over the test records, of the difference with the previous stage (``diff_low``,
    ``diff_high``; NaN for B0) -- and, per stage, the λ of the grid at which every fold converged."""
    wide = np.array(WIDE_LAMBDAS)
    Z, Z_test = _standardise(X, X_test)
    errors0, ok0 = cv_errors(Z, y, wide, "logistic", True, task_stream(seed, key, "cv"))
    lam0 = _choose(wide, errors0, ok0)
    coef, b = _sklearn_logistic(Z, y, lam0, True)
    wrong0 = _wrong(Z_test @ coef + b, y_test)
    rows, grids = [], {"B0": wide[ok0].tolist()}
    on_grid = np.isin(wide, np.array(LAMBDAS))
    for loss in losses:
        errors1, ok1 = cv_errors(X, y, wide, loss, False, task_stream(seed, key, "cv"))
        lam1, lam2 = _choose(wide, errors1, ok1), _choose(wide, errors1, ok1 & on_grid)
        grids[f"B1-{loss}"] = wide[ok1].tolist()
        if loss == "logistic":
            coef1 = _sklearn_logistic(X, y, lam1, False)[0]
        else:
            coef1 = standard_erm(X, y, lam1, loss, HUBER_H, tol=FIT_TOL, max_iter=1000)
        wrong = {"B0": wrong0, "B1": _wrong(X_test @ coef1, y_test),
                 "B2": _wrong(X_test @ standard_erm(X, y, lam2, loss, HUBER_H, tol=FIT_TOL, max_iter=1000), y_test)}
        previous = None
        for stage, lam in zip(("B0", "B1", "B2"), (lam0, lam1, lam2)):
            low = high = np.nan
            if previous is not None:
                low, high, _ = paired_t_test(wrong[stage].astype(float) - wrong[previous].astype(float))
            rows.append({"data": key, "loss": loss, "stage": stage, "method": "nonprivate", "epsilon": np.inf,
                         "repeat": 0, "lam": float(lam), "error": float(np.count_nonzero(wrong[stage]) / y_test.size),
                         "diff_low": low, "diff_high": high})
            previous = stage
    return rows, grids


def private_rows(X, y, X_test, y_test, key, lam, repeats, loss="logistic", seed=DEFAULT_SEED, epsilons=EPSILONS,
                 methods=METHODS):
    """Rows of ``whole``: each method at each ε on the whole training set at ``lam``, for each repeat of
    ``repeats`` (an int ``k`` means ``range(k)``), with dplr's default release."""
    rows = []
    base = {"data": key, "loss": loss, "diff_low": np.nan, "diff_high": np.nan}
    learners = {"sensitivity": sensitivity_method, "objective": objective_perturbation}
    for r in (range(repeats) if np.ndim(repeats) == 0 else repeats):
        for method in methods:
            for e in epsilons:
                coef = learners[method](X, y, float(e), lam, loss, HUBER_H,
                                        random_state=task_stream(seed, key, loss, "whole", method, int(r),
                                                                 repr(float(e))))
                error = np.count_nonzero(_wrong(X_test @ coef, y_test)) / y_test.size
                rows.append({**base, "stage": "whole", "method": method, "epsilon": float(e), "repeat": int(r),
                             "lam": float(lam), "error": float(error)})
    return rows


def tuned_rows(real_rows, n_repeats):
    """Rows of ``tuned``: Algorithm 3's first ``n_repeats`` repeats of the real-data record's trade-off experiment
    (:func:`dplr.replication.real.record.read_record`'s rows), in this study's columns."""
    part = real_rows[(real_rows.part == "tradeoff") & (real_rows.method != "nonprivate")
                     & (real_rows.repeat < n_repeats)]
    if part.empty or part.repeat.max() < n_repeats - 1:
        raise ValueError(f"the real-data record has fewer than {n_repeats} repeats; write it again (make real-record).")
    return pd.DataFrame({"data": part.data, "loss": part.loss, "stage": "tuned", "method": part.method,
                         "epsilon": part.epsilon.astype(float), "repeat": part.repeat.astype(int),
                         "lam": part.lam_private.astype(float), "error": part.error_private.astype(float),
                         "diff_low": np.nan, "diff_high": np.nan}).reset_index(drop=True)


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
    """The study's results: ``rows`` (the record's: B0, B1, B2 and ``whole``), ``parts`` (:func:`decompose` of them
    with the real-data record's ``tuned`` rows), settings (``grids``: the cross-validation grid each stage used) and
    wall-clock seconds."""

    seed: int
    n_repeats: int
    rows: pd.DataFrame
    parts: pd.DataFrame
    n_test: dict
    grids: dict = field(default_factory=dict)
    wall_seconds: dict = field(default_factory=dict)


def study_from_rows(rows, tuned, seed, n_repeats, n_test, grids=None, wall_seconds=None):
    """A :class:`BaselineStudy` from its ``rows`` (a run's, or a record's) and Algorithm 3's (:func:`tuned_rows`)."""
    cells = set(zip(rows.data, rows.loss, rows.method, rows.epsilon))
    keep = np.array([cell in cells for cell in zip(tuned.data, tuned.loss, tuned.method, tuned.epsilon)], dtype=bool)
    tuned = tuned[keep & (tuned.repeat < n_repeats).to_numpy()]
    parts = decompose(pd.concat([rows, tuned], ignore_index=True))
    return BaselineStudy(seed=seed, n_repeats=n_repeats, rows=rows, parts=parts, n_test=dict(n_test),
                         grids=dict(grids or {}), wall_seconds=dict(wall_seconds or {}))


def run_baseline_study(real_rows, datasets=DATASETS, losses=LOSSES, n_repeats=DEFAULT_REPEATS, seed=DEFAULT_SEED,
                       epsilons=EPSILONS, subsample=None, data=None):
    """Run the study; ``real_rows`` are the real-data record's rows (Algorithm 3's repeats, :func:`tuned_rows`);
    ``subsample`` keeps that many training records (tests, quick looks: the decomposition then pairs runs on
    different training sets and means nothing). Returns a :class:`BaselineStudy`."""
    start = time.perf_counter()
    rows, n_test, seconds, grids = [], {}, {}, {}
    for key in datasets:
        X, y, X_test, y_test = study_data(key, seed, data, subsample)
        n_test[key] = len(y_test)
        t = time.perf_counter()
        chain, grid = nonprivate_chain(X, y, X_test, y_test, key, losses, seed)
        seconds[f"{key}-nonprivate"] = round(time.perf_counter() - t, 1)
        grids.update({f"{key}-{stage}": value for stage, value in grid.items()})
        rows += chain
        for loss in losses:
            lam = next(row["lam"] for row in chain if row["loss"] == loss and row["stage"] == "B2")
            t = time.perf_counter()
            rows += private_rows(X, y, X_test, y_test, key, lam, n_repeats, loss, seed, epsilons)
            seconds[f"{key}-{loss}-private"] = round(time.perf_counter() - t, 1)
    seconds["total"] = round(time.perf_counter() - start, 1)
    return study_from_rows(pd.DataFrame(rows), tuned_rows(real_rows, n_repeats), seed, n_repeats, n_test, grids,
                           seconds)


def recompute_rows(rows, key, losses=LOSSES, epsilons=(1.0,), methods=METHODS, repeat=0, seed=DEFAULT_SEED, data=None):
    """A slice of a record recomputed, for :func:`dplr.replication.baseline.record.check_against_record`: B2 (the
    refit at the record's λ) and the ``whole`` rows of ``repeat`` at ``epsilons`` for data set ``key``, each loss and
    method, at the record's λ (seconds: no cross-validation)."""
    X, y, X_test, y_test = study_data(key, seed, data)
    live = []
    for loss in losses:
        b2 = rows[(rows.data == key) & (rows.loss == loss) & (rows.stage == "B2")].iloc[0]
        coef = standard_erm(X, y, b2.lam, loss, HUBER_H, tol=FIT_TOL, max_iter=1000)
        live.append({**b2.to_dict(), "error": float(np.count_nonzero(_wrong(X_test @ coef, y_test)) / y_test.size)})
        live += private_rows(X, y, X_test, y_test, key, float(b2.lam), [repeat], loss, seed, epsilons, methods)
    return pd.DataFrame(live)

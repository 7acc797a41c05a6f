r"""The simulation study of NIPS 2008, Section 6 (pp. 6–7): protocol, readings and runner.

The paper's protocol (Section 6, p. 6, and the panel titles of Figure 2, p. 7):

* data: :math:`N = 17{,}500` points in :math:`d = 10` (:mod:`dplr.data`), separable ("uniform,
  margin 0.03") and unseparable ("noise 0.2 in margin 0.1");
* five-fold cross-validation; every private algorithm run with 200 random restarts per fold and its
  test error averaged over them;
* :math:`\lambda` tuned by five-fold cross-validation of standard logistic regression on a separate
  holdout of 10,000 points (the paper found :math:`\lambda = 0.01` for both data sets);
  :math:`\varepsilon = 0.1` in the learning curves (panel titles);
* Figure 1: test error, mean :math:`\pm` standard deviation "over five folds";
* Figure 2 a–b: learning curves, test error after each increment of 1000 training points;
* Figure 2 c–d: test error against :math:`\varepsilon` at :math:`n = 10{,}000`.

Our defaults, where the text is silent: the training size :math:`n` of the curves counts points of
the training part of each fold (the first :math:`n` of the fold's 14,000 training points; the test
part is always the fold's 3,500 test points), so the largest learning-curve point is the Figure 1
setting and :math:`n = 10{,}000` is a point of the learning curve; prediction is
:math:`\operatorname{sgn}(w^\top x)` (0 counts as :math:`-1`); the test error is the fraction of
misclassified test points.

Everything the experiments run is a :class:`Task` -- one data set, one fold, one training size,
one method, one :math:`\varepsilon`, one *reading* (:class:`Reading`) -- and returns the test error
of each of its restarts. :func:`run_tasks` runs any list of tasks with joblib or on a Dask cluster
(:mod:`dplr.parallel`). Every task draws its randomness from its own stream,
``numpy.random.SeedSequence(seed, spawn_key=key)``, where ``key`` is computed from the task's
identity (data set, fold, training size, algorithm) and never from the worker or the order of
execution; this is the mechanism ``SeedSequence.spawn`` uses, addressed by
content instead of by position. So results are identical for any ``n_jobs``. The key deliberately
leaves out :math:`\varepsilon`, the form of Algorithm 2, :math:`\lambda` and the algorithmic
readings: all of these reuse the same underlying Gamma and Gaussian draws (*common random
numbers*), which makes the curves smooth in :math:`\varepsilon` and the comparison of the NIPS 2008
and corrected forms a paired one (with :math:`\Delta = 0`, the corrected noise vector is the NIPS
2008 one scaled by :math:`\varepsilon/\varepsilon'`).
"""
from __future__ import annotations

import dataclasses
import time
import zlib
from dataclasses import dataclass, field
from functools import lru_cache

import numpy as np
import pandas as pd
from sklearn.model_selection import KFold

from dplr.algorithms import (
    objective_perturbation,
    objective_perturbation_calibration,
    sensitivity_method,
    sensitivity_method_noise_rate,
    standard_erm,
)
from dplr.data import make_separable, make_unseparable
from dplr.parallel import run_calls
from dplr.solver import solve_regularized_erm
from dplr.stats import jackknife_se, t_interval

__all__ = [
    "DEFAULT_SEED",
    "PAPER_N",
    "PAPER_D",
    "PAPER_FOLDS",
    "PAPER_RESTARTS",
    "PAPER_LAMBDA",
    "PAPER_EPSILON",
    "PAPER_HOLDOUT",
    "LEARNING_CURVE_SIZES",
    "EPSILON_CURVE_N",
    "EPSILON_GRID",
    "LAMBDA_GRID",
    "STD_READINGS",
    "DataSpec",
    "Reading",
    "Task",
    "task_seed_sequence",
    "cv_splits",
    "test_errors",
    "private_classifiers",
    "run_task",
    "run_tasks",
    "cell_errors",
    "summarise_cell",
    "LambdaTuning",
    "tune_lambda",
    "figure1_tasks",
    "learning_curve_tasks",
    "epsilon_curve_tasks",
    "curve_table",
    "correction_effect",
    "effective_epsilon",
    "interpolate_log_epsilon",
    "expand",
    "method_label",
    "Figure1Variant",
    "FIGURE1_VARIANTS",
    "Replication",
    "run_replication",
]

DEFAULT_SEED = 20081208
PAPER_N = 17_500
PAPER_D = 10
PAPER_FOLDS = 5
PAPER_RESTARTS = 200
PAPER_LAMBDA = 0.01
PAPER_EPSILON = 0.1
PAPER_HOLDOUT = 10_000
#: Figure 2 a–b: "after each increment of 1000 points", up to the 14,000 training points of a fold.
LEARNING_CURVE_SIZES = tuple(range(1000, 14_001, 1000))
#: Figure 2 c–d: "n=10,000" (panel titles).
EPSILON_CURVE_N = 10_000
#: Figure 2 c–d plot ε from 0 to 0.2; the paper does not list the ε it ran. Finer where the curves bend.
EPSILON_GRID = (0.005, 0.01, 0.015, 0.02, 0.03, 0.04, 0.06, 0.08, 0.1, 0.12, 0.15, 0.2)
#: Candidate λ for the tuning on the holdout (half-decades from 1e-5 to 1).
LAMBDA_GRID = tuple(float(10.0**e) for e in np.arange(-5.0, 0.01, 0.5))

_KINDS = ("separable", "unseparable")
_METHODS = ("standard", "sensitivity", "objective")


# --------------------------------------------------------------------------------------------------
# Specifications
# --------------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class DataSpec:
    """One simulated data set of Section 6 under one data reading (see :mod:`dplr.data`).

    ``kind`` is ``"separable"`` or ``"unseparable"``; ``role`` is ``"main"`` (the N = 17,500 points
    of the cross-validation) or ``"holdout"`` (the separate 10,000 points for tuning λ), which draw
    from different random streams. The random stream depends on ``kind`` and ``role`` only, so the
    data readings (``support``, ``margin_method``, ``separator``) are compared on the same draws.
    """

    kind: str
    n: int = PAPER_N
    d: int = PAPER_D
    support: str = "sphere"
    margin_method: str = "rejection"
    separator: str | None = None
    role: str = "main"

    def __post_init__(self):
        if self.kind not in _KINDS:
            raise ValueError(f"kind must be one of {_KINDS}, got {self.kind!r}.")
        if self.separator not in (None, "random"):
            raise ValueError("separator must be None (e_1) or 'random' in an experiment specification.")

    def generate(self, seed=DEFAULT_SEED):
        """Return ``(X, y)``; identical for identical specifications and seeds."""
        return _generate(self, int(seed))

    def label(self):
        parts = [self.kind]
        if self.support != "sphere":
            parts.append(self.support)
        if self.kind == "separable" and self.margin_method != "rejection":
            parts.append(self.margin_method)
        if self.separator is not None:
            parts.append(f"{self.separator} separator")
        return ", ".join(parts)


@lru_cache(maxsize=16)
def _generate(spec: DataSpec, seed: int):
    rng = np.random.default_rng(task_seed_sequence(seed, "data", spec.role, spec.kind))
    if spec.kind == "separable":
        X, y = make_separable(spec.n, spec.d, separator=spec.separator, random_state=rng, support=spec.support,
                              margin_method=spec.margin_method)
    else:
        X, y = make_unseparable(spec.n, spec.d, separator=spec.separator, random_state=rng, support=spec.support)
    X.setflags(write=False)
    y.setflags(write=False)
    return X, y


@dataclass(frozen=True)
class Reading:
    r"""How the paper's code may have run the algorithms, where the text leaves it open.

    ``gamma``
        ``"scale"`` (default): the paper's :math:`\Gamma(d, \theta)` has *scale* :math:`\theta`
        (:math:`\theta = 2/(n\lambda\varepsilon)` for Algorithm 1, :math:`2/\varepsilon` for
        Algorithm 2), the only reading under which the density is :math:`\propto e^{-\lVert
        b\rVert/\theta}` as the algorithms state (and MATLAB's ``gamrnd(a, b)`` convention).
        ``"rate"``: :math:`\theta` read as a rate, i.e. norm :math:`\sim \Gamma(d, \text{scale} =
        1/\theta)`.
    ``objective``
        ``"mean"`` (default): :math:`\frac\lambda2\lVert w\rVert^2 + \frac{b^\top w}{n} +
        \frac1n\sum_i\ell_i`, as Algorithm 2 is printed. ``"sum"``: :math:`\frac\lambda2\lVert
        w\rVert^2 + b^\top w + \sum_i \ell_i`; dividing by :math:`n` this is the mean form with
        :math:`\lambda \to \lambda/n` and :math:`b` unchanged (and :math:`\Delta \to \Delta/n`).
        ``"sum_loss"``: :math:`\frac\lambda2\lVert w\rVert^2 + \frac{b^\top w}{n} + \sum_i\ell_i`
        (the objective as written on the authors' talk slides); dividing by :math:`n`, the mean form
        with :math:`\lambda \to \lambda/n`, :math:`b \to b/n`. Under both sum readings standard
        logistic regression and Algorithm 1's :math:`w^*` use :math:`\lambda/n` too, while the noise
        keeps the printed calibration (:math:`\Gamma(d, 2/(n\lambda\varepsilon))`, :math:`\Gamma(d,
        2/\varepsilon)`).
    ``noise_n``
        ``"train"`` (default): the :math:`n` in the noise calibration is the number of training
        points. ``"total"``: it is the data set size N (17,500) while training uses the fold's
        training part.
    ``cv``
        ``"standard"`` (default): train on four folds, test on the fifth. ``"swapped"``: train on the
        one fold (3,500 points) and test on the other four.
    """

    gamma: str = "scale"
    objective: str = "mean"
    noise_n: str = "train"
    cv: str = "standard"

    def __post_init__(self):
        for name, allowed in (("gamma", ("scale", "rate")), ("objective", ("mean", "sum", "sum_loss")),
                              ("noise_n", ("train", "total")), ("cv", ("standard", "swapped"))):
            if getattr(self, name) not in allowed:
                raise ValueError(f"Reading.{name} must be one of {allowed}, got {getattr(self, name)!r}.")

    @property
    def is_default(self):
        return self == Reading()


@dataclass(frozen=True)
class Task:
    """One unit of work: one fold of one cell. ``run_task`` returns its restarts' test errors.

    ``n_train=None`` uses the fold's whole training part. ``form`` is ``"nips2008"`` or
    ``"corrected"`` for ``method="objective"`` and ``None`` otherwise; ``epsilon`` is ``None``
    for ``method="standard"`` (which has one "restart").
    """

    data: DataSpec
    fold: int
    method: str
    lam: float = PAPER_LAMBDA
    epsilon: float | None = None
    form: str | None = None
    n_train: int | None = None
    reading: Reading = field(default_factory=Reading)
    n_restarts: int = PAPER_RESTARTS
    n_splits: int = PAPER_FOLDS

    def __post_init__(self):
        if self.method not in _METHODS:
            raise ValueError(f"method must be one of {_METHODS}, got {self.method!r}.")
        if self.method == "standard":
            object.__setattr__(self, "epsilon", None)
            object.__setattr__(self, "form", None)
            object.__setattr__(self, "n_restarts", 1)
        elif self.epsilon is None:
            raise ValueError("private methods need epsilon.")
        if self.method == "objective" and self.form not in ("nips2008", "corrected"):
            raise ValueError("method='objective' needs form='nips2008' or 'corrected'.")
        if self.method == "sensitivity":
            object.__setattr__(self, "form", None)
        if not 0 <= self.fold < self.n_splits:
            raise ValueError(f"fold must be in [0, {self.n_splits}), got {self.fold}.")

    @property
    def cell(self):
        """The task without its fold: the unit whose five folds make one table entry or curve point."""
        return dataclasses.replace(self, fold=0)

    @property
    def cost(self):
        """Rough relative cost, for scheduling the largest tasks first."""
        n = self.n_train or self.data.n * (self.n_splits - 1) // self.n_splits
        if self.reading.cv == "swapped":
            n = self.data.n // self.n_splits
        factor = {"standard": 0.05, "sensitivity": 0.1, "objective": 1.0}[self.method]
        if self.method == "objective" and self.reading.objective != "mean":
            factor *= 3
        return n * factor


# --------------------------------------------------------------------------------------------------
# Random streams, splits and errors
# --------------------------------------------------------------------------------------------------
def _key_part(part) -> int:
    if isinstance(part, (bool, np.bool_)):
        return int(part)
    if isinstance(part, (int, np.integer)):
        if part < 0:
            raise ValueError("integer key parts must be non-negative.")
        return int(part)
    if part is None:
        return 0xFFFFFFFF
    return zlib.crc32(str(part).encode("utf-8"))


def task_seed_sequence(seed, *key):
    """``SeedSequence(seed, spawn_key=key)`` with strings mapped to stable 32-bit integers (CRC-32).

    Equal keys give equal streams in any process; different keys give independent streams, exactly
    as the children of ``SeedSequence(seed).spawn`` (which differ only in ``spawn_key``).
    """
    return np.random.SeedSequence(int(seed), spawn_key=tuple(_key_part(p) for p in key))


def _restart_stream(seed, task: Task):
    algorithm = "objective" if task.method == "objective" else task.method
    return np.random.default_rng(task_seed_sequence(
        seed, "restarts", task.data.role, task.data.kind, task.fold, task.n_train, algorithm, task.reading.cv))


def cv_splits(data: DataSpec, n_splits=PAPER_FOLDS, seed=DEFAULT_SEED):
    """The folds: a list of ``(train_idx, test_idx)`` from ``sklearn.model_selection.KFold(shuffle=True)``.

    The shuffle is seeded from ``seed`` and the data set's kind and role, so all methods and
    readings of one data set share the folds.
    """
    state = int(task_seed_sequence(seed, "folds", data.role, data.kind).generate_state(1)[0])
    return list(KFold(n_splits, shuffle=True, random_state=state).split(np.zeros((data.n, 1))))


def test_errors(W, X, y):
    r"""Test error of each classifier (row of ``W``): the fraction of rows with :math:`\operatorname{sgn}(w^\top x) \ne y`."""
    W = np.atleast_2d(W)
    predictions = np.where(X @ W.T > 0, 1.0, -1.0)
    return np.mean(predictions != np.asarray(y)[:, None], axis=0)


# --------------------------------------------------------------------------------------------------
# The algorithms under a reading
# --------------------------------------------------------------------------------------------------
def _noise(rng, theta, d, k, gamma_reading):
    """k vectors with uniform direction and norm Γ(d, θ): θ a scale (default) or, under "rate", a rate."""
    scale = theta if gamma_reading == "scale" else 1.0 / theta
    norms = rng.gamma(shape=d, scale=scale, size=k)
    directions = rng.standard_normal((k, d))
    directions /= np.linalg.norm(directions, axis=1, keepdims=True)
    return norms[:, None] * directions


def private_classifiers(X, y, method, lam, epsilon=None, form=None, reading=Reading(), n_draws=1,
                        random_state=None, n_total=None, force_composed=False):
    r"""Classifiers of one method under one :class:`Reading`, shape ``(n_draws, d)`` (``(1, d)`` for standard LR).

    Under the default reading this calls :func:`dplr.algorithms.standard_erm`,
    :func:`~dplr.algorithms.sensitivity_method` and :func:`~dplr.algorithms.objective_perturbation`
    as they are. Any other reading is composed from :func:`dplr.solver.solve_regularized_erm` and
    the calibration of :func:`~dplr.algorithms.objective_perturbation_calibration`, with the changes
    :class:`Reading` documents; ``force_composed=True`` takes that path under the default reading
    too (the unit tests check that it then gives the same classifiers draw for draw).
    ``n_total`` is the data set size N used by ``Reading(noise_n="total")``.
    """
    n, d = X.shape
    if reading.is_default and not force_composed:
        if method == "standard":
            return standard_erm(X, y, lam)[None, :]
        if method == "sensitivity":
            return sensitivity_method(X, y, epsilon, lam, n_draws=n_draws, random_state=random_state)
        return objective_perturbation(X, y, epsilon, lam, form=form, n_draws=n_draws, random_state=random_state)

    rng = np.random.default_rng(random_state) if not isinstance(random_state, np.random.Generator) else random_state
    n_noise = n if reading.noise_n == "train" else int(n_total)
    lam_fit = lam if reading.objective == "mean" else lam / n
    if method == "standard":
        return solve_regularized_erm(X, y, lam_fit).coef[None, :]
    if method == "sensitivity":
        w_star = solve_regularized_erm(X, y, lam_fit).coef
        theta = 1.0 / sensitivity_method_noise_rate(n_noise, lam, epsilon)
        return w_star + _noise(rng, theta, d, n_draws, reading.gamma)
    cal = objective_perturbation_calibration(epsilon, n_noise, lam, form=form)
    b = _noise(rng, 1.0 / cal.noise_rate, d, n_draws, reading.gamma)
    delta = cal.delta
    if reading.objective == "sum":
        delta = delta / n
    elif reading.objective == "sum_loss":
        b, delta = b / n, delta / n
    return solve_regularized_erm(X, y, lam_fit, b=b, delta=delta).coef


def run_task(task: Task, seed=DEFAULT_SEED):
    """Run one task; returns the test errors of its restarts, shape ``(n_restarts,)``."""
    X, y = task.data.generate(seed)
    train, test = cv_splits(task.data, task.n_splits, seed)[task.fold]
    if task.reading.cv == "swapped":
        train, test = test, train
    if task.n_train is not None:
        if task.n_train > train.size:
            raise ValueError(f"n_train={task.n_train} exceeds the {train.size} training points of a fold.")
        train = train[:task.n_train]
    rng = _restart_stream(seed, task) if task.method != "standard" else None
    W = private_classifiers(X[train], y[train], task.method, task.lam, task.epsilon, task.form, task.reading,
                            n_draws=task.n_restarts, random_state=rng, n_total=task.data.n)
    return test_errors(W, X[test], y[test])


def _timed(task, seed):
    start = time.perf_counter()
    errors = run_task(task, seed)
    return errors, time.perf_counter() - start


def run_tasks(tasks, seed=DEFAULT_SEED, n_jobs=1):
    """Run tasks (duplicates once) in parallel; returns ``(errors, seconds)``, two dicts keyed by task.

    The largest tasks go first for load balance; no result depends on the order or on ``n_jobs``.
    """
    unique = sorted(set(tasks), key=lambda t: -t.cost)
    outputs = run_calls([(_timed, (t, seed)) for t in unique], n_jobs)
    errors = {t: out[0] for t, out in zip(unique, outputs)}
    seconds = {t: out[1] for t, out in zip(unique, outputs)}
    return errors, seconds


# --------------------------------------------------------------------------------------------------
# Collecting and summarising
# --------------------------------------------------------------------------------------------------
def cell_errors(errors, cell: Task):
    """The ``(n_folds, n_restarts)`` array of test errors of one cell (a task with any fold)."""
    return np.vstack([errors[dataclasses.replace(cell, fold=f)] for f in range(cell.n_splits)])


def _std_fold(E, ddof=1):
    return float(np.std(E.mean(axis=1), ddof=ddof))


#: Readings of Figure 1's "standard deviation over five folds", as functions of the (folds, restarts) errors.
STD_READINGS = {
    "fold": ("sample std (ddof 1) of the five fold means (each fold averaged over its restarts)",
             lambda E: _std_fold(E, 1)),
    "fold_ddof0": ("population std (ddof 0) of the five fold means", lambda E: _std_fold(E, 0)),
    "all_runs": ("sample std over all folds x restarts test errors",
                 lambda E: float(np.std(E.ravel(), ddof=1)) if E.size > 1 else 0.0),
    "within_fold": ("mean over folds of the std over restarts within a fold",
                    lambda E: float(np.mean(np.std(E, axis=1, ddof=1))) if E.shape[1] > 1 else 0.0),
    "per_restart": ("std over the five folds of each restart's errors, averaged over restarts",
                    lambda E: float(np.mean(np.std(E, axis=0, ddof=1)))),
}


def summarise_cell(E, level=0.95):
    """Mean, 95% t-interval over folds, jackknife standard errors and every std reading of one cell."""
    fold_means = E.mean(axis=1)
    low, high = t_interval(fold_means, level)
    summary = {"mean": float(fold_means.mean()), "ci_low": low, "ci_high": high,
               "se": float(jackknife_se(E, lambda F: F.mean()))}
    for name, (_, statistic) in STD_READINGS.items():
        summary[f"std_{name}"] = statistic(E)
        summary[f"std_{name}_se"] = float(jackknife_se(E, statistic))
    return summary


# --------------------------------------------------------------------------------------------------
# λ tuning
# --------------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class LambdaTuning:
    """Five-fold CV error of standard logistic regression on the holdout, per λ.

    ``best`` minimises the mean CV error (ties: the largest such λ, the most regularised and so the
    least noisy privately); ``one_se`` is the largest λ whose mean error is within one standard error
    of the minimum (Breiman's one-standard-error rule).
    """

    lambdas: tuple
    fold_errors: np.ndarray  # (n_folds, n_lambdas)
    best: float
    one_se: float

    @property
    def mean(self):
        return self.fold_errors.mean(axis=0)

    @property
    def se(self):
        return self.fold_errors.std(axis=0, ddof=1) / np.sqrt(self.fold_errors.shape[0])

    def minimisers(self, atol=1e-12):
        return tuple(lam for lam, m in zip(self.lambdas, self.mean) if m <= self.mean.min() + atol)

    def within_one_se(self, lam):
        """Whether ``lam`` (a grid value) has mean CV error within one standard error of the minimum."""
        j = int(np.argmin(np.abs(np.log(np.asarray(self.lambdas)) - np.log(lam))))
        i = int(np.argmin(self.mean))
        return bool(self.mean[j] <= self.mean[i] + self.se[i] + 1e-12)


def _tuning_fold(data, fold, lambdas, seed, n_splits):
    X, y = data.generate(seed)
    train, test = cv_splits(data, n_splits, seed)[fold]
    return [float(test_errors(standard_erm(X[train], y[train], lam), X[test], y[test])[0]) for lam in lambdas]


def _tuning_result(lambdas, rows):
    E = np.asarray(rows, dtype=float)
    mean = E.mean(axis=0)
    se = E.std(axis=0, ddof=1) / np.sqrt(E.shape[0])
    i = int(np.argmin(mean))
    ties = np.flatnonzero(mean <= mean[i] + 1e-12)
    within = np.flatnonzero(mean <= mean[i] + se[i] + 1e-12)
    return LambdaTuning(tuple(lambdas), E, float(lambdas[ties.max()]), float(lambdas[within.max()]))


def tune_lambda(kind, lambdas=LAMBDA_GRID, n_holdout=PAPER_HOLDOUT, n_splits=PAPER_FOLDS, seed=DEFAULT_SEED,
                n_jobs=1, data=None):
    """Tune λ as Section 6 describes: five-fold CV of standard logistic regression on a separate holdout.

    The holdout is its own data set (``role="holdout"``, its own random stream), never part of the
    N = 17,500 points of the experiments.
    """
    data = data or DataSpec(kind, n=n_holdout, role="holdout")
    rows = _parallel([(_tuning_fold, (data, f, lambdas, seed, n_splits)) for f in range(n_splits)], n_jobs)
    return _tuning_result(lambdas, rows)


# --------------------------------------------------------------------------------------------------
# Experiment plans
# --------------------------------------------------------------------------------------------------
def _method_cells(data, lam, epsilon, n_train, reading, forms, n_restarts, n_splits, standard=True):
    cells = []
    if standard:
        cells.append(Task(data, 0, "standard", lam, n_train=n_train, reading=reading, n_splits=n_splits))
    cells.append(Task(data, 0, "sensitivity", lam, epsilon, n_train=n_train, reading=reading,
                      n_restarts=n_restarts, n_splits=n_splits))
    for form in forms:
        cells.append(Task(data, 0, "objective", lam, epsilon, form, n_train=n_train, reading=reading,
                          n_restarts=n_restarts, n_splits=n_splits))
    return cells


def _all_folds(cells):
    return [dataclasses.replace(c, fold=f) for c in cells for f in range(c.n_splits)]


def figure1_tasks(data, lam=PAPER_LAMBDA, epsilon=PAPER_EPSILON, forms=("nips2008", "corrected"),
                  reading=Reading(), n_restarts=PAPER_RESTARTS, n_splits=PAPER_FOLDS):
    """Cells (fold 0) of Figure 1 for one data set: standard LR, Algorithm 1, Algorithm 2 in ``forms``."""
    return _method_cells(data, lam, epsilon, None, reading, forms, n_restarts, n_splits)


def learning_curve_tasks(data, sizes=LEARNING_CURVE_SIZES, lam=PAPER_LAMBDA, epsilon=PAPER_EPSILON,
                         forms=("nips2008", "corrected"), n_restarts=PAPER_RESTARTS, n_splits=PAPER_FOLDS):
    """Cells of Figure 2 a–b: every method at every training size (the largest is Figure 1's cell)."""
    full = data.n * (n_splits - 1) // n_splits
    return [c for n in sizes for c in _method_cells(data, lam, epsilon, None if n == full else n, Reading(), forms,
                                                    n_restarts, n_splits)]


def epsilon_curve_tasks(data, epsilons=EPSILON_GRID, n_train=EPSILON_CURVE_N, lam=PAPER_LAMBDA,
                        forms=("nips2008", "corrected"), n_restarts=PAPER_RESTARTS, n_splits=PAPER_FOLDS):
    """Cells of Figure 2 c–d: the private methods at every ε, training size ``n_train``."""
    return [c for eps in epsilons for c in _method_cells(data, lam, eps, n_train, Reading(), forms, n_restarts,
                                                         n_splits, standard=False)]


def expand(cells):
    """All fold tasks of a list of cells."""
    return _all_folds(cells)



def method_label(task: Task):
    """'Standard LR', 'Sensitivity method', 'New method (NIPS 2008)' or 'New method (corrected)'."""
    if task.method == "standard":
        return "Standard LR"
    if task.method == "sensitivity":
        return "Sensitivity method"
    return "New method (NIPS 2008)" if task.form == "nips2008" else "New method (corrected)"



def curve_table(errors, cells, x):
    """Tidy table of a curve: one row per cell with ``x`` (``"n_train"`` or ``"epsilon"``), mean and 95% CI."""
    rows = []
    for cell in cells:
        s = summarise_cell(cell_errors(errors, cell))
        n_train = cell.n_train or cell.data.n * (cell.n_splits - 1) // cell.n_splits
        rows.append({"data": cell.data.kind, "method": method_label(cell), "n_train": n_train,
                     "epsilon": cell.epsilon, "mean": s["mean"], "ci_low": s["ci_low"], "ci_high": s["ci_high"]})
    return pd.DataFrame(rows).sort_values(["data", "method", x]).reset_index(drop=True)


def correction_effect(errors, cells):
    """Paired effect of the correction: per cell with ``form="nips2008"``, corrected minus NIPS 2008.

    Both forms share their noise draws (common random numbers), so the per-fold differences of the
    fold means estimate the effect with small variance. Returns one row per cell with
    the calibration (ε', Δ), the mean difference and its 95% t-interval over folds.
    """
    rows = []
    for cell in cells:
        if cell.method != "objective" or cell.form != "nips2008":
            continue
        corrected = dataclasses.replace(cell, form="corrected")
        diff = cell_errors(errors, corrected).mean(axis=1) - cell_errors(errors, cell).mean(axis=1)
        low, high = t_interval(diff)
        n_train = cell.n_train or cell.data.n * (cell.n_splits - 1) // cell.n_splits
        cal = objective_perturbation_calibration(cell.epsilon, n_train, cell.lam, form="corrected")
        rows.append({"data": cell.data.kind, "n_train": n_train, "epsilon": cell.epsilon,
                     "epsilon_prime": cal.epsilon_prime, "delta": cal.delta,
                     "difference": float(diff.mean()), "ci_low": low, "ci_high": high,
                     "significant": bool(low > 0 or high < 0)})
    return pd.DataFrame(rows)


def interpolate_log_epsilon(epsilons, curve_means, at):
    """A curve's value at ``at`` by linear interpolation in log ε (``at`` inside the grid)."""
    eps = np.asarray(epsilons, dtype=float)
    order = np.argsort(eps)
    if not eps[order][0] <= at <= eps[order][-1]:
        raise ValueError(f"{at} is outside the grid [{eps.min()}, {eps.max()}].")
    return float(np.interp(np.log(at), np.log(eps[order]), np.asarray(curve_means, dtype=float)[order]))


def effective_epsilon(epsilons, curve_means, target):
    """The ε at which a decreasing error-vs-ε curve equals ``target`` (linear interpolation in log ε).

    Returns ``nan`` when ``target`` is outside the range of the curve.
    """
    eps = np.asarray(epsilons, dtype=float)
    means = np.asarray(curve_means, dtype=float)
    order = np.argsort(eps)
    eps, means = eps[order], means[order]
    if not (means.min() <= target <= means.max()):
        return float("nan")
    # errors decrease with ε: interpolate log ε as a function of error on the reversed arrays
    means_rev, log_eps_rev = means[::-1], np.log(eps[::-1])
    keep = np.concatenate([[True], np.diff(means_rev) > 0])
    return float(np.exp(np.interp(target, means_rev[keep], log_eps_rev[keep])))


# --------------------------------------------------------------------------------------------------
# The investigation: Figure 1 under the readings the paper leaves open
# --------------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class Figure1Variant:
    """Figure 1 re-run under one reading (Algorithm 2 in its NIPS 2008 form, the paper's).

    ``lam=None`` uses the λ our tuning selects (:func:`tune_lambda`, ``best``) for each data set.
    ``data_options`` are :class:`DataSpec` fields, e.g. ``(("support", "ball"),)``; ``kinds`` the
    data sets the reading can change.
    """

    name: str
    description: str
    epsilon: float = PAPER_EPSILON
    lam: float | None = PAPER_LAMBDA
    reading: Reading = Reading()
    data_options: tuple = ()
    kinds: tuple = _KINDS

    def cells(self, tuned=None, n_restarts=PAPER_RESTARTS, n_total=PAPER_N):
        cells = []
        for kind in self.kinds:
            data = DataSpec(kind, n=n_total, **dict(self.data_options))
            lam = self.lam if self.lam is not None else tuned[kind]
            cells += figure1_tasks(data, lam, self.epsilon, ("nips2008",), self.reading, n_restarts)
        return cells


#: ε values of Figure 1 runs used to locate the ε behind the published means (with the default 0.1).
FIGURE1_EPSILONS = (0.01, 0.015, 0.02, 0.03, 0.05)

FIGURE1_VARIANTS = (
    Figure1Variant("default", "the protocol as printed: ε = 0.1, sphere, rejection, Γ scale, n = training fold, mean "
                              "objective"),
    *(Figure1Variant(f"epsilon={eps:g}", f"Figure 1 run at ε = {eps:g} (its caption gives no ε)", epsilon=eps)
      for eps in FIGURE1_EPSILONS),
    Figure1Variant("gamma=rate", "Γ(d, θ) read with θ a rate: noise norms Γ(d, scale 1/θ)", reading=Reading(gamma="rate")),
    Figure1Variant("n=N", "noise calibrated with n = N = 17,500 instead of the 14,000 training points",
                   reading=Reading(noise_n="total")),
    Figure1Variant("cv=swapped", "train on one fold (n = 3,500), test on the other four", reading=Reading(cv="swapped")),
    Figure1Variant("objective=sum", "λ/2‖w‖² + bᵀw + Σℓ (sum objective; ≡ mean form with λ/n)",
                   reading=Reading(objective="sum")),
    Figure1Variant("objective=sum_loss", "λ/2‖w‖² + bᵀw/n + Σℓ (the talk slides' form; ≡ mean form with λ/n and b/n)",
                   reading=Reading(objective="sum_loss")),
    Figure1Variant("lambda=tuned", "λ from our tuning on the holdout instead of 0.01", lam=None),
    Figure1Variant("support=ball", "points uniform in the solid ball", data_options=(("support", "ball"),)),
    Figure1Variant("margin=projection", "band emptied by moving its points to the band's edges",
                   data_options=(("margin_method", "projection"),), kinds=("separable",)),
    Figure1Variant("margin=shift", "band emptied by pushing all points away from the separator",
                   data_options=(("margin_method", "shift"),), kinds=("separable",)),
    Figure1Variant("separator=random", "a random separator instead of e₁", data_options=(("separator", "random"),)),
)


@dataclass
class Replication:
    """Everything the replication chapter shows: errors of every task, timings and the λ tuning."""

    seed: int
    n_restarts: int
    errors: dict
    seconds: dict
    parts: dict  # part name -> list of cells
    tuning: dict  # kind -> LambdaTuning
    wall_seconds: dict
    variants: tuple = FIGURE1_VARIANTS
    fitted_epsilon: float | None = None

    # -- Figure 1 ----------------------------------------------------------------------------------
    def figure1_cell(self, kind, method, form="nips2008", variant="default"):
        for cell in self.parts["figure1"] if variant == "default" else self.parts[f"variant:{variant}"]:
            if cell.data.kind == kind and cell.method == method and (method != "objective" or cell.form == form):
                return cell
        raise KeyError((kind, method, form, variant))

    def figure1_table(self, variant="default", form="nips2008", std_reading="fold"):
        """One row per published Figure 1 entry: ours, our 95% CI, the published value and the verdicts."""
        from dplr.published import FIGURE1, replication_verdict

        statistic = STD_READINGS[std_reading][1]
        rows = []
        variant_spec = next(v for v in self.variants if v.name == variant)
        for pub in FIGURE1:
            if pub.data not in variant_spec.kinds:
                continue
            cell = self.figure1_cell(pub.data, pub.method, form, variant)
            E = cell_errors(self.errors, cell)
            s = summarise_cell(E)
            mean_verdict = replication_verdict(pub.mean, E, lambda F: F.mean(axis=1).mean(), pub.decimals)
            std_verdict = replication_verdict(pub.std, E, statistic, pub.decimals)
            rows.append({"data": pub.data, "method": pub.method, "published": pub.printed,
                         "published_mean": pub.mean, "published_std": pub.std,
                         "mean": s["mean"], "ci_low": s["ci_low"], "ci_high": s["ci_high"],
                         "std": statistic(E), "mean_low": mean_verdict.low, "mean_high": mean_verdict.high,
                         "mean_reproduced": mean_verdict.reproduced, "std_low": std_verdict.low,
                         "std_high": std_verdict.high, "std_reproduced": std_verdict.reproduced})
        return pd.DataFrame(rows)

    def readings_summary(self, std_reading="fold"):
        """Per variant: how many published means and stds its Figure 1 reproduces."""
        rows = []
        for variant in self.variants:
            table = self.figure1_table(variant.name, std_reading=std_reading)
            private = table[table.method != "standard"]
            rows.append({"variant": variant.name, "description": variant.description,
                         "means": int(table.mean_reproduced.sum()), "stds": int(table.std_reproduced.sum()),
                         "private_means": int(private.mean_reproduced.sum()), "numbers": len(table)})
        return pd.DataFrame(rows)

    def effective_epsilons(self):
        """Per private Figure 1 cell: the ε at which our mean error equals the published mean.

        Interpolates (linearly in log ε) over the Figure 1 runs at ``FIGURE1_EPSILONS`` and the default ε.
        """
        from dplr.published import FIGURE1

        grid_names = {"default"} | {f"epsilon={eps:g}" for eps in FIGURE1_EPSILONS}
        eps_variants = [v for v in self.variants if v.name in grid_names]
        rows = []
        for pub in FIGURE1:
            if pub.method == "standard":
                continue
            grid, means = [], []
            for v in eps_variants:
                grid.append(v.epsilon)
                means.append(float(cell_errors(self.errors, self.figure1_cell(pub.data, pub.method, "nips2008",
                                                                              v.name)).mean()))
            rows.append({"data": pub.data, "method": pub.method, "published_mean": pub.mean,
                         "epsilon_hat": effective_epsilon(grid, means, pub.mean)})
        return pd.DataFrame(rows)

    # -- curves ------------------------------------------------------------------------------------
    def learning_curves(self):
        return curve_table(self.errors, self.parts["learning"], "n_train")

    def epsilon_curves(self):
        return curve_table(self.errors, self.parts["epsilon"], "epsilon")

    def correction(self):
        """Corrected minus NIPS 2008 Algorithm 2, for every Figure 1, learning-curve and ε-curve cell."""
        cells = list(dict.fromkeys(self.parts["figure1"] + self.parts["learning"] + self.parts["epsilon"]))
        return correction_effect(self.errors, cells)

    def _fold_difference(self, better, worse):
        """Per-fold difference of fold-mean errors (worse minus better) and its 95% t-interval."""
        diff = cell_errors(self.errors, worse).mean(axis=1) - cell_errors(self.errors, better).mean(axis=1)
        low, high = t_interval(diff)
        return float(diff.mean()), low, high

    def claims(self, form="nips2008"):
        """The text's qualitative claims (:data:`dplr.published.TEXT_CLAIMS`), checked on our runs.

        "A is better than B" means the 95% t-interval of the per-fold difference of mean test errors
        (B minus A; folds paired) lies above 0. ``holds`` is the claim's verdict for that data set.
        """
        from dplr.published import TEXT_CLAIMS

        rows = []
        for kind in _KINDS:
            fig1 = {c.method: c for c in self.parts["figure1"]
                    if c.data.kind == kind and (c.method != "objective" or c.form == form)}
            d_ns, lo_ns, _ = self._fold_difference(fig1["standard"], fig1["objective"])
            d_os, lo_os, _ = self._fold_difference(fig1["objective"], fig1["sensitivity"])
            rows.append({"claim": "figure1_order", "data": kind, "holds": bool(lo_ns > 0 and lo_os > 0),
                         "measured": f"new − standard = {d_ns:.4f} (95% CI low {lo_ns:.4f}); "
                                     f"sensitivity − new = {d_os:.4f} (low {lo_os:.4f})"})
            curve = [c for c in self.parts["learning"] if c.data.kind == kind]
            by_n = {}
            for c in curve:
                n = c.n_train or c.data.n * (c.n_splits - 1) // c.n_splits
                if c.method == "sensitivity" or (c.method == "objective" and c.form == form):
                    by_n.setdefault(n, {})[c.method] = c
            sizes = sorted(by_n)
            better = {n: self._fold_difference(by_n[n]["objective"], by_n[n]["sensitivity"]) for n in sizes}
            final = sizes[-1]
            rows.append({"claim": "learning_final", "data": kind, "holds": bool(better[final][1] > 0),
                         "measured": f"n = {final}: sensitivity − new = {better[final][0]:.4f} "
                                     f"(95% CI {better[final][1]:.4f} to {better[final][2]:.4f})"})
            smaller = [n for n in sizes[:-1]]
            wins = sum(better[n][1] > 0 for n in smaller)
            rows.append({"claim": "learning_smaller", "data": kind, "holds": bool(wins > len(smaller) / 2),
                         "measured": f"new method significantly better at {wins} of {len(smaller)} smaller sizes"})
            by_eps = {}
            for c in self.parts["epsilon"]:
                if c.data.kind == kind and (c.method == "sensitivity" or (c.method == "objective" and c.form == form)):
                    by_eps.setdefault(c.epsilon, {})[c.method] = c
            eps = sorted(by_eps)
            diffs = {e: self._fold_difference(by_eps[e]["objective"], by_eps[e]["sensitivity"]) for e in eps}
            wins = sum(diffs[e][1] > 0 for e in eps)
            losses = [e for e in eps if diffs[e][2] < 0]
            rows.append({"claim": "epsilon_majority", "data": kind, "holds": bool(wins > len(eps) / 2),
                         "measured": f"new method significantly better at {wins} of {len(eps)} ε values"})
            smallest = eps[0]
            sens_mean = float(cell_errors(self.errors, by_eps[smallest]["sensitivity"]).mean())
            rows.append({"claim": "epsilon_small", "data": kind, "holds": bool(diffs[smallest][2] < 0),
                         "measured": f"ε = {smallest:g}: sensitivity − new = {diffs[smallest][0]:.4f} "
                                     f"(95% CI {diffs[smallest][1]:.4f} to {diffs[smallest][2]:.4f}), sensitivity "
                                     f"error {sens_mean:.3f}; sensitivity significantly better at "
                                     f"{len(losses)} of {len(eps)} ε values"})
        table = pd.DataFrame(rows)
        table.insert(1, "quote", [TEXT_CLAIMS[c][0] for c in table.claim])
        return table

    def axis_check(self, form="nips2008"):
        """Per panel of Figure 2: how many of our curve points fall inside the paper's plotted y-range."""
        from dplr.published import FIGURE2_AXES

        rows = []
        for panel, kind, curves in (("a", "separable", self.learning_curves()),
                                    ("b", "unseparable", self.learning_curves()),
                                    ("c", "separable", self.epsilon_curves()),
                                    ("d", "unseparable", self.epsilon_curves())):
            axes = FIGURE2_AXES[panel]
            methods = ["Sensitivity method", method_label(Task(DataSpec(kind), 0, "objective", epsilon=0.1,
                                                               form=form))]
            if panel in ("a", "b"):
                methods.append("Standard LR")
            sub = curves[(curves.data == kind) & curves.method.isin(methods)]
            low, high = axes.y_range
            inside = int(((sub["mean"] >= low) & (sub["mean"] <= high)).sum())
            rows.append({"panel": panel, "data": kind, "y_range": f"{low:g}–{high:g}", "points": len(sub),
                         "inside": inside, "our_min": float(sub["mean"].min()), "our_max": float(sub["mean"].max())})
        return pd.DataFrame(rows)

    def part_seconds(self):
        """Worker seconds spent per part (a task shared by parts counts for the first)."""
        seen, out = set(), {}
        for part, cells in self.parts.items():
            total = 0.0
            for task in expand(cells):
                if task not in seen:
                    seen.add(task)
                    total += self.seconds.get(task, 0.0)
            out[part] = total
        return out


def _parallel(calls, n_jobs):
    # locally on n_jobs processes, or on the Dask cluster of dplr.parallel.use_scheduler
    return run_calls(calls, n_jobs)


def run_replication(seed=DEFAULT_SEED, n_jobs=2, n_restarts=PAPER_RESTARTS, variants=FIGURE1_VARIANTS,
                    sizes=LEARNING_CURVE_SIZES, epsilons=EPSILON_GRID, fit_epsilon=True, n_total=PAPER_N,
                    n_holdout=PAPER_HOLDOUT, epsilon_n=EPSILON_CURVE_N):
    """Run the whole study: λ tuning, Figure 1, Figure 2 a–d, and Figure 1 under every variant.

    Phase 1 runs, in one parallel batch, the λ tuning on the holdouts and every task that does not
    depend on it. Phase 2 runs the variants that depend on phase 1: λ as tuned (``lambda=tuned``) and,
    with ``fit_epsilon``, Figure 1 at the single ε that best matches the four published private
    means (the geometric mean of the per-cell effective ε of :meth:`Replication.effective_epsilons`,
    rounded to three significant digits).

    The defaults are the paper's full protocol; ``n_total``, ``n_holdout``, ``sizes``, ``epsilon_n``
    and ``n_restarts`` exist so that the unit tests can run the same code small.
    """
    wall = {}
    independent = [v for v in variants if v.lam is not None]
    dependent = [v for v in variants if v.lam is None]
    main = {kind: DataSpec(kind, n=n_total) for kind in _KINDS}
    parts = {"figure1": [c for kind in _KINDS for c in figure1_tasks(main[kind], n_restarts=n_restarts)],
             "learning": [c for kind in _KINDS for c in learning_curve_tasks(main[kind], sizes,
                                                                             n_restarts=n_restarts)],
             "epsilon": [c for kind in _KINDS for c in epsilon_curve_tasks(main[kind], epsilons, epsilon_n,
                                                                           n_restarts=n_restarts)]}
    for variant in independent:
        parts[f"variant:{variant.name}"] = variant.cells(None, n_restarts, n_total)

    start = time.perf_counter()
    holdouts = {kind: DataSpec(kind, n=n_holdout, role="holdout") for kind in _KINDS}
    tuning_calls = [(_tuning_fold, (holdouts[kind], f, LAMBDA_GRID, seed, PAPER_FOLDS))
                    for kind in _KINDS for f in range(PAPER_FOLDS)]
    unique = sorted(set(t for cells in parts.values() for t in expand(cells)), key=lambda t: -t.cost)
    outputs = _parallel(tuning_calls + [(_timed, (t, seed)) for t in unique], n_jobs)
    wall["phase 1"] = time.perf_counter() - start
    tuning = {}
    for i, kind in enumerate(_KINDS):
        tuning[kind] = _tuning_result(LAMBDA_GRID, outputs[i * PAPER_FOLDS:(i + 1) * PAPER_FOLDS])
    task_outputs = outputs[len(tuning_calls):]
    errors = {t: out[0] for t, out in zip(unique, task_outputs)}
    seconds = {t: out[1] for t, out in zip(unique, task_outputs)}
    rep = Replication(seed, n_restarts, errors, seconds, parts, tuning, wall, tuple(independent))

    later = list(dependent)
    if fit_epsilon:
        eps_hat = rep.effective_epsilons().epsilon_hat.to_numpy()
        eps_hat = eps_hat[np.isfinite(eps_hat)]
        if eps_hat.size:
            common = float(f"{np.exp(np.mean(np.log(eps_hat))):.3g}")
            later.append(Figure1Variant("epsilon=fitted", f"Figure 1 at the fitted common ε = {common:g}",
                                        epsilon=common))
            rep.fitted_epsilon = common
    if later:
        tuned = {kind: t.best for kind, t in tuning.items()}
        for variant in later:
            parts[f"variant:{variant.name}"] = variant.cells(tuned, n_restarts, n_total)
        start = time.perf_counter()
        more = [t for v in later for t in expand(parts[f"variant:{v.name}"])]
        more_errors, more_seconds = run_tasks([t for t in more if t not in errors], seed, n_jobs)
        wall["phase 2"] = time.perf_counter() - start
        errors.update(more_errors)
        seconds.update(more_seconds)
        rep.variants = tuple(independent) + tuple(later)
    return rep

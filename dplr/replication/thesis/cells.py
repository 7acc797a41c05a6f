r"""Running the thesis' protocol: cells (five equal folds x 200 restarts), their summaries, the λ search, verdicts.

A :class:`Cell` is one point of a table or curve (a data set, a pipeline, a training size, λ, some ε
and methods); :func:`run_cells` runs every fold of every cell with :mod:`dplr.replication.runner`, results
independent of ``n_jobs``. The thesis pipeline (:class:`~dplr.replication.thesis.pipeline.ThesisPipeline`)
runs its own readings of the algorithms; the sound one (:class:`~dplr.replication.thesis.pipeline.SoundPipeline`)
runs the library's algorithms through their seam (:mod:`dplr.algorithms`).
"""
from __future__ import annotations

import time
from dataclasses import dataclass

import numpy as np
import pandas as pd

from dplr.algorithms import standard_erm
from dplr.calibration import objective_perturbation_calibration, sensitivity_method_calibration
from dplr.losses import get_loss
from dplr.release import private_release
from dplr.replication.runner import run_calls
from dplr.replication.statistics import paired_fold_difference, t_interval
from dplr.replication.thesis.data import full_training_size, thesis_folds
from dplr.replication.thesis.pipeline import (
    SoundPipeline,
    ThesisDraws,
    noise_vectors,
    prepared_data,
    restart_stream,
    thesis_errors,
    thesis_fit,
    thesis_objective_perturbation,
)
from dplr.replication.thesis.published import (
    KINDS,
    LAMBDA_GRID,
    METHODS,
    TABLE2,
    THESIS_EPSILON,
    THESIS_FOLDS,
    THESIS_LAMBDA,
    THESIS_RESTARTS,
    THESIS_SEED,
)
from dplr.replication.verdicts import replication_verdict

__all__ = [
    "Cell",
    "timed_fold",
    "cell_calls",
    "collect_cells",
    "run_cells",
    "cell_errors",
    "summarise",
    "curve_table",
    "standard_predictions",
    "paired_comparison",
    "REPLICAS",
    "SAMPLE_SIZE_LAMBDAS",
    "SAMPLE_SIZE_EPSILONS",
    "sample_size_cells",
    "records_needed",
    "verdicts",
    "lambda_fold_errors",
    "lambda_calls",
    "lambda_table",
    "lambda_search",
]


# the sound pipeline's loss: the library's algorithms on the logistic loss
_LOGISTIC = get_loss("logistic")


# --------------------------------------------------------------------------------------------------
# Cells and the runner
# --------------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class Cell:
    r"""One point of a table or curve: a data set, a pipeline, a training size, λ, some ε and methods.

    ``n_train=None`` is the whole training part of a fold (8,000 or 452); a smaller size is its first
    ``n_train`` records. ``replicas=m`` (sound pipeline only) asks how the algorithms would do with
    :math:`m` times as many records like these: the training set is every training record repeated
    :math:`m` times. Its objective is the same as the original one (a mean over records), so the
    algorithms are solved on the original rows and calibrated for :math:`n = m \times` the training size
    -- exactly what they do on the repeated set.
    """

    kind: str
    pipeline: object
    n_train: int | None = None
    lam: float = THESIS_LAMBDA
    epsilons: tuple = (THESIS_EPSILON,)
    methods: tuple = METHODS
    n_restarts: int = THESIS_RESTARTS
    replicas: int = 1

    def __post_init__(self):
        if self.kind not in KINDS:
            raise ValueError(f"kind must be one of {KINDS}, got {self.kind!r}.")
        if not set(self.methods) <= set(METHODS):
            raise ValueError(f"methods must be among {METHODS}, got {self.methods!r}.")
        if self.replicas != 1 and not isinstance(self.pipeline, SoundPipeline):
            raise ValueError("replicas > 1 is only defined for the sound pipeline.")

    def keys(self):
        for method in self.methods:
            for eps in ((None,) if method == "standard" else self.epsilons):
                yield method, eps


def _run_sound(cell, X, y, train, test, fold, seed):
    r"""The sound pipeline on one fold, with the training records repeated ``cell.replicas`` times.

    On the repeated set the objective (a mean over records) is unchanged, so the algorithms solve on
    the original rows with their noise calibrated for :math:`m \times` the training size; Algorithm 2's
    term :math:`b^\top w/(mn)` is :math:`(b/m)^\top w/n`.
    """
    Xt, yt = X[train], y[train]
    n, d, m = train.size, X.shape[1], cell.replicas
    out = {}
    for method, eps in cell.keys():
        if method == "standard":
            W = standard_erm(Xt, yt, cell.lam)[None, :]
        elif method == "sensitivity":  # Algorithm 1 as the papers state it (exact-minimiser noise) on the repeated set
            rng = restart_stream(seed, cell.kind, fold, n, "sensitivity")
            calibration = sensitivity_method_calibration(m * n, cell.lam, eps, solver_tol=0.0)
            W = private_release(Xt, yt, cell.lam, _LOGISTIC, calibration, cell.n_restarts, rng, exact_minimiser=True,
                                replicas=m)
        else:  # dplr.algorithms.objective_perturbation on the repeated set
            rng = restart_stream(seed, cell.kind, fold, n, "objective")
            calibration = objective_perturbation_calibration(eps, m * n, cell.lam, _LOGISTIC.curvature,
                                                             _LOGISTIC.lipschitz, cell.pipeline.form)
            W = private_release(Xt, yt, cell.lam, _LOGISTIC, calibration, cell.n_restarts, rng, replicas=m)
        out[method, eps] = thesis_errors(X[test] @ W.T, y[test])
    return out


def _run_fold(cell: Cell, fold, seed):
    X, y = prepared_data(cell.kind, cell.pipeline, seed)
    train, test = thesis_folds(X.shape[0])[fold]
    if cell.n_train is not None:
        if cell.n_train > train.size:
            raise ValueError(f"n_train={cell.n_train} exceeds the {train.size} training records of a fold.")
        train = train[:cell.n_train]
    if isinstance(cell.pipeline, SoundPipeline):
        return _run_sound(cell, X, y, train, test, fold, seed)
    n, d = train.size, X.shape[1]
    p = cell.pipeline
    n_noise = n if p.noise_n == "train" else X.shape[0]
    # Algorithm 1's noise: Gam(d, 2/(N eps lambda)) as the thesis prints it, under its noise reading
    theta = {eps: sensitivity_method_calibration(n_noise, cell.lam, eps).noise_scale for eps in cell.epsilons}
    # I[Y = 1] names the positive class; fit with malignant (or the simulated +1) positive and flip the
    # sign for the coding "B1M0" -- exactly what fitting with benign positive gives, and what
    # diagnosis_search does, so the two agree draw for draw.
    flip = -1.0 if cell.kind == "real" and p.labels == "B1M0" else 1.0
    y_fit = np.where(y[train] == 1, flip, -flip)
    w = None
    out = {}
    for method, eps in cell.keys():
        if method in ("standard", "sensitivity") and w is None:
            w = flip * thesis_fit(X[train], y_fit, cell.lam, p.penalty)
        if method == "standard":
            W = w[None, :]
        elif method == "sensitivity":
            draws = ThesisDraws.sample(restart_stream(seed, cell.kind, fold, n, "sensitivity"), cell.n_restarts, d)
            W = w + noise_vectors(draws, theta[eps], p.noise)
        else:
            draws = ThesisDraws.sample(restart_stream(seed, cell.kind, fold, n, "objective"), cell.n_restarts, d)
            W = thesis_objective_perturbation(X[train], y[train], eps, cell.lam, draws, p.noise, n_noise, p.form)
        out[method, eps] = thesis_errors(X[test] @ W.T, y[test], p.prediction, p.error)
    return out


def timed_fold(cell, fold, seed):
    """``(errors by (method, ε), seconds)`` of one fold of a cell: the unit of work the runner distributes."""
    start = time.perf_counter()
    out = _run_fold(cell, fold, seed)
    return out, time.perf_counter() - start


def _cost(cell):
    n = cell.n_train or full_training_size(cell.kind)
    return n * (1 + ("objective" in cell.methods) * 20 * len(cell.epsilons))


def cell_calls(cells, seed):
    """The runner's calls for every fold of ``cells`` (each cell once, largest first)."""
    cells = sorted(dict.fromkeys(cells), key=lambda c: -_cost(c))
    return [(timed_fold, (c, f, seed)) for c in cells for f in range(THESIS_FOLDS)]


def collect_cells(calls, outputs):
    """``(errors, seconds)`` of :func:`run_cells` from the calls of :func:`cell_calls` and their outputs."""
    errors, seconds = {}, {}
    for (_, (cell, fold, _seed)), (out, secs) in zip(calls, outputs):
        seconds[cell] = seconds.get(cell, 0.0) + secs
        for key, errs in out.items():
            errors.setdefault((cell,) + key, [None] * THESIS_FOLDS)[fold] = errs
    return {k: np.vstack(v) for k, v in errors.items()}, seconds


def run_cells(cells, seed=THESIS_SEED, n_jobs=1):
    """Run every fold of every cell; returns ``(errors, seconds)``.

    ``errors[(cell, method, eps)]`` is the ``(5, n_restarts)`` array of test errors (``(5, 1)`` for
    standard LR, ``eps=None``); ``seconds[cell]`` the worker seconds its folds took. Largest cells go
    first; results do not depend on ``n_jobs``.
    """
    calls = cell_calls(cells, seed)
    return collect_cells(calls, run_calls(calls, n_jobs))


def cell_errors(errors, cell, method, epsilon=THESIS_EPSILON):
    """The ``(folds, restarts)`` errors of one method of one cell."""
    return errors[(cell, method, None if method == "standard" else epsilon)]


def summarise(E):
    """Mean over everything and a 95% t-interval over the fold means."""
    low, high = t_interval(np.asarray(E).mean(axis=1))
    return {"mean": float(np.mean(E)), "ci_low": low, "ci_high": high}


def curve_table(errors, cells, x="n_train", names=None):
    """Tidy table of curves: one row per cell, method and ε with the mean error and its 95% interval over folds.

    ``x`` is ``"n_train"`` (training records, times ``replicas``; ``None`` becomes the full training
    size) or ``"epsilon"``. ``names`` maps pipelines to the names in the ``pipeline`` column.
    """
    names = names or {}
    rows = []
    for cell in cells:
        full = full_training_size(cell.kind)
        for method, eps in cell.keys():
            s = summarise(errors[(cell, method, eps)])
            rows.append({"data": cell.kind, "pipeline": names.get(cell.pipeline, str(cell.pipeline)), "method": method,
                         "n_train": (cell.n_train or full) * cell.replicas, "epsilon": eps, "lam": cell.lam, **s})
    return pd.DataFrame(rows).sort_values(["data", "pipeline", "method", x]).reset_index(drop=True)


def standard_predictions(kind, pipeline, lam=THESIS_LAMBDA, seed=THESIS_SEED):
    """Standard LR's predictions on each fold's test part (±1), under a pipeline: a list of five arrays."""
    X, y = prepared_data(kind, pipeline, seed)
    out = []
    for train, test in thesis_folds(X.shape[0]):
        if isinstance(pipeline, SoundPipeline):
            scores, rule = X[test] @ standard_erm(X[train], y[train], lam), "sign"
        else:
            flip = -1.0 if kind == "real" and pipeline.labels == "B1M0" else 1.0
            w = flip * thesis_fit(X[train], np.where(y[train] == 1, flip, -flip), lam, pipeline.penalty)
            scores, rule = X[test] @ w, pipeline.prediction
        out.append(np.where(scores > 0, 1.0, -1.0) if rule == "sign" else np.where(scores < 0, 1.0, -1.0))
    return out


def paired_comparison(errors, cell_a, cell_b, method_a, method_b, eps_a, eps_b):
    """Fold-paired difference (b minus a) of mean test errors with its 95% t-interval."""
    return paired_fold_difference(cell_errors(errors, cell_a, method_a, eps_a),
                                  cell_errors(errors, cell_b, method_b, eps_b))


#: Replication factors of the sample-size study: n = m × 452 training records.
REPLICAS = (1, 2, 5, 10, 20, 50, 100, 200)
#: λ candidates of the sample-size study (the oracle picks the best per n, ε and algorithm).
SAMPLE_SIZE_LAMBDAS = (1e-5, 1e-4, 1e-3, 1e-2)
SAMPLE_SIZE_EPSILONS = (0.1, 0.5, 1.0)


def sample_size_cells(pipeline=None, replicas=REPLICAS, lambdas=SAMPLE_SIZE_LAMBDAS, epsilons=SAMPLE_SIZE_EPSILONS,
                      n_restarts=THESIS_RESTARTS):
    """Cells of the sample-size study on the real data: both private methods at every m, λ and ε."""
    pipeline = pipeline or SoundPipeline()
    return [Cell("real", pipeline, None, lam, tuple(epsilons), ("sensitivity", "objective"), n_restarts, m)
            for m in replicas for lam in lambdas]


def records_needed(errors, cells, target):
    """Per private method and ε: the smallest n in the study whose error, at the best λ there, is at most ``target``.

    The best λ is chosen per (n, ε, method) by the test error itself -- an oracle, so the n found is
    optimistic (a private analyst must pick λ privately too). Returns one row per (method, ε) with
    ``n_needed`` (``nan`` if no n in the study reaches the target), the λ used there, and the error.
    """
    table = curve_table(errors, cells)
    rows = []
    for (method, eps), sub in table.groupby(["method", "epsilon"]):
        best = sub.loc[sub.groupby("n_train")["mean"].idxmin()].sort_values("n_train")
        hit = best[best["mean"] <= target]
        first = hit.iloc[0] if len(hit) else None
        rows.append({"method": method, "epsilon": eps,
                     "n_needed": float(first.n_train) if first is not None else float("nan"),
                     "lam": float(first.lam) if first is not None else float("nan"),
                     "error": float(first["mean"]) if first is not None else float(best["mean"].min()),
                     "largest_n": int(best.n_train.max())})
    return pd.DataFrame(rows)


def verdicts(results, values=TABLE2):
    """One row per published value: ours, the prediction interval of :func:`dplr.replication.verdicts.replication_verdict`, verdict.

    ``results`` maps ``(data, method)`` to the ``(folds, restarts)`` error array of our run.
    """
    rows = []
    for value in values:
        E = results[(value.data, value.method)]
        v = replication_verdict(value.value, E, lambda F: F.mean(), value.decimals)
        rows.append({"data": value.data, "method": value.method, "thesis": value.printed, "ours": v.ours,
                     "low": max(v.low, 0.0), "high": v.high, "reproduced": v.reproduced})
    return pd.DataFrame(rows)


# --------------------------------------------------------------------------------------------------
# λ search (Section 5.1): five-fold CV of standard LR over 25 values
# --------------------------------------------------------------------------------------------------
def lambda_fold_errors(kind, pipeline, fold, lambdas, seed):
    """Test errors of standard LR on one fold, one per λ, under a pipeline (a task of the λ search)."""
    X, y = prepared_data(kind, pipeline, seed)
    train, test = thesis_folds(X.shape[0])[fold]
    y_fit = np.where(y[train] == 1, 1.0, -1.0)
    row = []
    for lam in lambdas:
        if isinstance(pipeline, SoundPipeline):
            w = standard_erm(X[train], y[train], lam)
            row.append(float(thesis_errors(X[test] @ w[:, None], y[test])[0]))
        else:
            w = thesis_fit(X[train], y_fit, lam, pipeline.penalty)
            row.append(float(thesis_errors(X[test] @ w[:, None], y[test], pipeline.prediction, pipeline.error)[0]))
    return row


def lambda_calls(kind, pipeline, lambdas, seed):
    """The runner's calls of a λ search: one per fold."""
    return [(lambda_fold_errors, (kind, pipeline, f, tuple(lambdas), seed)) for f in range(THESIS_FOLDS)]


def lambda_table(lambdas, rows):
    """The λ search's table from the fold errors: mean, standard error, minimisers; ``attrs["best"]``."""
    E = np.asarray(rows)
    table = pd.DataFrame({"lam": lambdas, "mean": E.mean(axis=0), "se": E.std(axis=0, ddof=1) / np.sqrt(len(rows))})
    table["minimiser"] = table["mean"] <= table["mean"].min() + 1e-12
    table.attrs["best"] = float(table.loc[table.minimiser, "lam"].max())
    table.attrs["fold_errors"] = E
    return table


def lambda_search(kind, pipeline, lambdas=LAMBDA_GRID, seed=THESIS_SEED, n_jobs=1):
    """CV test error of standard LR per λ: a DataFrame with the fold errors, mean, and the minimisers.

    ``best`` is the largest λ with the smallest mean error (ties are common on separable data).
    """
    return lambda_table(lambdas, run_calls(lambda_calls(kind, pipeline, lambdas, seed), n_jobs))

r"""Running the replication of Veldhuizen (2020): cells, the λ search, the diagnosis search, the whole study.

The pieces -- published values, :class:`~dplr.thesis.ThesisPipeline`, :class:`~dplr.thesis.SoundPipeline`,
fitting and evaluation -- are in :mod:`dplr.thesis`; the data in :mod:`dplr.thesis_data`. Here:

* :class:`Cell` and :func:`run_cells`: the thesis' protocol (five equal folds, 200 restarts) for any
  pipeline, training size, λ and ε; fold tasks run in parallel with results independent of
  ``n_jobs``;
* :func:`lambda_search`: Section 5.1's search over 25 values of λ;
* :func:`diagnosis_search`, :func:`best_match`, :func:`joint_match`: every combination of the
  pipeline's switches, ranked against the published numbers;
* :func:`sample_size_cells`, :func:`records_needed`: how many records the sound pipeline needs;
* :func:`run_thesis_study`: everything the chapter shows, in order;
* :func:`time_fits`: per-fit seconds of the three methods (item 5).
"""
from __future__ import annotations

import itertools
import time
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from dplr.algorithms import (
    objective_perturbation,
    objective_perturbation_calibration,
    sensitivity_method,
    sensitivity_method_noise_rate,
    standard_erm,
)
from dplr.experiments import task_seed_sequence  # noqa: F401  (re-exported for readers of the seeding)
from dplr.mechanisms import sample_vector_laplace
from dplr.parallel import run_calls
from dplr.published import replication_verdict
from dplr.solver import solve_regularized_erm
from dplr.stats import t_interval
from dplr.thesis import (
    EPSILON_GRID,
    KINDS,
    LAMBDA_GRID,
    LITERAL,
    REAL_SIZES,
    SIMULATED_SIZES,
    SWITCHES,
    THESIS_EPSILON,
    THESIS_FOLDS,
    THESIS_LAMBDA,
    THESIS_RESTARTS,
    THESIS_SEED,
    SoundPipeline,
    ThesisPipeline,
    _Draws,
    _METHODS,
    _prepared,
    _stream,
    code_labels,
    noise_vectors,
    thesis_dataset,
    thesis_errors,
    thesis_fit,
    thesis_folds,
    thesis_objective_perturbation,
    thesis_value,
)
from dplr.thesis_data import THESIS_REAL_N, normalise

__all__ = [
    "Cell",
    "run_cells",
    "cell_errors",
    "summarise",
    "curve_table",
    "REPLICAS",
    "SAMPLE_SIZE_LAMBDAS",
    "SAMPLE_SIZE_EPSILONS",
    "sample_size_cells",
    "records_needed",
    "standard_predictions",
    "paired_comparison",
    "lambda_search",
    "diagnosis_search",
    "best_match",
    "joint_match",
    "pipeline_from_row",
    "time_fits",
]


# --------------------------------------------------------------------------------------------------
# Cells and the runner
# --------------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class Cell:
    """One point of a table or curve: a data set, a pipeline, a training size, λ, some ε and methods.

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
    methods: tuple = _METHODS
    n_restarts: int = THESIS_RESTARTS
    replicas: int = 1

    def __post_init__(self):
        if self.kind not in KINDS:
            raise ValueError(f"kind must be one of {KINDS}, got {self.kind!r}.")
        if not set(self.methods) <= set(_METHODS):
            raise ValueError(f"methods must be among {_METHODS}, got {self.methods!r}.")
        if self.replicas != 1 and not isinstance(self.pipeline, SoundPipeline):
            raise ValueError("replicas > 1 is only defined for the sound pipeline.")

    def keys(self):
        for method in self.methods:
            for eps in ((None,) if method == "standard" else self.epsilons):
                yield method, eps


def _run_sound(cell, X, y, train, test, fold, seed):
    """The sound pipeline on one fold, with the training records repeated ``cell.replicas`` times."""
    Xt, yt = X[train], y[train]
    n, d, m = train.size, X.shape[1], cell.replicas
    w_star = None
    out = {}
    for method, eps in cell.keys():
        if method in ("standard", "sensitivity") and w_star is None:
            w_star = standard_erm(Xt, yt, cell.lam)
        if method == "standard":
            W = w_star[None, :]
        elif method == "sensitivity":  # = dplr.algorithms.sensitivity_method on the repeated set
            rng = _stream(seed, cell.kind, fold, n, "sensitivity")
            rate = sensitivity_method_noise_rate(m * n, cell.lam, eps)
            W = w_star + sample_vector_laplace(rate, d, size=cell.n_restarts, random_state=rng)
        else:  # = dplr.algorithms.objective_perturbation on the repeated set
            rng = _stream(seed, cell.kind, fold, n, "objective")
            cal = objective_perturbation_calibration(eps, m * n, cell.lam, form=cell.pipeline.form)
            b = sample_vector_laplace(cal.noise_rate, d, size=cell.n_restarts, random_state=rng)
            W = solve_regularized_erm(Xt, yt, cell.lam, b=b / m, delta=cal.delta).coef
        out[method, eps] = thesis_errors(X[test] @ W.T, y[test])
    return out


def _run_fold(cell: Cell, fold, seed):
    X, y = _prepared(cell.kind, cell.pipeline, seed)
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
            draws = _Draws.sample(_stream(seed, cell.kind, fold, n, "sensitivity"), cell.n_restarts, d)
            W = w + noise_vectors(draws, 2.0 / (n_noise * eps * cell.lam), p.noise)
        else:
            draws = _Draws.sample(_stream(seed, cell.kind, fold, n, "objective"), cell.n_restarts, d)
            W = thesis_objective_perturbation(X[train], y[train], eps, cell.lam, draws, p.noise, n_noise, p.form)
        out[method, eps] = thesis_errors(X[test] @ W.T, y[test], p.prediction, p.error)
    return out


def _timed_fold(cell, fold, seed):
    start = time.perf_counter()
    out = _run_fold(cell, fold, seed)
    return out, time.perf_counter() - start


def _cost(cell):
    n = cell.n_train or (8000 if cell.kind != "real" else 452)
    return n * (1 + ("objective" in cell.methods) * 20 * len(cell.epsilons))


def _cell_calls(cells, seed):
    cells = sorted(dict.fromkeys(cells), key=lambda c: -_cost(c))
    return [(_timed_fold, (c, f, seed)) for c in cells for f in range(THESIS_FOLDS)]


def _collect_cells(calls, outputs):
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
    calls = _cell_calls(cells, seed)
    return _collect_cells(calls, run_calls(calls, n_jobs))


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
        full = (THESIS_REAL_N if cell.kind == "real" else 10_000) * (THESIS_FOLDS - 1) // THESIS_FOLDS
        for method, eps in cell.keys():
            s = summarise(errors[(cell, method, eps)])
            rows.append({"data": cell.kind, "pipeline": names.get(cell.pipeline, str(cell.pipeline)), "method": method,
                         "n_train": (cell.n_train or full) * cell.replicas, "epsilon": eps, "lam": cell.lam, **s})
    return pd.DataFrame(rows).sort_values(["data", "pipeline", "method", x]).reset_index(drop=True)


def standard_predictions(kind, pipeline, lam=THESIS_LAMBDA, seed=THESIS_SEED):
    """Standard LR's predictions on each fold's test part (±1), under a pipeline: a list of five arrays."""
    X, y = _prepared(kind, pipeline, seed)
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
    diff = (cell_errors(errors, cell_b, method_b, eps_b).mean(axis=1)
            - cell_errors(errors, cell_a, method_a, eps_a).mean(axis=1))
    low, high = t_interval(diff)
    return float(diff.mean()), low, high


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


# --------------------------------------------------------------------------------------------------
# λ search (Section 5.1): five-fold CV of standard LR over 25 values
# --------------------------------------------------------------------------------------------------
def _lambda_fold(kind, pipeline, fold, lambdas, seed):
    X, y = _prepared(kind, pipeline, seed)
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


def _lambda_calls(kind, pipeline, lambdas, seed):
    return [(_lambda_fold, (kind, pipeline, f, tuple(lambdas), seed)) for f in range(THESIS_FOLDS)]


def _lambda_table(lambdas, rows):
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
    return _lambda_table(lambdas, run_calls(_lambda_calls(kind, pipeline, lambdas, seed), n_jobs))


# --------------------------------------------------------------------------------------------------
# The diagnosis: every combination of switches on the real data
# --------------------------------------------------------------------------------------------------
def _diagnosis_fold(kind, normalisation, fold, lam, epsilon, n_restarts, small_n, penalties, seed, forms):
    X_raw, malignant = thesis_dataset(kind, seed)
    X = normalise(X_raw, normalisation, warn=False) if kind == "real" else X_raw
    train, test = thesis_folds(X.shape[0])[fold]
    n, d, N = train.size, X.shape[1], X.shape[0]
    codings = SWITCHES["labels"] if kind == "real" else ("pm1",)
    coded = {c: (code_labels(malignant, c) if kind == "real" else np.asarray(malignant, dtype=float)) for c in codings}
    draws1 = _Draws.sample(_stream(seed, kind, fold, n, "sensitivity"), n_restarts, d)
    draws2 = _Draws.sample(_stream(seed, kind, fold, n, "objective"), n_restarts, d)
    positive = coded[codings[0]] == 1  # the class that M1B0 / pm1 call 1 (malignant); B1M0 flips it
    y_fit = np.where(positive[train], 1.0, -1.0)
    scores = {}
    for penalty in penalties:
        w = thesis_fit(X[train], y_fit, lam, penalty)
        w_small = thesis_fit(X[train[:small_n]], y_fit[:small_n], lam, penalty) if small_n else None
        for coding in codings:
            sign = -1.0 if coding == "B1M0" else 1.0  # I[Y=1] picks the other class: the fit flips sign
            scores["standard", penalty, coding, None, None] = X[test] @ (sign * w)[:, None]
            if small_n:
                scores["standard_small", penalty, coding, None, None] = X[test] @ (sign * w_small)[:, None]
            for noise, noise_n in itertools.product(SWITCHES["noise"], SWITCHES["noise_n"]):
                theta = 2.0 / ((n if noise_n == "train" else N) * epsilon * lam)
                W = sign * w + noise_vectors(draws1, theta, noise)
                scores["sensitivity", penalty, coding, noise, noise_n] = X[test] @ W.T
    for form, coding, noise, noise_n in itertools.product(forms, codings, SWITCHES["noise"], SWITCHES["noise_n"]):
        W = thesis_objective_perturbation(X[train], coded[coding][train], epsilon, lam, draws2, noise,
                                          n if noise_n == "train" else N, form)
        scores["objective", form, coding, noise, noise_n] = X[test] @ W.T
    out = {}
    for key, S in scores.items():
        for prediction, error in itertools.product(SWITCHES["prediction"], SWITCHES["error"]):
            out[key + (prediction, error)] = float(thesis_errors(S, coded[key[2]][test], prediction, error).mean())
    return out


def _diagnosis_calls(kind, lam, epsilon, n_restarts, small_n, penalties, seed, forms):
    norms = SWITCHES["normalisation"] if kind == "real" else ("none",)
    return [(_diagnosis_fold, (kind, norm, f, lam, epsilon, n_restarts, small_n, penalties, seed, tuple(forms)))
            for norm in norms for f in range(THESIS_FOLDS)]


def _diagnosis_table(kind, calls, outs, penalties, forms, small_n):
    by_norm = {}
    for (_, args), out in zip(calls, outs):
        by_norm.setdefault(args[1], [None] * THESIS_FOLDS)[args[2]] = out
    codings = SWITCHES["labels"] if kind == "real" else ("pm1",)
    rows = []
    for norm, folds in by_norm.items():
        for penalty, coding, noise, noise_n, prediction, error, form in itertools.product(
                penalties, codings, SWITCHES["noise"], SWITCHES["noise_n"], SWITCHES["prediction"],
                SWITCHES["error"], forms):
            keys = {"standard": ("standard", penalty, coding, None, None),
                    "sensitivity": ("sensitivity", penalty, coding, noise, noise_n),
                    "objective": ("objective", form, coding, noise, noise_n)}
            if small_n:
                keys["standard_small"] = ("standard_small", penalty, coding, None, None)
            row = {"normalisation": norm, "labels": coding, "penalty": penalty, "noise": noise, "noise_n": noise_n,
                   "prediction": prediction, "error": error, "rule": f"{prediction}/{error}", "form": form}
            for name, key in keys.items():
                fold_means = np.array([folds[f][key + (prediction, error)] for f in range(THESIS_FOLDS)])
                row[name] = float(fold_means.mean())
                row[f"fold_{name}"] = fold_means
            rows.append(row)
    return pd.DataFrame(rows)


def diagnosis_search(kind="real", lam=THESIS_LAMBDA, epsilon=THESIS_EPSILON, n_restarts=THESIS_RESTARTS,
                     small_n=50, seed=THESIS_SEED, n_jobs=1, penalties=None, forms=("nips2008",)):
    """Every combination of :data:`~dplr.thesis.SWITCHES` (``form`` from ``forms``): fold-mean errors of the three methods.

    Returns a DataFrame with one row per combination: the switches, ``rule`` (prediction/error),
    ``form``, ``standard``, ``sensitivity``, ``objective`` (means over folds and restarts), ``fold_*``
    (the five fold means, for verdicts) and, with ``small_n``, ``standard_small`` (standard LR trained
    on the first ``small_n`` records of each training part). For simulated ``kind`` the normalisation
    and label switches do not apply (labels ±1, data already in the unit ball; the rows say
    ``normalisation="none"``). All combinations share their noise draws per fold, and each equals the
    corresponding :func:`run_cells` result draw for draw.
    """
    penalties = tuple(penalties or SWITCHES["penalty"])
    calls = _diagnosis_calls(kind, lam, epsilon, n_restarts, small_n, penalties, seed, forms)
    return _diagnosis_table(kind, calls, run_calls(calls, n_jobs), penalties, forms, small_n)


def best_match(table, targets, columns=None, **fixed):
    """Rank the rows of a :func:`diagnosis_search` table by distance to published values.

    ``targets`` maps a column (``"standard"``, ``"sensitivity"``, ``"objective"``,
    ``"standard_small"``) to a :class:`ThesisValue`. Adds ``max_deviation`` (the largest absolute
    difference) and ``reproduced`` (how many targets pass :func:`dplr.published.replication_verdict`
    with the five fold means as blocks), and returns the table sorted by ``max_deviation``.
    ``fixed`` keeps only rows with the given switch values (a tuple: any of them), e.g.
    ``rule=("inverted/correct", "sign/misclassified")``.
    """
    sub = table
    for name, value in fixed.items():
        sub = sub[sub[name].isin(value if isinstance(value, (tuple, list)) else (value,))]
    sub = sub.copy()
    deviations = np.column_stack([np.abs(sub[c].to_numpy() - v.value) for c, v in targets.items()])
    sub["max_deviation"] = deviations.max(axis=1)
    sub["reproduced"] = [
        sum(replication_verdict(v.value, row[f"fold_{c}"][:, None], np.mean, v.decimals).reproduced
            for c, v in targets.items())
        for _, row in sub.iterrows()]
    return sub.sort_values(["max_deviation"], kind="stable").reset_index(drop=True)


def joint_match(searches, targets):
    """Rank switch combinations by their worst deviation over several data sets at once.

    ``searches`` maps a data set to its :func:`diagnosis_search` table, ``targets`` maps it to the
    ``targets`` argument of :func:`best_match`. Rows are matched on the switches the tables share;
    ``max_deviation`` is the largest over all data sets and ``reproduced`` the total count.
    """
    keys = None
    ranked = {}
    for kind, table in searches.items():
        ranked[kind] = best_match(table, targets[kind])
        shared = [c for c in ("normalisation", "labels", "penalty", "noise", "noise_n", "prediction", "error", "rule",
                              "form") if c in table.columns and table[c].nunique() > 1]
        keys = shared if keys is None else [k for k in keys if k in shared]
    merged = None
    for kind, table in ranked.items():
        part = table[keys + ["max_deviation", "reproduced"] + list(targets[kind])].rename(
            columns={c: f"{kind}_{c}" for c in ["max_deviation", "reproduced"] + list(targets[kind])})
        merged = part if merged is None else merged.merge(part, on=keys)
    merged["max_deviation"] = merged[[f"{k}_max_deviation" for k in ranked]].max(axis=1)
    merged["reproduced"] = merged[[f"{k}_reproduced" for k in ranked]].sum(axis=1)
    return merged.sort_values("max_deviation", kind="stable").reset_index(drop=True)


def pipeline_from_row(row, form="nips2008", **defaults):
    """The :class:`ThesisPipeline` of one row of a :func:`diagnosis_search` or :func:`joint_match` table.

    Switches missing from the row (e.g. the normalisation of a simulated-data search) come from
    ``defaults`` or the literal reading.
    """
    values = {name: row[name] if name in row.index else defaults.get(name, getattr(LITERAL, name))
              for name in SWITCHES}
    return ThesisPipeline(**values, form=form)


# --------------------------------------------------------------------------------------------------
# Timing (item 5): per-fit seconds of the three methods
# --------------------------------------------------------------------------------------------------
def time_fits(X, y, epsilon=THESIS_EPSILON, lam=THESIS_LAMBDA, repeats=5, n_draws=THESIS_RESTARTS, random_state=None):
    """Median wall-clock seconds per fit of standard LR, Algorithm 1 and Algorithm 2 in :mod:`dplr`.

    Rows: ``standard`` (:func:`~dplr.algorithms.standard_erm`), ``sensitivity`` and ``objective``
    (one draw each, as a user fits one private model), and both private methods with ``n_draws``
    restarts batched, per draw. Timings vary with the machine and its load: they are measurements.
    """
    rng = np.random.default_rng(random_state)
    calls = {
        "standard LR (one fit)": lambda: standard_erm(X, y, lam),
        "Algorithm 1 (one fit)": lambda: sensitivity_method(X, y, epsilon, lam, random_state=rng),
        "Algorithm 2 (one fit)": lambda: objective_perturbation(X, y, epsilon, lam, random_state=rng),
        f"Algorithm 1 ({n_draws} batched, per draw)": lambda: sensitivity_method(
            X, y, epsilon, lam, n_draws=n_draws, random_state=rng),
        f"Algorithm 2 ({n_draws} batched, per draw)": lambda: objective_perturbation(
            X, y, epsilon, lam, n_draws=n_draws, random_state=rng),
    }
    rows = []
    for name, call in calls.items():
        call()  # warm-up
        times = []
        for _ in range(repeats):
            start = time.perf_counter()
            call()
            times.append(time.perf_counter() - start)
        per = float(np.median(times)) / (n_draws if "batched" in name else 1)
        rows.append({"fit": name, "seconds": per})
    return pd.DataFrame(rows)


# --------------------------------------------------------------------------------------------------
# The whole study
# --------------------------------------------------------------------------------------------------
#: Prediction rule / error pairs that agree on labels ±1 (and so with the simulated results).
CONSISTENT_RULES = ("inverted/correct", "sign/misclassified")
#: A private model counts as useful when its mean test error is at most this much above the
#: non-private error of the same (sound) pipeline; fixed before the study was run.
USEFUL_MARGIN = 0.05
#: Public-range variants whose cost the chapter measures (scale, widen).
RANGE_VARIANTS = (("log", 1.0), ("log", 2.0), ("log", 4.0), ("linear", 1.0), ("linear", 2.0))
RANGE_REPLICAS = 10


def _targets(kind, small=False):
    targets = {m: thesis_value(kind, m) for m in _METHODS}
    if small:
        targets["standard_small"] = thesis_value(kind, "standard", 50)
    return targets


@dataclass
class ThesisStudy:
    """Everything :func:`run_thesis_study` computed; the chapter reads it."""

    seed: int
    n_restarts: int
    searches: dict
    pipelines: dict
    rankings: dict
    lambda_searches: dict
    sound_lambda: float
    errors: dict
    seconds: dict
    parts: dict
    wall: dict = field(default_factory=dict)

    # -- Table 2 ----------------------------------------------------------------------------------
    def full_cell(self, kind, name, method="standard", form=None):
        """The full-size cell of a named pipeline that runs ``method`` (Algorithm 2 in ``form`` if given)."""
        target = self.pipelines[name] if form is None else _with_form(self.pipelines[name], form)
        for cell in self.parts["full"] + self.parts["corrected"]:
            if cell.kind == kind and cell.pipeline == target and method in cell.methods:
                return cell
        raise KeyError((kind, name, method, form))

    def table2_errors(self, name, epsilon=THESIS_EPSILON, form=None):
        """``{(data, method): (folds, restarts) errors}`` of the Table 2 cells of one named pipeline.

        ``name="thesis"`` uses the simulated-data pipeline on the simulated sets and the real-data
        pipeline on the real data.
        """
        out = {}
        for kind in KINDS:
            key = name if name != "thesis" else ("simulated" if kind != "real" else "real")
            if key == "sound" and kind != "real":
                continue
            for method in _METHODS:
                f = form if method == "objective" else None
                cell = self.full_cell(kind, key, method, f)
                out[(kind, method)] = cell_errors(self.errors, cell, method, epsilon)
        return out

    def search_fold_means(self, name):
        """Fold means of a pipeline's Table 2 numbers read from the diagnosis searches (no extra runs)."""
        out = {}
        p = self.pipelines[name]
        for kind, table in self.searches.items():
            sub = table
            for switch in SWITCHES:
                if switch in ("normalisation", "labels") and kind != "real":
                    continue
                sub = sub[sub[switch] == getattr(p, switch)]
            row = sub.iloc[0]
            for method in _METHODS:
                out[(kind, method)] = row[f"fold_{method}"][:, None]
        return out

    # -- curves -------------------------------------------------------------------------------------
    @property
    def names(self):
        names = {}
        for name, pipeline in self.pipelines.items():
            names.setdefault(pipeline, name)
        return names

    def learning_curves(self):
        return curve_table(self.errors, self.parts["learning"] + self.parts["full"], "n_train", self.names)

    def epsilon_curves(self):
        return curve_table(self.errors, [c for c in self.parts["full"] if len(c.epsilons) > 1], "epsilon", self.names)

    def algorithm_comparison(self, name, kind="real"):
        """Algorithm 1 against Algorithm 2 along a pipeline's curves: paired fold differences (2 minus 1).

        One row per learning-curve size (ε = 0.1) and per ε at the full size; ``better`` says which
        algorithm has the significantly lower error (95% t-interval over folds excludes 0), if any.
        """
        pipeline = self.pipelines[name]
        rows = []
        cells = [c for c in self.parts["learning"] + self.parts["full"] if c.kind == kind and c.pipeline == pipeline]
        for cell in cells:
            for eps in cell.epsilons:
                if cell.n_train is not None and eps != THESIS_EPSILON:
                    continue
                d, low, high = paired_comparison(self.errors, cell, cell, "sensitivity", "objective", eps, eps)
                rows.append({"curve": "learning" if len(cell.epsilons) == 1 or eps == THESIS_EPSILON else "epsilon",
                             "n_train": cell.n_train or (452 if kind == "real" else 8000), "epsilon": eps,
                             "algorithm1": float(cell_errors(self.errors, cell, "sensitivity", eps).mean()),
                             "algorithm2": float(cell_errors(self.errors, cell, "objective", eps).mean()),
                             "difference": d, "ci_low": low, "ci_high": high,
                             "better": "Algorithm 1" if low > 0 else ("Algorithm 2" if high < 0 else "neither")})
        return pd.DataFrame(rows)

    def correction(self):
        """Corrected minus NIPS 2008 Algorithm 2 at every ε of the full-size cells (paired draws)."""
        rows = []
        for cell in self.parts["corrected"]:
            p = cell.pipeline
            other = _with_form(p, "nips2008" if p.form == "corrected" else "corrected")
            base = next(c for c in self.parts["full"] + self.parts["corrected"]
                        if c.kind == cell.kind and c.pipeline == other and "objective" in c.methods
                        and set(cell.epsilons) <= set(c.epsilons) and c.lam == cell.lam)
            n = 452 if cell.kind == "real" else 8000
            for eps in cell.epsilons:
                corrected, nips = (cell, base) if p.form == "corrected" else (base, cell)
                diff = (cell_errors(self.errors, corrected, "objective", eps).mean(axis=1)
                        - cell_errors(self.errors, nips, "objective", eps).mean(axis=1))
                low, high = t_interval(diff)
                cal = objective_perturbation_calibration(eps, n, cell.lam, form="corrected")
                rows.append({"data": cell.kind, "pipeline": "sound" if isinstance(p, SoundPipeline) else "thesis",
                             "epsilon": eps, "lam": cell.lam, "epsilon_prime": cal.epsilon_prime, "delta": cal.delta,
                             "nips2008": float(cell_errors(self.errors, nips, "objective", eps).mean()),
                             "corrected": float(cell_errors(self.errors, corrected, "objective", eps).mean()),
                             "difference": float(diff.mean()), "ci_low": low, "ci_high": high})
        return pd.DataFrame(rows)

    # -- the sound pipeline ---------------------------------------------------------------------------
    @property
    def nonprivate_error(self):
        """Five-fold CV error of the sound pipeline's standard LR at its selected λ."""
        table = self.lambda_searches[("real", "sound")]
        return float(table.loc[table.lam == self.sound_lambda, "mean"].iloc[0])

    @property
    def useful_target(self):
        return self.nonprivate_error + USEFUL_MARGIN

    def sample_size(self):
        return curve_table(self.errors, self.parts["sample"], names=self.names)

    def sample_size_best(self):
        """Per method, ε and n: the sample-size study's error at its best λ (the oracle choice)."""
        table = self.sample_size()
        return table.loc[table.groupby(["method", "epsilon", "n_train"])["mean"].idxmin()].reset_index(drop=True)

    def records_needed(self):
        return records_needed(self.errors, self.parts["sample"], self.useful_target)

    def range_variants(self):
        """Per public-range variant: standard LR and both private methods at ε = 1, n = 10 × 452, best λ of the grid."""
        rows = []
        for (scale, widen) in RANGE_VARIANTS:
            cells = [c for c in self.parts["ranges"] if (c.pipeline.scale, c.pipeline.widen) == (scale, widen)]
            sub = curve_table(self.errors, cells)
            row = {"scale": scale, "widen": widen}
            for method in _METHODS:
                m = sub[sub.method == method]
                best = m.loc[m["mean"].idxmin()]
                row[method] = float(best["mean"])
                row[f"{method}_lam"] = float(best.lam)
            rows.append(row)
        return pd.DataFrame(rows)


def _with_form(pipeline, form):
    from dataclasses import replace

    return replace(pipeline, form=form)


def run_thesis_study(seed=THESIS_SEED, n_jobs=2, n_restarts=THESIS_RESTARTS):
    """Run the chapter's whole study: four steps in two parallel batches.

    1. **Diagnosis searches** (:func:`diagnosis_search`) on the three data sets at the thesis'
       protocol (λ = 0.01, ε = 0.1, five folds × ``n_restarts``), and the sound pipeline's λ search.
    2. **Selection**, by rules fixed in this code: the *simulated-data pipeline* is the combination
       with the smallest worst deviation from the six simulated Table 2 numbers (:func:`joint_match`);
       the *real-data pipeline* is the best combination for the three real numbers among those that
       share the simulated pipeline's penalty, noise reading, noise n and (up to the equivalence on
       ±1 labels) prediction rule and error -- the same code run on other data; the *free* pipeline
       is the best real combination without that constraint (post hoc: selected on the numbers it
       is judged by).
    3. **λ searches** (:func:`lambda_search`, 25 values) of the selected pipelines, and
    4. **cells**, in one parallel batch: learning curves (Figures 4-6), full-size cells at every ε (Table 2 and Figures
       7-9), the other form of Algorithm 2 (item 6), the sound pipeline's curves, its sample-size
       study and the public-range variants.
    """
    wall = {}
    sound = SoundPipeline()
    penalties, forms = tuple(SWITCHES["penalty"]), ("nips2008",)
    start = time.perf_counter()
    diagnosis = {kind: _diagnosis_calls(kind, THESIS_LAMBDA, THESIS_EPSILON, n_restarts,
                                        50 if kind == "real" else None, penalties, seed, forms) for kind in KINDS}
    sound_calls = _lambda_calls("real", sound, LAMBDA_GRID, seed)
    calls = [c for kind in KINDS for c in diagnosis[kind]] + sound_calls
    outputs = run_calls(calls, n_jobs)
    searches, i = {}, 0
    for kind in KINDS:
        k = len(diagnosis[kind])
        searches[kind] = _diagnosis_table(kind, diagnosis[kind], outputs[i:i + k], penalties, forms,
                                          50 if kind == "real" else None)
        i += k
    lambda_searches = {("real", "sound"): _lambda_table(LAMBDA_GRID, outputs[i:])}
    sound_lambda = lambda_searches[("real", "sound")].attrs["best"]
    wall["phase 1: diagnosis searches, sound λ search"] = time.perf_counter() - start

    joint = joint_match({k: searches[k] for k in ("separable", "inseparable")},
                        {k: _targets(k) for k in ("separable", "inseparable")})
    simulated = pipeline_from_row(joint.iloc[0])
    rule = f"{simulated.prediction}/{simulated.error}"
    consistent = best_match(searches["real"], _targets("real"), penalty=simulated.penalty, noise=simulated.noise,
                            noise_n=simulated.noise_n, rule=CONSISTENT_RULES if rule in CONSISTENT_RULES else rule)
    free = best_match(searches["real"], _targets("real"))
    with_small = best_match(searches["real"], _targets("real", small=True))
    pipelines = {"literal": LITERAL, "simulated": simulated, "real": pipeline_from_row(consistent.iloc[0]),
                 "real_free": pipeline_from_row(free.iloc[0]), "sound": sound}
    rankings = {"simulated": joint, "real": consistent, "real_free": free, "real_with_small": with_small}

    R, lam = n_restarts, THESIS_LAMBDA
    parts = {"learning": [], "full": [], "corrected": [], "sample": [], "ranges": []}
    for kind in ("separable", "inseparable"):
        parts["learning"] += [Cell(kind, simulated, n, lam, (THESIS_EPSILON,), _METHODS, R) for n in SIMULATED_SIZES[:-1]]
        parts["full"].append(Cell(kind, simulated, None, lam, EPSILON_GRID, _METHODS, R))
        parts["corrected"].append(Cell(kind, _with_form(simulated, "corrected"), None, lam, (THESIS_EPSILON,),
                                       ("objective",), R))
    for pipeline, lam_p in ((pipelines["real"], lam), (pipelines["real_free"], lam), (sound, sound_lambda)):
        parts["learning"] += [Cell("real", pipeline, n, lam_p, (THESIS_EPSILON,), _METHODS, R) for n in REAL_SIZES]
        parts["full"].append(Cell("real", pipeline, None, lam_p, EPSILON_GRID, _METHODS, R))
        if pipeline is pipelines["real_free"]:
            continue
        other = "corrected" if pipeline.form == "nips2008" else "nips2008"
        parts["corrected"].append(Cell("real", _with_form(pipeline, other), None, lam_p, EPSILON_GRID,
                                       ("objective",), R))
    parts["sample"] = sample_size_cells(sound, n_restarts=R)
    for scale, widen in RANGE_VARIANTS:
        parts["ranges"] += [Cell("real", SoundPipeline(scale, widen), None, lam_r, (1.0,), _METHODS, R,
                                 RANGE_REPLICAS) for lam_r in SAMPLE_SIZE_LAMBDAS]
    start = time.perf_counter()
    searched = {("separable", "thesis"): simulated, ("inseparable", "thesis"): simulated,
                ("real", "thesis"): pipelines["real"], ("real", "free"): pipelines["real_free"]}
    lambda_calls = {key: _lambda_calls(key[0], p, LAMBDA_GRID, seed) for key, p in searched.items()}
    cell_calls = _cell_calls([c for cells in parts.values() for c in cells], seed)
    # one batch, largest jobs first (the full simulated cells, then the λ searches, then the rest)
    calls = [c for key in searched for c in lambda_calls[key]] + cell_calls
    outputs = run_calls(calls, n_jobs)
    i = 0
    for key in searched:
        lambda_searches[key] = _lambda_table(LAMBDA_GRID, outputs[i:i + THESIS_FOLDS])
        i += THESIS_FOLDS
    errors, seconds = _collect_cells(cell_calls, outputs[i:])
    wall["phase 2: λ searches and all cells"] = time.perf_counter() - start
    return ThesisStudy(seed, R, searches, pipelines, rankings, lambda_searches, sound_lambda, errors, seconds, parts,
                       wall)


__all__ += ["CONSISTENT_RULES", "USEFUL_MARGIN", "RANGE_VARIANTS", "ThesisStudy", "run_thesis_study"]

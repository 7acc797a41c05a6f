r"""The diagnosis of Veldhuizen (2020): every combination of the pipeline's switches, ranked against its numbers.

:func:`diagnosis_search` evaluates every combination of :data:`~dplr.replication.thesis.pipeline.SWITCHES`
on a data set at the thesis' protocol; :func:`best_match` and :func:`joint_match` rank the combinations
by their distance to the published numbers (:mod:`dplr.replication.thesis.published`), and
:func:`pipeline_from_row` turns a ranked row back into a pipeline.
"""
from __future__ import annotations

import itertools

import numpy as np
import pandas as pd

from dplr.calibration import sensitivity_method_calibration
from dplr.replication.runner import run_calls
from dplr.replication.thesis.data import normalise, thesis_dataset, thesis_folds
from dplr.replication.thesis.pipeline import (
    LITERAL,
    SWITCHES,
    ThesisDraws,
    ThesisPipeline,
    code_labels,
    noise_vectors,
    restart_stream,
    thesis_errors,
    thesis_fit,
    thesis_objective_perturbation,
)
from dplr.replication.thesis.published import THESIS_EPSILON, THESIS_FOLDS, THESIS_LAMBDA, THESIS_RESTARTS, THESIS_SEED
from dplr.replication.verdicts import replication_verdict

__all__ = ["diagnosis_fold", "diagnosis_calls", "diagnosis_table", "diagnosis_search", "best_match", "joint_match",
           "pipeline_from_row"]


def diagnosis_fold(kind, normalisation, fold, lam, epsilon, n_restarts, small_n, penalties, seed, forms):
    """Fold-mean errors of every switch combination on one fold of one normalisation (a task of the search).

    All combinations share the fold's noise draws; each equals the corresponding :func:`run_cells`
    result draw for draw.
    """
    X_raw, malignant = thesis_dataset(kind, seed)
    X = normalise(X_raw, normalisation, warn=False) if kind == "real" else X_raw
    train, test = thesis_folds(X.shape[0])[fold]
    n, d, N = train.size, X.shape[1], X.shape[0]
    codings = SWITCHES["labels"] if kind == "real" else ("pm1",)
    coded = {c: (code_labels(malignant, c) if kind == "real" else np.asarray(malignant, dtype=float)) for c in codings}
    # Algorithm 1's noise: Gam(d, 2/(N eps lambda)) as the thesis prints it, N the training or the total size
    theta_by_n = {noise_n: sensitivity_method_calibration(n if noise_n == "train" else N, lam, epsilon).noise_scale
                  for noise_n in SWITCHES["noise_n"]}
    draws1 = ThesisDraws.sample(restart_stream(seed, kind, fold, n, "sensitivity"), n_restarts, d)
    draws2 = ThesisDraws.sample(restart_stream(seed, kind, fold, n, "objective"), n_restarts, d)
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
                theta = theta_by_n[noise_n]
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


def diagnosis_calls(kind, lam, epsilon, n_restarts, small_n, penalties, seed, forms):
    """The runner's calls of a diagnosis search: one per normalisation and fold."""
    norms = SWITCHES["normalisation"] if kind == "real" else ("none",)
    return [(diagnosis_fold, (kind, norm, f, lam, epsilon, n_restarts, small_n, penalties, seed, tuple(forms)))
            for norm in norms for f in range(THESIS_FOLDS)]


def diagnosis_table(kind, calls, outs, penalties, forms, small_n):
    """The search's table (one row per combination) from the calls of :func:`diagnosis_calls` and their outputs."""
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
    """Every combination of :data:`~dplr.replication.thesis.pipeline.SWITCHES` (``form`` from ``forms``): fold-mean errors of the three methods.

    Returns a DataFrame with one row per combination: the switches, ``rule`` (prediction/error),
    ``form``, ``standard``, ``sensitivity``, ``objective`` (means over folds and restarts), ``fold_*``
    (the five fold means, for verdicts) and, with ``small_n``, ``standard_small`` (standard LR trained
    on the first ``small_n`` records of each training part). For simulated ``kind`` the normalisation
    and label switches do not apply (labels ±1, data already in the unit ball; the rows say
    ``normalisation="none"``). All combinations share their noise draws per fold, and each equals the
    corresponding :func:`run_cells` result draw for draw.
    """
    penalties = tuple(penalties or SWITCHES["penalty"])
    calls = diagnosis_calls(kind, lam, epsilon, n_restarts, small_n, penalties, seed, forms)
    return diagnosis_table(kind, calls, run_calls(calls, n_jobs), penalties, forms, small_n)


def best_match(table, targets, columns=None, **fixed):
    """Rank the rows of a :func:`diagnosis_search` table by distance to published values.

    ``targets`` maps a column (``"standard"``, ``"sensitivity"``, ``"objective"``,
    ``"standard_small"``) to a :class:`ThesisValue`. Adds ``max_deviation`` (the largest absolute
    difference) and ``reproduced`` (how many targets pass :func:`dplr.replication.verdicts.replication_verdict`
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

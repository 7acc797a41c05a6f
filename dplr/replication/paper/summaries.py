r"""Summaries of the paper's study: a cell's errors, the readings of "standard deviation over five folds", curves.

The unit of replication is the fold: each fold's result (the test error averaged over its 200
restarts) is one value, and the five values give the spread (:mod:`dplr.replication.statistics`).
"""
from __future__ import annotations

import dataclasses

import numpy as np
import pandas as pd

from dplr.calibration import objective_perturbation_calibration
from dplr.replication.paper.protocol import Task, method_label
from dplr.replication.statistics import jackknife_se, paired_fold_difference, t_interval

__all__ = [
    "cell_errors",
    "STD_READINGS",
    "summarise_cell",
    "curve_table",
    "correction_effect",
    "interpolate_log_epsilon",
    "effective_epsilon",
]


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
        difference, low, high = paired_fold_difference(cell_errors(errors, cell), cell_errors(errors, corrected))
        n_train = cell.n_train or cell.data.n * (cell.n_splits - 1) // cell.n_splits
        cal = objective_perturbation_calibration(cell.epsilon, n_train, cell.lam, form="corrected")
        rows.append({"data": cell.data.kind, "n_train": n_train, "epsilon": cell.epsilon,
                     "epsilon_prime": cal.epsilon_prime, "ridge": cal.ridge,
                     "difference": difference, "ci_low": low, "ci_high": high,
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

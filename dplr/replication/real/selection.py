r"""Tuning that does not waste the data: private selection against Algorithm 3 on Adult, at equal total privacy.

Three ways to release an ε-DP logistic-regression classifier (corrected Algorithm 2) on Adult's training set, each
ε-DP in total, tested on Adult's test set:

* ``"algorithm3"``: JMLR 2011's Algorithm 3 (:func:`dplr.tuning.private_tuning_experiment`) over :data:`GRID`:
  each candidate trains on one part of ``len(GRID) + 1``;
* ``"selection"``: Liu & Talwar's random stopping (:func:`dplr.selection.private_selection`) over :data:`GRID`,
  each run on the whole training set at ε/3, γ = :data:`STOP_PROBABILITY`, score share :data:`SCORE_SHARE`;
* ``"rule"``: one fit at the whole ε with the data-independent λ = d/(nε)
  (:func:`dplr.selection.data_independent_lambda`), no tuning.

All three release Algorithm 2 as the exact minimiser (``release="exact_minimiser"``, the papers' idealisation),
pinned: the study's record was computed so, before the certified release became the library's default, and is not
recomputed; the three methods share the release, so the comparison is like for like.

:data:`GRID` runs from 1e-6 (where Adult's non-private optimum lies) to 0.1, one λ per decade, so no curve is
capped by its floor; the real-data study's grid (:data:`dplr.replication.real_data.LAMBDAS`, floor 1e-3) is
Algorithm 3's as published.

**The comparison rule, fixed before any run** (:func:`selection_comparisons`): at every ε of :data:`EPSILONS`, the
per-repeat differences of test errors selection − algorithm3, rule − algorithm3 and rule − selection get a
two-sided paired t-test and a 95% t-interval (:func:`dplr.replication.statistics.paired_t_test`); the p-values of
all of them (3 contrasts × 4 ε) are Holm-corrected at family-wise level :data:`ALPHA` = 0.05. A contrast "supports"
a difference only when its Holm-adjusted p-value is below :data:`ALPHA`; the sign of the mean says which is better.
The repeats are paired by index only (each method draws from its own stream), which the paired test allows.

Streams: :func:`dplr.replication.seeding.task_stream` keyed by ("selection-study", data, method, ε) -- for
Algorithm 3 its repeats spawn from that stream in order, for the others repeat ``r`` adds ``r`` to the key -- so
repeat ``r`` is the same in a run of 3 repeats and of 30 (the chapter recomputes a prefix).
"""
from __future__ import annotations

import sys
import time

import numpy as np
import pandas as pd

from dplr.algorithms import objective_perturbation
from dplr.replication import record
from dplr.replication.real_data import DEFAULT_SEED, study_data
from dplr.replication.seeding import task_stream
from dplr.replication.statistics import holm, paired_t_test, t_interval
from dplr.selection import data_independent_lambda, private_selection
from dplr.tuning import private_tuning_experiment, test_error

__all__ = ["GRID", "EPSILONS", "STOP_PROBABILITY", "SCORE_SHARE", "ALPHA", "METHODS", "CONTRASTS", "DEFAULT_REPEATS",
           "FORMAT", "run_selection_study", "selection_points", "selection_comparisons", "write_selection_record",
           "read_selection_record", "check_against_record"]

GRID = tuple(10.0 ** np.arange(-6.0, 0.0))  # 1e-6, ..., 1e-1
EPSILONS = (0.1, 0.3, 1.0, 3.0)
STOP_PROBABILITY = 0.1  # γ: ten runs expected
SCORE_SHARE = 0.1  # the share of each run's ε spent on its noisy training error
ALPHA = 0.05
METHODS = ("algorithm3", "selection", "rule")
CONTRASTS = (("selection", "algorithm3"), ("rule", "algorithm3"), ("rule", "selection"))
DEFAULT_REPEATS = 10

#: The record's format (:mod:`dplr.replication.record`): one row per method, ε and repeat; ``n_fits`` is how many
#: private fits the method ran (Algorithm 3: one per candidate; selection: the random number of runs; rule: 1).
FORMAT = record.RecordFormat(
    columns=("data", "n", "method", "epsilon", "repeat", "lam", "error", "n_fits"),
    key=("data", "method", "epsilon", "repeat"), exact=("lam", "n_fits"), errors=("error",), close=(),
    floats=("epsilon", "lam"),
    fix="write the record again with python -m dplr.replication.real.selection book/data/selection_study.csv.gz",
    unchecked_settings=("wall_seconds",))


def _stream(seed, data, method, eps, *rest):
    return task_stream(seed, "selection-study", data, method, str(float(eps)), *rest)


def run_selection_study(n_repeats=DEFAULT_REPEATS, epsilons=EPSILONS, data="adult", seed=DEFAULT_SEED,
                        methods=METHODS):
    """Run the study; returns ``(rows, wall_seconds)`` with one row per method, ε and repeat (columns of
    :data:`FORMAT`) and the wall-clock seconds per method."""
    X, y, X_test, y_test = study_data(data, seed)
    n, d = X.shape
    rows, seconds = [], {}
    for method in methods:
        start = time.perf_counter()
        for eps in epsilons:
            if method == "algorithm3":
                # release pinned to the record's (module docstring)
                table = private_tuning_experiment(X, y, X_test, y_test, GRID, [eps], n_repeats, methods=("objective",),
                                                  random_state=_stream(seed, data, method, eps), n_jobs=1,
                                                  release="exact_minimiser")
                rows += [{"method": method, "epsilon": eps, "repeat": int(r.repeat), "lam": r.lam_private,
                          "error": r.error_private, "n_fits": len(GRID)} for r in table.itertuples()]
                continue
            for r in range(n_repeats):
                stream = _stream(seed, data, method, eps, r)
                if method == "selection":
                    out = private_selection(X, y, GRID, eps, STOP_PROBABILITY, SCORE_SHARE, random_state=stream,
                                            release="exact_minimiser")  # the record's release (module docstring)
                    lam, coef, fits = out.lam, out.coef, out.n_runs
                else:
                    lam = data_independent_lambda(n, d, eps)
                    coef = objective_perturbation(X, y, eps, lam, random_state=stream, check_input=False,
                                                  release="exact_minimiser")  # the record's release (module docstring)
                    fits = 1
                rows.append({"method": method, "epsilon": eps, "repeat": r, "lam": float(lam),
                             "error": test_error(coef, X_test, y_test), "n_fits": int(fits)})
        seconds[method] = round(time.perf_counter() - start, 1)
    frame = pd.DataFrame(rows).assign(data=data, n=n)
    return frame.loc[:, list(FORMAT.columns)], seconds


def selection_points(rows, level=0.95):
    """Mean test error and its t-interval per method and ε."""
    out = []
    for (method, eps), group in rows.groupby(["method", "epsilon"], sort=True):
        values = group["error"].to_numpy()
        low, high = t_interval(values, level) if np.ptp(values) > 0 else (values.mean(), values.mean())
        out.append({"method": method, "epsilon": eps, "mean": float(values.mean()), "ci_low": low, "ci_high": high,
                    "repeats": values.size})
    return pd.DataFrame(out)


def selection_comparisons(rows, level=0.95, alpha=ALPHA):
    """The fixed rule of the module docstring: one row per contrast and ε with the mean difference (first − second),
    its t-interval, p, Holm-adjusted p (over all rows) and the verdict."""
    wide = rows.pivot_table(index=["epsilon", "repeat"], columns="method", values="error")
    out = []
    for first, second in CONTRASTS:
        for eps, group in wide.groupby(level="epsilon", sort=True):
            diff = (group[first] - group[second]).to_numpy()
            low, high, p = paired_t_test(diff, level)
            out.append({"contrast": f"{first} - {second}", "epsilon": eps, "mean_difference": float(diff.mean()),
                        "ci_low": low, "ci_high": high, "p": p, "repeats": diff.size})
    table = pd.DataFrame(out)
    table["p_holm"] = holm(table["p"].to_numpy())
    first = table.contrast.str.split(" - ").str[0]
    second = table.contrast.str.split(" - ").str[1]
    table["verdict"] = np.where(table.p_holm >= alpha, "no difference shown",
                                np.where(table.mean_difference < 0, first + " better", second + " better"))
    return table


def write_selection_record(rows, path, n_test, seed, n_repeats, wall_seconds):
    """Write the study's ``rows`` to ``path`` (``n_test``: the test set's size per data set)."""
    record.write_record(rows, FORMAT, n_test, path, {"seed": int(seed), "n_repeats": int(n_repeats),
                                                     "wall_seconds": wall_seconds})


def read_selection_record(path):
    """``(rows, settings)`` of a record written by :func:`write_selection_record`."""
    return record.read_record(path, FORMAT)


def check_against_record(record_rows, live):
    """Raise unless every row of ``live`` is in ``record_rows`` with the same λ, number of fits and test error."""
    return record.check_against_record(record_rows, live, FORMAT)


def main(argv=None):  # pragma: no cover - the record's command
    """``python -m dplr.replication.real.selection PATH [REPEATS]``: run the study and write its record."""
    args = sys.argv[1:] if argv is None else argv
    n_repeats = int(args[1]) if len(args) > 1 else DEFAULT_REPEATS
    rows, seconds = run_selection_study(n_repeats)
    _, _, _, y_test = study_data("adult")
    write_selection_record(rows, args[0], {"adult": len(y_test)}, DEFAULT_SEED, n_repeats, seconds)
    print(seconds)


if __name__ == "__main__":  # pragma: no cover
    main()

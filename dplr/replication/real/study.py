r"""The real-data study of JMLR 2011 (Section 7): Adult and KDDCup99, both losses, both private methods.

For each data set (``"adult"``, ``"kdd"``) and loss (logistic regression; Huber SVM, :math:`h = 0.5` as in
JMLR 2011), Algorithm 3 (:func:`dplr.tuning.private_tuning_experiment`) chooses λ privately among
:data:`LAMBDAS` for Algorithm 1 and the corrected Algorithm 2, ``n_repeats`` times, on

* the trade-off: the whole training set, every ε of :data:`EPSILONS`;
* the learning curves: nested subsamples of :data:`SIZES` (fractions of the training set; the whole set is the
  trade-off run) at the ε of :data:`CURVE_EPSILONS`.

Each repeat redraws the split, the noise and the selection; within a repeat the split is shared by both
methods and every ε (common random numbers), so the per-repeat error differences of the two methods are
paired. The non-private references: the candidates' non-private minimisers on the same split (the best on
the validation part) and ERM on the whole training set with the λ the non-private choice picks most often.

**The comparison rule, fixed before any run** (:data:`ALPHA`, :func:`paired_comparisons`): at every ε and
size, the per-repeat differences objective − sensitivity of the released classifiers' test errors get a
two-sided paired t-test and a 95% t-interval; the p-values of *all* comparisons of one data set and loss
(trade-off grid and learning-curve points together, each distinct (ε, n) once) are Holm-corrected at family-wise level
:data:`ALPHA` = 0.05. A comparison "supports" a difference only when its Holm-adjusted p-value is below
:data:`ALPHA`; the sign of the mean difference then says which method is better. Every point carries a 95%
t-interval of the mean test error over the repeats.

Streams: :func:`dplr.replication.seeding.task_stream` keyed by (data set, loss, "tradeoff") and (data set,
loss, "curve", size): the numbers do not depend on the order, on threads, processes or a Dask cluster, or on
other cells. The learning-curve subsamples are nested prefixes of one permutation per data set and loss; each
repeat redraws the split, noise and selection within them.
"""
from __future__ import annotations

import time
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from dplr.algorithms import standard_erm
from dplr.datasets import majority_error
from dplr.replication.real_data import (DATASETS, DEFAULT_SEED, EPSILONS, HUBER_H, LAMBDAS, LOSSES,
                                        load_data, study_data, tradeoff_stream)
from dplr.replication.runner import active_client, run_call_groups
from dplr.replication.seeding import task_stream
from dplr.replication.statistics import holm, paired_signed_rank_test, paired_t_test, t_interval
from dplr.threads import default_threads
from dplr.tuning import private_tuning_experiment, test_error

__all__ = ["LAMBDAS", "EPSILONS", "CURVE_EPSILONS", "SIZES", "ALPHA", "DATASETS", "LOSSES", "DEFAULT_SEED",
           "DEFAULT_REPEATS", "RealStudy", "load_data", "holm", "paired_comparisons", "run_real_study",
           "study_from_rows", "references"]

CURVE_EPSILONS = (0.1, 1.0)
SIZES = (0.125, 0.25, 0.5, 1.0)  # fractions of the training set; 1.0 is the trade-off run
ALPHA = 0.05  # family-wise level of the Holm-corrected paired comparisons, per data set and loss
DEFAULT_REPEATS = 200


def paired_comparisons(rows, level=0.95, alpha=ALPHA, test="t"):
    """The fixed rule of the module docstring on ``rows`` (columns data, loss, part, epsilon, n, repeat, method,
    error_private): one row per (data, loss, part, ε, n) with the mean difference objective − sensitivity, its
    t-interval, p-value, Holm-adjusted p-value (per data set and loss) and the verdict.

    ``test="signed-rank"`` takes the p-values from Wilcoxon's signed-rank test instead
    (:func:`~dplr.replication.statistics.paired_signed_rank_test`), with the same families and correction, and the
    verdict's direction from the sign of its signed-rank sum (column ``signed_rank_sum``): a robustness check of the
    rule's verdicts, not the rule. Its table keeps the t-intervals (``ci_low``, ``ci_high``), so an interval may
    cover 0 beside a verdict of a difference; the test asks whether the differences are symmetric about 0, not
    whether their mean is 0."""
    if test not in ("t", "signed-rank"):
        raise ValueError(f"test must be 't' (the fixed rule) or 'signed-rank' (its check), not {test!r}.")
    private = rows[rows.method.isin(["objective", "sensitivity"])]
    wide = private.pivot_table(index=["data", "loss", "part", "epsilon", "n", "repeat"], columns="method",
                               values="error_private")
    out = []
    for key, group in wide.groupby(level=["data", "loss", "part", "epsilon", "n"], sort=True):
        diff = (group["objective"] - group["sensitivity"]).to_numpy()
        low, high, p = paired_t_test(diff, level)
        extra = {}
        if test == "signed-rank":
            p, signed_rank_sum = paired_signed_rank_test(diff)
            extra = {"signed_rank_sum": signed_rank_sum}
        out.append(dict(zip(["data", "loss", "part", "epsilon", "n"], key), mean_difference=float(diff.mean()),
                        ci_low=low, ci_high=high, p=p, repeats=diff.size, **extra))
    table = pd.DataFrame(out)
    # One family per data set and loss: each distinct (ε, n) once -- the whole-set learning-curve point is the
    # trade-off comparison at that ε, not a second test
    distinct = table.drop_duplicates(["data", "loss", "epsilon", "n"]).copy()
    distinct["p_holm"] = distinct.groupby(["data", "loss"])["p"].transform(lambda p: holm(p.to_numpy()))
    table = table.merge(distinct[["data", "loss", "epsilon", "n", "p_holm"]], on=["data", "loss", "epsilon", "n"])
    direction = table.mean_difference if test == "t" else table.signed_rank_sum
    table["verdict"] = np.where(table.p_holm >= alpha, "no difference shown",
                                np.where(direction < 0, "objective better", "sensitivity better"))
    return table


@dataclass(frozen=True)
class RealStudy:
    """The study's results: ``rows`` (one per repeat, method, ε, size; data, loss, part = "tradeoff"/"curve"),
    ``points`` (mean test error and 95% interval per point), ``comparisons`` (:func:`paired_comparisons`),
    ``references`` (chance and non-private ERM on all training data), settings and wall-clock seconds."""

    seed: int
    n_repeats: int
    rows: pd.DataFrame
    points: pd.DataFrame
    comparisons: pd.DataFrame
    references: pd.DataFrame
    wall_seconds: dict = field(default_factory=dict)


def _points(rows):
    out = []
    for key, group in rows.groupby(["data", "loss", "part", "method", "epsilon", "n"], sort=True):
        column = "error_nonprivate" if key[3] == "nonprivate" else "error_private"
        values = group[column].to_numpy()
        low, high = t_interval(values) if np.ptp(values) > 0 else (values.mean(), values.mean())
        out.append(dict(zip(["data", "loss", "part", "method", "epsilon", "n"], key), mean=float(values.mean()),
                        ci_low=low, ci_high=high, repeats=values.size))
    return pd.DataFrame(out)


def _cell(X, y, X_test, y_test, loss, epsilons, n_repeats, seed, key, take, n_threads):
    """One Algorithm 3 experiment of the study: ``take`` training records (``None``: all), its own stream."""
    if take is not None:
        X, y = X[take], y[take]
    stream = tradeoff_stream(seed, key, loss) if take is None else task_stream(seed, key, loss, "curve",
                                                                                       len(take))
    return private_tuning_experiment(X, y, X_test, y_test, LAMBDAS, list(epsilons), n_repeats, loss=loss,
                                     huber_h=HUBER_H, random_state=stream, n_jobs=n_threads)


def run_real_study(datasets=DATASETS, losses=LOSSES, n_repeats=DEFAULT_REPEATS, seed=DEFAULT_SEED, sizes=SIZES,
                   epsilons=EPSILONS, curve_epsilons=CURVE_EPSILONS, subsample=None, n_jobs=None, data=None,
                   processes=False):
    """Run the study; ``subsample`` (an integer) keeps that many training records (tests, quick looks).

    ``data`` maps a data-set key to a loaded :class:`~dplr.datasets.uci.RealDataset` (else :func:`load_data`).
    The experiments (one per data set, loss and training size) are named call groups of
    :func:`dplr.replication.runner.run_call_groups`: on a Dask cluster inside
    :func:`~dplr.replication.runner.use_scheduler`, on ``n_jobs`` local processes with ``processes=True``, else
    one after another here, each on ``n_jobs`` threads (``None``: every core). Every experiment draws from its
    own content-addressed stream, so none of this changes a number. Returns a :class:`RealStudy`.
    """
    start = time.perf_counter()
    loaded, groups = {}, {}
    use_processes = processes or active_client() is not None
    threads = 1 if use_processes else n_jobs
    for key in datasets:
        loaded[key] = X, y, _, _ = study_data(key, seed, data, subsample)
        for loss in losses:
            order = task_stream(seed, key, loss, "order").permutation(len(y))
            takes = [None] + [order[: int(len(y) * f)] for f in sizes if f < 1.0]
            groups[key, loss] = [(_cell, (*loaded[key], loss, epsilons if take is None else curve_epsilons,
                                          n_repeats, seed, key, take, threads)) for take in takes]
    done = run_call_groups(groups, n_jobs=(n_jobs or default_threads()) if use_processes else 1)
    frames = []
    for (key, loss), (table, *curves) in done.items():
        n = len(loaded[key][1])
        frames.append(table.assign(data=key, loss=loss, part="tradeoff", n=n))
        # the whole training set is a learning-curve point: the trade-off run at the curve's ε
        whole = table[table.epsilon.isin(curve_epsilons) | (table.method == "nonprivate")]
        frames.append(whole.assign(data=key, loss=loss, part="curve", n=n))
        for (_, args), curve in zip(groups[key, loss][1:], curves):
            frames.append(curve.assign(data=key, loss=loss, part="curve", n=len(args[-2])))
    rows = pd.concat(frames, ignore_index=True)
    return study_from_rows(rows, references(rows, loaded), seed, n_repeats,
                           {"total": round(time.perf_counter() - start, 2)})


def references(rows, loaded):
    """Chance (the majority label) and non-private ERM on the whole training set, with the λ the non-private choice
    of the trade-off's repeats picked most often (the smallest among ties), per data set and loss of ``rows``.
    ``loaded`` maps a data-set key to ``(X, y, X_test, y_test)`` (the training set the study used)."""
    out = []
    for (key, loss), table in rows[rows.part == "tradeoff"].groupby(["data", "loss"], sort=False):
        X, y, X_test, y_test = loaded[key]
        lam = float(table[table.method == "nonprivate"].lam_nonprivate.mode().min())
        w = standard_erm(X, y, lam, loss, huber_h=HUBER_H, check_input=False)
        out.append({"data": key, "loss": loss, "chance": majority_error(y, y_test), "lam_all_data": lam,
                    "error_all_data": test_error(w, X_test, y_test), "n": len(y), "n_test": len(y_test)})
    return pd.DataFrame(out)


def study_from_rows(rows, references, seed, n_repeats, wall_seconds=None):
    """A :class:`RealStudy` from its per-repeat ``rows`` (a run's, or a record's) and ``references``: the points
    and the comparisons are computed here, by the fixed rule."""
    return RealStudy(seed=seed, n_repeats=n_repeats, rows=rows, points=_points(rows),
                     comparisons=paired_comparisons(rows), references=references, wall_seconds=wall_seconds or {})

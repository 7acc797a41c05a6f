r"""The comparison with today's methods: every contender of :mod:`dplr.replication.modern.contenders` on Adult and
KDDCup99, both losses, tuned privately by Algorithm 3, on the splits of the real-data study.

For each data set, loss and contender, :func:`dplr.tuning.private_tuning_with` runs Algorithm 3 with the
contender's learner and candidates ``repeats[contender]`` times at every ε of :data:`EPSILONS`: the real-data
chapter's grid and ε = 10, the upper end of Iyengar et al.'s benchmark grid. Every repeat's split comes from the
trade-off stream of :mod:`dplr.replication.real_data`, so repeat ``r`` has the same split for every contender (and
the real-data study's Algorithms 1 and 2); the noise and the selection draw from streams named by the contender and
ε. The (ε, δ) contenders run at δ = :data:`~dplr.replication.modern.contenders.DELTA`.

**The comparison rule, fixed before any run** (:func:`paired_comparisons`): objective perturbation (Algorithm 2,
:data:`REFERENCE`) is the reference. At every ε, each other contender's per-repeat differences of test error
(contender − reference, over the repeats both ran) get a two-sided paired t-test and a 95% t-interval; the p-values
of all comparisons of one data set and loss are Holm-corrected at family-wise level :data:`ALPHA` = 0.05. A
comparison supports a difference only when its Holm-adjusted p-value is below :data:`ALPHA`; the sign of the mean
difference then says which is better. Every point carries a 95% t-interval of the mean test error.

Costs: each experiment (data set, loss, contender) is one named call group, timed in its worker
(:attr:`ModernStudy.seconds`: wall seconds on one thread, including every calibration of DP-SGD's accountant,
whose cache is cleared first).
"""
from __future__ import annotations

import time
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from dplr.algorithms import standard_erm
from dplr.datasets import majority_error
from dplr.dpsgd import clear_calibration_cache
from dplr.losses import get_loss
from dplr.replication.modern.contenders import CONTENDERS, learner
from dplr.replication.real_data import (DATASETS, DEFAULT_SEED, HUBER_H, LAMBDAS, LOSSES, study_data,
                                        tradeoff_stream)
from dplr.replication.real_data import EPSILONS as REAL_EPSILONS
from dplr.replication.runner import active_client, run_call_groups
from dplr.replication.statistics import holm, paired_t_test, t_interval
from dplr.threads import default_threads
from dplr.tuning import private_tuning_with, test_error

__all__ = ["EPSILONS", "REPEATS", "REFERENCE", "ALPHA", "ModernStudy", "run_contender", "run_modern_study",
           "study_from_rows", "points", "paired_comparisons", "references", "verdict_counts", "recommendations",
           "costs"]

#: The real-data chapter's ε grid and ε = 10 (the upper end of Iyengar et al. 2019's grid, 0.01-10).
EPSILONS = tuple(REAL_EPSILONS) + (10.0,)
#: Repeats per contender: 100 for the solver-based ones, 50 for DP-SGD (its cost: the README's performance table).
REPEATS = {name: (50 if name == "dpsgd" else 100) for name in CONTENDERS}
#: The reference of the paired comparisons: the book's corrected objective perturbation (Algorithm 2).
REFERENCE = "objective"
#: Family-wise level of the Holm-corrected comparisons, per data set and loss.
ALPHA = 0.05


@dataclass(frozen=True)
class ModernStudy:
    """The comparison's results: ``rows`` (one per data set, loss, contender, repeat and ε), ``points`` (mean test
    error and 95% interval), ``comparisons`` (:func:`paired_comparisons`), ``references`` (chance and non-private ERM),
    the seed, the repeats per contender and ``seconds`` per experiment (``"data/loss/contender"``)."""

    seed: int
    repeats: dict
    rows: pd.DataFrame
    points: pd.DataFrame
    comparisons: pd.DataFrame
    references: pd.DataFrame
    seconds: dict = field(default_factory=dict)


def run_contender(key, loss, name, X, y, X_test, y_test, epsilons, n_repeats, seed, n_threads=1):
    """One experiment: Algorithm 3 with contender ``name`` on data set ``key``'s training set ``(X, y)``.

    Returns ``(rows, seconds)``: :func:`dplr.tuning.private_tuning_with`'s rows with the data set, loss and training
    size, and the wall seconds it took."""
    if name == "dpsgd":
        clear_calibration_cache()  # every DP-SGD experiment pays for its accountant's calibrations
    start = time.perf_counter()
    contender = CONTENDERS[name]
    rows = private_tuning_with(learner(name, get_loss(loss, HUBER_H)), X, y, X_test, y_test, contender.candidates,
                               list(epsilons), n_repeats, name=name, random_state=tradeoff_stream(seed, key, loss),
                               n_jobs=n_threads)
    return rows.assign(data=key, loss=loss, n=len(y)), time.perf_counter() - start


def run_modern_study(datasets=DATASETS, losses=LOSSES, contenders=tuple(CONTENDERS), repeats=None, epsilons=EPSILONS,
                     seed=DEFAULT_SEED, subsample=None, n_jobs=None, data=None, processes=False):
    """Run the comparison; ``repeats`` maps a contender to its repeats (default :data:`REPEATS`; an integer: all).

    ``subsample`` (an integer) keeps that many training records (tests, quick looks); ``data`` maps a data-set key to
    a loaded :class:`~dplr.datasets.uci.RealDataset` (else :func:`dplr.replication.real_data.load_data`). The
    experiments are named call groups of :func:`dplr.replication.runner.run_call_groups`: on a Dask cluster inside
    :func:`~dplr.replication.runner.use_scheduler`, on ``n_jobs`` local processes with ``processes=True``, else one
    after another here on ``n_jobs`` threads. Every experiment draws from its own streams, so none of this changes
    a number. Returns a :class:`ModernStudy`.
    """
    unknown = set(contenders) - set(CONTENDERS)
    if unknown:
        raise ValueError(f"unknown contenders {sorted(unknown)}; choose from {tuple(CONTENDERS)}.")
    if isinstance(repeats, (int, np.integer)):
        repeats = {name: int(repeats) for name in contenders}
    repeats = {name: (repeats or REPEATS)[name] for name in contenders}
    use_processes = processes or active_client() is not None
    threads = 1 if use_processes else n_jobs
    loaded, groups = {}, {}
    for key in datasets:
        loaded[key] = study_data(key, seed, data, subsample)
        for loss in losses:
            for name in contenders:
                groups[f"{key}/{loss}/{name}"] = [(run_contender, (key, loss, name, *loaded[key], epsilons,
                                                                   repeats[name], seed, threads))]
    # the longest experiments first (DP-SGD, then Huber before logistic, KDDCup99 before Adult), so the workers
    # finish together
    order = sorted(groups, key=lambda g: (g.split("/")[2] != "dpsgd", g.split("/")[1] != "huber",
                                          g.split("/")[0] != "kdd"))
    done = run_call_groups({g: groups[g] for g in order}, n_jobs=(n_jobs or default_threads()) if use_processes else 1)
    rows = pd.concat([done[g][0][0] for g in groups], ignore_index=True)
    seconds = {g: round(done[g][0][1], 1) for g in groups}
    return study_from_rows(rows, references(loaded, losses), seed, repeats, seconds)


def study_from_rows(rows, references, seed, repeats, seconds=None):
    """A :class:`ModernStudy` from its per-repeat ``rows`` (a run's, or a record's): points and comparisons are
    computed here, by the fixed rule."""
    return ModernStudy(seed=seed, repeats=dict(repeats), rows=rows, points=points(rows),
                       comparisons=paired_comparisons(rows), references=references, seconds=dict(seconds or {}))


def points(rows):
    """Mean test error of the released classifier and its 95% t-interval per data set, loss, contender and ε."""
    out = []
    for key, group in rows.groupby(["data", "loss", "method", "epsilon"], sort=True):
        values = group["error_private"].to_numpy()
        low, high = t_interval(values) if np.ptp(values) > 0 else (values.mean(), values.mean())
        out.append(dict(zip(["data", "loss", "method", "epsilon"], key), mean=float(values.mean()),
                        ci_low=low, ci_high=high, repeats=values.size))
    return pd.DataFrame(out)


def paired_comparisons(rows, reference=REFERENCE, level=0.95, alpha=ALPHA):
    """The fixed rule of the module docstring: one row per (data, loss, contender, ε) with the mean difference
    contender − ``reference`` over the repeats both ran, its t-interval, p-value, Holm-adjusted p-value (per data set
    and loss, over every contender and ε) and the verdict."""
    wide = rows.pivot_table(index=["data", "loss", "epsilon", "repeat"], columns="method", values="error_private")
    out = []
    for (data, loss, eps), group in wide.groupby(level=["data", "loss", "epsilon"], sort=True):
        for name in group.columns:
            if name == reference or reference not in group.columns:  # a run without the reference: nothing paired
                continue
            both = group[[name, reference]].dropna()
            if both.empty:
                continue
            diff = (both[name] - both[reference]).to_numpy()
            low, high, p = paired_t_test(diff, level)
            out.append({"data": data, "loss": loss, "method": name, "epsilon": eps,
                        "mean_difference": float(diff.mean()), "ci_low": low, "ci_high": high, "p": p,
                        "repeats": diff.size})
    table = pd.DataFrame(out, columns=["data", "loss", "method", "epsilon", "mean_difference", "ci_low", "ci_high", "p",
                                       "repeats"])
    table["p_holm"] = table.groupby(["data", "loss"])["p"].transform(lambda p: holm(p.to_numpy()))
    table["verdict"] = np.where(table.p_holm >= alpha, "no difference shown",
                                np.where(table.mean_difference < 0, table.method + " better",
                                         reference + " better"))
    return table


def references(loaded, losses=LOSSES):
    """Chance (the majority label) and the best test error of non-private ERM on the whole training set over
    :data:`~dplr.replication.real_data.LAMBDAS` -- chosen *on the test set*: a floor for the private methods, not a
    learner. ``loaded`` maps a data-set key to ``(X, y, X_test, y_test)``."""
    out = []
    for key, (X, y, X_test, y_test) in loaded.items():
        for loss in losses:
            errors = [test_error(standard_erm(X, y, lam, loss, huber_h=HUBER_H, check_input=False), X_test, y_test)
                      for lam in LAMBDAS]
            out.append({"data": key, "loss": loss, "chance": majority_error(y, y_test),
                        "error_nonprivate_best": float(min(errors)), "n": len(y), "n_test": len(y_test)})
    return pd.DataFrame(out)


def verdict_counts(comparisons, reference=REFERENCE):
    """Per data set, loss and contender: at how many ε the fixed rule found it better than the reference, worse, or
    no difference."""
    kind = np.where(comparisons.verdict == "no difference shown", "no_difference",
                    np.where(comparisons.verdict == reference + " better", "worse", "better"))
    counts = comparisons.assign(kind=kind).pivot_table(index=["data", "loss", "method"], columns="kind",
                                                       values="epsilon", aggfunc="count", fill_value=0)
    return counts.reindex(columns=["better", "no_difference", "worse"], fill_value=0).reset_index()


def recommendations(comparisons, points, reference=REFERENCE):
    """What the fixed rule supports at each data set, loss and ε: the contenders shown better than the reference
    (``shown_better``, lowest mean error first), those not shown different, those shown worse, and ``use``: the
    shown-better contender with the lowest mean error, else the reference. Nothing here is a new test: it reads the
    comparisons of :func:`paired_comparisons`."""
    means = points.set_index(["data", "loss", "method", "epsilon"])["mean"]
    out = []
    for (data, loss, eps), group in comparisons.groupby(["data", "loss", "epsilon"], sort=True):
        def by_mean(names):
            return sorted(names, key=lambda m: (means[data, loss, m, eps], m))
        better = by_mean(group[group.verdict == group.method + " better"].method)
        same = by_mean(group[group.verdict == "no difference shown"].method)
        worse = by_mean(group[group.verdict == reference + " better"].method)
        out.append({"data": data, "loss": loss, "epsilon": eps, "use": better[0] if better else reference,
                    "shown_better": tuple(better), "not_distinguished": tuple(same), "shown_worse": tuple(worse)})
    return pd.DataFrame(out)


def costs(seconds, repeats, n_epsilons, n_candidates=len(LAMBDAS)):
    """Wall seconds per private model (Algorithm 3 with all its candidates' fits and the selection) and per fit, per
    experiment of ``seconds`` (``"data/loss/contender"`` -> seconds, as :attr:`ModernStudy.seconds`)."""
    out = []
    for name, total in seconds.items():
        data, loss, method = name.split("/")
        models = repeats[method] * n_epsilons
        out.append({"data": data, "loss": loss, "method": method, "seconds": float(total), "models": models,
                    "per_model": float(total) / models, "per_fit": float(total) / (models * n_candidates)})
    return pd.DataFrame(out)

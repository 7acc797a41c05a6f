r"""The protocol every study on Adult and KDDCup99 shares (JMLR 2011, Section 7): data, seed, λ and ε grids.

DP-SGD's settings (:data:`DELTA`, :class:`DPSGDConfig`, :func:`dpsgd_parameters`) live here too: the comparison
with today's methods and the selection study (:mod:`dplr.replication.real.selection`) both run it.

The real-data study (:mod:`dplr.replication.real`) and the comparison with today's methods
(:mod:`dplr.replication.modern`) run on the same data with the same splits: both take each repeat's split of
Algorithm 3 from the stream :func:`tradeoff_stream` of a data set and loss, so their per-repeat test errors pair
(common random numbers), and neither study imports the other.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from dplr.datasets import load_adult, load_kddcup99
from dplr.replication.seeding import task_stream

__all__ = ["DATASETS", "LOSSES", "HUBER_H", "DEFAULT_SEED", "KDD_SIZES", "LAMBDAS", "EPSILONS", "DELTA", "DPSGD_BATCH",
           "DPSGDConfig", "dpsgd_parameters", "load_data", "study_data", "tradeoff_stream"]

#: The data sets: UCI Adult (its own split) and a sample of KDDCup99's 10 % file.
DATASETS = ("adult", "kdd")
#: The losses: logistic regression and the Huber SVM.
LOSSES = ("logistic", "huber")
#: The Huber SVM's h (JMLR 2011, Section 7: h = 0.5).
HUBER_H = 0.5
#: The seed of every stream of the real-data studies.
DEFAULT_SEED = 20110301
#: KDDCup99: training and test connections sampled from the 10 % file.
KDD_SIZES = (40_000, 10_000)
#: Algorithm 3's λ candidates (JMLR 2011, Section 7 uses a grid of this kind; five, one per part).
LAMBDAS = tuple(10.0 ** np.array([-3.0, -2.5, -2.0, -1.5, -1.0]))
#: The ε grid of the real-data chapter: seven values from 0.01 to 3.
EPSILONS = (0.01, 0.03, 0.1, 0.3, 1.0, 2.0, 3.0)


#: δ of every (ε, δ) contender: 1e-5, the usual choice in the DP-SGD literature, below 1/n on Adult and KDDCup99.
DELTA = 1e-5
#: DP-SGD's expected lot size (Poisson sampling rate = lot / records of the part).
DPSGD_BATCH = 256


@dataclass(frozen=True)
class DPSGDConfig:
    """One DP-SGD candidate: passes over the data (epochs), learning rate, clipping norm, ridge λ and expected lot
    size."""

    epochs: float
    learning_rate: float
    clip_norm: float = 1.0
    lam: float = 1e-4
    lot: int = DPSGD_BATCH


def dpsgd_parameters(config, n):
    """A :class:`DPSGDConfig` as :func:`dplr.dpsgd.dp_sgd`'s parameters on ``n`` records (lots of about
    ``config.lot``, :data:`DPSGD_BATCH` by default)."""
    # the sampling rate to two significant digits: parts of one split differ by a record, and one rate per
    # data set lets the accountant's calibration be computed once (any rate is private if it is the one used)
    rate = min(1.0, float(f"{config.lot / n:.2g}"))
    steps = max(1, int(round(config.epochs / rate)))
    # rounding="nearest": the float64 arithmetic the modern and selection records were drawn with, pinned (the
    # default "directed" covers the clipping's and the lot sum's rounding, dplr.dpsgd, and draws other bits)
    return {"sampling_rate": rate, "steps": steps, "learning_rate": config.learning_rate,
            "clip_norm": config.clip_norm, "lam": config.lam, "rounding": "nearest"}


def load_data(key, seed=DEFAULT_SEED):
    """The data set ``key``: Adult's own split, or the KDDCup99 sample drawn from the seed's stream."""
    if key == "adult":
        return load_adult(download=False)
    if key == "kdd":
        return load_kddcup99(*KDD_SIZES, download=False, random_state=task_stream(seed, "kdd", "sample"))
    raise ValueError(f"unknown data set {key!r}; choose from {DATASETS}.")


def study_data(key, seed=DEFAULT_SEED, data=None, subsample=None):
    """``(X, y, X_test, y_test)`` of data set ``key`` as a study uses it: ``data[key]`` (a loaded
    :class:`~dplr.datasets.uci.RealDataset`) if given, else :func:`load_data`; ``subsample`` (an integer) keeps that
    many training records, drawn from the seed's stream (tests, quick looks)."""
    dataset = (data or {}).get(key) or load_data(key, seed)
    X, y = dataset.X_train, dataset.y_train
    if subsample is not None:
        keep = task_stream(seed, key, "subsample").permutation(len(y))[:int(subsample)]
        X, y = X[keep], y[keep]
    return X, y, dataset.X_test, dataset.y_test


def tradeoff_stream(seed, key, loss):
    """The stream of the trade-off experiment of data set ``key`` and ``loss``: Algorithm 3's repeats spawn from it,
    and each repeat's split is drawn from it the same way for every method (:func:`dplr.tuning.private_tuning_with`)."""
    return task_stream(seed, key, loss, "tradeoff")

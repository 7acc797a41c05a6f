r"""The paper's choice of λ (Section 6): five-fold cross-validation of standard LR on a separate holdout.

The holdout is its own data set (``DataSpec(kind, role="holdout")``, its own random stream), never
part of the :math:`N = 17{,}500` points of the experiments. The paper found :math:`\lambda = 0.01` for
both data sets; :func:`tune_lambda` repeats the search on :data:`~dplr.replication.paper.protocol.LAMBDA_GRID`.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from dplr.algorithms import standard_erm
from dplr.replication.paper.protocol import (
    DEFAULT_SEED,
    LAMBDA_GRID,
    PAPER_FOLDS,
    PAPER_HOLDOUT,
    DataSpec,
    cv_splits,
)
from dplr.replication.runner import run_calls
from dplr.tuning import test_error

__all__ = ["LambdaTuning", "tuning_fold_errors", "lambda_tuning_result", "tune_lambda"]


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


def tuning_fold_errors(data, fold, lambdas, seed, n_splits):
    """Test errors of standard LR on one fold of the holdout ``data``, one per λ (a task of the study)."""
    X, y = data.generate(seed)
    train, test = cv_splits(data, n_splits, seed)[fold]
    return [float(test_error(np.atleast_2d(standard_erm(X[train], y[train], lam)), X[test], y[test])[0])
            for lam in lambdas]


def lambda_tuning_result(lambdas, rows):
    """The :class:`LambdaTuning` of the fold errors ``rows`` (one row per fold, one column per λ)."""
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
    rows = run_calls([(tuning_fold_errors, (data, f, lambdas, seed, n_splits)) for f in range(n_splits)], n_jobs)
    return lambda_tuning_result(lambdas, rows)

r"""The contenders of the comparison with today's methods, each as one private learner with its candidates.

Every contender is a function ``fit(X, y, candidate, epsilon, random_state)`` that is (ε, δ)-DP in the records it is
given (δ = 0 for the two pure-ε algorithms of the book), and a tuple of hyperparameter candidates. Algorithm 3 of
JMLR 2011 in its general form (:func:`dplr.tuning.private_tuning_with`) trains candidate ``i`` on part ``i`` of a
random split and selects one with the exponential mechanism on the last part, so every hyperparameter is chosen
privately, inside the budget, and never on the test set. With the real-data study's streams
(:mod:`dplr.replication.real.study`) the splits are the ones Algorithms 1 and 2 had there, so the rows pair with its
record.

=====================  ===============================================================  ==========  ==================
contender              the learner (its docstring states the privacy theorem, source)   guarantee   candidates
=====================  ===============================================================  ==========  ==================
``sensitivity``        :func:`dplr.algorithms.sensitivity_method` (NIPS 2008)           ε           :data:`LAMBDAS`
``objective``          :func:`dplr.algorithms.objective_perturbation` (JMLR 2011)       ε           :data:`LAMBDAS`
``gaussian_output``    :func:`dplr.algorithms.gaussian_output_perturbation`             (ε, δ)      :data:`LAMBDAS`
``gaussian_objective`` :func:`dplr.algorithms.gaussian_objective_perturbation`          (ε, δ)      :data:`LAMBDAS`
``amp``                :func:`dplr.algorithms.approximate_minima_perturbation`          (ε, δ)      :data:`LAMBDAS`
``dpsgd``              :func:`dplr.dpsgd.dp_sgd` (accounted by ``dp-accounting``)        (ε, δ)      :data:`DPSGD_CONFIGS`
=====================  ===============================================================  ==========  ==================

The two objective perturbations run as the study's record was computed, pinned to ``release="exact_minimiser"``:
the solver's point released as if it were the exact minimiser (the papers' idealisation; the certified release of
the book's theorem ``thm-op-certified``, ``release="certified"``, came after the record and is not in it).

The theorems and their conditions are stated where the mechanisms live (:mod:`dplr.algorithms`,
:mod:`dplr.gaussian`, :mod:`dplr.dpsgd`). δ is :data:`DELTA` for every (ε, δ) contender, below 1/n for both data sets
(:func:`check_delta` refuses a larger one).
"""
from __future__ import annotations

from dataclasses import dataclass
from functools import partial
from typing import Callable

from dplr.learners import get_learner
from dplr.replication.real_data import DELTA, DPSGD_BATCH, DPSGDConfig, LAMBDAS, dpsgd_parameters  # shared protocol

__all__ = ["LAMBDAS", "DELTA", "DPSGD_BATCH", "DPSGD_CONFIGS", "DPSGDConfig", "Contender", "CONTENDERS",
           "check_delta", "dpsgd_parameters", "fit_contender", "lambda_parameters", "learner"]

#: DP-SGD's candidates: as many as :data:`LAMBDAS`, so the split is the one of the other contenders (pairing).
DPSGD_CONFIGS = (DPSGDConfig(2, 1.0), DPSGDConfig(5, 1.0), DPSGDConfig(5, 4.0), DPSGDConfig(15, 1.0),
                 DPSGDConfig(15, 4.0))


def lambda_parameters(lam, n):
    """A λ candidate as the learner's parameters: ``{"lam": lam}`` (``n`` unused)."""
    return {"lam": lam}


def idealised_parameters(lam, n):
    """A λ candidate of an objective perturbation, released as the exact minimiser (``release="exact_minimiser"``,
    the papers' idealisation): the study's record was computed that way, and the release is pinned to it."""
    return {"lam": lam, "release": "exact_minimiser"}


@dataclass(frozen=True)
class Contender:
    """A contender: its learner's name in :data:`dplr.learners.LEARNERS`, its candidates, and ``parameters(candidate,
    n)``, a candidate as the learner's parameters on ``n`` records."""

    name: str
    candidates: tuple
    parameters: Callable = lambda_parameters

    @property
    def guarantee(self) -> str:
        """Its learner's guarantee: ``"epsilon"`` or ``"epsilon-delta"``."""
        return get_learner(self.name).guarantee


CONTENDERS = {c.name: c for c in (
    Contender("sensitivity", LAMBDAS),
    Contender("objective", LAMBDAS, idealised_parameters),
    Contender("gaussian_output", LAMBDAS),
    Contender("gaussian_objective", LAMBDAS, idealised_parameters),
    Contender("amp", LAMBDAS),
    Contender("dpsgd", DPSGD_CONFIGS, dpsgd_parameters),
)}


def check_delta(delta, n):
    """δ for a data set of ``n`` records: in (0, 1/n), else a ``ValueError`` that says why and what to use."""
    if not (0.0 < delta < 1.0 / n):
        raise ValueError(f"delta = {delta!r} for n = {n} records: (epsilon, delta)-DP with delta >= 1/n allows "
                         f"releasing a record outright; use delta < 1/n, e.g. {DELTA:g}.")
    return float(delta)


def fit_contender(name, X, y, candidate, epsilon, random_state, loss="logistic", delta=DELTA):
    """Contender ``name``'s private learner on ``(X, y)`` with ``candidate`` at (``epsilon``, ``delta``).

    The rows were checked where they entered (:func:`dplr.tuning.private_tuning_with`); ``delta`` is not used by the
    pure-ε contenders. For :func:`~dplr.tuning.private_tuning_with`, bind ``name``, ``loss`` and ``delta`` with
    ``functools.partial`` (a picklable learner).
    """
    if name not in CONTENDERS:
        raise ValueError(f"unknown contender {name!r}; choose from {tuple(CONTENDERS)}.")
    learner = get_learner(name)
    target = {"epsilon": epsilon, "delta": delta}
    return learner.release(X, y, **{key: target[key] for key in learner.privacy_target}, loss=loss,
                           random_state=random_state, check_input=False,
                           **CONTENDERS[name].parameters(candidate, len(y)))


def learner(name, loss="logistic", delta=DELTA):
    """``fit(X, y, candidate, epsilon, random_state)`` of contender ``name`` (picklable)."""
    return partial(fit_contender, name, loss=loss, delta=delta)

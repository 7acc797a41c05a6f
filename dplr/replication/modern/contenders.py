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


from dplr.algorithms import (
    approximate_minima_perturbation,
    gaussian_objective_perturbation,
    gaussian_output_perturbation,
    objective_perturbation,
    sensitivity_method,
)
from dplr.dpsgd import dp_sgd
from dplr.replication.real_data import LAMBDAS  # the λ candidates of every regularised contender (Algorithm 3)

__all__ = ["LAMBDAS", "DELTA", "DPSGD_BATCH", "DPSGD_CONFIGS", "DPSGDConfig", "Contender", "CONTENDERS",
           "check_delta", "fit_contender", "learner"]

#: δ of every (ε, δ) contender: 1e-5, the usual choice in the DP-SGD literature, below 1/n on Adult and KDDCup99.
DELTA = 1e-5
#: DP-SGD's expected lot size (Poisson sampling rate = lot / records of the part).
DPSGD_BATCH = 256


@dataclass(frozen=True)
class DPSGDConfig:
    """One DP-SGD candidate: passes over the data (epochs), learning rate, clipping norm and ridge λ."""

    epochs: float
    learning_rate: float
    clip_norm: float = 1.0
    lam: float = 1e-4


#: DP-SGD's candidates: as many as :data:`LAMBDAS`, so the split is the one of the other contenders (pairing).
DPSGD_CONFIGS = (DPSGDConfig(2, 1.0), DPSGDConfig(5, 1.0), DPSGDConfig(5, 4.0), DPSGDConfig(15, 1.0),
                 DPSGDConfig(15, 4.0))


@dataclass(frozen=True)
class Contender:
    """A contender's name, its learner's guarantee (``"epsilon"`` or ``"epsilon-delta"``) and its candidates."""

    name: str
    guarantee: str
    candidates: tuple


CONTENDERS = {c.name: c for c in (
    Contender("sensitivity", "epsilon", LAMBDAS),
    Contender("objective", "epsilon", LAMBDAS),
    Contender("gaussian_output", "epsilon-delta", LAMBDAS),
    Contender("gaussian_objective", "epsilon-delta", LAMBDAS),
    Contender("amp", "epsilon-delta", LAMBDAS),
    Contender("dpsgd", "epsilon-delta", DPSGD_CONFIGS),
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
    if name == "sensitivity":
        return sensitivity_method(X, y, epsilon, candidate, loss, random_state=random_state, check_input=False)
    if name == "objective":
        # the record was computed with the idealisation (the solver's point as the exact minimiser): pinned
        return objective_perturbation(X, y, epsilon, candidate, loss, random_state=random_state, check_input=False,
                                      release="exact_minimiser")
    if name == "gaussian_output":
        return gaussian_output_perturbation(X, y, epsilon, delta, candidate, loss, random_state=random_state,
                                            check_input=False)
    if name == "gaussian_objective":
        return gaussian_objective_perturbation(X, y, epsilon, delta, candidate, loss, random_state=random_state,
                                               check_input=False, release="exact_minimiser")  # as the record: pinned
    if name == "amp":
        return approximate_minima_perturbation(X, y, epsilon, delta, candidate, loss=loss, random_state=random_state,
                                               check_input=False)
    if name == "dpsgd":
        # the sampling rate to two significant digits: parts of one split differ by a record, and one rate per
        # data set lets the accountant's calibration be computed once (any rate is private if it is the one used)
        rate = min(1.0, float(f"{DPSGD_BATCH / len(y):.2g}"))
        steps = max(1, int(round(candidate.epochs / rate)))
        return dp_sgd(X, y, epsilon, delta, rate, steps, candidate.learning_rate, clip_norm=candidate.clip_norm,
                      lam=candidate.lam, loss=loss, random_state=random_state, check_input=False)
    raise ValueError(f"unknown contender {name!r}; choose from {tuple(CONTENDERS)}.")


def learner(name, loss="logistic", delta=DELTA):
    """``fit(X, y, candidate, epsilon, random_state)`` of contender ``name`` (picklable)."""
    return partial(fit_contender, name, loss=loss, delta=delta)

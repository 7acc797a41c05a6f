r"""One description of each learner of the book: its algorithm, its guarantee, its parameters.

A :class:`Learner` names an algorithm of :mod:`dplr.algorithms` (or :func:`dplr.dpsgd.dp_sgd`), the privacy it
proves (``"none"``, ``"epsilon"`` or ``"epsilon-delta"``) and the names of its parameters beyond the data, the
privacy target and the loss. Its :meth:`Learner.release` calls the algorithm with one calling convention for all of
them: ``release(X, y, epsilon=..., delta=..., loss=..., **parameters)``, the privacy target only where the guarantee
has it, and :meth:`Learner.calibration` the calibration such a call releases with
(:func:`dplr.algorithms.calibration_used`). :data:`LEARNERS` is the registry of the book's algorithms; the scikit-learn estimators
(:mod:`dplr.estimators`), the auditable forms (:mod:`dplr.analysis.auditable`) and the modern study's contenders
(``dplr.replication.modern.contenders``) call their algorithm through it. The privacy theorems and their
conditions are stated where the algorithms live.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

from dplr.algorithms import (
    approximate_minima_perturbation,
    calibrated_release,
    calibration_used,
    gaussian_objective_perturbation,
    gaussian_output_perturbation,
    objective_perturbation,
    sensitivity_method,
    standard_erm,
)
from dplr.dpsgd import dp_sgd

__all__ = ["GUARANTEES", "Learner", "LEARNERS", "get_learner"]

#: the privacy a learner proves -- none (the non-private baseline), pure ε, or (ε, δ) -- and its target's parameters
GUARANTEES = {"none": (), "epsilon": ("epsilon",), "epsilon-delta": ("epsilon", "delta")}


@dataclass(frozen=True)
class Learner:
    r"""A learner: ``name``, its ``algorithm`` (called as ``algorithm(X, y[, epsilon[, delta]], **parameters)``),
    its ``guarantee`` (a key of :data:`GUARANTEES`) and the names of its ``parameters`` beyond ``X``, ``y``, the
    privacy target and the loss (each a keyword of ``algorithm``)."""

    name: str
    algorithm: Callable
    guarantee: str
    parameters: tuple

    def __post_init__(self):
        if self.guarantee not in GUARANTEES:
            raise ValueError(f"guarantee must be one of {tuple(GUARANTEES)}, got {self.guarantee!r}.")

    @property
    def privacy_target(self) -> tuple:
        """The privacy target's parameter names -- ``()``, ``("epsilon",)`` or ``("epsilon", "delta")``."""
        return GUARANTEES[self.guarantee]

    def release(self, X, y, *, epsilon=None, delta=None, **parameters):
        """``algorithm(X, y, [epsilon, [delta,]] **parameters)``: the privacy target as the guarantee needs it.

        ``parameters`` are passed on by name (the algorithm checks them); an ``epsilon`` or ``delta`` the guarantee
        does not use is refused, so that a non-private or pure-ε learner is never mistaken for an (ε, δ) one.
        """
        return self.algorithm(X, y, *self._target(epsilon, delta), **parameters)

    def calibration(self, X, y, *, epsilon=None, delta=None, **parameters):
        """The calibration record :meth:`release` with the same arguments releases with
        (:func:`dplr.algorithms.calibration_used`); a ``ValueError`` for the non-private learner."""
        return calibration_used(self.algorithm, X, y, *self._target(epsilon, delta), **parameters)

    def calibrated_release(self, X, y, *, epsilon=None, delta=None, **parameters):
        """``(coef, calibration)``: :meth:`release` and the calibration it released with, calibrated once
        (:func:`dplr.algorithms.calibrated_release`); a ``ValueError`` for the non-private learner."""
        return calibrated_release(self.algorithm, X, y, *self._target(epsilon, delta), **parameters)

    def _target(self, epsilon, delta):
        values = {"epsilon": epsilon, "delta": delta}
        unused = [name for name, value in values.items() if value is not None and name not in self.privacy_target]
        if unused:
            raise TypeError(f"learner {self.name!r} ({self.guarantee}) takes no {' or '.join(unused)}.")
        return tuple(values[name] for name in self.privacy_target)


#: the book's learners by name (the names of the modern study's contenders, and ``"standard"``)
LEARNERS = {learner.name: learner for learner in (
    Learner("standard", standard_erm, "none", ("lam", "tol")),
    Learner("sensitivity", sensitivity_method, "epsilon", ("lam", "tol", "release")),
    Learner("objective", objective_perturbation, "epsilon", ("lam", "form", "tol", "release", "gamma")),
    Learner("gaussian_output", gaussian_output_perturbation, "epsilon-delta", ("lam", "tol", "release")),
    Learner("gaussian_objective", gaussian_objective_perturbation, "epsilon-delta", ("lam", "tol", "release",
                                                                                     "gamma")),
    Learner("amp", approximate_minima_perturbation, "epsilon-delta", ("lam", "gamma", "epsilon_split",
                                                                        "delta_split")),
    Learner("dpsgd", dp_sgd, "epsilon-delta", ("sampling_rate", "steps", "learning_rate", "clip_norm", "lam",
                                               "neighbouring", "accountant", "lot_size")),
)}


def get_learner(name) -> Learner:
    """The :class:`Learner` called ``name`` in :data:`LEARNERS`; a ``ValueError`` naming the choices otherwise."""
    try:
        return LEARNERS[name]
    except (KeyError, TypeError):
        raise ValueError(f"unknown learner {name!r}; choose from {tuple(LEARNERS)}.") from None

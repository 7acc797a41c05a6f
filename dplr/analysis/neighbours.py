r"""Neighbouring data sets: the pairs every privacy claim is about, and the hard ones the book uses.

Two data sets :math:`D = (X, y)` and :math:`D' = (X', y')` of equal size are neighbours when they
differ in one record (NIPS 2008, Definition 1). The paper's assumptions hold for every record:
:math:`\lVert x_i\rVert \le 1` and :math:`y_i \in \{-1, +1\}`. The loss functions only see
:math:`u_i = y_i x_i`, so a record is described by :math:`u_i` in the unit ball.

:class:`NeighbouringPair` holds one such pair (and checks it); :func:`anchored_pair` and
:func:`l1_tie_breaking_pair` build the structured pairs that the sensitivity searches found to be
hard (:mod:`dplr.analysis.sensitivity`, :mod:`dplr.analysis.lasso`).
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from dplr.ball import check_rows_in_ball_exactly

__all__ = ["NeighbouringPair", "anchored_pair", "l1_tie_breaking_pair"]


@dataclass(frozen=True)
class NeighbouringPair:
    r"""Two data sets :math:`D = (X, y)` and :math:`D' = (X', y')` of equal size differing in one record.

    Use :meth:`from_records` to build one from shared records and the two versions of the replaced
    record (it is appended as the last row). Construction checks the paper's assumptions
    (:math:`\lVert x_i\rVert \le 1`, labels in {-1, +1}) and that at most one row differs, and keeps the rows as
    :func:`dplr.ball.check_rows_in_ball_exactly` returns them: a row inside the ball exactly is kept bit for bit (the
    constructions put records on the sphere on purpose), a row outside by rounding only is projected, so that every
    pair lies in the ball exactly -- each row's image depends on that row alone, so the shared rows stay shared --; a
    row outside beyond rounding is refused.
    """

    X: np.ndarray
    y: np.ndarray
    X_prime: np.ndarray
    y_prime: np.ndarray

    def __post_init__(self):
        arrays = [np.array(a, dtype=float) for a in (self.X, self.y, self.X_prime, self.y_prime)]
        X, y, Xp, yp = arrays
        if X.ndim != 2 or Xp.shape != X.shape:
            raise ValueError(f"X and X_prime must be 2-D arrays of the same shape, got {X.shape} and {Xp.shape}.")
        if y.shape != (X.shape[0],) or yp.shape != y.shape:
            raise ValueError(f"y and y_prime must have shape ({X.shape[0]},), got {y.shape} and {yp.shape}.")
        if not (np.all(np.abs(y) == 1) and np.all(np.abs(yp) == 1)):
            raise ValueError("labels must take values in {-1, +1}.")
        # the rows as the proofs need them: inside the unit ball exactly, for their float64 entries as real numbers
        # (a row such as [0.6, 0.8], of norm 1 as computed, lies outside by rounding and is projected)
        X, Xp = check_rows_in_ball_exactly(X), check_rows_in_ball_exactly(Xp)
        arrays = [X, y, Xp, yp]
        differ = np.flatnonzero(np.any(X != Xp, axis=1) | (y != yp))
        if differ.size > 1:
            raise ValueError(
                f"neighbouring data sets differ in exactly one record; these differ in {differ.size} rows "
                f"(first {differ[:5].tolist()})."
            )
        for name, value in zip(("X", "y", "X_prime", "y_prime"), arrays):
            value.setflags(write=False)
            object.__setattr__(self, name, value)

    @classmethod
    def from_records(cls, X_shared, y_shared, record, label, record_prime, label_prime):
        """Pair ``D = shared + (record, label)``, ``D' = shared + (record_prime, label_prime)``."""
        X_shared = np.asarray(X_shared, dtype=float)
        d = np.asarray(record, dtype=float).shape[0]
        X_shared = X_shared.reshape(-1, d)
        y_shared = np.asarray(y_shared, dtype=float).reshape(-1)
        X = np.vstack([X_shared, np.asarray(record, dtype=float)[None, :]])
        Xp = np.vstack([X_shared, np.asarray(record_prime, dtype=float)[None, :]])
        return cls(X, np.r_[y_shared, float(label)], Xp, np.r_[y_shared, float(label_prime)])

    @property
    def n(self) -> int:
        return self.X.shape[0]

    @property
    def d(self) -> int:
        return self.X.shape[1]

    def swapped(self) -> "NeighbouringPair":
        """The same pair with the roles of :math:`D` and :math:`D'` exchanged."""
        return NeighbouringPair(self.X_prime, self.y_prime, self.X, self.y)


def anchored_pair(n, anchor_radius, record, record_prime) -> NeighbouringPair:
    r"""The pair whose ``n - 1`` shared records all equal :math:`(\rho, 0, \dots, 0)` ("the anchor").

    ``anchor_radius`` :math:`\rho \in [0, 1]`; ``record`` and ``record_prime`` are :math:`u = yx` of the
    replaced record in :math:`D` and :math:`D'` (stored with label +1).
    """
    record = np.asarray(record, dtype=float)
    anchor = np.zeros(record.shape[0])
    anchor[0] = anchor_radius
    return NeighbouringPair.from_records(np.tile(anchor, (n - 1, 1)), np.ones(n - 1), record, 1.0,
                                         np.asarray(record_prime, dtype=float), 1.0)


def l1_tie_breaking_pair(n, lam=None, tilt=0.1) -> NeighbouringPair:
    r"""A neighbouring pair in :math:`d = 2` on which the L1 minimiser jumps between two corners.

    The ``n - 1`` shared records are all :math:`x = (1, 1)/\sqrt2` with label +1. Their loss depends
    on :math:`w_1 + w_2` only, and so does :math:`\lambda\lVert w\rVert_1` in the positive quadrant:
    without the replaced record the minimiser is a whole segment
    :math:`\{w \ge 0 : w_1 + w_2 = s\}`. The replaced record is the same point rotated by
    :math:`-` ``tilt`` (in :math:`D`) or :math:`+` ``tilt`` (in :math:`D'`); it breaks the tie towards
    :math:`(s, 0)` or :math:`(0, s)`, a jump of about :math:`\sqrt2\,s` however large :math:`n` is.
    ``lam`` is accepted for symmetry with the other constructors and ignored.
    """
    angle = np.pi / 4
    base = np.array([np.cos(angle), np.sin(angle)])
    a = np.array([np.cos(angle - tilt), np.sin(angle - tilt)])
    a_prime = np.array([np.cos(angle + tilt), np.sin(angle + tilt)])
    return NeighbouringPair.from_records(np.tile(base, (n - 1, 1)), np.ones(n - 1), a, 1.0, a_prime, 1.0)

r"""The regularised, perturbed ERM objective both algorithms minimise: value, gradient and Hessian.

For problems :math:`j = 1, \dots, k`, each with its own perturbation :math:`b_j` and extra ridge term
:math:`\Delta_j \ge 0`,

.. math::

    J_j(w) = \frac{\lambda + \Delta_j}{2}\lVert w\rVert^2 + \frac{b_j^\top w}{n}
             + \sum_{i=1}^n \omega_i\, \ell(u_{ji}^\top w), \qquad u_{ji} = y_i x_i,

with weights :math:`\omega_i = 1/n` (the paper's average loss) unless given. With :math:`b = 0,
\Delta = 0` this is regularised logistic regression (NIPS 2008, Section 3); with :math:`b` drawn from
:math:`e^{-\varepsilon\lVert b\rVert/2}` it is Algorithm 2 (Section 4); with :math:`\Delta > 0` the
corrected Algorithm 2 of JMLR 2011. The gradient and Hessian are

.. math::

    \nabla J_j(w) = (\lambda+\Delta_j) w + \frac{b_j}{n} + \sum_i \omega_i \ell'(u_{ji}^\top w)\, u_{ji}, \qquad
    \nabla^2 J_j(w) = (\lambda+\Delta_j) I + \sum_i \omega_i \ell''(u_{ji}^\top w)\, u_{ji} u_{ji}^\top .

Two layouts of the signed data :math:`u`: one data set shared by every problem (``U`` of shape
``(n, d)``, the algorithms' case) or one data set per problem (``(k, n, d)``, the sensitivity
searches, which move the records). The loss object supplies every derivative (:mod:`dplr.losses`).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from dplr.losses import get_loss

__all__ = ["RegularizedERM", "regularized_erm_objective", "regularized_erm_gradient"]


@dataclass(frozen=True)
class RegularizedERM:
    r""":math:`J_j` above, for the rows ``w_j`` of ``W`` (shape ``(k, d)``).

    ``U``: signed data :math:`y_i x_i`, ``(n, d)`` shared or ``(k, n, d)`` per problem; ``lam``:
    :math:`\lambda`; ``loss``: a loss object; ``b``: ``None`` (:math:`b = 0`) or ``(k, d)``; ``ridge``:
    :math:`\Delta`, a number or one per problem ``(k,)``; ``weights``: ``None`` (:math:`1/n` each) or
    :math:`\omega` of shape ``(n,)`` -- e.g. a block of identical records stored once.
    """

    U: np.ndarray
    lam: float
    loss: Any
    b: np.ndarray | None = None
    ridge: Any = 0.0
    weights: np.ndarray | None = None

    @property
    def n(self) -> int:
        return self.U.shape[-2]

    def _reg(self):
        reg = self.lam + np.asarray(self.ridge, dtype=float)
        return reg if reg.ndim == 0 else reg[:, None]

    def _weights(self):
        """The weights; ``None`` means 1/n each with the shared layout (then sums are means)."""
        if self.weights is not None or self.U.ndim == 2:
            return self.weights
        return np.full(self.n, 1.0 / self.n)

    def margins(self, W):
        """:math:`z_{ji} = u_{ji}^\\top w_j`, shape ``(k, n)``."""
        return W @ self.U.T if self.U.ndim == 2 else np.einsum("knd,kd->kn", self.U, W)

    def value(self, W):
        """:math:`J_j(w_j)` for every row, shape ``(k,)``."""
        reg = self._reg()
        out = 0.5 * (reg if reg.ndim == 0 else reg[:, 0]) * np.einsum("kd,kd->k", W, W)
        if self.b is not None:
            out = out + np.einsum("kd,kd->k", self.b, W) / self.n
        values = self.loss.value(self.margins(W))
        weights = self._weights()
        return out + (values.mean(axis=1) if weights is None else values @ weights)

    def gradient(self, W):
        """:math:`\\nabla J_j(w_j)` for every row, shape ``(k, d)``."""
        out = self._reg() * W
        if self.b is not None:
            out = out + self.b / self.n
        first = self.loss.derivative(self.margins(W))
        weights = self._weights()
        if weights is None:
            return out + (first @ self.U) / self.n
        if self.U.ndim == 2:
            return out + (first * weights) @ self.U
        return out + np.einsum("kn,knd->kd", first * weights, self.U)

    def hessian(self, W):
        """:math:`\\nabla^2 J_j(w_j)` for every row, shape ``(k, d, d)``."""
        weights = self._weights()
        weights = np.full(self.n, 1.0 / self.n) if weights is None else weights
        curvature = self.loss.second_derivative(self.margins(W)) * weights
        if self.U.ndim == 3:
            H = np.einsum("kn,kni,knj->kij", curvature, self.U, self.U)
        else:
            H = np.einsum("kn,ni,nj->kij", curvature, self.U, self.U)
        d = W.shape[1]
        H[:, np.arange(d), np.arange(d)] += self._reg()
        return H


def _problem(W, X, y, lam, loss, b, ridge):
    W = np.atleast_2d(np.asarray(W, dtype=float))
    U = np.asarray(X, dtype=float) * np.asarray(y, dtype=float)[:, None]
    B = None
    if b is not None:
        B = np.asarray(b, dtype=float)
        B = np.broadcast_to(B, W.shape) if B.ndim == 1 else B
    return W, RegularizedERM(U, lam, loss, B, ridge)


def regularized_erm_objective(W, X, y, lam, loss="logistic", b=None, ridge=0.0, huber_h=0.5):
    """Value of :math:`J_j(w_j)` for each row ``w_j`` of ``W`` (shape ``(k, d)`` or ``(d,)``) on data ``(X, y)``."""
    W, problem = _problem(W, X, y, lam, get_loss(loss, huber_h), b, ridge)
    return problem.value(W)


def regularized_erm_gradient(W, X, y, lam, loss="logistic", b=None, ridge=0.0, huber_h=0.5):
    """Gradient of :math:`J_j` at each row ``w_j`` of ``W`` on data ``(X, y)``; shape ``(k, d)``."""
    W, problem = _problem(W, X, y, lam, get_loss(loss, huber_h), b, ridge)
    return problem.gradient(W)

r"""A batched Newton solver for the (perturbed) regularised ERM problem of both algorithms.

For data :math:`(x_i, y_i)_{i=1}^n` with :math:`y_i \in \{-1, +1\}`, a loss :math:`\ell` of the
margin, regularisation :math:`\lambda > 0`, an extra ridge term :math:`\Delta \ge 0` and
perturbation vectors :math:`b_1, \dots, b_k`, it returns for every :math:`j` the unique minimiser of

.. math::

    J_j(w) = \frac{\lambda + \Delta}{2}\lVert w\rVert^2 + \frac{b_j^\top w}{n}
             + \frac{1}{n}\sum_{i=1}^n \ell(y_i\, w^\top x_i).

With :math:`b = 0, \Delta = 0` this is regularised logistic regression (NIPS 2008, Section 3);
with :math:`b` drawn from :math:`e^{-\varepsilon\lVert b\rVert/2}` it is Algorithm 2 (Section 4);
with :math:`\Delta > 0` the corrected Algorithm 2 of JMLR 2011.

The objective is :math:`(\lambda+\Delta)`-strongly convex, so Newton's method with a backtracking
(Armijo) line search converges from :math:`w = 0`. All :math:`k` problems share the data, so each
iteration is a handful of matrix products over the whole batch: margins :math:`Z = (yX) W^\top`,
gradients :math:`(\lambda+\Delta)W + B/n + \ell'(Z)^\top (yX)/n`, and Hessians
:math:`(\lambda+\Delta)I + \sum_i \ell''(z_{ij}) x_i x_i^\top / n` accumulated in row chunks as
one matrix product with the flattened outer products :math:`x_i x_i^\top`. A problem stops when its
gradient norm is at most ``tol``; each problem's iterates depend only on its own :math:`b_j`, so
results do not depend on how the restarts are batched.
"""
from __future__ import annotations

import warnings
from dataclasses import dataclass

import numpy as np
from sklearn.exceptions import ConvergenceWarning

from dplr.losses import get_loss
from dplr.validation import check_lambda

__all__ = ["SolverResult", "solve_regularized_erm", "regularized_erm_objective", "regularized_erm_gradient"]

_ARMIJO = 1e-4
_MAX_HALVINGS = 60
# Elements of the (rows x d^2) outer-product block built at once when accumulating Hessians.
_OUTER_BLOCK = 1 << 21


@dataclass(frozen=True)
class SolverResult:
    """Minimisers and diagnostics of :func:`solve_regularized_erm`.

    ``coef`` has shape ``(d,)`` for one problem or ``(k, d)`` for a batch; ``grad_norm`` and
    ``n_iter`` have one entry per problem.
    """

    coef: np.ndarray
    grad_norm: np.ndarray
    n_iter: np.ndarray
    converged: bool


def _as_batch(b, k_default, d):
    if b is None:
        return np.zeros((k_default, d)), True
    b = np.asarray(b, dtype=float)
    if b.ndim == 1:
        if b.shape[0] != d:
            raise ValueError(f"b has {b.shape[0]} entries but X has {d} features.")
        return b[None, :], True
    if b.ndim != 2 or b.shape[1] != d:
        raise ValueError(f"b must have shape (d,) or (k, d) with d = {d}, got {b.shape}.")
    return b, False


def regularized_erm_objective(W, X, y, lam, loss="logistic", b=None, delta=0.0, huber_h=0.5):
    """Value of :math:`J_j(w_j)` for each row ``w_j`` of ``W`` (shape ``(k, d)`` or ``(d,)``)."""
    loss = get_loss(loss, huber_h)
    W = np.atleast_2d(np.asarray(W, dtype=float))
    Xy = np.asarray(X, dtype=float) * np.asarray(y, dtype=float)[:, None]
    B, _ = _as_batch(b, W.shape[0], Xy.shape[1])
    return _objective(W, Xy @ W.T, B, lam + delta, Xy.shape[0], loss)


def regularized_erm_gradient(W, X, y, lam, loss="logistic", b=None, delta=0.0, huber_h=0.5):
    """Gradient of :math:`J_j` at each row ``w_j`` of ``W``; shape ``(k, d)``."""
    loss = get_loss(loss, huber_h)
    W = np.atleast_2d(np.asarray(W, dtype=float))
    Xy = np.asarray(X, dtype=float) * np.asarray(y, dtype=float)[:, None]
    B, _ = _as_batch(b, W.shape[0], Xy.shape[1])
    return _gradient(W, Xy @ W.T, Xy, B, lam + delta, Xy.shape[0], loss)


def _objective(W, Z, B, reg, n, loss):
    return 0.5 * reg * np.einsum("kd,kd->k", W, W) + np.einsum("kd,kd->k", B, W) / n + loss.value(Z).mean(axis=0)


def _gradient(W, Z, Xy, B, reg, n, loss):
    return reg * W + B / n + (loss.derivative(Z).T @ Xy) / n


def _hessians(Xy, curvature_weights, reg, n):
    """(k, d, d) Hessians: reg·I + Σ_i s_ij x_i x_iᵀ / n, accumulated over row chunks."""
    rows, d = Xy.shape
    k = curvature_weights.shape[1]
    H = np.zeros((k, d * d))
    chunk = max(1, _OUTER_BLOCK // (d * d))
    for start in range(0, rows, chunk):
        block = Xy[start:start + chunk]
        outer = (block[:, :, None] * block[:, None, :]).reshape(block.shape[0], d * d)
        H += curvature_weights[start:start + chunk].T @ outer
    H = H.reshape(k, d, d) / n
    H[:, np.arange(d), np.arange(d)] += reg
    return H


def solve_regularized_erm(X, y, lam, loss="logistic", *, b=None, delta=0.0, huber_h=0.5, tol=1e-8, max_iter=100):
    r"""Minimise :math:`\frac{\lambda+\Delta}{2}\lVert w\rVert^2 + b^\top w/n + \frac1n\sum_i \ell(y_i w^\top x_i)`.

    Parameters
    ----------
    X : array of shape (n, d)
    y : array of shape (n,), values in {-1, +1}
    lam : float
        :math:`\lambda > 0`.
    loss : "logistic", "huber" or a loss object from :mod:`dplr.losses`.
    b : None, array (d,) or array (k, d)
        Perturbation vectors; ``None`` means :math:`b = 0` (non-private ERM).
    delta : float
        Extra ridge term :math:`\Delta \ge 0` of the corrected objective perturbation (JMLR 2011).
    tol : float
        Stop each problem when :math:`\lVert\nabla J_j\rVert \le` ``tol``.
    max_iter : int
        Newton iterations at most; a :class:`~sklearn.exceptions.ConvergenceWarning` is emitted for
        problems that did not reach ``tol``.

    Returns
    -------
    SolverResult
    """
    lam = check_lambda(lam)
    if not np.isfinite(delta) or delta < 0:
        raise ValueError(f"delta must be a finite number >= 0, got {delta!r}.")
    loss = get_loss(loss, huber_h)
    X = np.asarray(X, dtype=float)
    y = np.asarray(y, dtype=float)
    if X.ndim != 2 or y.shape != (X.shape[0],):
        raise ValueError(f"X must be (n, d) and y (n,), got {X.shape} and {y.shape}.")
    if not np.all(np.abs(y) == 1):
        raise ValueError("y must take values in {-1, +1}; use dplr.validation.encode_binary_labels first.")
    n, d = X.shape
    B, single = _as_batch(b, 1, d)
    k = B.shape[0]
    reg = lam + delta
    Xy = X * y[:, None]

    W = np.zeros((k, d))
    n_iter = np.zeros(k, dtype=int)
    grad_norm = np.full(k, np.inf)
    stalled = np.zeros(k, dtype=bool)
    for _ in range(max_iter + 1):
        Z = Xy @ W.T
        G = _gradient(W, Z, Xy, B, reg, n, loss)
        grad_norm = np.linalg.norm(G, axis=1)
        active = np.flatnonzero((grad_norm > tol) & ~stalled)
        if active.size == 0 or n_iter.max(initial=0) >= max_iter:
            break
        Za, Ga, Wa, Ba = Z[:, active], G[active], W[active], B[active]
        H = _hessians(Xy, loss.second_derivative(Za), reg, n)
        P = np.linalg.solve(H, -Ga[:, :, None])[:, :, 0]
        F0 = _objective(Wa, Za, Ba, reg, n, loss)
        slope = np.einsum("kd,kd->k", Ga, P)
        # Slack for rounding: near the optimum the decrease is below the objective's round-off.
        slack = 1e-12 * np.maximum(np.abs(F0), 1.0)
        step = np.ones(active.size)
        accepted = np.zeros(active.size, dtype=bool)
        for _ in range(_MAX_HALVINGS):
            todo = np.flatnonzero(~accepted)
            W_try = Wa[todo] + step[todo, None] * P[todo]
            F_try = _objective(W_try, Xy @ W_try.T, Ba[todo], reg, n, loss)
            ok = F_try <= F0[todo] + _ARMIJO * step[todo] * slope[todo] + slack[todo]
            Wa[todo[ok]] = W_try[ok]
            accepted[todo[ok]] = True
            step[todo[~ok]] *= 0.5
            if accepted.all():
                break
        W[active] = Wa
        n_iter[active] += 1
        stalled[active[~accepted]] = True

    converged = bool(np.all(grad_norm <= tol))
    if not converged:
        bad = int(np.sum(grad_norm > tol))
        warnings.warn(
            f"{bad} of {k} problems did not reach gradient norm <= {tol:g} in {max_iter} Newton iterations "
            f"(largest {grad_norm.max():.3g}). Increase max_iter or loosen tol.",
            ConvergenceWarning,
            stacklevel=2,
        )
    coef = W[0] if single else W
    return SolverResult(coef=coef, grad_norm=grad_norm, n_iter=n_iter, converged=converged)

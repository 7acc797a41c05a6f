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

The objective is :math:`(\lambda+\Delta)`-strongly convex, so its minimiser is the unique root of
:math:`\nabla J_j`, and Newton's method on :math:`\nabla J_j = 0`, damped by a backtracking (Armijo)
line search on :math:`\frac12\lVert\nabla J_j\rVert^2`, converges from any start. All :math:`k` problems share the data, so each
iteration is a handful of matrix products over the whole batch: margins :math:`Z = (yX) W^\top`,
gradients :math:`(\lambda+\Delta)W + B/n + \ell'(Z)^\top (yX)/n`, and Hessians
:math:`(\lambda+\Delta)I + \sum_i \ell''(z_{ij}) x_i x_i^\top / n` accumulated in row chunks as
one matrix product with the flattened outer products :math:`x_i x_i^\top`. A problem stops when its
gradient norm is at most ``tol``; each problem's iterates depend only on its own :math:`b_j`, so
results do not depend on how the restarts are batched.
"""
from __future__ import annotations

import os
import warnings
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass

import numpy as np
from sklearn.exceptions import ConvergenceWarning
from threadpoolctl import ThreadpoolController

from dplr.losses import get_loss
from dplr.validation import check_lambda

__all__ = ["SolverResult", "solve_regularized_erm", "regularized_erm_objective", "regularized_erm_gradient"]

_ARMIJO = 1e-4
_MAX_HALVINGS = 60
# Largest flattened outer-product table (n x d^2 doubles) kept for the whole solve; beyond it the
# table is rebuilt block by block at every Hessian evaluation.
_OUTER_TABLE_MAX = 1 << 25
_OUTER_BLOCK = 1 << 21
_THREADPOOLS = ThreadpoolController()
# Default restarts per chunk: about this many margins (chunk x n) at once.
_CHUNK_ELEMENTS = 1 << 19


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
    return _objective(W, W @ Xy.T, B, lam + delta, Xy.shape[0], loss)


def regularized_erm_gradient(W, X, y, lam, loss="logistic", b=None, delta=0.0, huber_h=0.5):
    """Gradient of :math:`J_j` at each row ``w_j`` of ``W``; shape ``(k, d)``."""
    loss = get_loss(loss, huber_h)
    W = np.atleast_2d(np.asarray(W, dtype=float))
    Xy = np.asarray(X, dtype=float) * np.asarray(y, dtype=float)[:, None]
    B, _ = _as_batch(b, W.shape[0], Xy.shape[1])
    return _gradient(W, W @ Xy.T, Xy, B, lam + delta, Xy.shape[0], loss)


def _objective(W, Z, B, reg, n, loss):
    """J for each row of W, with Z = W (yX)^T of shape (k, n)."""
    return 0.5 * reg * np.einsum("kd,kd->k", W, W) + np.einsum("kd,kd->k", B, W) / n + loss.value(Z).mean(axis=1)


def _gradient(W, Z, Xy, B, reg, n, loss):
    return reg * W + B / n + (loss.derivative(Z) @ Xy) / n


class _OuterProducts:
    """Flattened outer products x_i x_i^T as an (n, d^2) table, kept whole when small enough."""

    def __init__(self, Xy):
        self.Xy = Xy
        n, d = Xy.shape
        self.table = self._block(Xy) if n * d * d <= _OUTER_TABLE_MAX else None

    @staticmethod
    def _block(rows):
        d = rows.shape[1]
        return (rows[:, :, None] * rows[:, None, :]).reshape(rows.shape[0], d * d)

    def weighted_sums(self, weights):
        """(k, d^2): row j is sum_i weights[j, i] x_i x_i^T, flattened."""
        if self.table is not None:
            return weights @ self.table
        n, d = self.Xy.shape
        out = np.zeros((weights.shape[0], d * d))
        step = max(1, _OUTER_BLOCK // (d * d))
        for start in range(0, n, step):
            out += weights[:, start:start + step] @ self._block(self.Xy[start:start + step])
        return out


def _newton(Xy, outer, B, W0, reg, loss, tol, max_iter, shared_start=False):
    """Damped Newton for the equations grad J_j(w) = 0, one per row of B; returns (W, grad_norm, n_iter).

    The step length is chosen by backtracking (Armijo) on the merit function phi = ||grad J||^2 / 2,
    whose slope along the Newton direction p = -H^{-1} g is -||g||^2: accept t when
    phi(w + t p) <= (1 - 2 sigma t) phi(w). Because J is (lam + Delta)-strongly convex, H >= (lam + Delta) I
    is uniformly invertible and this damped Newton method converges from any start (Dennis & Schnabel,
    Numerical Methods for Unconstrained Optimization, Section 6.5); the root of grad J is the unique
    minimiser. It needs only l' and l'' -- one sigmoid per margin for the logistic loss, no logarithms.
    With ``shared_start`` every row of W0 is the same point: l', l'' and the first Hessian are shared.
    """
    n, d = Xy.shape
    k = B.shape[0]
    W = np.array(W0, dtype=float, copy=True)
    first, second = loss.derivatives((W[:1] if shared_start else W) @ Xy.T)
    if shared_start:
        first, second = np.repeat(first, k, axis=0), np.repeat(second, k, axis=0)
    G = reg * W + B / n + (first @ Xy) / n
    merit = 0.5 * np.einsum("kd,kd->k", G, G)
    n_iter = np.zeros(k, dtype=int)
    stalled = np.zeros(k, dtype=bool)
    diagonal = np.arange(d)
    while True:
        active = np.flatnonzero((merit > 0.5 * tol**2) & ~stalled & (n_iter < max_iter))
        if active.size == 0:
            return W, np.sqrt(2.0 * merit), n_iter
        if shared_start and not n_iter.any():
            H = outer.weighted_sums(second[:1]).reshape(d, d) / n
            H[diagonal, diagonal] += reg
            P = np.linalg.solve(H, -G[active].T).T
        else:
            H = outer.weighted_sums(second[active]).reshape(active.size, d, d) / n
            H[:, diagonal, diagonal] += reg
            P = np.linalg.solve(H, -G[active][:, :, None])[:, :, 0]
        step = np.ones(active.size)
        pending = np.arange(active.size)
        for _ in range(_MAX_HALVINGS):
            rows = active[pending]
            W_try = W[rows] + step[pending, None] * P[pending]
            f_try, s_try = loss.derivatives(W_try @ Xy.T)
            G_try = reg * W_try + B[rows] / n + (f_try @ Xy) / n
            merit_try = 0.5 * np.einsum("kd,kd->k", G_try, G_try)
            ok = merit_try <= (1.0 - 2.0 * _ARMIJO * step[pending]) * merit[rows]
            good = rows[ok]
            W[good], G[good], merit[good] = W_try[ok], G_try[ok], merit_try[ok]
            first[good], second[good] = f_try[ok], s_try[ok]
            pending = pending[~ok]
            step[pending] *= 0.5
            if pending.size == 0:
                break
        n_iter[active] += 1
        stalled[active[pending]] = True


def solve_regularized_erm(X, y, lam, loss="logistic", *, b=None, delta=0.0, huber_h=0.5, tol=1e-8, max_iter=100,
                          warm_start=True, chunk_size=None, n_threads=None):
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
        Newton iterations at most per problem; a :class:`~sklearn.exceptions.ConvergenceWarning` is
        emitted for problems that did not reach ``tol``.
    warm_start : bool
        For a batch (``b`` of shape (k, d), k > 1), start every problem from the minimiser of the
        unperturbed problem (:math:`b = 0`, same :math:`\lambda + \Delta`), solved first. The minimisers
        are unique, so this changes only the path, not the answer.
    chunk_size : int or None
        Problems solved together. ``None`` picks about 2^19 / n problems per chunk (margins of one
        chunk stay in cache), a function of n only. Chunks are independent, so the result does not
        depend on the chunk size beyond rounding, and never on ``n_threads``.
    n_threads : int or None
        Threads that solve chunks concurrently (NumPy releases the GIL in its kernels); ``None`` uses
        every core. BLAS runs single-threaded inside the solver: its products are small, and
        multi-threaded BLAS stalls badly on a busy machine.

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
    n_threads = os.cpu_count() or 1 if n_threads is None else int(n_threads)
    if chunk_size is None:
        chunk_size = max(8, _CHUNK_ELEMENTS // X.shape[0])
    if int(chunk_size) < 1 or n_threads < 1:
        raise ValueError("chunk_size and n_threads must be positive integers.")
    n, d = X.shape
    B, single = _as_batch(b, 1, d)
    k = B.shape[0]
    reg = lam + delta
    Xy = X * y[:, None]
    outer = _OuterProducts(Xy)

    chunks = [slice(i, min(i + int(chunk_size), k)) for i in range(0, k, int(chunk_size))]
    with _THREADPOOLS.limit(limits=1, user_api="blas"):
        start = np.zeros((1, d))
        if warm_start and k > 1:
            start, _, _ = _newton(Xy, outer, np.zeros((1, d)), start, reg, loss, tol, max_iter)

        def solve(chunk):
            return _newton(Xy, outer, B[chunk], np.repeat(start, chunk.stop - chunk.start, axis=0), reg, loss, tol,
                           max_iter, shared_start=True)

        if n_threads > 1 and len(chunks) > 1:
            with ThreadPoolExecutor(min(n_threads, len(chunks))) as pool:
                parts = list(pool.map(solve, chunks))
        else:
            parts = [solve(chunk) for chunk in chunks]
    W = np.concatenate([p[0] for p in parts])
    grad_norm = np.concatenate([p[1] for p in parts])
    n_iter = np.concatenate([p[2] for p in parts])

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

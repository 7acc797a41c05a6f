r"""All problems on one part of the data, around one shared Hessian: the path of private tuning.

Algorithm 3 of JMLR 2011 (:mod:`dplr.tuning`) solves, on each part :math:`D_i` of the data, the
unperturbed problem (Algorithm 1 releases its minimiser plus noise) and one Algorithm 2 problem per ε,

.. math::

    J_j(w) = \frac{\lambda + \Delta_j}{2}\lVert w\rVert^2 + \frac{b_j^\top w}{n}
             + \frac1n\sum_{i\in D_i}\ell(y_i w^\top x_i),

whose :math:`\Delta_j` differ from ε to ε. :func:`solve_on_part` shares the expensive work among them:

1. the unperturbed minimiser :math:`w_0` (damped Newton from 0, exact Hessians over the points with non-zero
   curvature -- for the Huber loss only those in its quadratic band -- and the acceptance rule of step 3);
2. **one** Hessian :math:`H_0` at :math:`w_0` and **one** eigendecomposition :math:`H_0 = V\,\mathrm{diag}(e)\,V^\top`,
   so that :math:`(H_0 + \Delta_j I)^{-1} = V\,\mathrm{diag}(1/(e + \Delta_j))\,V^\top` serves every
   :math:`\Delta_j` (the Hessian of :math:`J_j` at :math:`w_0` is exactly :math:`H_0 + \Delta_j I`);
3. every perturbed problem iterates :math:`w \leftarrow w - t\,M_j^{-1}\nabla J_j(w)` from :math:`w_0`, all
   problems in one pass over the part per iteration (one matrix product for the margins, one for the
   gradients). :math:`M_j` starts as :math:`H_0 + \Delta_j I`; a problem whose gradient norm fell by less
   than :data:`REFRESH_RATIO` in a step gets its exact Hessian at its current point as :math:`M_j`
   (a Newton step; needed where the noise moved it far from :math:`w_0`, e.g. at ε = 0.01).

**Convergence.** :math:`M_j` is positive definite, so :math:`-M_j^{-1}\nabla J_j` is a descent
direction of the :math:`(\lambda+\Delta_j)`-strongly convex :math:`J_j`; a step is accepted when the
gradient norm falls by half (fast local convergence) or, failing that, when the Armijo condition on
:math:`J_j` holds, with backtracking: preconditioned gradient descent with a line search, which
converges from any start. A problem stops when its gradient norm, computed in float64 as in
:mod:`dplr.solver.batched`, is at most ``tol``: the minimiser is unique, so this path gives the same
minimisers as :func:`dplr.solver.damped_newton`. Each problem's iterates depend only on its own
:math:`b_j, \Delta_j` and on the part (:math:`w_0`, :math:`H_0`), never on which other problems share the
batch (up to rounding in the batched matrix products).
"""
from __future__ import annotations

import warnings
from dataclasses import dataclass

import numpy as np
from sklearn.exceptions import ConvergenceWarning

__all__ = ["PartSolution", "solve_on_part", "REFRESH_RATIO"]

#: A step that shrinks the gradient norm by less than this factor earns the problem its own exact Hessian.
REFRESH_RATIO = 0.5
ARMIJO = 1e-4
MAX_HALVINGS = 40


@dataclass(frozen=True)
class PartSolution:
    """``w0`` (d,): the unperturbed minimiser; ``coef`` (k, d): one minimiser per perturbed problem;
    ``grad_norm`` (k,), ``n_passes`` (k,): gradient passes each problem took; ``n_hessians``: Hessians formed
    (the shared one included, the ones inside the solve of ``w0`` not)."""

    w0: np.ndarray
    coef: np.ndarray
    grad_norm: np.ndarray
    n_passes: np.ndarray
    n_hessians: int


def _hessian(X, curvature, reg):
    """reg I + X^T diag(curvature) X / n, over the rows with non-zero curvature (Huber: the band only)."""
    n, d = X.shape
    rows = np.flatnonzero(curvature)
    if rows.size < n:
        X, curvature = X[rows], curvature[rows]
    H = (X.T * curvature) @ X / n
    H[np.arange(d), np.arange(d)] += reg
    return H


def _unperturbed(Xy, XyT, lam, loss, tol, max_iter):
    """w0 by damped Newton from 0: exact Hessian each step, the same acceptance rule as the perturbed problems."""
    n, d = Xy.shape
    zero = np.zeros((1, d))
    W = zero.copy()
    J, G, Z = _evaluate(XyT, W, zero, np.array([lam]), loss, n)
    for _ in range(max_iter):
        gnorm = np.linalg.norm(G[0])
        if gnorm <= tol:
            break
        P = -np.linalg.solve(_hessian(Xy, loss.second_derivative(Z[0]), lam), G[0])
        slope, step = float(G[0] @ P), 1.0
        for _ in range(MAX_HALVINGS):
            W_try = W + step * P
            J_try, G_try, Z_try = _evaluate(XyT, W_try, zero, np.array([lam]), loss, n)
            if np.linalg.norm(G_try[0]) <= 0.5 * gnorm or J_try[0] <= J[0] + ARMIJO * step * slope:
                break
            step *= 0.5
        W, J, G, Z = W_try, J_try, G_try, Z_try
    return W[0], float(np.linalg.norm(G[0]))


def _evaluate(XyT, W, B, reg, loss, n):
    """Objective values, gradients and margins of the rows of W (reg per row): one pass over the part."""
    Z = W @ XyT
    values = loss.value(Z).sum(axis=1) / n
    G = reg[:, None] * W + B / n + loss.derivative(Z) @ XyT.T / n
    J = 0.5 * reg * np.einsum("kd,kd->k", W, W) + np.einsum("kd,kd->k", B, W) / n + values
    return J, G, Z


def solve_on_part(X, y, lam, loss, B, deltas, tol=1e-8, max_iter=200):
    """The unperturbed minimiser and the perturbed ones (rows of ``B``, per-problem ``deltas``) on one part.

    Inputs are trusted (callers validated them at the public boundary). Returns a :class:`PartSolution`.
    """
    n, d = X.shape
    B = np.asarray(B, dtype=float).reshape(-1, d)
    deltas = np.asarray(deltas, dtype=float).reshape(-1)
    k = B.shape[0]
    Xy = X * y[:, None]
    XyT = np.ascontiguousarray(Xy.T)
    w0, w0_norm = _unperturbed(Xy, XyT, lam, loss, tol, max_iter)
    if w0_norm > tol:
        warnings.warn(f"the unperturbed problem did not reach gradient norm <= {tol:g} ({w0_norm:.3g}).",
                      ConvergenceWarning, stacklevel=2)
    if k == 0:
        return PartSolution(w0, np.empty((0, d)), np.empty(0), np.zeros(0, dtype=int), 0)
    eigvals, V = np.linalg.eigh(_hessian(Xy, loss.second_derivative(Xy @ w0), lam))
    n_hessians = 1
    reg = lam + deltas
    W = np.repeat(w0[None, :], k, axis=0)
    J, G, Z = _evaluate(XyT, W, B, reg, loss, n)
    gnorm = np.linalg.norm(G, axis=1)
    own = {}  # problem -> its exact Hessian at a recent iterate
    n_passes = np.ones(k, dtype=int)
    for _ in range(max_iter):
        active = np.flatnonzero(gnorm > tol)
        if active.size == 0:
            break
        P = -((G[active] @ V) / (eigvals[None, :] + deltas[active, None])) @ V.T
        for a, j in enumerate(active):
            if j in own:
                P[a] = -np.linalg.solve(own[j], G[j])
        slope = np.einsum("kd,kd->k", G[active], P)
        step = np.ones(active.size)
        pending = np.arange(active.size)
        for _ in range(MAX_HALVINGS):
            rows = active[pending]
            W_try = W[rows] + step[pending, None] * P[pending]
            J_try, G_try, Z_try = _evaluate(XyT, W_try, B[rows], reg[rows], loss, n)
            n_passes[rows] += 1
            g_try = np.linalg.norm(G_try, axis=1)
            ok = (g_try <= 0.5 * gnorm[rows]) | (J_try <= J[rows] + ARMIJO * step[pending] * slope[pending])
            good = rows[ok]
            slow = good[g_try[ok] > REFRESH_RATIO * gnorm[good]]
            W[good], G[good], J[good], gnorm[good] = W_try[ok], G_try[ok], J_try[ok], g_try[ok]
            for j, z in zip(good, Z_try[ok]):
                if j in slow and gnorm[j] > tol:
                    own[j] = _hessian(Xy, loss.second_derivative(z), reg[j])
                    n_hessians += 1
            pending = pending[~ok]
            if pending.size == 0:
                break
            step[pending] *= 0.5
        else:
            break
    if np.any(gnorm > tol):
        warnings.warn(f"{int(np.sum(gnorm > tol))} of {k} problems did not reach gradient norm <= {tol:g} "
                      f"(largest {gnorm.max():.3g}).", ConvergenceWarning, stacklevel=2)
    return PartSolution(w0, W, gnorm, n_passes, n_hessians)

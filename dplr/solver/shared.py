r"""All problems on one part of the data, around one shared Hessian: the path of private tuning.

Algorithm 3 of JMLR 2011 (:mod:`dplr.tuning`) solves, on each part :math:`D_i` of the data, the
unperturbed problem (Algorithm 1 releases its minimiser plus noise) and one Algorithm 2 problem per ε,

.. math::

    J_j(w) = \frac{\lambda + \Delta_j}{2}\lVert w\rVert^2 + \frac{b_j^\top w}{n}
             + \frac1n\sum_{i\in D_i}\ell(y_i w^\top x_i),

whose :math:`\Delta_j` differ from ε to ε. :func:`~dplr.solver.solve_on_part` shares the expensive work among them:

1. the unperturbed minimiser :math:`w_0`, by the iteration of step 3 from 0 with the Hessian at 0 as
   :math:`M` (for the logistic loss :math:`X^\top X/4n + \lambda I`; for the Huber loss, whose band excludes
   the margin 0, :math:`\lambda I`, replaced by an exact Hessian after the first slow step);
2. **one** Hessian :math:`H_0` at :math:`w_0` and **one** eigendecomposition :math:`H_0 = V\,\mathrm{diag}(e)\,V^\top`,
   so that :math:`(H_0 + \Delta_j I)^{-1} = V\,\mathrm{diag}(1/(e + \Delta_j))\,V^\top` serves every
   :math:`\Delta_j` (the Hessian of :math:`J_j` at :math:`w_0` is exactly :math:`H_0 + \Delta_j I`);
3. every perturbed problem iterates :math:`w \leftarrow w - t\,M_j^{-1}\nabla J_j(w)` from :math:`w_0`, all
   problems in one pass over the part per iteration (one matrix product for the margins, one for the
   gradients). :math:`M_j` starts as :math:`H_0 + \Delta_j I`; a problem whose gradient norm fell by less
   than :data:`REFRESH_RATIO` in a step gets its exact Hessian at its current point as :math:`M_j`
   (a Newton step; needed where the noise moved it far from :math:`w_0`, e.g. at ε = 0.01). Hessians are
   sums over the points with non-zero curvature only (Huber: its quadratic band), accumulated in float32
   under the rule of :data:`~dplr.solver.batched.SINGLE_PRECISION_REG`: they only precondition.

**Convergence.** :math:`M_j` is positive definite, so :math:`-M_j^{-1}\nabla J_j` is a descent
direction of the :math:`(\lambda+\Delta_j)`-strongly convex :math:`J_j`; a step is accepted when the
Armijo condition on :math:`J_j` holds or, where rounding hides the decrease of :math:`J_j` near the minimiser,
when the gradient norm falls by half without :math:`J_j` rising above its rounding (accepting a rise lets
Newton cycle on the piecewise Huber loss), with backtracking: preconditioned gradient descent with a line search, which
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

from dplr.solver.batched import SINGLE_PRECISION_REG

__all__ = ["PartSolution", "solve_on_part", "REFRESH_RATIO"]

#: A step that shrinks the gradient norm by less than this factor earns the problem its own exact Hessian.
REFRESH_RATIO = 0.5
ARMIJO = 1e-4
MAX_HALVINGS = 40
#: Relative rounding of J tolerated when a step is accepted for its gradient (a few float64 ulps of the sums).
ROUNDING = 1e-13


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


def _hessian(Xy, curvature, reg, dtype):
    """reg I + Xy^T diag(curvature) Xy / n over the rows with non-zero curvature (Huber: its band only).

    Accumulated in ``dtype`` (float32 where :data:`~dplr.solver.batched.SINGLE_PRECISION_REG` allows: it is a
    preconditioner, and the stopping test uses float64 gradients), returned in float64.
    """
    n, d = Xy.shape
    rows = np.flatnonzero(curvature)
    X, c = (Xy, curvature) if rows.size == n else (Xy[rows], curvature[rows])
    X = X.astype(dtype, copy=False)
    H = ((X.T * c.astype(dtype)) @ X).astype(float) / n
    H[np.arange(d), np.arange(d)] += reg
    return H


def _evaluate(XyT, W, B, reg, loss, n):
    """Objective values, gradients and margins of the rows of W (reg per row): one pass over the part."""
    Z = W @ XyT
    values = loss.value(Z).sum(axis=1) / n
    G = reg[:, None] * W + B / n + loss.derivative(Z) @ XyT.T / n
    J = 0.5 * reg * np.einsum("kd,kd->k", W, W) + np.einsum("kd,kd->k", B, W) / n + values
    return J, G, Z


def _iterate(Xy, XyT, W, B, lam, shift, shared, loss, tol, max_iter, dtype):
    """Preconditioned descent for the rows of W: M_j = V diag(e + shift_j) V^T (``shared`` = (e, V)) until a
    slow step earns problem j its exact Hessian. Returns ``(W, gradient norms, passes, Hessians formed)``."""
    n = Xy.shape[0]
    eigvals, V = shared
    reg = lam + shift
    J, G, Z = _evaluate(XyT, W, B, reg, loss, n)
    gnorm = np.linalg.norm(G, axis=1)
    own = {}  # problem -> its exact Hessian at a recent iterate
    n_passes, n_hessians = np.ones(len(W), dtype=int), 0
    for _ in range(max_iter):
        active = np.flatnonzero(gnorm > tol)
        if active.size == 0:
            break
        P = -((G[active] @ V) / (eigvals[None, :] + shift[active, None])) @ V.T
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
            # Armijo on J; or, near the minimiser where J's rounding hides the decrease, a halved gradient norm
            # with J not above its rounding (never an increase of J: Newton on a piecewise loss can cycle)
            armijo = J_try <= J[rows] + ARMIJO * step[pending] * slope[pending]
            ok = armijo | ((g_try <= 0.5 * gnorm[rows]) & (J_try <= J[rows] + ROUNDING * np.abs(J[rows])))
            good = rows[ok]
            slow = set(good[g_try[ok] > REFRESH_RATIO * gnorm[good]].tolist())
            W[good], G[good], J[good], gnorm[good] = W_try[ok], G_try[ok], J_try[ok], g_try[ok]
            for j, z in zip(good, Z_try[ok]):
                if j in slow and gnorm[j] > tol:
                    own[j] = _hessian(Xy, loss.second_derivative(z), reg[j], dtype)
                    n_hessians += 1
            pending = pending[~ok]
            if pending.size == 0:
                break
            step[pending] *= 0.5
        else:
            break
    return W, gnorm, n_passes, n_hessians


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
    radius2 = float(np.max(np.einsum("ij,ij->i", Xy, Xy))) if n else 0.0
    dtype = np.float32 if lam >= SINGLE_PRECISION_REG * loss.curvature * radius2 else np.float64
    zero = np.zeros((1, d))
    w0, w0_norm, _, n_hessians = _iterate(Xy, XyT, zero.copy(), zero, lam, np.zeros(1), np.linalg.eigh(
        _hessian(Xy, loss.second_derivative(np.zeros(n)), lam, dtype)), loss, tol, max_iter, dtype)
    w0 = w0[0]
    if w0_norm[0] > tol:
        warnings.warn(f"the unperturbed problem did not reach gradient norm <= {tol:g} ({w0_norm[0]:.3g}).",
                      ConvergenceWarning, stacklevel=2)
    if k == 0:
        return PartSolution(w0, np.empty((0, d)), np.empty(0), np.zeros(0, dtype=int), n_hessians + 1)
    shared = np.linalg.eigh(_hessian(Xy, loss.second_derivative(Xy @ w0), lam, dtype))
    W, gnorm, n_passes, more = _iterate(Xy, XyT, np.repeat(w0[None, :], k, axis=0), B, lam, deltas, shared, loss,
                                        tol, max_iter, dtype)
    n_hessians += more + 2
    if np.any(gnorm > tol):
        warnings.warn(f"{int(np.sum(gnorm > tol))} of {k} problems did not reach gradient norm <= {tol:g} "
                      f"(largest {gnorm.max():.3g}).", ConvergenceWarning, stacklevel=2)
    return PartSolution(w0, W, gnorm, n_passes, n_hessians)

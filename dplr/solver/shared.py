r"""All problems on one part of the data, around one shared Hessian: the path of private tuning.

Algorithm 3 of JMLR 2011 (:mod:`dplr.tuning`) solves, on each part :math:`D_i` of the data, the
unperturbed problem (Algorithm 1 releases its minimiser plus noise) and one Algorithm 2 problem per ε,

.. math::

    J_j(w) = \frac{\lambda + \Delta_j}{2}\lVert w\rVert^2 + \frac{b_j^\top w}{n}
             + \frac1n\sum_{i\in D_i}\ell(y_i w^\top x_i),

whose :math:`\Delta_j` differ from ε to ε. :func:`~dplr.solver.solve_on_part` shares the expensive work among them:

1. the unperturbed minimiser :math:`w_0`, by the iteration of step 3 from 0 with the loss's curvature bound as
   the initial matrix, :math:`M = c\,X^\top X/n + \lambda I` (:math:`c = 1/4` for the logistic loss: its Hessian
   at 0; :math:`c = 1/(2h)` for the Huber loss, whose Hessian at 0 is only :math:`\lambda I`), in Cholesky form;
2. **one** Hessian :math:`H_0` at :math:`w_0` and **one** eigendecomposition :math:`H_0 = V\,\mathrm{diag}(e)\,V^\top`,
   so that :math:`(H_0 + \Delta_j I)^{-1} = V\,\mathrm{diag}(1/(e + \Delta_j))\,V^\top` serves every
   :math:`\Delta_j` (the Hessian of :math:`J_j` at :math:`w_0` is exactly :math:`H_0 + \Delta_j I`);
3. every perturbed problem runs L-BFGS (the last :data:`MEMORY` pairs :math:`s = w_{t+1} - w_t`,
   :math:`y = \nabla J_j(w_{t+1}) - \nabla J_j(w_t)`; :math:`s^\top y \ge (\lambda + \Delta_j)\lVert s\rVert^2 > 0`)
   with :math:`M_j^{-1}` as its initial inverse Hessian, from :math:`w_0`, all problems in one pass over the part
   per trial step (one matrix product for the margins, one for the gradients). :math:`M_j` starts as
   :math:`H_0 + \Delta_j I`; a problem whose gradient norm fell by less than :data:`REFRESH_RATIO` in a step gets
   its exact Hessian at its current point as :math:`M_j` (Cholesky-factored) and an empty memory: Newton, then
   quasi-Newton steps from there (needed where the noise moved it far from :math:`w_0`, e.g. at ε = 0.01).
   Hessians are sums over the rows whose curvature is not negligible (:data:`NEGLIGIBLE`; the Huber loss: its
   quadratic band), one BLAS ``syrk`` each, accumulated in float32 under the rule of
   :data:`~dplr.solver.batched.SINGLE_PRECISION_REG`: they only precondition.

**Convergence.** Every direction is :math:`-\tilde H_j^{-1}\nabla J_j` with :math:`\tilde H_j` positive definite
(the L-BFGS update of a positive definite :math:`M_j` with pairs of positive curvature), a descent direction of the
:math:`(\lambda+\Delta_j)`-strongly convex :math:`J_j`; a step is accepted when the
Armijo condition on :math:`J_j` holds or, where rounding hides the decrease of :math:`J_j` near the minimiser,
when the gradient norm falls by half without :math:`J_j` rising above its rounding (accepting a rise lets
Newton cycle on the piecewise Huber loss), with backtracking. A problem stops when its gradient norm, computed
in float64 as in :mod:`dplr.solver.batched`, is at most ``tol``, and one that does not within ``max_iter`` steps
is reported (a ``ConvergenceWarning``): the minimiser is unique, so this path gives the
same minimisers as :func:`dplr.solver.damped_newton`. Each problem's iterates depend only on its own
:math:`b_j, \Delta_j` and on the part (:math:`w_0`, :math:`H_0`), never on which other problems share the
batch (up to rounding in the batched matrix products).
"""
from __future__ import annotations

import warnings
from dataclasses import dataclass

import numpy as np
from scipy.linalg import blas, cho_factor, cho_solve
from sklearn.exceptions import ConvergenceWarning

from dplr.solver.batched import SINGLE_PRECISION_REG

__all__ = ["PartSolution", "solve_on_part", "REFRESH_RATIO", "MEMORY", "NEGLIGIBLE"]

#: A step that shrinks the gradient norm by less than this factor earns the problem its own exact Hessian.
REFRESH_RATIO = 0.5
#: Pairs (s, y) each problem's L-BFGS update keeps.
MEMORY = 5
#: Rows whose curvature is below this times lam + Delta are left out of a Hessian (it only preconditions).
NEGLIGIBLE = 1e-6
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


def _hessian(Xy_hess, curvature, reg):
    """reg I + Xy^T diag(curvature) Xy / n over the rows whose curvature exceeds :data:`NEGLIGIBLE` times reg.

    ``Xy_hess``: the part's signed rows in Fortran order, in the precision the Hessians are accumulated in
    (float32 where :data:`~dplr.solver.batched.SINGLE_PRECISION_REG` allows: a preconditioner; the stopping
    test uses float64 gradients). Leaving out rows of curvature below ``NEGLIGIBLE * reg`` changes the result by
    less than ``NEGLIGIBLE * reg`` (rows in the unit ball), a relative ``NEGLIGIBLE`` of its smallest eigenvalue
    (the Huber loss: only its quadratic band; the logistic loss far from the minimiser: a few rows). One
    symmetric rank-k update (BLAS syrk) of the rows scaled by the square root of their curvature; float64 result.
    """
    n, d = Xy_hess.shape
    keep = curvature > NEGLIGIBLE * reg
    H = np.zeros((d, d))
    if keep.any():
        rows = Xy_hess if keep.all() else np.asfortranarray(Xy_hess[keep])
        weights = np.sqrt(curvature[keep] / n).astype(Xy_hess.dtype)
        syrk = blas.ssyrk if Xy_hess.dtype == np.float32 else blas.dsyrk
        upper = syrk(1.0, rows * weights[:, None], trans=1)
        H = np.triu(upper, 1).astype(float)
        H += H.T
        H[np.diag_indices(d)] = np.diag(upper)
    H[np.diag_indices(d)] += reg
    return H


def _evaluate(Xy, XyT, W, B, reg, loss, n):
    """Objective values, gradients and margins of the rows of W (reg per row): one pass over the part."""
    Z = W @ XyT
    values = loss.value(Z).sum(axis=1) / n
    G = reg[:, None] * W + B / n + (loss.derivatives(Z, second=False)[0] @ Xy) / n
    J = 0.5 * reg * np.einsum("kd,kd->k", W, W) + np.einsum("kd,kd->k", B, W) / n + values
    return J, G, Z


def _direction(G, rows, S, Y, rho, eigvals, V, shift, own):
    r"""Minus the L-BFGS inverse-Hessian product of the gradients ``G`` of problems ``rows`` (two-loop recursion,
    newest pair first, unused slots with :math:`\rho = 0`), whose initial matrix is problem j's preconditioner
    :math:`M_j^{-1}`: :math:`V\,\mathrm{diag}(1/(e + \Delta_j))\,V^\top`, or its own Hessian's Cholesky factor."""
    q = G.copy()
    alpha = np.zeros((len(rows), S.shape[1]))
    for i in range(S.shape[1]):
        alpha[:, i] = rho[rows, i] * np.einsum("kd,kd->k", S[rows, i], q)
        q -= alpha[:, i, None] * Y[rows, i]
    if V is None:  # a Cholesky factor (the unperturbed problem's start): shift 0
        r = cho_solve(eigvals, q.T).T
    else:
        r = ((q @ V) / (eigvals[None, :] + shift[rows, None])) @ V.T
    for a, j in enumerate(rows):
        if j in own:
            r[a] = cho_solve(own[j], q[a])
    for i in reversed(range(S.shape[1])):
        beta = rho[rows, i] * np.einsum("kd,kd->k", Y[rows, i], r)
        r += S[rows, i] * (alpha[:, i] - beta)[:, None]
    return -r


def _iterate(Xy, XyT, Xy_hess, W, B, lam, shift, shared, loss, tol, max_iter):
    """Preconditioned L-BFGS for the rows of W (module docstring): initial matrix M_j = V diag(e + shift_j) V^T
    (``shared`` = (e, V)) until a slow step earns problem j its exact Hessian. Returns ``(W, gradient norms,
    passes, Hessians formed)``."""
    n, d = Xy.shape
    k = len(W)
    eigvals, V = shared
    reg = lam + shift
    J, G, Z = _evaluate(Xy, XyT, W, B, reg, loss, n)
    gnorm = np.linalg.norm(G, axis=1)
    S, Y, rho = np.zeros((k, MEMORY, d)), np.zeros((k, MEMORY, d)), np.zeros((k, MEMORY))
    own = {}  # problem -> Cholesky factor of its exact Hessian at a recent iterate
    n_passes, n_hessians = np.ones(k, dtype=int), 0
    for _ in range(max_iter):
        active = np.flatnonzero(gnorm > tol)
        if active.size == 0:
            break
        P = _direction(G[active], active, S, Y, rho, eigvals, V, shift, own)
        slope = np.einsum("kd,kd->k", G[active], P)
        step = np.ones(active.size)
        pending = np.arange(active.size)
        for _ in range(MAX_HALVINGS):
            rows = active[pending]
            W_try = W[rows] + step[pending, None] * P[pending]
            J_try, G_try, Z_try = _evaluate(Xy, XyT, W_try, B[rows], reg[rows], loss, n)
            n_passes[rows] += 1
            g_try = np.linalg.norm(G_try, axis=1)
            # Armijo on J; or, near the minimiser where J's rounding hides the decrease, a halved gradient norm
            # with J not above its rounding (never an increase of J: Newton on a piecewise loss can cycle)
            armijo = J_try <= J[rows] + ARMIJO * step[pending] * slope[pending]
            ok = armijo | ((g_try <= 0.5 * gnorm[rows]) & (J_try <= J[rows] + ROUNDING * np.abs(J[rows])))
            good = rows[ok]
            # the newest pair (s, y) first; s^T y >= (lam + Delta) |s|^2 > 0 (strong convexity)
            s_new, y_new = W_try[ok] - W[good], G_try[ok] - G[good]
            curvature = np.einsum("kd,kd->k", s_new, y_new)
            S[good, 1:], Y[good, 1:], rho[good, 1:] = S[good, :-1], Y[good, :-1], rho[good, :-1]
            S[good, 0], Y[good, 0] = s_new, y_new
            rho[good, 0] = np.where(curvature > 0, 1.0 / np.where(curvature > 0, curvature, 1.0), 0.0)
            slow = good[g_try[ok] > np.maximum(tol, REFRESH_RATIO * gnorm[good])]
            W[good], G[good], J[good], gnorm[good] = W_try[ok], G_try[ok], J_try[ok], g_try[ok]
            for j, z in zip(good, Z_try[ok]):
                if j in slow:  # Newton from here: its exact Hessian, the memory restarted
                    own[j] = cho_factor(_hessian(Xy_hess, loss.second_derivative(z), reg[j]))
                    rho[j] = 0.0
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
    Xy_hess = np.asfortranarray(Xy, dtype=dtype)
    zero = np.zeros((1, d))
    start = (cho_factor(_hessian(Xy_hess, np.full(n, loss.curvature), lam)), None)
    w0, w0_norm, _, n_hessians = _iterate(Xy, XyT, Xy_hess, zero.copy(), zero, lam, np.zeros(1), start, loss, tol,
                                          max_iter)
    w0 = w0[0]
    if w0_norm[0] > tol:
        warnings.warn(f"the unperturbed problem did not reach gradient norm <= {tol:g} ({w0_norm[0]:.3g}).",
                      ConvergenceWarning, stacklevel=2)
    if k == 0:
        return PartSolution(w0, np.empty((0, d)), np.empty(0), np.zeros(0, dtype=int), n_hessians + 1)
    shared = np.linalg.eigh(_hessian(Xy_hess, loss.second_derivative(Xy @ w0), lam))
    W, gnorm, n_passes, more = _iterate(Xy, XyT, Xy_hess, np.repeat(w0[None, :], k, axis=0), B, lam, deltas, shared,
                                        loss, tol, max_iter)
    n_hessians += more + 2
    if np.any(gnorm > tol):
        warnings.warn(f"{int(np.sum(gnorm > tol))} of {k} problems did not reach gradient norm <= {tol:g} "
                      f"(largest {gnorm.max():.3g}).", ConvergenceWarning, stacklevel=2)
    return PartSolution(w0, W, gnorm, n_passes, n_hessians)

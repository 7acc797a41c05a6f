r"""All problems on one part of the data, around one shared Hessian: the path of private tuning.

Algorithm 3 of JMLR 2011 (:mod:`dplr.tuning`) solves, on each part :math:`D_i` of the data, the
unperturbed problem (Algorithm 1 releases its minimiser plus noise) and one Algorithm 2 problem per ε,

.. math::

    J_j(w) = \frac{\lambda + \Delta_j}{2}\lVert w\rVert^2 + \frac{b_j^\top w}{n}
             + \frac1n\sum_{i\in D_i}\ell(y_i w^\top x_i),

whose :math:`\Delta_j` differ from ε to ε. :func:`~dplr.solver.solve_on_part` shares the expensive work among them:

0. equal rows of the part are folded into one with its count (``_fold_duplicates``): the same objective from
   fewer rows (KDDCup99 repeats many records; Adult has almost none, and a screen of evenly spaced rows,
   ``_may_repeat``, leaves it as it is);
1. the unperturbed minimiser :math:`w_0`, by the iteration of step 3 from 0 with the loss's curvature bound as
   the initial matrix, :math:`M = c\,X^\top X/n + \lambda I` (:math:`c = 1/4` for the logistic loss: its Hessian
   at 0; :math:`c = 1/(2h)` for the Huber loss, whose Hessian at 0 is only :math:`\lambda I`);
2. **one** Hessian :math:`H_0` at :math:`w_0`, from which each problem's :math:`M_j = H_0 + \Delta_j I` (the
   Hessian of :math:`J_j` at :math:`w_0`, exactly) is factored; and without a pass over the data, each problem's
   objective and gradient at :math:`w_0` from the unperturbed ones there:
   :math:`J_j(w_0) = J(w_0) + b_j^\top w_0/n + \tfrac{\Delta_j}{2}\lVert w_0\rVert^2` and
   :math:`\nabla J_j(w_0) = \nabla J(w_0) + \Delta_j w_0 + b_j/n`;
3. every perturbed problem runs L-BFGS (the last :data:`MEMORY` pairs :math:`s = w_{t+1} - w_t`,
   :math:`y = \nabla J_j(w_{t+1}) - \nabla J_j(w_t)`; :math:`s^\top y \ge (\lambda + \Delta_j)\lVert s\rVert^2 > 0`)
   with :math:`M_j^{-1}` as its initial inverse Hessian, from :math:`w_0`, all problems in one pass over the part
   per trial step (one matrix product for the margins, one for the gradients). :math:`M_j` starts as
   :math:`H_0 + \Delta_j I`; a problem whose gradient norm fell by less than :data:`REFRESH_RATIO` in a step gets
   its exact Hessian at its current point as :math:`M_j` and an empty memory: Newton, then
   quasi-Newton steps from there (needed where the noise moved it far from :math:`w_0`, e.g. at ε = 0.01).
   Hessians are sums over the rows whose curvature is not negligible (:data:`NEGLIGIBLE`; the Huber loss: its
   quadratic band), one BLAS ``syrk`` each, accumulated in float32 under the rule of
   :data:`~dplr.solver.batched.SINGLE_PRECISION_REG`: they only precondition. Every :math:`M_j` is kept as the
   inverse :math:`U_j^{-1}` of its Cholesky factor (:math:`M_j = U_j^\top U_j`, LAPACK ``potrf`` and ``trtri``), so
   that :math:`M_j^{-1}q = U_j^{-1}(U_j^{-\top}q)` is two matrix-vector products for all problems at once.

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

**Several parts.** :func:`~dplr.solver.solve_on_parts` takes the parts of one run of Algorithm 3 together: their
unperturbed problems iterate as one batch, then all their perturbed problems, each pass reading every part for its
own problems only. What does not read the data -- the directions, the line searches, the bookkeeping -- is done
once per step for all parts, which is most of the cost of small parts; each part's solution is bit for bit the one
it gets alone. Large parts are solved one after another (:data:`GROUP_ELEMENTS`), where their data stay in cache.
"""
from __future__ import annotations

import warnings
from dataclasses import dataclass

import numpy as np
from scipy.linalg import blas, lapack
from sklearn.exceptions import ConvergenceWarning

from dplr.solver.batched import SINGLE_PRECISION_REG

__all__ = ["PartSolution", "solve_on_part", "solve_on_parts", "GROUP_ELEMENTS", "DISTINCT_FRACTION", "REFRESH_RATIO",
           "MEMORY", "NEGLIGIBLE"]

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
#: :func:`~dplr.solver.solve_on_parts` iterates parts together while their data hold at most this many numbers
#: (2**20, 8 MB in float64): small parts share the per-step work; larger ones, solved one after another, keep their
#: passes in cache (measured on a 2-core Xeon: five parts of 2,713 x 105 together 7% faster than one by one, five of
#: 5,426 x 105 13% slower). Which parts share a group changes no number.
GROUP_ELEMENTS = 2 ** 20
#: A part's equal rows are folded into one, with its count, when at most this fraction of its rows are distinct.
DISTINCT_FRACTION = 0.9
#: Rows of the screen that leaves a part without repeats as it is (``_may_repeat``).
SCREEN_ROWS = 1024


@dataclass(frozen=True)
class PartSolution:
    """``w0`` (d,): the unperturbed minimiser; ``coef`` (k, d): one minimiser per perturbed problem;
    ``grad_norm`` (k,), ``n_passes`` (k,): gradient passes each problem took; ``n_hessians``: Hessians formed
    (the start's, the shared one and every refresh); ``n_passes_w0``: the passes the unperturbed problem took;
    ``grad_norm_w0``: the gradient norm at ``w0``."""

    w0: np.ndarray
    coef: np.ndarray
    grad_norm: np.ndarray
    n_passes: np.ndarray
    n_hessians: int
    n_passes_w0: int = 0
    grad_norm_w0: float = float("nan")


def _hessian(part, curvature, reg):
    """reg I + Xy^T diag(counts * curvature) Xy / n over the rows whose curvature exceeds :data:`NEGLIGIBLE` times reg.

    ``Xy_hess``: the part's signed rows in Fortran order, in the precision the Hessians are accumulated in
    (float32 where :data:`~dplr.solver.batched.SINGLE_PRECISION_REG` allows: a preconditioner; the stopping
    test uses float64 gradients). Leaving out rows of curvature below ``NEGLIGIBLE * reg`` changes the result by
    less than ``NEGLIGIBLE * reg`` (rows in the unit ball), a relative ``NEGLIGIBLE`` of its smallest eigenvalue
    (the Huber loss: only its quadratic band; the logistic loss far from the minimiser: a few rows). One
    symmetric rank-k update (BLAS syrk) of the rows scaled by the square root of their weight; float64 result. A
    distinct row that stands for ``c`` equal ones (``_fold_duplicates``) has weight ``c`` times its curvature:
    rows left out still change the result by less than ``NEGLIGIBLE * reg`` (the counts sum to n).
    """
    Xy_hess, n, counts = part.Xy_hess, part.n, part.counts
    d = Xy_hess.shape[1]
    keep = curvature > NEGLIGIBLE * reg
    H = np.zeros((d, d))
    if keep.any():
        rows = Xy_hess if keep.all() else np.asfortranarray(Xy_hess[keep])
        weight = curvature[keep] if counts is None else curvature[keep] * counts[keep]
        weights = np.sqrt(weight / n).astype(Xy_hess.dtype)
        syrk = blas.ssyrk if Xy_hess.dtype == np.float32 else blas.dsyrk
        upper = syrk(1.0, rows * weights[:, None], trans=1)
        H = np.triu(upper, 1).astype(float)
        H += H.T
        H[np.diag_indices(d)] = np.diag(upper)
    H[np.diag_indices(d)] += reg
    return H


def _segments(parts_of):
    """``(part, start, stop)`` of each run of equal entries of the nondecreasing ``parts_of``."""
    if parts_of.size == 0:
        return []
    if parts_of[0] == parts_of[-1]:  # one part (nondecreasing)
        return [(int(parts_of[0]), 0, parts_of.size)]
    cuts = (np.flatnonzero(parts_of[1:] != parts_of[:-1]) + 1).tolist()
    return [(int(parts_of[a]), a, b) for a, b in zip([0] + cuts, cuts + [parts_of.size])]


def _evaluate(data, parts_of, W, B, reg, loss):
    """Objective values, gradients and margins of the rows of W (part ``parts_of`` and reg per row): one pass over
    each part for its rows, which are contiguous (``parts_of`` is nondecreasing). Margins come back per segment."""
    k, d = W.shape
    J, G, Z = np.empty(k), np.empty((k, d)), []
    for p, a, b in _segments(parts_of):
        XyT, n, counts = data[p].XyT, data[p].n, data[p].counts
        Zp = W[a:b] @ XyT
        values, first = loss.value_and_derivative(Zp)
        if counts is None:
            values = values.sum(axis=1) / n
        else:  # each distinct row as often as it occurs
            values = (values @ counts) / n
            first *= counts
        G[a:b] = reg[a:b, None] * W[a:b] + B[a:b] / n + (first @ XyT.T) / n
        J[a:b] = (0.5 * reg[a:b] * np.einsum("kd,kd->k", W[a:b], W[a:b])
                  + np.einsum("kd,kd->k", B[a:b], W[a:b]) / n + values)
        Z.append((a, b, Zp))
    return J, G, Z


def _direction(G, rows, S, Y, rho, factors):
    r"""Minus the L-BFGS inverse-Hessian product of the gradients ``G`` of problems ``rows`` (two-loop recursion,
    newest pair first, unused slots with :math:`\rho = 0`), whose initial matrix is problem j's preconditioner
    :math:`M_j^{-1} = U_j^{-1}U_j^{-\top}` (``factors[j]`` = :math:`U_j^{-1}`, ``_inverse_factor``)."""
    q = G.copy()
    alpha = np.zeros((len(rows), S.shape[1]))
    for i in range(S.shape[1]):
        alpha[:, i] = rho[rows, i] * np.einsum("kd,kd->k", S[rows, i], q)
        q -= alpha[:, i, None] * Y[rows, i]
    U = factors if len(rows) == len(factors) else factors[rows]  # rows is sorted: all of them or a copy
    r = np.matmul(U, np.matmul(q[:, None, :], U)[:, 0, :, None])[:, :, 0]
    for i in reversed(range(S.shape[1])):
        beta = rho[rows, i] * np.einsum("kd,kd->k", Y[rows, i], r)
        r += S[rows, i] * (alpha[:, i] - beta)[:, None]
    return -r


def _inverse_factor(H):
    r""":math:`U^{-1}` for the Cholesky factor :math:`H = U^\top U` of the symmetric positive definite ``H`` (LAPACK
    ``potrf``, ``trtri``; zero below the diagonal), so that :math:`H^{-1} = U^{-1}U^{-\top}`."""
    factor, info = lapack.dpotrf(H, lower=False, clean=True)
    if info == 0:
        factor, info = lapack.dtrtri(factor, lower=False)
    if info != 0:
        raise np.linalg.LinAlgError(f"a preconditioner is not positive definite (LAPACK info {info}).")
    return factor


def _iterate(data, parts_of, W, B, lam, shift, factors, loss, tol, max_iter, start=None):
    """Preconditioned L-BFGS for the rows of W, row j on part ``parts_of[j]`` (nondecreasing) with ``lam[j]``
    (module docstring): initial inverse matrix from ``factors[j]`` (``_direction``; overwritten) until a slow step
    earns problem j its exact Hessian. ``start``: the objective values and gradients at W, if known (else one pass
    computes them). Every problem's iterates use only its own row and its part. Returns ``(W, J, G, gradient norms,
    passes, Hessians formed)``, each per problem. ``tol``: one for all problems or one per problem."""
    k, d = W.shape
    reg = lam + shift
    tol = np.broadcast_to(np.asarray(tol, dtype=float), (k,))  # one tolerance per problem
    n_passes, n_hessians = np.zeros(k, dtype=int), np.zeros(k, dtype=int)
    if start is None:
        J, G, _ = _evaluate(data, parts_of, W, B, reg, loss)
        n_passes += 1
    else:
        J, G = start
    gnorm = np.linalg.norm(G, axis=1)
    S, Y, rho = np.zeros((k, MEMORY, d)), np.zeros((k, MEMORY, d)), np.zeros((k, MEMORY))
    stuck = np.zeros(k, dtype=bool)  # no acceptable step within MAX_HALVINGS: left where it is, reported
    for _ in range(max_iter):
        active = np.flatnonzero((gnorm > tol) & ~stuck)
        if active.size == 0:
            break
        P = _direction(G[active], active, S, Y, rho, factors)
        slope = np.einsum("kd,kd->k", G[active], P)
        step = np.ones(active.size)
        pending = np.arange(active.size)
        for _ in range(MAX_HALVINGS):
            rows = active[pending]
            W_try = W[rows] + step[pending, None] * P[pending]
            J_try, G_try, Z_try = _evaluate(data, parts_of[rows], W_try, B[rows], reg[rows], loss)
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
            slow = good[g_try[ok] > np.maximum(tol[good], REFRESH_RATIO * gnorm[good])]
            W[good], G[good], J[good], gnorm[good] = W_try[ok], G_try[ok], J_try[ok], g_try[ok]
            for a, b, Zp in Z_try if slow.size else ():  # Newton from here for the slow ones: the exact Hessian,
                for t in np.flatnonzero(np.isin(rows[a:b], slow)):
                    j = rows[a + t]
                    hessian = _hessian(data[parts_of[j]], loss.second_derivative(Zp[t]), reg[j])
                    factors[j] = _inverse_factor(hessian)
                    rho[j] = 0.0  # and the memory restarted
                    n_hessians[j] += 1
            pending = pending[~ok]
            if pending.size == 0:
                break
            step[pending] *= 0.5
        else:
            stuck[active[pending]] = True
    return W, J, G, gnorm, n_passes, n_hessians


@dataclass(frozen=True)
class _Part:
    """One part's data as the passes and the Hessians read it: its distinct signed rows as columns of ``XyT`` (C order;
    ``Xy`` is its transpose, a view), the same rows in Fortran order in the Hessians' precision (``Xy_hess``), how
    often each occurs (``counts``; ``None``: once each, no fold) and the number of records ``n``."""

    XyT: np.ndarray
    Xy_hess: np.ndarray
    counts: np.ndarray | None
    n: int

    @property
    def Xy(self):
        return self.XyT.T


def _row_hash(Xy):
    """One number per row: the rows' products with a fixed vector of cosines. Equal rows get equal numbers unless the
    BLAS kernel rounds two of them differently; they are then not folded, which costs speed, never correctness."""
    return Xy @ np.cos(1.618033988749895 * np.arange(1, Xy.shape[1] + 1))


def _may_repeat(X, y):
    """``False`` when a part of more than :data:`SCREEN_ROWS` records has no two equal signed rows among
    :data:`SCREEN_ROWS` evenly spaced ones (Adult): it is then taken as it is, without the sort of
    ``_fold_duplicates``. A screen that decides speed only."""
    n = X.shape[0]
    if n <= SCREEN_ROWS:
        return n > 1
    step = n // SCREEN_ROWS
    sample = _row_hash(X[::step][:SCREEN_ROWS] * y[::step][:SCREEN_ROWS, None])
    return np.unique(sample).size < sample.size


def _fold_duplicates(Xy):
    r"""The distinct rows of ``Xy`` in order of first occurrence and how often each occurs, or ``(Xy, None)`` when
    more than :data:`DISTINCT_FRACTION` of the rows are distinct.

    Equal rows have equal margins, so :math:`\sum_i \ell(w^\top x_i) = \sum_u c_u\,\ell(w^\top x_u)` over the
    distinct rows :math:`x_u` with counts :math:`c_u`: the same objective, gradient and Hessian from fewer rows
    (KDDCup99 repeats many connection records; a part of 6,666 has about 2,900 distinct ones). Rows are grouped
    by one fixed linear hash, and every row folded into another is checked to equal it exactly; a collision of
    distinct rows falls back to an exact comparison of whole rows (``np.unique``)."""
    n = Xy.shape[0]
    if n < 2:
        return Xy, None
    h = _row_hash(Xy)
    order = np.argsort(h, kind="stable")
    sorted_h = h[order]
    starts = np.r_[True, sorted_h[1:] != sorted_h[:-1]]
    group = np.cumsum(starts) - 1
    if group[-1] + 1 > DISTINCT_FRACTION * n:
        return Xy, None
    first = order[starts]  # each group's first occurrence (the sort is stable)
    folded = ~starts
    if np.array_equal(Xy[order[folded]], Xy[first[group[folded]]]):
        counts = np.bincount(group)
    else:  # two distinct rows with one hash: compare whole rows
        _, first, counts = np.unique(Xy, axis=0, return_index=True, return_counts=True)
        if len(first) > DISTINCT_FRACTION * n:
            return Xy, None
    keep = np.argsort(first)
    return Xy[first[keep]], counts[keep].astype(float)


def _prepare(X, y, lam, loss):
    """One part's ``_Part``, duplicates folded (``_fold_duplicates``) unless the screen finds none (``_may_repeat``)."""
    n = X.shape[0]
    if _may_repeat(X, y):
        Xy, counts = _fold_duplicates(X * y[:, None])
        XyT = np.ascontiguousarray(Xy.T)
    else:
        XyT, counts = np.multiply(X.T, y, order="C"), None
    radius2 = float(np.max(np.einsum("ij,ij->j", XyT, XyT))) if n else 0.0
    dtype = np.float32 if lam >= SINGLE_PRECISION_REG * loss.curvature * radius2 else np.float64
    return _Part(XyT, XyT.astype(dtype).T, counts, n)


def _groups(sizes):
    """Consecutive ``(start, stop)`` groups of parts whose data hold at most :data:`GROUP_ELEMENTS` in all (a larger
    part alone)."""
    groups, start, total = [], 0, 0
    for i, size in enumerate(sizes):
        if i > start and total + size > GROUP_ELEMENTS:
            groups.append((start, i))
            start, total = i, 0
        total += size
    return groups + [(start, len(sizes))] if sizes else []


def solve_on_parts(parts, loss, tol=1e-8, max_iter=200, tol_w0=None):
    """:func:`~dplr.solver.solve_on_part` for several parts at once: ``parts`` is a sequence of
    ``(X, y, lam, B, ridges)``.

    ``tol`` stops the perturbed problems (one number, or a list with one per part, a number or one per problem);
    ``tol_w0`` (default ``tol``, then a number; one number, or one per part) the unperturbed ones, whose minimisers an
    output perturbation releases: private tuning passes each :func:`~dplr.solver.stopping_tolerance`, so that the stop
    certifies its tolerance despite rounding.

    The parts go in consecutive groups of at most :data:`~dplr.solver.shared.GROUP_ELEMENTS` numbers of data. In a
    group, all unperturbed problems iterate together, then all perturbed ones: the work that does not read the data
    (the L-BFGS directions, the line searches) is done once per step for all of them, the passes part by part. Every
    problem's iterates depend only on its own row and its part, so each part's solution is the one
    :func:`~dplr.solver.solve_on_part` gives it alone, bit for bit (``tests/test_solver.py``). Inputs are trusted.
    Returns one :class:`PartSolution` per part.
    """
    tol_w0 = np.broadcast_to(np.asarray(tol if tol_w0 is None else tol_w0, dtype=float), (len(parts),))
    tols = list(tol) if isinstance(tol, (list, tuple)) else [tol] * len(parts)  # one entry per part (trusted)
    groups = _groups([np.size(X) for X, _, _, _, _ in parts])
    if len(groups) > 1:
        return [solution for a, b in groups
                for solution in solve_on_parts(parts[a:b], loss, tols[a:b], max_iter, tol_w0[a:b])]
    data = [_prepare(X, y, lam, loss) for X, y, lam, _, _ in parts]
    d = data[0].XyT.shape[0] if parts else 0
    lams = np.array([lam for _, _, lam, _, _ in parts], dtype=float)
    m = len(parts)
    # 1. the unperturbed minimisers, from 0, each with its part's curvature bound as the initial matrix
    starts = np.array([_inverse_factor(_hessian(data[p], np.full(data[p].XyT.shape[1], loss.curvature), lams[p]))
                       for p in range(m)]).reshape(m, d, d)
    zero = np.zeros((m, d))
    w0, J0, G0, w0_norm, passes0, hessians0 = _iterate(data, np.arange(m), zero.copy(), zero, lams, np.zeros(m), starts,
                                                 loss, tol_w0, max_iter)
    if np.any(w0_norm > tol_w0):
        warnings.warn(f"{int(np.sum(w0_norm > tol_w0))} unperturbed problem(s) did not reach their gradient-norm "
                      f"tolerance (largest norm {w0_norm.max():.3g}, tolerances down to {tol_w0.min():.3g}).",
                      ConvergenceWarning, stacklevel=3)
    # 2. one Hessian per part at its w0, shared by the part's perturbed problems: (H0 + Delta_j I)^{-1} for each
    B = [np.asarray(b, dtype=float).reshape(-1, d) for _, _, _, b, _ in parts]
    ridges = [np.asarray(ridge, dtype=float).reshape(-1) for _, _, _, _, ridge in parts]
    counts = np.array([len(b) for b in B], dtype=int)
    factors = []
    for p in range(m):
        if counts[p]:
            H0 = _hessian(data[p], loss.second_derivative(data[p].Xy @ w0[p]), lams[p])
            factors += [_inverse_factor(H0 + ridge * np.eye(d)) for ridge in ridges[p]]
    # 3. every perturbed problem from its part's w0, where J_j and its gradient follow from J0 and G0 without a pass
    parts_of = np.repeat(np.arange(m), counts)
    B_all, shift = np.vstack(B + [zero[:0]]), np.concatenate(ridges + [np.zeros(0)])
    W_start = np.repeat(w0, counts, axis=0)
    n = np.array([data[p].n for p in range(m)], dtype=float)[parts_of]
    J_start = (J0[parts_of] + np.einsum("kd,kd->k", B_all, W_start) / n
               + 0.5 * shift * np.einsum("kd,kd->k", W_start, W_start))
    G_start = G0[parts_of] + shift[:, None] * W_start + B_all / n[:, None]
    tol = np.concatenate([np.broadcast_to(np.asarray(t, float), (c,)) for t, c in zip(tols, counts)] + [np.zeros(0)])
    W, _, _, gnorm, n_passes, hessians = _iterate(data, parts_of, W_start, B_all, lams[parts_of], shift,
                                                  np.array(factors).reshape(-1, d, d), loss, tol, max_iter,
                                                  start=(J_start, G_start))
    if np.any(gnorm > tol):
        warnings.warn(f"{int(np.sum(gnorm > tol))} of {len(gnorm)} problems did not reach their gradient-norm "
                      f"tolerance (largest norm {gnorm.max():.3g}).", ConvergenceWarning, stacklevel=3)
    bounds = np.r_[0, np.cumsum(counts)]
    # Hessians per part: the start's, the shared one and every refresh (the ones inside the solve of w0 included)
    return [PartSolution(w0[p], W[bounds[p]:bounds[p + 1]], gnorm[bounds[p]:bounds[p + 1]],
                         n_passes[bounds[p]:bounds[p + 1]],
                         int(1 + hessians0[p] + (1 + hessians[bounds[p]:bounds[p + 1]].sum() if counts[p] else 0)),
                         int(passes0[p]), float(w0_norm[p]))
            for p in range(m)]


def solve_on_part(X, y, lam, loss, B, ridges, tol=1e-8, max_iter=200, tol_w0=None):
    """The unperturbed minimiser and the perturbed ones (rows of ``B``, per-problem ``ridges``) on one part;
    ``tol_w0`` as in :func:`solve_on_parts`.

    Inputs are trusted (callers validated them at the public boundary). Returns a :class:`PartSolution`.
    """
    return solve_on_parts([(X, y, lam, B, ridges)], loss, tol=tol, max_iter=max_iter, tol_w0=tol_w0)[0]

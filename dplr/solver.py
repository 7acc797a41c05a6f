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

**Method.** The objective is :math:`(\lambda+\Delta)`-strongly convex, so its minimiser is the unique
root of :math:`\nabla J_j`, and Newton's method on :math:`\nabla J_j = 0`, damped by a backtracking
(Armijo) line search on :math:`\frac12\lVert\nabla J_j\rVert^2`, converges from any start. A problem
stops when its gradient norm, computed in float64, is at most ``tol``; everything below only changes
the path to that point. Each problem's iterates depend on its own :math:`b_j` and on quantities the
batch shares, so results never depend on the number of threads, and on the chunking only through
rounding.

**Batching.** The :math:`k` problems share the data, so an iteration is a few matrix products over
the batch: margins :math:`Z = W (yX)^\top`, gradients :math:`(\lambda+\Delta)W + B/n + \ell'(Z)(yX)/n`
and Hessians :math:`(\lambda+\Delta)I + \sum_i \ell''(z_{ij}) x_i x_i^\top / n`, the latter one
product of the curvatures with a table of the :math:`d(d+1)/2` distinct products :math:`x_{ia}x_{ib}`.
Each pass over the data runs through blocks of points small enough for the block's margins to stay
in the processor's cache, with one exponential per margin for the logistic loss; chunks of problems
run on threads. Work arrays are reused per thread (fresh large arrays cost page faults).

**Taylor start.** A batch starts from the minimiser :math:`w_0` of the unperturbed problem
(:math:`b = 0`), solved first. Near it, problem :math:`j`'s gradient is

.. math::

    \nabla J_j(w_0 + \delta) = g_0 + \frac{b_j}{n} + H_0\delta + \tfrac12 T[\delta, \delta]
        + \tfrac16 Q[\delta, \delta, \delta] + O(\lVert\delta\rVert^4),

where the Hessian :math:`H_0` and the third- and fourth-derivative tensors
:math:`T = \frac1n\sum_i \ell'''(z_i)\, x_i^{\otimes 3}` and :math:`Q = \frac1n\sum_i
\ell''''(z_i)\, x_i^{\otimes 4}` at :math:`w_0` are the same for every :math:`b_j`: one pass over the
data serves the whole batch. A few Newton steps on this :math:`d`-dimensional model (no pass over
the data) give each problem's first trial point, the Taylor expansion of its minimiser in
:math:`b_j`, and the model's Jacobian :math:`H_0 + T[\delta] + \frac12 Q[\delta, \delta]`
estimates the Hessian there. Where the model is trustworthy (its higher-order terms are small),
that estimate replaces the problem's Hessian for the next step, corrected by the gradient found at
the trial point (the model's remainder, whose leading term is homogeneous of degree 4 in the step,
so that by Euler's theorem its Jacobian maps the step to 4 times the remainder: a symmetric rank-two
update) and refined by a BFGS secant update after each further step; at the paper's setting every
problem then converges after two passes over the data and none needs a Hessian of its own. A
problem whose trial fails the line search falls back to the plain Newton step
:math:`-H_0^{-1}\nabla J_j(w_0)`. The tensors are used when they cost no more than a pass over the
batch (:math:`Q` only for the logistic loss and large enough batches).

**Hessians.** Otherwise a problem whose gradient norm exceeds :math:`\sqrt{\mathrm{tol}}` will
certainly need another step, so its Hessian at the trial point is accumulated in the same pass as
the gradient; other problems get theirs in a separate pass when they need one. Hessians (and
:math:`T, Q`) are accumulated in float32 within a block and in float64 across blocks when
:math:`\lambda + \Delta \ge 10^{-4}\, c \max_i\lVert x_i\rVert^2` (:math:`c` the loss's curvature
bound): their rounding error is then a small fraction of the smallest eigenvalue, which perturbs the
Newton direction, not the gradient or the stopping test. Below that (very small :math:`\lambda`)
they are accumulated in float64. The Hessian at the batch's start is always formed in float64.
"""
from __future__ import annotations

import os
import threading
import warnings
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from functools import lru_cache

import numpy as np
from sklearn.exceptions import ConvergenceWarning
from threadpoolctl import ThreadpoolController

from dplr.losses import LogisticLoss, get_loss
from dplr.validation import check_lambda, check_signed_data

__all__ = ["SolverResult", "solve_regularized_erm", "regularized_erm_objective", "regularized_erm_gradient"]

_ARMIJO = 1e-4
_MAX_HALVINGS = 60
# Largest table of products x_ia x_ib (a <= b; n x d(d+1)/2 entries) kept for the whole solve; beyond
# it the table is rebuilt block by block at every Hessian evaluation.
_TABLE_MAX = 1 << 23
# Passes over the data go through blocks of points: about this many margins (problems x points) per
# block, so that a block's arrays stay in the per-core cache; at least _MIN_BLOCK points.
_BLOCK_ELEMENTS = 1 << 16
_MIN_BLOCK = 256
_BLOCK_MIN_ROWS = 8  # few problems: blocks of at most 8192 points (long thin matrix products are slow)
_THREADPOOLS = ThreadpoolController()
# Default largest chunk: about this many margins (problems x points) per chunk.
_CHUNK_ELEMENTS = 1 << 21
# The Taylor start is trusted for a problem when the model's higher-order terms at the Newton step are at
# most this fraction of the gradient they perturb (see _taylor_start); iterations on the model.
_TAYLOR_TRUST = 0.25
_TAYLOR_ITERATIONS = 2
# Hessians are accumulated in float32 when lam + Delta >= this times the curvature bound c of the loss
# times max ||x_i||^2 (module docstring), else in float64.
_SINGLE_PRECISION_REG = 1e-4
# Per-thread work arrays of shape (chunk, n), reused across evaluations and solves: fresh arrays of this
# size come from the kernel as new pages, and the page faults cost as much as the arithmetic.
_WORKSPACE = threading.local()


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


def _default_threads():
    cores = os.cpu_count() or 1
    try:
        return max(1, min(cores, int(os.environ.get("OMP_NUM_THREADS", cores))))
    except ValueError:
        return cores


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
    reg, n = lam + delta, Xy.shape[0]
    return 0.5 * reg * np.einsum("kd,kd->k", W, W) + np.einsum("kd,kd->k", B, W) / n + loss.value(W @ Xy.T).mean(axis=1)


def regularized_erm_gradient(W, X, y, lam, loss="logistic", b=None, delta=0.0, huber_h=0.5):
    """Gradient of :math:`J_j` at each row ``w_j`` of ``W``; shape ``(k, d)``."""
    loss = get_loss(loss, huber_h)
    W = np.atleast_2d(np.asarray(W, dtype=float))
    Xy = np.asarray(X, dtype=float) * np.asarray(y, dtype=float)[:, None]
    B, _ = _as_batch(b, W.shape[0], Xy.shape[1])
    return (lam + delta) * W + B / Xy.shape[0] + (loss.derivative(W @ Xy.T) @ Xy) / Xy.shape[0]


class _Design:
    """The signed data ``Xy`` (rows y_i x_i) in the layouts the solver's products want; read-only, shared by chunks.

    Every pass over the data goes through blocks of ``block`` points, so that the (problems x block)
    arrays of margins and derivatives stay in the processor's cache (module docstring). Hessians use
    the symmetry of x_i x_i^T: a table of the d(d+1)/2 products x_ia x_ib (a <= b) for every point, in
    float32 (float64 for very small lambda), kept for a batch when it has at most ``_TABLE_MAX`` entries and
    else built block by block; a single problem forms its Hessians directly, block by block.
    """

    def __init__(self, X, y, dtype, keep_table=True):
        self.dtype = dtype  # of the Hessian (and T, Q) accumulations within a block
        self.n, self.d = X.shape
        # (d, n) rows y_i x_i: every product of the solver reads it by rows; a work array of this thread
        self.XyT = np.multiply(X.T, y, out=_buffer("signed data", (self.d, self.n)))
        self.upper, self.full_index = _packing(self.d)
        self.m = self.upper[0].size
        self.table = None
        if keep_table and self.n * self.m <= _TABLE_MAX:  # in the creating thread's work arrays: no new pages
            self.table = self._build(0, self.n, out=_buffer("table", (self.m, self.n), dtype))

    def block(self, rows):
        """Points per block for a pass with ``rows`` problems (at most _BLOCK_ELEMENTS / _BLOCK_MIN_ROWS)."""
        return max(_MIN_BLOCK, _BLOCK_ELEMENTS // max(_BLOCK_MIN_ROWS, rows))

    def _build(self, start, stop, out=None):
        out = np.empty((self.m, stop - start), dtype=self.dtype) if out is None else out
        row = 0
        XyT = self.XyT[:, start:stop].astype(self.dtype, copy=False)
        for a in range(self.d):  # row (a, b) of the table: x_ia x_ib, b >= a
            np.multiply(XyT[a], XyT[a:], out=out[row:row + self.d - a])
            row += self.d - a
        return out

    def products(self, start, stop):
        """(d(d+1)/2, stop - start) products of the points start..stop, in ``dtype``."""
        return self._build(start, stop) if self.table is None else self.table[:, start:stop]

    def symmetric(self, packed):
        """(k, d(d+1)/2) upper triangles -> (k, d, d) symmetric matrices."""
        return packed[:, self.full_index].reshape(packed.shape[0], self.d, self.d)

    def hessians(self, packed, reg):
        """(k, d, d) Hessians reg I + packed / n from curvature-weighted sums of the products."""
        H = self.symmetric(packed)
        H /= self.n
        H[:, np.arange(self.d), np.arange(self.d)] += reg
        return H


@lru_cache(maxsize=None)
def _packing(d):
    """Packed storage of symmetric d x d matrices: the upper-triangle indices (a <= b) and, for every entry
    (a, b) of the full matrix in row-major order, its packed position (read-only, shared by all solves)."""
    upper = np.triu_indices(d)
    position = np.empty((d, d), dtype=np.intp)
    position[upper] = position[upper[::-1]] = np.arange(upper[0].size)
    for part in (*upper, position):
        part.flags.writeable = False
    return upper, position.ravel()


def _buffer(name, shape, dtype=np.float64):
    """A per-thread reusable 2-d array of ``shape`` and ``dtype`` (contents undefined)."""
    size = shape[0] * shape[1]
    key = name if dtype is np.float64 else name + "32"
    buf = getattr(_WORKSPACE, key, None)
    if buf is None or buf.size < size:
        buf = np.empty(size, dtype=dtype)
        setattr(_WORKSPACE, key, buf)
    return buf[:size].reshape(shape)


def _curvature(loss, Z, first, rows, dtype):
    """l'' in ``dtype`` at the margins ``Z[rows]`` (all rows when None), in a work array (float32 or float64).

    For the logistic loss it comes from l' alone, l'' = -l'(1 + l'), and ``Z`` may already hold l'.
    """
    if not isinstance(loss, LogisticLoss):
        return loss.second_derivative(Z if rows is None else Z[rows]).astype(dtype, copy=False)
    selected = first if rows is None else first[rows]
    if selected.dtype != dtype:
        cast = _buffer("selected", selected.shape, dtype)
        np.copyto(cast, selected, casting="same_kind")
        selected = cast
    curvature = np.add(selected, 1.0, out=_buffer("curvature", selected.shape, dtype))
    curvature *= selected
    return np.negative(curvature, out=curvature)


def _evaluate(design, W, B, reg, loss, hessian_rows=None):
    """Gradients (k, d) at the rows of W and, for ``hessian_rows`` (indices into W), their Hessians.

    One pass over the data in blocks of points: margins, l' (one exponential per margin for the
    logistic loss), the gradient sums (float64) and, if asked, the curvature-weighted products,
    accumulated in float64 across blocks and within a block in ``design.dtype``.
    """
    k, n = W.shape[0], design.n
    logistic = isinstance(loss, LogisticLoss)
    sums = np.zeros((design.d, k))
    packed = direct = None
    if hessian_rows is not None and design.table is None and len(hessian_rows) == 1:
        direct = np.zeros((design.d, design.d))  # one problem, no table: X diag(l'') X^T block by block
    elif hessian_rows is not None:
        packed = np.zeros((len(hessian_rows), design.m))
    rows = None if hessian_rows is None or len(hessian_rows) == k else hessian_rows
    block = design.block(k)
    with np.errstate(over="ignore"):
        for start in range(0, n, block):
            stop = min(start + block, n)
            X_block = design.XyT[:, start:stop]
            Z = np.matmul(W, X_block, out=_buffer("margins", (k, stop - start)))
            if logistic:  # l' = -1 / (1 + e^z) in place, as LogisticLoss.derivatives computes it
                first = np.exp(Z, out=Z)
                first += 1.0
                np.divide(-1.0, first, out=first)
            else:
                first, _ = loss.derivatives(Z, second=False)
            sums += X_block @ first.T
            if packed is not None:
                packed += _curvature(loss, Z, first, rows, design.dtype) @ design.products(start, stop).T
            elif direct is not None:
                weighted = np.multiply(X_block, _curvature(loss, Z, first, rows, np.float64)[0],
                                       out=_buffer("weighted", X_block.shape))
                direct += weighted @ X_block.T
    G = reg * W + B / n + sums.T / n
    if direct is not None:
        direct /= n
        direct[np.arange(design.d), np.arange(design.d)] += reg
        return G, direct[None]
    return G, (None if packed is None else design.hessians(packed, reg))


@dataclass(frozen=True)
class _Start:
    """The point all problems of a batch start from, with what every problem shares there.

    ``w``: the start; ``g``: gradient of the unperturbed objective (b = 0) at ``w``, so problem j's
    gradient there is ``g + b_j / n``; ``H``: the Hessian at ``w`` (the same for every b); for the
    expansion of :func:`_taylor_start`, ``T``: the third-derivative tensor
    sum_i l'''(z_i) x_i (x) x_i (x) x_i / n at ``w`` as (d, d, d), and ``Q``: the fourth-derivative
    tensor sum_i l''''(z_i) (x_i (x) x_i) (x) (x_i (x) x_i) / n on packed pairs (a <= b), or ``None``.
    """

    w: np.ndarray
    g: np.ndarray
    H: np.ndarray
    T: np.ndarray | None = None
    Q: np.ndarray | None = None


def _start_at(design, w, reg, loss, order=1):
    """The shared start at ``w``; ``order`` 2 adds T, 3 adds T and Q (from the loss's higher derivatives).

    Away from w = 0 with ``order`` >= 2, one pass over the margins gives everything: the loss's
    derivatives at every margin (one exponential for the logistic loss), the gradient and the Hessian
    (in float64: the Newton fallback and the model's Jacobian rest on it), and T and Q together as one
    product of their weights (l''' x_a, l'''') with the table of products x_ia x_ib.
    """
    d, m = design.d, design.m
    if not np.any(w):  # every margin is 0: l'(0) and l''(0) are constants, no pass over the margins
        G = float(loss.derivative(0.0)) * design.XyT.sum(axis=1) / design.n
        H = float(loss.second_derivative(0.0)) * (design.XyT @ design.XyT.T) / design.n + reg * np.eye(d)
        return _Start(w, G, H)
    if order < 2:
        G, H = _evaluate(design, w[None, :], np.zeros((1, d)), reg, loss, np.arange(1))
        return _Start(w, G[0], H[0])
    z = w @ design.XyT
    if isinstance(loss, LogisticLoss):  # all from one exponential: s = sigma(-z), t = sigma(z)
        s = -loss.derivatives(z, second=False)[0]
        t = 1.0 - s
        st = s * t
        first, second, third, fourth = -s, st, st * (s - t), st * ((t - s) ** 2 - 2.0 * st)
    else:
        first, second = loss.derivatives(z)
        third = loss.third_derivative(z)
        fourth = loss.fourth_derivative(z) if order >= 3 else None
    G = reg * w + design.XyT @ first / design.n
    H = (design.XyT * second) @ design.XyT.T / design.n + reg * np.eye(d)
    rows = d + (m if order >= 3 else 0)  # T's rows (a, packed (b, c)) over Q's rows (packed (a, b), packed (c, e))
    packed = np.zeros((rows, m))
    block = design.n if design.table is not None else design.block(rows)
    for start in range(0, design.n, block):
        stop = min(start + block, design.n)
        products = design.products(start, stop)
        weights = _buffer("taylor", (rows, stop - start), design.dtype)
        np.multiply(design.XyT[:, start:stop], third[start:stop], out=weights[:d], casting="same_kind")
        if order >= 3:  # in the table's precision: no mixed-precision loop
            np.multiply(products, fourth[start:stop].astype(design.dtype), out=weights[d:])
        packed += weights @ products.T
    packed /= design.n
    T = design.symmetric(packed[:d])  # T[a] = sum_i l'''(z_i) x_ia x_i x_i^T / n
    Q = packed[d:] if order >= 3 else None
    return _Start(w, G, H, T, Q)


def _taylor_start(design, start, G, newton):
    r"""Steps :math:`\delta_j` from the shared start that solve the Taylor model of each problem's gradient.

    Near the start :math:`w_0` every problem's gradient is :math:`m_j(\delta) = g_j + H_0\delta +
    \frac12 T[\delta,\delta] + \frac16 Q[\delta,\delta,\delta] + O(\lVert\delta\rVert^4)` with
    :math:`g_j = g_0 + b_j/n`, and :math:`H_0, T, Q` are shared by the whole batch: this is the Taylor
    expansion of the minimiser as a function of :math:`b`. The Newton step :math:`-H_0^{-1}g_j` solves
    the first-order model; a few Newton iterations on the :math:`d`-dimensional model (second order
    when ``start.Q`` is ``None``, else third) refine it, at :math:`O(d^4)` operations per problem and
    no pass over the data. Returns the steps, which problems use the refined one (``trust``) and the
    model's Jacobian :math:`H_0 + T[\delta] + \frac12 Q[\delta,\delta]` at it, a Hessian estimate at
    the trial point, and the Newton steps themselves (the fallback). A problem trusts the model when
    its higher-order terms at the Newton step are at most ``_TAYLOR_TRUST`` times
    :math:`\lVert g_j\rVert` and the model iteration converged; otherwise it keeps the Newton step.
    Either way the step is only a trial for the solver's line search.
    """
    k, d = G.shape
    T = start.T.reshape(d * d, d)  # row (a, b), column c
    rows, cols = design.upper
    pair_weight = np.where(rows == cols, 1.0, 2.0)

    def model(D):
        TD = (D @ T.T).reshape(k, d, d)  # T[delta]
        J = start.H + TD
        curvature = 0.5 * TD  # M = G + H_0 delta + (T[delta] / 2 + Q[delta, delta] / 6) delta
        if start.Q is not None:
            QDD = design.symmetric((D[:, rows] * D[:, cols] * pair_weight) @ start.Q)  # Q[delta, delta]
            J += 0.5 * QDD
            curvature += QDD / 6.0
        M = G + D @ start.H + np.matmul(curvature, D[:, :, None])[:, :, 0]
        return M, J

    g_norm = np.linalg.norm(G, axis=1)
    D = newton.copy()
    for iteration in range(_TAYLOR_ITERATIONS):
        M, J = model(D)
        if iteration == 0:  # at the Newton step M holds the higher-order terms alone
            trust = np.linalg.norm(M, axis=1) <= _TAYLOR_TRUST * g_norm
        D -= np.linalg.solve(J, M[:, :, None])[:, :, 0]
    M, J = model(D)
    trust &= np.all(np.isfinite(D), axis=1) & (np.linalg.norm(M, axis=1) <= 1e-3 * g_norm)
    return np.where(trust[:, None], D, newton), trust, J, newton


def _bfgs_update(H, s, y):
    """BFGS update of Hessian estimates H (k, d, d) with steps s and gradient changes y (k, d).

    The updated estimate maps s to y (the secant condition) and stays positive definite: y^T s >=
    (lam + Delta) ||s||^2 > 0 for a strongly convex objective; rows where rounding breaks this keep H.
    """
    Hs = np.einsum("kab,kb->ka", H, s)
    sHs = np.einsum("ka,ka->k", s, Hs)
    ys = np.einsum("ka,ka->k", y, s)
    usable = (sHs > 0) & (ys > 0)
    sHs, ys = np.where(usable, sHs, 1.0), np.where(usable, ys, 1.0)
    change = y[:, :, None] * y[:, None, :] / ys[:, None, None] - Hs[:, :, None] * Hs[:, None, :] / sHs[:, None, None]
    return H + np.where(usable[:, None, None], change, 0.0)


def _remainder_update(J, s, g, reg):
    r"""Correct the Taylor model's Jacobians J (k, d, d) at the trial steps s (k, d) with the gradients g there.

    The model solved :math:`m(\delta) = 0` at :math:`\delta = s`, so the gradient :math:`g` at the trial
    point is the model's remainder :math:`R(s)`, whose leading term :math:`\frac1{24}\sum_i
    \ell^{(5)}(z_i)(x_i^\top s)^4 x_i / n` is homogeneous of degree 4 in :math:`s`. By Euler's
    theorem its Jacobian, the error of :math:`J` as a Hessian, maps :math:`s` to :math:`4 R(s)`:
    :math:`(\nabla^2 J_j - J)\,s \approx 4g`. The symmetric rank-two update of least Frobenius norm
    that makes :math:`J' s = J s + 4g` (Powell's symmetric Broyden update) puts this into the Hessian
    estimate. It is applied where it is small (Frobenius norm at most :math:`(\lambda+\Delta)/2`, half
    the smallest possible eigenvalue of the Hessian), so the estimate stays close to ``J``.
    """
    r = 4.0 * g
    ss = np.einsum("ka,ka->k", s, s)
    moved = ss > 0.0  # a zero step (b_j = 0 at an exact start) has nothing to correct
    ss = np.where(moved, ss, 1.0)[:, None, None]
    rs = np.einsum("ka,ka->k", r, s)[:, None, None]
    rsT = r[:, :, None] * s[:, None, :]
    E = (rsT + rsT.transpose(0, 2, 1)) / ss - rs * (s[:, :, None] * s[:, None, :]) / ss**2
    small = moved & (np.sqrt(np.einsum("kab,kab->k", E, E)) <= 0.5 * reg)
    return J + np.where(small[:, None, None], E, 0.0)


def _taylor_order(loss, d, k):
    """Order of the Taylor start: 3 when the shared tensors cost less than a pass over the batch, else 2 or 1.

    T costs n d^2 (d + 1) / 2 operations and Q about n (d(d+1)/2)^2, once per solve; one pass over a
    batch of k problems costs about 2 n d k.
    """
    m = d * (d + 1) // 2
    if not hasattr(loss, "third_derivative") or m > k:
        return 1
    return 3 if hasattr(loss, "fourth_derivative") and m * m <= 2 * d * k else 2


def _newton(design, B, start, reg, loss, tol, max_iter, taylor=None):
    """Damped Newton for the equations grad J_j(w) = 0, one per row of B, from the shared ``start``.

    Returns (W, grad_norm, n_iter). The step length is chosen by backtracking (Armijo) on the merit
    function phi = ||grad J||^2 / 2, whose slope along the Newton direction p = -H^{-1} g is -||g||^2:
    accept t when phi(w + t p) <= (1 - 2 sigma t) phi(w). Because J is (lam + Delta)-strongly convex,
    H >= (lam + Delta) I is uniformly invertible and this damped Newton method converges from any start
    (Dennis & Schnabel, Numerical Methods for Unconstrained Optimization, Section 6.5); the root of
    grad J is the unique minimiser. It needs only l' and l'' -- one exponential per margin for the
    logistic loss, no logarithms.

    The first iteration starts from ``start`` and uses its shared Hessian; with ``taylor`` (the output
    of :func:`_taylor_start` for the rows of B) the first trial is the Taylor step, and a problem whose
    trial fails the Armijo test retries the Newton step -H_0^{-1} g_j (full length, then halving) in
    the same iteration.

    Where the Hessians come from (only the accuracy of the *direction* depends on them; every
    stopping test uses a float64 gradient): after an accepted third-order Taylor trial, the model's
    Jacobian, corrected by the gradient found there (:func:`_remainder_update`), serves as the Hessian
    if that gradient is at most sqrt(tol) (the model was good), and is carried along later steps by
    BFGS updates (skipped for problems that have converged); a problem whose gradient exceeds sqrt(tol) will
    surely need another step, so its Hessian at the trial point is accumulated in the same pass as the
    gradient; any other problem that needs a Hessian gets it in a separate pass. Hessians are
    accumulated in ``design.dtype`` within a block (module docstring).
    """
    n, d = design.n, design.d
    k = B.shape[0]
    target = 0.5 * tol**2
    target_speculate = 0.5 * tol
    W = np.repeat(start.w[None, :], k, axis=0)
    G = start.g + B / n
    merit = 0.5 * np.einsum("kd,kd->k", G, G)
    H = np.empty((k, d, d))
    hessian = np.zeros(k, dtype=np.int8)  # 0: none at the current point, 1: computed, 2: the Taylor model's
    n_iter = np.zeros(k, dtype=int)
    stalled = np.zeros(k, dtype=bool)
    first_iteration = True
    while True:
        active = np.flatnonzero((merit > target) & ~stalled & (n_iter < max_iter))
        if active.size == 0:
            return W, np.sqrt(2.0 * merit), n_iter
        fallback = None
        on_model = np.zeros(active.size, dtype=bool)  # trial is a third-order Taylor step: no speculation
        if first_iteration:
            if taylor is None:
                P = np.linalg.solve(start.H, -G[active].T).T
            else:
                P, on_taylor, J, fallback = (part[active] for part in taylor)
                if start.Q is not None:
                    on_model = on_taylor.copy()
            first_iteration = False
        else:
            distrusted = active[(hessian[active] == 2) & (merit[active] > target_speculate)]
            hessian[distrusted] = 0
            missing = active[hessian[active] == 0]
            if missing.size:
                H[missing] = _evaluate(design, W[missing], B[missing], reg, loss, np.arange(missing.size))[1]
            P = np.linalg.solve(H[active], -G[active][:, :, None])[:, :, 0]
        carry = hessian[active] == 2  # approximate Hessians, carried along the step by a secant update
        hessian[active] = 0
        step = np.ones(active.size)
        pending = np.arange(active.size)
        for _ in range(_MAX_HALVINGS):
            rows = active[pending]
            W_try = W[rows] + step[pending, None] * P[pending]
            speculate = np.flatnonzero((merit[rows] > target_speculate) & ~on_model[pending])
            G_try, H_try = _evaluate(design, W_try, B[rows], reg, loss, speculate if speculate.size else None)
            merit_try = 0.5 * np.einsum("kd,kd->k", G_try, G_try)
            ok = merit_try <= (1.0 - 2.0 * _ARMIJO * step[pending]) * merit[rows]
            good = rows[ok]
            secant = ok & carry[pending] & (merit_try > target)  # converged problems need no Hessian
            if secant.any():
                moved = rows[secant]
                H[moved] = _bfgs_update(H[moved], W_try[secant] - W[moved], G_try[secant] - G[moved])
                hessian[moved] = 2
            W[good], G[good], merit[good] = W_try[ok], G_try[ok], merit_try[ok]
            if H_try is not None:
                kept = ok[speculate]
                H[rows[speculate[kept]]] = H_try[kept]
                hessian[rows[speculate[kept]]] = 1
            modelled = ok & on_model[pending]
            if modelled.any():
                H[rows[modelled]] = _remainder_update(J[pending[modelled]], P[pending[modelled]], G_try[modelled], reg)
                hessian[rows[modelled]] = 2
            pending = pending[~ok]
            if pending.size == 0:
                break
            if fallback is not None:
                retry = on_taylor[pending]
                P[pending[retry]] = fallback[pending[retry]]
                on_taylor[pending[retry]] = on_model[pending[retry]] = False
                step[pending[~retry]] *= 0.5
            else:
                step[pending] *= 0.5
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
        unperturbed problem (:math:`b = 0`, same :math:`\lambda + \Delta`), solved first; for the
        logistic loss, when :math:`d(d+1)/2 \le k`, the first trial is the Taylor expansion of each
        minimiser around it (module docstring). The minimisers are unique, so this changes only the
        path, not the answer.
    chunk_size : int or None
        Most problems solved together: the batch is split into the fewest chunks of at most
        ``chunk_size`` problems, of equal sizes (up to one). ``None`` allows about 2^21 / n problems per
        chunk (at least 8), a function of n only. Chunks are independent: the result never depends on
        ``n_threads``, and on the chunking only through rounding.
    n_threads : int or None
        Threads that solve chunks concurrently (NumPy releases the GIL in its kernels); ``None`` uses
        every core, or ``OMP_NUM_THREADS`` when that is set (joblib and Dask set it to 1 in their
        workers, which already run one task per core). BLAS runs single-threaded inside the solver:
        its products are small, and multi-threaded BLAS stalls badly on a busy machine.

    Returns
    -------
    SolverResult
    """
    lam = check_lambda(lam)
    if not np.isfinite(delta) or delta < 0:
        raise ValueError(f"delta must be a finite number >= 0, got {delta!r}.")
    loss = get_loss(loss, huber_h)
    X, y = check_signed_data(X, y)
    n_threads = _default_threads() if n_threads is None else int(n_threads)
    if chunk_size is None:
        chunk_size = max(8, _CHUNK_ELEMENTS // X.shape[0])
    if int(chunk_size) < 1 or n_threads < 1:
        raise ValueError("chunk_size and n_threads must be positive integers.")
    n, d = X.shape
    B, single = _as_batch(b, 1, d)
    k = B.shape[0]
    reg = lam + delta
    radius2 = float(np.max(np.einsum("ij,ij->i", X, X))) if n else 0.0
    low_precision = reg >= _SINGLE_PRECISION_REG * loss.curvature * radius2
    # one problem: its Hessians straight from the data, cheaper than building the table of products
    design = _Design(X, y, np.float32 if low_precision else np.float64, keep_table=k > 1)

    n_chunks = -(-k // int(chunk_size))
    bounds = [k * i // n_chunks for i in range(n_chunks + 1)]
    chunks = [slice(bounds[i], bounds[i + 1]) for i in range(n_chunks)]
    with _THREADPOOLS.limit(limits=1, user_api="blas"):
        start = _start_at(design, np.zeros(d), reg, loss)
        if warm_start and k > 1:
            # The expansion point need not be exact (the model uses the gradient there, g_0 + b_j / n):
            # 1e-3 of the smallest perturbation b_j / n is plenty, and saves Newton steps.
            start_tol = max(tol, 1e-3 * float(np.min(np.linalg.norm(B, axis=1))) / n)
            w0, _, _ = _newton(design, np.zeros((1, d)), start, reg, loss, start_tol, max_iter)
            start = _start_at(design, w0[0], reg, loss, order=_taylor_order(loss, d, k))

        taylor = None
        if start.T is not None:  # per problem: computing it for the whole batch at once changes nothing
            G = start.g + B / n
            taylor = _taylor_start(design, start, G, np.linalg.solve(start.H, -G.T).T)

        def solve(chunk):
            return _newton(design, B[chunk], start, reg, loss, tol, max_iter,
                           None if taylor is None else tuple(part[chunk] for part in taylor))

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

r"""The shared start of a batch and the Taylor start: what makes a batch of perturbed problems cheap.

Internal to :mod:`dplr.solver`. A batch starts from the minimiser :math:`w_0` of the unperturbed
problem (:math:`b = 0`). Near it, problem :math:`j`'s gradient is

.. math::

    \nabla J_j(w_0 + v) = g_0 + \frac{b_j}{n} + H_0 v + \tfrac12 T[v, v]
        + \tfrac16 Q[v, v, v] + O(\lVert v\rVert^4),

where the Hessian :math:`H_0` and the third- and fourth-derivative tensors
:math:`T = \frac1n\sum_i \ell'''(z_i)\, x_i^{\otimes 3}` and :math:`Q = \frac1n\sum_i
\ell''''(z_i)\, x_i^{\otimes 4}` at :math:`w_0` are the same for every :math:`b_j`: one pass over the
data serves the whole batch (:func:`shared_start`). A few Newton steps on this :math:`d`-dimensional
model (no pass over the data) give each problem's first trial point, the Taylor expansion of its
minimiser in :math:`b_j` (:func:`taylor_steps`), and the model's Jacobian :math:`H_0 + T[v] +
\frac12 Q[v, v]` estimates the Hessian there. Where the model is trustworthy, that estimate
replaces the problem's Hessian for the next step, corrected by the gradient found at the trial point
(:func:`remainder_update`) and refined by a BFGS secant update after each further step
(:func:`bfgs_update`). The tensors are used when they cost no more than a pass over the batch
(:func:`taylor_order`; :math:`Q` only for losses with four derivatives and large enough batches).
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from dplr.solver.design import evaluate, workspace

__all__ = ["TAYLOR_TRUST", "TAYLOR_ITERATIONS", "SharedStart", "shared_start", "taylor_steps", "bfgs_update",
           "remainder_update", "taylor_order"]

#: The Taylor start is trusted for a problem when the model's higher-order terms at the Newton step are at
#: most this fraction of the gradient they perturb (see :func:`taylor_steps`).
TAYLOR_TRUST = 0.25
#: Iterations on the model.
TAYLOR_ITERATIONS = 2


@dataclass(frozen=True)
class SharedStart:
    """The point all problems of a batch start from, with what every problem shares there.

    ``w``: the start; ``g``: gradient of the unperturbed objective (b = 0) at ``w``, so problem j's
    gradient there is ``g + b_j / n``; ``H``: the Hessian at ``w`` (the same for every b); for the
    expansion of :func:`taylor_steps`, ``T``: the third-derivative tensor
    sum_i l'''(z_i) x_i (x) x_i (x) x_i / n at ``w`` as (d, d, d), and ``Q``: the fourth-derivative
    tensor sum_i l''''(z_i) (x_i (x) x_i) (x) (x_i (x) x_i) / n on packed pairs (a <= b), or ``None``.
    """

    w: np.ndarray
    g: np.ndarray
    H: np.ndarray
    T: np.ndarray | None = None
    Q: np.ndarray | None = None


def shared_start(design, w, reg, loss, order=1):
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
        return SharedStart(w, G, H)
    if order < 2:
        G, H = evaluate(design, w[None, :], np.zeros((1, d)), reg, loss, np.arange(1))
        return SharedStart(w, G[0], H[0])
    z = w @ design.XyT
    # l', l'', l''' (and l'''' for order 3) at every margin: one exponential for the logistic loss
    first, second, third, *fourth = loss.derivatives_up_to(z, order + 1)
    fourth = fourth[0] if fourth else None
    G = reg * w + design.XyT @ first / design.n
    H = (design.XyT * second) @ design.XyT.T / design.n + reg * np.eye(d)
    rows = d + (m if order >= 3 else 0)  # T's rows (a, packed (b, c)) over Q's rows (packed (a, b), packed (c, e))
    packed = np.zeros((rows, m))
    block = design.n if design.table is not None else design.block(rows)
    for start in range(0, design.n, block):
        stop = min(start + block, design.n)
        products = design.products(start, stop)
        weights = workspace("taylor", (rows, stop - start), design.dtype)
        np.multiply(design.XyT[:, start:stop], third[start:stop], out=weights[:d], casting="same_kind")
        if order >= 3:  # in the table's precision: no mixed-precision loop
            np.multiply(products, fourth[start:stop].astype(design.dtype), out=weights[d:])
        packed += weights @ products.T
    packed /= design.n
    T = design.symmetric(packed[:d])  # T[a] = sum_i l'''(z_i) x_ia x_i x_i^T / n
    Q = packed[d:] if order >= 3 else None
    return SharedStart(w, G, H, T, Q)


def taylor_steps(design, start, G, newton):
    r"""Steps :math:`v_j` from the shared start that solve the Taylor model of each problem's gradient.

    Near the start :math:`w_0` every problem's gradient is :math:`m_j(v) = g_j + H_0 v +
    \frac12 T[v,v] + \frac16 Q[v,v,v] + O(\lVert v\rVert^4)` with
    :math:`g_j = g_0 + b_j/n`, and :math:`H_0, T, Q` are shared by the whole batch: this is the Taylor
    expansion of the minimiser as a function of :math:`b`. The Newton step :math:`-H_0^{-1}g_j` solves
    the first-order model; a few Newton iterations on the :math:`d`-dimensional model (second order
    when ``start.Q`` is ``None``, else third) refine it, at :math:`O(d^4)` operations per problem and
    no pass over the data. Returns the steps, which problems use the refined one (``trust``) and the
    model's Jacobian :math:`H_0 + T[v] + \frac12 Q[v,v]` at it, a Hessian estimate at
    the trial point, and the Newton steps themselves (the fallback). A problem trusts the model when
    its higher-order terms at the Newton step are at most :data:`TAYLOR_TRUST` times
    :math:`\lVert g_j\rVert` and the model iteration converged; otherwise it keeps the Newton step.
    Either way the step is only a trial for the solver's line search.
    """
    k, d = G.shape
    T = start.T.reshape(d * d, d)  # row (a, b), column c
    rows, cols = design.upper
    pair_weight = np.where(rows == cols, 1.0, 2.0)

    def model(D):
        TD = (D @ T.T).reshape(k, d, d)  # T[v]
        J = start.H + TD
        curvature = 0.5 * TD  # M = G + H_0 v + (T[v] / 2 + Q[v, v] / 6) v
        if start.Q is not None:
            QDD = design.symmetric((D[:, rows] * D[:, cols] * pair_weight) @ start.Q)  # Q[v, v]
            J += 0.5 * QDD
            curvature += QDD / 6.0
        M = G + D @ start.H + np.matmul(curvature, D[:, :, None])[:, :, 0]
        return M, J

    g_norm = np.linalg.norm(G, axis=1)
    D = newton.copy()
    for iteration in range(TAYLOR_ITERATIONS):
        M, J = model(D)
        if iteration == 0:  # at the Newton step M holds the higher-order terms alone
            trust = np.linalg.norm(M, axis=1) <= TAYLOR_TRUST * g_norm
        D -= np.linalg.solve(J, M[:, :, None])[:, :, 0]
    M, J = model(D)
    trust &= np.all(np.isfinite(D), axis=1) & (np.linalg.norm(M, axis=1) <= 1e-3 * g_norm)
    return np.where(trust[:, None], D, newton), trust, J, newton


def bfgs_update(H, s, y):
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


def remainder_update(J, s, g, reg):
    r"""Correct the Taylor model's Jacobians J (k, d, d) at the trial steps s (k, d) with the gradients g there.

    The model solved :math:`m(v) = 0` at :math:`v = s`, so the gradient :math:`g` at the trial
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


def taylor_order(loss, d, k):
    """Order of the Taylor start: 3 when the shared tensors cost less than a pass over the batch, else 2 or 1.

    T costs n d^2 (d + 1) / 2 operations and Q about n (d(d+1)/2)^2, once per solve; one pass over a
    batch of k problems costs about 2 n d k.
    """
    m = d * (d + 1) // 2
    if loss.derivative_order < 3 or m > k:
        return 1
    return 3 if loss.derivative_order >= 4 and m * m <= 2 * d * k else 2

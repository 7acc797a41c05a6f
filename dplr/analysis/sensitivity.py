r"""Adversarial search for neighbouring data sets that move the regularised ERM minimiser the most.

Corollary 2 of Chaudhuri & Monteleoni (NIPS 2008, Section 3) bounds the L2 sensitivity of

.. math::

    w^*(D) = \arg\min_w \frac{\lambda}{2}\lVert w\rVert^2 + \frac1n\sum_{i=1}^n \ell(y_i w^\top x_i)

by :math:`2/(n\lambda)` when :math:`\lVert x_i\rVert \le 1` and :math:`|\ell'| \le 1`. The bound is a
supremum over *all* neighbouring pairs; random pairs fall far short of it. This module searches for
the worst pairs directly: it maximises :math:`\lVert w^*(D) - w^*(D')\rVert` over every record of
:math:`D = S \cup \{u\}` and :math:`D' = S \cup \{u'\}` (shared records :math:`S` and the replaced
record, each :math:`u_i = y_i x_i` in the unit ball) by projected gradient ascent, with the gradient
of the minimiser from the implicit function theorem:

.. math::

    \frac{\partial w^*}{\partial u_i} = -H^{-1}\,\frac{1}{n}\Big(\ell'(u_i^\top w^*) I
        + \ell''(u_i^\top w^*)\, u_i w^{*\top}\Big), \qquad
    H = \lambda I + \frac1n \sum_i \ell''(u_i^\top w^*)\, u_i u_i^\top ,

obtained by differentiating the optimality condition :math:`\lambda w^* + \frac1n\sum_i \ell'(u_i^\top w^*)u_i = 0`
in :math:`u_i` (the derivative of :math:`\ell'(u_i^\top w)\,u_i` in :math:`u_i` is :math:`\ell' I + \ell''\,u_i w^\top`).

For the pair it finds, :func:`gap_factors` splits the ratio to the bound exactly into a *gradient
factor* and a *curvature factor* (see its docstring), which is how the theory chapter explains the gap.

The minimisers come from the reference solver (:func:`dplr.solver.damped_newton`), batched over the
data sets of the search (one per restart and per side of the pair). The L1-regularised variant, which
the thesis of Veldhuizen (2020, Section 4.1.2) pairs with the same bound, is in :mod:`dplr.analysis.lasso`.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy import optimize
from scipy.special import expit

from dplr.algorithms import standard_erm
from dplr.analysis.neighbours import NeighbouringPair, anchored_pair
from dplr.ball import check_rows_in_ball_exactly, uniform_in_ball
from dplr.calibration import sensitivity_bound
from dplr.losses import get_loss
from dplr.objective import RegularizedERM
from dplr.solver import damped_newton
from dplr.threads import one_blas_thread
from dplr.validation import check_lambda, check_random_state

__all__ = [
    "SensitivitySearchResult",
    "GapFactors",
    "sharper_sensitivity_bound",
    "neighbour_distance",
    "random_neighbour_distances",
    "adversarial_sensitivity_search",
    "anchored_sensitivity_search",
    "gap_factors",
    "distance_and_gradient",
    "project_rows",
]


def sharper_sensitivity_bound(n, lam):
    r"""A sensitivity bound for L2-regularised *logistic* regression that improves on :math:`2/(n\lambda)` for large :math:`\lambda`:

    .. math::

        \lVert w^*(D) - w^*(D')\rVert \le \frac{2\,\sigma\big(\sqrt{2\log 2/\lambda}\big)}{n\lambda},
        \qquad \sigma(z) = \frac{1}{1 + e^{-z}} .

    Proof: :math:`\hat f_\lambda(w^*) \le \hat f_\lambda(0) = \log 2` gives
    :math:`\lVert w^*\rVert \le R = \sqrt{2\log 2/\lambda}`, so every margin at :math:`w^*(D')` is at least
    :math:`-R` and every gradient :math:`|\ell'(z)| = \sigma(-z) \le \sigma(R)`; Lemma 1 at the point
    :math:`w^*(D')` (see :func:`gap_factors`) then gives the bound. It tends to :math:`2/(n\lambda)` as
    :math:`\lambda \to 0`.
    """
    lam = check_lambda(lam)
    return float(2.0 * expit(np.sqrt(2 * np.log(2) / lam)) / (n * lam))


@one_blas_thread
def neighbour_distance(pair: NeighbouringPair, lam, loss="logistic", huber_h=0.5) -> float:
    r""":math:`\lVert w^*(D) - w^*(D')\rVert` for L2-regularised ERM, solved with :mod:`dplr.solver`."""
    return _neighbour_distance(pair, lam, get_loss(loss, huber_h))


def _neighbour_distance(pair, lam, loss):
    w = standard_erm(pair.X, pair.y, lam, loss, tol=1e-12)
    w_prime = standard_erm(pair.X_prime, pair.y_prime, lam, loss, tol=1e-12)
    return float(np.linalg.norm(w - w_prime))


@one_blas_thread
def random_neighbour_distances(X, y, lam, n_pairs, loss="logistic", huber_h=0.5, random_state=None):
    r"""Distances :math:`\lVert w^*(D) - w^*(D')\rVert` for ``n_pairs`` random neighbours of ``(X, y)``.

    Each neighbour replaces one uniformly chosen record by a point drawn uniformly on the unit sphere
    with a random label: the "random ones" the adversarial search is compared with.
    """
    rng = check_random_state(random_state)
    loss = get_loss(loss, huber_h)
    X = np.asarray(X, dtype=float)
    y = np.asarray(y, dtype=float)
    n, d = X.shape
    out = np.empty(n_pairs)
    for j in range(n_pairs):
        i = rng.integers(n)
        x_new = rng.standard_normal(d)
        x_new /= np.linalg.norm(x_new)
        X2, y2 = X.copy(), y.copy()
        X2[i], y2[i] = x_new, rng.choice([-1.0, 1.0])
        out[j] = _neighbour_distance(NeighbouringPair(X, y, X2, y2), lam, loss)
    return out


# ----------------------------------------------------------------------------------------------
# The minimisers of many data sets at once (one per restart and per side of the pair)
# ----------------------------------------------------------------------------------------------
def _minimisers(U, lam, loss, W0, omega=None):
    r""":math:`\arg\min_w \frac\lambda2\lVert w\rVert^2 + \sum_i \omega_i\ell(u_i^\top w)` for each data set ``U[k]``.

    ``omega`` (weights summing to 1) defaults to 1/n each: the paper's average loss. Weights let a
    block of identical records be stored once. Solved to gradient norm 1e-12 by the reference solver.
    """
    omega = np.full(U.shape[1], 1.0 / U.shape[1]) if omega is None else np.asarray(omega, dtype=float)
    return damped_newton(RegularizedERM(U, lam, loss, weights=omega), W0).coef


def project_rows(P):
    """Each row (last axis) of ``P`` projected radially onto the unit ball."""
    norms = np.linalg.norm(P, axis=-1, keepdims=True)
    return P / np.maximum(norms, 1.0)


def distance_and_gradient(shared, u, u_prime, W1, W2, lam, loss):
    r"""Distances :math:`\lVert w^*(D) - w^*(D')\rVert` of k pairs and the gradients of half their squares.

    ``shared`` (k, n - 1, d), ``u`` and ``u_prime`` (k, d) are the records :math:`y_i x_i` of the pairs;
    ``W1``, ``W2`` warm starts of the two minimisers. Returns the distances, the gradients with respect
    to the shared records, to ``u`` and to ``u_prime`` (implicit function theorem, module docstring) and
    the minimisers.
    """
    k, m, d = shared.shape
    n = m + 1
    U1 = np.concatenate([shared, u[:, None, :]], axis=1)
    U2 = np.concatenate([shared, u_prime[:, None, :]], axis=1)
    W1 = _minimisers(U1, lam, loss, W1)
    W2 = _minimisers(U2, lam, loss, W2)
    R = W1 - W2
    omega = np.full(n, 1.0 / n)
    V1 = np.linalg.solve(RegularizedERM(U1, lam, loss, weights=omega).hessian(W1), R[:, :, None])[:, :, 0]
    V2 = np.linalg.solve(RegularizedERM(U2, lam, loss, weights=omega).hessian(W2), R[:, :, None])[:, :, 0]

    def part(U, W, V):  # rows: l'(z_i) v + l''(z_i) (v.u_i) w, divided by n
        Z = np.einsum("knd,kd->kn", U, W)
        return (loss.derivative(Z)[:, :, None] * V[:, None, :]
                + (loss.second_derivative(Z) * np.einsum("knd,kd->kn", U, V))[:, :, None] * W[:, None, :]) / n

    G1, G2 = -part(U1, W1, V1), part(U2, W2, V2)  # gradients of |r|^2 / 2
    grad_shared = G1[:, :m] + G2[:, :m]
    return np.linalg.norm(R, axis=1), grad_shared, G1[:, m], G2[:, m], W1, W2


@dataclass(frozen=True)
class GapFactors:
    r"""Exact split of :math:`\lVert w_1 - w_2\rVert / (2/(n\lambda))` for one pair (see :func:`gap_factors`)."""

    ratio: float
    gradient_factor: float
    curvature_factor: float


@one_blas_thread
def gap_factors(pair: NeighbouringPair, lam, loss="logistic", huber_h=0.5, n_nodes=32) -> GapFactors:
    r"""Why a pair falls short of :math:`2/(n\lambda)`: ``ratio = gradient_factor * curvature_factor``.

    With :math:`F_1` the objective on :math:`D`, :math:`w_1, w_2` the two minimisers and
    :math:`\bar H = \int_0^1 \nabla^2 F_1(w_2 + t(w_1 - w_2))\,dt` (Gauss–Legendre, ``n_nodes``),
    the optimality conditions give exactly :math:`\bar H (w_1 - w_2) = \Delta g / n` with
    :math:`\Delta g = \ell'(u'^\top w_2)u' - \ell'(u^\top w_2)u` (the two replaced records' gradients at
    :math:`w_2`). Hence

    * ``gradient_factor`` :math:`= \lVert\Delta g\rVert / 2 \le 1` — Corollary 2 assumes both records
      have the largest possible gradient, in opposite directions;
    * ``curvature_factor`` :math:`= \lambda\lVert\bar H^{-1}\Delta g\rVert / \lVert\Delta g\rVert \le 1` —
      Lemma 1 uses only :math:`G_2 \ge \lambda`, ignoring the curvature the loss adds.

    Requires the pair to differ in exactly its last row (as built by
    :meth:`NeighbouringPair.from_records <dplr.analysis.neighbours.NeighbouringPair.from_records>`).
    """
    loss = get_loss(loss, huber_h)
    w1 = standard_erm(pair.X, pair.y, lam, loss, tol=1e-12)
    w2 = standard_erm(pair.X_prime, pair.y_prime, lam, loss, tol=1e-12)
    U1 = pair.X * pair.y[:, None]
    u, u_prime = U1[-1], pair.X_prime[-1] * pair.y_prime[-1]
    n, d = U1.shape
    dg = loss.derivative(u_prime @ w2) * u_prime - loss.derivative(u @ w2) * u
    nodes, weights = np.polynomial.legendre.leggauss(n_nodes)
    ts = (nodes + 1) / 2
    H = np.zeros((d, d))
    for t, wt in zip(ts, weights / 2):
        w = w2 + t * (w1 - w2)
        s = loss.second_derivative(U1 @ w)
        H += wt * ((U1 * s[:, None]).T @ U1 / n + lam * np.eye(d))
    dg_norm = np.linalg.norm(dg)
    ratio = np.linalg.norm(w1 - w2) / sensitivity_bound(n, lam)
    if dg_norm == 0:
        return GapFactors(float(ratio), 0.0, 1.0)
    curvature = lam * np.linalg.norm(np.linalg.solve(H, dg)) / dg_norm
    return GapFactors(float(ratio), float(dg_norm / 2), float(curvature))


@dataclass(frozen=True)
class SensitivitySearchResult:
    r"""The worst neighbouring pair found and how it compares with :math:`2/(n\lambda)`.

    ``distance`` is recomputed for ``pair`` with the library solver (:func:`neighbour_distance`),
    independently of the search's own Newton iterations; ``ratio = distance / bound``.
    ``history`` holds the best distance after each ascent step (over all restarts).
    """

    distance: float
    bound: float
    ratio: float
    pair: NeighbouringPair
    factors: GapFactors
    history: np.ndarray


@one_blas_thread
def adversarial_sensitivity_search(n, d, lam, loss="logistic", huber_h=0.5, X_shared=None, y_shared=None,
                                   n_restarts=8, n_steps=250, step_size=(0.3, 0.003),
                                   random_state=None) -> SensitivitySearchResult:
    r"""Maximise :math:`\lVert w^*(D) - w^*(D')\rVert` over neighbouring data sets of size ``n`` in ``d`` dimensions.

    Projected gradient ascent on all records (or, if ``X_shared``/``y_shared`` are given, on the
    replaced record only, keeping those ``n - 1`` shared records fixed), with exact implicit
    gradients, ``n_restarts`` random starts (records uniform in the unit ball; ``random_state``) plus
    one structured start (shared records at the origin, :math:`u = e_1`, :math:`u' = -e_1`). Steps
    move every record by at most ``step`` (geometric schedule between the two ``step_size`` values),
    then project onto the unit ball. Returns the best pair met along the way.
    """
    lam = check_lambda(lam)
    loss = get_loss(loss, huber_h)
    rng = check_random_state(random_state)
    if isinstance(n, bool) or int(n) != n or n < 1:
        raise ValueError(f"n must be a positive integer, got {n!r}.")
    n, m = int(n), int(n) - 1
    k = n_restarts + 1
    fixed = X_shared is not None
    if fixed:
        X_shared = np.asarray(X_shared, dtype=float).reshape(m, d)
        X_shared = check_rows_in_ball_exactly(X_shared)
        U_fixed = X_shared * np.asarray(y_shared, dtype=float).reshape(m)[:, None]
        shared = np.broadcast_to(U_fixed, (k, m, d)).copy()
    else:
        shared = uniform_in_ball(rng, (k, m, d))
        shared[0] = 0.0
    u, u_prime = uniform_in_ball(rng, (k, d)), uniform_in_ball(rng, (k, d))
    u[0], u_prime[0] = np.eye(d)[0], -np.eye(d)[0]

    W1, W2 = np.zeros((k, d)), np.zeros((k, d))
    best_val, best = -np.inf, None
    history = np.empty(n_steps + 1)
    steps = np.geomspace(step_size[0], step_size[1], n_steps)
    for it in range(n_steps + 1):
        dist, g_shared, g_u, g_up, W1, W2 = distance_and_gradient(shared, u, u_prime, W1, W2, lam, loss)
        j = int(np.argmax(dist))
        if dist[j] > best_val:
            best_val, best = dist[j], (shared[j].copy(), u[j].copy(), u_prime[j].copy())
        history[it] = best_val
        if it == n_steps:
            break
        scale = np.maximum(np.linalg.norm(g_u, axis=1), np.linalg.norm(g_up, axis=1))
        if not fixed and m:
            scale = np.maximum(scale, np.linalg.norm(g_shared, axis=2).max(axis=1))
        scale = steps[it] / np.maximum(scale, 1e-300)
        u = project_rows(u + scale[:, None] * g_u)
        u_prime = project_rows(u_prime + scale[:, None] * g_up)
        if not fixed and m:
            shared = project_rows(shared + scale[:, None, None] * g_shared)

    s, a, a_prime = best
    pair = NeighbouringPair.from_records(s, np.ones(m), a, 1.0, a_prime, 1.0)
    distance = _neighbour_distance(pair, lam, loss)
    bound = sensitivity_bound(n, lam, loss.lipschitz)
    return SensitivitySearchResult(distance, bound, distance / bound, pair, gap_factors(pair, lam, loss), history)


def _anchored_distance_and_gradient(x, n_weights, lam, loss, W_start, d):
    r"""Minus the distance :math:`\lVert w^*(D) - w^*(D')\rVert` of an anchored pair, and its gradient in ``x``.

    ``x`` = :math:`(\log\rho, r, p, r', p')`: anchor :math:`(\rho, 0, \dots)`, replaced records
    :math:`u = r\,p/\lVert p\rVert` and :math:`u' = r'\,p'/\lVert p'\rVert`. The minimisers' derivatives come
    from the implicit function theorem (as in :func:`distance_and_gradient`, with the weights of the two stored
    rows); the inner solves start from ``W_start``, so the value is a function of ``x`` alone.
    """
    rho = np.exp(x[0])
    radii = (x[1], x[2 + d])
    directions = (x[2:2 + d], x[3 + d:3 + 2 * d])
    units = [p / np.linalg.norm(p) for p in directions]
    anchor = np.zeros(d)
    anchor[0] = rho
    U = np.stack([np.vstack([anchor, radii[0] * units[0]]), np.vstack([anchor, radii[1] * units[1]])])
    W = _minimisers(U, lam, loss, W_start, n_weights)
    R = W[0] - W[1]
    distance = float(np.linalg.norm(R))
    H = RegularizedERM(U, lam, loss, weights=n_weights).hessian(W)
    V = np.linalg.solve(H, np.stack([R, R])[:, :, None])[:, :, 0]
    Z = np.einsum("knd,kd->kn", U, W)
    # gradient of |R|^2 / 2 with respect to every stored row: -(+) w_i (l'(z) v + l''(z) (v.u_i) w) for D (D')
    rows = n_weights[None, :, None] * (loss.derivative(Z)[:, :, None] * V[:, None, :]
                                       + (loss.second_derivative(Z) * np.einsum("knd,kd->kn", U, V))[:, :, None]
                                       * W[:, None, :])
    rows[0] *= -1.0
    grad = np.empty_like(x)
    grad[0] = rho * (rows[0, 0, 0] + rows[1, 0, 0])
    for k, (radius, unit, direction) in enumerate(zip(radii, units, directions)):
        g = rows[k, 1]
        at = 1 + k * (1 + d)
        grad[at] = unit @ g
        grad[at + 1:at + 1 + d] = radius / np.linalg.norm(direction) * (g - unit * (unit @ g))
    return -distance, -grad / max(distance, 1e-300)


@one_blas_thread
def anchored_sensitivity_search(n, lam, loss="logistic", huber_h=0.5, d=2,
                                start_angles=(1.0, 1.2, 1.35, 1.45, 1.52)) -> SensitivitySearchResult:
    r"""Maximise :math:`\lVert w^*(D) - w^*(D')\rVert` over :func:`~dplr.analysis.neighbours.anchored_pair` (any ``n``, cheaply).

    The structure comes from :func:`adversarial_sensitivity_search`: its worst pairs put every shared
    record at one short vector. Such an anchor of radius :math:`\rho` pulls :math:`w^*` along
    :math:`e_1` with force about :math:`\rho/2` but adds curvature only about :math:`\rho^2/4`; a weak
    regulariser then lets :math:`w^*` travel far enough that both versions of the replaced record are
    badly misclassified, which is what the bound :math:`2/(n\lambda)` assumes. Because the shared records
    are identical the objective is stored with two weighted rows, so the cost does not grow with ``n``.

    The search runs L-BFGS-B over :math:`(\log\rho \le 0,\ r, p,\ r', p')` with :math:`u = r\,p/\lVert
    p\rVert`, :math:`r \in [0, 1]` (and the same for :math:`u'`), with exact gradients
    (``_anchored_distance_and_gradient``), from symmetric starts :math:`u, u' = (-\cos a, \pm\sin a)`, one per
    angle in ``start_angles``, and keeps the best local maximum (near-ties, within a relative 1e-9, keep the
    earlier start). Each start runs to a stationary point rather than to an evaluation budget, so where it stops
    does not depend on rounding: the result is the same on every machine. The distance of the returned pair is
    recomputed with the library solver on all ``n`` rows; it is attained by a pair, so it is a lower bound on the
    sensitivity.
    """
    lam = check_lambda(lam)
    loss = get_loss(loss, huber_h)
    if isinstance(n, bool) or int(n) != n or n < 2:
        raise ValueError(f"n must be an integer >= 2 (an anchor needs shared records), got {n!r}.")
    n = int(n)
    n_weights = np.array([(n - 1) / n, 1.0 / n])
    bounds = [(None, 0.0)] + ([(0.0, 1.0)] + [(None, None)] * d) * 2

    best = None
    rho0 = min(1.0, 1.0 / np.sqrt(n * lam))
    for a in start_angles:
        p0, p0_prime = np.zeros(d), np.zeros(d)
        p0[:2], p0_prime[:2] = [-np.cos(a), np.sin(a)], [-np.cos(a), -np.sin(a)]
        x0 = np.r_[np.log(rho0), 1.0, p0, 1.0, p0_prime]
        anchor = np.zeros(d)
        anchor[0] = rho0
        W_start = _minimisers(np.stack([np.vstack([anchor, p0]), np.vstack([anchor, p0_prime])]), lam, loss,
                              np.zeros((2, d)), n_weights)
        scale = 1.0 / sensitivity_bound(n, lam, loss.lipschitz)  # optimise the ratio to 2L/(n lam): O(1) values

        def neg_ratio(x, W_start=W_start, scale=scale):
            value, grad = _anchored_distance_and_gradient(x, n_weights, lam, loss, W_start, d)
            return scale * value, scale * grad

        res = optimize.minimize(neg_ratio, x0, jac=True, method="L-BFGS-B", bounds=bounds,
                                options={"maxiter": 2000, "ftol": 1e-15, "gtol": 1e-12})
        if best is None or -res.fun > best[0] * (1.0 + 1e-9):
            best = (float(-res.fun) / scale, res.x)
    x = best[1]
    u = x[1] * x[2:2 + d] / np.linalg.norm(x[2:2 + d])
    u_prime = x[2 + d] * x[3 + d:] / np.linalg.norm(x[3 + d:])
    pair = anchored_pair(n, float(np.exp(x[0])), u, u_prime)
    distance = neighbour_distance(pair, lam, loss)
    bound = sensitivity_bound(n, lam, loss.lipschitz)
    return SensitivitySearchResult(distance, bound, distance / bound, pair, gap_factors(pair, lam, loss),
                                   np.array([best[0]]))

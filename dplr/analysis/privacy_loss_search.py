r"""The largest privacy loss of Algorithm 2, found by search: over the output, and over the replaced record.

The closed forms are in :mod:`dplr.analysis.privacy_loss`. Here they are maximised numerically: a
polar grid of outputs out to large :math:`\lVert w\rVert` (:func:`output_grid`), then Nelder–Mead
refinement of the best points (:func:`max_objective_perturbation_privacy_loss`); and, for given shared
records, jointly over the output and both versions of the replaced record, using the decomposition
:math:`L(w) = \varphi(u'; w) - \varphi(u; w)` of the privacy-loss module
(:func:`worst_case_objective_perturbation_privacy_loss`). Every value returned is attained at the
explicit output (and pair) returned with it: a lower bound on the supremum, exact up to the search.
Only a proof gives an upper bound (:func:`dplr.analysis.privacy_loss.objective_perturbation_privacy_bound`).
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy import optimize

from dplr.analysis.neighbours import NeighbouringPair
from dplr.analysis.privacy_loss import norm_difference, objective_perturbation_privacy_loss
from dplr.analysis.sensitivity import project_rows
from dplr.ball import check_rows_in_ball_exactly
from dplr.calibration import objective_perturbation_calibration
from dplr.losses import get_loss
from dplr.threads import one_blas_thread
from dplr.validation import check_random_state

__all__ = [
    "DEFAULT_RADII",
    "output_grid",
    "PrivacyLossSupremum",
    "max_objective_perturbation_privacy_loss",
    "WorstCasePrivacyLoss",
    "worst_case_objective_perturbation_privacy_loss",
]


# ----------------------------------------------------------------------------------------------
# Grids of outputs and refinement
# ----------------------------------------------------------------------------------------------
#: The default radii of :func:`output_grid`, 1e-3 to 1e5, 161 values on a log scale.
DEFAULT_RADII = np.geomspace(1e-3, 1e5, 161)


def output_grid(d, radii=None, n_angles=96, n_directions=2000, random_state=None):
    r"""Candidate outputs :math:`w` for maximising a privacy loss over :math:`\mathbb{R}^d`.

    ``d = 1``: :math:`\pm r` for every radius; ``d = 2``: a polar grid with ``n_angles`` angles;
    ``d >= 3``: ``n_directions`` uniformly random directions (``random_state``) times every radius.
    The origin is always included. The default radii run from 1e-3 to 1e5 on a log scale, far beyond
    where the privacy loss of Algorithm 2 settles to its limit along each ray.
    """
    radii = DEFAULT_RADII if radii is None else np.asarray(radii, dtype=float)
    if d == 1:
        dirs = np.array([[1.0], [-1.0]])
    elif d == 2:
        angles = np.linspace(0.0, 2 * np.pi, n_angles, endpoint=False)
        dirs = np.c_[np.cos(angles), np.sin(angles)]
    else:
        rng = check_random_state(random_state)
        dirs = rng.standard_normal((n_directions, d))
        dirs /= np.linalg.norm(dirs, axis=1, keepdims=True)
    grid = (radii[:, None, None] * dirs[None, :, :]).reshape(-1, d)
    return np.vstack([np.zeros((1, d)), grid])


def _w_from_params(theta, d, sign):
    """Log-polar parameterisation of w: d=1 -> sign*exp(rho); d=2 -> exp(rho)(cos a, sin a); d>=3 -> exp(rho) v/|v|."""
    r = np.exp(np.clip(theta[0], -20.0, 20.0))  # |w| in [2e-9, 5e8]
    if d == 1:
        return np.array([sign * r])
    if d == 2:
        return r * np.array([np.cos(theta[1]), np.sin(theta[1])])
    v = np.asarray(theta[1:1 + d], dtype=float)
    norm = np.linalg.norm(v)
    return r * (v / norm if norm > 0 else np.eye(d)[0])


def _params_from_w(w):
    d = w.shape[0]
    r = max(np.linalg.norm(w), 1e-6)
    if d == 1:
        return np.array([np.log(r)]), (1.0 if w[0] >= 0 else -1.0)
    if d == 2:
        return np.array([np.log(r), np.arctan2(w[1], w[0])]), 1.0
    return np.r_[np.log(r), w / r], 1.0


def _nelder_mead(fun, x0, steps, max_evals):
    x0 = np.asarray(x0, dtype=float)
    simplex = np.vstack([x0] + [x0 + s * e for s, e in zip(steps, np.eye(x0.size))])
    res = optimize.minimize(fun, x0, method="Nelder-Mead",
                            options={"initial_simplex": simplex, "maxfev": max_evals, "xatol": 1e-10,
                                     "fatol": 1e-13})
    return res.x, res.fun


def _distinct_top(values, k, points, min_sep=1e-9):
    # stable: equal values keep grid order on every machine (numpy's default sort picks its algorithm by CPU)
    order = np.argsort(-values, kind="stable")
    chosen = []
    for idx in order:
        if all(np.linalg.norm(points[idx] - points[j]) > min_sep for j in chosen):
            chosen.append(idx)
        if len(chosen) == k:
            break
    return chosen


@dataclass(frozen=True)
class PrivacyLossSupremum:
    r"""Largest :math:`|\log p_D(w)/p_{D'}(w)|` found, with the output :math:`w` that attains it.

    ``total`` is signed (positive when :math:`p_D(w) > p_{D'}(w)`); ``value = |total|``. ``noise`` and
    ``jacobian`` are the two parts of ``total`` at ``w`` (see :class:`~dplr.analysis.privacy_loss.PrivacyLossTerms`).
    """

    value: float
    total: float
    noise: float
    jacobian: float
    w: np.ndarray


@one_blas_thread
def max_objective_perturbation_privacy_loss(pair: NeighbouringPair, epsilon, lam, loss="logistic", form="corrected",
                                            huber_h=0.5, radii=None, n_angles=96, n_refine=3, max_evals=600,
                                            random_state=None) -> PrivacyLossSupremum:
    r""":math:`\sup_w |\log p_D(w)/p_{D'}(w)|` for Algorithm 2 on one neighbouring pair.

    Evaluates the exact loss (:func:`~dplr.analysis.privacy_loss.objective_perturbation_privacy_loss`) on :func:`output_grid`,
    then refines the ``n_refine`` best grid points with Nelder–Mead in log-polar coordinates. The
    returned value is attained at the returned ``w``. ``random_state`` is used only for ``d >= 3``
    (random directions).
    """
    loss = get_loss(loss, huber_h)
    grid = output_grid(pair.d, radii, n_angles, random_state=random_state)
    terms = objective_perturbation_privacy_loss(grid, pair, epsilon, lam, loss, form)
    best = PrivacyLossSupremum(-np.inf, 0.0, 0.0, 0.0, grid[0])
    for idx in _distinct_top(np.abs(terms.total), max(n_refine, 1), grid):
        w0 = grid[idx]
        if np.abs(terms.total[idx]) > best.value:
            best = PrivacyLossSupremum(float(abs(terms.total[idx])), float(terms.total[idx]),
                                       float(terms.noise[idx]), float(terms.jacobian[idx]), w0)
        if n_refine <= 0 or not np.any(w0):
            continue
        theta0, sign = _params_from_w(w0)

        def neg_abs_loss(theta, sign=sign):
            return -abs(objective_perturbation_privacy_loss(_w_from_params(theta, pair.d, sign), pair, epsilon,
                                                            lam, loss, form).total)

        steps = np.r_[0.2, np.full(theta0.size - 1, 0.05)]
        theta, _ = _nelder_mead(neg_abs_loss, theta0, steps, max_evals)
        w = _w_from_params(theta, pair.d, sign)
        t = objective_perturbation_privacy_loss(w, pair, epsilon, lam, loss, form)
        if abs(t.total) > best.value:
            best = PrivacyLossSupremum(float(abs(t.total)), t.total, t.noise, t.jacobian, w)
    return best


# ----------------------------------------------------------------------------------------------
# Worst case over the replaced record
# ----------------------------------------------------------------------------------------------
def _shared_parts(W, U_shared, n, reg, loss):
    """b_S(w) (k, d) and A_S(w)^{-1} (k, d, d) for the shared records (rows of U_shared = y_i x_i)."""
    k, d = W.shape
    B = -n * reg * W
    A = np.zeros((k, d, d))
    A[:, np.arange(d), np.arange(d)] = n * reg
    if U_shared.shape[0]:
        Z = W @ U_shared.T
        B = B - loss.derivative(Z) @ U_shared
        A = A + np.einsum("kn,ni,nj->kij", loss.second_derivative(Z), U_shared, U_shared)
    return B, np.linalg.inv(A)


def _phi(W, V, B_shared, A_inv, beta, loss):
    r"""phi(v; w) for every pair (w row of W, v row of V): shape (k, m). See the module docstring."""
    Z = W @ V.T  # (k, m)
    G = -loss.derivative(Z)[:, :, None] * V[None, :, :]  # (k, m, d): -l'(v.w) v
    Bs = B_shared[:, None, :]
    noise = beta * norm_difference(Bs + G, np.broadcast_to(Bs, G.shape))
    quad = np.einsum("mi,kij,mj->km", V, A_inv, V)
    return noise - np.log1p(loss.second_derivative(Z) * quad)


def _record_grid(d, n_radii=9, n_angles=64):
    if d == 1:
        return np.linspace(-1.0, 1.0, 8 * n_angles + 1)[:, None]
    if d == 2:
        radii = np.linspace(0.0, 1.0, n_radii)[1:]
        angles = np.linspace(0.0, 2 * np.pi, n_angles, endpoint=False)
        ring = np.c_[np.cos(angles), np.sin(angles)]
        return np.vstack([np.zeros((1, 2)), (radii[:, None, None] * ring[None]).reshape(-1, 2)])
    raise NotImplementedError("the worst case over the replaced record is implemented for d = 1 and d = 2.")


def _mirror_symmetric(U):
    """True when the rows of ``U`` are the same multiset as the rows of ``-U`` (e.g. all at the origin)."""
    if U.shape[0] == 0:
        return True
    order = np.lexsort(U.T[::-1])
    mirror = -U
    return bool(np.array_equal(U[order], mirror[np.lexsort(mirror.T[::-1])]))


def _canonical_mirror(w, u, u_prime):
    """Of ``(w, u, u')`` and its mirror image ``(-w, -u, -u')``, the one whose ``w`` has a positive first non-zero entry.

    When the shared records are mirror-symmetric the two have the same privacy loss, so which one a search reports
    is decided by rounding; this rule makes it the same on every machine.
    """
    nonzero = np.flatnonzero(w)
    if nonzero.size and w[nonzero[0]] < 0:
        return -w, -u, -u_prime
    return w, u, u_prime


@dataclass(frozen=True)
class WorstCasePrivacyLoss:
    r"""Worst neighbouring pair found for Algorithm 2, given the shared records.

    ``value`` :math:`= \log p_D(w)/p_{D'}(w) \ge 0` at ``w`` for ``pair`` (whose replaced record is
    ``record`` in :math:`D` and ``record_prime`` in :math:`D'`, both as :math:`u = y x`, stored with
    label +1); ``noise`` and ``jacobian`` are its two parts. ``value`` is recomputed from ``pair``
    with :func:`~dplr.analysis.privacy_loss.objective_perturbation_privacy_loss`, independently of the search.
    """

    value: float
    noise: float
    jacobian: float
    w: np.ndarray
    record: np.ndarray
    record_prime: np.ndarray
    pair: NeighbouringPair


@one_blas_thread
def worst_case_objective_perturbation_privacy_loss(X_shared, y_shared, epsilon, lam, loss="logistic",
                                                   form="corrected", huber_h=0.5, radii=None, n_angles=48,
                                                   record_radii=7, record_angles=36, n_refine=3, max_evals=1500,
                                                   chunk=1024) -> WorstCasePrivacyLoss:
    r""":math:`\sup_{w,\,u,\,u'} \log p_D(w)/p_{D'}(w)` over the replaced record, for fixed shared records.

    :math:`D` = shared records plus :math:`u`, :math:`D'` = shared records plus :math:`u'` (records in the
    unit ball, :math:`n` = number of shared records + 1). Uses the decomposition
    :math:`L = \varphi(u'; w) - \varphi(u; w)` (module docstring): for every :math:`w` on
    :func:`output_grid` and every record on a polar grid of the unit disc (``d = 2``) or of
    :math:`[-1, 1]` (``d = 1``) it takes :math:`\max_v\varphi - \min_v\varphi`, then refines the best
    ``n_refine`` candidates jointly in :math:`(w, u, u')` with Nelder–Mead. Deterministic. When the shared
    records are mirror-symmetric (the rows of :math:`-U` are those of :math:`U`, e.g. all at the origin), every
    optimum has a mirror image :math:`(-w, -u, -u')` with the same loss; the search reports the one whose :math:`w`
    has a positive first non-zero entry, so that rounding cannot pick a different one on another machine.

    The value is a lower bound on the supremum *for these shared records*; the worst case over all pairs of
    the same size can be much larger (:func:`dplr.analysis.objective_perturbation_search.search_privacy_loss`).
    """
    loss = get_loss(loss, huber_h)
    X_shared = np.asarray(X_shared, dtype=float)
    y_shared = np.asarray(y_shared, dtype=float).reshape(-1)
    d = X_shared.shape[1]
    if X_shared.shape[0]:
        X_shared = check_rows_in_ball_exactly(X_shared)
    U_shared = X_shared * y_shared[:, None]
    n = X_shared.shape[0] + 1
    cal = objective_perturbation_calibration(epsilon, n, lam, loss.curvature, loss.lipschitz, form)
    reg, beta = lam + cal.ridge, cal.noise_rate
    grid = output_grid(d, np.geomspace(1e-3, 1e5, 81) if radii is None else radii, n_angles)
    records = _record_grid(d, record_radii, record_angles)

    spread = np.empty(grid.shape[0])
    arg_lo = np.empty(grid.shape[0], dtype=int)
    arg_hi = np.empty(grid.shape[0], dtype=int)
    for start in range(0, grid.shape[0], chunk):
        W = grid[start:start + chunk]
        B_s, A_inv = _shared_parts(W, U_shared, n, reg, loss)
        phi = _phi(W, records, B_s, A_inv, beta, loss)
        lo, hi = phi.argmin(axis=1), phi.argmax(axis=1)
        rows = np.arange(W.shape[0])
        spread[start:start + chunk] = phi[rows, hi] - phi[rows, lo]
        arg_lo[start:start + chunk], arg_hi[start:start + chunk] = lo, hi

    def loss_at(w, u, u_prime):
        B_s, A_inv = _shared_parts(w[None, :], U_shared, n, reg, loss)
        phi = _phi(w[None, :], np.vstack([u, u_prime]), B_s, A_inv, beta, loss)[0]
        return phi[1] - phi[0]

    symmetric = _mirror_symmetric(U_shared)
    candidates = []
    for idx in _distinct_top(spread, max(n_refine, 1), grid):
        w0, u0, up0 = grid[idx], records[arg_lo[idx]], records[arg_hi[idx]]
        if symmetric:  # search from the canonical one of a mirror-image pair (see _canonical_mirror)
            w0, u0, up0 = _canonical_mirror(w0, u0, up0)
        candidates.append((spread[idx], w0, u0, up0))
        if n_refine <= 0 or not np.any(w0):
            continue
        theta_w, sign = _params_from_w(w0)
        nw = theta_w.size

        def neg(theta, sign=sign, nw=nw):
            w = _w_from_params(theta[:nw], d, sign)
            return -loss_at(w, project_rows(theta[nw:nw + d]), project_rows(theta[nw + d:]))

        steps = np.r_[0.2, np.full(nw - 1, 0.05), np.full(2 * d, 0.05)]
        theta, val = _nelder_mead(neg, np.r_[theta_w, u0, up0], steps, max_evals)
        candidates.append((-val, _w_from_params(theta[:nw], d, sign), project_rows(theta[nw:nw + d]),
                           project_rows(theta[nw + d:])))
    _, w, u, u_prime = max(candidates, key=lambda c: c[0])
    if symmetric:
        w, u, u_prime = _canonical_mirror(w, u, u_prime)
    # Records are stored as (x, y) = (u, +1); rounding can put a projected record a hair outside the ball.
    u, u_prime = u / max(1.0, np.linalg.norm(u)), u_prime / max(1.0, np.linalg.norm(u_prime))
    pair = NeighbouringPair.from_records(X_shared, y_shared, u, 1.0, u_prime, 1.0)
    terms = objective_perturbation_privacy_loss(w, pair, epsilon, lam, loss, form)
    return WorstCasePrivacyLoss(terms.total, terms.noise, terms.jacobian, w, u, u_prime, pair)

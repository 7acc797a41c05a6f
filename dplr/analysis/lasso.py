r"""L1-regularised ERM and its (missing) sensitivity bound: the thesis' method section, checked.

Veldhuizen (2020, Section 4.1.2, eq. 7) pairs a Lasso penalty with the :math:`2/(n\lambda)` bound of
Corollary 2 (NIPS 2008). That bound needs a :math:`\lambda`-strongly convex regulariser; the L1
penalty is not strongly convex, and the minimiser can jump between corners of the objective's level
sets (:func:`dplr.analysis.neighbours.l1_tie_breaking_pair`), much further than :math:`2/(n\lambda)`.
:func:`l1_logistic_regression` solves the L1 problem (optionally with an unpenalised intercept),
:func:`l1_kkt_violation` certifies a solution, :func:`l1_sensitivity_search` searches for the worst
replaced record.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy import optimize

from dplr.calibration import sensitivity_bound
from dplr.analysis.neighbours import NeighbouringPair
from dplr.analysis.sensitivity import project_rows
from dplr.ball import uniform_in_ball
from dplr.losses import get_loss
from dplr.threads import one_blas_thread
from dplr.validation import check_lambda, check_random_state

__all__ = [
    "l1_logistic_regression",
    "l1_regularized_erm",
    "l1_kkt_violation",
    "l1_neighbour_distance",
    "L1SearchResult",
    "l1_sensitivity_search",
]


@one_blas_thread
def l1_logistic_regression(X, y, lam, loss="logistic", huber_h=0.5, tol=1e-13, intercept=False, gtol=None,
                           max_evaluations=None):
    r""":math:`\arg\min_w \lambda\lVert w\rVert_1 + \frac1n\sum_i \ell(y_i w^\top x_i)` (L1-regularised ERM).

    The objective of Veldhuizen (2020, eq. 7) with the loss averaged rather than summed, so that its
    :math:`\lambda` is on the paper's scale. Solved as a smooth bound-constrained problem in
    :math:`w = p - q`, :math:`p, q \ge 0` (L-BFGS-B, relative decrease ``tol``, projected gradient
    ``gtol``, default ``tol``, at most ``max_evaluations`` evaluations, default scipy's); check optimality
    with :func:`l1_kkt_violation`. ``intercept=True`` adds an unpenalised intercept :math:`c`,
    :math:`\ell(y_i(w^\top x_i + c))` (as MATLAB's ``lassoglm`` fits one), returns ``(w, c)`` and raises
    when L-BFGS-B stops for another reason than its tolerances or a failed line search at them.
    """
    return l1_regularized_erm(X, y, check_lambda(lam), get_loss(loss, huber_h), tol=tol, intercept=intercept, gtol=gtol,
                              max_evaluations=max_evaluations)


def l1_regularized_erm(X, y, l1, loss, ridge=0.0, tol=1e-13, intercept=False, gtol=None, max_evaluations=None,
                       max_iterations=20_000):
    r""":math:`\arg\min \frac{\text{ridge}}{2}\lVert w\rVert^2 + \text{l1}\,\lVert w\rVert_1 + \frac1n\sum_i \ell(y_i(w^\top x_i + c))`.

    The one L-BFGS-B solver of the package's L1 problems, on :math:`w = p - q`, :math:`p, q \ge 0`:
    :func:`l1_logistic_regression` (``ridge = 0``), the elastic net of
    :func:`dplr.analysis.toolkit.elastic_net_erm` (``ridge > 0``) and the thesis' ``lassoglm`` reading
    (``intercept=True``: an unpenalised :math:`c`, returns ``(w, c)``; the others :math:`c = 0`, return ``w``).
    ``l1`` and ``ridge`` are taken as given (finite, >= 0: the callers check them); ``loss`` is a loss object.
    """
    X, y = np.asarray(X, dtype=float), np.asarray(y, dtype=float)
    n, d = X.shape
    options = {"ftol": tol, "gtol": tol if gtol is None else gtol, "maxiter": max_iterations, "maxcor": 30}
    if max_evaluations is not None:
        options["maxfun"] = max_evaluations
    if not intercept:
        U = X * y[:, None]

        def fun(pq):
            w = pq[:d] - pq[d:]
            z = U @ w
            if not ridge:
                g = loss.derivative(z) @ U / n
                return l1 * pq.sum() + loss.value(z).mean(), np.r_[l1 + g, l1 - g]
            g = loss.derivative(z) @ U / n + ridge * w
            return 0.5 * ridge * w @ w + l1 * pq.sum() + loss.value(z).mean(), np.r_[l1 + g, l1 - g]

        res = optimize.minimize(fun, np.zeros(2 * d), jac=True, method="L-BFGS-B", bounds=[(0.0, None)] * (2 * d),
                                options=options)
        return res.x[:d] - res.x[d:]
    if ridge:
        raise ValueError("an unpenalised intercept is implemented without the ridge term.")

    def fun_c(theta):
        w, c = theta[:d] - theta[d:2 * d], theta[2 * d]
        z = y * (X @ w + c)
        slope = y * loss.derivative(z) / n  # derivative of the mean loss with respect to x_i^T w + c
        g = X.T @ slope
        return loss.value(z).mean() + l1 * theta[:2 * d].sum(), np.concatenate([g + l1, l1 - g, [slope.sum()]])

    res = optimize.minimize(fun_c, np.zeros(2 * d + 1), jac=True, method="L-BFGS-B",
                            bounds=[(0.0, None)] * (2 * d) + [(None, None)], options=options)
    if not res.success and "ABNORMAL" not in str(res.message):
        raise RuntimeError(f"L1-regularised ERM did not converge: {res.message}")
    return res.x[:d] - res.x[d:2 * d], float(res.x[2 * d])


def l1_kkt_violation(w, X, y, lam, loss="logistic", huber_h=0.5, zero_tol=1e-8):
    r"""Largest violation of the optimality conditions of :func:`l1_logistic_regression` at ``w``.

    With :math:`g = \frac1n\sum_i \ell'(y_i w^\top x_i) y_i x_i`: :math:`g_j = -\lambda\,\mathrm{sign}(w_j)`
    where :math:`w_j \ne 0` and :math:`|g_j| \le \lambda` where :math:`w_j = 0`. Returns the largest
    deviation (0 at an exact minimiser).
    """
    loss = get_loss(loss, huber_h)
    U = np.asarray(X, dtype=float) * np.asarray(y, dtype=float)[:, None]
    g = loss.derivative(U @ w) @ U / U.shape[0]
    active = np.abs(w) > zero_tol
    viol = np.where(active, np.abs(g + lam * np.sign(w)), np.maximum(np.abs(g) - lam, 0.0))
    return float(viol.max())


def l1_neighbour_distance(pair: NeighbouringPair, lam, loss="logistic", huber_h=0.5) -> float:
    r""":math:`\lVert w_1(D) - w_1(D')\rVert` for L1-regularised ERM (:func:`l1_logistic_regression`)."""
    loss, lam = get_loss(loss, huber_h), check_lambda(lam)
    w, w_prime = l1_regularized_erm(pair.X, pair.y, lam, loss), l1_regularized_erm(pair.X_prime, pair.y_prime, lam, loss)
    return float(np.linalg.norm(w - w_prime))


@dataclass(frozen=True)
class L1SearchResult:
    r"""Worst pair found for L1-regularised ERM and its ratio to the (inapplicable) :math:`2/(n\lambda)`."""

    distance: float
    bound: float
    ratio: float
    pair: NeighbouringPair
    kkt_violation: float


@one_blas_thread
def l1_sensitivity_search(X_shared, y_shared, lam, loss="logistic", huber_h=0.5, n_restarts=4, max_evals=300,
                          random_state=None) -> L1SearchResult:
    r"""Maximise :math:`\lVert w_1(D) - w_1(D')\rVert` over the replaced record, shared records fixed.

    Nelder–Mead over the two versions of the replaced record (each :math:`u = yx` kept in the unit ball
    by radial projection) from ``n_restarts`` random starts (``random_state``); the minimiser is not a
    smooth function of the data, so no gradients are used. ``kkt_violation`` certifies both L1
    solutions of the returned pair.
    """
    lam = check_lambda(lam)
    loss = get_loss(loss, huber_h)
    rng = check_random_state(random_state)
    X_shared = np.asarray(X_shared, dtype=float)
    y_shared = np.asarray(y_shared, dtype=float)
    m, d = X_shared.shape
    n = m + 1

    def build(theta):
        u, u_prime = project_rows(theta[:d]), project_rows(theta[d:])
        return NeighbouringPair.from_records(X_shared, y_shared, u, 1.0, u_prime, 1.0)

    best = (-np.inf, None)
    for _ in range(n_restarts):
        theta0 = uniform_in_ball(rng, (2, d)).ravel()
        res = optimize.minimize(lambda t: -l1_neighbour_distance(build(t), lam, loss), theta0, method="Nelder-Mead",
                                options={"maxfev": max_evals, "xatol": 1e-6, "fatol": 1e-9})
        if -res.fun > best[0]:
            best = (-res.fun, res.x)
    pair = build(best[1])
    distance = l1_neighbour_distance(pair, lam, loss)
    kkt = max(l1_kkt_violation(l1_logistic_regression(pair.X, pair.y, lam, loss), pair.X, pair.y, lam, loss),
              l1_kkt_violation(l1_logistic_regression(pair.X_prime, pair.y_prime, lam, loss), pair.X_prime,
                               pair.y_prime, lam, loss))
    bound = sensitivity_bound(n, lam, loss.lipschitz)
    return L1SearchResult(distance, bound, distance / bound, pair, kkt)

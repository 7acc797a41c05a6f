r"""Exact privacy loss of Algorithm 1 and Algorithm 2 on a pair of neighbouring data sets.

For a mechanism whose output has density :math:`p_D` on input :math:`D`, the **privacy loss** at an
output :math:`t` is :math:`L_{D,D'}(t) = \log p_D(t) / p_{D'}(t)`; ε-differential privacy is
:math:`\sup_t |L_{D,D'}(t)| \le \varepsilon` for every neighbouring pair (NIPS 2008, Definition 1).
This module computes :math:`L` in closed form for both algorithms of Chaudhuri & Monteleoni
(NIPS 2008) and maximises it numerically, so that a claimed guarantee can be compared with the loss
the mechanism actually has.

Conventions (NIPS 2008, Section 2): records :math:`x_i \in \mathbb{R}^d` with
:math:`\lVert x_i\rVert \le 1`, labels :math:`y_i \in \{-1, +1\}`; the two data sets of a
:class:`NeighbouringPair` have the same size :math:`n` and differ in (at most) one record. The loss
functions only see :math:`u_i = y_i x_i`, so a record is described by :math:`u_i` in the unit ball.

Algorithm 1 (sensitivity method)
    The output is :math:`w^*(D) + \eta` with :math:`h(\eta)\propto e^{-\beta\lVert\eta\rVert}`,
    :math:`\beta = n\lambda\varepsilon/2`, so
    :math:`L(t) = \beta(\lVert t - w^*(D')\rVert - \lVert t - w^*(D)\rVert)` and
    :math:`\sup_t L = \beta\lVert w^*(D) - w^*(D')\rVert`, attained on the ray from :math:`w^*(D)`
    away from :math:`w^*(D')` (:func:`sensitivity_method_privacy_loss`).

Algorithm 2 (objective perturbation)
    The output :math:`w` minimises :math:`\frac{\lambda+\Delta}{2}\lVert w\rVert^2 + b^\top w/n
    + \frac1n\sum_i \ell(y_i w^\top x_i)`. For each data set the map :math:`b \mapsto w` is a
    bijection of :math:`\mathbb{R}^d` with inverse
    :math:`b_D(w) = -n(\lambda+\Delta)w - \sum_i \ell'(y_i w^\top x_i)\, y_i x_i`
    (the optimality condition), so by the change-of-variables formula

    .. math::

        p_D(w) = \nu\big(b_D(w)\big)\,\big|\det \nabla b_D(w)\big|, \qquad
        |\det \nabla b_D(w)| = \det\Big(n(\lambda+\Delta) I + \sum_i \ell''(y_i w^\top x_i)\, x_i x_i^\top\Big),

    with :math:`\nu(b) \propto e^{-\beta\lVert b\rVert}` the noise density. The privacy loss splits into
    a *noise term* :math:`\beta(\lVert b_{D'}(w)\rVert - \lVert b_D(w)\rVert)` — the only term in the
    proof of Theorem 2 of NIPS 2008 — and a *Jacobian term*
    :math:`\log\det\nabla b_D(w) - \log\det\nabla b_{D'}(w)`, which that proof omits. Chaudhuri,
    Monteleoni & Sarwate (JMLR 2011, Theorem 9) bound it and shrink the noise budget to
    :math:`\varepsilon'` accordingly (``form="corrected"``).

Worst case over the replaced record
    Write :math:`D = S \cup \{u\}`, :math:`D' = S \cup \{u'\}` with shared records :math:`S`. With
    :math:`b_S(w)` and :math:`A_S(w)` the shared parts of :math:`b_D` and of the Jacobian, the
    matrix determinant lemma gives :math:`L(w) = \varphi(u'; w) - \varphi(u; w)` with

    .. math::

        \varphi(v; w) = \beta\big(\lVert b_S(w) - \ell'(v^\top w) v\rVert - \lVert b_S(w)\rVert\big)
                        - \log\big(1 + \ell''(v^\top w)\, v^\top A_S(w)^{-1} v\big),

    so for fixed :math:`w` the worst pair of records is :math:`u = \arg\min_v \varphi`,
    :math:`u' = \arg\max_v \varphi` (:func:`worst_case_objective_perturbation_privacy_loss`).

The maximisations over :math:`w` are numerical (a polar grid out to large :math:`\lVert w\rVert`,
then Nelder–Mead refinement): they return a value attained at an explicit :math:`w`, i.e. a lower
bound on the supremum that is exact up to the search. :func:`objective_perturbation_privacy_bound`
gives the matching proven upper bounds.
"""
from __future__ import annotations

import functools
from dataclasses import dataclass

import numpy as np
from scipy import integrate, optimize, stats
from threadpoolctl import threadpool_limits

from dplr.algorithms import (
    OBJECTIVE_PERTURBATION_FORMS,
    objective_perturbation_calibration,
    sensitivity_method_noise_rate,
    standard_erm,
)
from dplr.losses import get_loss
from dplr.mechanisms import vector_laplace_log_density, vector_laplace_privacy_loss
from dplr.validation import check_random_state, check_rows_in_ball

__all__ = [
    "NeighbouringPair",
    "PrivacyLossTerms",
    "PrivacyLossSupremum",
    "WorstCasePrivacyLoss",
    "sensitivity_method_privacy_loss",
    "sensitivity_method_max_privacy_loss",
    "perturbation_from_output",
    "log_abs_det_jacobian",
    "objective_perturbation_log_density",
    "objective_perturbation_privacy_loss",
    "max_objective_perturbation_privacy_loss",
    "worst_case_objective_perturbation_privacy_loss",
    "jacobian_log_ratio_bound",
    "objective_perturbation_privacy_bound",
    "output_grid",
    "vector_laplace_halfspace_probability",
]


def _one_thread(func):
    """Run ``func`` with BLAS limited to one thread: its linear algebra is on tiny matrices, where thread
    start-up and spinning cost far more than they save (and, on a busy machine, 50x slower in our tests)."""

    @functools.wraps(func)
    def wrapper(*args, **kwargs):
        with threadpool_limits(limits=1):
            return func(*args, **kwargs)

    return wrapper


# ----------------------------------------------------------------------------------------------
# Neighbouring pairs
# ----------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class NeighbouringPair:
    r"""Two data sets :math:`D = (X, y)` and :math:`D' = (X', y')` of equal size differing in one record.

    Use :meth:`from_records` to build one from shared records and the two versions of the replaced
    record (it is appended as the last row). Construction checks the paper's assumptions
    (:math:`\lVert x_i\rVert \le 1`, labels in {-1, +1}) and that at most one row differs.
    """

    X: np.ndarray
    y: np.ndarray
    X_prime: np.ndarray
    y_prime: np.ndarray

    def __post_init__(self):
        arrays = [np.array(a, dtype=float) for a in (self.X, self.y, self.X_prime, self.y_prime)]
        X, y, Xp, yp = arrays
        if X.ndim != 2 or Xp.shape != X.shape:
            raise ValueError(f"X and X_prime must be 2-D arrays of the same shape, got {X.shape} and {Xp.shape}.")
        if y.shape != (X.shape[0],) or yp.shape != y.shape:
            raise ValueError(f"y and y_prime must have shape ({X.shape[0]},), got {y.shape} and {yp.shape}.")
        if not (np.all(np.abs(y) == 1) and np.all(np.abs(yp) == 1)):
            raise ValueError("labels must take values in {-1, +1}.")
        check_rows_in_ball(X)
        check_rows_in_ball(Xp)
        differ = np.flatnonzero(np.any(X != Xp, axis=1) | (y != yp))
        if differ.size > 1:
            raise ValueError(
                f"neighbouring data sets differ in exactly one record; these differ in {differ.size} rows "
                f"(first {differ[:5].tolist()})."
            )
        for name, value in zip(("X", "y", "X_prime", "y_prime"), arrays):
            value.setflags(write=False)
            object.__setattr__(self, name, value)

    @classmethod
    def from_records(cls, X_shared, y_shared, record, label, record_prime, label_prime):
        """Pair ``D = shared + (record, label)``, ``D' = shared + (record_prime, label_prime)``."""
        X_shared = np.asarray(X_shared, dtype=float)
        d = np.asarray(record, dtype=float).shape[0]
        X_shared = X_shared.reshape(-1, d)
        y_shared = np.asarray(y_shared, dtype=float).reshape(-1)
        X = np.vstack([X_shared, np.asarray(record, dtype=float)[None, :]])
        Xp = np.vstack([X_shared, np.asarray(record_prime, dtype=float)[None, :]])
        return cls(X, np.r_[y_shared, float(label)], Xp, np.r_[y_shared, float(label_prime)])

    @property
    def n(self) -> int:
        return self.X.shape[0]

    @property
    def d(self) -> int:
        return self.X.shape[1]

    def swapped(self) -> "NeighbouringPair":
        """The same pair with the roles of :math:`D` and :math:`D'` exchanged."""
        return NeighbouringPair(self.X_prime, self.y_prime, self.X, self.y)


# ----------------------------------------------------------------------------------------------
# The vector Laplace mechanism on sets
# ----------------------------------------------------------------------------------------------
def vector_laplace_halfspace_probability(s, beta, d):
    r""":math:`\Pr[\langle \eta, e\rangle \ge s]` for :math:`h(\eta) \propto e^{-\beta\lVert\eta\rVert}` on
    :math:`\mathbb{R}^d` and any unit vector :math:`e` (exact, by one-dimensional quadrature).

    With :math:`\eta = R\,U` (:math:`R \sim \Gamma(d, 1/\beta)` independent of :math:`U` uniform on the
    sphere) and :math:`(1 + \langle U, e\rangle)/2 \sim \mathrm{Beta}(\frac{d-1}2, \frac{d-1}2)` for
    :math:`d \ge 2` (:math:`\pm1` with probability 1/2 each for :math:`d = 1`), for :math:`s > 0`

    .. math::

        \Pr[\langle\eta, e\rangle \ge s] = \int_s^\infty \gamma_{d,1/\beta}(r)\,
        \Pr[\langle U, e\rangle \ge s/r]\,dr ,

    and :math:`1 - \Pr[\langle\eta, e\rangle \ge -s]` for :math:`s < 0` (symmetry). Used to check
    ε-DP on sets (half-spaces) rather than on densities.
    """
    radius = stats.gamma(a=d, scale=1.0 / beta)
    if s == 0:
        return 0.5
    if s < 0:
        return 1.0 - vector_laplace_halfspace_probability(-s, beta, d)
    if d == 1:
        return 0.5 * float(np.exp(-beta * s))
    direction = stats.beta((d - 1) / 2, (d - 1) / 2)
    value, _ = integrate.quad(lambda r: radius.pdf(r) * direction.sf((1 + s / r) / 2), s, np.inf,
                              epsabs=0.0, epsrel=1e-11, limit=400)
    return float(value)


# ----------------------------------------------------------------------------------------------
# Algorithm 1
# ----------------------------------------------------------------------------------------------
@_one_thread
def sensitivity_method_privacy_loss(output, pair: NeighbouringPair, epsilon, lam, loss="logistic", huber_h=0.5):
    r"""Privacy loss :math:`\log p_D(t)/p_{D'}(t)` of Algorithm 1 at outputs ``t`` (shape ``(..., d)``).

    :math:`p_D(t) = h(t - w^*(D))` with :math:`h \propto e^{-\beta\lVert\cdot\rVert}`,
    :math:`\beta = n\lambda\varepsilon/(2L)` (NIPS 2008, Algorithm 1; :math:`L = 1` for the logistic
    loss), so the loss is :math:`\beta(\lVert t - w^*(D')\rVert - \lVert t - w^*(D)\rVert)`.
    """
    loss = get_loss(loss, huber_h)
    w, w_prime = standard_erm(pair.X, pair.y, lam, loss), standard_erm(pair.X_prime, pair.y_prime, lam, loss)
    beta = sensitivity_method_noise_rate(pair.n, lam, epsilon, loss.lipschitz)
    return vector_laplace_privacy_loss(output, w, w_prime, beta)


@_one_thread
def sensitivity_method_max_privacy_loss(pair: NeighbouringPair, epsilon, lam, loss="logistic", huber_h=0.5):
    r""":math:`\sup_t |L(t)| = \beta\lVert w^*(D) - w^*(D')\rVert` for Algorithm 1 (NIPS 2008, Theorem 1).

    Returns ``(value, t_star)``: the supremum and an output where it is attained,
    :math:`t^* = w^*(D) + (w^*(D) - w^*(D'))` (any point on the ray from :math:`w^*(D)` away from
    :math:`w^*(D')` attains it). By Corollary 2 the value is at most :math:`\varepsilon`.
    """
    loss = get_loss(loss, huber_h)
    w, w_prime = standard_erm(pair.X, pair.y, lam, loss), standard_erm(pair.X_prime, pair.y_prime, lam, loss)
    beta = sensitivity_method_noise_rate(pair.n, lam, epsilon, loss.lipschitz)
    return float(beta * np.linalg.norm(w - w_prime)), w + (w - w_prime)


# ----------------------------------------------------------------------------------------------
# Algorithm 2: output density by change of variables
# ----------------------------------------------------------------------------------------------
def _as_rows(W, d):
    W = np.asarray(W, dtype=float)
    single = W.ndim == 1
    W = np.atleast_2d(W)
    if W.shape[-1] != d:
        raise ValueError(f"outputs must have {d} coordinates, got shape {W.shape}.")
    return W, single


def perturbation_from_output(W, X, y, lam, loss="logistic", delta=0.0, huber_h=0.5):
    r"""The unique noise vector :math:`b_D(w)` that makes Algorithm 2 output :math:`w` on data :math:`D`.

    :math:`b_D(w) = -n(\lambda+\Delta)w - \sum_i \ell'(y_i w^\top x_i)\, y_i x_i`, from setting the
    gradient of :math:`\frac{\lambda+\Delta}{2}\lVert w\rVert^2 + b^\top w/n + \frac1n\sum_i\ell` to zero
    (NIPS 2008, proof of Theorem 2; JMLR 2011, proof of Theorem 9). ``W`` has shape ``(d,)`` or
    ``(k, d)``; the result has the same shape.
    """
    loss = get_loss(loss, huber_h)
    X = np.asarray(X, dtype=float)
    U = X * np.asarray(y, dtype=float)[:, None]
    W2, single = _as_rows(W, X.shape[1])
    n = X.shape[0]
    B = -n * (lam + delta) * W2 - loss.derivative(W2 @ U.T) @ U
    return B[0] if single else B


def log_abs_det_jacobian(W, X, y, lam, loss="logistic", delta=0.0, huber_h=0.5):
    r""":math:`\log|\det \nabla b_D(w)| = \log\det\big(n(\lambda+\Delta)I + \sum_i \ell''(y_i w^\top x_i) x_i x_i^\top\big)`.

    The matrix is :math:`n` times the Hessian of the (unperturbed) objective; it is positive definite
    because :math:`\ell'' \ge 0` and :math:`\lambda > 0`.
    """
    loss = get_loss(loss, huber_h)
    X = np.asarray(X, dtype=float)
    U = X * np.asarray(y, dtype=float)[:, None]
    W2, single = _as_rows(W, X.shape[1])
    n, d = X.shape
    S = loss.second_derivative(W2 @ U.T)  # (k, n)
    H = np.einsum("kn,ni,nj->kij", S, U, U)
    H[:, np.arange(d), np.arange(d)] += n * (lam + delta)
    sign, logdet = np.linalg.slogdet(H)
    if np.any(sign <= 0):
        raise FloatingPointError("the Jacobian matrix is not positive definite; check lam > 0 and the loss.")
    return float(logdet[0]) if single else logdet


def _calibration(epsilon, n, lam, loss, form):
    if form not in OBJECTIVE_PERTURBATION_FORMS:
        raise ValueError(f"form must be one of {OBJECTIVE_PERTURBATION_FORMS}, got {form!r}.")
    return objective_perturbation_calibration(epsilon, n, lam, loss.curvature, loss.lipschitz, form)


def objective_perturbation_log_density(W, X, y, epsilon, lam, loss="logistic", form="corrected", huber_h=0.5):
    r"""Log-density of Algorithm 2's output at ``W``: :math:`\log\nu(b_D(w)) + \log|\det\nabla b_D(w)|`.

    ``form="nips2008"``: NIPS 2008 Algorithm 2 (:math:`\nu\propto e^{-\varepsilon\lVert b\rVert/2}`,
    :math:`\Delta = 0`); ``form="corrected"``: JMLR 2011 Algorithm 2 (:math:`\varepsilon'` and
    :math:`\Delta` from :func:`dplr.algorithms.objective_perturbation_calibration`). This is the exact
    density of what :func:`dplr.algorithms.objective_perturbation` samples.
    """
    loss = get_loss(loss, huber_h)
    n = np.asarray(X).shape[0]
    cal = _calibration(epsilon, n, lam, loss, form)
    B = perturbation_from_output(W, X, y, lam, loss, cal.delta)
    return vector_laplace_log_density(B, cal.noise_rate) + log_abs_det_jacobian(W, X, y, lam, loss, cal.delta)


@dataclass(frozen=True)
class PrivacyLossTerms:
    r"""The privacy loss :math:`L = \log p_D/p_{D'}` at a set of outputs and its two parts.

    ``noise`` is :math:`\beta(\lVert b_{D'}(w)\rVert - \lVert b_D(w)\rVert)` (the term in the proof of
    NIPS 2008 Theorem 2), ``jacobian`` is :math:`\log|\det\nabla b_D(w)| - \log|\det\nabla b_{D'}(w)|`
    (the term that proof leaves out), ``total = noise + jacobian``.
    """

    total: np.ndarray
    noise: np.ndarray
    jacobian: np.ndarray


def _norm_difference(P, Q):
    """||P|| - ||Q|| row-wise, computed without cancellation when both are large."""
    nP, nQ = np.linalg.norm(P, axis=-1), np.linalg.norm(Q, axis=-1)
    denom = nP + nQ
    diff = np.einsum("...i,...i->...", P - Q, P + Q)
    return np.where(denom > 0, diff / np.where(denom > 0, denom, 1.0), 0.0)


def objective_perturbation_privacy_loss(W, pair: NeighbouringPair, epsilon, lam, loss="logistic", form="corrected",
                                        huber_h=0.5) -> PrivacyLossTerms:
    r"""Exact privacy loss :math:`\log p_D(w)/p_{D'}(w)` of Algorithm 2 at outputs ``W`` (``(d,)`` or ``(k, d)``)."""
    loss = get_loss(loss, huber_h)
    cal = _calibration(epsilon, pair.n, lam, loss, form)
    B = np.atleast_2d(perturbation_from_output(W, pair.X, pair.y, lam, loss, cal.delta))
    Bp = np.atleast_2d(perturbation_from_output(W, pair.X_prime, pair.y_prime, lam, loss, cal.delta))
    noise = cal.noise_rate * _norm_difference(Bp, B)
    jac = (np.atleast_1d(log_abs_det_jacobian(W, pair.X, pair.y, lam, loss, cal.delta))
           - np.atleast_1d(log_abs_det_jacobian(W, pair.X_prime, pair.y_prime, lam, loss, cal.delta)))
    if np.asarray(W).ndim == 1:
        return PrivacyLossTerms(float(noise[0] + jac[0]), float(noise[0]), float(jac[0]))
    return PrivacyLossTerms(noise + jac, noise, jac)


# ----------------------------------------------------------------------------------------------
# Grids of outputs and refinement
# ----------------------------------------------------------------------------------------------
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
    ``jacobian`` are the two parts of ``total`` at ``w`` (see :class:`PrivacyLossTerms`).
    """

    value: float
    total: float
    noise: float
    jacobian: float
    w: np.ndarray


@_one_thread
def max_objective_perturbation_privacy_loss(pair: NeighbouringPair, epsilon, lam, loss="logistic", form="corrected",
                                            huber_h=0.5, radii=None, n_angles=96, n_refine=3, max_evals=600,
                                            random_state=None) -> PrivacyLossSupremum:
    r""":math:`\sup_w |\log p_D(w)/p_{D'}(w)|` for Algorithm 2 on one neighbouring pair.

    Evaluates the exact loss (:func:`objective_perturbation_privacy_loss`) on :func:`output_grid`,
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
    noise = beta * _norm_difference(Bs + G, np.broadcast_to(Bs, G.shape))
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


def _project_ball(p):
    norm = np.linalg.norm(p)
    return p / norm if norm > 1 else p


@dataclass(frozen=True)
class WorstCasePrivacyLoss:
    r"""Worst neighbouring pair found for Algorithm 2, given the shared records.

    ``value`` :math:`= \log p_D(w)/p_{D'}(w) \ge 0` at ``w`` for ``pair`` (whose replaced record is
    ``record`` in :math:`D` and ``record_prime`` in :math:`D'`, both as :math:`u = y x`, stored with
    label +1); ``noise`` and ``jacobian`` are its two parts. ``value`` is recomputed from ``pair``
    with :func:`objective_perturbation_privacy_loss`, independently of the search.
    """

    value: float
    noise: float
    jacobian: float
    w: np.ndarray
    record: np.ndarray
    record_prime: np.ndarray
    pair: NeighbouringPair


@_one_thread
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
    """
    loss = get_loss(loss, huber_h)
    X_shared = np.asarray(X_shared, dtype=float)
    y_shared = np.asarray(y_shared, dtype=float).reshape(-1)
    d = X_shared.shape[1]
    if X_shared.shape[0]:
        check_rows_in_ball(X_shared)
    U_shared = X_shared * y_shared[:, None]
    n = X_shared.shape[0] + 1
    cal = _calibration(epsilon, n, lam, loss, form)
    reg, beta = lam + cal.delta, cal.noise_rate
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
            return -loss_at(w, _project_ball(theta[nw:nw + d]), _project_ball(theta[nw + d:]))

        steps = np.r_[0.2, np.full(nw - 1, 0.05), np.full(2 * d, 0.05)]
        theta, val = _nelder_mead(neg, np.r_[theta_w, u0, up0], steps, max_evals)
        candidates.append((-val, _w_from_params(theta[:nw], d, sign), _project_ball(theta[nw:nw + d]),
                           _project_ball(theta[nw + d:])))
    _, w, u, u_prime = max(candidates, key=lambda c: c[0])
    if symmetric:
        w, u, u_prime = _canonical_mirror(w, u, u_prime)
    # Records are stored as (x, y) = (u, +1); rounding can put a projected record a hair outside the ball.
    u, u_prime = u / max(1.0, np.linalg.norm(u)), u_prime / max(1.0, np.linalg.norm(u_prime))
    pair = NeighbouringPair.from_records(X_shared, y_shared, u, 1.0, u_prime, 1.0)
    terms = objective_perturbation_privacy_loss(w, pair, epsilon, lam, loss, form)
    return WorstCasePrivacyLoss(terms.total, terms.noise, terms.jacobian, w, u, u_prime, pair)


# ----------------------------------------------------------------------------------------------
# Proven upper bounds
# ----------------------------------------------------------------------------------------------
def jacobian_log_ratio_bound(n, lam, curvature=0.25, delta=0.0, sharp=True):
    r"""Upper bound on the Jacobian term :math:`|\log\det\nabla b_D(w) - \log\det\nabla b_{D'}(w)|`.

    ``sharp=True``: :math:`\log(1 + c/(n(\lambda+\Delta)))`, from the matrix determinant lemma applied
    to the shared part :math:`A \succeq n(\lambda+\Delta)I` (the two Jacobians are rank-one updates of
    the same :math:`A`). ``sharp=False``: :math:`2\log(1 + c/(n(\lambda+\Delta)))`, the bound of JMLR 2011
    (proof of Theorem 9), which treats the difference as a rank-two perturbation.
    """
    value = np.log1p(curvature / (n * (lam + delta)))
    return float(value if sharp else 2 * value)


def objective_perturbation_privacy_bound(epsilon, n, lam, curvature=0.25, lipschitz=1.0, form="corrected",
                                         sharp=True):
    r"""A proven upper bound on :math:`\sup_{D,D',w}|\log p_D(w)/p_{D'}(w)|` for Algorithm 2.

    Noise term :math:`\le \beta\cdot 2L` (the two gradients of the replaced record differ by at most
    :math:`2L`; NIPS 2008, proof of Theorem 2) plus the Jacobian term
    (:func:`jacobian_log_ratio_bound`). With ``sharp=False`` and ``form="corrected"`` this is exactly
    :math:`\varepsilon` (JMLR 2011, Theorem 9); ``sharp=True`` gives
    :math:`\varepsilon - \log(1 + c/(n\lambda))` when :math:`\Delta = 0`. For ``form="nips2008"`` it is
    :math:`\varepsilon + \log(1 + c/(n\lambda))` (``sharp``), which exceeds the claimed :math:`\varepsilon`.
    """
    cal = objective_perturbation_calibration(epsilon, n, lam, curvature, lipschitz, form)
    return 2 * lipschitz * cal.noise_rate + jacobian_log_ratio_bound(n, lam, curvature, cal.delta, sharp)

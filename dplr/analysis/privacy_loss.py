r"""Exact privacy loss of Algorithm 1 and Algorithm 2 on a pair of neighbouring data sets.

For a mechanism whose output has density :math:`p_D` on input :math:`D`, the **privacy loss** at an
output :math:`t` is :math:`L_{D,D'}(t) = \log p_D(t) / p_{D'}(t)`; ε-differential privacy is
:math:`\sup_t |L_{D,D'}(t)| \le \varepsilon` for every neighbouring pair (NIPS 2008, Definition 1).
This module computes :math:`L` in closed form for both algorithms of Chaudhuri & Monteleoni
(NIPS 2008), and the proven bounds on it; :mod:`dplr.analysis.privacy_loss_search` maximises it
numerically, so that a claimed guarantee can be compared with the loss the mechanism actually has.

Conventions (NIPS 2008, Section 2): records :math:`x_i \in \mathbb{R}^d` with
:math:`\lVert x_i\rVert \le 1`, labels :math:`y_i \in \{-1, +1\}`; the two data sets of a
:class:`~dplr.analysis.neighbours.NeighbouringPair` have the same size :math:`n` and differ in (at most) one record. The loss
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
    :math:`u' = \arg\max_v \varphi`
    (:func:`dplr.analysis.privacy_loss_search.worst_case_objective_perturbation_privacy_loss`).

The maximisations over :math:`w` are numerical (:mod:`dplr.analysis.privacy_loss_search`): they
return a value attained at an explicit :math:`w`, i.e. a lower bound on the supremum over the outputs (and,
for the worst case over the replaced record, with the shared records *fixed*). They are not worst cases over
all neighbouring pairs: :func:`dplr.analysis.objective_perturbation_search.search_privacy_loss` also searches
the shared records. Upper bounds come from proofs: :func:`objective_perturbation_privacy_bound` (the bounds of
the Jacobian-ratio lemma) and the sharper
:func:`dplr.analysis.objective_perturbation_search.coupled_privacy_bound`.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy import integrate, stats

from dplr.algorithms import standard_erm
from dplr.analysis.neighbours import NeighbouringPair
from dplr.calibration import objective_perturbation_calibration, sensitivity_method_calibration
from dplr.losses import get_loss
from dplr.threads import one_blas_thread
from dplr.validation import check_positive_finite

__all__ = [
    "PrivacyLossTerms",
    "vector_laplace_halfspace_probability",
    "vector_laplace_halfspace_tradeoff",
    "sensitivity_method_privacy_loss",
    "sensitivity_method_max_privacy_loss",
    "perturbation_from_output",
    "log_abs_det_jacobian",
    "objective_perturbation_log_density",
    "norm_difference",
    "objective_perturbation_privacy_loss",
    "jacobian_log_ratio_bound",
    "objective_perturbation_privacy_bound",
]


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


def vector_laplace_halfspace_tradeoff(epsilon, d, offsets, sensitivity=1.0):
    r"""What half-space events can show about the vector Laplace mechanism in :math:`d` dimensions.

    Centres :math:`0` (data set :math:`D`) and :math:`S e` (:math:`D'`) at the largest allowed distance
    :math:`S`, noise :math:`\propto e^{-(\varepsilon/S)\lVert\eta\rVert}`; events
    :math:`\{\langle t, e\rangle \ge S + s\}` for each ``offset`` :math:`s` beyond the far centre.
    Returns ``(p, log_ratio)``: :math:`p = \Pr[M(D) \in S]` and
    :math:`\log \Pr[M(D') \in S]/\Pr[M(D) \in S]`, exactly (by quadrature,
    :func:`vector_laplace_halfspace_probability`). The log-ratio is at most
    :math:`\varepsilon`; for :math:`d = 1` it equals :math:`\varepsilon` for every :math:`s \ge 0`, for
    :math:`d \ge 2` it approaches :math:`\varepsilon` only as :math:`p \to 0`.
    """
    beta = check_positive_finite(epsilon, "epsilon") / check_positive_finite(sensitivity, "sensitivity")
    offsets = np.asarray(offsets, dtype=float)
    p = np.array([vector_laplace_halfspace_probability(sensitivity + s, beta, d) for s in offsets])
    q = np.array([vector_laplace_halfspace_probability(s, beta, d) for s in offsets])
    return p, np.log(q) - np.log(p)


# ----------------------------------------------------------------------------------------------
# Algorithm 1
# ----------------------------------------------------------------------------------------------
@one_blas_thread
def sensitivity_method_privacy_loss(output, pair: NeighbouringPair, epsilon, lam, loss="logistic", huber_h=0.5):
    r"""Privacy loss :math:`\log p_D(t)/p_{D'}(t)` of Algorithm 1 at outputs ``t`` (shape ``(..., d)``).

    :math:`p_D(t) = h(t - w^*(D))` with :math:`h \propto e^{-\beta\lVert\cdot\rVert}`,
    :math:`\beta = n\lambda\varepsilon/(2L)` (NIPS 2008, Algorithm 1; :math:`L = 1` for the logistic
    loss), so the loss is :math:`\beta(\lVert t - w^*(D')\rVert - \lVert t - w^*(D)\rVert)`.
    """
    loss = get_loss(loss, huber_h)
    w, w_prime = standard_erm(pair.X, pair.y, lam, loss), standard_erm(pair.X_prime, pair.y_prime, lam, loss)
    noise = sensitivity_method_calibration(pair.n, lam, epsilon, loss.lipschitz).mechanism(pair.d)
    return noise.privacy_loss(output, w, w_prime)


@one_blas_thread
def sensitivity_method_max_privacy_loss(pair: NeighbouringPair, epsilon, lam, loss="logistic", huber_h=0.5):
    r""":math:`\sup_t |L(t)| = \beta\lVert w^*(D) - w^*(D')\rVert` for Algorithm 1 (NIPS 2008, Theorem 1).

    Returns ``(value, t_star)``: the supremum and an output where it is attained,
    :math:`t^* = w^*(D) + (w^*(D) - w^*(D'))` (any point on the ray from :math:`w^*(D)` away from
    :math:`w^*(D')` attains it). By Corollary 2 the value is at most :math:`\varepsilon`.
    """
    loss = get_loss(loss, huber_h)
    w, w_prime = standard_erm(pair.X, pair.y, lam, loss), standard_erm(pair.X_prime, pair.y_prime, lam, loss)
    noise = sensitivity_method_calibration(pair.n, lam, epsilon, loss.lipschitz).mechanism(pair.d)
    return noise.max_privacy_loss(np.linalg.norm(w - w_prime)), w + (w - w_prime)


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


def perturbation_from_output(W, X, y, lam, loss="logistic", ridge=0.0, huber_h=0.5):
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
    B = -n * (lam + ridge) * W2 - loss.derivative(W2 @ U.T) @ U
    return B[0] if single else B


def log_abs_det_jacobian(W, X, y, lam, loss="logistic", ridge=0.0, huber_h=0.5):
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
    H[:, np.arange(d), np.arange(d)] += n * (lam + ridge)
    sign, logdet = np.linalg.slogdet(H)
    if np.any(sign <= 0):
        raise FloatingPointError("the Jacobian matrix is not positive definite; check lam > 0 and the loss.")
    return float(logdet[0]) if single else logdet


def objective_perturbation_log_density(W, X, y, epsilon, lam, loss="logistic", form="corrected", huber_h=0.5):
    r"""Log-density of Algorithm 2's output at ``W``: :math:`\log\nu(b_D(w)) + \log|\det\nabla b_D(w)|`.

    ``form="nips2008"``: NIPS 2008 Algorithm 2 (:math:`\nu\propto e^{-\varepsilon\lVert b\rVert/2}`,
    :math:`\Delta = 0`); ``form="corrected"``: JMLR 2011 Algorithm 2 (:math:`\varepsilon'` and
    :math:`\Delta` from :func:`dplr.calibration.objective_perturbation_calibration`). This is the exact
    density of what :func:`dplr.algorithms.objective_perturbation` samples.
    """
    loss = get_loss(loss, huber_h)
    n = np.asarray(X).shape[0]
    cal = objective_perturbation_calibration(epsilon, n, lam, loss.curvature, loss.lipschitz, form)
    B = perturbation_from_output(W, X, y, lam, loss, cal.ridge)
    return cal.mechanism(B.shape[-1]).log_density(B) + log_abs_det_jacobian(W, X, y, lam, loss, cal.ridge)


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


def norm_difference(P, Q):
    """||P|| - ||Q|| row-wise, computed without cancellation when both are large."""
    nP, nQ = np.linalg.norm(P, axis=-1), np.linalg.norm(Q, axis=-1)
    denom = nP + nQ
    diff = np.einsum("...i,...i->...", P - Q, P + Q)
    return np.where(denom > 0, diff / np.where(denom > 0, denom, 1.0), 0.0)


def objective_perturbation_privacy_loss(W, pair: NeighbouringPair, epsilon, lam, loss="logistic", form="corrected",
                                        huber_h=0.5) -> PrivacyLossTerms:
    r"""Exact privacy loss :math:`\log p_D(w)/p_{D'}(w)` of Algorithm 2 at outputs ``W`` (``(d,)`` or ``(k, d)``)."""
    loss = get_loss(loss, huber_h)
    cal = objective_perturbation_calibration(epsilon, pair.n, lam, loss.curvature, loss.lipschitz, form)
    B = np.atleast_2d(perturbation_from_output(W, pair.X, pair.y, lam, loss, cal.ridge))
    Bp = np.atleast_2d(perturbation_from_output(W, pair.X_prime, pair.y_prime, lam, loss, cal.ridge))
    noise = cal.noise_rate * norm_difference(Bp, B)
    jac = (np.atleast_1d(log_abs_det_jacobian(W, pair.X, pair.y, lam, loss, cal.ridge))
           - np.atleast_1d(log_abs_det_jacobian(W, pair.X_prime, pair.y_prime, lam, loss, cal.ridge)))
    if np.asarray(W).ndim == 1:
        return PrivacyLossTerms(float(noise[0] + jac[0]), float(noise[0]), float(jac[0]))
    return PrivacyLossTerms(noise + jac, noise, jac)


# ----------------------------------------------------------------------------------------------
# Proven upper bounds
# ----------------------------------------------------------------------------------------------
def jacobian_log_ratio_bound(n, lam, curvature=0.25, ridge=0.0, sharp=True):
    r"""Upper bound on the Jacobian term :math:`|\log\det\nabla b_D(w) - \log\det\nabla b_{D'}(w)|`.

    ``sharp=True``: :math:`\log(1 + c/(n(\lambda+\Delta)))`, from the matrix determinant lemma applied
    to the shared part :math:`A \succeq n(\lambda+\Delta)I` (the two Jacobians are rank-one updates of
    the same :math:`A`). ``sharp=False``: :math:`2\log(1 + c/(n(\lambda+\Delta)))`, the bound of JMLR 2011
    (proof of Theorem 9), which treats the difference as a rank-two perturbation.
    """
    value = np.log1p(curvature / (n * (lam + ridge)))
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
    return 2 * lipschitz * cal.noise_rate + jacobian_log_ratio_bound(n, lam, curvature, cal.ridge, sharp)

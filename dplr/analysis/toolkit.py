r"""The privacy toolkit beyond the paper's two algorithms: the results the theory chapters prove and check.

* **Privacy-loss distribution of Algorithm 1.** On a neighbouring pair with non-private minimisers
  :math:`w_1 = w^*(D)`, :math:`w_2 = w^*(D')` and noise rate :math:`\beta`, the output is
  :math:`T = w_1 + \eta` and the privacy-loss random variable is

  .. math::

      L = \log\frac{p_D(T)}{p_{D'}(T)} = \beta\big(\lVert\eta + \Delta\rVert - \lVert\eta\rVert\big),
      \qquad \Delta = w_1 - w_2 .

  With :math:`\eta = R\,U/\beta` (:math:`R \sim \Gamma(d, 1)`, :math:`U` uniform on the sphere) it is
  :math:`L = \sqrt{R^2 + 2aRC + a^2} - R`, :math:`a = \beta\lVert\Delta\rVert`, :math:`C = \langle U, e\rangle`,
  a function of :math:`a` and :math:`d` only (:func:`sensitivity_method_loss_cdf`).
* **The expected test error of Algorithm 1** on a fixed test set, exactly
  (:func:`sensitivity_method_expected_error`), and the normalised margins that decide whether it can
  exceed one half (:func:`normalised_margins`, :func:`margin_tail_dominance`).
* **Elastic-net regularised ERM** (:func:`elastic_net_erm`), for checking that Lemma 1 needs no
  differentiability of the regulariser.
* **The exponential mechanism's privacy loss** between neighbouring utility vectors
  (:func:`exponential_mechanism_log_ratios`).
* **Add/remove neighbours**: the sensitivity bound :func:`add_remove_sensitivity_bound`.

The book's chapter *The privacy toolkit* (``book/theory_toolkit.ipynb``) proves each statement.
"""
from __future__ import annotations

import numpy as np
from scipy import integrate, special, stats

from dplr.analysis.lasso import l1_regularized_erm
from dplr.losses import get_loss
from dplr.validation import check_lambda, check_positive_finite, check_positive_integer

__all__ = [
    "sensitivity_method_loss_cdf",
    "sensitivity_method_loss_moment",
    "projection_tail",
    "sensitivity_method_expected_error",
    "normalised_margins",
    "margin_tail_dominance",
    "elastic_net_erm",
    "elastic_net_kkt_violation",
    "exponential_mechanism_log_ratios",
    "add_remove_sensitivity_bound",
]


def _check_dim(d):
    return check_positive_integer(d, "d")


# ----------------------------------------------------------------------------------------------
# Privacy-loss distribution of Algorithm 1
# ----------------------------------------------------------------------------------------------
def _conditional_cdf(ell, r, a, d):
    r""":math:`\Pr[L \le \ell \mid R = r]` for :math:`d \ge 2`: :math:`L` increases with :math:`C`, whose law is
    :math:`2\,\mathrm{Beta}(\frac{d-1}2, \frac{d-1}2) - 1`."""
    r = np.asarray(r, dtype=float)
    with np.errstate(divide="ignore", invalid="ignore"):
        c_star = (2 * r * ell + ell**2 - a**2) / (2 * r * a)
    x = np.clip((1 + c_star) / 2, 0.0, 1.0)
    out = special.betainc((d - 1) / 2, (d - 1) / 2, x)
    return np.where(r + ell < 0, 0.0, out)  # sqrt(...) <= r + ell is impossible when r + ell < 0


def sensitivity_method_loss_cdf(ell, a, d):
    r"""CDF :math:`\Pr[L \le \ell]` of Algorithm 1's privacy-loss random variable (output drawn on :math:`D`).

    ``a`` is :math:`\beta\lVert w^*(D) - w^*(D')\rVert` (at most ε by Corollary 2), ``d`` the dimension.
    :math:`L \in [-a, a]`. For ``d = 1`` the law is explicit: an atom :math:`1/2` at :math:`a`, an atom
    :math:`e^{-a}/2` at :math:`-a`, and density :math:`\frac14 e^{(\ell - a)/2}` in between, so
    :math:`\Pr[L \le \ell] = \frac12 e^{(\ell - a)/2}` for :math:`-a \le \ell < a`. For ``d >= 2``,
    :math:`\Pr[L \le \ell] = \int_0^\infty \gamma_d(r)\, I_{x(r,\ell)}\big(\tfrac{d-1}2, \tfrac{d-1}2\big)\,dr` with
    :math:`\gamma_d` the :math:`\Gamma(d, 1)` density, :math:`I` the regularised incomplete beta function and
    :math:`x = \big(1 + \frac{2r\ell + \ell^2 - a^2}{2ra}\big)/2` clipped to :math:`[0, 1]` (one quadrature).
    """
    a = check_positive_finite(a, "a")
    d = _check_dim(d)
    ell_arr = np.atleast_1d(np.asarray(ell, dtype=float))
    out = np.empty_like(ell_arr)
    for k, value in enumerate(ell_arr):
        if value < -a:
            out[k] = 0.0
        elif value >= a:
            out[k] = 1.0
        elif d == 1:
            out[k] = 0.5 * np.exp((value - a) / 2)
        else:
            # Given R = r the event is C <= c*(r, ell), with c* < -1 (probability 0) for r < (a - ell)/2;
            # above that point the integrand is smooth, with a square-root start for d = 2 (alg="alg" weight).
            radius = stats.gamma(a=d)
            lo = (a - value) / 2
            hi = max(lo + 1.0, radius.ppf(1 - 1e-16))
            total = integrate.quad(lambda r: radius.pdf(r) * _conditional_cdf(value, r, a, d), lo, hi,
                                   epsabs=1e-14, epsrel=1e-12, limit=400)[0]
            out[k] = min(1.0, total)
    return out if np.ndim(ell) else float(out[0])


def sensitivity_method_loss_moment(a, d, function):
    r""":math:`\mathbb{E}[f(L)]` for Algorithm 1's privacy loss (output drawn on :math:`D`), by quadrature.

    ``function`` must be vectorised. For ``d = 1`` the explicit law of :func:`sensitivity_method_loss_cdf`
    is used; for ``d >= 2``, :math:`\mathbb{E} f(L) = \int\gamma_d(r)\int f(\sqrt{r^2 + 2arc + a^2} - r)\,g_d(c)\,dc\,dr`
    with :math:`g_d` the density of :math:`C`. Identities such as :math:`\mathbb{E}[e^{-L}] = 1` check the law.
    """
    a = check_positive_finite(a, "a")
    d = _check_dim(d)
    if d == 1:
        inner = integrate.quad(lambda s: function(np.array([s]))[0] * 0.25 * np.exp((s - a) / 2), -a, a,
                               epsabs=1e-13, epsrel=1e-12)[0]
        return float(0.5 * function(np.array([a]))[0] + 0.5 * np.exp(-a) * function(np.array([-a]))[0] + inner)
    # C = cos(theta) with theta on [0, pi] of density sin^(d-2)(theta) / B((d-1)/2, 1/2): smooth for every d >= 2
    nodes, weights = np.polynomial.legendre.leggauss(400)
    theta = (nodes + 1) * np.pi / 2
    c = np.cos(theta)
    g = np.sin(theta) ** (d - 2) / special.beta((d - 1) / 2, 0.5) * np.pi / 2
    radius = stats.gamma(a=d)

    def inner(r):
        values = function(np.sqrt(np.maximum(r * r + 2 * a * r * c + a * a, 0.0)) - r)
        return float(np.sum(weights * g * values))

    hi = radius.ppf(1 - 1e-15)
    return float(integrate.quad(lambda r: radius.pdf(r) * inner(r), 0.0, hi, epsabs=1e-13, epsrel=1e-11,
                                limit=400)[0])


# ----------------------------------------------------------------------------------------------
# The expected test error of Algorithm 1, and when it can exceed one half
# ----------------------------------------------------------------------------------------------
def normalised_margins(w, X, y):
    r""":math:`\rho_i = y_i w^\top x_i / \lVert x_i\rVert`: the margin of each record divided by its norm.

    Records with :math:`x_i = 0` get :math:`\rho_i = 0`.
    """
    X = np.asarray(X, dtype=float)
    norms = np.linalg.norm(X, axis=1)
    margins = np.asarray(y, dtype=float) * (X @ np.asarray(w, dtype=float))
    return np.where(norms > 0, margins / np.where(norms > 0, norms, 1.0), 0.0)


def margin_tail_dominance(rho):
    r"""Smallest value over :math:`t \ge 0` of :math:`\#\{i: \rho_i > t\} - \#\{i: \rho_i < -t\}`.

    Non-negative exactly when, at every level :math:`t`, at least as many records are classified correctly
    with normalised margin above :math:`t` as are misclassified with normalised margin below :math:`-t`:
    the condition under which Algorithm 1's expected error cannot exceed one half at any noise level.
    """
    rho = np.asarray(rho, dtype=float)
    levels = np.unique(np.abs(rho))
    levels = np.concatenate([[0.0], levels])
    srt_pos = np.sort(rho[rho > 0])
    srt_neg = np.sort(-rho[rho < 0])
    above = srt_pos.size - np.searchsorted(srt_pos, levels, side="right")  # #{rho > t}
    below = srt_neg.size - np.searchsorted(srt_neg, levels, side="right")  # #{rho < -t}
    return int(np.min(above - below))


def projection_tail(s, beta, d, n_nodes=400):
    r""":math:`\Pr[\langle\eta, e\rangle \ge s]` for :math:`h(\eta) \propto e^{-\beta\lVert\eta\rVert}` and a unit vector :math:`e`,
    vectorised over ``s``.

    With :math:`\eta = R\,U`, :math:`R \sim \Gamma(d, 1/\beta)` independent of :math:`\langle U, e\rangle = \cos\theta`,
    whose angle :math:`\theta \in [0, \pi]` has density :math:`\sin^{d-2}\theta / B(\frac{d-1}2, \frac12)`, for
    :math:`s \ge 0`: :math:`\Pr[\langle\eta, e\rangle \ge s] = \int_0^{\pi/2} \frac{\sin^{d-2}\theta}{B(\frac{d-1}2,\frac12)}\,
    Q\big(d, \beta s/\cos\theta\big)\,d\theta` with :math:`Q` the regularised upper incomplete gamma function
    (Gauss–Legendre in :math:`\theta`; the integrand is smooth). :math:`\frac12 e^{-\beta s}` for :math:`d = 1`;
    symmetry for :math:`s < 0`. Agrees with :func:`dplr.analysis.privacy_loss.vector_laplace_halfspace_probability` (tested).
    """
    beta = check_positive_finite(beta, "beta")
    d = _check_dim(d)
    s = np.asarray(s, dtype=float)
    a = np.abs(s)
    if d == 1:
        t = 0.5 * np.exp(-beta * a)
    else:
        nodes, weights = np.polynomial.legendre.leggauss(n_nodes)
        theta = (nodes + 1) * np.pi / 4  # [0, pi/2]
        w = weights * np.pi / 4 * np.sin(theta) ** (d - 2) / special.beta((d - 1) / 2, 0.5)
        x = beta * a[..., None] / np.cos(theta)
        t = np.sum(w * special.gammaincc(d, x), axis=-1)
    return np.where(s >= 0, t, 1.0 - t)


def sensitivity_method_expected_error(w_star, X, y, beta):
    r"""Exact :math:`\mathbb{E}_\eta[\text{error of } w^* + \eta]` on ``(X, y)`` for Algorithm 1's noise (rate ``beta``).

    A record is misclassified when :math:`y_i(w^* + \eta)^\top x_i \le 0`, i.e. when
    :math:`\langle\eta, -y_i x_i/\lVert x_i\rVert\rangle \ge \rho_i` (ties have probability 0 for
    :math:`x_i \ne 0`); by rotation invariance its probability is the tail of one coordinate of the noise
    (:func:`projection_tail`) at :math:`\rho_i`. A record with :math:`x_i = 0` has score 0, predicted :math:`-1`.
    """
    beta = check_positive_finite(beta, "beta")
    X = np.asarray(X, dtype=float)
    y = np.asarray(y, dtype=float)
    rho = normalised_margins(w_star, X, y)
    zero = np.linalg.norm(X, axis=1) == 0
    p = projection_tail(rho, beta, X.shape[1])
    return float(np.mean(np.where(zero, (y > 0).astype(float), p)))


# ----------------------------------------------------------------------------------------------
# Elastic net
# ----------------------------------------------------------------------------------------------
def elastic_net_erm(X, y, lam, mu, loss="logistic", huber_h=0.5, tol=1e-13):
    r""":math:`\arg\min_w \frac\lambda2\lVert w\rVert^2 + \mu\lVert w\rVert_1 + \frac1n\sum_i\ell(y_i w^\top x_i)`.

    :math:`\lambda`-strongly convex but not differentiable. Solved as a smooth bound-constrained problem in
    :math:`w = p - q`, :math:`p, q \ge 0` (L-BFGS-B, :func:`dplr.analysis.lasso.l1_regularized_erm`); certify
    with :func:`elastic_net_kkt_violation`.
    """
    lam = check_lambda(lam)
    if not np.isfinite(mu) or mu < 0:
        raise ValueError(f"mu must be a finite non-negative number, got {mu!r}.")
    return l1_regularized_erm(X, y, mu, get_loss(loss, huber_h), ridge=lam, tol=tol, max_iterations=50_000)


def elastic_net_kkt_violation(w, X, y, lam, mu, loss="logistic", huber_h=0.5, zero_tol=1e-9):
    r"""Largest violation of :math:`0 \in \lambda w + \mu\,\partial\lVert w\rVert_1 + \frac1n\sum_i\ell'(y_i w^\top x_i)y_i x_i`."""
    loss = get_loss(loss, huber_h)
    U = np.asarray(X, dtype=float) * np.asarray(y, dtype=float)[:, None]
    w = np.asarray(w, dtype=float)
    g = loss.derivative(U @ w) @ U / U.shape[0] + lam * w
    active = np.abs(w) > zero_tol
    violation = np.where(active, np.abs(g + mu * np.sign(w)), np.maximum(np.abs(g) - mu, 0.0))
    return float(violation.max())


# ----------------------------------------------------------------------------------------------
# Exponential mechanism and add/remove neighbours
# ----------------------------------------------------------------------------------------------
def exponential_mechanism_log_ratios(utilities, utilities_prime, epsilon, sensitivity=1.0):
    r""":math:`\log p_i(u)/p_i(u')` for every candidate :math:`i`, with :math:`p_i(u) \propto e^{\varepsilon u_i/(2\Delta u)}`.

    ``utilities`` may have shape ``(m,)`` or ``(k, m)`` (k pairs). Computed from log-sum-exp, independently of
    :func:`dplr.tuning.exponential_mechanism`, so the two can be compared.
    """
    epsilon = check_positive_finite(epsilon, "epsilon")
    sensitivity = check_positive_finite(sensitivity, "sensitivity")
    u = np.asarray(utilities, dtype=float) * epsilon / (2 * sensitivity)
    v = np.asarray(utilities_prime, dtype=float) * epsilon / (2 * sensitivity)
    log_p = u - special.logsumexp(u, axis=-1, keepdims=True)
    log_q = v - special.logsumexp(v, axis=-1, keepdims=True)
    return log_p - log_q


def add_remove_sensitivity_bound(n, lam, lipschitz=1.0):
    r"""L2 sensitivity bound :math:`2L/((n+1)\lambda)` of the minimiser between :math:`n` and :math:`n+1` records.

    For :math:`D` with :math:`n` records and :math:`D^+ = D \cup \{z\}`, both objectives averaging their loss
    with the same :math:`\lambda`: Lemma 1 with :math:`G = J_D` and the (non-convex) difference
    :math:`g = J_{D^+} - J_D` (book: *The privacy toolkit*, add/remove neighbours).
    """
    return 2.0 * lipschitz / ((check_positive_integer(n, "n") + 1) * check_lambda(lam))

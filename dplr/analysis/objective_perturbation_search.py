r"""The largest privacy loss of Algorithm 2: adversarial search over anchors, the replaced pair and the output.

For Algorithm 2 (objective perturbation; Chaudhuri & Monteleoni, NIPS 2008, Section 4; the corrected form of
Chaudhuri, Monteleoni & Sarwate, JMLR 12, 2011, Algorithm 2) the output density is
:math:`p_D(w) = \nu(b_D(w))\,|\det\nabla b_D(w)|` (:mod:`dplr.analysis.privacy_loss`), so the privacy loss of a neighbouring
pair :math:`D = S\cup\{u\}`, :math:`D' = S\cup\{u'\}` (records :math:`u_i = y_i x_i` in the unit ball) at an output
:math:`w` is, with :math:`\mu = n(\lambda+\Delta)`,

.. math::

    L(w) = \beta\big(\lVert b_S - r'\rVert - \lVert b_S - r\rVert\big)
           + \log\big(1 + \ell''(u^\top w)\,u^\top A_S^{-1}u\big)
           - \log\big(1 + \ell''(u'^\top w)\,u'^\top A_S^{-1}u'\big),

    b_S = -\mu w - \sum_{i \in S}\ell'(u_i^\top w)\,u_i, \qquad
    A_S = \mu I + \sum_{i\in S}\ell''(u_i^\top w)\,u_iu_i^\top, \qquad r = \ell'(u^\top w)\,u .

The adversary controls everything in it: the shared records :math:`S`, the replaced pair :math:`(u, u')` and the
output :math:`w`. :func:`search_privacy_loss` maximises :math:`L` over all of them, with the shared records in a few
*anchor groups* of identical records (vectors :math:`v_k`, multiplicities :math:`m_k`, the remaining shared records
at the origin, where they add neither gradient nor curvature) -- the structure of the worst pairs of
:mod:`dplr.analysis.sensitivity`. It is a batched multi-start gradient ascent (Adam) with analytic gradients, first with
continuous multiplicities, then with integer ones. Every value it returns is the exact loss of an explicit pair
of data sets and an explicit output, recomputed with :func:`dplr.analysis.privacy_loss.objective_perturbation_privacy_loss`:
a **lower bound** on the supremum over all pairs of that size. Upper bounds come only from proofs:

* :func:`coupled_privacy_bound`: :math:`\sup_z\,\beta(1 + |\ell'(z)|) + \log(1 + \ell''(z)/\mu)`; the gradient
  and the curvature of the replaced record are evaluated at the same margin (the theory chapter proves it).
  For the logistic loss this is :math:`\max_{p\in[0,1]}\beta(1+p) + \log(1 + p(1-p)/\mu)`, which is at most
  :math:`2\beta` -- i.e. the NIPS 2008 form is ε-DP -- exactly when :math:`n\lambda \ge 2/\varepsilon`
  (:func:`nips2008_private_threshold`). For the Huber loss it is :math:`2\beta + \log(1 + c/\mu)`, attained by an
  explicit pair for every :math:`n \ge 2` (:func:`huber_attaining_pair`).
* For the logistic loss the coupled bound is the supremum over all :math:`n, \lambda` with the same
  :math:`\mu = n(\lambda+\Delta)`: :func:`limit_construction` gives pairs that approach it as :math:`\lambda \to 0`.

This module is over 400 lines because the proven bound, the constructions that attain it and the search that
checks it against all pairs share one parameterisation of a pair (:class:`AnchoredConfiguration`, its loss and
gradient); split apart, each part would import the others' private helpers.
"""
from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from dplr.analysis.neighbours import NeighbouringPair
from dplr.analysis.privacy_loss import objective_perturbation_privacy_loss
from dplr.analysis.sensitivity import project_rows
from dplr.ball import check_rows_in_ball_exactly, uniform_in_ball
from dplr.calibration import OBJECTIVE_PERTURBATION_FORMS, objective_perturbation_calibration
from dplr.losses import HuberLoss, LogisticLoss, get_loss
from dplr.threads import one_blas_thread
from dplr.validation import check_epsilon, check_lambda, check_random_state

__all__ = [
    "coupled_privacy_bound",
    "nips2008_private_threshold",
    "AnchoredConfiguration",
    "WorstCase",
    "anchored_loss_and_gradient",
    "search_privacy_loss",
    "evaluate_worst_case",
    "worst_case_from_dict",
    "pin_worst_cases",
    "limit_construction",
    "huber_attaining_pair",
]


# ----------------------------------------------------------------------------------------------
# Proven upper bounds
# ----------------------------------------------------------------------------------------------
def _rate_and_mu(epsilon, n, lam, loss, form):
    if form not in OBJECTIVE_PERTURBATION_FORMS:
        raise ValueError(f"form must be one of {OBJECTIVE_PERTURBATION_FORMS}, got {form!r}.")
    cal = objective_perturbation_calibration(epsilon, n, lam, loss.curvature, loss.lipschitz, form)
    return cal.noise_rate, n * (lam + cal.ridge)


def _logistic_best_p(beta, mu):
    r"""argmax over p in [0, 1] of beta(1 + p) + log(1 + p(1 - p)/mu): concave, so the root of the derivative, clipped."""
    beta, mu = np.asarray(beta, dtype=float), np.asarray(mu, dtype=float)
    # d/dp = beta + (1 - 2p)/(mu + p - p^2) = 0  <=>  beta p^2 + (2 - beta) p - (beta mu + 1) = 0
    root = (-(2.0 - beta) + np.sqrt((2.0 - beta) ** 2 + 4.0 * beta * (beta * mu + 1.0))) / (2.0 * beta)
    return np.clip(root, 0.0, 1.0)


def coupled_privacy_bound(epsilon, n, lam, loss="logistic", form="corrected", huber_h=0.5):
    r"""Proven upper bound on :math:`\sup_{D, D', w} |\log p_D(w)/p_{D'}(w)|` for Algorithm 2 with ``n`` records.

    .. math::

        U = \sup_{z\in\mathbb{R}}\ \beta\big(1 + |\ell'(z)|\big) + \log\Big(1 + \frac{\ell''(z)}{\mu}\Big),
        \qquad \mu = n(\lambda + \Delta),

    with :math:`\beta` and :math:`\Delta` of the form's calibration. Proof (theory chapter): the noise term is at
    most :math:`\beta\lVert r - r'\rVert \le \beta(|\ell'(u^\top w)| + 1)`, the Jacobian term at most
    :math:`\log(1 + \ell''(u^\top w)/\mu)` (matrix determinant lemma, :math:`A_S \succeq \mu I`), and both involve
    the margin :math:`z = u^\top w` of the same record. Logistic loss: :math:`\ell''(z) = p(1 - p)` with
    :math:`p = |\ell'(z)|`, so :math:`U = \max_{p\in[0,1]}\beta(1+p) + \log(1 + p(1-p)/\mu)` (a concave
    maximisation, solved in closed form). Huber loss: :math:`|\ell'| = 1` and :math:`\ell'' = c` at the kink
    :math:`z = 1 - h`, so :math:`U = 2\beta + \log(1 + c/\mu)`, the bound of
    :func:`dplr.analysis.privacy_loss.objective_perturbation_privacy_bound`. For the corrected form :math:`U < \varepsilon`.
    """
    loss = get_loss(loss, huber_h)
    check_epsilon(epsilon)
    check_lambda(lam)
    beta, mu = _rate_and_mu(epsilon, n, lam, loss, form)
    if isinstance(loss, HuberLoss):
        return float(2.0 * beta + np.log1p(loss.curvature / mu))
    p = _logistic_best_p(beta, mu)
    return float(beta * (1.0 + p) + np.log1p(p * (1.0 - p) / mu))


def nips2008_private_threshold(epsilon, loss="logistic", huber_h=0.5):
    r"""The :math:`n\lambda` from which the NIPS 2008 form is *proven* ε-DP: :math:`2/\varepsilon` (logistic), never (Huber).

    Logistic loss: :math:`U(\beta = \varepsilon/2, \mu = n\lambda)` of :func:`coupled_privacy_bound` equals
    :math:`\varepsilon` exactly when the concave function :math:`\beta(1+p) + \log(1 + p(1-p)/\mu)` is maximal at
    :math:`p = 1`, i.e. when its slope there, :math:`\beta - 1/\mu`, is :math:`\ge 0`. Below the threshold
    :func:`limit_construction` shows the bound is approached (for small enough :math:`\lambda`), so no proof of
    the form ":math:`U \le \varepsilon`" can hold there for every :math:`n`. Huber loss: the bound
    :math:`\varepsilon + \log(1 + c/(n\lambda))` is attained (:func:`huber_attaining_pair`), returns ``inf``.
    """
    loss = get_loss(loss, huber_h)
    epsilon = check_epsilon(epsilon)
    if isinstance(loss, HuberLoss):
        return float("inf")
    return 2.0 * loss.lipschitz / epsilon


# ----------------------------------------------------------------------------------------------
# The anchored loss and its gradient, batched
# ----------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class AnchoredConfiguration:
    r"""A batch of adversary's choices (leading dimension ``B``).

    ``w`` (B, d): outputs. ``anchors`` (B, K, d): anchor vectors :math:`v_k` in the unit ball. ``multiplicity``
    (B, K): how many shared records sit at each anchor (real numbers during the search). ``record``,
    ``record_prime`` (B, d): :math:`u` (in :math:`D`) and :math:`u'` (in :math:`D'`), in the unit ball. The other
    shared records sit at the origin.
    """

    w: np.ndarray
    anchors: np.ndarray
    multiplicity: np.ndarray
    record: np.ndarray
    record_prime: np.ndarray


def _third_derivative(loss, z):
    if isinstance(loss, LogisticLoss):
        return loss.third_derivative(z)
    return np.zeros_like(z)  # Huber: piecewise quadratic, l''' = 0 wherever it exists


def anchored_loss_and_gradient(config: AnchoredConfiguration, mu, beta, loss, gradient=True):
    r"""Privacy loss :math:`L` of every configuration in a batch, its two parts, and its gradient.

    ``mu`` and ``beta`` are arrays of shape ``(B,)`` (:math:`\mu = n(\lambda+\Delta)`, noise rate). Returns
    ``(total, noise, jacobian, grads)`` with ``grads`` an :class:`AnchoredConfiguration` of partial derivatives of
    ``total`` (``None`` when ``gradient=False``). The formulas are in the module docstring; the noise term is
    computed as :math:`\beta\,(P - Q)\cdot(P + Q)/(\lVert P\rVert + \lVert Q\rVert)` so that it does not cancel
    when :math:`b_S` is large.
    """
    loss = get_loss(loss)
    w, V, m, u, up = config.w, config.anchors, config.multiplicity, config.record, config.record_prime
    mu = np.asarray(mu, dtype=float)
    beta = np.asarray(beta, dtype=float)
    B, K, d = V.shape
    zk = np.einsum("bkd,bd->bk", V, w)
    gk, hk, tk = loss.derivative(zk), loss.second_derivative(zk), _third_derivative(loss, zk)
    b = -mu[:, None] * w - np.einsum("bk,bkd->bd", m * gk, V)
    A = np.einsum("bk,bki,bkj->bij", m * hk, V, V)
    A[:, np.arange(d), np.arange(d)] += mu[:, None]
    Ai = np.linalg.inv(A)

    def record_parts(x):
        z = np.einsum("bd,bd->b", x, w)
        g, h, t = loss.derivative(z), loss.second_derivative(z), _third_derivative(loss, z)
        a = np.einsum("bij,bj->bi", Ai, x)
        kappa = np.einsum("bd,bd->b", x, a)
        return g, h, t, a, kappa

    g, h, t, a, kap = record_parts(u)
    gp, hp, tp, ap, kapp = record_parts(up)
    r, rp = g[:, None] * u, gp[:, None] * up
    Q, P = b - r, b - rp  # b_D(w), b_D'(w)
    nQ, nP = np.linalg.norm(Q, axis=1), np.linalg.norm(P, axis=1)
    denom = nP + nQ
    safe = np.where(denom > 0, denom, 1.0)
    noise = beta * np.where(denom > 0, np.einsum("bd,bd->b", r - rp, P + Q) / safe, 0.0)
    jac = np.log1p(h * kap) - np.log1p(hp * kapp)
    total = noise + jac
    if not gradient:
        return total, noise, jac, None

    eQ = Q / np.where(nQ > 0, nQ, 1.0)[:, None]
    eP = P / np.where(nP > 0, nP, 1.0)[:, None]
    Gb = beta[:, None] * (eP - eQ)  # d noise / d b_S
    GbV = np.einsum("bd,bkd->bk", Gb, V)
    gam, gamp = 1.0 / (1.0 + h * kap), 1.0 / (1.0 + hp * kapp)
    aV, apV = np.einsum("bd,bkd->bk", a, V), np.einsum("bd,bkd->bk", ap, V)

    # output w
    Gw = (-mu[:, None] * Gb - np.einsum("bk,bkd->bd", m * hk * GbV, V)
          + (beta * h * np.einsum("bd,bd->b", eQ, u))[:, None] * u
          - (beta * hp * np.einsum("bd,bd->b", eP, up))[:, None] * up
          + (gam * t * kap)[:, None] * u - (gam * h)[:, None] * np.einsum("bk,bkd->bd", m * tk * aV**2, V)
          - (gamp * tp * kapp)[:, None] * up + (gamp * hp)[:, None] * np.einsum("bk,bkd->bd", m * tk * apV**2, V))
    # replaced records
    Gu = (beta[:, None] * ((h * np.einsum("bd,bd->b", eQ, u))[:, None] * w + g[:, None] * eQ)
          + gam[:, None] * ((t * kap)[:, None] * w + 2.0 * h[:, None] * a))
    Gup = (-beta[:, None] * ((hp * np.einsum("bd,bd->b", eP, up))[:, None] * w + gp[:, None] * eP)
           - gamp[:, None] * ((tp * kapp)[:, None] * w + 2.0 * hp[:, None] * ap))
    # anchors and multiplicities
    GV = (-m[:, :, None] * ((hk * GbV)[:, :, None] * w[:, None, :] + gk[:, :, None] * Gb[:, None, :])
          - (gam * h)[:, None, None] * (m * tk * aV**2)[:, :, None] * w[:, None, :]
          - (gam * h)[:, None, None] * (2.0 * m * hk * aV)[:, :, None] * a[:, None, :]
          + (gamp * hp)[:, None, None] * (m * tk * apV**2)[:, :, None] * w[:, None, :]
          + (gamp * hp)[:, None, None] * (2.0 * m * hk * apV)[:, :, None] * ap[:, None, :])
    Gm = -gk * GbV - (gam * h)[:, None] * hk * aV**2 + (gamp * hp)[:, None] * hk * apV**2
    return total, noise, jac, AnchoredConfiguration(Gw, GV, Gm, Gu, Gup)


# ----------------------------------------------------------------------------------------------
# Parameterisation for the ascent
# ----------------------------------------------------------------------------------------------
_LOG_RADIUS = (-6.0, 9.0)  # |w| between 2.5e-3 and 8.1e3


def _unpack(theta, n_shared, fixed_m):
    rho = np.clip(theta["rho"], *_LOG_RADIUS)
    xw = theta["xw"]
    xn = np.linalg.norm(xw, axis=1)
    xn = np.where(xn > 0, xn, 1.0)
    w = np.exp(rho)[:, None] * xw / xn[:, None]
    if fixed_m is None:
        logits = theta["logits"] - theta["logits"].max(axis=1, keepdims=True)
        omega = np.exp(logits)
        omega /= omega.sum(axis=1, keepdims=True)
        m = n_shared[:, None] * omega[:, :-1]
    else:
        omega, m = None, fixed_m
    config = AnchoredConfiguration(w, project_rows(theta["V"]), m, project_rows(theta["u"]), project_rows(theta["up"]))
    return config, omega, xn


def _project_gradient(x, grad):
    """Gradient with respect to x of a function of x/max(1, |x|) (rows of the last axis)."""
    n = np.linalg.norm(x, axis=-1, keepdims=True)
    unit = x / np.where(n > 0, n, 1.0)
    outside = n > 1.0
    tangential = (grad - np.sum(grad * unit, axis=-1, keepdims=True) * unit) / np.where(outside, n, 1.0)
    return np.where(outside, tangential, grad)


def _param_gradient(theta, grads, config, omega, xn, n_shared, fixed_m):
    w = config.w
    what = w / np.linalg.norm(w, axis=1, keepdims=True)
    gw_dot = np.einsum("bd,bd->b", grads.w, w)
    inside = (theta["rho"] > _LOG_RADIUS[0]) & (theta["rho"] < _LOG_RADIUS[1])
    out = {
        "rho": np.where(inside, gw_dot, 0.0),
        "xw": (grads.w - np.einsum("bd,bd->b", grads.w, what)[:, None] * what)
        * (np.linalg.norm(w, axis=1) / xn)[:, None],
        "V": _project_gradient(theta["V"], grads.anchors),
        "u": _project_gradient(theta["u"], grads.record),
        "up": _project_gradient(theta["up"], grads.record_prime),
    }
    if fixed_m is None:
        g_omega = np.concatenate([n_shared[:, None] * grads.multiplicity, np.zeros((w.shape[0], 1))], axis=1)
        out["logits"] = omega * (g_omega - np.sum(omega * g_omega, axis=1, keepdims=True))
    return out


_LEARNING_RATES = {"rho": 0.2, "xw": 0.2, "V": 0.12, "u": 0.12, "up": 0.12, "logits": 0.4}


def _adam_ascent(theta, n_shared, mu, beta, loss, n_steps, fixed_m=None, lr=(1.0, 1e-2)):
    """Maximise the loss of every row by Adam; return the best parameters met by each row and their values."""
    keys = [k for k in theta if fixed_m is None or k != "logits"]
    first = {k: np.zeros_like(theta[k]) for k in keys}
    second = {k: np.zeros_like(theta[k]) for k in keys}
    best_val = np.full(mu.shape[0], -np.inf)
    best = {k: v.copy() for k, v in theta.items()}
    schedule = np.geomspace(lr[0], lr[1], max(n_steps, 1))
    b1, b2 = 0.9, 0.999
    for step in range(n_steps + 1):
        config, omega, xn = _unpack(theta, n_shared, fixed_m)
        total, _, _, grads = anchored_loss_and_gradient(config, mu, beta, loss, gradient=step < n_steps)
        improved = np.isfinite(total) & (total > best_val)
        best_val = np.where(improved, total, best_val)
        for k in theta:
            best[k][improved] = theta[k][improved]
        if step == n_steps:
            break
        pg = _param_gradient(theta, grads, config, omega, xn, n_shared, fixed_m)
        for k in keys:
            gk = np.nan_to_num(pg[k], nan=0.0, posinf=0.0, neginf=0.0)
            first[k] = b1 * first[k] + (1 - b1) * gk
            second[k] = b2 * second[k] + (1 - b2) * gk**2
            m_hat = first[k] / (1 - b1 ** (step + 1))
            v_hat = second[k] / (1 - b2 ** (step + 1))
            theta[k] = theta[k] + _LEARNING_RATES[k] * schedule[step] * m_hat / (np.sqrt(v_hat) + 1e-12)
        for k in ("V", "u", "up"):  # keep the raw records in the ball: the map is then the identity there
            theta[k] = project_rows(theta[k])
    return best, best_val


# ----------------------------------------------------------------------------------------------
# Starts
# ----------------------------------------------------------------------------------------------
def _random_starts(rng, n_rows, d, n_groups):
    theta = {
        "rho": rng.uniform(-2.0, 6.0, n_rows),
        "xw": rng.standard_normal((n_rows, d)),
        "V": uniform_in_ball(rng, (n_rows, n_groups, d)),
        "logits": rng.normal(0.0, 2.0, (n_rows, n_groups + 1)),
        "u": uniform_in_ball(rng, (n_rows, d)),
        "up": uniform_in_ball(rng, (n_rows, d)),
    }
    return theta


def _structured_start(kind, n, lam, epsilon, form, loss, d, n_groups):
    """Parameters of a known construction (one row), or None when it does not apply."""
    if kind == "limit" and isinstance(loss, LogisticLoss) and d >= 2 and n >= 3:
        config = limit_construction(epsilon, n, lam, d=d, form=form)
    elif kind == "huber" and isinstance(loss, HuberLoss) and n >= 2:
        config = _huber_configuration(loss, d)
    else:
        return None
    k0 = config.anchors.shape[0]
    V = np.zeros((n_groups, d))
    m = np.zeros(n_groups)
    V[:min(k0, n_groups)] = config.anchors[:n_groups]
    m[:min(k0, n_groups)] = config.multiplicity[:n_groups]
    omega = np.r_[m, max(n - 1 - m.sum(), 0.0)] / (n - 1)
    R = np.linalg.norm(config.w)
    return {"rho": np.array([np.log(R)]), "xw": config.w[None, :] / R, "V": V[None],
            "logits": np.log(np.maximum(omega, 1e-12))[None], "u": config.record[None],
            "up": config.record_prime[None]}


# ----------------------------------------------------------------------------------------------
# Results
# ----------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class WorstCase:
    r"""The largest privacy loss found for one setting, the explicit pair and output that attain it.

    ``value`` :math:`= \log p_D(w)/p_{D'}(w)` at ``w`` for :meth:`pair` (``noise`` + ``jacobian``), computed
    by :func:`dplr.analysis.privacy_loss.objective_perturbation_privacy_loss` on all ``n`` records: a lower bound on the
    supremum over neighbouring pairs of size ``n``. ``upper_bound`` is :func:`coupled_privacy_bound`. The shared
    records are ``multiplicity[k]`` copies of ``anchors[k]`` (as :math:`u = yx`, label +1) and the rest at the
    origin; the replaced record is ``record`` in :math:`D` and ``record_prime`` in :math:`D'`.
    """

    n: int
    lam: float
    epsilon: float
    form: str
    loss: str
    value: float
    noise: float
    jacobian: float
    upper_bound: float
    w: np.ndarray
    anchors: np.ndarray
    multiplicity: np.ndarray
    record: np.ndarray
    record_prime: np.ndarray

    @property
    def d(self) -> int:
        return self.w.shape[0]

    def pair(self) -> NeighbouringPair:
        """The neighbouring pair :math:`(D, D')` as arrays of ``n`` rows."""
        return _build_pair(self.n, self.anchors, self.multiplicity, self.record, self.record_prime)

    def to_dict(self) -> dict:
        """The configuration as plain JSON types (floats round-trip exactly); the values are left out, since
        :func:`worst_case_from_dict` recomputes them."""
        return {"n": self.n, "lam": self.lam, "epsilon": self.epsilon, "form": self.form, "loss": self.loss,
                "w": self.w.tolist(), "anchors": self.anchors.tolist(), "multiplicity": self.multiplicity.tolist(),
                "record": self.record.tolist(), "record_prime": self.record_prime.tolist()}

    def canonical(self) -> "WorstCase":
        r"""The same configuration rotated (and reflected) so that :math:`w = \lVert w\rVert e_1` and ``record`` has
        non-negative coordinates 2..d after the first (its component orthogonal to :math:`w` along :math:`+e_2`).

        The loss is invariant under any orthogonal map applied to :math:`w` and every record, so each worst case
        has a family of mirror images; this picks one representative (for plots and tables).
        """
        d = self.d
        basis = [self.w, self.record, self.record_prime, *self.anchors, *np.eye(d)]
        frame = []
        for v in basis:  # Gram-Schmidt: e1 along w, e2 along the part of u orthogonal to w, ...
            v = np.asarray(v, dtype=float).copy()
            for q in frame:
                v -= (v @ q) * q
            if np.linalg.norm(v) > 1e-9 * max(1.0, np.linalg.norm(self.w)) and len(frame) < d:
                frame.append(v / np.linalg.norm(v))
        Q = np.vstack(frame)  # rows: the new axes

        def rot(x):
            return _inside_ball(Q @ x) if np.linalg.norm(x) <= 1.0 else Q @ x

        return WorstCase(self.n, self.lam, self.epsilon, self.form, self.loss, self.value, self.noise, self.jacobian,
                         self.upper_bound, Q @ self.w, np.vstack([rot(v) for v in self.anchors]),
                         self.multiplicity.copy(), rot(self.record), rot(self.record_prime))


def _build_pair(n, anchors, multiplicity, record, record_prime):
    d = record.shape[0]
    rows = [np.repeat(v[None, :], int(k), axis=0) for v, k in zip(anchors, multiplicity) if k > 0]
    shared = np.vstack(rows) if rows else np.zeros((0, d))
    shared = np.vstack([shared, np.zeros((n - 1 - shared.shape[0], d))])
    return NeighbouringPair.from_records(shared, np.ones(n - 1), record, 1.0, record_prime, 1.0)


def _round_multiplicities(m, n_shared):
    """Integers m_k >= 0 with sum at most n - 1, closest to the continuous ones."""
    out = np.floor(m + 0.5)
    over = out.sum(axis=1) - n_shared
    for row in np.flatnonzero(over > 0):  # rounding up too often: take the excess from the largest groups
        for _ in range(int(over[row])):
            out[row, np.argmax(out[row])] -= 1
    return np.maximum(out, 0.0)


def _inside_ball(x):
    """Rows scaled onto the unit ball, then inside it exactly, the rows inside kept bit for bit (the constructions put
    records on the sphere on purpose: :func:`dplr.ball.check_rows_in_ball_exactly`)."""
    x = project_rows(np.asarray(x, dtype=float))
    return check_rows_in_ball_exactly(np.atleast_2d(x), refuse=False).reshape(x.shape)


def _base_entropy(random_state):
    """An integer seed from None (fresh entropy), a non-negative int, a SeedSequence or a Generator (one draw)."""
    if isinstance(random_state, np.random.SeedSequence):
        return int(random_state.generate_state(1, dtype=np.uint64)[0])
    if random_state is None:
        return int(np.random.SeedSequence().generate_state(1, dtype=np.uint64)[0])
    return int(check_random_state(random_state).integers(0, 2**63)) if isinstance(random_state, np.random.Generator) \
        else int(check_random_state(random_state) is not None and random_state)


def _setting_seed(base, setting, d, loss):
    """A seed for one setting's random starts: a function of the base seed and of the setting only, so that a
    setting gets the same starts whichever batch it is searched in."""
    n, lam, eps, form = setting
    bits = np.array([lam, eps], dtype=np.float64).view(np.uint64)
    tag = OBJECTIVE_PERTURBATION_FORMS.index(form) + 2 * (loss.name == "huber")
    return np.random.SeedSequence([base, int(n), int(bits[0]), int(bits[1]), tag, int(d)])


def _setting_arrays(settings, loss):
    n = np.array([s[0] for s in settings], dtype=float)
    beta, mu = [], []
    for n_i, lam, eps, form in settings:
        if isinstance(n_i, bool) or int(n_i) != n_i or n_i < 2:
            raise ValueError(f"n must be an integer >= 2 (a pair needs shared records), got {n_i!r}.")
        b_i, m_i = _rate_and_mu(check_epsilon(eps), int(n_i), check_lambda(lam), loss, form)
        beta.append(b_i)
        mu.append(m_i)
    return n, np.array(beta), np.array(mu)


def search_privacy_loss(settings, d, loss="logistic", huber_h=0.5, n_groups=2, n_starts=16,
                        n_steps=(600, 300, 800), n_polish=2, random_state=None) -> list[WorstCase]:
    r"""Largest privacy loss of Algorithm 2 found for each setting ``(n, lam, epsilon, form)`` in dimension ``d``.

    All settings are searched in one batch. For each: ``n_starts`` random starts (output radius log-uniform
    in :math:`[e^{-2}, e^{6}]`, anchors and records uniform in the ball, random multiplicities) plus the known
    constructions that apply (:func:`limit_construction` for the logistic loss in :math:`d \ge 2`,
    :func:`huber_attaining_pair` for the Huber loss). Phase 1: ``n_steps[0]`` Adam steps on
    :math:`(w, v_k, m_k, u, u')` with continuous multiplicities (a softmax over the ``n_groups`` anchors and the
    origin); phase 2: multiplicities rounded to integers and fixed, ``n_steps[1]`` steps on the rest; phase 3:
    the ``n_polish`` best rows of each setting, ``n_steps[2]`` more steps with a smaller, decaying step size.
    The best row of each setting is then rebuilt as explicit data sets of ``n`` records and its loss recomputed
    exactly (:func:`dplr.analysis.privacy_loss.objective_perturbation_privacy_loss`). Each setting's random starts come
    from a seed derived from ``random_state`` and the setting itself, and every row is optimised independently,
    so a setting's result does not depend on the other settings in the batch. Deterministic given an integer
    ``random_state``.
    """
    loss = get_loss(loss, huber_h)
    d = int(d)
    if d < 1:
        raise ValueError(f"d must be a positive integer, got {d!r}.")
    base = _base_entropy(random_state)
    settings = [(int(s[0]), float(s[1]), float(s[2]), str(s[3])) for s in settings]
    n_arr, beta_arr, mu_arr = _setting_arrays(settings, loss)

    blocks, owner = [], []
    for i, (n, lam, eps, form) in enumerate(settings):
        rng = np.random.default_rng(_setting_seed(base, (n, lam, eps, form), d, loss))
        starts = [_random_starts(rng, n_starts, d, n_groups)]
        for kind in ("limit", "huber"):
            s = _structured_start(kind, n, lam, eps, form, loss, d, n_groups)
            if s is not None:
                starts.append(s)
        for s in starts:
            blocks.append(s)
            owner.append(np.full(s["rho"].shape[0], i))
    theta = {k: np.concatenate([b[k] for b in blocks]) for k in blocks[0]}
    owner = np.concatenate(owner)

    def rows(index):
        n_shared = n_arr[owner[index]] - 1.0
        return n_shared, mu_arr[owner[index]], beta_arr[owner[index]]

    everything = np.arange(owner.size)
    with one_blas_thread():
        theta, _ = _adam_ascent(theta, *rows(everything), loss, n_steps[0])
        config, _, _ = _unpack(theta, rows(everything)[0], None)
        fixed = _round_multiplicities(config.multiplicity, rows(everything)[0])
        theta, values = _adam_ascent(theta, *rows(everything), loss, n_steps[1], fixed_m=fixed)
        # phase 3: the best rows of each setting (ties broken by row number), smaller steps
        order = np.lexsort((everything, -np.where(np.isfinite(values), values, -np.inf), owner))
        first = np.r_[0, np.flatnonzero(np.diff(owner[order])) + 1]
        rank = np.arange(order.size) - np.repeat(first, np.diff(np.r_[first, order.size]))
        top = np.sort(order[rank < max(n_polish, 1)])
        sub = {k: v[top].copy() for k, v in theta.items()}
        owner, fixed = owner[top], fixed[top]
        sub, values = _adam_ascent(sub, *rows(np.arange(top.size)), loss, n_steps[2], fixed_m=fixed, lr=(0.1, 1e-5))
        config, _, _ = _unpack(sub, n_arr[owner] - 1.0, fixed)

        results = []
        for i, (n, lam, eps, form) in enumerate(settings):
            candidates = np.flatnonzero(owner == i)
            row = candidates[np.argmax(np.where(np.isfinite(values[candidates]), values[candidates], -np.inf))]
            results.append(evaluate_worst_case(n, lam, eps, form, loss, config.w[row], config.anchors[row],
                                               fixed[row], config.record[row], config.record_prime[row]))
    return results


def evaluate_worst_case(n, lam, epsilon, form, loss, w, anchors, multiplicity, record, record_prime,
                        huber_h=0.5) -> WorstCase:
    r"""The :class:`WorstCase` of one explicit configuration: its pair of ``n`` records built and its loss at ``w``
    computed exactly (:func:`dplr.analysis.privacy_loss.objective_perturbation_privacy_loss`).

    Records and anchors are first scaled into the unit ball, exactly (a no-op for a
    configuration that came out of this function), so the pair is a valid input of Algorithm 2. Used by
    :func:`search_privacy_loss` for its results and by :func:`worst_case_from_dict` for recorded ones: the value
    of a recorded pair is never read from the record, it is recomputed.
    """
    loss = get_loss(loss, huber_h)
    n = int(n)
    w = np.array(w, dtype=float)
    anchors = _inside_ball(np.array(anchors, dtype=float).reshape(-1, w.shape[0]))
    multiplicity = np.asarray(multiplicity).astype(int)
    if multiplicity.sum() > n - 1 or np.any(multiplicity < 0):
        raise ValueError(f"multiplicities {multiplicity.tolist()} do not fit in {n - 1} shared records.")
    u, up = _inside_ball(np.array(record, dtype=float)), _inside_ball(np.array(record_prime, dtype=float))
    pair = _build_pair(n, anchors, multiplicity, u, up)
    terms = objective_perturbation_privacy_loss(w, pair, epsilon, lam, loss, form)
    return WorstCase(n, float(lam), float(epsilon), form, loss.name, float(terms.total), float(terms.noise),
                     float(terms.jacobian), coupled_privacy_bound(epsilon, n, lam, loss, form), w, anchors,
                     multiplicity, u, up)


def worst_case_from_dict(record: dict, huber_h=0.5) -> WorstCase:
    """A :class:`WorstCase` from :meth:`WorstCase.to_dict`: the configuration is read, its loss recomputed."""
    return evaluate_worst_case(record["n"], record["lam"], record["epsilon"], record["form"], record["loss"],
                               record["w"], record["anchors"], record["multiplicity"], record["record"],
                               record["record_prime"], huber_h=record.get("huber_h", huber_h))


def pin_worst_cases(live, path, tolerance, record=False) -> list[WorstCase]:
    r"""The recorded worst cases for the settings of ``live`` (a :func:`search_privacy_loss` result), checked against it.

    A search is a long floating-point computation: on another CPU or BLAS build its path differs and it may stop
    at slightly different pairs. To print results every machine reproduces, a chapter shows the pairs recorded
    in ``path`` (a JSON list of :meth:`WorstCase.to_dict`), each one's loss recomputed here from its records and
    output (:func:`worst_case_from_dict`), so that every value shown is the exact loss of an explicit pair -- a
    lower bound on the supremum, wherever the pair came from. The search run here must agree with the record:
    same settings in the same order, and every value within ``tolerance``:math:`\cdot\varepsilon` of the
    recorded one, else ``AssertionError`` (re-record after a change of the search). ``record=True`` writes
    ``live`` to ``path`` first.
    """
    path = Path(path)
    if record:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps([case.to_dict() for case in live], indent=None) + "\n")
    pinned = [worst_case_from_dict(entry) for entry in json.loads(path.read_text())]
    keys = [(c.n, c.lam, c.epsilon, c.form, c.loss, c.d) for c in pinned]
    if keys != [(c.n, c.lam, c.epsilon, c.form, c.loss, c.d) for c in live]:
        raise AssertionError(f"{path} records other settings than this search: re-record it (record=True).")
    gaps = [abs(a.value - b.value) / a.epsilon for a, b in zip(live, pinned)]
    worst = int(np.argmax(gaps))
    if gaps[worst] > tolerance:
        raise AssertionError(f"the search found {live[worst].value:.6g} for {keys[worst]}, the record {pinned[worst].value:.6g}: "
                             f"more than {tolerance} epsilon apart; re-record {path} if the search changed (record=True).")
    return pinned


# ----------------------------------------------------------------------------------------------
# Explicit constructions
# ----------------------------------------------------------------------------------------------
def _huber_configuration(loss, d):
    e1 = np.eye(d)[0]
    h = loss.h
    return AnchoredConfiguration(w=(1.0 - h) * e1, anchors=-e1[None, :], multiplicity=np.array([1.0]),
                                 record=e1, record_prime=-e1)


def huber_attaining_pair(n, lam, epsilon, form="nips2008", huber_h=0.5, d=2):
    r"""A pair and output at which the Huber loss attains :func:`coupled_privacy_bound` exactly (:math:`n \ge 2`).

    Shared records: one at :math:`-e_1` (label +1), the other :math:`n-2` at the origin. Replaced record
    :math:`u = e_1` in :math:`D`, :math:`u' = -e_1` in :math:`D'`; output :math:`w = (1-h)e_1`. Then
    :math:`u^\top w = 1 - h` is the kink (:math:`\ell' = -1`, :math:`\ell'' = c`), :math:`u'^\top w = -(1-h)` and
    the shared record's margin :math:`-(1-h)` lie on the linear part (:math:`\ell' = -1`, :math:`\ell'' = 0`), so
    :math:`r - r' = -2e_1`, :math:`b_D(w) = -(1 + \mu(1-h))e_1 + e_1` and :math:`b_{D'}(w) = b_D(w) - 2e_1` point the
    same way, and :math:`L = 2\beta + \log(1 + c/\mu)`. Returns ``(pair, w)``.
    """
    loss = HuberLoss(huber_h)
    if n < 2:
        raise ValueError("the construction needs n >= 2 (one shared record).")
    c = _huber_configuration(loss, d)
    return _build_pair(n, c.anchors, np.array([1]), c.record, c.record_prime), c.w


def limit_construction(epsilon, n, lam, d=2, form="nips2008", p=None, radius=None):
    r"""The anchored configuration of the theory chapter's limit argument (logistic loss, :math:`d \ge 2`).

    With :math:`\mu = n(\lambda+\Delta)`, :math:`\beta` of the form, :math:`p` the maximiser of
    :math:`\beta(1+p) + \log(1+p(1-p)/\mu)` (or the given ``p``) and :math:`z = \log((1-p)/p)`:
    output :math:`w = Re_1`; replaced record :math:`u = (z/R, \sqrt{1 - z^2/R^2})` (margin :math:`z`, so
    :math:`|\ell'| = p` and :math:`\ell'' = p(1-p)`) and :math:`u' = (-\kappa, -\sqrt{1-\kappa^2})` with
    :math:`\kappa = R^{-1/2}` (margin :math:`-\sqrt R`, gradient near :math:`-1`, curvature near 0); one shared
    record :math:`v_2 = (-\kappa, -p\sqrt{1-\kappa^2})` that cancels :math:`r` in :math:`b_S`; and :math:`m_1` shared
    records at the anchor :math:`\rho e_1`, :math:`\rho = 1.2785/R`, whose pull
    :math:`m_1\sigma(-\rho R)\rho = \mu R + \sigma(\kappa R)\kappa` cancels the regulariser's :math:`-\mu R e_1`.
    Then :math:`b_D(w) \to 0`, the noise term tends to :math:`\beta(1+p)`, the Jacobian term to
    :math:`\log(1 + p(1-p)/\mu)` as :math:`R \to \infty`, which needs :math:`m_1 \approx 3.59\,\mu R^2 \le n - 2`.
    ``radius`` defaults to the largest :math:`R` the :math:`n - 2` available records allow (capped at 1e4).
    Returns an :class:`AnchoredConfiguration` (one row, continuous :math:`m_1`).
    """
    loss = LogisticLoss()
    if d < 2:
        raise ValueError("the construction needs d >= 2.")
    beta, mu = _rate_and_mu(check_epsilon(epsilon), n, check_lambda(lam), loss, form)
    p = float(_logistic_best_p(beta, mu)) if p is None else float(p)
    p = min(max(p, 1e-6), 1.0 - 1e-6)
    z = np.log((1.0 - p) / p)
    pull = 1.2785 * _sigmoid(-1.2785)  # max_t t sigma(-t), at t = 1.2785
    if radius is None:
        # m1 = (mu R + kappa) R / pull <= n - 2  (kappa <= 1)
        radius = (-1.0 + np.sqrt(1.0 + 4.0 * mu * pull * max(n - 2, 0))) / (2.0 * mu)
        radius = float(np.clip(radius, max(abs(z), 1.0) * 1.01, 1e4))
    R = float(radius)
    kappa = min(1.0 / np.sqrt(R), 1.0)
    e = np.eye(d)
    u = z / R * e[0] + np.sqrt(max(1.0 - (z / R) ** 2, 0.0)) * e[1]
    up = -kappa * e[0] - np.sqrt(1.0 - kappa**2) * e[1]
    v2 = -kappa * e[0] - p * np.sqrt(1.0 - kappa**2) * e[1]
    rho = min(1.2785 / R, 1.0)
    m1 = (mu * R + _sigmoid(kappa * R) * kappa) / (_sigmoid(-rho * R) * rho)
    return AnchoredConfiguration(w=R * e[0], anchors=np.vstack([rho * e[0], v2]), multiplicity=np.array([m1, 1.0]),
                                 record=u, record_prime=up)


def _sigmoid(x):
    return 1.0 / (1.0 + np.exp(-x))

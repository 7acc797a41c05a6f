r"""IBM diffprivlib's objective perturbation, as a pure function: what it calibrates, and its exact privacy loss.

diffprivlib (Holohan et al. 2019, arXiv:1907.02444) fits ``diffprivlib.models.LogisticRegression`` by objective
perturbation after Chaudhuri, Monteleoni & Sarwate (JMLR 12, 2011, Algorithm 2; "CMS11") through its
``diffprivlib.mechanisms.Vector``. Read from the installed 0.6.6 source (paths under ``site-packages/diffprivlib``):

* ``models/logistic_regression.py`` l. 236: rows clipped to ``‖x‖ ≤ data_norm`` (:math:`q`); l. 358-359: with
  ``fit_intercept=True``, ``data_norm = sqrt(data_norm**2 + 1)`` (the row :math:`(x, 1)`); l. 397-400: the
  objective is scikit-learn's ``LinearModelLoss.loss_gradient`` (the *mean* logistic loss plus
  ``l2_reg_strength/2 ‖coef‖²`` with ``l2_reg_strength = 1/(C n)``; scikit-learn's ``l2_penalty`` leaves the
  intercept out) and ``Vector(epsilon, dimension = d + fit_intercept, alpha = 1/C, function_sensitivity = 0.25,
  data_sensitivity = data_norm, n = n)``.
* ``mechanisms/vector.py`` l. 149: :math:`\varepsilon' = \varepsilon - 2\log(1 + c\,s/\alpha)` with
  :math:`c` = ``function_sensitivity``, :math:`s` = ``data_sensitivity``; l. 152-155: if
  :math:`\varepsilon' \le 0`, :math:`\Delta = (c\,s/(e^{\varepsilon/4} - 1) - \alpha)/n` and
  :math:`\varepsilon' = \varepsilon/2`; l. 157: noise scale :math:`2s/\varepsilon'` (norm
  :math:`\Gamma(d, 2s/\varepsilon')` as four :math:`\Gamma(d/4)` draws, l. 160-161; direction uniform);
  l. 180-184: the objective gets :math:`b^\top w/n + \frac{\Delta}{2}\lVert w\rVert^2` (intercept included).

With :math:`\lambda = 1/(nC)` (so :math:`\alpha = n\lambda`) the objective is CMS11's,
:math:`\frac1n\sum_i\ell(y_i\tilde x_i^\top w) + \frac\lambda2\lVert w_{\text{coef}}\rVert^2 + \frac\Delta2\lVert
w\rVert^2 + b^\top w/n`. CMS11's proof (Theorem 9) needs rows in the unit ball and the regulariser on *every*
coordinate. Rows with :math:`\lVert x\rVert \le s` reduce to it by the substitution :math:`v = s w`,
:math:`z = x/s` (the loss :math:`\ell(s\,z^\top w)` has :math:`|{\rm derivative}| \le s` and curvature
:math:`\le c s^2`): the same mechanism on unit-ball rows with regulariser :math:`(\lambda+\Delta)/s^2` and noise
rate :math:`\beta s`. So the correct calibration uses :math:`c s^2/\alpha` where diffprivlib uses :math:`c s/\alpha`
(the two agree at :math:`s = 1`; diffprivlib is too small for :math:`s > 1`), and with ``fit_intercept=True`` the
intercept has no regulariser unless :math:`\Delta > 0`. :func:`diffprivlib_calibration` models what is shipped
(``corrected=False``) or the correction (``corrected=True``: dplr's
:func:`dplr.calibration.objective_perturbation_calibration` with ``curvature = c s²`` and ``lipschitz = s``, and the
intercept regularised like the coefficients). :func:`unit_ball_equivalent` maps a setting without an unregularised
coordinate to the unit-ball setting of dplr's Algorithm 2 with the same privacy loss, so that
:func:`dplr.analysis.objective_perturbation_search.coupled_privacy_bound` (a proof) and
:func:`~dplr.analysis.objective_perturbation_search.search_privacy_loss` (lower bounds) apply unchanged;
:func:`diffprivlib_privacy_loss` computes the exact loss in diffprivlib's own coordinates (any setting, intercept
included), and :func:`intercept_construction` gives pairs on which the shipped intercept has unbounded loss.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from dplr.analysis.objective_perturbation_search import coupled_privacy_bound
from dplr.analysis.privacy_loss import jacobian_log_ratio_bound
from dplr.calibration import objective_perturbation_calibration
from dplr.losses import LogisticLoss
from dplr.mechanisms import VectorLaplace
from dplr.validation import check_epsilon, check_positive_finite, check_positive_integer

__all__ = [
    "DIFFPRIVLIB_CURVATURE",
    "DiffprivlibCalibration",
    "diffprivlib_calibration",
    "unit_ball_equivalent",
    "diffprivlib_privacy_loss",
    "intercept_construction",
    "intercept_upper_bound",
    "proven_upper_bound",
]

#: diffprivlib's ``function_sensitivity`` for the logistic loss (``models/logistic_regression.py`` l. 399): the bound
#: :math:`c = 1/4` on :math:`\ell''`.
DIFFPRIVLIB_CURVATURE = 0.25


@dataclass(frozen=True)
class DiffprivlibCalibration:
    r"""What diffprivlib's ``LogisticRegression.fit`` calibrates (``corrected=False``) or should (``True``).

    ``row_norm`` :math:`s` (``data_sensitivity``: ``data_norm``, or :math:`\sqrt{q^2+1}` with an intercept);
    ``alpha`` :math:`= 1/C`; ``lam`` :math:`= 1/(nC)`, the coefficient of :math:`\frac12\lVert w_{\rm coef}\rVert^2`
    in the mean objective; ``ridge`` :math:`\Delta`, the coefficient of :math:`\frac12\lVert w\rVert^2` added by the
    mechanism (same units); ``noise_scale`` :math:`2s/\varepsilon'` and ``noise_rate`` its inverse;
    ``intercept_regularised``: whether :math:`\lambda` also applies to the intercept.
    """

    epsilon: float
    n: int
    C: float
    data_norm: float
    fit_intercept: bool
    corrected: bool
    row_norm: float
    alpha: float
    lam: float
    epsilon_prime: float
    ridge: float
    noise_scale: float
    noise_rate: float
    intercept_regularised: bool

    def regulariser(self, d) -> np.ndarray:
        r"""Diagonal of :math:`\lambda P + \Delta I` for ``d`` features (the intercept last, when fitted)."""
        diag = np.full(d + int(self.fit_intercept), self.lam + self.ridge)
        if self.fit_intercept and not self.intercept_regularised:
            diag[-1] = self.ridge
        return diag


def diffprivlib_calibration(epsilon, n, C=1.0, data_norm=1.0, fit_intercept=True, corrected=False):
    r"""diffprivlib 0.6.6's :math:`\varepsilon'`, :math:`\Delta` and noise scale, or the corrected ones.

    Shipped (``mechanisms/vector.py`` l. 149-157): :math:`\varepsilon' = \varepsilon - 2\log(1 + c s/\alpha)`;
    if :math:`\varepsilon' \le 0`: :math:`\Delta = (c s/(e^{\varepsilon/4}-1) - \alpha)/n`,
    :math:`\varepsilon' = \varepsilon/2`; scale :math:`2s/\varepsilon'`. Corrected: CMS11 Algorithm 2 for rows of
    norm :math:`s` (:func:`dplr.calibration.objective_perturbation_calibration` with ``curvature = c s²``,
    ``lipschitz = s``, :math:`\lambda = 1/(nC)`), the intercept regularised.
    """
    epsilon = check_epsilon(epsilon)
    n = check_positive_integer(n, "n")
    C = check_positive_finite(C, "C")
    q = check_positive_finite(data_norm, "data_norm")
    s = float(np.sqrt(q**2 + 1.0)) if fit_intercept else q
    alpha, lam, c = 1.0 / C, 1.0 / (n * C), DIFFPRIVLIB_CURVATURE
    if corrected:
        cal = objective_perturbation_calibration(epsilon, n, lam, curvature=c * s**2, lipschitz=s)
        eps_p, ridge = cal.epsilon_prime, cal.ridge
    else:
        eps_p, ridge = epsilon - 2.0 * np.log1p(c * s / alpha), 0.0
        if eps_p <= 0:
            ridge = (c * s / np.expm1(epsilon / 4.0) - alpha) / n
            eps_p = epsilon / 2.0
    scale = 2.0 * s / eps_p
    return DiffprivlibCalibration(epsilon, n, C, q, bool(fit_intercept), bool(corrected), s, alpha, lam,
                                  float(eps_p), float(ridge), float(scale), float(1.0 / scale),
                                  bool(corrected or not fit_intercept))


def unit_ball_equivalent(cal: DiffprivlibCalibration):
    r"""The setting ``(n, lam, epsilon, "corrected")`` of dplr's Algorithm 2 whose privacy loss equals ``cal``'s.

    Needs every coordinate regularised (no intercept, or the corrected calibration). With :math:`v = s w` and
    unit-ball rows :math:`z = x/s` the mechanism is dplr's with :math:`\mu = n(\lambda+\Delta)/s^2` and rate
    :math:`\tilde\beta = s\beta`; dplr's corrected calibration with :math:`\lambda_{eq} = \mu/n` and
    :math:`\varepsilon_{eq} = 2\tilde\beta + 2\log(1 + c/\mu)` has exactly these (:math:`\varepsilon' = 2\tilde\beta
    > 0`, so :math:`\Delta = 0`). The map :math:`w \mapsto sw` is the same for both data sets, so the loss at
    corresponding outputs is the same.
    """
    if not cal.intercept_regularised:
        raise ValueError("the unregularised intercept has no unit-ball equivalent; use diffprivlib_privacy_loss.")
    s = cal.row_norm
    mu = cal.n * (cal.lam + cal.ridge) / s**2
    beta = s * cal.noise_rate
    eps_eq = 2.0 * beta + 2.0 * np.log1p(DIFFPRIVLIB_CURVATURE / mu)
    return cal.n, float(mu / cal.n), float(eps_eq), "corrected"


def _augment(X, fit_intercept):
    X = np.atleast_2d(np.asarray(X, dtype=float))
    return np.hstack([X, np.ones((X.shape[0], 1))]) if fit_intercept else X


def _log_density(W, X, y, cal):
    r""":math:`\log\nu(b_D(w)) + \log\det\nabla b_D(w)` in diffprivlib's coordinates (labels in {0, 1} or ±1)."""
    loss = LogisticLoss()
    Xa = _augment(X, cal.fit_intercept)
    y = np.asarray(y, dtype=float)
    U = Xa * np.where(y > 0, 1.0, -1.0)[:, None]
    n, D = Xa.shape
    reg = n * cal.regulariser(D - int(cal.fit_intercept))
    W = np.atleast_2d(np.asarray(W, dtype=float))
    Z = W @ U.T
    B = -W * reg - loss.derivative(Z) @ U
    H = np.einsum("kn,ni,nj->kij", loss.second_derivative(Z), U, U)
    H[:, np.arange(D), np.arange(D)] += reg
    sign, logdet = np.linalg.slogdet(H)
    logdet = np.where(sign > 0, logdet, -np.inf)  # numerically singular: an unregularised intercept far out
    return VectorLaplace.from_rate(D, cal.noise_rate).log_density(B) + logdet, B


def diffprivlib_privacy_loss(W, X, y, X_prime, y_prime, cal: DiffprivlibCalibration):
    r"""Exact :math:`\log p_D(w)/p_{D'}(w)` of diffprivlib's mechanism at outputs ``W`` (``(k, d + fit_intercept)``).

    ``W`` is ``(coef, intercept)`` as diffprivlib's ``fit`` returns it. Density by change of variables:
    :math:`b_D(w) = -n(\lambda P + \Delta I)w - \sum_i\ell'(u_i^\top w)u_i` with :math:`u_i = y_i(x_i, 1)`
    (:math:`P` the projection on the regularised coordinates) is one-to-one (strictly convex objective), and ``w``
    is the minimiser for the noise :math:`b_D(w)`, so :math:`p_D(w) = \nu(b_D(w))\det\nabla b_D(w)` at every
    ``w``. (It is onto :math:`\mathbb{R}^{d+1}` when every coordinate is regularised; with an unregularised
    intercept some noise vectors have no minimiser, and diffprivlib then returns wherever L-BFGS stops.) Returns ``(total, noise, jacobian)``,
    arrays of shape ``(k,)``. Where :math:`\det\nabla b_D(w)` underflows to 0 in floating point (an unregularised
    intercept at a large output) its logarithm is :math:`-\infty`, and ``total`` may be infinite or NaN there.
    """
    (ld, B), (ldp, Bp) = _log_density(W, X, y, cal), _log_density(W, X_prime, y_prime, cal)
    noise = cal.noise_rate * (np.linalg.norm(Bp, axis=1) - np.linalg.norm(B, axis=1))
    return ld - ldp, noise, (ld - ldp) - noise


def intercept_construction(n, cal: DiffprivlibCalibration, t):
    r"""A pair and output (one feature and the intercept) on which the privacy loss grows with ``t``.

    Output :math:`w = (\text{coef}, \text{intercept}) = (t/q, t)`. Shared records: :math:`n-2` copies of
    :math:`x = 0` with label 1 and one with label 0 (margins :math:`\pm t`, curvature :math:`\ell''(t) \approx
    e^{-t}`; both classes, as diffprivlib requires). Replaced record: :math:`x = -q` with label 1 in :math:`D`
    (margin 0, curvature 1/4), :math:`x = 0` with label 1 in :math:`D'`. With an unregularised intercept
    (:math:`\Delta = 0`) :math:`A_S` has only :math:`(n-1)\ell''(t)` in the intercept direction, so the Jacobian
    term is :math:`\log\big(1 + \tfrac14\tilde u^\top A_S^{-1}\tilde u\big) - \log\big(1 + \tfrac1{n-1}\big)
    \approx t - \log(4(n-1))` while the noise term stays within :math:`\pm 2s\beta`: no finite ε holds.
    Returns ``(X, y, X_prime, y_prime, w)`` with labels in {0, 1}.
    """
    if n < 3:
        raise ValueError("the construction needs n >= 3.")
    q = cal.data_norm
    X = np.zeros((n, 1))
    X[-1, 0] = -q
    y = np.ones(n)
    y[0] = 0.0
    return X, y, np.zeros((n, 1)), y.copy(), np.array([t / q, t])


def intercept_upper_bound(cal: DiffprivlibCalibration):
    r"""A proven upper bound on the loss of the shipped intercept fit when :math:`\Delta > 0`; ``inf`` when :math:`\Delta = 0`.

    Noise term :math:`\le 2s\beta` (the replaced record's gradients differ by at most :math:`2s`); Jacobian term
    :math:`\le \log(1 + c s^2/(n\Delta))` (matrix determinant lemma, :math:`A_S \succeq n\Delta I`):
    :func:`dplr.analysis.privacy_loss.jacobian_log_ratio_bound` with curvature :math:`c s^2`.
    """
    if cal.ridge <= 0:
        return float("inf")
    return float(2.0 * cal.row_norm * cal.noise_rate
                 + jacobian_log_ratio_bound(cal.n, 0.0, DIFFPRIVLIB_CURVATURE * cal.row_norm**2, cal.ridge))


def proven_upper_bound(cal: DiffprivlibCalibration):
    r"""A proven upper bound on :math:`\sup_{D, D', w}|\log p_D(w)/p_{D'}(w)|` for ``cal`` (``inf``: none exists).

    Every coordinate regularised: the coupled bound of the unit-ball equivalent (:func:`unit_ball_equivalent`,
    :func:`dplr.analysis.objective_perturbation_search.coupled_privacy_bound`). Unregularised intercept:
    :func:`intercept_upper_bound` (``inf`` when :math:`\Delta = 0`, where :func:`intercept_construction` shows the
    loss is unbounded).
    """
    if not cal.intercept_regularised:
        return intercept_upper_bound(cal)
    n, lam, eps, form = unit_ball_equivalent(cal)
    return coupled_privacy_bound(eps, n, lam, "logistic", form)

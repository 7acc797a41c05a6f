r"""Algorithm 1 (sensitivity method) and Algorithm 2 (objective perturbation), batched over draws.

These functions take labels already in {-1, +1} and rows with :math:`\lVert x_i\rVert \le 1`
(checked), and return one private classifier per noise draw, so that the 200 "random restarts" of
the paper's experiments (NIPS 2008, Section 6) cost one batched solve. The scikit-learn style
estimators in :mod:`dplr.estimators` wrap them.

Sources
-------
* Algorithm 1 and Corollary 2: NIPS 2008, Section 3 (p. 3).
* Algorithm 2 and Theorem 2: NIPS 2008, Section 4 (p. 4).
* The corrected Algorithm 2: Chaudhuri, Monteleoni & Sarwate, "Differentially Private Empirical
  Risk Minimization", JMLR 12:1069–1109 (2011), Algorithm 2 and Theorem 9.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from dplr.losses import get_loss
from dplr.mechanisms import sample_vector_laplace
from dplr.solver import solve_regularized_erm
from dplr.validation import check_epsilon, check_lambda, check_random_state, check_rows_in_ball

__all__ = [
    "OBJECTIVE_PERTURBATION_FORMS",
    "ObjectivePerturbationCalibration",
    "sensitivity_bound",
    "sensitivity_method_noise_rate",
    "objective_perturbation_calibration",
    "standard_erm",
    "sensitivity_method",
    "objective_perturbation",
]

OBJECTIVE_PERTURBATION_FORMS = ("corrected", "nips2008")


def _check_n(n) -> int:
    if isinstance(n, bool) or not isinstance(n, (int, np.integer)) or n < 1:
        raise ValueError(f"n (the number of training records) must be a positive integer, got {n!r}.")
    return int(n)


def sensitivity_bound(n, lam, lipschitz=1.0):
    r"""L2 sensitivity of the regularised ERM minimiser: :math:`2L/(n\lambda)` (NIPS 2008, Corollary 2).

    From Lemma 1 with :math:`G` the objective on the shared records (:math:`G_2 \ge \lambda`) and
    :math:`g` the difference of the two changed loss terms (:math:`g_1 \le 2L/n`).
    """
    return 2.0 * lipschitz / (_check_n(n) * check_lambda(lam))


def sensitivity_method_noise_rate(n, lam, epsilon, lipschitz=1.0):
    r"""Rate :math:`\beta = n\lambda\varepsilon/(2L)` of Algorithm 1's noise :math:`h(\eta)\propto e^{-\beta\lVert\eta\rVert}`.

    For the logistic loss (:math:`L = 1`) this is the paper's :math:`\beta = n\lambda\varepsilon/2`;
    the noise norm is then :math:`\Gamma(d, 2/(n\lambda\varepsilon))`.
    """
    return check_epsilon(epsilon) / sensitivity_bound(n, lam, lipschitz)


@dataclass(frozen=True)
class ObjectivePerturbationCalibration:
    r"""Noise and regulariser settings of Algorithm 2 for given :math:`(\varepsilon, n, \lambda, c)`.

    Attributes
    ----------
    form : "corrected" or "nips2008"
    epsilon : the privacy parameter asked for
    epsilon_prime : :math:`\varepsilon'`, the budget left for the noise after the Jacobian term
    delta : :math:`\Delta`, the extra ridge term added to the objective
    noise_rate : :math:`\beta` of the noise density :math:`e^{-\beta\lVert b\rVert}`
    """

    form: str
    epsilon: float
    epsilon_prime: float
    delta: float
    noise_rate: float


def objective_perturbation_calibration(epsilon, n, lam, curvature=0.25, lipschitz=1.0, form="corrected"):
    r"""Calibrate Algorithm 2.

    ``form="nips2008"`` (NIPS 2008, Algorithm 2): :math:`b \propto e^{-\varepsilon\lVert b\rVert/2}`,
    :math:`\Delta = 0`. Its privacy proof omits the Jacobian of the map :math:`w \mapsto b`, and the
    mechanism is *not* ε-DP when :math:`n\lambda` is small (see the theory chapters).

    ``form="corrected"`` (JMLR 2011, Algorithm 2), with :math:`c` the bound on :math:`\ell''`:

    .. math::

        \varepsilon' = \varepsilon - \log\Big(1 + \frac{2c}{n\lambda} + \frac{c^2}{n^2\lambda^2}\Big);
        \quad \text{if } \varepsilon' > 0:\ \Delta = 0; \quad
        \text{else } \Delta = \frac{c}{n(e^{\varepsilon/4} - 1)} - \lambda,\ \varepsilon' = \varepsilon/2;

    then :math:`b \propto e^{-\varepsilon'\lVert b\rVert/2}`. The ``/2`` is :math:`1/(2L)` with
    :math:`L` the bound on :math:`|\ell'|` (1 for both losses here).
    """
    epsilon = check_epsilon(epsilon)
    n = _check_n(n)
    lam = check_lambda(lam)
    if form == "nips2008":
        return ObjectivePerturbationCalibration(form, epsilon, epsilon, 0.0, epsilon / (2.0 * lipschitz))
    if form != "corrected":
        raise ValueError(f"form must be one of {OBJECTIVE_PERTURBATION_FORMS}, got {form!r}.")
    ratio = curvature / (n * lam)
    epsilon_prime = epsilon - np.log1p(2.0 * ratio + ratio**2)
    delta = 0.0
    if epsilon_prime <= 0:
        delta = curvature / (n * np.expm1(epsilon / 4.0)) - lam
        epsilon_prime = epsilon / 2.0
    return ObjectivePerturbationCalibration(form, epsilon, float(epsilon_prime), float(delta),
                                            float(epsilon_prime) / (2.0 * lipschitz))


def _check_data(X, y):
    X = np.asarray(X, dtype=float)
    y = np.asarray(y, dtype=float)
    if X.ndim != 2 or X.shape[0] == 0:
        raise ValueError(f"X must be a non-empty 2-D array, got shape {X.shape}.")
    if y.shape != (X.shape[0],):
        raise ValueError(f"X has {X.shape[0]} rows but y has shape {y.shape}.")
    if not np.all(np.isfinite(X)):
        raise ValueError("X contains NaN or infinite values; remove or impute them (with data-independent rules).")
    if not np.all(np.abs(y) == 1):
        raise ValueError("y must take values in {-1, +1}; use dplr.validation.encode_binary_labels.")
    check_rows_in_ball(X)
    return X, y


def standard_erm(X, y, lam, loss="logistic", huber_h=0.5, tol=1e-8):
    r"""Non-private :math:`w^* = \arg\min_w \frac\lambda2\lVert w\rVert^2 + \frac1n\sum_i\ell(y_i w^\top x_i)`."""
    X, y = _check_data(X, y)
    return solve_regularized_erm(X, y, lam, loss, huber_h=huber_h, tol=tol).coef


def sensitivity_method(X, y, epsilon, lam, loss="logistic", huber_h=0.5, n_draws=None, random_state=None,
                       tol=1e-8):
    r"""Algorithm 1 (NIPS 2008): :math:`w^* + \eta`, :math:`h(\eta) \propto e^{-\frac{n\lambda\varepsilon}{2}\lVert\eta\rVert}`.

    ε-DP for :math:`\lVert x_i\rVert \le 1` and any loss with :math:`|\ell'| \le 1` (Theorem 1).
    ``n_draws=None`` returns one classifier of shape ``(d,)``; an integer ``k`` returns ``k``
    independent draws, shape ``(k, d)``, sharing the one non-private solve.
    """
    rng = check_random_state(random_state)
    loss = get_loss(loss, huber_h)
    w_star = standard_erm(X, y, lam, loss, tol=tol)
    rate = sensitivity_method_noise_rate(len(y), lam, epsilon, loss.lipschitz)
    return w_star + sample_vector_laplace(rate, w_star.shape[0], size=n_draws, random_state=rng)


def objective_perturbation(X, y, epsilon, lam, loss="logistic", huber_h=0.5, form="corrected", n_draws=None,
                           random_state=None, tol=1e-8, return_calibration=False):
    r"""Algorithm 2: :math:`\arg\min_w \frac{\lambda+\Delta}{2}\lVert w\rVert^2 + \frac{b^\top w}{n} + \frac1n\sum_i \ell(y_i w^\top x_i)`.

    :math:`b` is drawn from :math:`e^{-\beta\lVert b\rVert}` with :math:`\beta` and :math:`\Delta`
    from :func:`objective_perturbation_calibration` (``form="corrected"``, JMLR 2011, is the
    default and is ε-DP; ``form="nips2008"`` reproduces the original paper). ``n_draws=k`` solves
    ``k`` perturbed problems in one batch, shape ``(k, d)``.
    """
    rng = check_random_state(random_state)
    X, y = _check_data(X, y)
    loss = get_loss(loss, huber_h)
    n, d = X.shape
    cal = objective_perturbation_calibration(epsilon, n, lam, loss.curvature, loss.lipschitz, form)
    b = sample_vector_laplace(cal.noise_rate, d, size=n_draws, random_state=rng)
    coef = solve_regularized_erm(X, y, lam, loss, b=b, delta=cal.delta, tol=tol).coef
    return (coef, cal) if return_calibration else coef

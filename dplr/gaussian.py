r"""Gaussian noise for (ε, δ)-DP: the analytic Gaussian calibration and the privacy maps of three algorithms.

The calibrations are pure functions, like :mod:`dplr.calibration`: no data, no randomness. Each returns a
frozen record whose ``mechanism(dim)`` builds its noise, an :class:`~dplr.mechanisms.IsotropicGaussian`;
:mod:`dplr.algorithms` draws from it and solves. :func:`gaussian_mechanism` releases a noisy value, the
Gaussian counterpart of :func:`dplr.mechanisms.laplace_mechanism`.

Neighbouring data sets differ in one record (*replace one*, as in NIPS 2008 and JMLR 2011); where a
source proves its theorem for *add or remove one* the record below says how its constant was converted.
Every record :math:`x_i` has :math:`\lVert x_i\rVert \le 1`, the loss :math:`\ell(y\,w^\top x)` has
:math:`|\ell'| \le L` (``lipschitz``) and :math:`0 \le \ell'' \le c` (``curvature``), and the objective is
the package's, averaged over the :math:`n` records (:mod:`dplr.objective`):

.. math::

    J(w) = \frac{\lambda + \Delta}{2}\lVert w\rVert^2 + \frac{b^\top w}{n} + \frac1n\sum_{i=1}^n \ell(y_i w^\top x_i).

* **Analytic Gaussian mechanism** (Balle & Wang, "Improving the Gaussian mechanism for differential
  privacy: analytical calibration and optimal denoising", ICML 2018, Theorem 8 and Algorithm 1):
  :func:`analytic_gaussian_sigma`, the smallest :math:`\sigma` of the exact condition, against the classical
  :func:`classical_gaussian_sigma` (Dwork & Roth 2014, Theorem A.1); :func:`analytic_gaussian_delta`, the
  condition itself.
* **Gaussian output perturbation** (:func:`gaussian_output_perturbation_calibration`): the sensitivity
  :math:`2L/(n\lambda)` of the minimiser (JMLR 2011, Corollary 8), plus the solver's tolerance, with analytic
  Gaussian noise.
* **Gaussian objective perturbation** (:func:`gaussian_objective_perturbation_calibration`): Kifer, Smith &
  Thakurta, "Private convex empirical risk minimization and high-dimensional regression", COLT 2012
  (PMLR 23), Theorem 4 / Algorithm 1 ("Obj-Pert"), for replace-one neighbours by this book's theorem, whose
  privacy map is :func:`gaussian_objective_perturbation_epsilon`.
* **Approximate minima perturbation** (:func:`approximate_minima_perturbation_calibration`): Iyengar, Near,
  Song, Thakkar, Thakurta & Wang, "Towards practical differentially private convex optimization", IEEE S&P
  2019, Algorithm 1; its objective step checked by the same privacy map.

Every number is its formula rounded in the safe direction (:mod:`dplr.directed_rounding`): σ and Δ up, the
parts of ε and δ down. Over 400 lines because each calibration carries its theorem and its proof in its docstring.
"""
from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction

import mpmath
import numpy as np
from scipy import optimize

from dplr.calibration import CERTIFIED_OUTPUT_FRACTION, sensitivity_bound
from dplr.directed_rounding import addend_up, exact, log_upper, round_down, round_up, sqrt_upper
from dplr.mechanisms import IsotropicGaussian
from dplr.validation import (check_delta, check_epsilon, check_lambda, check_positive_finite, check_positive_integer,
                             check_random_state)

__all__ = [
    "GAUSSIAN_SIGMA_RTOL",
    "AMP_HESSIAN_RANK",
    "classical_gaussian_sigma",
    "analytic_gaussian_delta",
    "analytic_gaussian_sigma",
    "gaussian_mechanism",
    "GaussianOutputPerturbationCalibration",
    "gaussian_output_perturbation_calibration",
    "GaussianObjectivePerturbationCalibration",
    "gaussian_objective_perturbation_calibration",
    "gaussian_objective_perturbation_epsilon",
    "ApproximateMinimaPerturbationCalibration",
    "approximate_minima_perturbation_calibration",
    "CertifiedGaussianObjectivePerturbationCalibration",
    "certified_gaussian_objective_perturbation_calibration",
]

#: Relative tolerance of :func:`analytic_gaussian_sigma`: the returned :math:`\sigma` lies in
#: :math:`[\sigma^*, \sigma^*(1 + 10^{-10})]` up to the rounding of :math:`\delta(\sigma)`, :math:`\sigma^*` the exact root.
GAUSSIAN_SIGMA_RTOL = 1e-10

#: :math:`r` of Iyengar et al. (2019), Algorithm 1: the rank of the difference of two records' Hessians of a
#: generalised linear loss, :math:`\ell''(z)xx^\top - \ell''(z')x'x'^\top` (rank at most 2 for replace-one neighbours;
#: the authors' implementation uses ``r = 2 # for GLMs``).
AMP_HESSIAN_RANK = 2


def _n(n):
    return check_positive_integer(n, "n (the number of training records)")


def classical_gaussian_sigma(epsilon, delta, sensitivity=1.0):
    r"""The classical calibration :math:`\sigma = \Delta\sqrt{2\ln(1.25/\delta)}/\varepsilon` (Dwork & Roth 2014, Theorem A.1).

    A sufficient condition, proven only for :math:`\varepsilon < 1`: larger ``epsilon`` is refused (use
    :func:`analytic_gaussian_sigma`, exact for every ε).
    """
    epsilon, delta = check_epsilon(epsilon), check_delta(delta)
    sensitivity = check_positive_finite(sensitivity, "sensitivity")
    if epsilon >= 1.0:
        raise ValueError(f"the classical Gaussian calibration is proven only for epsilon < 1, got {epsilon!r}. "
                         f"Fix: dplr.gaussian.analytic_gaussian_sigma, exact for every epsilon.")
    # rounded up (dplr.directed_rounding)
    return round_up(exact(sensitivity) * sqrt_upper(2 * log_upper(Fraction(5, 4) / exact(delta))) / exact(epsilon))


def analytic_gaussian_delta(sigma, epsilon, sensitivity=1.0):
    r"""The exact δ of the Gaussian mechanism with noise :math:`N(0,\sigma^2 I)` and L2 sensitivity :math:`\Delta` at ``epsilon``.

    :math:`\Phi(\frac{\Delta}{2\sigma} - \frac{\varepsilon\sigma}{\Delta}) - e^\varepsilon\Phi(-\frac{\Delta}{2\sigma} -
    \frac{\varepsilon\sigma}{\Delta})` (Balle & Wang 2018, Theorem 8; :meth:`~dplr.mechanisms.IsotropicGaussian.delta`).
    """
    sigma, sensitivity = check_positive_finite(sigma, "sigma"), check_positive_finite(sensitivity, "sensitivity")
    epsilon = float(epsilon)
    if not (np.isfinite(epsilon) and epsilon >= 0):
        raise ValueError(f"epsilon must be a finite number >= 0, got {epsilon!r}.")
    return IsotropicGaussian(1, sigma).delta(sensitivity, epsilon)


def analytic_gaussian_sigma(epsilon, delta, sensitivity=1.0):
    r"""The smallest :math:`\sigma` for which :math:`f + N(0, \sigma^2 I)` is (ε, δ)-DP, :math:`f` of L2 sensitivity :math:`\Delta`.

    **Theorem** (Balle & Wang, ICML 2018, Theorem 8). The Gaussian mechanism :math:`M(D) = f(D) + Z`,
    :math:`Z \sim N(0, \sigma^2 I)`, with :math:`\sup_{D\simeq D'}\lVert f(D) - f(D')\rVert = \Delta`, is
    (ε, δ)-DP if and only if

    .. math::

        \Phi\Big(\frac{\Delta}{2\sigma} - \frac{\varepsilon\sigma}{\Delta}\Big)
        - e^{\varepsilon}\,\Phi\Big(-\frac{\Delta}{2\sigma} - \frac{\varepsilon\sigma}{\Delta}\Big) \le \delta .

    The left side decreases in :math:`\sigma` from 1 to 0, so the smallest such :math:`\sigma` is the root of
    equality. It is bracketed (doubling and halving from :math:`\Delta`) and found by Brent's method
    (``scipy.optimize.brentq``, relative tolerance 1e-12) on the float64 profile, then rounded *up* until the
    condition holds in high precision: the float64 profile cancels badly at small ε or tiny δ (its root was found
    up to 1e-8 relative below the exact one), so the condition is decided by ``_profile_exceeds`` -- the
    profile in 60- and 120-digit arithmetic (``mpmath``), required to agree, with a relative margin of
    :math:`10^{-30}` -- and :math:`\sigma` multiplied by :math:`1 +` :data:`GAUSSIAN_SIGMA_RTOL` (the step doubling)
    until it holds. This is a high-precision evaluation, not a proof with interval bounds: the result is at least
    the exact root unless mpmath's error functions err beyond 30 digits at both precisions alike. Balle & Wang's Algorithm 1 solves the same equation through a change of variables; for
    :math:`\varepsilon < 1` the result is smaller than :func:`classical_gaussian_sigma`.
    """
    epsilon, delta = check_epsilon(epsilon), check_delta(delta)
    sensitivity = check_positive_finite(sensitivity, "sensitivity")

    def excess(sigma):
        return IsotropicGaussian(1, sigma).delta(sensitivity, epsilon) - delta

    high = sensitivity
    while excess(high) > 0:
        high *= 2.0
    low = high / 2.0
    while excess(low) <= 0:
        low /= 2.0
        if low < 1e-300:  # delta >= 1 - tiny: any noise will do, which check_delta already refuses
            raise ValueError(f"no positive sigma is the smallest for delta={delta!r}.")
    root = optimize.brentq(excess, low, high, xtol=1e-300, rtol=1e-12, maxiter=500)
    sigma = max(root, low)
    step = GAUSSIAN_SIGMA_RTOL
    while excess(sigma) > 0 or _profile_exceeds(sigma, sensitivity, epsilon, delta):
        sigma *= 1.0 + step
        step *= 2.0
    return float(sigma)


def _profile_at(sigma, sensitivity, epsilon, digits):
    with mpmath.workdps(digits):
        a = mpmath.mpf(sensitivity) / (2 * mpmath.mpf(sigma))
        b = mpmath.mpf(epsilon) * mpmath.mpf(sigma) / mpmath.mpf(sensitivity)
        return mpmath.ncdf(a - b) - mpmath.exp(mpmath.mpf(epsilon)) * mpmath.ncdf(-a - b)


def _profile_exceeds(sigma, sensitivity, epsilon, delta, margin=1e-30) -> bool:
    r"""Whether Balle & Wang's profile :math:`\delta(\sigma)` (:meth:`dplr.mechanisms.IsotropicGaussian.delta`) may
    exceed ``delta``: evaluated for the float64 arguments as exact numbers in 60 and 120 digits; ``True`` unless both
    are at most ``delta`` (1 - ``margin``) and agree to within the margin."""
    low, high = _profile_at(sigma, sensitivity, epsilon, 60), _profile_at(sigma, sensitivity, epsilon, 120)
    bound = mpmath.mpf(delta) * (1 - mpmath.mpf(margin))
    return not (high <= bound and low <= bound and abs(high - low) <= mpmath.mpf(margin) * mpmath.mpf(delta))


def gaussian_mechanism(value, sensitivity, epsilon, delta, random_state=None):
    r"""Release ``value + eta``, :math:`\eta \sim N(0, \sigma^2 I)` with :math:`\sigma` = :func:`analytic_gaussian_sigma`.

    (ε, δ)-DP when ``sensitivity`` :math:`\Delta` bounds the L2 change of ``value`` between neighbouring data sets
    (Balle & Wang 2018, Theorem 8); the Gaussian counterpart of :func:`dplr.mechanisms.laplace_mechanism`. For an
    array, the L2 (Frobenius) change of all its entries, each with its own noise; a scalar is a 1-vector.
    """
    sigma = analytic_gaussian_sigma(epsilon, delta, sensitivity)
    value = np.asarray(value, dtype=float)
    flat = value.reshape(-1)  # every entry its own coordinate of the noise: rows never share a draw
    noise = IsotropicGaussian.from_sigma(flat.size, sigma).sample(random_state=check_random_state(random_state))
    return (flat + noise).reshape(value.shape)


@dataclass(frozen=True)
class _GaussianNoise:
    sigma: float

    def mechanism(self, dim) -> IsotropicGaussian:
        """The calibrated noise :math:`N(0, \\sigma^2 I_{dim})`."""
        return IsotropicGaussian.from_sigma(dim, self.sigma)


@dataclass(frozen=True)
class GaussianOutputPerturbationCalibration(_GaussianNoise):
    r"""Gaussian output perturbation for given :math:`(\varepsilon, \delta, n, \lambda, L)`.

    Attributes
    ----------
    sigma : the noise's standard deviation per coordinate (analytic Gaussian)
    epsilon, target_delta : the privacy parameters
    sensitivity : :math:`2(L + n\tau)/(n\lambda)`, the bound on the distance of neighbours' released points
    """

    epsilon: float
    target_delta: float
    sensitivity: float


def gaussian_output_perturbation_calibration(n, lam, epsilon, delta, lipschitz=1.0, solver_tol=0.0):
    r"""Calibrate :math:`w^* + N(0, \sigma^2 I)` with :math:`w^*` the regularised ERM minimiser.

    **Theorem.** For a convex loss with :math:`|\ell'| \le L`, :math:`\lVert x_i\rVert \le 1` and :math:`\lambda > 0`,
    :math:`\lVert w^*(D) - w^*(D')\rVert \le 2L/(n\lambda)` for data sets differing in one record (Chaudhuri,
    Monteleoni & Sarwate, JMLR 2011, Corollary 8; NIPS 2008, Corollary 2); a solver's point with gradient norm
    :math:`\le\tau` (``solver_tol``) lies within :math:`\tau/\lambda` of it, so the released points' sensitivity is
    :func:`~dplr.calibration.sensitivity_bound` :math:`= 2(L + n\tau)/(n\lambda)`, and with :math:`\sigma` =
    :func:`analytic_gaussian_sigma` (ε, δ, that sensitivity) the release is (ε, δ)-DP (Balle & Wang 2018, Thm 8).
    """
    epsilon, delta, lam = check_epsilon(epsilon), check_delta(delta), check_lambda(lam)
    sensitivity = sensitivity_bound(_n(n), lam, lipschitz, solver_tol)
    return GaussianOutputPerturbationCalibration(analytic_gaussian_sigma(epsilon, delta, sensitivity), epsilon,
                                                 delta, sensitivity)


@dataclass(frozen=True)
class GaussianObjectivePerturbationCalibration(_GaussianNoise):
    r"""Gaussian objective perturbation (Kifer, Smith & Thakurta 2012) for given :math:`(\varepsilon, \delta, n, \lambda, L, c)`.

    Attributes
    ----------
    sigma : standard deviation of each coordinate of :math:`b` in the package's objective (the ``b/n`` term)
    epsilon, target_delta : the privacy parameters
    ridge : :math:`\Delta \ge 0`, the extra ridge term in the package's convention (added to :math:`\lambda`)
    """

    epsilon: float
    target_delta: float
    ridge: float


def gaussian_objective_perturbation_calibration(epsilon, delta, n, lam, curvature=0.25, lipschitz=1.0):
    r"""Calibrate objective perturbation with Gaussian noise: :math:`b \sim N(0, \sigma^2 I)` and :math:`\Delta`.

    **Theorem** (Kifer, Smith & Thakurta, COLT 2012, Theorem 4, the (ε, δ) "Obj-Pert" of their Algorithm 1;
    as restated by Redberg & Wang, NeurIPS 2021, Theorem 5). Let :math:`\ell(\theta; z)` be convex, twice
    differentiable, with :math:`\lVert\nabla\ell\rVert \le \xi` and Hessian of rank at most one with eigenvalue
    at most :math:`\beta`; let the released :math:`\theta` minimise :math:`\sum_{i=1}^n \ell(\theta; z_i) + r(\theta)
    + \frac{\Delta_K}{2}\lVert\theta\rVert^2 + b^\top\theta` (a *sum* over records, :math:`r` convex) with
    :math:`b \sim N(0, \sigma_K^2 I)`. If :math:`\Delta_K \ge 2\beta/\varepsilon` and
    :math:`\sigma_K^2 = \xi^2(8\log(2/\delta) + 4\varepsilon)/\varepsilon^2`, the release is (ε, δ)-DP.

    **What is used here, and why.** Logistic or Huber loss of the margin: :math:`\xi = L`, :math:`\beta = c`, rank
    one. We could not confirm the paper's neighbouring relation from its text; the restatement is for *add or
    remove* one record. For *replace one* (this package) the calibration is proved by this book's theorem
    (:func:`gaussian_objective_perturbation_epsilon`; the chapter on today's methods, ``thm-modern-gaussian-objective``),
    which bounds the release's ε at δ by :math:`\varepsilon_b + \varepsilon_J`, a noise part and a Jacobian part.
    With

    .. math::

        \sigma = \frac{2L\sqrt{8\log(4/\delta) + 4\varepsilon}}{\varepsilon}, \qquad
        \Delta = \max\Big(0, \frac{2c}{n\varepsilon} - \lambda\Big)

    (the theorem's :math:`\sigma_K` with :math:`\xi \to 2L`, :math:`\delta \to \delta/2`; :math:`\Delta` counts the
    ridge λ already in :math:`J` towards :math:`2c/(n\varepsilon)`), both parts are at most :math:`\varepsilon/2`:
    :math:`\varepsilon_J = \log(1 + c/(n(\lambda + \Delta))) \le \log(1 + \varepsilon/2) \le \varepsilon/2`; and with
    :math:`s^2 = 8\log(4/\delta) + 4\varepsilon`, :math:`t = \log(1/\delta)`, :math:`\varepsilon_b = \varepsilon
    \sqrt{2t}/s + \varepsilon^2/(2s^2) \le \varepsilon/2` if and only if :math:`s\sqrt{8t} \le s^2 - \varepsilon`, which
    holds because :math:`s - \sqrt{8t} = (s^2 - 8t)/(s + \sqrt{8t}) \ge (8\log 4 + 4\varepsilon)/(2s) \ge \varepsilon/s`.
    So the release is (ε, δ)-DP under replace-one neighbours. (An earlier argument of this package reached the same σ
    by a union bound, spending δ/2 on each of the two differing records.) **Conversion to the package's objective** (divide the summed
    objective by :math:`n`): :math:`b` is the same vector (the package adds :math:`b^\top w/n`) and
    :math:`\Delta = \Delta_K/n`.
    """
    epsilon, delta, lam, n = check_epsilon(epsilon), check_delta(delta), check_lambda(lam), _n(n)
    curvature, lipschitz = check_positive_finite(curvature, "curvature"), check_positive_finite(lipschitz, "lipschitz")
    # sigma and Delta rounded up (dplr.directed_rounding)
    eps = exact(epsilon)
    sigma = round_up(2 * exact(lipschitz) * sqrt_upper(8 * log_upper(4 / exact(delta)) + 4 * eps) / eps)
    # the solver's float64 lam + Delta at least 2c/(n eps), not only the exact sum (dplr.directed_rounding.addend_up)
    ridge = addend_up(2 * exact(curvature) / (n * eps), lam)
    return GaussianObjectivePerturbationCalibration(sigma, epsilon, delta, ridge)


def gaussian_objective_perturbation_epsilon(sigma, delta, n, lam, ridge=0.0, curvature=0.25, lipschitz=1.0):
    r"""The ε this book proves for objective perturbation with Gaussian noise, at δ: the privacy map.

    **Theorem** (this book: the chapter on today's methods, ``thm-modern-gaussian-objective``). Let
    :math:`\lVert x_i\rVert \le 1`, let :math:`\ell` be convex and differentiable with :math:`|\ell'| \le L` and
    :math:`\ell'` Lipschitz with constant :math:`c` (the logistic loss, :math:`c = 1/4`; the Huber loss,
    :math:`c = 1/(2h)`), :math:`\lambda + \Delta > 0`, and release the minimiser of :math:`J` with
    :math:`b \sim N(0, \sigma^2 I)`. For neighbours that differ in one record (*replace one*) and every
    :math:`\delta \in (0, 1)` the release is :math:`(\varepsilon_b + \varepsilon_J, \delta)`-DP, where

    .. math::

        \varepsilon_b = \frac{2L\sqrt{2\log(1/\delta)}}{\sigma} + \frac{2L^2}{\sigma^2}, \qquad
        \varepsilon_J = \log\Big(1 + \frac{c}{n(\lambda + \Delta)}\Big).

    *Proof in brief* (in full in the chapter). The output has density :math:`\nu(b_D(w))|\det\nabla b_D(w)|`, with
    :math:`b_D(w) = -n(\lambda+\Delta)w - \sum_i\ell'(y_iw^\top x_i)y_ix_i` (for a merely Lipschitz :math:`\ell'`,
    such as the Huber loss's, by the area formula: the theory chapter's lemma ``lem-op-lipschitz-density``). The
    Jacobian part of the privacy loss is at most :math:`\varepsilon_J` (lemma ``lem-op-jacobian-ratio``). The noise
    part is :math:`(2b^\top v + \lVert v\rVert^2)/(2\sigma^2)` with :math:`b = b_D(w)` the drawn noise and
    :math:`v = b_{D'}(w) - b_D(w) = \ell'(u^\top w)u - \ell'(u'^\top w)u'`, :math:`u = yx`, :math:`u' = y'x'`: whatever
    :math:`w`, :math:`v` lies in the plane :math:`S` spanned by the two differing records and has norm at most
    :math:`2L`, so the noise part is at most :math:`2L\lVert Pb\rVert/\sigma^2 + 2L^2/\sigma^2`, :math:`P` the
    projection on :math:`S`. :math:`\lVert Pb\rVert^2/\sigma^2` is chi-squared with at most 2 degrees of freedom,
    so :math:`\lVert Pb\rVert \le \sigma\sqrt{2\log(1/\delta)}` except with probability at most
    :math:`e^{-\log(1/\delta)} = \delta`; on that event the privacy loss is at most :math:`\varepsilon_b +
    \varepsilon_J`, which gives :math:`(\varepsilon_b + \varepsilon_J, \delta)`-DP.

    ``ridge`` is :math:`\Delta` (added to :math:`\lambda`), ``sigma`` the standard deviation of each coordinate of
    :math:`b` in the package's objective (the ``b/n`` term). Returns :math:`\varepsilon_b + \varepsilon_J`.
    """
    sigma = check_positive_finite(sigma, "sigma")
    delta, lam, n = check_delta(delta), check_lambda(lam), _n(n)
    ridge = float(ridge)
    if not np.isfinite(ridge) or ridge < 0:
        raise ValueError(f"ridge (Delta) must be finite and >= 0, got {ridge!r}.")
    curvature, lipschitz = check_positive_finite(curvature, "curvature"), check_positive_finite(lipschitz, "lipschitz")
    noise = 2.0 * lipschitz * np.sqrt(2.0 * np.log(1.0 / delta)) / sigma + 2.0 * lipschitz**2 / sigma**2
    return float(noise + np.log1p(curvature / (n * (lam + ridge))))


@dataclass(frozen=True)
class ApproximateMinimaPerturbationCalibration(_GaussianNoise):
    r"""Approximate minima perturbation (Iyengar et al. 2019, Algorithm 1) in the package's convention.

    Attributes
    ----------
    sigma : standard deviation of each coordinate of :math:`b` (the objective's ``b/n`` term)
    output_sigma : standard deviation of the output noise added to the approximate minimiser
    ridge : :math:`\Delta` (added to :math:`\lambda`); :math:`\Lambda = n(\lambda + \Delta)` in the paper's notation
    gamma : the gradient-norm bound :math:`\gamma` the solver must reach
    epsilon, target_delta : the totals
    epsilons : the split of ε in the order of ``epsilon_split``, (noise, ridge, output): in the paper's notation
        :math:`(\varepsilon_3, \varepsilon_1 - \varepsilon_3, \varepsilon_2)`
    deltas : :math:`(\delta_1, \delta_2)`, for the objective and for the output
    """

    output_sigma: float
    ridge: float
    gamma: float
    epsilon: float
    target_delta: float
    epsilons: tuple
    deltas: tuple

    def output_mechanism(self, dim) -> IsotropicGaussian:
        """The output noise :math:`N(0, \\sigma_2^2 I_{dim})`."""
        return IsotropicGaussian.from_sigma(dim, self.output_sigma)


def approximate_minima_perturbation_calibration(epsilon, delta, n, lam, gamma, curvature=0.25, lipschitz=1.0,
                                                epsilon_split=(0.891, 0.099, 0.01), delta_split=(0.99, 0.01)):
    r"""Calibrate approximate minima perturbation: objective noise, ridge, gradient-norm bound, output noise.

    **Theorem** (Iyengar, Near, Song, Thakkar, Thakurta & Wang, IEEE S&P 2019, Algorithm 1 and its privacy
    theorem; the paper's notation, with the output noise calibrated as argued below). Let :math:`\ell` be convex,
    :math:`L`-Lipschitz and :math:`\beta`-smooth with Hessian of rank at most :math:`r`; :math:`\varepsilon =
    \varepsilon_1 + \varepsilon_2`, :math:`\delta = \delta_1 + \delta_2`, where :math:`(\varepsilon_1, \delta_1)` pays
    for the objective -- :math:`\varepsilon_3 < \varepsilon_1` for its noise, :math:`\varepsilon_1 - \varepsilon_3` for
    its regulariser -- and :math:`(\varepsilon_2, \delta_2)` for the output noise; :math:`\Lambda \ge
    r\beta/(\varepsilon_1 - \varepsilon_3)`. Release :math:`\theta_{approx} + N(0, \sigma_2^2 I)`, where
    :math:`\theta_{approx}` is any point with :math:`\lVert\nabla L_{priv}(\theta_{approx})\rVert \le \gamma` of

    .. math::

        L_{priv}(\theta) = \frac1n\sum_i \ell(\theta; z_i) + \frac{\Lambda}{2n}\lVert\theta\rVert^2 + b_1^\top\theta,
        \quad b_1 \sim N(0, \sigma_1^2 I),\
        \sigma_1 = \frac{2L}{n}\,\frac{1 + \sqrt{2\log(1/\delta_1)}}{\varepsilon_3},

    and :math:`\sigma_2` the analytic Gaussian mechanism's (:func:`analytic_gaussian_sigma`) at
    :math:`(\varepsilon_2, \delta_2)` for sensitivity :math:`2n\gamma/\Lambda`. Then the release is (ε, δ)-DP.

    *The output step* (this book's proof, in the chapter on today's methods, ``thm-modern-amp``). Given the
    solver's own randomness, its point is a function of the data and of the exact minimiser :math:`\theta^*` (the
    drawn noise is :math:`b_D(\theta^*)`), and :math:`L_{priv}` is :math:`\Lambda/n`-strongly convex, so the two
    neighbours' points for one :math:`\theta^*` lie within :math:`2n\gamma/\Lambda` of each other: the sensitivity of
    the output step. The Gaussian mechanism at that sensitivity is :math:`(\varepsilon_2, \delta_2)`-DP for every
    :math:`\theta^*`; integrating that bound against the :math:`(\varepsilon_1, \delta_1)` guarantee of
    :math:`\theta^*` gives :math:`(\varepsilon_1 + \varepsilon_2, \delta_1 + \delta_2)`. The proof needs a point
    within :math:`\gamma/(\lambda+\Delta)` of the exact minimiser for every noise vector: where the solver's stop is
    not certified, :func:`dplr.algorithms.approximate_minima_perturbation` releases the point of
    :func:`dplr.solver.fixed_step_descent`, within that distance on every data set, not a refusal. The authors' code calibrates :math:`\sigma_2 = (n\gamma/\Lambda)(1 +
    \sqrt{2\log(1/\delta_2)})/\varepsilon_2`, the classical bound at *half* that sensitivity, which this argument
    does not cover; the analytic mechanism at the full sensitivity is the provable choice (its σ is smaller than
    theirs at the larger ε of the study, larger at the smaller; with :math:`\gamma = 1/n^2` both are tiny).

    *The objective step* (this book's proof). With :math:`a = \sqrt{2\log(1/\delta_1)}` and :math:`\Lambda \ge
    2c/(\varepsilon_1 - \varepsilon_3)`, :func:`gaussian_objective_perturbation_epsilon` bounds the exact
    minimiser's ε at :math:`\delta_1` by :math:`\varepsilon_3\big(a/(1+a) + \varepsilon_3/(2(1+a)^2)\big) +
    \log(1 + (\varepsilon_1 - \varepsilon_3)/2)`, which is below :math:`\varepsilon_1` when :math:`\varepsilon_3 \le
    2(1 + a)`: the exact minimiser is :math:`(\varepsilon_1, \delta_1)`-DP under replace-one neighbours, for the
    logistic and the Huber loss. This function computes that bound and refuses a split it does not cover (it covers every
    split with :math:`\varepsilon_3 \le 2`; the default split, all but large ε with a large δ). The proof does not need :math:`\varepsilon_1 -
    \varepsilon_3 < 1` or :math:`r = 2` (:math:`r = 1` would do: only one record's Hessian term differs on each
    side); both are kept from the authors' code.

    Sources: the algorithm as the authors implement it (``sunblaze-ucb/dpml-benchmark``,
    ``algorithms/approximate_minima_perturbation.py``: the same :math:`\sigma_1` and :math:`\Lambda = r\beta/
    (\varepsilon_1 - \varepsilon_3)` with ``r = 2 # for GLMs``, and a refusal of :math:`\varepsilon_1 - \varepsilon_3
    \ge 1`, enforced here too; their code takes :math:`\beta = L^2 = 1`, we take the loss's curvature bound
    :math:`c`, which the proof above needs) and a summary of the paper's budget split; the paper's theorem text
    itself was not available to us, so its neighbouring relation is unconfirmed: the proof above is for this
    package's.

    **Conversion to the package's objective**: :math:`L_{priv}` *is* the package's :math:`J` with
    :math:`\lambda + \Delta = \Lambda/n` and :math:`b = n b_1`. ``epsilon_split`` gives the fractions of ε for
    (noise :math:`\varepsilon_3`, ridge :math:`\varepsilon_1 - \varepsilon_3`, output :math:`\varepsilon_2`), summing
    to 1; then :math:`\Delta = \max(0, r c/(n(\varepsilon_1 - \varepsilon_3)) - \lambda)`, ``sigma`` :math:`= n\sigma_1
    = 2L(1 + \sqrt{2\log(1/\delta_1)})/\varepsilon_3`, ``output_sigma`` the analytic Gaussian mechanism's at
    :math:`(\varepsilon_2, \delta_2)` for sensitivity :math:`2\gamma/(\lambda + \Delta)`, and the solver's tolerance on :math:`\lVert\nabla J\rVert` is :math:`\gamma`.
    The default split is the authors': 1 % of ε to the output, 90 % of the rest to the objective's noise; δ 99 % to
    the objective, 1 % to the output.
    """
    epsilon, delta, lam, n = check_epsilon(epsilon), check_delta(delta), check_lambda(lam), _n(n)
    gamma = check_positive_finite(gamma, "gamma (the gradient-norm bound)")
    curvature, lipschitz = check_positive_finite(curvature, "curvature"), check_positive_finite(lipschitz, "lipschitz")
    fractions = np.asarray(epsilon_split, dtype=float)
    delta_fractions = np.asarray(delta_split, dtype=float)
    for name, f, k in (("epsilon_split", fractions, 3), ("delta_split", delta_fractions, 2)):
        if f.shape != (k,) or not np.all(np.isfinite(f)) or np.any(f <= 0) or abs(f.sum() - 1.0) > 1e-12:
            raise ValueError(f"{name} must be {k} positive fractions summing to 1, got {f.tolist()!r}.")
    # the parts, of the fractions divided by their exact sum (as floats, 0.891 + 0.099 + 0.01 is not 1), rounded down:
    # they sum to at most epsilon and delta (dplr.directed_rounding)
    eps_noise, eps_ridge, eps_output = (round_down(exact(epsilon) * exact(f) / sum(map(exact, fractions)))
                                        for f in fractions)
    delta_objective, delta_output = (round_down(exact(delta) * exact(f) / sum(map(exact, delta_fractions)))
                                     for f in delta_fractions)
    if eps_ridge >= 1.0:
        raise ValueError(f"approximate minima perturbation needs the regulariser's share of epsilon below 1 (Iyengar "
                         f"et al. 2019: epsilon_1 - epsilon_3 < 1), got {eps_ridge!r} (epsilon {epsilon!r} times "
                         f"{fractions[1]!r}). Fix: a smaller second fraction in epsilon_split.")
    # Delta and sigma rounded up (dplr.directed_rounding)
    # the solver's float64 lam + Delta at least r c/(n eps_ridge), not only the exact sum (directed_rounding.addend_up)
    ridge = addend_up(AMP_HESSIAN_RANK * exact(curvature) / (n * exact(eps_ridge)), lam)
    sigma = round_up(2 * exact(lipschitz) * (1 + sqrt_upper(2 * log_upper(1 / exact(delta_objective))))
                     / exact(eps_noise))
    proven = gaussian_objective_perturbation_epsilon(sigma, delta_objective, n, lam, ridge, curvature, lipschitz)
    if not proven <= eps_noise + eps_ridge:
        bound = 2.0 * (1.0 + np.sqrt(2.0 * np.log(1.0 / delta_objective)))
        raise ValueError(f"approximate minima perturbation's objective step: the proven epsilon of the exact minimiser at "
                         f"delta_1 is {proven:.6g}, above epsilon_1 = {eps_noise + eps_ridge:.6g}, so this split is not "
                         f"covered by the proof (it covers every epsilon_3 <= 2 (1 + sqrt(2 log(1/delta_1))) = "
                         f"{bound:.6g}; here epsilon_3 = {eps_noise!r}). Fix: a smaller first fraction in "
                         f"epsilon_split, or a smaller delta_1 (delta times the first fraction of delta_split).")
    # two neighbours' approximate points, each within gamma/(lam + Delta) of their common exact minimiser: twice that
    output_sigma = analytic_gaussian_sigma(eps_output, delta_output,
                                           round_up(2 * exact(gamma) / (exact(lam) + exact(ridge))))
    return ApproximateMinimaPerturbationCalibration(float(sigma), float(output_sigma), float(ridge), gamma, epsilon,
                                                    delta, (eps_noise, eps_ridge, eps_output),
                                                    (delta_objective, delta_output))


@dataclass(frozen=True)
class CertifiedGaussianObjectivePerturbationCalibration:
    r"""Gaussian objective perturbation released at a certified approximate minimiser, plus Gaussian output noise
    (:func:`certified_gaussian_objective_perturbation_calibration`).

    Attributes
    ----------
    objective : the :class:`GaussianObjectivePerturbationCalibration` of the objective step, at
        :math:`(\varepsilon_1, \delta_1)`
    epsilon, target_delta : the totals
    epsilons, deltas : :math:`(\varepsilon_1, \varepsilon_2)`, :math:`(\delta_1, \delta_2)`
    gamma : the gradient norm of :math:`J` the released point is certified to meet
    output_sigma : the analytic Gaussian mechanism's σ at :math:`(\varepsilon_2, \delta_2)` for sensitivity
        :math:`2\gamma/(\lambda + \Delta)`
    """

    objective: GaussianObjectivePerturbationCalibration
    epsilon: float
    target_delta: float
    epsilons: tuple
    deltas: tuple
    gamma: float
    output_sigma: float

    @property
    def ridge(self) -> float:
        r""":math:`\Delta` of the objective step."""
        return self.objective.ridge

    @property
    def sigma(self) -> float:
        """σ of the objective's noise :math:`b`."""
        return self.objective.sigma

    def mechanism(self, dim) -> IsotropicGaussian:
        r"""The objective's noise :math:`b`, :math:`N(0, \sigma^2 I_{dim})`."""
        return self.objective.mechanism(dim)

    def output_mechanism(self, dim) -> IsotropicGaussian:
        r"""The output noise :math:`N(0, \sigma_2^2 I_{dim})`."""
        return IsotropicGaussian.from_sigma(dim, self.output_sigma)


def certified_gaussian_objective_perturbation_calibration(epsilon, delta, n, lam, gamma, curvature=0.25,
                                                          lipschitz=1.0, output_fraction=CERTIFIED_OUTPUT_FRACTION,
                                                          delta_output_fraction=0.01):
    r"""Calibrate Gaussian objective perturbation for the point a solver releases: (ε₁ + ε₂, δ₁ + δ₂)-DP.

    The objective step is :func:`gaussian_objective_perturbation_calibration` at :math:`(\varepsilon_1,
    \delta_1)`; the released point :math:`\tilde w` has :math:`\lVert\nabla J(\tilde w)\rVert \le \gamma`, so it
    lies within :math:`r = \gamma/(\lambda+\Delta)` of the exact minimiser :math:`w^*`; the output noise is the
    analytic Gaussian mechanism at :math:`(\varepsilon_2, \delta_2)` for ℓ2 sensitivity :math:`2r`. *Proof* (the
    argument of approximate minima perturbation's output step, :func:`approximate_minima_perturbation_calibration`):
    given :math:`w^*`, the noise is :math:`b_D(w^*)`, so each neighbour's point is a function of the data and
    :math:`w^*`, both within :math:`r` of :math:`w^*`, hence within :math:`2r` of each other; the output step is
    :math:`(\varepsilon_2, \delta_2)`-DP for every :math:`w^*`, and adaptive composition with the
    :math:`(\varepsilon_1, \delta_1)` release of :math:`w^*` (then dropping :math:`w^*`, post-processing) gives
    :math:`(\varepsilon_1 + \varepsilon_2, \delta_1 + \delta_2)`. It is approximate minima perturbation with
    Kifer, Smith & Thakurta's calibration of the objective step. The split is a public rule (``output_fraction`` of
    ε and ``delta_output_fraction`` of δ to the output), each share rounded down so the parts sum to at most the
    totals; :math:`\lambda + \Delta` rounded down, the sensitivity up.
    """
    epsilon, delta, lam, n = check_epsilon(epsilon), check_delta(delta), check_lambda(lam), _n(n)
    gamma = check_positive_finite(gamma, "gamma (the certified gradient norm)")
    parts = []
    for name, total, fraction in (("output_fraction", epsilon, output_fraction),
                                  ("delta_output_fraction", delta, delta_output_fraction)):
        fraction = float(fraction)
        if not 0.0 < fraction < 1.0:
            raise ValueError(f"{name} must lie in (0, 1), got {fraction!r}.")
        output = round_down(exact(total) * exact(fraction))
        objective_part = round_down(exact(total) - exact(output))
        if not (output > 0 and objective_part > 0):
            raise ValueError(f"{total!r} is too small to split by {name} = {fraction!r}.")
        parts.append((objective_part, output))
    (eps_objective, eps_output), (delta_objective, delta_output) = parts
    objective = gaussian_objective_perturbation_calibration(eps_objective, delta_objective, n, lam, curvature,
                                                            lipschitz)
    strong_convexity = round_down(exact(lam) + exact(objective.ridge))  # at most the solver's lam + Delta
    output_sigma = analytic_gaussian_sigma(eps_output, delta_output,
                                           round_up(2 * exact(gamma) / exact(strong_convexity)))
    return CertifiedGaussianObjectivePerturbationCalibration(objective, epsilon, delta, (eps_objective, eps_output),
                                                             (delta_objective, delta_output), gamma,
                                                             float(output_sigma))

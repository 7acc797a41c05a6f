r"""Privacy maps: from (ε, n, λ, the loss' constants) to the noise and the regulariser of each algorithm.

Pure functions -- no data, no randomness. Each calibration returns a frozen record of what it
decided, and the record builds its noise mechanism (:class:`~dplr.mechanisms.VectorLaplace`), so the
privacy claim travels with the noise that realises it.

Sources
-------
* Sensitivity bound and Algorithm 1: NIPS 2008, Corollary 2 and Section 3 (p. 3).
* Algorithm 2: NIPS 2008, Section 4 (p. 4); the corrected form: Chaudhuri, Monteleoni & Sarwate,
  "Differentially Private Empirical Risk Minimization", JMLR 12:1069-1109 (2011), Algorithm 2 and
  Theorem 9.

A second mechanism family (e.g. Gaussian noise for (ε, δ)-DP) adds its calibration here, returning
a record whose ``mechanism(dim)`` builds its noise object.

This module is over 400 lines because it holds every pure-ε privacy map of the library -- Algorithm 1, Algorithm 2
in both forms, its certified release and the hardened grid release -- each with its record; splitting them would
separate calibrations that share their checks and their rounding.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from fractions import Fraction

import numpy as np

from dplr.directed_rounding import addend_up, exact, expm1_lower, log1p_upper, round_down, round_up, sqrt_upper
from dplr.mechanisms import DiscreteLaplace, GridLaplace, VectorLaplace
from dplr.validation import (check_epsilon, check_lambda, check_loss_constant, check_positive_finite,
                             check_positive_integer, check_solver_tol)

__all__ = [
    "CalibrationBasis",
    "GRID_REFINEMENT",
    "GridLaplaceCalibration",
    "SCALE_DENOMINATOR",
    "SensitivityMethodGridCalibration",
    "grid_laplace_calibration",
    "release_grid",
    "sensitivity_method_grid_calibration",
    "MAX_NOISE_SCALE",
    "OBJECTIVE_PERTURBATION_FORMS",
    "SensitivityMethodCalibration",
    "ObjectivePerturbationCalibration",
    "sensitivity_bound",
    "sensitivity_method_noise_rate",
    "sensitivity_method_calibration",
    "objective_perturbation_calibration",
    "CERTIFIED_OUTPUT_FRACTION",
    "OBJECTIVE_PERTURBATION_RELEASES",
    "certified_gamma",
    "CertifiedObjectivePerturbationCalibration",
    "certified_objective_perturbation_calibration",
    "CERTIFIED_GRID_RELEASE",
    "CertifiedObjectivePerturbationGridCalibration",
    "certified_objective_perturbation_grid_calibration",
]

#: The forms of Algorithm 2's calibration, ``"corrected"`` (JMLR 2011) and ``"nips2008"`` (the original paper).
OBJECTIVE_PERTURBATION_FORMS = ("corrected", "nips2008")

#: Largest noise scale :math:`1/\beta` and :math:`\Delta` a calibration returns. Beyond it the noise (of
#: norm about :math:`d/\beta`) swamps any model, and its square -- the objective's
#: :math:`\frac{\lambda+\Delta}{2}\lVert w\rVert^2` at the released :math:`w` -- nears float64's overflow
#: (1.8e308), so the solver's output would be meaningless: such an ε is refused.
MAX_NOISE_SCALE = 1e150

#: The share of ε a certified objective perturbation spends on its output noise, :math:`\varepsilon_2/\varepsilon`
#: (a public rule, as approximate minima perturbation's 1 %: :func:`certified_objective_perturbation_calibration`).
CERTIFIED_OUTPUT_FRACTION = 0.01

#: The values of objective perturbation's ``release`` -- ``"certified"`` (the default of every objective perturbation
#: of the package), a solver's point certified within :math:`\gamma` of gradient norm plus output noise
#: (:func:`certified_objective_perturbation_calibration`, the book's theorem ``thm-op-certified``), or
#: ``"exact_minimiser"``, the solver's point as if it were the exact minimiser -- the papers' idealisation, which no
#: theorem covers for a solver's point, kept for the replications of published numbers.
OBJECTIVE_PERTURBATION_RELEASES = ("certified", "exact_minimiser")

#: Algorithm 2's hardened release (``release="certified_grid"`` of :func:`dplr.algorithms.objective_perturbation`
#: only, not of the Gaussian objective perturbation nor of private tuning): the certified point on a power-of-two grid
#: plus exact discrete Laplace output noise (:func:`certified_objective_perturbation_grid_calibration`).
CERTIFIED_GRID_RELEASE = "certified_grid"


def certified_gamma(n) -> float:
    r"""The default :math:`\gamma` of a certified release on ``n`` records: :math:`1/n^2` (the authors' choice for
    approximate minima perturbation, Iyengar et al. 2019). Public: a function of ``n`` only. The output noise's rate
    :math:`\varepsilon_2(\lambda+\Delta)/(2\gamma)` then grows as :math:`n^2`: its norm, about :math:`2d/(\varepsilon_2
    (\lambda+\Delta)n^2)`, falls faster than the objective noise's effect."""
    n = _check_n(n)
    return 1.0 / n**2


def _check_n(n) -> int:
    return check_positive_integer(n, "n (the number of training records)")


@dataclass(frozen=True)
class CalibrationBasis:
    r"""What a calibration was computed for: every public quantity its noise and :math:`\Delta` depend on.

    A record's privacy holds only for a release on ``n`` records with regulariser ``lam``, a loss whose constants are
    ``lipschitz`` (:math:`|\ell'| \le L`) and ``curvature`` (:math:`\ell'' \le c`; ``None`` where the calibration
    does not use it) and, for output perturbation, a released point whose true gradient norm is at most
    ``solver_tol`` (``0.0``: the exact minimiser, the papers' idealisation; ``None`` where the calibration does not use
    it -- the certified objective perturbations carry theirs as ``gamma``). Each calibration function records it
    (attribute ``basis``); :func:`dplr.release.private_release` refuses a release on anything else, so a record
    computed for one :math:`(n, \lambda, \text{tol})` never noises the release of another (issue 38).
    """

    n: int
    lam: float
    lipschitz: float
    curvature: float | None = None
    solver_tol: float | None = None


def _check_representable(epsilon, n, lam, noise_rate, ridge=0.0):
    """Refuse a calibration whose noise scale or Δ overflows what the solver can represent (:data:`MAX_NOISE_SCALE`)."""
    scale = 1.0 / noise_rate if noise_rate > 0 else np.inf
    if scale <= MAX_NOISE_SCALE and ridge <= MAX_NOISE_SCALE:  # False for inf and NaN too
        return
    raise ValueError(
        f"The privacy parameters are too small to calibrate in float64 (epsilon={epsilon!r}, n={n!r} records, "
        f"lam={lam!r}): the noise scale 1/beta = {scale!r} and Delta = {ridge!r} (at most {MAX_NOISE_SCALE:g} is supported). The released "
        f"model would be noise of norm about n_features/beta, carrying nothing of the data. Fix: a larger epsilon "
        f"(or more records n, or a larger lam: Algorithm 1's noise scale is 2/(n*lam*epsilon))."
    )


def sensitivity_bound(n, lam, lipschitz=1.0, solver_tol=0.0):
    r"""L2 sensitivity of the regularised ERM minimiser as released: :math:`2(L + n\tau)/(n\lambda)`.

    For the exact minimisers, :math:`\lVert w^*(D) - w^*(D')\rVert \le 2L/(n\lambda)` (NIPS 2008, Corollary 2;
    proved in the book's chapter on sensitivity). A solver stopped at gradient norm :math:`\le\tau`
    (``solver_tol``) returns a point within :math:`\tau/\lambda` of the minimiser (the objective is
    λ-strongly convex), so two neighbours' released points lie at most :math:`2L/(n\lambda) + 2\tau/\lambda`
    apart. ``solver_tol=0`` is the exact minimiser, the papers' idealisation. Rounded up to float64
    (:func:`dplr.directed_rounding.round_up`).
    """
    n, lam = _check_n(n), check_lambda(lam)
    lipschitz, solver_tol = check_loss_constant(lipschitz, "lipschitz"), check_solver_tol(solver_tol)
    return round_up(_exact_sensitivity(n, lam, lipschitz, solver_tol))


def _exact_sensitivity(n, lam, lipschitz, solver_tol) -> Fraction:
    r""":math:`2(L + n\tau)/(n\lambda)` in exact arithmetic (the float64 inputs are rationals)."""
    return 2 * (exact(lipschitz) + n * exact(solver_tol)) / (n * exact(lam))


class _VectorLaplaceNoise:
    """A calibration whose noise is the vector Laplace law of rate ``noise_rate`` (both algorithms')."""

    noise_rate: float

    def mechanism(self, dim) -> VectorLaplace:
        """The calibrated noise in ``dim`` dimensions: :math:`\\eta` of Algorithm 1 or :math:`b` of Algorithm 2."""
        return VectorLaplace.from_rate(dim, self.noise_rate)


@dataclass(frozen=True)
class SensitivityMethodCalibration(_VectorLaplaceNoise):
    r"""Algorithm 1's noise for given :math:`(\varepsilon, n, \lambda, L)`.

    Attributes
    ----------
    epsilon : the privacy parameter
    sensitivity : :math:`S = 2(L + n\tau)/(n\lambda)` (:func:`sensitivity_bound`), the bound on the distance of two
        neighbours' released points; :math:`2L/(n\lambda)` for the exact minimiser (:math:`\tau = 0`)
    noise_rate : :math:`\beta = \varepsilon/S` of the noise density :math:`e^{-\beta\lVert\eta\rVert}`
    noise_scale : :math:`\theta = 2(L + n\tau)/(n\varepsilon\lambda)`, the Gamma scale of the noise norm; at
        :math:`\tau = 0` as NIPS 2008 prints it (Algorithm 1: :math:`\Gamma(d, 2/(n\lambda\varepsilon))`);
        :math:`1/\beta` up to rounding

    Each is its exact formula rounded in the safe direction (:mod:`dplr.directed_rounding`): ``sensitivity`` up,
    ``noise_rate`` down, ``noise_scale`` is :math:`1/\beta` rounded up, the scale the noise is drawn with
    (:meth:`~dplr.mechanisms.VectorLaplace.from_rate`), at least :math:`S/\varepsilon`. ``basis``: the
    :class:`CalibrationBasis` it was computed for (:math:`n, \lambda, L, \tau`).
    """

    epsilon: float
    sensitivity: float
    noise_rate: float
    noise_scale: float
    basis: CalibrationBasis | None = None


def sensitivity_method_calibration(n, lam, epsilon, lipschitz=1.0, check_input=True,
                                   solver_tol=0.0) -> SensitivityMethodCalibration:
    r"""Calibrate Algorithm 1: :math:`\beta = \varepsilon/S` with :math:`S` = :func:`sensitivity_bound`.

    For the exact minimiser (``solver_tol=0``) and the logistic loss (:math:`L = 1`) this is the paper's
    :math:`\beta = n\lambda\varepsilon/2`; the noise norm is then :math:`\Gamma(d, 2/(n\lambda\varepsilon))`. A release
    of a solver's point with gradient norm :math:`\le\tau` needs ``solver_tol`` :math:`=\tau`:
    :math:`S = 2(L + n\tau)/(n\lambda)`. ``check_input=False`` skips the checks of ``n``, ``lam`` and ``epsilon``
    (for callers that made them).
    """
    if check_input:
        epsilon, n, lam = check_epsilon(epsilon), _check_n(n), check_lambda(lam)
    lipschitz, solver_tol = check_loss_constant(lipschitz, "lipschitz"), check_solver_tol(solver_tol)
    # in the safe direction (dplr.directed_rounding): S and the scale rounded up, the rate epsilon/S down
    sensitivity = _exact_sensitivity(n, lam, lipschitz, solver_tol)
    noise_rate = round_down(exact(epsilon) / sensitivity)
    _check_representable(epsilon, n, lam, noise_rate)
    return SensitivityMethodCalibration(epsilon, round_up(sensitivity), noise_rate,
                                        round_up(1 / exact(noise_rate)),
                                        CalibrationBasis(n, lam, lipschitz, solver_tol=solver_tol))


def sensitivity_method_noise_rate(n, lam, epsilon, lipschitz=1.0):
    r"""Rate :math:`\beta = n\lambda\varepsilon/(2L)` of Algorithm 1's noise :math:`h(\eta)\propto e^{-\beta\lVert\eta\rVert}` (the exact minimiser)."""
    return sensitivity_method_calibration(n, lam, epsilon, lipschitz).noise_rate


@dataclass(frozen=True)
class ObjectivePerturbationCalibration(_VectorLaplaceNoise):
    r"""Noise and regulariser settings of Algorithm 2 for given :math:`(\varepsilon, n, \lambda, c)`.

    Attributes
    ----------
    form : "corrected" or "nips2008"
    epsilon : the privacy parameter asked for
    epsilon_prime : :math:`\varepsilon'`, the budget left for the noise after the Jacobian term
    ridge : :math:`\Delta`, the extra ridge term added to the objective
    noise_rate : :math:`\beta` of the noise density :math:`e^{-\beta\lVert b\rVert}`
    basis : the :class:`CalibrationBasis` it was computed for (:math:`n, \lambda, L, c`)
    """

    form: str
    epsilon: float
    epsilon_prime: float
    ridge: float
    noise_rate: float
    basis: CalibrationBasis | None = None


def objective_perturbation_calibration(epsilon, n, lam, curvature=0.25, lipschitz=1.0, form="corrected",
                                       check_input=True):
    r"""Calibrate Algorithm 2.

    ``form="nips2008"`` (NIPS 2008, Algorithm 2): :math:`b \propto e^{-\varepsilon\lVert b\rVert/2}`,
    :math:`\Delta = 0`. Its privacy proof omits the Jacobian of the map :math:`w \mapsto b`. With the
    logistic loss the mechanism is nevertheless ε-DP when :math:`n\lambda \ge 2/\varepsilon` (the coupled
    bound, :func:`dplr.analysis.objective_perturbation_search.coupled_privacy_bound`); below that it is not ε-DP
    once :math:`\lambda` is small enough, and with the Huber loss it is not ε-DP at any :math:`n\lambda` (theory
    chapter on objective perturbation).

    ``form="corrected"`` (JMLR 2011, Algorithm 2), with :math:`c` the bound on :math:`\ell''`:

    .. math::

        \varepsilon' = \varepsilon - \log\Big(1 + \frac{2c}{n\lambda} + \frac{c^2}{n^2\lambda^2}\Big);
        \quad \text{if } \varepsilon' > 0:\ \Delta = 0; \quad
        \text{else } \Delta = \frac{c}{n(e^{\varepsilon/4} - 1)} - \lambda,\ \varepsilon' = \varepsilon/2;

    then :math:`b \propto e^{-\varepsilon'\lVert b\rVert/2}`. The ``/2`` is :math:`1/(2L)` with
    :math:`L` the bound on :math:`|\ell'|` (1 for both losses here). Each number is the exact formula rounded in the
    safe direction: :math:`\varepsilon'` and the noise rate down, :math:`\Delta` up (:mod:`dplr.directed_rounding`), so
    far up that the solver's float64 :math:`\mathrm{fl}(\lambda + \Delta)` meets the bound too
    (:func:`~dplr.directed_rounding.addend_up`).
    ``check_input=False`` skips the checks of ``epsilon``, ``n`` and ``lam`` (for callers that made them).
    """
    if check_input:
        epsilon, n, lam = check_epsilon(epsilon), _check_n(n), check_lambda(lam)
    lipschitz = check_loss_constant(lipschitz, "lipschitz")
    curvature = check_loss_constant(curvature, "curvature", allow_zero=True)
    if form == "nips2008":
        noise_rate = round_down(exact(epsilon) / (2 * exact(lipschitz)))
        _check_representable(epsilon, n, lam, noise_rate)
        return ObjectivePerturbationCalibration(form, epsilon, epsilon, 0.0, noise_rate,
                                                CalibrationBasis(n, lam, lipschitz, curvature))
    if form != "corrected":
        raise ValueError(f"form must be one of {OBJECTIVE_PERTURBATION_FORMS}, got {form!r}.")
    # In the safe direction (dplr.directed_rounding): epsilon' and the noise rate rounded down, Delta up.
    ratio = exact(curvature) / (n * exact(lam))
    epsilon_prime = round_down(exact(epsilon) - log1p_upper(2 * ratio + ratio**2))
    ridge = 0.0
    if epsilon_prime <= 0:
        growth = expm1_lower(exact(epsilon) / 4)
        # > 0 here (the text's dropdown); up so that the solver's float64 lam + Delta (dplr.solver: reg = lam + ridge)
        # is at least c/(n(e^(eps/4) - 1)), not only the exact sum (dplr.directed_rounding.addend_up)
        ridge = addend_up(exact(curvature) / (n * growth), lam)
        epsilon_prime = round_down(exact(epsilon) / 2)
    noise_rate = round_down(exact(epsilon_prime) / (2 * exact(lipschitz)))
    _check_representable(epsilon, n, lam, noise_rate, ridge)
    return ObjectivePerturbationCalibration(form, epsilon, epsilon_prime, ridge, noise_rate,
                                            CalibrationBasis(n, lam, lipschitz, curvature))


@dataclass(frozen=True)
class CertifiedObjectivePerturbationCalibration:
    r"""Algorithm 2 released at a certified approximate minimiser, plus output noise
    (:func:`certified_objective_perturbation_calibration`).

    Attributes
    ----------
    objective : the :class:`ObjectivePerturbationCalibration` of the objective step, at :math:`\varepsilon_1`
    epsilon : the total :math:`\varepsilon \ge \varepsilon_1 + \varepsilon_2`
    epsilons : :math:`(\varepsilon_1, \varepsilon_2)`, the objective's share and the output noise's
    gamma : :math:`\gamma`, the gradient norm of :math:`J` the released point is certified to meet
    distance : :math:`r = \gamma/(\lambda + \Delta)`, rounded up: how far the point can be from the exact minimiser
    output_rate : :math:`\beta_2 = \varepsilon_2/(2r)`, rounded down, of the output noise :math:`e^{-\beta_2\lVert\eta\rVert}`
    """

    objective: ObjectivePerturbationCalibration
    epsilon: float
    epsilons: tuple
    gamma: float
    distance: float
    output_rate: float

    @property
    def ridge(self) -> float:
        r""":math:`\Delta` of the objective step."""
        return self.objective.ridge

    @property
    def basis(self) -> CalibrationBasis | None:
        """The objective step's :class:`CalibrationBasis` (the certified tolerance is ``gamma``)."""
        return self.objective.basis

    @property
    def noise_rate(self) -> float:
        r""":math:`\beta` of the objective's noise :math:`b`."""
        return self.objective.noise_rate

    def mechanism(self, dim) -> VectorLaplace:
        """The objective's noise :math:`b` in ``dim`` dimensions."""
        return self.objective.mechanism(dim)

    def output_mechanism(self, dim) -> VectorLaplace:
        r"""The output noise :math:`\eta`, :math:`\propto e^{-\beta_2\lVert\eta\rVert}`, in ``dim`` dimensions."""
        return VectorLaplace.from_rate(dim, self.output_rate)


def certified_objective_perturbation_calibration(epsilon, n, lam, gamma, curvature=0.25, lipschitz=1.0,
                                                 form="corrected", output_fraction=CERTIFIED_OUTPUT_FRACTION,
                                                 check_input=True) -> CertifiedObjectivePerturbationCalibration:
    r"""Calibrate Algorithm 2 for the point a solver releases: :math:`\varepsilon = \varepsilon_1 + \varepsilon_2`.

    **Theorem** (this book, ``thm-op-certified`` in the theory chapter on objective perturbation). Let the exact
    minimiser :math:`w^*(D, b)` of :math:`J` with :math:`b \sim e^{-\beta\lVert b\rVert}` be
    :math:`\varepsilon_1`-DP (:func:`objective_perturbation_calibration` at :math:`\varepsilon_1`, JMLR 2011,
    Theorem 9), let :math:`\tilde w(D, b)` be any measurable function with :math:`\lVert\nabla J(\tilde w)\rVert
    \le \gamma` for every data set and every :math:`b`, and release :math:`\tilde w + \eta`,
    :math:`\eta \propto e^{-\beta_2\lVert\eta\rVert}` drawn independently. Then the release is
    :math:`(\varepsilon_1 + 2\beta_2 r)`-DP with :math:`r = \gamma/(\lambda+\Delta)`; at
    :math:`\beta_2 = \varepsilon_2/(2r)` it is :math:`(\varepsilon_1 + \varepsilon_2)`-DP.

    *Proof.* :math:`J` is :math:`(\lambda+\Delta)`-strongly convex, so :math:`\lVert\tilde w - w^*\rVert \le r`
    for every :math:`(D, b)`. With :math:`h` the output noise's density, :math:`h(z - \tilde w) \le
    e^{\beta_2 r} h(z - w^*)` and :math:`h(z - w^*) \le e^{\beta_2 r} h(z - \tilde w)` pointwise (triangle
    inequality). Integrating over :math:`b` (Tonelli; the integrands are measurable), the release's density
    :math:`p(z|D) = E_b\,h(z - \tilde w)` satisfies :math:`p(z|D) \le e^{\beta_2 r} q(z|D)` and
    :math:`q(z|D') \le e^{\beta_2 r} p(z|D')`, with :math:`q(z|D) = E\,h(z - w^*(D, b))`; and
    :math:`q(z|D) \le e^{\varepsilon_1} q(z|D')` because :math:`w^*` is :math:`\varepsilon_1`-DP and
    :math:`h(z - \cdot) \ge 0`. Chain the three and integrate over a set. ∎

    The split is a public rule: :math:`\varepsilon_2` = ``output_fraction`` of ε rounded down, :math:`\varepsilon_1
    = \varepsilon - \varepsilon_2` rounded down (so :math:`\varepsilon_1 + \varepsilon_2 \le \varepsilon` exactly);
    the objective step is :func:`objective_perturbation_calibration` at :math:`\varepsilon_1` (``form`` as there: the
    theorem needs that step to be :math:`\varepsilon_1`-DP, which ``"nips2008"`` is not in general); :math:`r` uses
    :math:`\lambda + \Delta` rounded down and :math:`\beta_2` is rounded down (:mod:`dplr.directed_rounding`).
    ``gamma`` is the gradient norm :func:`dplr.release.private_release` certifies (or reaches by its fixed-step
    fallback).
    """
    if check_input:
        epsilon, n, lam = check_epsilon(epsilon), _check_n(n), check_lambda(lam)
    gamma = check_positive_finite(gamma, "gamma (the certified gradient norm)")
    fraction = float(output_fraction)
    if not 0.0 < fraction < 1.0:
        raise ValueError(f"output_fraction must lie in (0, 1), got {output_fraction!r}.")
    # the split rounded down on both sides: epsilon_1 + epsilon_2 <= epsilon in exact arithmetic
    eps_output = round_down(exact(epsilon) * exact(fraction))
    eps_objective = round_down(exact(epsilon) - exact(eps_output))
    if not (eps_output > 0 and eps_objective > 0):
        raise ValueError(f"epsilon = {epsilon!r} is too small to split (output_fraction {fraction!r}). Fix: a larger "
                         f"epsilon.")
    objective = objective_perturbation_calibration(eps_objective, n, lam, curvature, lipschitz, form,
                                                   check_input=False)
    strong_convexity = round_down(exact(lam) + exact(objective.ridge))  # at most the solver's lam + Delta
    distance = exact(gamma) / exact(strong_convexity)
    output_rate = round_down(exact(eps_output) / (2 * distance))
    _check_representable(epsilon, n, lam, output_rate, objective.ridge)
    return CertifiedObjectivePerturbationCalibration(objective, epsilon, (eps_objective, eps_output), gamma,
                                                     round_up(distance), output_rate)


#: The hardened release's grid is the largest power of two :math:`g \le S/(\text{GRID\_REFINEMENT}\sqrt d)`, so
#: rounding to it adds :math:`d` grid steps to an L1 sensitivity of at least :math:`\text{GRID\_REFINEMENT}\cdot d`, a relative
#: cost in noise of at most :math:`1/\text{GRID\_REFINEMENT}`.
GRID_REFINEMENT = 1024
#: The discrete Laplace scale :math:`\tau` is rounded *up* to a multiple of :math:`1/\text{SCALE\_DENOMINATOR}`
#: (a rational t/s the exact sampler takes in integers).
SCALE_DENOMINATOR = 1024


@dataclass(frozen=True)
class GridLaplaceCalibration:
    r"""The hardened release of a vector of L2 sensitivity :math:`S` in :math:`d` dimensions (:func:`grid_laplace_calibration`).

    Attributes
    ----------
    epsilon : the privacy parameter
    sensitivity : :math:`S`, the L2 sensitivity of the value released
    dim : :math:`d`
    grid : :math:`g`, a power of two (exact in float64)
    l1_sensitivity : :math:`\Delta_1 = \lfloor r S/g\rfloor + d` (an int), with :math:`r \ge \sqrt d` a rational
        (:func:`dplr.directed_rounding.sqrt_upper`): the L1 distance of two neighbours' grid indices, at most
    scale : :math:`\tau \ge \Delta_1/\varepsilon`, a ``fractions.Fraction`` with denominator dividing
        :data:`SCALE_DENOMINATOR`, the discrete Laplace scale in grid steps
    """

    epsilon: float
    sensitivity: float
    dim: int
    grid: float
    l1_sensitivity: int
    scale: Fraction

    def mechanism(self) -> GridLaplace:
        """The calibrated release, :class:`~dplr.mechanisms.GridLaplace`."""
        return GridLaplace(self.grid, DiscreteLaplace.from_scale(self.dim, self.scale))


def release_grid(sensitivity, dim) -> Fraction:
    r"""The hardened releases' grid :math:`g`: the largest power of two at most :math:`S/(1024\,r)`, :math:`r \ge \sqrt d`.

    :math:`r` is :func:`~dplr.directed_rounding.sqrt_upper` of :math:`d`, 1024 is :data:`GRID_REFINEMENT`; decided
    in exact rationals. Refused (``ValueError``) where some grid point :math:`gk`, :math:`|k| < 2^{53}`, would not be
    a float64 number. Shared by :func:`grid_laplace_calibration` and :func:`dplr.gaussian.grid_gaussian_calibration`.
    """
    target = exact(sensitivity) / (GRID_REFINEMENT * sqrt_upper(dim))  # the grid is the largest power of two <= it
    power = target.numerator.bit_length() - target.denominator.bit_length()
    while Fraction(2) ** power > target:
        power -= 1
    while Fraction(2) ** (power + 1) <= target:
        power += 1
    if not -1022 <= power <= 1023 - 53:  # g normal, and g*k finite for every index |k| < 2**53
        raise ValueError(f"The sensitivity {sensitivity!r} gives a grid 2**{power}, outside the range where every "
                         f"grid point g*k (|k| < 2**53) is a float64 number: the grid release cannot represent it. "
                         f"Fix: a sensitivity between 1e-300 and 1e280 (for Algorithm 1, 2/(n*lam)).")
    return Fraction(2) ** power


def grid_laplace_calibration(sensitivity, epsilon, dim, check_input=True) -> GridLaplaceCalibration:
    r"""Calibrate the hardened release :math:`g(\mathrm{round}(v/g) + K)` of a value of L2 sensitivity :math:`S`.

    Neighbours' values differ by :math:`\lVert v - v'\rVert_1 \le \sqrt d\,\lVert v - v'\rVert_2 \le \sqrt d\,S`
    (Cauchy-Schwarz); rounding each coordinate to the nearest multiple of :math:`g` moves it by at most :math:`g/2`,
    so each index moves by at most :math:`|v_j - v'_j|/g + 1` and the integer vectors lie at L1 distance at most
    :math:`\sqrt d S/g + d`, hence (an integer) at most :math:`\Delta_1 = \lfloor rS/g\rfloor + d` for any
    :math:`r \ge \sqrt d`. Discrete Laplace noise of scale :math:`\tau \ge \Delta_1/\varepsilon` is then ε-DP
    (:class:`~dplr.mechanisms.DiscreteLaplace`). In the safe direction, exactly: :math:`r` is
    :func:`~dplr.directed_rounding.sqrt_upper` of :math:`d`, :math:`\Delta_1` a floor of exact rationals plus
    :math:`d`, :math:`\tau = \lceil 1024\,\Delta_1/\varepsilon\rceil/1024` rounded up (:data:`SCALE_DENOMINATOR`).
    The grid :math:`g` is the largest power of two at most :math:`S/(1024\,r)` (:data:`GRID_REFINEMENT`); it only
    decides the accuracy. The book's chapter on floating point proves the release ε-DP as run.
    """
    if check_input:
        epsilon = check_epsilon(epsilon)
        sensitivity = check_positive_finite(sensitivity, "sensitivity")
    dim = check_positive_integer(dim, "dim")
    root = sqrt_upper(dim)
    grid = release_grid(sensitivity, dim)
    l1_sensitivity = math.floor(root * exact(sensitivity) / grid) + dim
    scale = Fraction(math.ceil(l1_sensitivity * SCALE_DENOMINATOR / exact(epsilon)), SCALE_DENOMINATOR)
    if not scale * grid <= MAX_NOISE_SCALE:
        raise ValueError(f"The noise scale {float(scale * grid):g} of the grid release exceeds {MAX_NOISE_SCALE:g} "
                         f"(epsilon={epsilon!r}, sensitivity={sensitivity!r}): the release would carry nothing of "
                         f"the value. Fix: a larger epsilon (or a smaller sensitivity).")
    return GridLaplaceCalibration(epsilon, sensitivity, dim, float(grid), l1_sensitivity, scale)


@dataclass(frozen=True)
class SensitivityMethodGridCalibration:
    r"""Algorithm 1 with the hardened release: the solver's certified point, on a grid, plus discrete Laplace noise.

    Attributes
    ----------
    epsilon : the privacy parameter
    sensitivity : :math:`S = 2(L + n\tau)/(n\lambda)` (:func:`sensitivity_bound`), rounded up
    basis : the :class:`CalibrationBasis` it was computed for (:math:`n, \lambda, L, \tau`)

    :meth:`mechanism` builds the release in ``dim`` dimensions through :func:`grid_laplace_calibration`.
    """

    epsilon: float
    sensitivity: float
    basis: CalibrationBasis | None = None

    def calibration(self, dim) -> GridLaplaceCalibration:
        """The grid, the L1 sensitivity and the scale in ``dim`` dimensions (:func:`grid_laplace_calibration`)."""
        return grid_laplace_calibration(self.sensitivity, self.epsilon, dim, check_input=False)

    def mechanism(self, dim) -> GridLaplace:
        """The calibrated release in ``dim`` dimensions, :class:`~dplr.mechanisms.GridLaplace`."""
        return self.calibration(dim).mechanism()


def sensitivity_method_grid_calibration(n, lam, epsilon, lipschitz=1.0, check_input=True,
                                        solver_tol=0.0) -> SensitivityMethodGridCalibration:
    r"""Calibrate Algorithm 1's hardened release: :math:`S` = :func:`sensitivity_bound`, then the grid per dimension.

    As :func:`sensitivity_method_calibration` (``solver_tol`` the certified gradient norm of the released point), but
    the release is :class:`~dplr.mechanisms.GridLaplace`: per-coordinate discrete Laplace noise on a power-of-two
    grid, calibrated to the L1 bound :math:`\sqrt d\,S/g + d` (:func:`grid_laplace_calibration`), ε-DP as run.
    """
    if check_input:
        epsilon, n, lam = check_epsilon(epsilon), _check_n(n), check_lambda(lam)
    lipschitz, solver_tol = check_loss_constant(lipschitz, "lipschitz"), check_solver_tol(solver_tol)
    return SensitivityMethodGridCalibration(epsilon, round_up(_exact_sensitivity(n, lam, lipschitz, solver_tol)),
                                            CalibrationBasis(n, lam, lipschitz, solver_tol=solver_tol))


@dataclass(frozen=True)
class CertifiedObjectivePerturbationGridCalibration:
    r"""Algorithm 2's hardened release: the certified point on a grid plus discrete Laplace output noise
    (:func:`certified_objective_perturbation_grid_calibration`).

    Attributes
    ----------
    certified : the :class:`CertifiedObjectivePerturbationCalibration` of the same ε, n, λ, γ (its split, its
        objective step, its distance :math:`r` rounded up); its float output rate is not used
    """

    certified: CertifiedObjectivePerturbationCalibration

    objective = property(lambda self: self.certified.objective, doc="The objective step's calibration.")
    epsilon = property(lambda self: self.certified.epsilon, doc="The total ε.")
    epsilons = property(lambda self: self.certified.epsilons, doc=r":math:`(\varepsilon_1, \varepsilon_2)`.")
    gamma = property(lambda self: self.certified.gamma, doc=r"The certified gradient norm :math:`\gamma`.")
    distance = property(lambda self: self.certified.distance, doc=r":math:`r \ge \gamma/(\lambda+\Delta)`.")
    ridge = property(lambda self: self.certified.ridge, doc=r":math:`\Delta` of the objective step.")
    basis = property(lambda self: self.certified.basis, doc="The objective step's :class:`CalibrationBasis`.")
    noise_rate = property(lambda self: self.certified.noise_rate, doc=r":math:`\beta` of the objective's noise.")

    @property
    def grid_epsilon(self) -> float:
        r""":math:`\varepsilon_2/2` (exact in float64 barring underflow; rounded down): the budget of one side of
        the comparison with the exact minimiser (:func:`certified_objective_perturbation_grid_calibration`)."""
        return round_down(exact(self.epsilons[1]) / 2)

    def mechanism(self, dim) -> VectorLaplace:
        """The objective's noise :math:`b` in ``dim`` dimensions (a float64 draw: the theorem's one gap)."""
        return self.certified.mechanism(dim)

    def output_calibration(self, dim) -> GridLaplaceCalibration:
        r"""The output's grid :math:`g`, L1 bound :math:`\Delta_1` and scale :math:`\tau \ge 2\Delta_1/\varepsilon_2`
        in ``dim`` dimensions: :func:`grid_laplace_calibration` of "sensitivity" :math:`r` at :math:`\varepsilon_2/2`."""
        return grid_laplace_calibration(self.distance, self.grid_epsilon, dim, check_input=False)

    def output_mechanism(self, dim) -> GridLaplace:
        """The output release in ``dim`` dimensions, :class:`~dplr.mechanisms.GridLaplace`."""
        return self.output_calibration(dim).mechanism()


def certified_objective_perturbation_grid_calibration(epsilon, n, lam, gamma, curvature=0.25, lipschitz=1.0,
                                                      form="corrected", output_fraction=CERTIFIED_OUTPUT_FRACTION,
                                                      check_input=True):
    r"""Calibrate Algorithm 2's hardened release: the certified point :math:`\tilde w`, rounded to a grid, plus
    discrete Laplace noise: :math:`g(\mathrm{round}(\tilde w/g) + K)`.

    **Theorem** (this book, ``thm-op-certified-grid`` in the chapter on floating point). With :math:`\tilde w`,
    :math:`w^*`, :math:`\varepsilon_1` and :math:`r = \gamma/(\lambda+\Delta)` as in
    :func:`certified_objective_perturbation_calibration`, let :math:`g`, :math:`\Delta_1 = \lfloor\sqrt d\,r/g
    \rfloor + d` and :math:`\tau \ge 2\Delta_1/\varepsilon_2` be :func:`grid_laplace_calibration`'s at
    sensitivity :math:`r` and budget :math:`\varepsilon_2/2`. Then releasing :math:`g(\mathrm{round}(\tilde w/g) +
    K)`, :math:`K` independent discrete Laplace coordinates of scale :math:`\tau`, is
    :math:`(\varepsilon_1 + \varepsilon_2)`-DP for :math:`b` drawn from its law over the reals.

    *Proof.* :math:`\lVert\tilde w - w^*\rVert_2 \le r` for every :math:`(D, b)`, so the grid indices
    :math:`\tilde c = \mathrm{round}(\tilde w/g)` and :math:`c^* = \mathrm{round}(w^*/g)` are at L1 distance
    at most :math:`\sqrt d\,r/g + d`, hence at most :math:`\Delta_1`; with :math:`p` the discrete Laplace law,
    :math:`p(k - \tilde c) \le e^{\Delta_1/\tau}p(k - c^*)` and back, for every integer vector :math:`k`. Average
    over :math:`b` as in the certified proof: :math:`\Pr[\tilde c + K = k \mid D] \le e^{\varepsilon_2/2}
    \Pr[c^* + K = k \mid D] \le e^{\varepsilon_2/2 + \varepsilon_1}\Pr[c^* + K = k \mid D'] \le
    e^{\varepsilon_1 + \varepsilon_2}\Pr[\tilde c + K = k \mid D']`, the middle step because :math:`c^* + K` is
    post-processing of the :math:`\varepsilon_1`-DP :math:`w^*`. The float64 output is :math:`g(\tilde c + K)`
    exactly (:class:`~dplr.mechanisms.GridLaplace`). ∎

    The numbers are :func:`certified_objective_perturbation_calibration`'s (split, objective step, :math:`r` rounded
    up), then :func:`grid_laplace_calibration` of :math:`r` at :math:`\varepsilon_2/2` rounded down, per dimension
    (:meth:`CertifiedObjectivePerturbationGridCalibration.output_calibration`); arguments as there.
    """
    certified = certified_objective_perturbation_calibration(epsilon, n, lam, gamma, curvature, lipschitz, form,
                                                             output_fraction, check_input)
    record = CertifiedObjectivePerturbationGridCalibration(certified)
    if not record.grid_epsilon > 0:
        raise ValueError(f"epsilon = {epsilon!r} is too small: half its output share underflows. Fix: a larger epsilon.")
    release_grid(record.distance, 1)  # a distance no grid can represent is refused here, before any data are read
    return record

r"""DELIBERATELY BROKEN mechanisms: test subjects for the privacy audit. Never release anything with them.

Each class here claims ε-differential privacy and does not deliver it. They exist so that the audit
chapter can show the two checks of :mod:`dplr.analysis.audit` catching real mistakes: the exact
privacy loss (``max_privacy_loss``, computed from the output density) and the black-box audit
(:func:`dplr.analysis.audit.audit`, from runs alone). They are not exported from :mod:`dplr`; import
them as ``from dplr.analysis import broken``. Each is built from the library's own pieces
(:mod:`dplr.algorithms`, :mod:`dplr.mechanisms`), with the one slip it demonstrates.

* :class:`HalfScaleSensitivityMethod` -- Algorithm 1 with noise at half the scale (sensitivity taken as
  :math:`1/(n\lambda)`); actual loss :math:`2\beta\lVert w_1 - w_2\rVert`, up to :math:`2\varepsilon`.
* :class:`StandardDeviationLaplace` -- Laplace noise whose *standard deviation* is :math:`S/\varepsilon`
  (the wording of NIPS 2008, Section 2, and of the thesis); actual loss :math:`\sqrt{d+1}\,\varepsilon`,
  :math:`\sqrt2\,\varepsilon` in one dimension.
* :func:`nips2008_objective_perturbation` -- Algorithm 2 as printed in NIPS 2008, whose proof leaves out
  the Jacobian term, at small :math:`n\lambda`; actual loss up to the coupled bound of
  :mod:`dplr.analysis.objective_perturbation_search` (logistic loss: above ε only for :math:`n\lambda < 2/\varepsilon`),
  and up to :math:`\varepsilon + \log(1 + c/(n\lambda))` with the Huber loss.
* :class:`L1SensitivityMethod` -- Algorithm 1 on L1-regularised ERM with the L2 sensitivity bound
  :math:`2/(n\lambda)`; the actual loss does not shrink with :math:`n`.
* :class:`HalfSigmaGaussianOutputPerturbation` -- Gaussian output perturbation with half the calibrated
  :math:`\sigma` (e.g. the sensitivity taken as :math:`1/(n\lambda)`); claims (ε, δ), delivers a larger ε at δ.
* :class:`NoRidgeGaussianObjectivePerturbation` -- Gaussian objective perturbation (Kifer, Smith & Thakurta
  2012) without the extra ridge :math:`\Delta` its theorem needs at small :math:`n\lambda`: the Jacobian of the
  map from the noise to the output is then unbounded in :math:`1/(n\lambda)`, the slip of NIPS 2008's proof.
* :func:`no_ridge_approximate_minima_perturbation` -- the same slip in approximate minima perturbation.
* :class:`L2GridLaplace` -- the hardened grid release with its discrete Laplace calibrated to the L2 sensitivity in
  grid steps instead of the L1 bound :math:`\sqrt d\,S/g + d`: actual loss up to about :math:`\sqrt d\,\varepsilon`.
* :class:`RhoAsEpsilonGridGaussian` -- the hardened (ε, δ) grid release with the zCDP budget :math:`\rho` set to ε
  (σ² = Δ₂²/(2ε)), skipping the conversion to (ε, δ): at ε = 1 and δ = 1e-5 its actual ε at δ is several times ε.
* :class:`UnclippedDPSGD` -- DP-SGD whose per-example gradients are not clipped, with the accountant's ε for
  clipping norm :math:`C`; a record whose gradient exceeds :math:`C` moves the output by more than the noise
  was calibrated for.
* :class:`WrongRateDPSGD` -- DP-SGD that samples its lots at rate :math:`q` but takes its noise multiplier from the
  accountant at the rate :math:`q/k` (the lot size over all :math:`n` records, while it trains on one of :math:`k`
  parts); the noise is about :math:`k` times too small for small :math:`q`.
* :class:`SelectionAtTotalEpsilon` -- private selection (Liu & Talwar's random stopping) that forgets the
  selection's cost: each run calibrated at the total ε instead of ε/3.
* :class:`GaussianSelectionAtTotalBudget` -- the (ε, δ) selection over Gaussian runs that forgets its cost: each run
  at the total (ε, δ) instead of :func:`dplr.selection.run_budget`'s share.

The module is over 400 lines because it is the catalogue of slips the audit chapters read: one short class per slip,
each beside the others.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field
from fractions import Fraction

import numpy as np

from dplr.algorithms import sensitivity_method, sensitivity_method_noise, standard_erm
from dplr.analysis.auditable import (DPSGDMechanism, GaussianSelectionMechanism, ObjectivePerturbationMechanism,
                                    PrivateSelectionMechanism, grid_gaussian_pair_epsilon)
from dplr.analysis.lasso import l1_logistic_regression
from dplr.analysis.neighbours import NeighbouringPair
from dplr.analysis.privacy_loss import sensitivity_method_max_privacy_loss
from dplr.calibration import SCALE_DENOMINATOR, grid_laplace_calibration, sensitivity_method_noise_rate
from dplr.dpsgd import dpsgd_epsilon, dpsgd_noise_multiplier, dpsgd_train
from dplr.gaussian import (
    approximate_minima_perturbation_calibration,
    gaussian_objective_perturbation_calibration,
    gaussian_output_perturbation_calibration,
    grid_gaussian_calibration,
)
from dplr.losses import get_loss
from dplr.mechanisms import DiscreteGaussian, DiscreteLaplace, GridGaussian, GridLaplace, IsotropicGaussian, VectorLaplace
from dplr.solver import solve_regularized_erm
from dplr.validation import check_positive_integer, check_random_state

__all__ = [
    "HalfScaleSensitivityMethod",
    "StandardDeviationLaplace",
    "nips2008_objective_perturbation",
    "L1SensitivityMethod",
    "HalfSigmaGaussianOutputPerturbation",
    "L2GridLaplace",
    "RhoAsEpsilonGridGaussian",
    "NoRidgeGaussianObjectivePerturbation",
    "no_ridge_approximate_minima_perturbation",
    "UnclippedDPSGD",
    "WrongRateDPSGD",
    "SelectionAtTotalEpsilon",
    "GaussianSelectionAtTotalBudget",
]


@dataclass(frozen=True)
class HalfScaleSensitivityMethod:
    r"""BROKEN. Algorithm 1 with noise at half the scale: :math:`w^* + \eta`, :math:`\eta \propto e^{-2\beta\lVert\eta\rVert}`.

    The slip: using sensitivity :math:`1/(n\lambda)` instead of :math:`2/(n\lambda)` (forgetting that the
    replaced record's gradient can flip sign), so :math:`\beta = n\lambda\varepsilon` instead of
    :math:`n\lambda\varepsilon/2`. The privacy loss doubles: this is Algorithm 1 at :math:`2\varepsilon`,
    and it runs as exactly that.
    """

    epsilon: float
    lam: float

    def noise_rate(self, n) -> float:
        return 2.0 * sensitivity_method_noise_rate(n, self.lam, self.epsilon)

    def __call__(self, data, random_state=None, size=None):
        X, y = data
        return sensitivity_method(X, y, 2.0 * self.epsilon, self.lam, n_draws=size, random_state=random_state)

    def max_privacy_loss(self, pair: NeighbouringPair) -> float:
        r"""Exact: :math:`2\beta\lVert w^*(D) - w^*(D')\rVert`, the supremum of Algorithm 1 at :math:`2\varepsilon`."""
        return sensitivity_method_max_privacy_loss(pair, 2.0 * self.epsilon, self.lam)[0]


@dataclass(frozen=True)
class StandardDeviationLaplace:
    r"""BROKEN. A Laplace mechanism whose noise has *standard deviation* :math:`S/\varepsilon` per coordinate.

    NIPS 2008 (Section 2) describes the Laplace mechanism as noise "with mean 0 and standard deviation
    :math:`S(f)/\varepsilon`", and the thesis (Veldhuizen 2020) describes its noise the same way. The
    correct noise has *scale* :math:`S/\varepsilon`. For :math:`h(\eta) \propto e^{-\beta\lVert\eta\rVert}` on
    :math:`\mathbb{R}^d` each coordinate has variance :math:`(d+1)/\beta^2`, so the "standard deviation"
    reading gives :math:`\beta = \sqrt{d+1}\,\varepsilon/S` and privacy loss :math:`\sqrt{d+1}\,\varepsilon`
    (:math:`\sqrt2\,\varepsilon` for the 1-D Laplace distribution, whose standard deviation is
    :math:`\sqrt2` times its scale).
    """

    sensitivity: float
    epsilon: float

    def noise_rate(self, d) -> float:
        return float(np.sqrt(d + 1.0) * self.epsilon / self.sensitivity)

    def __call__(self, value, random_state=None, size=None):
        value = np.atleast_1d(np.asarray(value, dtype=float))
        d = value.shape[0]
        return value + VectorLaplace.from_rate(d, self.noise_rate(d)).sample(size, random_state)

    def max_privacy_loss(self, pair) -> float:
        r"""Exact: :math:`\beta\lVert v - v'\rVert` with the too-large rate :math:`\beta = \sqrt{d+1}\,\varepsilon/S`."""
        v, v_prime = (np.atleast_1d(np.asarray(a, dtype=float)) for a in pair)
        return float(self.noise_rate(v.shape[0]) * np.linalg.norm(v - v_prime))


def nips2008_objective_perturbation(epsilon, lam, loss="logistic") -> ObjectivePerturbationMechanism:
    r"""BROKEN at small :math:`n\lambda`. Algorithm 2 exactly as printed in NIPS 2008 (``form="nips2008"``).

    Its privacy proof bounds only the noise term of the privacy loss and leaves out the Jacobian of the
    map from the noise :math:`b` to the output :math:`w`; the Jacobian ratio can reach
    :math:`1 + c/(n\lambda)` (:mod:`dplr.analysis.privacy_loss`). With the logistic loss it is broken exactly below
    :math:`n\lambda = 2/\varepsilon` (for small enough :math:`\lambda`; proven ε-DP above,
    :func:`dplr.analysis.objective_perturbation_search.nips2008_private_threshold`), with the Huber loss at every
    :math:`n\lambda`. The library keeps this form for replication; this alias only names it as the broken
    variant. ``max_privacy_loss(pair)`` computes the exact loss on one pair, maximised over the outputs. Released as
    the paper states it, the exact minimiser (``release="exact_minimiser"``): the flaw is its density's.
    """
    # the paper's algorithm releases the minimiser itself, and the exact loss is that minimiser's density's
    return ObjectivePerturbationMechanism(epsilon, lam, form="nips2008", loss=loss, release="exact_minimiser")


@dataclass(frozen=True)
class L1SensitivityMethod:
    r"""BROKEN. Algorithm 1 applied to L1-regularised logistic regression, with the L2 sensitivity bound.

    Releases :math:`w_1(D) + \eta` with :math:`w_1 = \arg\min_w \lambda\lVert w\rVert_1 + \frac1n\sum_i
    \ell(y_i w^\top x_i)` (:func:`dplr.analysis.lasso.l1_logistic_regression`) and
    :math:`\eta \propto e^{-(n\lambda\varepsilon/2)\lVert\eta\rVert}`, as the thesis' method section
    (Veldhuizen 2020, Section 4.1.2) pairs a Lasso penalty with the :math:`2/(n\lambda)` bound of
    Corollary 2. That bound needs a :math:`\lambda`-strongly convex regulariser; the L1 penalty is not
    strongly convex and the minimiser can jump between corners (:func:`dplr.analysis.neighbours.l1_tie_breaking_pair`).
    The non-private L1 fit is deterministic and is cached per data set.
    """

    epsilon: float
    lam: float
    _cache: dict = field(default_factory=dict, init=False, compare=False, repr=False)

    def noise_rate(self, n) -> float:
        return sensitivity_method_noise_rate(n, self.lam, self.epsilon)

    def fit(self, X, y) -> np.ndarray:
        X, y = np.asarray(X, dtype=float), np.asarray(y, dtype=float)
        key = (X.shape, X.tobytes(), y.tobytes())
        if key not in self._cache:
            self._cache[key] = l1_logistic_regression(X, y, self.lam, get_loss("logistic"))
        return self._cache[key]

    def __call__(self, data, random_state=None, size=None):
        X, y = data
        w = self.fit(X, y)
        # the exact-minimiser calibration, as max_privacy_loss assumes (sensitivity_method_noise_rate)
        return w + sensitivity_method_noise(len(y), w.shape[0], self.epsilon, self.lam, n_draws=size,
                                            random_state=random_state, solver_tol=0.0)[0]

    def max_privacy_loss(self, pair: NeighbouringPair) -> float:
        r"""Exact: :math:`\beta\lVert w_1(D) - w_1(D')\rVert` (the closed form of Algorithm 1 with the L1 minimisers)."""
        w, w_prime = self.fit(pair.X, pair.y), self.fit(pair.X_prime, pair.y_prime)
        return float(self.noise_rate(pair.n) * np.linalg.norm(w - w_prime))


@dataclass(frozen=True)
class L2GridLaplace:
    r"""BROKEN. The grid release (:class:`dplr.mechanisms.GridLaplace`) with the wrong norm in its calibration.

    Its grid is :func:`dplr.calibration.grid_laplace_calibration`'s, but its discrete Laplace scale is
    :math:`(\lfloor S/g\rfloor + d)/\varepsilon` -- the L2 sensitivity in grid steps, as if the noise were
    calibrated to the L2 norm -- instead of :math:`(\lfloor\sqrt d\,S/g\rfloor + d)/\varepsilon`. Per-coordinate
    discrete Laplace noise pays for the L1 distance, which reaches :math:`\sqrt d\,S` along a diagonal: the actual
    loss is up to about :math:`\sqrt d\,\varepsilon`. The data are the values.
    """

    sensitivity: float
    epsilon: float

    def mechanism(self, dim) -> GridLaplace:
        grid = grid_laplace_calibration(self.sensitivity, self.epsilon, dim).grid
        steps = math.floor(Fraction(self.sensitivity) / Fraction(grid)) + dim  # the slip: no sqrt(d)
        scale = Fraction(math.ceil(steps * SCALE_DENOMINATOR / Fraction(self.epsilon)), SCALE_DENOMINATOR)
        return GridLaplace(grid, DiscreteLaplace.from_scale(dim, scale))

    def __call__(self, value, random_state=None, size=None):
        value = np.atleast_1d(np.asarray(value, dtype=float))
        return self.mechanism(value.shape[0]).release(value, size, random_state)

    def max_privacy_loss(self, pair) -> float:
        r"""Exact: :math:`\lVert c - c'\rVert_1/\tau` with this mechanism's :math:`\tau` and the pair's grid indices."""
        v, v_prime = (np.atleast_1d(np.asarray(a, dtype=float)) for a in pair)
        mechanism = self.mechanism(v.shape[0])
        distance = int(np.sum(np.abs(mechanism.snap(v) - mechanism.snap(v_prime))))
        return float(mechanism.noise.max_privacy_loss(distance))


@dataclass(frozen=True)
class RhoAsEpsilonGridGaussian:
    r"""BROKEN. The grid Gaussian release (:class:`dplr.mechanisms.GridGaussian`) calibrated with :math:`\rho = \varepsilon`.

    Its grid and its L2 bound :math:`\Delta_2 = S/g + \sqrt d` are :func:`dplr.gaussian.grid_gaussian_calibration`'s,
    but its variance is :math:`\Delta_2^2/(2\varepsilon)`: the zCDP parameter read as the ε of (ε, δ)-DP, without
    :func:`dplr.gaussian.zcdp_rho`'s conversion. It is ε-zCDP, which is (ε, δ)-DP only for an ε near
    :math:`\varepsilon + 2\sqrt{\varepsilon\log(1/\delta)}`. The data are the values; audit with ``delta``.
    """

    sensitivity: float
    epsilon: float
    delta: float

    def mechanism(self, dim) -> GridGaussian:
        cal = grid_gaussian_calibration(self.sensitivity, self.epsilon, self.delta, dim)
        variance = cal.l2_sensitivity**2 / (2 * Fraction(self.epsilon))  # the slip: rho = epsilon
        return GridGaussian(cal.grid, DiscreteGaussian.from_variance(dim, Fraction(math.ceil(variance))))

    def __call__(self, value, random_state=None, size=None):
        value = np.atleast_1d(np.asarray(value, dtype=float))
        return self.mechanism(value.shape[0]).release(value, size, random_state)

    def max_privacy_loss(self, pair) -> float:
        r"""Exact ε at ``delta`` (:func:`dplr.analysis.auditable.grid_gaussian_pair_epsilon`)."""
        dim = np.atleast_1d(np.asarray(pair[0], dtype=float)).shape[0]
        return grid_gaussian_pair_epsilon(self.mechanism(dim), pair, self.delta)


@dataclass(frozen=True)
class HalfSigmaGaussianOutputPerturbation:
    r"""BROKEN. Gaussian output perturbation with noise :math:`N(0, (\sigma/2)^2 I)`, :math:`\sigma` the analytic calibration.

    The slip: the sensitivity taken as :math:`1/(n\lambda)` instead of :math:`2/(n\lambda)`, which halves
    :math:`\sigma` (it is proportional to the sensitivity). Claims (ε, δ)-DP; on a pair whose minimisers are
    :math:`D` apart it delivers the ε of Gaussian noise :math:`\sigma/2` at distance :math:`D`
    (:meth:`max_privacy_loss`, exact).
    """

    epsilon: float
    delta: float
    lam: float

    def sigma(self, n) -> float:
        return gaussian_output_perturbation_calibration(n, self.lam, self.epsilon, self.delta).sigma / 2.0

    def __call__(self, data, random_state=None, size=None):
        X, y = data
        w = standard_erm(X, y, self.lam)
        return w + IsotropicGaussian.from_sigma(w.shape[0], self.sigma(len(y))).sample(size, random_state)

    def max_privacy_loss(self, pair: NeighbouringPair) -> float:
        r"""Exact ε at ``delta`` on the pair with the halved :math:`\sigma`."""
        distance = np.linalg.norm(standard_erm(pair.X, pair.y, self.lam, tol=1e-12)
                                  - standard_erm(pair.X_prime, pair.y_prime, self.lam, tol=1e-12))
        return IsotropicGaussian(pair.d, self.sigma(pair.n)).epsilon(distance, self.delta)


@dataclass(frozen=True)
class UnclippedDPSGD(DPSGDMechanism):
    r"""BROKEN. DP-SGD without per-example clipping: :meth:`~dplr.analysis.auditable.DPSGDMechanism.epsilon` still reports the accountant's ε for :math:`C`.

    The accountant's ε assumes every record moves a lot's gradient sum by at most :math:`C` (:math:`2C` when
    replaced); unclipped, a record with :math:`\lVert\ell'\,x\rVert = G > C` moves it by :math:`G`, so the noise
    :math:`\sigma C` is :math:`G/C` times too small for it.
    """

    def __call__(self, data, random_state=None, size=None):
        X, y = data
        return dpsgd_train(X, y, self.noise_multiplier, self.clip_norm, self.sampling_rate, self.steps,
                           self.learning_rate, self.lam, self.loss, n_draws=size, random_state=random_state,
                           clip=False)


@dataclass(frozen=True)
class WrongRateDPSGD(DPSGDMechanism):
    r"""BROKEN. DP-SGD that samples lots at rate :math:`q` and is accounted at the rate :math:`q/k` (``parts`` :math:`= k`).

    The slip: a protocol that trains on one of :math:`k` parts of the data (Algorithm 3 of JMLR 2011 trains each
    candidate on its own part; so does any k-fold tuning) keeps the lot size :math:`L` and hands the accountant the
    rate :math:`L/n` over all :math:`n` records, while each record of the part of :math:`n/k` records joins a lot with
    probability :math:`q = L/(n/k) = kL/n`. Calling it (as :class:`~dplr.analysis.auditable.DPSGDMechanism`) trains
    DP-SGD at the true rate :math:`q`; the noise multiplier is the accountant's for :math:`q/k` (:meth:`calibrated`),
    and :meth:`epsilon` reports what that accountant claims.

    Why it breaks: privacy amplification by subsampling is what lets DP-SGD add little noise, and it is paid for by
    the rate. In the small-:math:`q` regime Abadi et al. (CCS 2016, Theorem 1) need
    :math:`\sigma \ge c_2\,q\sqrt{T\log(1/\delta)}/\varepsilon`: :math:`\sigma` is proportional to :math:`q`, so the
    :math:`\sigma` of rate :math:`q/k` is about :math:`k` times too small for rate :math:`q`. (At large :math:`q` the
    factor is smaller: at :math:`q = 0.5`, :math:`T = 3`, (1, 10⁻⁵) and replace-one neighbours the PLD accountant of
    dp-accounting 0.6.0 gives :math:`\sigma` = 6.45 for :math:`q` and 1.14 for :math:`q/10`.) The record is in more
    lots than the accountant assumes, and each of its steps is a Gaussian mechanism with too little noise.
    """

    parts: int = 10

    def __post_init__(self):
        check_positive_integer(self.parts, "parts")

    @property
    def claimed_rate(self) -> float:
        """The rate the accountant is given, :math:`q/k`."""
        return self.sampling_rate / self.parts

    def epsilon(self, delta, neighbouring="replace", accountant="pld") -> float:
        """What the slipped accountant claims: :func:`dplr.dpsgd.dpsgd_epsilon` at :attr:`claimed_rate`, not at the rate used."""
        return dpsgd_epsilon(self.noise_multiplier, self.claimed_rate, self.steps, delta, neighbouring, accountant)

    @classmethod
    def calibrated(cls, epsilon, delta, clip_norm, sampling_rate, steps, learning_rate, lam=0.0, loss="logistic",
                   parts=10, neighbouring="replace", accountant="pld") -> "WrongRateDPSGD":
        r"""The broken calibration: :math:`\sigma` = :func:`dplr.dpsgd.dpsgd_noise_multiplier` for (ε, δ) at rate ``sampling_rate / parts``.

        Needs the extra ``dplr[accounting]``; the bisection calls the accountant about a dozen times.
        """
        parts = check_positive_integer(parts, "parts")
        sigma = dpsgd_noise_multiplier(epsilon, delta, sampling_rate / parts, steps, neighbouring, accountant)
        return cls(sigma, clip_norm, sampling_rate, steps, learning_rate, lam, loss, parts)


@dataclass(frozen=True)
class NoRidgeGaussianObjectivePerturbation:
    r"""BROKEN at small :math:`n\lambda`. Gaussian objective perturbation with its noise but without its ridge :math:`\Delta`.

    Kifer, Smith & Thakurta's theorem needs :math:`n(\lambda + \Delta) \ge 2c/\varepsilon`
    (:func:`dplr.gaussian.gaussian_objective_perturbation_calibration`); this solves with :math:`\Delta = 0`, so the
    Jacobian ratio can reach :math:`1 + c/(n\lambda)`, as in the NIPS 2008 proof's omission. Built from the
    calibration (for its noise), its mechanism and the solver. ``chunk_size`` as in
    :class:`~dplr.analysis.auditable.ObjectivePerturbationMechanism`.
    """

    epsilon: float
    delta: float
    lam: float
    chunk_size: int = 4096

    def __call__(self, data, random_state=None, size=None):
        X, y = data
        noise = gaussian_objective_perturbation_calibration(self.epsilon, self.delta, len(y), self.lam).mechanism(
            X.shape[1])
        b = noise.sample(size, check_random_state(random_state))
        return solve_regularized_erm(X, y, self.lam, b=b, ridge=0.0, chunk_size=self.chunk_size).coef


@dataclass(frozen=True)
class _NoRidgeApproximateMinimaPerturbation:
    epsilon: float
    delta: float
    lam: float
    gamma: float | None = None
    chunk_size: int = 4096

    def __call__(self, data, random_state=None, size=None):
        X, y = data
        n, d = X.shape
        gamma = 1.0 / n**2 if self.gamma is None else self.gamma
        cal = approximate_minima_perturbation_calibration(self.epsilon, self.delta, n, self.lam, gamma)
        rng = check_random_state(random_state)
        b = cal.mechanism(d).sample(size, rng)
        w = solve_regularized_erm(X, y, self.lam, b=b, ridge=0.0, tol=gamma, chunk_size=self.chunk_size).coef
        # the output noise of the calibrated ridge's lambda + Delta, unchanged: the ridge is dropped (and the solve
        # stops at a computed gamma, not a certified one: dplr.solver.stopping; a rounding far below the ridge's)
        return w + cal.output_mechanism(d).sample(size, rng)


def no_ridge_approximate_minima_perturbation(epsilon, delta, lam, gamma=None):
    r"""BROKEN at small :math:`n\lambda`. Approximate minima perturbation without its ridge :math:`\Lambda \ge r\beta/(\varepsilon_1 - \varepsilon_3)`.

    Its noises are the calibrated ones (:func:`dplr.gaussian.approximate_minima_perturbation_calibration`); the
    objective is solved with :math:`\lambda` alone, so the Jacobian term its :math:`\varepsilon_1 - \varepsilon_3` pays for is
    unbounded in :math:`1/(n\lambda)`. Returns an auditable callable.
    """
    return _NoRidgeApproximateMinimaPerturbation(epsilon, delta, lam, gamma)


@dataclass(frozen=True)
class SelectionAtTotalEpsilon(PrivateSelectionMechanism):
    r"""Random stopping whose every run is calibrated at the *total* ε: the selection's cost forgotten.

    Claims ε; Liu & Talwar's theorem gives only :math:`3\varepsilon`, and the best of a geometric number of runs
    does leak more than one run (on a count, up to about :math:`2\varepsilon` at γ = 0.1).
    """

    @property
    def run_epsilon(self) -> float:
        return float(self.epsilon)


@dataclass(frozen=True)
class GaussianSelectionAtTotalBudget(GaussianSelectionMechanism):
    r"""The (ε, δ) random stopping over a Gaussian count whose every run is calibrated at the *total* (ε, δ): the
    selection's cost forgotten.

    Claims (ε, δ); the book's proposition gives only :math:`(\varepsilon + 2\ln c,\ c^2\delta/\gamma)`,
    :math:`c = e^{\varepsilon} + \delta/\gamma`, and the best of a geometric number of runs does leak more than one run.
    """

    @property
    def run_budget(self) -> tuple:
        return float(self.epsilon), float(self.delta)

r"""Noise mechanisms: the vector Laplace ("Gamma-norm") distribution, as one object, and the Laplace mechanism.

Both algorithms of Chaudhuri & Monteleoni (NIPS 2008) draw a noise vector from the density

.. math::

    h(\eta) \propto e^{-\beta \lVert \eta \rVert}, \qquad \eta \in \mathbb{R}^d,

with :math:`\beta = n\lambda\varepsilon/2` for Algorithm 1 (Section 3) and
:math:`\beta = \varepsilon/2` for Algorithm 2 (Section 4). In polar coordinates
:math:`\eta = r u` with :math:`r \ge 0` and :math:`u` on the unit sphere, the volume element is
:math:`r^{d-1}\,dr\,du`, so the density factorises into :math:`r^{d-1} e^{-\beta r}` (a Gamma
density with shape :math:`d` and scale :math:`1/\beta`) times a constant in :math:`u` (the uniform
distribution on the sphere). :class:`VectorLaplace` samples exactly that way: norm from
:math:`\Gamma(d, 1/\beta)`, direction from a normalised standard Gaussian vector. It is the only
sampler of this distribution in ``dplr``; everything that draws such noise draws it here.

Adding such noise with :math:`\beta = \varepsilon / S` to a vector-valued function of L2
sensitivity :math:`S` gives ε-differential privacy (Dwork, McSherry, Nissim & Smith 2006): for two
centres :math:`c_1, c_2` with :math:`\lVert c_1 - c_2\rVert \le S`, the log-ratio of the two
densities at any output :math:`t` is :math:`\beta(\lVert t - c_2\rVert - \lVert t - c_1\rVert)`,
bounded by :math:`\beta \lVert c_1 - c_2\rVert \le \varepsilon` by the triangle inequality
(:meth:`VectorLaplace.privacy_loss`, :meth:`VectorLaplace.max_privacy_loss`).

**The second noise family**, :class:`IsotropicGaussian` (:math:`\eta \sim N(0, \sigma^2 I_d)`, for
(ε, δ)-DP), has the same methods -- those of :class:`NoiseMechanism`: ``sample``, ``log_density``,
``privacy_loss`` -- and its exact privacy map, the privacy profile :math:`\delta(\varepsilon)` of Balle & Wang
(ICML 2018, Theorem 8) (:meth:`IsotropicGaussian.delta`). Its calibrations live in :mod:`dplr.gaussian`; the
algorithms draw from it exactly as they draw from :class:`VectorLaplace`; DP-SGD's per-step noise too.

**Laplace coordinates**, :class:`LaplaceCoordinates` (independent :math:`\mathrm{Laplace}(0, b)` per
coordinate, the classical Laplace mechanism's noise), serve a reading of the thesis the book replicates. Nothing
in ``dplr`` draws any of these laws but through these classes (``tests/test_architecture.py`` checks it).

**The hardened release**, :class:`GridLaplace`, is private for what it outputs as run: it rounds a vector to a
power-of-two grid :math:`g\mathbb{Z}^d`, adds integer noise from :class:`DiscreteLaplace` -- drawn exactly, in
integer arithmetic on the ``Generator``'s uniform integers, by Canonne, Kamath & Steinke's (NeurIPS 2020)
Algorithms 1-2, with no floating-point transcendental function -- and releases the grid points :math:`gk`, which are
exact float64 numbers. Its calibration is :func:`dplr.calibration.grid_laplace_calibration`; the book's chapter on
floating point proves it. Its (ε, δ) counterpart :class:`GridGaussian` adds :class:`DiscreteGaussian` indices instead
(the same paper's Algorithm 3, on the same integer primitives; calibrated by
:func:`dplr.gaussian.grid_gaussian_calibration`). The module is over 400 lines because every sampler of noise lives here (a test checks it).

The functions :func:`sample_vector_laplace`, :func:`vector_laplace_log_density`,
:func:`vector_laplace_norm_distribution` and :func:`vector_laplace_privacy_loss` are the same
object's methods under the rate :math:`\beta`, for readers who think in formulas.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from fractions import Fraction
from typing import Protocol

import numpy as np
from scipy import optimize, special, stats

from dplr.directed_rounding import exact, round_down, round_up
from dplr.validation import check_positive_finite, check_positive_integer, check_random_state

__all__ = [
    "DiscreteGaussian",
    "bernoulli_exp",
    "DiscreteLaplace",
    "GridGaussian",
    "GridLaplace",
    "IsotropicGaussian",
    "LaplaceCoordinates",
    "NoiseMechanism",
    "PolarDraws",
    "VectorLaplace",
    "laplace_mechanism",
    "sample_vector_laplace",
    "vector_laplace_norm_distribution",
    "vector_laplace_log_density",
    "vector_laplace_privacy_loss",
]


def _draw_count(size) -> int:
    """The number of draws a sampler's ``size`` asks for: 1 for ``None``, else a non-negative integer (or ValueError)."""
    n_draws = 1 if size is None else size
    if isinstance(n_draws, bool) or not isinstance(n_draws, (int, np.integer)) or n_draws < 0:
        raise ValueError(f"size must be None or a non-negative integer, got {size!r}.")
    return n_draws


class NoiseMechanism(Protocol):
    """What the algorithms and the analyses use of a noise distribution on :math:`\\mathbb{R}^d`."""

    dim: int

    def sample(self, size=None, random_state=None) -> np.ndarray:
        """One draw of shape ``(dim,)`` (``size=None``) or ``size`` draws, shape ``(size, dim)``."""

    def log_density(self, eta) -> np.ndarray:
        """Log of the normalised density at ``eta`` (shape ``(..., dim)``)."""

    def privacy_loss(self, output, centre_1, centre_2) -> np.ndarray:
        """:math:`\\log p(t - c_1) / p(t - c_2)` at outputs ``t``: the privacy loss of adding this noise."""


@dataclass(frozen=True)
class PolarDraws:
    r"""Standardised draws of the vector Laplace family: radii :math:`\sim \Gamma(d, 1)` and uniform directions.

    A vector of scale :math:`\theta` is ``radius * theta * direction``. Keeping the standardised draws
    lets one set of random numbers serve several scales (common random numbers, as the replications
    use them); :meth:`VectorLaplace.sample` is :meth:`sample` followed by :meth:`vectors`.
    """

    radii: np.ndarray  # (k,)
    directions: np.ndarray  # (k, d), unit rows

    @classmethod
    def sample(cls, dim, size, random_state=None) -> "PolarDraws":
        """``size`` radii :math:`\\Gamma(d, 1)`, then ``size`` directions (normalised standard Gaussians)."""
        rng = check_random_state(random_state)
        radii = rng.gamma(shape=dim, scale=1.0, size=size)
        directions = rng.standard_normal((size, dim))
        directions /= np.linalg.norm(directions, axis=1, keepdims=True)
        return cls(radii, directions)

    def vectors(self, scale=None, rate=None) -> np.ndarray:
        r"""The noise vectors with norm scale :math:`\theta` (``scale``: radius times :math:`\theta`) or rate
        :math:`\beta` (``rate``: radius divided by :math:`\beta`); give exactly one."""
        if (scale is None) == (rate is None):
            raise ValueError("give exactly one of scale and rate.")
        radii = self.radii * scale if rate is None else self.radii / rate
        return radii[:, None] * self.directions


@dataclass(frozen=True)
class VectorLaplace:
    r"""The distribution :math:`h(\eta) \propto e^{-\beta\lVert\eta\rVert}` on :math:`\mathbb{R}^d` (NIPS 2008, Sections 3-4).

    Build it from its rate :math:`\beta` (:meth:`from_rate`, e.g. :math:`n\lambda\varepsilon/2` for
    Algorithm 1) or its scale :math:`\theta = 1/\beta` (:meth:`from_scale`); both are kept exactly as
    given, the other is their reciprocal -- from a rate, rounded up, so that the law drawn is never narrower than
    the rate says. Draws use the scale (the norm is :math:`\Gamma(d, \text{scale}=\theta)`), densities and
    privacy losses the rate.
    """

    dim: int
    rate: float
    scale: float

    @classmethod
    def from_rate(cls, dim, rate) -> "VectorLaplace":
        r"""The law of rate ``rate``, drawn with scale :math:`1/\beta` rounded up: its true rate is at most ``rate``."""
        rate = check_positive_finite(rate, "beta")
        scale = round_up(1 / exact(rate))
        if not math.isfinite(scale):
            raise ValueError(f"beta = {rate!r} gives a noise scale 1/beta beyond float64's range: the release would be "
                             f"all noise. Fix: a larger epsilon or sensitivity ratio (a rate above 1e-308).")
        return cls(check_positive_integer(dim, "dim"), rate, scale)

    @classmethod
    def from_scale(cls, dim, scale) -> "VectorLaplace":
        r"""The law of scale ``scale``: its rate :math:`1/\theta` rounded up, so the privacy losses computed from it are
        never below the law's."""
        scale = check_positive_finite(scale, "scale")
        return cls(check_positive_integer(dim, "dim"), round_up(1 / exact(scale)), scale)

    def sample(self, size=None, random_state=None) -> np.ndarray:
        r"""Draw from :math:`h`: norm :math:`\Gamma(d, \theta)`, direction uniform on :math:`S^{d-1}`.

        ``size=None`` returns one vector of shape ``(dim,)``; an integer ``k`` returns ``(k, dim)``.
        The stream is used in this order: ``k`` Gamma variates, then ``k * dim`` standard normals.
        """
        n_draws = _draw_count(size)
        draws = PolarDraws.sample(self.dim, n_draws, random_state).vectors(scale=self.scale)
        return draws[0] if size is None else draws

    def norm_distribution(self):
        r"""The law of :math:`\lVert\eta\rVert`: ``scipy.stats.gamma(a=dim, scale=1/rate)`` (frozen)."""
        return stats.gamma(a=self.dim, scale=1.0 / self.rate)

    def log_density(self, eta) -> np.ndarray:
        r"""Log of the normalised density :math:`h(\eta) = \beta^d\,\Gamma(d/2) / (2\pi^{d/2}\Gamma(d))\,e^{-\beta\lVert\eta\rVert}`.

        The constant follows from integrating in polar coordinates: the surface area of
        :math:`S^{d-1}` is :math:`2\pi^{d/2}/\Gamma(d/2)` and
        :math:`\int_0^\infty r^{d-1}e^{-\beta r}dr = \Gamma(d)/\beta^d`. ``eta`` has shape ``(..., d)``, its last
        axis the law's dimension (else ``ValueError``).
        """
        beta = self.rate
        eta = np.atleast_1d(np.asarray(eta, dtype=float))  # a scalar is a point of a 1-dimensional law
        d = eta.shape[-1]
        if d != self.dim:
            raise ValueError(f"eta has {d} coordinates, the law {self.dim}: pass points of shape (..., {self.dim}).")
        log_const = (
            d * np.log(beta) + special.gammaln(d / 2) - np.log(2.0) - (d / 2) * np.log(np.pi) - special.gammaln(d)
        )
        return log_const - beta * np.linalg.norm(eta, axis=-1)

    def privacy_loss(self, output, centre_1, centre_2) -> np.ndarray:
        r"""Privacy loss :math:`\log h(t - c_1)/h(t - c_2) = \beta(\lVert t-c_2\rVert - \lVert t-c_1\rVert)`.

        ``output`` may hold many points, shape ``(..., d)``. Its supremum over ``t`` is
        :meth:`max_privacy_loss`, reached on the ray from :math:`c_1` away from :math:`c_2`.
        """
        output = np.asarray(output, dtype=float)
        return self.rate * (np.linalg.norm(output - centre_2, axis=-1) - np.linalg.norm(output - centre_1, axis=-1))

    def max_privacy_loss(self, distance) -> float:
        r"""The privacy map: :math:`\sup_t |\log h(t - c_1)/h(t - c_2)| = \beta\lVert c_1 - c_2\rVert` for centres
        ``distance`` apart (triangle inequality; attained)."""
        return float(self.rate * distance)


@dataclass(frozen=True)
class IsotropicGaussian:
    r"""The Gaussian noise :math:`\eta \sim N(0, \sigma^2 I_d)` on :math:`\mathbb{R}^d`, with its exact privacy map.

    Build it with :meth:`from_sigma`. Adding it to a vector-valued function of L2 sensitivity :math:`\Delta`
    is the Gaussian mechanism; its privacy loss at an output :math:`t` for centres :math:`c_1, c_2` is
    :math:`(\lVert t - c_2\rVert^2 - \lVert t - c_1\rVert^2)/(2\sigma^2)`, unbounded in :math:`t`, so the
    mechanism is (ε, δ)-DP, never ε-DP. Its exact δ for a given ε is :meth:`delta`.
    """

    dim: int
    sigma: float

    @classmethod
    def from_sigma(cls, dim, sigma) -> "IsotropicGaussian":
        return cls(check_positive_integer(dim, "dim"), check_positive_finite(sigma, "sigma"))

    def sample(self, size=None, random_state=None) -> np.ndarray:
        r"""Draw :math:`\eta \sim N(0, \sigma^2 I_d)`: ``size=None`` one vector ``(dim,)``, ``k`` draws ``(k, dim)``.

        The stream is used once: ``k * dim`` standard normals (``Generator.standard_normal``), times :math:`\sigma`.
        """
        n_draws = _draw_count(size)
        draws = check_random_state(random_state).standard_normal((n_draws, self.dim)) * self.sigma
        return draws[0] if size is None else draws

    def log_density(self, eta) -> np.ndarray:
        r"""Log of :math:`(2\pi\sigma^2)^{-d/2} e^{-\lVert\eta\rVert^2/(2\sigma^2)}` at ``eta`` (shape ``(..., d)``)."""
        eta = np.asarray(eta, dtype=float)
        d = eta.shape[-1]
        return -0.5 * d * np.log(2.0 * np.pi * self.sigma**2) - np.sum(eta**2, axis=-1) / (2.0 * self.sigma**2)

    def privacy_loss(self, output, centre_1, centre_2) -> np.ndarray:
        r"""Privacy loss :math:`\log p(t - c_1)/p(t - c_2) = (\lVert t-c_2\rVert^2 - \lVert t-c_1\rVert^2)/(2\sigma^2)`.

        Under :math:`t \sim c_1 + \eta` it is :math:`N(\mu, 2\mu)` with :math:`\mu = \lVert c_1 - c_2\rVert^2/(2\sigma^2)`
        (Balle & Wang 2018, Lemma 3).
        """
        output = np.asarray(output, dtype=float)
        return (np.sum((output - centre_2) ** 2, axis=-1) - np.sum((output - centre_1) ** 2, axis=-1)) / (
            2.0 * self.sigma**2)

    def delta(self, distance, epsilon) -> float:
        r"""The exact privacy profile: the smallest δ for which centres ``distance`` apart are (ε, δ)-indistinguishable.

        .. math::

            \delta(\varepsilon) = \Phi\Big(\frac{\Delta}{2\sigma} - \frac{\varepsilon\sigma}{\Delta}\Big)
                - e^{\varepsilon}\,\Phi\Big(-\frac{\Delta}{2\sigma} - \frac{\varepsilon\sigma}{\Delta}\Big)

        with :math:`\Delta` = ``distance`` (Balle & Wang, "Improving the Gaussian mechanism for differential
        privacy", ICML 2018, Theorem 8: the Gaussian mechanism of L2 sensitivity :math:`\Delta` is (ε, δ)-DP
        if and only if this is at most δ). ``epsilon >= 0``; the second term is computed as
        :math:`\exp(\varepsilon + \log\Phi(\cdot))` so that it neither overflows nor underflows early.
        ``distance = 0`` gives 0.
        """
        distance = float(distance)
        epsilon = float(epsilon)
        if not (np.isfinite(distance) and distance >= 0 and np.isfinite(epsilon) and epsilon >= 0):
            raise ValueError(f"need a finite distance >= 0 and epsilon >= 0, got {distance!r} and {epsilon!r}.")
        if distance == 0.0:
            return 0.0
        a = distance / (2.0 * self.sigma)
        b = epsilon * self.sigma / distance
        value = special.ndtr(a - b) - np.exp(epsilon + special.log_ndtr(-a - b))
        return float(max(value, 0.0))

    def epsilon(self, distance, delta) -> float:
        r"""The inverse of :meth:`delta`: the smallest :math:`\varepsilon \ge 0` with :math:`\delta(\varepsilon) \le` ``delta``.

        The exact ε at ``delta`` of two centres ``distance`` apart. :math:`\delta(\varepsilon)` decreases in ε;
        the root is bracketed by doubling and found by Brent's method (relative tolerance 1e-12), then rounded up
        until the condition holds as computed.
        """
        return _profile_epsilon(lambda e: self.delta(distance, e), delta)


@dataclass(frozen=True)
class LaplaceCoordinates:
    r"""Independent Laplace coordinates: :math:`\eta_j \sim \mathrm{Laplace}(0, b)`, density
    :math:`(2b)^{-d} e^{-\lVert\eta\rVert_1/b}` on :math:`\mathbb{R}^d`.

    The classical Laplace mechanism's noise, per coordinate (Dwork, McSherry, Nissim & Smith 2006): added to a
    function of L1 sensitivity :math:`S`, scale :math:`b = S/\varepsilon` gives ε-DP (its privacy loss is at most
    :math:`\lVert c_1 - c_2\rVert_1/b`, triangle inequality). Not the law of either algorithm of NIPS 2008 (that is
    :class:`VectorLaplace`); the thesis replication uses it for one reading of the thesis' noise
    (``dplr.replication.thesis.pipeline``). Build it with :meth:`from_scale`.
    """

    dim: int
    scale: float

    @classmethod
    def from_scale(cls, dim, scale) -> "LaplaceCoordinates":
        return cls(check_positive_integer(dim, "dim"), check_positive_finite(scale, "scale"))

    def sample(self, size=None, random_state=None) -> np.ndarray:
        r"""``size=None`` one vector ``(dim,)``, ``k`` draws ``(k, dim)``.

        The stream is used once: ``Generator.laplace(0, scale, (k, dim))``.
        """
        n_draws = _draw_count(size)
        draws = check_random_state(random_state).laplace(0.0, self.scale, size=(n_draws, self.dim))
        return draws[0] if size is None else draws

    def log_density(self, eta) -> np.ndarray:
        r"""Log of :math:`(2b)^{-d} e^{-\lVert\eta\rVert_1/b}` at ``eta`` (shape ``(..., dim)``)."""
        eta = np.asarray(eta, dtype=float)
        return -eta.shape[-1] * np.log(2.0 * self.scale) - np.sum(np.abs(eta), axis=-1) / self.scale

    def privacy_loss(self, output, centre_1, centre_2) -> np.ndarray:
        r"""Privacy loss :math:`(\lVert t-c_2\rVert_1 - \lVert t-c_1\rVert_1)/b` at outputs ``t``."""
        output = np.asarray(output, dtype=float)
        return (np.sum(np.abs(output - centre_2), axis=-1) - np.sum(np.abs(output - centre_1), axis=-1)) / self.scale


#: Bits of one draw of :func:`_uniform_below` for a bound beyond ``Generator.integers``' int64 range.
_CHUNK_BITS = 62


def _uniform_below(bound: int, rng) -> int:
    r"""A uniform integer of :math:`\{0, \dots, \text{bound}-1\}`, exactly (given uniform random bits).

    Up to :math:`2^{62}`: ``Generator.integers(bound)``, numpy's bounded integers (rejection sampling on 64-bit words,
    no bias). Beyond: ``bound``'s bit length in 62-bit chunks of such integers, rejected when at least ``bound``.
    """
    if bound <= 1 << _CHUNK_BITS:
        return int(rng.integers(bound))
    bits = bound.bit_length()
    while True:
        value = 0
        for _ in range(-(-bits // _CHUNK_BITS)):
            value = (value << _CHUNK_BITS) | int(rng.integers(1 << _CHUNK_BITS))
        value >>= -bits % _CHUNK_BITS  # keep exactly `bits` bits
        if value < bound:
            return value


def _bernoulli(numerator: int, denominator: int, rng) -> bool:
    """True with probability numerator/denominator, exactly: a uniform integer below ``denominator`` is below ``numerator``."""
    return _uniform_below(denominator, rng) < numerator


def _bernoulli_exp(numerator: int, denominator: int, rng) -> bool:
    r"""True with probability :math:`e^{-\gamma}`, :math:`\gamma = \text{numerator}/\text{denominator} \ge 0`, exactly.

    Canonne, Kamath & Steinke (NeurIPS 2020), Algorithm 1: for :math:`\gamma \le 1` count :math:`K`, the first
    :math:`k` with a Bernoulli(:math:`\gamma/k`) failure; :math:`\Pr[K \text{ odd}] = e^{-\gamma}`. A larger
    :math:`\gamma` is :math:`\lfloor\gamma\rfloor` Bernoulli(:math:`e^{-1}`) successes and one of the remainder.
    """
    while numerator > denominator:
        if not _bernoulli_exp(1, 1, rng):
            return False
        numerator -= denominator
    k = 1
    while _bernoulli(numerator, denominator * k, rng):
        k += 1
    return k % 2 == 1


def bernoulli_exp(gamma, random_state=None) -> bool:
    r"""True with probability :math:`e^{-\gamma}`, exactly, for a rational :math:`\gamma \ge 0` (a float64, an int or a
    ``fractions.Fraction``, taken exactly): Canonne, Kamath & Steinke's Algorithm 1 (``_bernoulli_exp``, the one the
    discrete samplers use) on ``Generator.integers``. The public door to it, for a sampler outside this module
    that needs an exact :math:`e^{-\gamma}` coin (:func:`dplr.tuning.exponential_mechanism`'s exact sampler)."""
    gamma = exact(gamma)
    if gamma < 0:
        raise ValueError(f"gamma must be >= 0 (a probability e^-gamma), got {float(gamma)!r}.")
    return _bernoulli_exp(gamma.numerator, gamma.denominator, check_random_state(random_state))


def _discrete_laplace(scale: Fraction, rng) -> int:
    r"""One draw of :math:`\Pr[Y = y] \propto e^{-|y|/\tau}` on :math:`\mathbb{Z}`, :math:`\tau` = ``scale`` = t/s.

    Canonne, Kamath & Steinke (NeurIPS 2020), Algorithm 2: :math:`X = U + tV` (``U`` uniform below t, kept with
    probability :math:`e^{-U/t}`; ``V`` geometric, Bernoulli(:math:`e^{-1}`) successes) is geometric with ratio
    :math:`e^{-1/t}`, :math:`\lfloor X/s\rfloor` geometric with ratio :math:`e^{-s/t}`, then a fair sign, -0 rejected.
    """
    t, s = scale.numerator, scale.denominator
    while True:
        u = _uniform_below(t, rng)
        if not _bernoulli_exp(u, t, rng):
            continue
        v = 0
        while _bernoulli_exp(1, 1, rng):
            v += 1
        y = (u + t * v) // s
        negative = _uniform_below(2, rng) == 1
        if negative and y == 0:
            continue
        return -y if negative else y


def _profile_epsilon(delta_at, delta) -> float:
    r"""The smallest :math:`\varepsilon \ge 0` with ``delta_at(ε)`` :math:`\le` ``delta``, for a privacy profile
    ``delta_at`` decreasing in ε: bracketed by doubling, found by Brent's method (relative tolerance 1e-12), then
    rounded up until the condition holds as computed (the safe direction: the ε returned is never below the root)."""
    delta = float(delta)
    if not 0.0 < delta < 1.0:
        raise ValueError(f"delta must lie in (0, 1), got {delta!r}.")
    if delta_at(0.0) <= delta:
        return 0.0
    high = 1.0
    while delta_at(high) > delta:
        high *= 2.0
    root = optimize.brentq(lambda e: delta_at(e) - delta, 0.0, high, xtol=1e-300, rtol=1e-12)
    while delta_at(root) > delta:
        root = np.nextafter(root, np.inf) if root > 0 else 1e-300
        root *= 1.0 + 1e-12
    return float(root)


def _positive_rational(value, name) -> Fraction:
    """``value`` as the exact rational it is (:func:`dplr.directed_rounding.exact`), if it is > 0, else ``ValueError``."""
    value = exact(value)
    if not value > 0:
        raise ValueError(f"{name} must be a positive rational, got {value!r}.")
    return value


@dataclass(frozen=True)
class DiscreteLaplace:
    r"""Independent discrete Laplace coordinates on :math:`\mathbb{Z}^d`:
    :math:`\Pr[K = k] = \prod_j \frac{1 - e^{-1/\tau}}{1 + e^{-1/\tau}}\, e^{-|k_j|/\tau}`.

    Added to an integer vector of L1 sensitivity :math:`\Delta_1`, scale :math:`\tau \ge \Delta_1/\varepsilon` gives
    ε-DP: the ratio of the two probabilities of any output is at most :math:`e^{\Delta_1/\tau}` (triangle
    inequality), and every integer vector has positive probability, so there is no output one neighbour produces
    and the other cannot. The sampler is exact: Canonne, Kamath & Steinke (NeurIPS 2020, "The Discrete Gaussian for
    Differential Privacy"), Algorithms 1-2, in Python's integers on ``Generator.integers`` -- no float, no logarithm,
    no exponential. The guarantee assumes the Generator's bits are uniform (a pseudo-random generator's are not,
    only indistinguishable from it). ``scale`` is an exact rational (a ``fractions.Fraction``); build it with
    :meth:`from_scale`.
    """

    dim: int
    scale: Fraction

    @classmethod
    def from_scale(cls, dim, scale) -> "DiscreteLaplace":
        return cls(check_positive_integer(dim, "dim"), _positive_rational(scale, "scale"))

    def sample(self, size=None, random_state=None) -> np.ndarray:
        """``size=None`` one integer vector ``(dim,)`` (int64), ``k`` draws ``(k, dim)``; coordinates in order."""
        n_draws = _draw_count(size)
        rng = check_random_state(random_state)
        draws = np.array([[_discrete_laplace(self.scale, rng) for _ in range(self.dim)] for _ in range(n_draws)],
                         dtype=np.int64).reshape(n_draws, self.dim)
        return draws[0] if size is None else draws

    def log_density(self, eta) -> np.ndarray:
        r"""Log of the probability of the integer vectors ``eta`` (shape ``(..., dim)``; float64, for analyses)."""
        eta = np.asarray(eta, dtype=float)
        rate = float(1 / self.scale)
        log_norm = math.log(-math.expm1(-rate)) - math.log1p(math.exp(-rate))
        return eta.shape[-1] * log_norm - rate * np.sum(np.abs(eta), axis=-1)

    def privacy_loss(self, output, centre_1, centre_2) -> np.ndarray:
        r"""Privacy loss :math:`(\lVert t-c_2\rVert_1 - \lVert t-c_1\rVert_1)/\tau` at integer outputs ``t``."""
        output = np.asarray(output, dtype=float)
        return (np.sum(np.abs(output - centre_2), axis=-1)
                - np.sum(np.abs(output - centre_1), axis=-1)) / float(self.scale)

    def max_privacy_loss(self, l1_distance) -> Fraction:
        r"""The largest privacy loss between centres at L1 distance :math:`\Delta_1`: :math:`\Delta_1/\tau`, exactly."""
        return exact(l1_distance) / self.scale


@dataclass(frozen=True)
class GridLaplace:
    r"""The hardened release: :math:`v \mapsto g\,(\mathrm{round}(v/g) + K)`, :math:`K \sim` :class:`DiscreteLaplace`.

    ``grid`` :math:`g` is a power of two, so every released :math:`g k` (:math:`|k| < 2^{53}`) is a float64 number
    exactly: the float64 output *is* the mathematical output, and the privacy of the integer mechanism
    :math:`\mathrm{round}(v/g) + K` (exact rationals, then the exact sampler) is the privacy of what is released.
    Rounding to the nearest grid point moves each coordinate by at most :math:`g/2`, so neighbours whose values are
    at L1 distance :math:`D` give integer vectors at L1 distance at most :math:`D/g + d`
    (:func:`dplr.calibration.grid_laplace_calibration` calibrates to it). The :class:`NoiseMechanism` methods
    describe the noise :math:`gK`; :meth:`release` is the mechanism.
    """

    grid: float
    noise: DiscreteLaplace

    @property
    def dim(self) -> int:
        return self.noise.dim

    def snap(self, value) -> np.ndarray:
        """The nearest grid indices of ``value`` (exact, in rationals; ties to even), int64 of ``value``'s shape."""
        value = np.asarray(value, dtype=float)
        grid = Fraction(self.grid)
        return np.array([round(Fraction(float(x)) / grid) for x in value.reshape(-1)],
                        dtype=np.int64).reshape(value.shape)

    def release(self, value, size=None, random_state=None) -> np.ndarray:
        r""":math:`g(\mathrm{round}(v/g) + K)` for a vector ``value`` ``(dim,)``: one ``(dim,)`` or ``size`` ``(size, dim)``.

        Refuses (``RuntimeError``) an index beyond :math:`2^{53}` -- not exactly a float64 multiple of :math:`g` --
        a decision on the private integers only (post-processing).
        """
        centre = self.snap(value)
        if centre.shape != (self.dim,):
            raise ValueError(f"value must have shape ({self.dim},), got {centre.shape}.")
        indices = centre + self.noise.sample(size, random_state)
        if np.any(np.abs(indices) >= 2**53):
            raise RuntimeError("a released grid index exceeds 2**53, beyond float64's exact integers: the noise or "
                               "the value is too large for the grid. Fix: a larger epsilon or lam.")
        return indices * self.grid  # exact: an integer below 2**53 times a power of two

    def sample(self, size=None, random_state=None) -> np.ndarray:
        """The noise on the grid, :math:`gK`: ``(dim,)`` or ``(size, dim)``."""
        return self.noise.sample(size, random_state) * self.grid

    def log_density(self, eta) -> np.ndarray:
        """Log-probability of the grid noise ``eta`` (``-inf`` off the grid)."""
        eta = np.asarray(eta, dtype=float)
        steps = eta / self.grid
        on_grid = np.all(steps == np.round(steps), axis=-1)
        return np.where(on_grid, self.noise.log_density(np.round(steps)), -np.inf)

    def privacy_loss(self, output, centre_1, centre_2) -> np.ndarray:
        r"""Privacy loss at grid outputs ``t`` of the releases of ``centre_1`` and ``centre_2`` (snapped first)."""
        steps = np.asarray(output, dtype=float) / self.grid
        return self.noise.privacy_loss(steps, self.snap(centre_1), self.snap(centre_2))


def _discrete_gaussian(variance: Fraction, rng) -> int:
    r"""One draw of :math:`\Pr[Y = y] \propto e^{-y^2/(2\sigma^2)}` on :math:`\mathbb{Z}`, :math:`\sigma^2` = ``variance``.

    Canonne, Kamath & Steinke (NeurIPS 2020), Algorithm 3: :math:`t = \lfloor\sigma\rfloor + 1`; draw :math:`Y` from
    the discrete Laplace of scale :math:`t` (:func:`_discrete_laplace`) and keep it with probability
    :math:`e^{-(|Y| - \sigma^2/t)^2/(2\sigma^2)}` (:func:`_bernoulli_exp`, exact: the exponent is rational). The kept
    :math:`Y` has exactly the discrete Gaussian law (their Section 5.3): :math:`e^{-|y|/t}\,e^{-(|y| - \sigma^2/t)^2/(2
    \sigma^2)} = e^{-y^2/(2\sigma^2)}\,e^{-\sigma^2/(2t^2)}`, a constant times the target.
    """
    t = math.isqrt(math.floor(variance)) + 1  # floor(sqrt(floor(x))) = floor(sqrt(x)): t = floor(sigma) + 1
    centre = variance / t
    while True:
        y = _discrete_laplace(Fraction(t), rng)
        gamma = (abs(y) - centre) ** 2 / (2 * variance)
        if _bernoulli_exp(gamma.numerator, gamma.denominator, rng):
            return y


@dataclass(frozen=True)
class DiscreteGaussian:
    r"""Independent discrete Gaussian coordinates on :math:`\mathbb{Z}^d`:
    :math:`\Pr[K = k] = \prod_j e^{-k_j^2/(2\sigma^2)}/Z_\sigma`, :math:`Z_\sigma = \sum_{y\in\mathbb{Z}} e^{-y^2/(2\sigma^2)}`.

    Added to an integer vector of L2 sensitivity :math:`\Delta_2`, it is :math:`\rho`-zCDP with
    :math:`\rho = \Delta_2^2/(2\sigma^2)` (Canonne, Kamath & Steinke, NeurIPS 2020, "The Discrete Gaussian for
    Differential Privacy", the multivariate discrete Gaussian's concentrated DP, Section 2), hence (ε, δ)-DP by the
    conversion of :func:`dplr.gaussian.zcdp_rho`. The sampler is exact: their Algorithm 3 (``_discrete_gaussian``)
    on the exact discrete Laplace of :class:`DiscreteLaplace`, in Python's integers on ``Generator.integers`` -- no
    float, no logarithm, no exponential. ``variance`` :math:`\sigma^2` is an exact rational (a
    ``fractions.Fraction``); build it with :meth:`from_variance` or :meth:`from_sigma` (σ a float64 or a Fraction,
    squared exactly). The guarantee assumes the Generator's bits are uniform, as :class:`DiscreteLaplace`'s.
    """

    dim: int
    variance: Fraction

    @classmethod
    def from_variance(cls, dim, variance) -> "DiscreteGaussian":
        return cls(check_positive_integer(dim, "dim"), _positive_rational(variance, "variance"))

    @classmethod
    def from_sigma(cls, dim, sigma) -> "DiscreteGaussian":
        return cls.from_variance(dim, exact(sigma) ** 2)

    @property
    def sigma(self) -> float:
        """σ as a float64 (for analyses; the sampler uses :attr:`variance`)."""
        return math.sqrt(float(self.variance))

    def sample(self, size=None, random_state=None) -> np.ndarray:
        """``size=None`` one integer vector ``(dim,)`` (int64), ``k`` draws ``(k, dim)``; coordinates in order."""
        n_draws = _draw_count(size)
        rng = check_random_state(random_state)
        draws = np.array([[_discrete_gaussian(self.variance, rng) for _ in range(self.dim)] for _ in range(n_draws)],
                         dtype=np.int64).reshape(n_draws, self.dim)
        return draws[0] if size is None else draws

    def log_normaliser(self) -> float:
        r""":math:`\log Z_\sigma` in float64: summed for :math:`\sigma < 2`; above, :math:`\sqrt{2\pi}\sigma` (Poisson
        summation: :math:`Z_\sigma = \sqrt{2\pi}\sigma(1 + 2\sum_{m\ge1} e^{-2\pi^2\sigma^2m^2})`, the sum below
        :math:`10^{-34}`)."""
        sigma = self.sigma
        if sigma >= 2.0:
            return math.log(math.sqrt(2.0 * math.pi) * sigma)
        k = np.arange(-int(40 * sigma) - 2, int(40 * sigma) + 3, dtype=float)
        return math.log(float(np.sum(np.exp(-k**2 / (2.0 * float(self.variance))))))

    def log_density(self, eta) -> np.ndarray:
        r"""Log of the probability of the integer vectors ``eta`` (shape ``(..., dim)``; float64, for analyses)."""
        eta = np.asarray(eta, dtype=float)
        return -eta.shape[-1] * self.log_normaliser() - np.sum(eta**2, axis=-1) / (2.0 * float(self.variance))

    def privacy_loss(self, output, centre_1, centre_2) -> np.ndarray:
        r"""Privacy loss :math:`(\lVert t-c_2\rVert^2 - \lVert t-c_1\rVert^2)/(2\sigma^2)` at integer outputs ``t``."""
        output = np.asarray(output, dtype=float)
        return (np.sum((output - centre_2) ** 2, axis=-1)
                - np.sum((output - centre_1) ** 2, axis=-1)) / (2.0 * float(self.variance))

    def rho(self, l2_distance) -> Fraction:
        r"""The zCDP parameter between centres at L2 distance :math:`\Delta_2`: :math:`\Delta_2^2/(2\sigma^2)`, exactly."""
        return exact(l2_distance) ** 2 / (2 * self.variance)

    def _tail(self, threshold) -> float:
        r""":math:`\Pr[Y > a]` of one coordinate (float64 sum of the probabilities up to :math:`a + 40\sigma`; below 0,
        :math:`1 - \Pr[Y > -\lfloor a\rfloor - 1]` by symmetry)."""
        start = math.floor(threshold) + 1
        if start < 0:
            return 1.0 - self._tail(-start)
        k = np.arange(start, start + int(40 * self.sigma) + 3, dtype=float)
        return float(np.sum(np.exp(-k**2 / (2.0 * float(self.variance)) - self.log_normaliser())))

    def delta(self, shift, epsilon) -> float:
        r"""The exact δ at ``epsilon`` of one coordinate's release from integer centres ``shift`` apart (the others equal).

        Canonne, Kamath & Steinke (2020), the tight (ε, δ) of the discrete Gaussian: :math:`\delta = \Pr[Y > \varepsilon
        \sigma^2/m - m/2] - e^\varepsilon\Pr[Y > \varepsilon\sigma^2/m + m/2]` for :math:`m` = ``shift``, the mass where
        the privacy loss :math:`(m^2 - 2km)/(2\sigma^2)` exceeds ε, less its image. Summed in float64 (for analyses).
        """
        m = abs(int(shift))
        if m == 0:
            return 0.0
        a = float(epsilon) * float(self.variance) / m
        return max(self._tail(a - m / 2) - math.exp(float(epsilon)) * self._tail(a + m / 2), 0.0)

    def epsilon(self, shift, delta) -> float:
        r"""The inverse of :meth:`delta`: the smallest ε ≥ 0 with :math:`\delta(\varepsilon) \le` ``delta``, rounded up
        until it holds as computed (``_profile_epsilon``, as :meth:`IsotropicGaussian.epsilon`)."""
        return _profile_epsilon(lambda e: self.delta(shift, e), delta)


@dataclass(frozen=True)
class GridGaussian(GridLaplace):
    r"""The hardened (ε, δ) release: :math:`v \mapsto g\,(\mathrm{round}(v/g) + K)`, :math:`K \sim` :class:`DiscreteGaussian`.

    :class:`GridLaplace` with discrete Gaussian indices: the same exact rounding to the power-of-two grid :math:`g`,
    the same exact float64 outputs :math:`gk`. Rounding moves each coordinate by at most :math:`g/2`, so neighbours
    whose values are at L2 distance :math:`D` give integer vectors at L2 distance at most :math:`D/g + \sqrt d`
    (:func:`dplr.gaussian.grid_gaussian_calibration` calibrates to it).
    """

    noise: DiscreteGaussian


def laplace_mechanism(value, sensitivity, epsilon, random_state=None):
    r"""Release ``value + eta`` with :math:`\eta \propto e^{-(\varepsilon/S)\lVert\eta\rVert}`.

    ε-differentially private when ``sensitivity`` :math:`S` bounds the L2 change of ``value`` between
    neighbouring data sets (Dwork et al. 2006; NIPS 2008, Section 2); for an array, the L2 (Frobenius) change of all
    its entries, which get one noise vector of their number of dimensions. A scalar ``value`` is treated
    as a 1-vector, for which this is the classical Laplace mechanism with scale :math:`S/\varepsilon`.
    """
    sensitivity = check_positive_finite(sensitivity, "sensitivity")
    epsilon = check_positive_finite(epsilon, "epsilon")
    value = np.asarray(value, dtype=float)
    flat = value.reshape(-1)  # every entry its own coordinate of the noise: rows never share a draw
    rate = round_down(exact(epsilon) / exact(sensitivity))  # at most epsilon/S (dplr.directed_rounding)
    noise = VectorLaplace.from_rate(flat.size, rate).sample(random_state=random_state)
    return (flat + noise).reshape(value.shape)


def sample_vector_laplace(beta, dim, size=None, random_state=None):
    r"""Draw vectors from :math:`h(\eta) \propto e^{-\beta\lVert\eta\rVert}` on R^dim: ``VectorLaplace.from_rate(dim, beta).sample(size, random_state)``.

    The norm is drawn from :math:`\Gamma(\text{shape}=d, \text{scale}=1/\beta)` and the direction
    uniformly on the unit sphere :math:`S^{d-1}` (NIPS 2008, Algorithm 1 step 2 and Algorithm 2
    step 1). ``size=None`` returns one vector of shape ``(dim,)``; an integer ``k`` returns ``(k, dim)``.
    """
    return VectorLaplace.from_rate(dim, beta).sample(size, random_state)


def vector_laplace_norm_distribution(beta, dim):
    r"""The law of :math:`\lVert\eta\rVert`: ``scipy.stats.gamma(a=dim, scale=1/beta)`` (frozen)."""
    return VectorLaplace.from_rate(dim, beta).norm_distribution()


def vector_laplace_log_density(eta, beta):
    r"""Log of the normalised density of :math:`h(\eta) \propto e^{-\beta\lVert\eta\rVert}` at ``eta`` (``(..., d)``); see :meth:`VectorLaplace.log_density`."""
    eta = np.asarray(eta, dtype=float)
    return VectorLaplace.from_rate(eta.shape[-1], beta).log_density(eta)


def vector_laplace_privacy_loss(output, centre_1, centre_2, beta):
    r"""Privacy loss :math:`\beta(\lVert t-c_2\rVert - \lVert t-c_1\rVert)` at outputs ``t``; see :meth:`VectorLaplace.privacy_loss`."""
    output = np.asarray(output, dtype=float)
    return VectorLaplace.from_rate(output.shape[-1], beta).privacy_loss(output, centre_1, centre_2)

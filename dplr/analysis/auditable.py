r"""The library's mechanisms as auditable callables, each with its exact privacy loss.

An auditable mechanism is a callable ``mechanism(data, random_state, size=None)`` -- one output, or
``size`` outputs -- with a method ``max_privacy_loss(pair)``, the supremum of its privacy loss on a
neighbouring pair computed from its output density. The privacy loss of Gaussian noise is unbounded, so for
the (ε, δ) mechanisms ``max_privacy_loss(pair)`` is the exact ε at their δ on the pair (the smallest ε with
:math:`\Pr[M(D) \in S] \le e^\varepsilon \Pr[M(D') \in S] + \delta` for every event :math:`S`,
:meth:`dplr.mechanisms.IsotropicGaussian.epsilon`), where it is known in closed form; audit them with
``audit(..., delta=mechanism.delta)``. :func:`dplr.analysis.audit.check_claim` runs both
checks. Each mechanism here calls the library's own algorithm (:mod:`dplr.algorithms`,
:mod:`dplr.mechanisms`), so what is audited is what users run; :mod:`dplr.analysis.broken` holds
deliberately broken ones in the same form. The module is over 400 lines because it holds every mechanism the audits
run, each with its exact loss where one is known, so that what is audited is one place.
"""
from __future__ import annotations

from dataclasses import dataclass, fields
from typing import Any, ClassVar

import numpy as np
from scipy import optimize, stats

from dplr.algorithms import standard_erm
from dplr.analysis.audit import pair_data
from dplr.analysis.neighbours import NeighbouringPair
from dplr.analysis.privacy_loss import sensitivity_method_max_privacy_loss
from dplr.analysis.privacy_loss_search import max_objective_perturbation_privacy_loss
from dplr.calibration import grid_laplace_calibration
from dplr.dpsgd import dpsgd_epsilon, dpsgd_train
from dplr.gaussian import analytic_gaussian_sigma, gaussian_output_perturbation_calibration, grid_gaussian_calibration
from dplr.learners import LEARNERS
from dplr.losses import get_loss
from dplr.mechanisms import IsotropicGaussian, VectorLaplace
from dplr.release import grid_gaussian_release, grid_laplace_release
from dplr.selection import random_stopping, run_budget, run_epsilon
from dplr.validation import check_random_state

__all__ = [
    "grid_gaussian_pair_epsilon",
    "GridGaussianMechanism",
    "GridLaplaceMechanism",
    "LaplaceMechanism",
    "SensitivityMethodMechanism",
    "ObjectivePerturbationMechanism",
    "GaussianMechanism",
    "GaussianOutputPerturbationMechanism",
    "GaussianObjectivePerturbationMechanism",
    "ApproximateMinimaPerturbationMechanism",
    "DPSGDMechanism",
    "PrivateSelectionMechanism",
    "GaussianSelectionMechanism",
]


class _LearnerMechanism:
    """A learner of :data:`dplr.learners.LEARNERS` (``learner``) as an auditable callable: a call releases ``size``
    outputs (``n_draws``) with the fields of the same names as the learner's privacy target and parameters, and the
    field ``chunk_size``, where there is one, as the solver's block size."""

    learner: ClassVar[str]

    def __call__(self, data, random_state=None, size=None):
        X, y = data
        learner = LEARNERS[self.learner]
        values = {field.name: getattr(self, field.name) for field in fields(self)}
        options = {"solver_options": {"chunk_size": values["chunk_size"]}} if "chunk_size" in values else {}
        parameters = {name: values[name] for name in learner.privacy_target + learner.parameters if name in values}
        return learner.release(X, y, **parameters, loss=self.loss, n_draws=size, random_state=random_state, **options)


@dataclass(frozen=True)
class LaplaceMechanism:
    r"""The vector Laplace mechanism :math:`t = v + \eta`, :math:`\eta \propto e^{-(\varepsilon/S)\lVert\eta\rVert}`.

    Calling it draws from :class:`dplr.mechanisms.VectorLaplace`, the sampler behind
    :func:`dplr.mechanisms.laplace_mechanism` (one call with ``size=None`` draws exactly what
    ``laplace_mechanism(v, S, epsilon, random_state)`` draws). The data are the query values :math:`v`.
    """

    sensitivity: float
    epsilon: float

    @property
    def noise_rate(self) -> float:
        return self.epsilon / self.sensitivity

    def __call__(self, value, random_state=None, size=None):
        value = np.atleast_1d(np.asarray(value, dtype=float))
        return value + VectorLaplace.from_rate(value.shape[0], self.noise_rate).sample(size, random_state)

    def max_privacy_loss(self, pair) -> float:
        r""":math:`\sup_t|\log p_v(t)/p_{v'}(t)| = \beta\lVert v - v'\rVert` (triangle inequality; attained)."""
        v, v_prime = (np.atleast_1d(np.asarray(a, dtype=float)) for a in pair_data(pair))
        return VectorLaplace.from_rate(v.shape[0], self.noise_rate).max_privacy_loss(np.linalg.norm(v - v_prime))


@dataclass(frozen=True)
class GridLaplaceMechanism:
    r"""The hardened release :math:`g(\mathrm{round}(v/g) + K)` (:func:`dplr.release.grid_laplace_release`) of values
    :math:`v` of L2 sensitivity ``sensitivity``, as an auditable callable; the data are the values."""

    sensitivity: float
    epsilon: float

    def __call__(self, value, random_state=None, size=None):
        value = np.atleast_1d(np.asarray(value, dtype=float))
        return grid_laplace_release(value, self.sensitivity, self.epsilon, size, random_state)

    def max_privacy_loss(self, pair) -> float:
        r""":math:`\lVert c - c'\rVert_1/\tau` with :math:`c, c'` the grid indices of the pair's values: the largest
        log-ratio of the two discrete Laplace laws (triangle inequality; attained), exact before the conversion to
        float."""
        v, v_prime = (np.atleast_1d(np.asarray(a, dtype=float)) for a in pair_data(pair))
        mechanism = grid_laplace_calibration(self.sensitivity, self.epsilon, v.shape[0]).mechanism()
        distance = int(np.sum(np.abs(mechanism.snap(v) - mechanism.snap(v_prime))))
        return float(mechanism.noise.max_privacy_loss(distance))


def grid_gaussian_pair_epsilon(mechanism, pair, delta) -> float:
    r"""The exact ε at ``delta`` of a :class:`~dplr.mechanisms.GridGaussian` on a pair of values whose grid indices
    differ in at most one coordinate (:meth:`dplr.mechanisms.DiscreteGaussian.epsilon`: the other coordinates' laws
    are equal and cancel); ``ValueError`` otherwise (the exact ε of a diagonal shift is not implemented)."""
    v, v_prime = (np.atleast_1d(np.asarray(a, dtype=float)) for a in pair_data(pair))
    shift = mechanism.snap(v) - mechanism.snap(v_prime)
    if np.count_nonzero(shift) > 1:
        raise ValueError("the exact epsilon of the grid Gaussian release is implemented for pairs whose grid indices "
                         "differ in one coordinate. Fix: audit a pair that differs in one coordinate.")
    return mechanism.noise.epsilon(int(np.sum(np.abs(shift))), delta)


@dataclass(frozen=True)
class GridGaussianMechanism:
    r"""The hardened (ε, δ) release :math:`g(\mathrm{round}(v/g) + K)`, :math:`K` discrete Gaussian
    (:func:`dplr.release.grid_gaussian_release`), of values :math:`v` of L2 sensitivity ``sensitivity``, as an
    auditable callable; the data are the values. Audit it with ``delta=mechanism.delta``."""

    sensitivity: float
    epsilon: float
    delta: float

    def __call__(self, value, random_state=None, size=None):
        value = np.atleast_1d(np.asarray(value, dtype=float))
        return grid_gaussian_release(value, self.sensitivity, self.epsilon, self.delta, size, random_state)

    def max_privacy_loss(self, pair) -> float:
        r"""The exact ε at ``delta`` on the pair (:func:`grid_gaussian_pair_epsilon`; float64 sums of the exact law)."""
        dim = np.atleast_1d(np.asarray(pair_data(pair)[0], dtype=float)).shape[0]
        mechanism = grid_gaussian_calibration(self.sensitivity, self.epsilon, self.delta, dim).mechanism()
        return grid_gaussian_pair_epsilon(mechanism, pair, self.delta)


@dataclass(frozen=True)
class SensitivityMethodMechanism(_LearnerMechanism):
    r"""Algorithm 1 (:func:`dplr.algorithms.sensitivity_method`) on data ``(X, y)``, as an auditable callable."""

    epsilon: float
    lam: float
    loss: Any = "logistic"
    learner: ClassVar[str] = "sensitivity"

    def max_privacy_loss(self, pair: NeighbouringPair) -> float:
        r""":math:`\beta\lVert w^*(D) - w^*(D')\rVert` (:func:`dplr.analysis.privacy_loss.sensitivity_method_max_privacy_loss`):
        exact for the exact-minimiser mechanism (the paper's β); the release also covers the solver's tolerance, in
        its noise and in its centres, which changes the loss by a relative amount of order n·tol."""
        return sensitivity_method_max_privacy_loss(pair, self.epsilon, self.lam, get_loss(self.loss))[0]


@dataclass(frozen=True)
class ObjectivePerturbationMechanism(_LearnerMechanism):
    r"""Algorithm 2 (``form`` "corrected" or "nips2008"), auditable.

    A call is :func:`dplr.algorithms.objective_perturbation` with the same ``random_state``, ``release`` and
    ``n_draws=size``, with ``chunk_size`` problems per block of the solver: audits solve :math:`10^5`
    tiny problems (:math:`d \le 2`), for which large blocks are many times faster than the solver's
    default. The minimisers are unique, so only the path changes, not the answer. ``release`` is the algorithm's
    default, ``"certified"`` (what users run); ``"exact_minimiser"`` audits the exact minimiser, the object of the
    change-of-variables density and of :meth:`max_privacy_loss`.
    """

    epsilon: float
    lam: float
    form: str = "corrected"
    loss: Any = "logistic"
    chunk_size: int = 4096
    release: str = "certified"
    learner: ClassVar[str] = "objective"

    def max_privacy_loss(self, pair: NeighbouringPair, **search) -> float:
        r""":math:`\sup_w|\log p_D(w)/p_{D'}(w)|` by the change of variables, maximised numerically over :math:`w`:
        the exact minimiser's density (``release="exact_minimiser"`` only; the certified release's output density has
        no closed form -- audit it with ``check_claim(..., exact=False)``).

        :func:`dplr.analysis.privacy_loss_search.max_objective_perturbation_privacy_loss`; ``search`` is passed on.
        """
        if self.release != "exact_minimiser":
            raise ValueError(f"the exact privacy loss is the exact minimiser's (release='exact_minimiser'); this "
                             f"mechanism releases {self.release!r}, whose output density has no closed form. Fix: "
                             f"check_claim(..., exact=False), or audit ObjectivePerturbationMechanism(..., "
                             f"release='exact_minimiser').")
        return max_objective_perturbation_privacy_loss(pair, self.epsilon, self.lam, get_loss(self.loss),
                                                       self.form, **search).value


@dataclass(frozen=True)
class GaussianMechanism:
    r"""The analytic Gaussian mechanism :math:`t = v + N(0, \sigma^2 I)`, :math:`\sigma` = :func:`dplr.gaussian.analytic_gaussian_sigma`.

    The data are the query values :math:`v`; ``sensitivity`` is the claimed bound on :math:`\lVert v - v'\rVert`.
    """

    sensitivity: float
    epsilon: float
    delta: float

    @property
    def sigma(self) -> float:
        return analytic_gaussian_sigma(self.epsilon, self.delta, self.sensitivity)

    def __call__(self, value, random_state=None, size=None):
        value = np.atleast_1d(np.asarray(value, dtype=float))
        return value + IsotropicGaussian.from_sigma(value.shape[0], self.sigma).sample(size, random_state)

    def max_privacy_loss(self, pair) -> float:
        """The exact ε at ``delta`` of the two values (:meth:`dplr.mechanisms.IsotropicGaussian.epsilon`)."""
        v, v_prime = (np.atleast_1d(np.asarray(a, dtype=float)) for a in pair_data(pair))
        return IsotropicGaussian(v.shape[0], self.sigma).epsilon(np.linalg.norm(v - v_prime), self.delta)


@dataclass(frozen=True)
class GaussianOutputPerturbationMechanism(_LearnerMechanism):
    r"""Gaussian output perturbation (:func:`dplr.algorithms.gaussian_output_perturbation`), auditable."""

    epsilon: float
    delta: float
    lam: float
    loss: Any = "logistic"
    learner: ClassVar[str] = "gaussian_output"

    def max_privacy_loss(self, pair: NeighbouringPair) -> float:
        r"""The exact ε at ``delta`` on the pair for the exact-minimiser mechanism: Gaussian noise around :math:`w^*(D)` and
        :math:`w^*(D')` (closed form; the release's σ also covers the solver's tolerance, a relative n·tol)."""
        loss = get_loss(self.loss)
        sigma = gaussian_output_perturbation_calibration(pair.n, self.lam, self.epsilon, self.delta, loss.lipschitz).sigma
        distance = np.linalg.norm(standard_erm(pair.X, pair.y, self.lam, loss, tol=1e-12)
                                  - standard_erm(pair.X_prime, pair.y_prime, self.lam, loss, tol=1e-12))
        return IsotropicGaussian(pair.d, sigma).epsilon(distance, self.delta)


@dataclass(frozen=True)
class GaussianObjectivePerturbationMechanism(_LearnerMechanism):
    r"""Gaussian objective perturbation (:func:`dplr.algorithms.gaussian_objective_perturbation`), auditable.

    No closed form of its output density's ε is implemented: audit it with ``check_claim(..., exact=False)``.
    ``chunk_size`` and ``release`` (default ``"certified"``) as in :class:`ObjectivePerturbationMechanism`.
    """

    epsilon: float
    delta: float
    lam: float
    loss: Any = "logistic"
    chunk_size: int = 4096
    release: str = "certified"
    learner: ClassVar[str] = "gaussian_objective"


@dataclass(frozen=True)
class ApproximateMinimaPerturbationMechanism(_LearnerMechanism):
    r"""Approximate minima perturbation (:func:`dplr.algorithms.approximate_minima_perturbation`), auditable.

    ``gamma=None``: the algorithm's default :math:`1/n^2`. No closed form of the output density's ε: audit with
    ``check_claim(..., exact=False)``.
    """

    epsilon: float
    delta: float
    lam: float
    gamma: float | None = None
    loss: Any = "logistic"
    chunk_size: int = 4096
    learner: ClassVar[str] = "amp"


@dataclass(frozen=True)
class DPSGDMechanism:
    r"""DP-SGD (:func:`dplr.dpsgd.dpsgd_train`) at a noise multiplier, auditable; its ε from :meth:`epsilon`.

    No closed form of the output density: audit with ``check_claim(..., exact=False)``.
    """

    noise_multiplier: float
    clip_norm: float
    sampling_rate: float
    steps: int
    learning_rate: float
    lam: float = 0.0
    loss: Any = "logistic"

    def __call__(self, data, random_state=None, size=None):
        X, y = data
        return dpsgd_train(X, y, self.noise_multiplier, self.clip_norm, self.sampling_rate, self.steps,
                           self.learning_rate, self.lam, self.loss, n_draws=size, random_state=random_state)

    def epsilon(self, delta, neighbouring="replace", accountant="pld") -> float:
        """What the accountant claims (:func:`dplr.dpsgd.dpsgd_epsilon`; needs the extra ``dplr[accounting]``)."""
        return dpsgd_epsilon(self.noise_multiplier, self.sampling_rate, self.steps, delta, neighbouring, accountant)


@dataclass(frozen=True)
class PrivateSelectionMechanism:
    r"""Liu & Talwar's random stopping (:func:`dplr.selection.random_stopping`) over a Laplace count, auditable.

    Each run releases :math:`(v + \eta, v + \eta)` -- a candidate and its score, both the count :math:`v` plus one
    Laplace draw of rate :attr:`run_epsilon` (sensitivity 1, :class:`dplr.mechanisms.VectorLaplace`): an
    :math:`\varepsilon_0`-DP run with a continuous score. The output is the best run's score. The claim is
    ``epsilon``-DP with :math:`\varepsilon_0 = \varepsilon/3` (:func:`dplr.selection.run_epsilon`), the theorem's
    calibration; the data are the count :math:`v`. No closed form of the loss here: audit with ``exact=False``.
    """

    epsilon: float
    stop_probability: float = 0.1

    @property
    def run_epsilon(self) -> float:
        return run_epsilon(self.epsilon)

    def __call__(self, value, random_state=None, size=None):
        return _best_noisy_count(VectorLaplace.from_rate(1, self.run_epsilon), value, self.stop_probability,
                                 random_state, size)


def _best_noisy_count(noise, value, stop_probability, random_state, size):
    """``size`` outputs (one if None) of random stopping over runs that release the count ``value`` plus one draw of
    ``noise`` (a one-dimensional distribution of :mod:`dplr.mechanisms`) as candidate and score."""
    v = float(np.asarray(value, dtype=float).reshape(-1)[0])

    def run(stream):
        score = v + float(noise.sample(random_state=stream)[0])
        return score, score

    streams = check_random_state(random_state).spawn(1 if size is None else int(size))
    outputs = np.array([random_stopping(run, stop_probability, s).score for s in streams])
    return outputs[:, None] if size is not None else outputs


@dataclass(frozen=True)
class GaussianSelectionMechanism:
    r"""Random stopping (:func:`dplr.selection.random_stopping`) over a Gaussian count: the (ε, δ) selection, auditable.

    Each run releases :math:`(v + \eta, v + \eta)`, :math:`\eta \sim N(0, \sigma^2)` with the analytic Gaussian
    :math:`\sigma` (:func:`dplr.gaussian.analytic_gaussian_sigma`, sensitivity 1) of the run budget
    :math:`(\varepsilon_0, \delta_0)` = :func:`dplr.selection.run_budget` ``(epsilon, delta, stop_probability)``,
    the calibration of the selection study's DP-SGD arm: an :math:`(\varepsilon_0, \delta_0)`-DP run with a
    continuous score. The output is the best run's score. The claim is (``epsilon``, ``delta``)-DP (the book's
    proposition ``prop-random-stopping-delta``); the data are the count :math:`v`. Audit with
    ``audit(..., delta=mechanism.delta)``; :meth:`max_privacy_loss` is its ε at δ on a pair, by quadrature.
    """

    epsilon: float
    delta: float
    stop_probability: float = 0.1

    @property
    def run_budget(self) -> tuple:
        r"""Each run's :math:`(\varepsilon_0, \delta_0)`."""
        return run_budget(self.epsilon, self.delta, self.stop_probability)

    @property
    def sigma(self) -> float:
        return analytic_gaussian_sigma(*self.run_budget, 1.0)

    def __call__(self, value, random_state=None, size=None):
        return _best_noisy_count(IsotropicGaussian.from_sigma(1, self.sigma), value, self.stop_probability,
                                 random_state, size)

    def max_privacy_loss(self, pair, n_points=2**18) -> float:
        r"""The ε at ``delta`` of the two counts :math:`v, v'`, from the output's density, by quadrature.

        The output (the best of a geometric number of runs, ties of probability 0) has the density
        :math:`f_v(t) = \gamma\,\varphi_\sigma(t - v)\,/\,(1 - (1-\gamma)\Phi_\sigma(t - v))^2` (the law in the proof of
        the book's random-stopping theorem, the run's law :math:`N(v, \sigma^2)`). The ε at δ is the smallest ε with
        :math:`\int \max(0, f_v - e^{\varepsilon} f_{v'}) \le \delta` both ways (the hockey-stick divergence),
        found by Brent's method; the integrals are Riemann sums over ``n_points`` points from :math:`14\sigma` below
        the smaller count to :math:`14\sigma` above the larger (the mass outside is below 1e-40). With
        ``stop_probability = 1`` it is the Gaussian mechanism's exact ε (:meth:`dplr.mechanisms.IsotropicGaussian.epsilon`).
        """
        v, v_prime = (float(np.asarray(a, dtype=float).reshape(-1)[0]) for a in pair_data(pair))
        sigma, gamma = self.sigma, float(self.stop_probability)
        t, step = np.linspace(min(v, v_prime) - 14.0 * sigma, max(v, v_prime) + 14.0 * sigma, int(n_points),
                              retstep=True)

        def density(centre):
            z = (t - centre) / sigma
            return gamma * stats.norm.pdf(z) / sigma / (1.0 - (1.0 - gamma) * stats.norm.cdf(z)) ** 2

        f, f_prime = density(v), density(v_prime)

        def excess(eps):
            scale = np.exp(eps)
            return step * max(np.sum(np.maximum(f - scale * f_prime, 0.0)),
                              np.sum(np.maximum(f_prime - scale * f, 0.0))) - float(self.delta)

        if excess(0.0) <= 0:
            return 0.0
        high = 1.0
        while excess(high) > 0:
            high *= 2.0
        return float(optimize.brentq(excess, 0.0, high, xtol=1e-12, rtol=1e-10))

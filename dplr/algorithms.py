r"""Algorithm 1 (sensitivity method), Algorithm 2 (objective perturbation) and their (ε, δ) successors: calibrate, draw, solve.

The one seam every private model in ``dplr`` goes through. Each algorithm is three steps:
calibrate (:mod:`dplr.calibration`, the privacy map), draw the noise (the calibration's
:class:`~dplr.mechanisms.VectorLaplace`), solve (:func:`dplr.solver.solve_regularized_erm`). Each validates its
inputs and calibrates; the draw, the solve and the certificate of the released point are the one release path,
:func:`dplr.release.private_release`. The
*noise* functions do the first two (:func:`sensitivity_method_noise`, :func:`objective_perturbation_noise`)
for callers that solve many problems together (private tuning, studies that batch several ε);
:func:`sensitivity_method` and :func:`objective_perturbation` do all three.

The objective perturbations release by default what a theorem covers for a solver's point (``release="certified"``,
the book's ``thm-op-certified``: the point certified within :math:`\gamma` of gradient norm plus a small output noise,
ε split); ``release="exact_minimiser"`` is the papers' idealisation (the solver's point as if it were the exact
minimiser), which the replications of published numbers pin. :func:`objective_perturbation_noise` draws the
idealisation's noise only.

Three (ε, δ)-DP algorithms with Gaussian noise follow the same seam, with their calibrations in
:mod:`dplr.gaussian`: :func:`gaussian_output_perturbation` (Algorithm 1 with analytic Gaussian noise),
:func:`gaussian_objective_perturbation` (Kifer, Smith & Thakurta 2012) and
:func:`approximate_minima_perturbation` (Iyengar et al. 2019). DP-SGD, which has no solver, is
:mod:`dplr.dpsgd`.

They take labels already in {-1, +1} and rows with :math:`\lVert x_i\rVert \le 1` (checked unless
``check_input=False``), and return one private classifier per noise draw, so that the 200 "random
restarts" of the paper's experiments (NIPS 2008, Section 6) cost one batched solve. The
scikit-learn estimators in :mod:`dplr.estimators` wrap them.

Each returns its coefficients only; the calibration record a call released with is
:func:`calibration_used` of the same call (for :func:`dplr.dpsgd.dp_sgd` too), computed by the very function the
algorithm calls, so the two cannot drift; :func:`calibrated_release` returns a release and the calibration it
computed (each release calibrates once). **Shapes** follow numpy's ``size`` rule, the same for every algorithm
here and :func:`dplr.dpsgd.dp_sgd`: ``n_draws=None`` returns one classifier, an array of shape ``(d,)``;
``n_draws=k`` returns ``k`` of them, shape ``(k, d)`` (also for ``k = 1``); the noise functions return the noise
in the same shapes, paired with the calibration. ``loss`` is a name (``"logistic"``, ``"huber"`` with ``huber_h``)
or a loss object, resolved once (:func:`dplr.losses.get_loss`); everything below takes the loss object. The module
is over 400 lines because each algorithm's calibration step lives beside it, and each docstring states its
theorem's conditions.

Sources
-------
* Algorithm 1 and Corollary 2: NIPS 2008, Section 3 (p. 3).
* Algorithm 2 and Theorem 2: NIPS 2008, Section 4 (p. 4).
* The corrected Algorithm 2: Chaudhuri, Monteleoni & Sarwate, "Differentially Private Empirical
  Risk Minimization", JMLR 12:1069–1109 (2011), Algorithm 2 and Theorem 9.
* The Gaussian algorithms: the sources in :mod:`dplr.gaussian`.
"""
from __future__ import annotations

import contextvars
import functools
import inspect

import numpy as np

from dplr.calibration import (
    CERTIFIED_GRID_RELEASE,
    OBJECTIVE_PERTURBATION_RELEASES,
    certified_gamma,
    certified_objective_perturbation_calibration,
    certified_objective_perturbation_grid_calibration,
    objective_perturbation_calibration,
    sensitivity_method_calibration,
    sensitivity_method_grid_calibration,
)
from dplr.gaussian import (
    approximate_minima_perturbation_calibration,
    certified_gaussian_objective_perturbation_calibration,
    gaussian_objective_perturbation_calibration,
    gaussian_output_perturbation_calibration,
    gaussian_output_perturbation_grid_calibration,
)
from dplr.dpsgd import dp_sgd, dpsgd_calibration
from dplr.losses import get_loss
from dplr.release import private_release
from dplr.solver import solve_regularized_erm
from dplr.validation import (
    check_epsilon,
    check_lambda,
    check_positive_integer,
    check_random_state,
    check_tolerance,
    check_training_data,
)

__all__ = [
    "standard_erm",
    "sensitivity_method_noise",
    "sensitivity_method",
    "objective_perturbation_noise",
    "objective_perturbation",
    "gaussian_output_perturbation",
    "gaussian_objective_perturbation",
    "approximate_minima_perturbation",
    "calibration_used",
    "calibrated_release",
    "SENSITIVITY_METHOD_RELEASES",
]

#: The values of :func:`sensitivity_method`'s and :func:`gaussian_output_perturbation`'s ``release`` -- ``"float"``, the float64 sampler of the paper's law
#: (ε-DP over the reals), and ``"grid"``, the hardened release, ε-DP as run
#: (:class:`~dplr.calibration.SensitivityMethodGridCalibration`).
SENSITIVITY_METHOD_RELEASES = ("float", "grid")


def standard_erm(X, y, lam, loss="logistic", huber_h=0.5, tol=1e-8, check_input=True, max_iter=100):
    r"""Non-private :math:`w^* = \arg\min_w \frac\lambda2\lVert w\rVert^2 + \frac1n\sum_i\ell(y_i w^\top x_i)`.

    ``tol`` and ``max_iter`` are the solver's (:func:`~dplr.solver.solve_regularized_erm`).
    ``check_input=False`` skips the checks of ``X`` and ``y`` (for callers that made them).
    """
    if check_input:
        X, y = check_training_data(X, y)
    lam = check_lambda(lam)
    tol, max_iter = _check_solver_options(tol, max_iter)
    return solve_regularized_erm(X, y, lam, get_loss(loss, huber_h), tol=tol, max_iter=max_iter,
                                 check_input=False).coef


def _check_solver_options(tol, max_iter):
    return check_tolerance(tol), check_positive_integer(max_iter, "max_iter")


def _check_solver_dict(solver_options):
    options = dict(solver_options or {})
    if "max_iter" in options:
        options["max_iter"] = check_positive_integer(options["max_iter"], "max_iter")
    return options


#: the calibrations computed while :func:`calibrated_release` records them (a list), else ``None``
_RECORDING = contextvars.ContextVar("dplr_calibrations_recorded", default=None)


def _recorded(calibrate):
    """``calibrate``, its result also recorded while :func:`calibrated_release` runs (one calibration per release)."""
    @functools.wraps(calibrate)
    def recorded(*args, **kwargs):
        calibration = calibrate(*args, **kwargs)
        record = _RECORDING.get()
        if record is not None:
            record.append(calibration)
        return calibration
    return recorded


def sensitivity_method_noise(n, dim, epsilon, lam, loss="logistic", huber_h=0.5, n_draws=None, random_state=None,
                             check_input=True, *, solver_tol=None):
    r"""Algorithm 1's noise :math:`\eta`, :math:`h(\eta) \propto e^{-\beta\lVert\eta\rVert}`, :math:`\beta = \varepsilon/S`.

    Returns ``(eta, calibration)``: ``eta`` of shape ``(dim,)`` (``n_draws=None``) or ``(n_draws,
    dim)``, and the :class:`~dplr.calibration.SensitivityMethodCalibration`. Algorithm 1 releases
    :math:`w + \eta`; ``n`` is the number of records :math:`w` was trained on. ``solver_tol`` (required) is the
    gradient norm :math:`\tau` the released point :math:`w` is known to meet -- its *true* norm, which a solver's
    computed norm can understate by rounding (:func:`dplr.solver.certified_gradient_norm` bounds it):
    :math:`S = 2(L + n\tau)/(n\lambda)` (:func:`~dplr.calibration.sensitivity_bound`). ``solver_tol=0`` is the
    exact minimiser :math:`w^*`, :math:`\beta = n\lambda\varepsilon/(2L)` as in the paper -- an idealisation that
    covers no solver's output; it has no default, so that composing a solver's point with the paper's noise is a
    choice the caller writes down (the replications of the papers do, as the papers state Algorithm 1).
    """
    if solver_tol is None:
        raise ValueError("sensitivity_method_noise needs solver_tol: the gradient norm the released point w is known "
                         "to meet (a bound on its true norm: dplr.solver.certified_gradient_norm gives one from the "
                         "solver's computed norm, which rounding can make smaller). The noise "
                         "then covers every point within solver_tol/lam of the minimiser. Pass solver_tol=0.0 only "
                         "for the exact minimiser (the papers' idealisation), or call "
                         "dplr.algorithms.sensitivity_method, which solves, checks and calibrates in one step.")
    loss = get_loss(loss, huber_h)
    calibration = sensitivity_method_calibration(n, lam, epsilon, loss.lipschitz, check_input=check_input,
                                                 solver_tol=solver_tol)
    eta = calibration.mechanism(dim).sample(n_draws, check_random_state(random_state))
    return eta, calibration


def sensitivity_method(X, y, epsilon, lam, loss="logistic", huber_h=0.5, n_draws=None, random_state=None,
                       tol=1e-8, check_input=True, max_iter=100, release="float"):
    r"""Algorithm 1 (NIPS 2008): :math:`w + \eta`, :math:`h(\eta) \propto e^{-\beta\lVert\eta\rVert}`, :math:`\beta = \varepsilon/S`.

    ε-DP for :math:`\lVert x_i\rVert \le 1` and any convex loss with :math:`|\ell'| \le L` (Theorem 1), for the
    point :math:`w` it releases: the solver's, certified at gradient norm :math:`\le` ``tol``, or where that fails
    the fallback's (:func:`~dplr.solver.fixed_step_descent`, a number of steps fixed by public quantities; never a
    refusal that depends on the data), so on every data set
    :math:`w` lies within ``tol``/λ of the exact minimiser :math:`w^*` and the noise is calibrated to
    :math:`S = 2(L + n\,\text{tol})/(n\lambda)` (:func:`~dplr.calibration.sensitivity_bound`); ``tol`` is a
    privacy parameter. ``n_draws=None`` returns one classifier of shape ``(d,)``; an integer ``k`` returns ``k``
    independent draws, shape ``(k, d)``, sharing the one non-private solve (releasing all ``k`` costs
    :math:`k\varepsilon`). ``check_input=False`` skips the checks of ``X`` and ``y``.

    Returns: ``coef``, shape ``(d,)`` or ``(n_draws, d)``. The calibration it released with (a
    :class:`~dplr.calibration.SensitivityMethodCalibration`, or the grid's) is
    ``calibration_used(sensitivity_method, X, y, ...the same arguments...)`` (:func:`calibration_used`).

    ``release="grid"`` is the hardened release (:class:`~dplr.calibration.SensitivityMethodGridCalibration`): the
    certified point rounded to a power-of-two grid plus per-coordinate discrete Laplace noise drawn exactly in
    integers, calibrated to the L1 bound :math:`\sqrt d\,S/g + d`; ε-DP for the float64 numbers it outputs (the
    book's chapter on floating point), at a small cost in noise. ``release="float"`` (default) is the float64
    sampler of the paper's law, ε-DP over the reals only.
    """
    _check_output_release(release, "the paper's float64 one")
    rng = check_random_state(random_state)
    if check_input:
        X, y = check_training_data(X, y)
    epsilon, lam = check_epsilon(epsilon), check_lambda(lam)
    tol, max_iter = _check_solver_options(tol, max_iter)
    loss = get_loss(loss, huber_h)
    # the calibration first, so that what float64 cannot calibrate is refused before the solve
    calibration = _sensitivity_method_calibration(X.shape[0], epsilon, lam, loss, tol, release)
    return private_release(X, y, lam, loss, calibration, n_draws, rng, tol=tol, max_iter=max_iter)


def _check_output_release(release, float_release):
    if release not in SENSITIVITY_METHOD_RELEASES:
        raise ValueError(f"release must be one of {SENSITIVITY_METHOD_RELEASES}, got {release!r}. Fix: 'grid' for "
                         f"the release that is private as run (exact sampler, outputs on a grid), 'float' for "
                         f"{float_release}.")
    return release


@_recorded
def _sensitivity_method_calibration(n, epsilon, lam, loss, tol, release):
    """The calibration :func:`sensitivity_method` releases with (its arguments of the same names, ``loss`` a loss
    object; ``n`` records)."""
    grid = _check_output_release(release, "the paper's float64 one") == "grid"
    calibrate = sensitivity_method_grid_calibration if grid else sensitivity_method_calibration
    return calibrate(n, check_lambda(lam), check_epsilon(epsilon), loss.lipschitz,
                     check_input=False, solver_tol=check_tolerance(tol))


def objective_perturbation_noise(n, dim, epsilon, lam, loss="logistic", huber_h=0.5, form="corrected", n_draws=None,
                                 random_state=None, check_input=True):
    r"""Algorithm 2's first step, for ``release="exact_minimiser"`` callers that batch problems: calibrate, then draw
    :math:`b` from :math:`e^{-\beta\lVert b\rVert}`.

    Returns ``(b, calibration)``: ``b`` of shape ``(dim,)`` (``n_draws=None``) or ``(n_draws, dim)``,
    and the :class:`~dplr.calibration.ObjectivePerturbationCalibration` (:math:`\beta`, :math:`\Delta`,
    :math:`\varepsilon'`). The released classifier minimises
    :math:`\frac{\lambda+\Delta}{2}\lVert w\rVert^2 + \frac{b^\top w}{n} + \frac1n\sum_i\ell(y_i w^\top x_i)`.
    """
    loss = get_loss(loss, huber_h)
    calibration = objective_perturbation_calibration(epsilon, n, lam, loss.curvature, loss.lipschitz, form,
                                                     check_input=check_input)
    b = calibration.mechanism(dim).sample(n_draws, check_random_state(random_state))
    return b, calibration


def _check_release(release, epsilon, noise, allowed=OBJECTIVE_PERTURBATION_RELEASES):
    if release not in allowed:
        raise ValueError(f"release must be one of {allowed}, got {release!r}.")
    if release != "exact_minimiser" and (np.ndim(epsilon) != 0 or noise is not None):
        raise ValueError(f"release={release!r}{' (the default)' if release == 'certified' else ''} takes a scalar "
                         "epsilon and draws its own noise "
                         "(noise=None). Fix: one call per epsilon; or, for the papers' idealisation (the solver's point "
                         "as if it were the exact minimiser, which no theorem covers), release='exact_minimiser', "
                         "which takes an epsilon array or pre-drawn noise.")
    return release


def _default_gamma(gamma, n):
    r""":math:`\gamma` = :func:`~dplr.calibration.certified_gamma` (:math:`1/n^2`) unless given."""
    return certified_gamma(n) if gamma is None else gamma


def objective_perturbation(X, y, epsilon, lam, loss="logistic", huber_h=0.5, form="corrected", n_draws=None,
                           random_state=None, tol=1e-8, noise=None, solver_options=None,
                           check_input=True, *, release="certified", gamma=None):
    r"""Algorithm 2: :math:`\arg\min_w \frac{\lambda+\Delta}{2}\lVert w\rVert^2 + \frac{b^\top w}{n} + \frac1n\sum_i \ell(y_i w^\top x_i)`.

    :math:`b` is drawn from :math:`e^{-\beta\lVert b\rVert}` with :math:`\beta` and :math:`\Delta`
    from :func:`~dplr.calibration.objective_perturbation_calibration` (``form="corrected"``, JMLR
    2011, is the default and is ε-DP; ``form="nips2008"`` reproduces the original paper).

    What is released (``release``): ``"certified_grid"`` is the certified release hardened for floating point (the
    book's ``thm-op-certified-grid``; :func:`~dplr.calibration.certified_objective_perturbation_grid_calibration`):
    the same split, γ and certified point, then the point rounded to a power-of-two grid and exact discrete Laplace
    output noise added (:func:`dplr.release.grid_laplace_release` at :math:`r = \gamma/(\lambda+\Delta)` and
    :math:`\varepsilon_2/2`), so that every output is a grid point; the objective's noise :math:`b` is still a
    float64 draw (never released), where the guarantee stops. ``"certified"`` (the default) releases what a theorem
    covers (the book's ``thm-op-certified``;
    :func:`~dplr.calibration.certified_objective_perturbation_calibration`): ε split into :math:`\varepsilon_1` for
    the objective and :math:`\varepsilon_2` (1 %) for output noise, the objective solved until its point's true
    gradient norm is certified at most ``gamma`` (default :math:`1/n^2`; else the point of the fixed-step fallback,
    :func:`dplr.solver.fixed_step_descent`, within the same distance of the minimiser on every data set), then :math:`\eta \propto e^{-\beta_2\lVert\eta\rVert}` added, :math:`\beta_2 =
    \varepsilon_2(\lambda+\Delta)/(2\gamma)`; the stream draws :math:`b`, then :math:`\eta`. It takes a scalar
    ``epsilon`` and no ``noise``; ``tol`` is then unused. A ``gamma`` float64 cannot certify at this ``n`` and λ is
    refused (``ValueError`` naming the smallest that works, :func:`~dplr.solver.stopping_tolerance`).
    ``"exact_minimiser"`` is the solver's point at gradient norm ``tol``, as if it were the exact minimiser -- the
    papers' idealisation: their theorem (JMLR 2011, Theorem 9) covers the exact minimiser only, and no theorem covers
    the solver's point; the replications of published numbers pin it. It alone takes an ``epsilon`` array or
    pre-drawn ``noise``.

    Parameters
    ----------
    epsilon : float, or 1-D array
        An array solves one problem per value, each with its own calibration (:math:`\beta`,
        :math:`\Delta`) and one noise draw, all in one batched solve.
    n_draws : None or int
        With a scalar ``epsilon``: ``None`` returns one classifier ``(d,)``, ``k`` returns ``k`` draws
        ``(k, d)`` solved in one batch.
    random_state : None, int, Generator -- or, with an ``epsilon`` array, a sequence of them (one per problem)
    noise : None or array
        Noise already drawn (``(d,)`` or ``(k, d)``, one row per problem) from the calibrated law,
        e.g. to reuse draws across methods; then ``n_draws`` and ``random_state`` are not used. The guarantee then
        rests on the caller: it holds only for noise drawn from the calibration's mechanism, once per release.
    solver_options : dict or None
        Passed to :func:`~dplr.solver.solve_regularized_erm` (``warm_start``, ``chunk_size``, ...): they
        change the path to the minimisers, never the minimisers.
    check_input : bool
        ``False`` skips the checks of ``X`` and ``y`` (for callers that made them).

    Returns
    -------
    coef : array, shape ``(d,)``, or ``(k, d)`` (``n_draws=k``, a ``(k, d)`` ``noise``, or an ``epsilon`` array of
        length ``k``). The calibration it released with (a tuple of them for an ``epsilon`` array) is
        ``calibration_used(objective_perturbation, X, y, ...the same arguments...)`` (:func:`calibration_used`).
    """
    if check_input:
        X, y = check_training_data(X, y)
    loss = get_loss(loss, huber_h)
    lam = check_lambda(lam)
    tol = check_tolerance(tol)
    n, d = X.shape
    calibration = _objective_perturbation_calibration(n, epsilon, lam, loss, form, release, gamma, noise)
    if release != "exact_minimiser":
        return private_release(X, y, lam, loss, calibration, n_draws, random_state,
                               solver_options=_check_solver_dict(solver_options))
    per_problem = np.ndim(epsilon) == 1
    b = None
    if noise is not None:
        b = np.asarray(noise, dtype=float)
        if b.shape[-1:] != (d,) or b.ndim > 2 or not np.all(np.isfinite(b)):
            raise ValueError(f"noise must be finite, of shape ({d},) or (k, {d}), got shape {b.shape}. Fix: draw it "
                             f"from the calibration's mechanism (objective_perturbation_noise).")
    elif per_problem:
        if n_draws is not None:
            raise ValueError("an epsilon array draws one problem per value: leave n_draws at None.")
        random_state = (list(random_state) if isinstance(random_state, (list, tuple)) else
                        [check_random_state(random_state)] * len(calibration))
        if len(random_state) != len(calibration):
            raise ValueError(f"{len(calibration)} values of epsilon but {len(random_state)} random states.")
    return private_release(X, y, lam, loss, calibration, n_draws, random_state, tol=tol,
                           solver_options=_check_solver_dict(solver_options), noise=b)


@_recorded
def _objective_perturbation_calibration(n, epsilon, lam, loss, form, release, gamma, noise):
    """The calibration :func:`objective_perturbation` releases with (a tuple of them for an ``epsilon`` array)."""
    lam = check_lambda(lam)
    release = _check_release(release, epsilon, noise, OBJECTIVE_PERTURBATION_RELEASES + (CERTIFIED_GRID_RELEASE,))
    if release != "exact_minimiser":
        calibrate = (certified_objective_perturbation_grid_calibration if release == CERTIFIED_GRID_RELEASE else
                     certified_objective_perturbation_calibration)
        return calibrate(
            check_epsilon(epsilon), n, lam, _default_gamma(gamma, n), loss.curvature, loss.lipschitz, form,
            check_input=False)
    calibrations = tuple(objective_perturbation_calibration(check_epsilon(e), n, lam, loss.curvature, loss.lipschitz,
                                                            form, check_input=False)
                         for e in np.atleast_1d(epsilon))
    return calibrations if np.ndim(epsilon) == 1 else calibrations[0]


def gaussian_output_perturbation(X, y, epsilon, delta, lam, loss="logistic", huber_h=0.5, n_draws=None,
                                 random_state=None, tol=1e-8, check_input=True, max_iter=100, release="float"):
    r"""Output perturbation with Gaussian noise: :math:`w + \eta`, :math:`\eta \sim N(0, \sigma^2 I)`, (ε, δ)-DP.

    :math:`w` is the solver's regularised ERM minimiser, certified at gradient norm :math:`\le` ``tol`` (else the
    fallback's point, :func:`~dplr.solver.fixed_step_descent`), so within ``tol``/λ of the exact one on every data
    set; :math:`\sigma` is the analytic Gaussian calibration
    for the sensitivity :math:`2(L + n\,\text{tol})/(n\lambda)`
    (:func:`~dplr.gaussian.gaussian_output_perturbation_calibration`, which states the theorem). ``n_draws``
    and ``check_input`` as in :func:`sensitivity_method`; the stream draws ``n_draws * d`` standard normals.
    Returns: ``coef``, shape ``(d,)`` or ``(n_draws, d)``; the calibration it released with is
    ``calibration_used(gaussian_output_perturbation, X, y, ...the same arguments...)`` (:func:`calibration_used`).

    ``release="grid"`` is the hardened release (:class:`~dplr.gaussian.GaussianOutputPerturbationGridCalibration`):
    the certified point rounded to a power-of-two grid plus per-coordinate discrete Gaussian noise drawn exactly in
    integers (Canonne, Kamath & Steinke 2020), calibrated to the L2 bound :math:`S/g + \sqrt d` through zCDP; (ε,
    δ)-DP for the float64 numbers it outputs (the book's chapter on floating point), at a cost in noise (the
    conversion from zCDP, :func:`~dplr.gaussian.zcdp_rho`). ``release="float"`` (default) draws float64 normals,
    (ε, δ)-DP over the reals only.
    """
    _check_output_release(release, "the float64 normals")
    rng = check_random_state(random_state)
    if check_input:
        X, y = check_training_data(X, y)
    lam = check_lambda(lam)
    tol, max_iter = _check_solver_options(tol, max_iter)
    loss = get_loss(loss, huber_h)
    calibration = _gaussian_output_perturbation_calibration(X.shape[0], epsilon, delta, lam, loss, tol, release)
    return private_release(X, y, lam, loss, calibration, n_draws, rng, tol=tol, max_iter=max_iter)


@_recorded
def _gaussian_output_perturbation_calibration(n, epsilon, delta, lam, loss, tol, release):
    """The calibration :func:`gaussian_output_perturbation` releases with."""
    grid = _check_output_release(release, "the float64 normals") == "grid"
    calibrate = gaussian_output_perturbation_grid_calibration if grid else gaussian_output_perturbation_calibration
    return calibrate(n, check_lambda(lam), epsilon, delta, loss.lipschitz, check_tolerance(tol))


def gaussian_objective_perturbation(X, y, epsilon, delta, lam, loss="logistic", huber_h=0.5, n_draws=None,
                                    random_state=None, tol=1e-8, solver_options=None, check_input=True, *,
                                    release="certified", gamma=None):
    r"""Objective perturbation with Gaussian noise (Kifer, Smith & Thakurta 2012, "Obj-Pert"), (ε, δ)-DP.

    Returns :math:`\arg\min_w \frac{\lambda+\Delta}{2}\lVert w\rVert^2 + \frac{b^\top w}{n} + \frac1n\sum_i
    \ell(y_i w^\top x_i)` with :math:`b \sim N(0, \sigma^2 I)`; :math:`\sigma` and :math:`\Delta` from
    :func:`~dplr.gaussian.gaussian_objective_perturbation_calibration` (the theorem, its conditions and the
    conversion to this convention are stated there). Solved by :func:`~dplr.solver.solve_regularized_erm` with the
    per-problem ``b``; ``n_draws`` problems share one batched solve. Other parameters as in
    :func:`objective_perturbation`; ``release="certified"`` (the default) splits ε and δ (1 % of each to the output)
    and releases the point certified at gradient norm ``gamma`` plus analytic Gaussian output noise
    (:func:`~dplr.gaussian.certified_gaussian_objective_perturbation_calibration`); ``release="exact_minimiser"`` is
    the solver's point as if it were the exact minimiser, the idealisation of Kifer, Smith & Thakurta's theorem.

    Returns: ``coef``, shape ``(d,)`` or ``(n_draws, d)``; the calibration it released with is
    ``calibration_used(gaussian_objective_perturbation, X, y, ...the same arguments...)`` (:func:`calibration_used`).
    """
    if check_input:
        X, y = check_training_data(X, y)
    loss = get_loss(loss, huber_h)
    lam, tol = check_lambda(lam), check_tolerance(tol)
    calibration = _gaussian_objective_perturbation_calibration(X.shape[0], epsilon, delta, lam, loss, release, gamma)
    return private_release(X, y, lam, loss, calibration, n_draws, random_state, tol=tol,
                           solver_options=_check_solver_dict(solver_options))


@_recorded
def _gaussian_objective_perturbation_calibration(n, epsilon, delta, lam, loss, release, gamma):
    """The calibration :func:`gaussian_objective_perturbation` releases with."""
    lam = check_lambda(lam)
    if _check_release(release, epsilon, None) == "certified":
        return certified_gaussian_objective_perturbation_calibration(
            epsilon, delta, n, lam, _default_gamma(gamma, n), loss.curvature, loss.lipschitz)
    return gaussian_objective_perturbation_calibration(epsilon, delta, n, lam, loss.curvature, loss.lipschitz)


def approximate_minima_perturbation(X, y, epsilon, delta, lam, gamma=None, loss="logistic", huber_h=0.5,
                                    n_draws=None, random_state=None, epsilon_split=(0.891, 0.099, 0.01),
                                    delta_split=(0.99, 0.01), solver_options=None, check_input=True):
    r"""Approximate minima perturbation (Iyengar et al., IEEE S&P 2019, Algorithm 1), (ε, δ)-DP.

    Gaussian objective perturbation, solved only to gradient norm :math:`\le\gamma` (``gamma``; default
    :math:`1/n^2`, the authors'), then Gaussian output noise calibrated to twice the distance
    :math:`\gamma/(\lambda+\Delta)` from the exact minimiser, the most two neighbours' approximate points can differ
    by (:func:`~dplr.gaussian.approximate_minima_perturbation_calibration` states the theorem and its proof for
    replace-one neighbours, gives the split of ε and δ, and refuses a split the proof does not cover). The solve runs
    below :math:`\gamma` (:func:`~dplr.solver.stopping_tolerance`: :math:`\gamma` less what float64's rounding can
    hide) and a point whose certified gradient norm (:func:`~dplr.solver.certified_gradient_norm`) exceeds
    :math:`\gamma` is replaced by the fallback's (:func:`~dplr.solver.fixed_step_descent`, within
    :math:`\gamma/(\lambda+\Delta)` of the exact minimiser on every data set; a larger ``max_iter`` in
    ``solver_options`` makes it rarer). A :math:`\gamma` float64 cannot certify is refused before the solve
    (``ValueError``, with the smallest that works): the default :math:`1/n^2` is, from about 160,000 records on. The
    stream draws the objective noise (``n_draws * d`` normals), then the output noise.

    Returns: ``coef``, shape ``(d,)`` or ``(n_draws, d)``; the calibration it released with is
    ``calibration_used(approximate_minima_perturbation, X, y, ...the same arguments...)`` (:func:`calibration_used`).
    """
    if check_input:
        X, y = check_training_data(X, y)
    loss = get_loss(loss, huber_h)
    lam = check_lambda(lam)
    calibration = _approximate_minima_perturbation_calibration(X.shape[0], epsilon, delta, lam, gamma, loss,
                                                               epsilon_split, delta_split)
    return private_release(X, y, lam, loss, calibration, n_draws, random_state,
                           solver_options=_check_solver_dict(solver_options))


@_recorded
def _approximate_minima_perturbation_calibration(n, epsilon, delta, lam, gamma, loss, epsilon_split,
                                                 delta_split):
    """The calibration :func:`approximate_minima_perturbation` releases with."""
    gamma = 1.0 / n**2 if gamma is None else gamma
    return approximate_minima_perturbation_calibration(epsilon, delta, n, check_lambda(lam), gamma, loss.curvature,
                                                       loss.lipschitz, epsilon_split, delta_split)


#: each private algorithm's calibration, from its arguments of the same names (and ``n``, the number of records):
#: the functions the algorithms themselves call
_CALIBRATIONS = {
    sensitivity_method: _sensitivity_method_calibration,
    objective_perturbation: _objective_perturbation_calibration,
    gaussian_output_perturbation: _gaussian_output_perturbation_calibration,
    gaussian_objective_perturbation: _gaussian_objective_perturbation_calibration,
    approximate_minima_perturbation: _approximate_minima_perturbation_calibration,
    dp_sgd: dpsgd_calibration,
}


def calibration_used(algorithm, X, y, *args, **kwargs):
    r"""The calibration record ``algorithm(X, y, *args, **kwargs)`` releases with, without releasing anything.

    ``algorithm`` is one of the private algorithms -- :func:`sensitivity_method`, :func:`objective_perturbation`,
    :func:`gaussian_output_perturbation`, :func:`gaussian_objective_perturbation`,
    :func:`approximate_minima_perturbation`, :func:`dplr.dpsgd.dp_sgd` -- and the other arguments are the
    algorithm's own, bound by its signature (its defaults included: the release variant, the certified
    :math:`\gamma`, the tolerance). Each algorithm computes its calibration with the function this one calls, so
    the two cannot differ. A calibration is a function of public quantities only: of ``X`` only its number of rows
    is read (``y`` is not), the records are not checked, no noise is drawn, nothing is solved. Returns the
    algorithm's calibration record (for :func:`objective_perturbation` with an ``epsilon`` array, a tuple of them,
    one per value); a ``ValueError`` for another function.
    """
    calibrate = _calibration_of(algorithm)
    arguments = inspect.signature(algorithm).bind(X, y, *args, **kwargs)
    arguments.apply_defaults()
    arguments = dict(arguments.arguments, n=np.shape(X)[0])
    if "huber_h" in arguments:  # the algorithm's public boundary: a loss name (and width) resolved once, as it does
        arguments["loss"] = get_loss(arguments["loss"], arguments["huber_h"])
    return calibrate(**{name: arguments[name] for name in inspect.signature(calibrate).parameters})


def _calibration_of(algorithm):
    try:
        return _CALIBRATIONS[algorithm]
    except (KeyError, TypeError):
        names = ", ".join(function.__name__ for function in _CALIBRATIONS)
        raise ValueError(f"calibration_used and calibrated_release take one of the private algorithms ({names}), "
                         f"got {algorithm!r}.") from None


def calibrated_release(algorithm, X, y, *args, **kwargs):
    r"""``(coef, calibration)``: ``algorithm(X, y, *args, **kwargs)`` and the calibration record it released with.

    The same record as :func:`calibration_used` with the same arguments, but calibrated once: the one the release
    computed, recorded as it was made (the scikit-learn estimators' ``calibration_``). :func:`dplr.dpsgd.dp_sgd`'s
    is :func:`~dplr.dpsgd.dpsgd_calibration`'s, memoised, so that its accountant runs once too. Always a pair.
    """
    _calibration_of(algorithm)
    if algorithm is dp_sgd:  # dpsgd_calibration is memoised: calibration_used finds what dp_sgd computed
        return dp_sgd(X, y, *args, **kwargs), calibration_used(dp_sgd, X, y, *args, **kwargs)
    token = _RECORDING.set([])
    try:
        coef = algorithm(X, y, *args, **kwargs)
        (calibration,) = _RECORDING.get()
    finally:
        _RECORDING.reset(token)
    return coef, calibration

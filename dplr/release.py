r"""The one release path: draw through the calibration's mechanism, solve, certify the gradient norm or fall back.

Every private model of the core is released here (:func:`private_release`). Given a calibration record -- the
privacy map's decision, from :mod:`dplr.calibration` or :mod:`dplr.gaussian` -- it does what the record's
algorithm prescribes, and nothing else:

* **output perturbation** (:class:`~dplr.calibration.SensitivityMethodCalibration`, NIPS 2008 Algorithm 1;
  :class:`~dplr.gaussian.GaussianOutputPerturbationCalibration`): solve the regularised ERM problem to
  :func:`~dplr.solver.stopping_tolerance` (``tol`` less what float64's rounding can hide), certify that the point's
  true gradient norm is at most ``tol`` (:func:`~dplr.solver.certified_gradient_norm`) or else replace it by the
  fallback's (:func:`~dplr.solver.fixed_step_descent`, gradient descent for a number of steps fixed by public
  quantities), then release :math:`w + \eta` with :math:`\eta` drawn from the calibration's mechanism. The
  noise was calibrated to the sensitivity :math:`2(L + n\,\text{tol})/(n\lambda)`
  (:func:`~dplr.calibration.sensitivity_bound`), which covers only points within tol/λ of the exact minimiser:
  the released point is one, on every data set, so no release depends on whether the solver converged (a tol
  float64 cannot reach is refused by :func:`~dplr.solver.fixed_step_plan` before the data are read).
  ``exact_minimiser=True`` is the papers' idealisation (the calibration at ``solver_tol=0``, the solver's point
  released as if it were the exact minimiser, uncertified): the replications of the papers state Algorithm 1 that
  way, and say so;
* **objective perturbation** (:class:`~dplr.calibration.ObjectivePerturbationCalibration`, Algorithm 2;
  :class:`~dplr.gaussian.GaussianObjectivePerturbationCalibration`, Kifer, Smith & Thakurta 2012): draw
  :math:`b` from the calibration's mechanism, then minimise
  :math:`\frac{\lambda+\Delta}{2}\lVert w\rVert^2 + \frac{b^\top w}{n} + \frac1n\sum_i \ell(y_i w^\top x_i)` to
  ``tol`` and released as if it were the exact minimiser (the papers' idealisation, ``release="exact_minimiser"``:
  the proofs are about the exact minimiser; there is no certificate to check) -- no longer the algorithms' default,
  kept for the replications of published numbers;
* **the hardened output perturbation** (:class:`~dplr.calibration.SensitivityMethodGridCalibration`): solved and
  certified as above, then :math:`w` rounded to a power-of-two grid and integer discrete Laplace noise added, drawn
  exactly (:class:`~dplr.mechanisms.GridLaplace`): ε-DP for the float64 numbers released, not only for the reals
  (:func:`grid_laplace_release` is the same release for any value of known L2 sensitivity); its (ε, δ) counterpart
  for Gaussian output perturbation (:class:`~dplr.gaussian.GaussianOutputPerturbationGridCalibration`) adds exact
  discrete Gaussian noise instead (:class:`~dplr.mechanisms.GridGaussian`; :func:`grid_gaussian_release` for any
  value);
* **approximate minima perturbation** (:class:`~dplr.gaussian.ApproximateMinimaPerturbationCalibration`, Iyengar
  et al. 2019) and the **certified objective perturbations**
  (:class:`~dplr.calibration.CertifiedObjectivePerturbationCalibration`,
  :class:`~dplr.gaussian.CertifiedGaussianObjectivePerturbationCalibration`, ``release="certified"``): the
  objective step, solved below :math:`\gamma` and every point certified at most :math:`\gamma` or replaced by the
  fallback's, then the output noise (:data:`CERTIFIED_OBJECTIVE_PERTURBATIONS`; :func:`certified_solve_plan` and
  :func:`certified_output`, which private tuning's Algorithm 2 also ends with). ``release="certified"`` is the default
  of every objective perturbation of :mod:`dplr.algorithms`, of the estimators and of private tuning. Algorithm 2's
  hardened release (:class:`~dplr.calibration.CertifiedObjectivePerturbationGridCalibration`,
  ``release="certified_grid"``) certifies the same point, then releases it by :func:`grid_laplace_release`.

The draws use the stream in the algorithm's order: output perturbation draws only :math:`\eta` (after the solve,
which draws nothing); objective perturbation draws :math:`b`; approximate minima perturbation and the certified
objective perturbations :math:`b`, then the output noise. The certificate and its fallback are :func:`certify_release`,
also used by private tuning (:mod:`dplr.tuning`), which solves the parts of a run together.

Sources: NIPS 2008, Sections 3-4; JMLR 12 (2011), Algorithm 2 and Theorem 9; the Gaussian algorithms' sources in
:mod:`dplr.gaussian`; the certificate in :mod:`dplr.solver.stopping`.
"""
from __future__ import annotations

import threading

import numpy as np

from dplr.calibration import (CertifiedObjectivePerturbationCalibration, CertifiedObjectivePerturbationGridCalibration,
                              ObjectivePerturbationCalibration, SensitivityMethodCalibration,
                              SensitivityMethodGridCalibration, grid_laplace_calibration)
from dplr.gaussian import (
    ApproximateMinimaPerturbationCalibration,
    CertifiedGaussianObjectivePerturbationCalibration,
    GaussianObjectivePerturbationCalibration,
    GaussianOutputPerturbationCalibration,
    GaussianOutputPerturbationGridCalibration,
    grid_gaussian_calibration,
)
from dplr.solver import (
    certified_gradient_norm,
    fixed_step_descent,
    fixed_step_plan,
    solve_regularized_erm,
    stopping_tolerance,
)
from dplr.validation import check_random_state

__all__ = ["IDEALISED_TOL", "OUTPUT_PERTURBATIONS", "OBJECTIVE_PERTURBATIONS", "CERTIFIED_OBJECTIVE_PERTURBATIONS",
           "GRID_RELEASES", "certified_output", "certified_point", "certified_points", "certified_solve_plan",
           "certify_release", "fallback_count",
           "grid_gaussian_release", "grid_laplace_release", "private_release"]

#: The count of :func:`fallback_count`, and its lock (private tuning certifies in worker threads).
_FALLBACKS = [0]
_FALLBACK_LOCK = threading.Lock()

#: The calibrations whose algorithm adds noise to the (certified) minimiser.
OUTPUT_PERTURBATIONS = (SensitivityMethodCalibration, GaussianOutputPerturbationCalibration,
                        SensitivityMethodGridCalibration, GaussianOutputPerturbationGridCalibration)

#: The output perturbations released on a grid with exact discrete noise (the hardened releases).
GRID_RELEASES = (SensitivityMethodGridCalibration, GaussianOutputPerturbationGridCalibration)

#: The calibrations whose algorithm adds noise to the objective (approximate minima perturbation also adds output
#: noise, :class:`~dplr.gaussian.ApproximateMinimaPerturbationCalibration`).
OBJECTIVE_PERTURBATIONS = (ObjectivePerturbationCalibration, GaussianObjectivePerturbationCalibration,
                           ApproximateMinimaPerturbationCalibration, CertifiedObjectivePerturbationCalibration,
                           CertifiedGaussianObjectivePerturbationCalibration,
                           CertifiedObjectivePerturbationGridCalibration)

#: The objective perturbations released at a point certified within :math:`\gamma` of gradient norm, then output
#: noise: approximate minima perturbation and the certified releases of Algorithm 2 and of Gaussian objective
#: perturbation (:func:`~dplr.calibration.certified_objective_perturbation_calibration`).
CERTIFIED_OBJECTIVE_PERTURBATIONS = (ApproximateMinimaPerturbationCalibration,
                                     CertifiedObjectivePerturbationCalibration,
                                     CertifiedGaussianObjectivePerturbationCalibration,
                                     CertifiedObjectivePerturbationGridCalibration)


def certify_release(grad_norms, coefs, n, reg, loss, bound, fallback, *, perturbation_norms=None):
    r"""The points to release: each of ``coefs`` whose true gradient norm is certified at most ``bound``, as it is;
    each other replaced by the fallback's point (:func:`~dplr.solver.fixed_step_descent`), which is within
    ``bound / reg`` of the exact minimiser on every data set -- so no release depends on whether the solver converged.

    ``grad_norms`` are the solver's computed norms of the points ``coefs`` (one or ``(k, d)``), ``reg`` the
    regulariser the solver minimised with (:math:`\lambda + \Delta`), ``perturbation_norms`` each point's
    :math:`\lVert b\rVert` (``None``: unperturbed). The bound on the true norm is
    :func:`~dplr.solver.certified_gradient_norm`. ``fallback(mask)`` returns the fallback's points for the points
    ``mask`` marks (a boolean array over the points), shape ``(mask.sum(), d)``; its plan
    (:func:`~dplr.solver.fixed_step_plan`) is the caller's, made before the data are read. Returns ``coefs`` itself
    when every point is certified (the fast solver's points, bit for bit), otherwise a new array; each fallback is
    counted (:func:`fallback_count`)."""
    coefs = np.asarray(coefs, dtype=float)
    d = coefs.shape[-1]
    computed = np.reshape(np.asarray(grad_norms, dtype=float), -1)
    points = np.reshape(coefs, (-1, d))
    if perturbation_norms is None:
        certified = [certified_gradient_norm(g, w, n, reg, loss) for g, w in zip(computed, points)]
    else:
        certified = [certified_gradient_norm(g, w, n, reg, loss, perturbation_norm=p)
                     for g, w, p in zip(computed, points, np.reshape(perturbation_norms, -1))]
    failed = ~(np.array(certified) <= bound)  # NaN fails too
    if not failed.any():
        return coefs
    released = points.copy()
    released[failed] = fallback(failed)
    with _FALLBACK_LOCK:
        _FALLBACKS[0] += int(failed.sum())
    return released.reshape(coefs.shape)


def fallback_count() -> int:
    """How many points :func:`certify_release` has replaced by the fallback's in this process (instrumentation:
    the studies report how often the fast solver's stop was not certified; thread-safe)."""
    with _FALLBACK_LOCK:
        return _FALLBACKS[0]


def _solve_options(solver_options, max_iter):
    options = dict(solver_options or {})
    if max_iter is not None:
        options["max_iter"] = max_iter
    return options


#: The solver's tolerance where it is not a privacy parameter (objective perturbation as the papers state it, the
#: idealised output perturbation): :func:`private_release`'s ``tol=None``.
IDEALISED_TOL = 1e-8


def _check_basis(calibration, n, lam, loss, *, solver_tol=None):
    r"""Refuse a release on anything other than what ``calibration`` was computed for (its
    :class:`~dplr.calibration.CalibrationBasis`): ``n`` records (times the replicas), ``lam``, the loss's constants
    and, for output perturbation, ``solver_tol``. Exact comparisons of the float64 numbers: the release must use the
    very numbers the calibration used."""
    basis = getattr(calibration, "basis", None)
    if basis is None:
        raise ValueError(f"the calibration record {type(calibration).__name__} does not say what it was computed for "
                         f"(its basis: n, lam, the loss's constants, the solver's tolerance), so no release can be "
                         f"checked against it. Fix: build it with the calibration functions of dplr.calibration or "
                         f"dplr.gaussian, which record it.")
    found = [("n", basis.n, n, "the number of records (times replicas)"), ("lam", basis.lam, lam, "lam"),
             ("lipschitz", basis.lipschitz, loss.lipschitz, "the loss's lipschitz"),
             ("curvature", basis.curvature, loss.curvature, "the loss's curvature"),
             ("solver_tol", basis.solver_tol, solver_tol, "tol")]
    for name, calibrated, released, what in found:
        if calibrated is not None and calibrated != released:
            raise ValueError(f"the calibration was computed for {name} = {calibrated!r}, but this release has "
                             f"{what} = {released!r}: its noise does not cover this release. Fix: calibrate with the "
                             f"release's own values (n = {n!r} records, lam = {lam!r}, the loss's lipschitz and "
                             f"curvature, solver_tol = tol), or release with the calibration's.")


def private_release(X, y, lam, loss, calibration, n_draws=None, random_state=None, *, tol=None, max_iter=None,
                    solver_options=None, noise=None, exact_minimiser=False, replicas=1):
    r"""Release one private classifier per draw: the calibration's algorithm (module docstring), in one solve.

    **The rule** (issue 38): a calibration is private only for the release it was computed for. Every record carries
    its :class:`~dplr.calibration.CalibrationBasis` -- :math:`n`, :math:`\lambda`, the loss's :math:`L` and
    :math:`c`, and for output perturbation the tolerance :math:`\tau` its sensitivity covers -- and this function,
    the public boundary of every release, refuses (``ValueError``, saying how to fix it) a release on other
    :math:`n` (``X.shape[0] * replicas``), λ (``lam``), loss constants (``loss``) or tolerance (``tol``), before
    any draw or solve. A certified release's tolerance is its record's :math:`\gamma`, used as recorded.

    Parameters
    ----------
    X, y : checked training data (rows in the unit ball, labels in {-1, +1}); the callers check them once
    lam : float, checked
    loss : a loss object (:func:`dplr.losses.get_loss`)
    calibration : a calibration record (module docstring), or for objective perturbation a tuple of them, one
        problem each (each draws once, from its entry of ``random_state``, a sequence)
    n_draws : None (one classifier, ``(d,)``) or ``k`` (``(k, d)``, one batched solve)
    random_state : None, int, Generator; a sequence of them with a tuple of calibrations
    tol : for output perturbation the gradient norm the released point is certified to meet: the ``solver_tol``
        the calibration was made with (``None``: the record's; another value is refused); with
        ``exact_minimiser=True`` and for the uncertified objective perturbations the solver's tolerance, not a
        privacy parameter (``None``: :data:`IDEALISED_TOL`). The certified objective perturbations (approximate minima
        perturbation, ``release="certified"``) certify their calibration's :math:`\gamma`; ``tol`` is unused.
    max_iter, solver_options : the solver's (:func:`~dplr.solver.solve_regularized_erm`), checked by the caller;
        ``max_iter=None`` leaves the solver's default (or ``solver_options``'s)
    noise : objective perturbation only: noise already drawn from the calibration's mechanism (then ``n_draws`` and
        ``random_state`` are not used; the guarantee rests on the caller, who must draw it once per release)
    exact_minimiser : output perturbation only: the papers' idealisation (a calibration at ``solver_tol=0``, required),
        no certificate -- for the replications of the papers, which state Algorithm 1 that way
    replicas : the records counted ``replicas`` times (the calibration made for ``replicas * n`` records): for
        objective perturbation the objective's term is :math:`(b/m)^\top w/n`, the rest unchanged (the mean objective
        is the same); not with a certified objective perturbation
    """
    n, d = X.shape
    options = _solve_options(solver_options, max_iter)
    if isinstance(calibration, OUTPUT_PERTURBATIONS):
        rng = check_random_state(random_state)
        calibrated = getattr(getattr(calibration, "basis", None), "solver_tol", None)
        if exact_minimiser or calibrated == 0.0:
            if not (exact_minimiser and calibrated == 0.0):
                raise ValueError(f"exact_minimiser=True (the papers' idealisation: the solver's point released as the "
                                 f"exact minimiser, uncertified) goes with a calibration at solver_tol=0, and only "
                                 f"with it; got exact_minimiser={exact_minimiser!r} and a calibration at solver_tol = "
                                 f"{calibrated!r}. Fix: calibrate with solver_tol = the tolerance the released point "
                                 f"is certified at (dplr.algorithms.sensitivity_method does), or, for the idealisation, "
                                 f"solver_tol=0 with exact_minimiser=True.")
            _check_basis(calibration, n * replicas, lam, loss, solver_tol=0.0)
            w = solve_regularized_erm(X, y, lam, loss, tol=IDEALISED_TOL if tol is None else tol, check_input=False,
                                      **options).coef
        else:
            tol = calibrated if tol is None else tol
            _check_basis(calibration, n * replicas, lam, loss, solver_tol=tol)
            target = stopping_tolerance(tol, n, d, lam, loss)
            plan = fixed_step_plan(tol, n, d, lam, loss)  # public: refused here, before the data, or never
            result = solve_regularized_erm(X, y, lam, loss, tol=target, check_input=False, **options)
            w = certify_release(result.grad_norm, result.coef, n, lam, loss, tol,
                                lambda failed: fixed_step_descent(X, y, loss, plan)[None])
        if isinstance(calibration, GRID_RELEASES):  # the hardened releases: w on a grid, exact noise
            return calibration.mechanism(d).release(w, n_draws, rng)
        return w + calibration.mechanism(d).sample(n_draws, rng)
    if exact_minimiser:
        raise ValueError("exact_minimiser applies to output perturbation only.")
    per_problem = isinstance(calibration, tuple)
    calibrations = calibration if per_problem else (calibration,)
    if not calibrations or not all(isinstance(c, OBJECTIVE_PERTURBATIONS) for c in calibrations):
        raise ValueError(f"calibration must be a record of dplr.calibration or dplr.gaussian, got {calibration!r}.")
    for cal in calibrations:
        _check_basis(cal, n * replicas, lam, loss)
    if replicas != 1 and any(isinstance(c, CERTIFIED_OBJECTIVE_PERTURBATIONS) for c in calibrations):
        raise ValueError(f"replicas = {replicas!r}: a certified release (approximate minima perturbation, "
                         f"release='certified') certifies the records it solves, as given. Fix: replicas=1 with a "
                         f"calibration for X.shape[0] records.")
    tol = IDEALISED_TOL if tol is None else tol
    rng = None if per_problem else check_random_state(random_state)
    if noise is not None:
        if isinstance(calibration, CERTIFIED_OBJECTIVE_PERTURBATIONS):
            raise ValueError("a certified release (approximate minima perturbation, release='certified') draws its "
                             "own noise: pass noise=None.")
        b = noise
    elif not per_problem:
        b = calibration.mechanism(d).sample(n_draws, rng)
    else:
        b = np.vstack([cal.mechanism(d).sample(random_state=check_random_state(rs))
                       for cal, rs in zip(calibrations, random_state)])
    ridge = np.array([cal.ridge for cal in calibrations]) if per_problem else calibration.ridge
    perturbation = b / replicas if replicas != 1 else b
    if per_problem and any(isinstance(c, CERTIFIED_OBJECTIVE_PERTURBATIONS) for c in calibrations):
        raise ValueError("a certified release solves one epsilon at a time: pass a scalar epsilon (or "
                         "release='exact_minimiser' for the papers' idealisation).")
    if not isinstance(calibration, CERTIFIED_OBJECTIVE_PERTURBATIONS):
        return solve_regularized_erm(X, y, lam, loss, b=perturbation, ridge=ridge, tol=tol, check_input=False,
                                     **options).coef
    # a missed gamma warns (ConvergenceWarning) and its point is replaced by the fallback's below; no warning filter
    # is changed here (warnings.catch_warnings is not thread-safe, and AMP runs in worker threads)
    return _output_noise(calibration, certified_point(X, y, lam, loss, calibration, b, options), n_draws, rng)


def certified_point(X, y, lam, loss, calibration, b, solver_options=None):
    r"""The point a certified objective perturbation (:data:`CERTIFIED_OBJECTIVE_PERTURBATIONS`) releases before
    its output noise, for the drawn ``b`` (``(d,)`` or ``(k, d)``): the solver's, to :func:`certified_solve_plan`'s
    tolerance, certified or replaced by the fallback's (:func:`certified_points`). :func:`private_release` adds the
    output noise to it; the floating-point chapter's attack on Algorithm 2 computes it for chosen ``b``.
    ``solver_options``: checked keyword arguments of :func:`~dplr.solver.solve_regularized_erm`."""
    n, d = X.shape
    target, plan = certified_solve_plan(calibration, n, d, lam, loss, b)
    result = solve_regularized_erm(X, y, lam, loss, b=b, ridge=calibration.ridge, tol=target, check_input=False,
                                   **dict(solver_options or {}))
    return certified_points(X, y, lam, loss, calibration, result.coef, result.grad_norm, b, plan)


def certified_solve_plan(calibration, n, d, lam, loss, b):
    r"""``(target, plan)`` for a certified objective perturbation's points (:data:`CERTIFIED_OBJECTIVE_PERTURBATIONS`)
    on ``n`` records in ``d`` dimensions with the drawn noise ``b`` (``(d,)`` or ``(k, d)``): the tolerance to solve to,
    so that the stop certifies :math:`\gamma` despite rounding (:func:`~dplr.solver.stopping_tolerance`), and the
    fallback's plan (:func:`~dplr.solver.fixed_step_plan`). Both depend on ``n``, ``d``, :math:`\lambda + \Delta`,
    :math:`\gamma` and the largest :math:`\lVert b\rVert`, never on the data; a :math:`\gamma` float64 cannot certify
    is refused here, before the data are read."""
    reg = lam + calibration.ridge  # the regulariser the solver minimises with
    b_norm = float(np.max(np.linalg.norm(np.reshape(b, (-1, d)), axis=1)))
    return (stopping_tolerance(calibration.gamma, n, d, reg, loss, perturbation_norm=b_norm, name="gamma"),
            fixed_step_plan(calibration.gamma, n, d, reg, loss, perturbation_norm=b_norm, name="gamma"))


def certified_output(X, y, lam, loss, calibration, coef, grad_norm, b, plan, n_draws=None, random_state=None):
    r"""The release of a certified objective perturbation (:data:`CERTIFIED_OBJECTIVE_PERTURBATIONS`) from the solver's
    points ``coef`` (their computed gradient norms ``grad_norm``) of the objectives perturbed by ``b``: each point
    certified at most :math:`\gamma` or replaced by the fallback's (:func:`certify_release`, ``plan`` from
    :func:`certified_solve_plan`), then the output noise drawn from ``calibration.output_mechanism`` (``n_draws`` as
    ``b``'s rows; ``random_state`` the stream that drew ``b``). :func:`private_release` ends so, and so does private
    tuning's Algorithm 2 (:mod:`dplr.tuning`), which solves a run's parts together."""
    certified = certified_points(X, y, lam, loss, calibration, coef, grad_norm, b, plan)
    return _output_noise(calibration, certified, n_draws, check_random_state(random_state))


def certified_points(X, y, lam, loss, calibration, coef, grad_norm, b, plan):
    r"""The solver's points ``coef`` (computed gradient norms ``grad_norm``) of the objectives perturbed by ``b``, each
    certified at most :math:`\gamma` or replaced by the fallback's (:func:`certify_release`; ``plan`` from
    :func:`certified_solve_plan`): what :func:`certified_output` adds the output noise to."""
    n, d = X.shape
    B = np.reshape(b, (-1, d))
    return certify_release(grad_norm, coef, n, lam + calibration.ridge, loss, calibration.gamma,
                           perturbation_norms=np.linalg.norm(B, axis=1),
                           fallback=lambda failed: fixed_step_descent(X, y, loss, plan, b=B[failed]))


def _output_noise(calibration, certified, n_draws, rng):
    r"""The certified points plus the calibration's output noise, from ``rng`` (a Generator): float noise added, or,
    for Algorithm 2's hardened release (:class:`~dplr.calibration.CertifiedObjectivePerturbationGridCalibration`),
    each point released by :func:`grid_laplace_release` at :math:`r` and :math:`\varepsilon_2/2`, one draw each
    (the book's ``thm-op-certified-grid``)."""
    d = certified.shape[-1]
    if not isinstance(calibration, CertifiedObjectivePerturbationGridCalibration):
        return certified + calibration.output_mechanism(d).sample(n_draws, rng)
    released = [grid_laplace_release(point, calibration.distance, calibration.grid_epsilon, None, rng)
                for point in np.reshape(certified, (-1, d))]
    return released[0] if n_draws is None else np.vstack(released)


def _grid_release(value, calibrate, n_draws, random_state):
    """``value`` (scalar or array, finite) flattened, released by the grid mechanism of ``calibrate(size)`` and
    reshaped: the common body of the two grid releases."""
    value = np.asarray(value, dtype=float)
    if value.size == 0 or not np.all(np.isfinite(value)):
        raise ValueError(f"value must be a non-empty array of finite numbers, got {value!r}. Fix: release only "
                         f"finite values (clip them to public bounds first).")
    flat = value.reshape(-1)
    released = calibrate(flat.size).mechanism().release(flat, n_draws, check_random_state(random_state))
    return released.reshape(value.shape if n_draws is None else (n_draws,) + value.shape)


def grid_laplace_release(value, sensitivity, epsilon, n_draws=None, random_state=None):
    r"""Release a scalar or vector ``value`` of L2 sensitivity :math:`S`, ε-DP as run: :math:`g(\mathrm{round}(v/g) + K)`.

    The hardened counterpart of :func:`dplr.mechanisms.laplace_mechanism`: ``value`` rounded (exactly) to the grid
    :math:`g\mathbb{Z}^d` of :func:`dplr.calibration.grid_laplace_calibration`, plus discrete Laplace indices drawn
    exactly (:class:`dplr.mechanisms.DiscreteLaplace`); the outputs are grid points, exact float64 numbers. Returns
    an array of ``value``'s shape (``n_draws=None``) or ``(n_draws,) + shape``.
    """
    return _grid_release(value, lambda dim: grid_laplace_calibration(sensitivity, epsilon, dim), n_draws, random_state)


def grid_gaussian_release(value, sensitivity, epsilon, delta, n_draws=None, random_state=None):
    r"""Release a scalar or vector ``value`` of L2 sensitivity :math:`S`, (ε, δ)-DP as run: :math:`g(\mathrm{round}(v/g) + K)`.

    The hardened counterpart of :func:`dplr.gaussian.gaussian_mechanism`: ``value`` rounded (exactly) to the grid
    :math:`g\mathbb{Z}^d` of :func:`dplr.gaussian.grid_gaussian_calibration`, plus discrete Gaussian indices drawn
    exactly (:class:`dplr.mechanisms.DiscreteGaussian`); the outputs are grid points, exact float64 numbers. Returns
    an array of ``value``'s shape (``n_draws=None``) or ``(n_draws,) + shape``.
    """
    return _grid_release(value, lambda dim: grid_gaussian_calibration(sensitivity, epsilon, delta, dim), n_draws,
                         random_state)

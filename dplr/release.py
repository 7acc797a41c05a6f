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
  (:func:`grid_laplace_release` is the same release for any value of known L2 sensitivity);
* **approximate minima perturbation** (:class:`~dplr.gaussian.ApproximateMinimaPerturbationCalibration`, Iyengar
  et al. 2019) and the **certified objective perturbations**
  (:class:`~dplr.calibration.CertifiedObjectivePerturbationCalibration`,
  :class:`~dplr.gaussian.CertifiedGaussianObjectivePerturbationCalibration`, ``release="certified"``): the
  objective step, solved below :math:`\gamma` and every point certified at most :math:`\gamma` or replaced by the
  fallback's, then the output noise (:data:`CERTIFIED_OBJECTIVE_PERTURBATIONS`; :func:`certified_solve_plan` and
  :func:`certified_output`, which private tuning's Algorithm 2 also ends with). ``release="certified"`` is the default
  of every objective perturbation of :mod:`dplr.algorithms`, of the estimators and of private tuning.

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

from dplr.calibration import (CertifiedObjectivePerturbationCalibration, ObjectivePerturbationCalibration,
                              SensitivityMethodCalibration, SensitivityMethodGridCalibration,
                              grid_laplace_calibration)
from dplr.gaussian import (
    ApproximateMinimaPerturbationCalibration,
    CertifiedGaussianObjectivePerturbationCalibration,
    GaussianObjectivePerturbationCalibration,
    GaussianOutputPerturbationCalibration,
)
from dplr.solver import (
    certified_gradient_norm,
    fixed_step_descent,
    fixed_step_plan,
    solve_regularized_erm,
    stopping_tolerance,
)
from dplr.validation import check_random_state

__all__ = ["OUTPUT_PERTURBATIONS", "OBJECTIVE_PERTURBATIONS", "CERTIFIED_OBJECTIVE_PERTURBATIONS", "certify_release",
           "certified_output", "certified_solve_plan", "fallback_count", "grid_laplace_release", "private_release"]

#: The count of :func:`fallback_count`, and its lock (private tuning certifies in worker threads).
_FALLBACKS = [0]
_FALLBACK_LOCK = threading.Lock()

#: The calibrations whose algorithm adds noise to the (certified) minimiser.
OUTPUT_PERTURBATIONS = (SensitivityMethodCalibration, GaussianOutputPerturbationCalibration,
                        SensitivityMethodGridCalibration)

#: The calibrations whose algorithm adds noise to the objective (approximate minima perturbation also adds output
#: noise, :class:`~dplr.gaussian.ApproximateMinimaPerturbationCalibration`).
OBJECTIVE_PERTURBATIONS = (ObjectivePerturbationCalibration, GaussianObjectivePerturbationCalibration,
                           ApproximateMinimaPerturbationCalibration, CertifiedObjectivePerturbationCalibration,
                           CertifiedGaussianObjectivePerturbationCalibration)

#: The objective perturbations released at a point certified within :math:`\gamma` of gradient norm, then output
#: noise: approximate minima perturbation and the certified releases of Algorithm 2 and of Gaussian objective
#: perturbation (:func:`~dplr.calibration.certified_objective_perturbation_calibration`).
CERTIFIED_OBJECTIVE_PERTURBATIONS = (ApproximateMinimaPerturbationCalibration,
                                     CertifiedObjectivePerturbationCalibration,
                                     CertifiedGaussianObjectivePerturbationCalibration)


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


def private_release(X, y, lam, loss, calibration, n_draws=None, random_state=None, *, tol=1e-8, max_iter=None,
                    solver_options=None, noise=None, exact_minimiser=False, replicas=1):
    r"""Release one private classifier per draw: the calibration's algorithm (module docstring), in one solve.

    Parameters
    ----------
    X, y : checked training data (rows in the unit ball, labels in {-1, +1}); the callers check them once
    lam : float, checked
    loss : a loss object (:func:`dplr.losses.get_loss`)
    calibration : a calibration record (module docstring), or for objective perturbation a tuple of them, one
        problem each (each draws once, from its entry of ``random_state``, a sequence)
    n_draws : None (one classifier, ``(d,)``) or ``k`` (``(k, d)``, one batched solve)
    random_state : None, int, Generator; a sequence of them with a tuple of calibrations
    tol : for output perturbation the gradient norm the released point is certified to meet -- the ``solver_tol``
        the calibration was made with; for objective perturbation the solver's tolerance. Approximate minima
        perturbation certifies its calibration's :math:`\gamma`.
    max_iter, solver_options : the solver's (:func:`~dplr.solver.solve_regularized_erm`), checked by the caller;
        ``max_iter=None`` leaves the solver's default (or ``solver_options``'s)
    noise : objective perturbation only: noise already drawn from the calibration's mechanism (then ``n_draws`` and
        ``random_state`` are not used; the guarantee rests on the caller, who must draw it once per release)
    exact_minimiser : output perturbation only: the papers' idealisation (calibration at ``solver_tol=0``), no
        certificate -- for the replications of the papers, which state Algorithm 1 that way
    replicas : objective perturbation only: the records counted ``replicas`` times (the calibration made for
        ``replicas * n`` records): the objective's term is :math:`(b/m)^\top w/n`, the rest unchanged
    """
    n, d = X.shape
    options = _solve_options(solver_options, max_iter)
    if isinstance(calibration, OUTPUT_PERTURBATIONS):
        rng = check_random_state(random_state)
        if exact_minimiser:
            w = solve_regularized_erm(X, y, lam, loss, tol=tol, check_input=False, **options).coef
        else:
            target = stopping_tolerance(tol, n, d, lam, loss)
            plan = fixed_step_plan(tol, n, d, lam, loss)  # public: refused here, before the data, or never
            result = solve_regularized_erm(X, y, lam, loss, tol=target, check_input=False, **options)
            w = certify_release(result.grad_norm, result.coef, n, lam, loss, tol,
                                lambda failed: fixed_step_descent(X, y, loss, plan)[None])
        if isinstance(calibration, SensitivityMethodGridCalibration):  # the hardened release: w on a grid, exact noise
            return calibration.mechanism(d).release(w, n_draws, rng)
        return w + calibration.mechanism(d).sample(n_draws, rng)
    if exact_minimiser:
        raise ValueError("exact_minimiser applies to output perturbation only.")
    per_problem = isinstance(calibration, tuple)
    calibrations = calibration if per_problem else (calibration,)
    if not calibrations or not all(isinstance(c, OBJECTIVE_PERTURBATIONS) for c in calibrations):
        raise ValueError(f"calibration must be a record of dplr.calibration or dplr.gaussian, got {calibration!r}.")
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
    target, plan = certified_solve_plan(calibration, n, d, lam, loss, b)
    result = solve_regularized_erm(X, y, lam, loss, b=b, ridge=calibration.ridge, tol=target, check_input=False,
                                   **options)
    return certified_output(X, y, lam, loss, calibration, result.coef, result.grad_norm, b, plan, n_draws, rng)


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
    n, d = X.shape
    B = np.reshape(b, (-1, d))
    certified = certify_release(grad_norm, coef, n, lam + calibration.ridge, loss, calibration.gamma,
                                perturbation_norms=np.linalg.norm(B, axis=1),
                                fallback=lambda failed: fixed_step_descent(X, y, loss, plan, b=B[failed]))
    return certified + calibration.output_mechanism(d).sample(n_draws, check_random_state(random_state))


def grid_laplace_release(value, sensitivity, epsilon, n_draws=None, random_state=None):
    r"""Release a scalar or vector ``value`` of L2 sensitivity :math:`S`, ε-DP as run: :math:`g(\mathrm{round}(v/g) + K)`.

    The hardened counterpart of :func:`dplr.mechanisms.laplace_mechanism`: ``value`` rounded (exactly) to the grid
    :math:`g\mathbb{Z}^d` of :func:`dplr.calibration.grid_laplace_calibration`, plus discrete Laplace indices drawn
    exactly (:class:`dplr.mechanisms.DiscreteLaplace`); the outputs are grid points, exact float64 numbers. Returns
    an array of ``value``'s shape (``n_draws=None``) or ``(n_draws,) + shape``.
    """
    value = np.asarray(value, dtype=float)
    if value.size == 0 or not np.all(np.isfinite(value)):
        raise ValueError(f"value must be a non-empty array of finite numbers, got {value!r}. Fix: release only "
                         f"finite values (clip them to public bounds first).")
    flat = value.reshape(-1)
    mechanism = grid_laplace_calibration(sensitivity, epsilon, flat.size).mechanism()
    released = mechanism.release(flat, n_draws, check_random_state(random_state))
    return released.reshape(value.shape if n_draws is None else (n_draws,) + value.shape)

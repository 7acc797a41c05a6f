r"""The stopping test of a released point, with float64's rounding accounted for.

An output perturbation's noise covers every point :math:`w` with :math:`\lVert\nabla J(w)\rVert \le \tau` (such a
point lies within :math:`\tau/\lambda` of the minimiser: the book's gradient-distance lemma). The solvers decide
that on a gradient computed in float64, whose norm :math:`\hat N` can be *below* the true one. This module bounds by
how much, so that the decision covers the true gradient:

* :func:`~dplr.solver.gradient_rounding_bound` -- :math:`E`, with
  :math:`\lVert\nabla J(w)\rVert \le \hat N/(1-\gamma_{d+1}) + E` (the lemma below);
* :func:`~dplr.solver.certified_gradient_norm` -- that upper bound on the true norm, from a computed norm and the
  point;
* :func:`~dplr.solver.stopping_tolerance` -- the tolerance to solve to so that a solver's stop certifies :math:`\tau`
  (:math:`\tau` minus the bound, taken at a generous a-priori radius of :math:`w`), and a refusal, with the fix,
  of a :math:`\tau` that float64 cannot certify at this :math:`n` and :math:`\lambda`;
* :func:`~dplr.solver.fixed_step_plan` and :func:`~dplr.solver.fixed_step_descent` -- the fallback where a solve is
  not certified: gradient descent from :math:`w_0 = 0` for a number of steps fixed by public quantities, whose
  float64 point is within :math:`\tau/\rho` of the exact minimiser on every data set (the theorem below), so that
  no release depends on whether the fast solver converged.

The output perturbations (:func:`dplr.algorithms.sensitivity_method`,
:func:`~dplr.algorithms.gaussian_output_perturbation`, Algorithm 3's Algorithm 1 in :mod:`dplr.tuning`) and
approximate minima perturbation (:func:`~dplr.algorithms.approximate_minima_perturbation`) solve to
:func:`~dplr.solver.stopping_tolerance` and release the solver's point when its
:func:`~dplr.solver.certified_gradient_norm` is at most their :math:`\tau`, otherwise the fallback's point
(:mod:`dplr.release`).

**The lemma** (the book's ``lem-gradient-rounding``, chapter on Algorithm 1's sensitivity). Let
:math:`J(w) = \frac\rho2\lVert w\rVert^2 + b^\top w/n + \frac1n\sum_{i\le N}\omega_i\,\ell(w^\top u_i)` with signed
rows :math:`u_i = y_i x_i`, :math:`\lVert u_i\rVert \le R`, positive integer counts :math:`\omega_i` summing to
:math:`n` (equal rows folded, or all 1), :math:`|\ell'| \le L` and :math:`\ell'` :math:`c`-Lipschitz, and let the
gradient :math:`\nabla J(w) = \rho w + b/n + \frac1n\sum_i\omega_i\ell'(w^\top u_i)u_i` of a float64 point
:math:`w` with :math:`\lVert w\rVert \le W` be computed as the solvers do: each margin an inner product of length
:math:`d`; :math:`\ell'` at the computed margin within :math:`\kappa u` (the loss's ``derivative_rounding``); each
coordinate of the data term a sum of the :math:`N` products :math:`\omega_i\hat\ell'_i u_{ij}` (at most two
roundings each), divided by :math:`n`; :math:`\rho w_j` and :math:`b_j/n` (one rounding each) and the data term
added in any order, together with at most one zero term; the norm as the square root of a sum of :math:`d`
squares. Summation in any order, blocked or pairwise, with or without fused multiply-adds -- what BLAS and numpy
do. With :math:`u = 2^{-53}`, :math:`\gamma_k = ku/(1-ku)` and no overflow,

.. math::

    \lVert\nabla J(w)\rVert \le \frac{\hat N}{1-\gamma_{d+1}} + E,\qquad
    E = R\,\big(e + \gamma_{N+2}(L + e)\big) + \gamma_4\big(R(L+e)(1+\gamma_{N+2}) + \rho W + \lVert b\rVert/n\big)
        + \eta,\qquad e = \kappa u + c\,\gamma_d R W,

where :math:`\eta = 2^{-1000}(n + d) + 2^{-537}\sqrt d` covers gradual underflow (each underflowing product errs
by at most :math:`2^{-1075}`; squares of a gradient below :math:`2^{-511}` can underflow, which moves the square
root by at most :math:`2^{-537}\sqrt d`). *Proof.* The standard model
:math:`\mathrm{fl}(a \circ b) = (a \circ b)(1+\theta)`, :math:`|\theta| \le u`, and the bound
:math:`|\mathrm{fl}(\sum_{i\le k} a_i) - \sum a_i| \le \gamma_{k-1}\sum|a_i|` for any order of additions
(Higham, *Accuracy and Stability of Numerical Algorithms*, 2002, Lemma 3.1 and Section 4.2).
(i) Margins: :math:`|\hat z_i - z_i| \le \gamma_d|w|^\top|u_i| \le \gamma_d RW`. (ii) Derivatives:
:math:`|\hat\ell'_i - \ell'(z_i)| \le \kappa u + c|\hat z_i - z_i| \le e`, so :math:`|\hat\ell'_i| \le L + e`.
(iii) Data term: each product carries a factor :math:`(1+\theta)(1+\theta')`, the sum :math:`\gamma_{N-1}` and the
division one more rounding; in all, coordinate :math:`j` errs by at most
:math:`\frac1n\sum_i\omega_i|u_{ij}|\,(e + \gamma_{N+2}(L+e))`, and the vector of the
:math:`\frac1n\sum_i\omega_i|u_{ij}|` has norm at most :math:`\frac1n\sum_i\omega_i\lVert u_i\rVert \le R`. Its
computed value has norm at most :math:`R(L+e)(1+\gamma_{N+2})`. (iv) The final sum of at most four terms, two of
them rounded products: componentwise :math:`\gamma_4` times the sum of their sizes, whose norm is at most
:math:`\gamma_4(R(L+e)(1+\gamma_{N+2}) + \rho W + \lVert b\rVert/n)`. (v) The norm: the sum of :math:`d` rounded
squares is at least :math:`(1-\gamma_d)\lVert\hat g\rVert^2`, the square root one more rounding, so
:math:`\lVert\hat g\rVert \le \hat N/(1-\gamma_{d+1})`. The triangle inequality adds (iii) and (iv) to (v). ∎

The one assumption beyond IEEE 754's correctly rounded operations is the loss's ``derivative_rounding``: for the
logistic loss it assumes the platform's ``exp`` errs by at most 253 units in the last place (libm and numpy document
one to four); the Huber loss needs none. The bound is small beside the default :math:`\tau = 10^{-8}`: at
:math:`n = 40{,}000`, :math:`d = 123`, :math:`\lambda = 10^{-4}` and the a-priori radius of
:func:`~dplr.solver.stopping_tolerance` it is below :math:`10^{-10}` for the logistic loss and
:math:`3\cdot10^{-10}` for the Huber loss (:math:`h = 1/2`), and it grows as :math:`1/\lambda`
(``tests/test_stopping.py``).
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from fractions import Fraction

import numpy as np

from dplr.directed_rounding import exact, log_upper, round_down, round_up

__all__ = ["UNIT_ROUNDOFF", "UNDERFLOW_TERM", "gradient_rounding_bound", "certified_gradient_norm",
           "stopping_tolerance", "FixedStepPlan", "fixed_step_plan", "fixed_step_descent"]

#: :math:`u = 2^{-53}`, the unit roundoff of float64 (half its machine epsilon).
UNIT_ROUNDOFF = 2.0 ** -53
#: :math:`2^{-1000}`: per number of rows and coordinates, more than gradual underflow can add to a gradient (the
#: lemma's :math:`\eta` adds :math:`2^{-537}\sqrt d` for underflowing squares in the norm).
UNDERFLOW_TERM = 2.0 ** -1000


def _gamma(k):
    r""":math:`\gamma_k = ku/(1-ku)`, Higham's bound on the relative error of k roundings."""
    ku = k * UNIT_ROUNDOFF
    if not ku < 0.5:
        raise ValueError(f"{k} roundings are beyond float64's error analysis (k u must stay below 1/2).")
    return ku / (1.0 - ku)


def gradient_rounding_bound(n, d, reg, loss, coef_norm, perturbation_norm=0.0, row_norm=1.0) -> float:
    r""":math:`E` of the module's lemma: how far the float64 gradient of
    :math:`J(w) = \frac{\rho}{2}\lVert w\rVert^2 + b^\top w/n + \frac1n\sum_i\ell(y_iw^\top x_i)` can be from the
    true one, for :math:`\lVert w\rVert \le` ``coef_norm`` (:math:`W`), :math:`\rho =` ``reg``,
    :math:`\lVert b\rVert =` ``perturbation_norm`` and rows of norm at most ``row_norm`` (:math:`R`); ``n``
    records (counted with their multiplicity when equal rows are folded), ``d`` coordinates, ``loss`` a loss object
    (its ``lipschitz``, ``curvature`` and ``derivative_rounding``). Data-independent given its arguments, which
    are bounds on the true norms (:func:`~dplr.solver.certified_gradient_norm` and
    :func:`~dplr.solver.stopping_tolerance` take computed ones and make them bounds)."""
    u = UNIT_ROUNDOFF
    L, c, kappa = float(loss.lipschitz), float(loss.curvature), float(loss.derivative_rounding)
    R, W = float(row_norm), float(coef_norm)
    e = kappa * u + c * _gamma(d) * R * W
    data = R * (e + _gamma(n + 2) * (L + e))
    final = _gamma(4) * (R * (L + e) * (1.0 + _gamma(n + 2)) + float(reg) * W + float(perturbation_norm) / n)
    return float(data + final + UNDERFLOW_TERM * (n + d) + 2.0 ** -537 * np.sqrt(d))


def _upper(computed, d):
    """An upper bound on a true norm from its float64 computation as the square root of a sum of ``d`` squares."""
    return float(computed) / (1.0 - _gamma(d + 1))


def certified_gradient_norm(computed_norm, coef, n, reg, loss, perturbation_norm=0.0, row_norm=1.0) -> float:
    r"""An upper bound on the true :math:`\lVert\nabla J(w)\rVert` at the float64 point ``coef`` (:math:`w`), from
    the solver's computed norm :math:`\hat N` (``computed_norm``): :math:`\hat N/(1-\gamma_{d+1}) + E`, with
    :math:`E` from :func:`~dplr.solver.gradient_rounding_bound` at
    :math:`W = \mathrm{fl}(\lVert w\rVert)/(1-\gamma_{d+1})` (the computed norm of ``coef``, made an upper bound).
    ``perturbation_norm`` (:math:`\lVert b\rVert`) and ``row_norm`` (:math:`R`) are computed norms, made upper bounds
    the same way (the data checks bound the rows' true norms, :func:`dplr.ball.rows_outside_ball`, so for rows
    this is only generous); other arguments as there. A NaN or infinite computed norm gives ``inf``."""
    coef = np.asarray(coef, dtype=float).reshape(-1)
    d = coef.size
    if not np.isfinite(float(computed_norm)):
        return float("inf")
    W, b_norm, R = _upper(np.linalg.norm(coef), d), _upper(perturbation_norm, d), _upper(row_norm, d)
    return _upper(computed_norm, d) + gradient_rounding_bound(n, d, reg, loss, W, b_norm, R)


def stopping_tolerance(tol, n, d, reg, loss, perturbation_norm=0.0, row_norm=1.0, name="tol") -> float:
    r"""The gradient-norm tolerance to solve to so that a point the solver stops at passes
    :func:`~dplr.solver.certified_gradient_norm` :math:`\le` ``tol``: :math:`(\tau - E)(1-\gamma_{d+1})`, with
    :math:`E` from :func:`~dplr.solver.gradient_rounding_bound` at twice the radius
    :math:`(RL + \lVert b\rVert/n + \tau)/\rho` within which every point of true gradient norm :math:`\le\tau`
    lies (strong convexity). The a-priori radius only sets the target; the certificate afterwards uses the point's
    own norm. ``perturbation_norm`` and ``row_norm`` are computed norms, as there. Raises ``ValueError`` when
    :math:`E` exceeds half of ``tol`` -- float64 cannot certify that tolerance at this ``n`` and ``reg`` -- naming
    the parameter as the caller calls it (``name``), the smallest value that works and whether a larger λ helps."""
    L = float(loss.lipschitz)
    b_norm, R = _upper(perturbation_norm, d), _upper(row_norm, d)
    radius = 2.0 * (R * L + b_norm / n + tol) / float(reg)
    bound = gradient_rounding_bound(n, d, reg, loss, radius, b_norm, R)
    if not bound <= 0.5 * tol:
        floor = gradient_rounding_bound(n, d, reg, loss, 0.0, b_norm, R)  # what no lambda removes (W -> 0)
        fix = (f"a larger {name} (at least {2 * bound:.3g}) or a larger lam" if 2 * floor < tol else
               f"a larger {name}, at least {2 * bound:.3g}: at n = {n} records the rounding of the sums alone "
               f"exceeds half of {name}, whatever lam")
        raise ValueError(f"{name} = {tol!r} is too small for float64 here: a computed gradient norm can be below the "
                         f"true one by up to {bound:.3g} (n = {n}, d = {d}, lam + Delta = {float(reg)!r}; "
                         f"dplr.solver.stopping), so a stop at {name} could not be certified. Fix: {fix}.")
    return (tol - bound) * (1.0 - _gamma(d + 1))


@dataclass(frozen=True)
class FixedStepPlan:
    r"""The fallback's public schedule (:func:`fixed_step_plan`): ``steps`` (:math:`K`) steps of size ``step``
    (:math:`\eta`, a float64 :math:`\le 1/(\rho + cR^2)`) on the objective with regulariser ``reg``
    (:math:`\rho`); its point is within ``distance`` (:math:`\tau/\rho`) of the exact minimiser. ``start_distance``
    (:math:`D_0`) bounds :math:`\lVert w^*\rVert`, ``step_error`` (:math:`\xi`) the rounding of one step."""
    steps: int
    step: float
    reg: float
    distance: float
    start_distance: float
    step_error: float


def fixed_step_plan(tol, n, d, reg, loss, perturbation_norm=0.0, row_norm=1.0, name="tol") -> FixedStepPlan:
    r"""The number of gradient steps after which :func:`fixed_step_descent`'s float64 point is within
    :math:`t = \tau/\rho` of the exact minimiser :math:`w^*` of
    :math:`J(w) = \frac\rho2\lVert w\rVert^2 + b^\top w/n + \frac1n\sum_i\ell(y_iw^\top x_i)` on *every* data set
    of ``n`` records of norm at most :math:`R` (``row_norm``) and labels :math:`\pm1`. Its arguments are public:
    ``tol`` (:math:`\tau`), ``n``, ``d``, ``reg`` (:math:`\rho = \lambda + \Delta`), the loss's constants,
    :math:`\lVert b\rVert` (``perturbation_norm``, noise drawn independently of the data; a computed norm made an
    upper bound, as ``row_norm``).

    **Theorem** (the book's ``thm-fixed-steps``). Let :math:`M = \rho + cR^2`, :math:`\eta \le 1/M`,
    :math:`x = \eta\rho`, :math:`D_0 = (RL + \lVert b\rVert/n)/\rho`, :math:`W = 2(RL + \lVert b\rVert/n + \tau)/\rho`,
    :math:`E` the rounding bound of :func:`gradient_rounding_bound` at :math:`W`, and
    :math:`\xi = \eta E + u(2+u)(D_0 + t + \eta E) + uW`. If :math:`\xi/x \le \frac34t`
    and :math:`K \ge \log(D_0/(t - \xi/x))/x`, the float64 iterates
    :math:`\hat w_{k+1} = \mathrm{fl}(\hat w_k - \mathrm{fl}(\eta\,\hat g(\hat w_k)))` from :math:`\hat w_0 = 0`
    satisfy :math:`\lVert\hat w_K - w^*\rVert \le t`. *Proof.* Write :math:`J = \frac\rho2\lVert w\rVert^2 + h`,
    :math:`h` convex with :math:`cR^2`-Lipschitz gradient. The exact step
    :math:`T(w) = (1-\eta\rho)\big(w - \tfrac{\eta}{1-\eta\rho}\nabla h(w)\big) - \eta b/n` is
    :math:`(1-x)`-Lipschitz: :math:`\eta/(1-\eta\rho) \le 1/(cR^2)`, and a gradient step of size at most
    :math:`2/(cR^2)` on :math:`h` is nonexpansive (Baillon-Haddad; Nesterov, *Lectures on Convex Optimization*,
    2018, Theorem 2.1.5); :math:`T(w^*) = w^*`. The computed step errs from :math:`T(\hat w_k)` by at most
    :math:`\eta\lVert\hat g - \nabla J\rVert \le \eta E` (the lemma's vector bound, before its step (v)) plus the
    update's two roundings per coordinate, :math:`u(2+u)\eta\lVert\hat g\rVert + u\lVert\hat w_k\rVert`, with
    :math:`\eta\lVert\hat g\rVert \le \eta(M\lVert\hat w_k - w^*\rVert + E)`. By induction
    :math:`e_k = \lVert\hat w_k - w^*\rVert \le (1-x)^kD_0 + \xi/x \le D_0 + t`, so
    :math:`\lVert\hat w_k\rVert \le 2D_0 + t \le W` (the lemma applies) and each step errs by at most
    :math:`\xi`; then :math:`e_{k+1} \le (1-x)e_k + \xi`, and
    :math:`e_K \le e^{-xK}D_0 + \xi/x \le t`. ∎

    The plan computes :math:`M`, :math:`\eta`, :math:`x`, :math:`\xi` and :math:`K` in exact rationals
    (``directed_rounding``: :math:`\eta` rounded down, the logarithm up). Raises ``ValueError`` -- a refusal that
    depends on public quantities only, made before the data are read -- when
    :math:`\xi/x > \frac34t`: float64's rounding is too large for ``tol`` at this ``n``, ``d`` and
    :math:`\rho`."""
    u = Fraction(UNIT_ROUNDOFF)
    L, c = exact(float(loss.lipschitz)), exact(float(loss.curvature))
    b_norm, R = exact(_upper(perturbation_norm, d)), exact(_upper(row_norm, d))
    rho, tau = exact(float(reg)), exact(float(tol))
    distance = tau / rho
    step = round_down(1 / (rho + c * R * R))
    eta = exact(step)
    x = eta * rho
    start = (R * L + b_norm / n) / rho
    W = 2 * (R * L + b_norm / n + tau) / rho
    E = exact(gradient_rounding_bound(n, d, float(reg), loss, round_up(W), float(b_norm), float(R)))
    error = eta * E + u * (2 + u) * (start + distance + eta * E) + u * W
    if not error / x <= Fraction(3, 4) * distance:
        raise ValueError(f"{name} = {float(tol)!r} is too small for float64's gradient descent here: each step can err "
                         f"by {float(error):.3g}, which accumulates to {float(error / x):.3g} > 3/4 of {name}/(lam + "
                         f"Delta) = {float(distance):.3g} (n = {n}, d = {d}, lam + Delta = {float(reg)!r}; "
                         f"dplr.solver.fixed_step_plan). This refusal depends only on public quantities, not on the "
                         f"data. Fix: a larger {name} or a larger lam.")
    slack = distance - error / x
    steps = 0 if start <= slack else math.ceil(log_upper(start / slack) / x)
    return FixedStepPlan(int(steps), step, float(reg), float(distance), round_up(start), round_up(error))


def fixed_step_descent(X, y, loss, plan, b=None) -> np.ndarray:
    r"""The fallback's point: ``plan.steps`` steps of gradient descent of size ``plan.step`` from :math:`w_0 = 0`
    on :math:`J(w) = \frac\rho2\lVert w\rVert^2 + b^\top w/n + \frac1n\sum_i\ell(y_iw^\top x_i)`
    (:math:`\rho` = ``plan.reg``), each gradient computed as :func:`gradient_rounding_bound`'s lemma assumes (margins
    as inner products, the data term one matrix product divided by :math:`n`, three terms added). ``b``: ``None``,
    one perturbation ``(d,)`` or ``k`` of them ``(k, d)``, solved together (the result's shape follows ``b``'s). Within
    ``plan.distance`` of the exact minimiser on every data set (:func:`fixed_step_plan`). Cost: ``plan.steps``
    passes of two matrix products over ``X``, whatever the data."""
    X = np.asarray(X, dtype=float)
    y = np.asarray(y, dtype=float)
    n, d = X.shape
    single = b is None or np.ndim(b) == 1
    B = np.zeros((1, d)) if b is None else np.reshape(np.asarray(b, dtype=float), (-1, d))
    offset = B / n
    W = np.zeros_like(B)
    for _ in range(plan.steps):
        margins = (W @ X.T) * y  # y_i (w^T x_i): the sign flip is exact
        first = loss.derivative(margins) * y
        gradient = plan.reg * W + offset + (first @ X) / n
        W = W - plan.step * gradient
    return W[0] if single else W

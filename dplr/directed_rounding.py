r"""Rounding in the safe direction: float64 numbers that bound an exact real from above or from below.

A privacy calibration is a real number -- a sensitivity, a noise scale, a budget :math:`\varepsilon'`, a ridge
:math:`\Delta` -- that the proof needs on one side of a bound: the sensitivity and the noise scale no smaller than the
formula, the noise rate and :math:`\varepsilon'` no larger, :math:`\Delta` no smaller. Computed in float64 with
round-to-nearest, each lands on either side of its exact value by up to half an ulp, and half the time on the wrong
one. The calibrations in :mod:`dplr.calibration` therefore compute their formulas exactly and round them in the
safe direction here:

* rational steps (sums, products, quotients of float64 inputs) in exact arithmetic (``fractions.Fraction``:
  every float64 is a rational, converted exactly), then :func:`round_up` / :func:`round_down` to the nearest float64
  on the safe side -- the result is the smallest float64 :math:`\ge x` (largest :math:`\le x`);
* :math:`\log(1+x)`, :math:`\log x`, :math:`e^x - 1` and :math:`\sqrt x` by bounds: their Taylor series, truncated after a term of the right sign, for
  :math:`x < 10^{-5}` (the series alternates for :math:`\log(1+x)`, so a partial sum ending on a positive term is an
  upper bound; all its terms are positive for :math:`e^x - 1`, so any partial sum is a lower bound); above, Python's
  ``decimal`` at :data:`DIGITS` significant digits (its ``ln``, ``exp`` and ``sqrt`` are correctly rounded, so within half
  a unit in the last of those digits) widened by a relative :data:`MARGIN` far above that error -- the bound then
  errs by at most one float64 ulp in the safe direction, never in the other.

What this does not cover: the arithmetic of the noise samplers and of the solver (float64, round-to-nearest), which
the book treats in its chapter on floating point.
"""
from __future__ import annotations

import decimal
import math
import numbers
import sys
from fractions import Fraction

__all__ = ["DIGITS", "MARGIN", "exact", "round_up", "round_down", "addend_up", "log1p_upper", "log1p_lower",
           "log_upper",
           "expm1_lower", "sqrt_upper"]

#: Significant digits of the decimal arithmetic behind :func:`log1p_upper` and :func:`expm1_lower`.
DIGITS = 60
#: The relative widening of a decimal result, far above its rounding error (at most :math:`5\cdot10^{-60}`,
#: relative).
MARGIN = Fraction(1, 10**50)
#: Below this argument the bounds use a truncated Taylor series (exact rationals).
_SERIES_BELOW = Fraction(1, 10**5)
#: The series' last degree (odd: its term is positive).
_SERIES_DEGREE = 11
#: Larger arguments of :func:`expm1_lower` are bounded at this one (e^1000 is far beyond float64).
_EXP_CAP = Fraction(1000)


def exact(value) -> Fraction:
    """The exact rational value of a float64, an int, a ``decimal.Decimal`` or a ``fractions.Fraction``."""
    if isinstance(value, Fraction):
        return value
    if isinstance(value, numbers.Integral):  # numpy's integers too
        return Fraction(int(value))
    if isinstance(value, numbers.Real) and not isinstance(value, decimal.Decimal):  # float, numpy's floats
        value = float(value)
        if not math.isfinite(value):
            raise ValueError(f"an exact value needs a finite number, got {value!r}.")
    return Fraction(value)


def round_up(x) -> float:
    r"""The smallest float64 :math:`\ge x` (``inf`` above the largest finite float64, the most negative finite float64
    below it)."""
    x = exact(x)
    try:
        f = float(x)  # int / int true division: correctly rounded to nearest
    except OverflowError:
        return math.inf if x > 0 else -sys.float_info.max
    if math.isfinite(f) and Fraction(f) < x:
        f = math.nextafter(f, math.inf)
    return f


def round_down(x) -> float:
    r"""The largest float64 :math:`\le x` (``-inf`` below the most negative finite float64, the largest finite float64
    above it)."""
    return -round_up(-exact(x))


def addend_up(target, base) -> float:
    r"""A float64 :math:`a \ge 0` with :math:`\mathrm{base} + a \ge x` both exactly and *as float64 adds them*:
    :math:`\mathrm{fl}(\mathrm{base} + a) \ge x` (``target`` :math:`x`; ``0.0`` when ``base`` :math:`\ge x` already).

    :func:`round_up` of :math:`x - \mathrm{base}` is not enough when the sum is what is used: round-to-nearest can put
    :math:`\mathrm{fl}(\mathrm{base} + a)` up to half an ulp below the exact sum, hence below :math:`x`. The result is
    the first float64 from :func:`round_up` (:math:`x - \mathrm{base}`) upward (``math.nextafter``) whose float64 sum
    with ``base`` is at least :math:`x` -- within a few ulps of the exact difference. Used for objective
    perturbation's ridge :math:`\Delta`, whose proofs need :math:`\lambda + \Delta` at least a bound and whose solver
    minimises with :math:`\mathrm{fl}(\lambda + \Delta)` (``reg = lam + ridge`` in :mod:`dplr.solver`).
    """
    target, base_value = exact(target), float(base)
    if exact(base_value) >= target:
        return 0.0
    addend = round_up(target - exact(base_value))
    while math.isfinite(addend) and exact(base_value + addend) < target:  # Python's float + is float64's
        addend = math.nextafter(addend, math.inf)
    return addend


def _at_least(x, floor, name) -> Fraction:
    """``x`` as an exact rational, or ValueError when it is below ``floor`` (the bound's domain)."""
    x = exact(x)
    if x < floor:
        raise ValueError(f"{name} needs x >= {floor}, got {float(x)!r}.")
    return x


def _decimal(x: Fraction, rounding) -> decimal.Decimal:
    context = decimal.Context(prec=DIGITS, rounding=rounding)
    return context.divide(decimal.Decimal(x.numerator), decimal.Decimal(x.denominator))


def _log1p_bound(x, upper, name) -> Fraction:
    """:func:`log1p_upper` (``upper``) or :func:`log1p_lower`: one computation, rounded in the direction asked."""
    x = _at_least(x, 0, name)
    if x == 0:
        return Fraction(0)
    if x < _SERIES_BELOW:
        # the alternating series with decreasing terms: stopped after a positive term (odd degree) it bounds the
        # logarithm above, after a negative one (even degree) below; the first term left out is below 10^-55 x
        return sum((-1) ** (k + 1) * x**k / k for k in range(1, _SERIES_DEGREE + (1 if upper else 2)))
    # ln is increasing: round 1 + x up for an upper bound, down for a lower one (1 + x >= 1 + 1e-5 keeps 55 digits)
    one_plus = _decimal(1 + x, decimal.ROUND_CEILING if upper else decimal.ROUND_FLOOR)
    value = Fraction(one_plus.ln(decimal.Context(prec=DIGITS)))
    return value * (1 + MARGIN if upper else 1 - MARGIN)


def log1p_upper(x) -> Fraction:
    r"""A rational :math:`\ge \log(1 + x)`, for :math:`x \ge 0`, within a relative :math:`10^{-49}` of it."""
    return _log1p_bound(x, True, "log1p_upper")


def log1p_lower(x) -> Fraction:
    r"""A rational :math:`\le \log(1 + x)`, for :math:`x \ge 0`, within a relative :math:`10^{-49}` of it."""
    return _log1p_bound(x, False, "log1p_lower")


def expm1_lower(x) -> Fraction:
    r"""A rational :math:`\le e^x - 1`, for :math:`x \ge 0`, within a relative :math:`10^{-49}` of it."""
    x = _at_least(x, 0, "expm1_lower")
    if x < _SERIES_BELOW:
        # every term of the series is positive, so any partial sum bounds it below; the rest is below 10^-55 x
        return sum(x**k / math.factorial(k) for k in range(1, _SERIES_DEGREE + 1))
    x = min(x, _EXP_CAP)  # e^x - 1 is increasing: a bound at the cap bounds every larger x below
    argument = _decimal(x, decimal.ROUND_FLOOR)  # <= x; exp is increasing
    value = Fraction(argument.exp(decimal.Context(prec=DIGITS))) - 1  # e^x >= e^1e-5: e^x - 1 keeps 55 digits
    return value * (1 - MARGIN)


def log_upper(x) -> Fraction:
    r"""A rational :math:`\ge \log x`, for :math:`x \ge 1` (:func:`log1p_upper` of :math:`x - 1`)."""
    x = _at_least(x, 1, "log_upper")
    return log1p_upper(x - 1)


def sqrt_upper(x) -> Fraction:
    r"""A rational :math:`\ge \sqrt x`, for :math:`x \ge 0`, within a relative :math:`10^{-49}` of it."""
    x = _at_least(x, 0, "sqrt_upper")
    if x == 0:
        return Fraction(0)
    root = _decimal(x, decimal.ROUND_CEILING).sqrt(decimal.Context(prec=DIGITS))  # sqrt is increasing
    return Fraction(root) * (1 + MARGIN)

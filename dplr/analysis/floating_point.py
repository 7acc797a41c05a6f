r"""Floating point, attacked and defended: Mironov's support test and his snapping mechanism (scalar case).

Mironov (CCS 2012, "On significance of the least significant bits for differential privacy") showed that a
textbook floating-point Laplace sampler, :math:`o = v - b\,\mathrm{sign}(u)\log(1 - 2|u|)` with :math:`u` a
53-bit uniform, reaches only some doubles, and which ones depends on :math:`v`: an output that one input can
produce and its neighbour cannot identifies the input with certainty (a privacy loss of :math:`\infty`).

:func:`textbook_laplace` is that sampler, with :math:`u = k 2^{-53} - 1/2`, :math:`k` uniform on
:math:`\{0, \dots, 2^{53} - 1\}` (every operation exact except ``1 - 2|u|`` (exact too: a multiple of
:math:`2^{-52}` in :math:`[0, 1]`), ``log``, the product and the sum). :func:`textbook_support` decides, exactly,
whether an output :math:`o` is reachable from input :math:`v`: for each sign, the sampler's output is a
non-decreasing function of :math:`j = |k - 2^{52}|` (``1 - 2|u|`` decreases, ``log`` is monotone — an
assumption on the platform's libm, true of every correctly- or faithfully-rounded monotone implementation —,
multiplication by :math:`-b < 0` and adding :math:`v` are monotone under round-to-nearest), so bisection over the
:math:`2^{52} + 1` integers finds the least :math:`j` whose output is :math:`\ge o`; :math:`o` is reachable iff that
:math:`j` maps to :math:`o` exactly. A reachable output is certified by the exhibited :math:`j`; an unreachable
one by the monotonicity argument (every :math:`j` below maps below :math:`o`, every :math:`j` from it on maps above).

:func:`distinguishing_rate` samples outputs of :math:`M(v_0)` and counts those :math:`M(v_1)` cannot produce, with
a Clopper–Pearson 95% interval.

:func:`snapping_mechanism` is Mironov's defence (2012, Section 5.2): clamp :math:`f(D)` to :math:`[-B, B]`, add
Laplace noise of scale :math:`\lambda` computed from a 53-bit uniform, round to the nearest multiple of
:math:`\Lambda`, the smallest power of two :math:`\ge\lambda`, clamp to :math:`[-B, B]`. Its outputs lie on the grid
:math:`\Lambda\mathbb{Z}`, where the support test has nothing to find. Its privacy guarantee is Mironov's
(2012, Section 5.2, Theorem 1), which this module does not restate.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy import stats

from dplr.validation import check_positive_finite, check_random_state

__all__ = [
    "textbook_laplace",
    "textbook_support",
    "DistinguishingRate",
    "distinguishing_rate",
    "snapping_mechanism",
]

_HALF = 2 ** 52  # |k - 2^52| ranges over 0 .. 2^52


def _textbook_from_j(value, scale, j, sign):
    """The textbook sampler's output for |u| = j 2^-53 and sign(u) = sign (arrays of int64 j)."""
    one_minus = 1.0 - j.astype(np.float64) * 2.0 ** -52  # exact: j < 2^53
    with np.errstate(divide="ignore"):
        noise = -scale * sign * np.log(one_minus)
    return value + noise


def textbook_laplace(value, scale, size=None, random_state=None):
    r"""Mironov's textbook Laplace sampler: :math:`v - b\,\mathrm{sign}(u)\log(1 - 2|u|)`, :math:`u = k2^{-53} - 1/2`.

    ``k`` is a 53-bit integer (``rng.integers(0, 2**53)``); :math:`k = 0` (:math:`|u| = 1/2`) gives an infinite
    output, which is returned as such (probability :math:`2^{-53}`).
    """
    value = float(np.asarray(value, dtype=float))
    if not np.isfinite(value):
        raise ValueError(f"value must be finite, got {value!r}.")
    scale = check_positive_finite(scale, "scale")
    n = 1 if size is None else size
    if isinstance(n, bool) or not isinstance(n, (int, np.integer)) or n < 0:
        raise ValueError(f"size must be None or a non-negative integer, got {size!r}.")
    k = check_random_state(random_state).integers(0, 2 ** 53, size=n, dtype=np.int64)
    d = k - _HALF
    out = _textbook_from_j(value, scale, np.abs(d), np.sign(d).astype(np.float64))
    return out[0] if size is None else out


def textbook_support(outputs, value, scale):
    r"""Whether each output can be produced by :func:`textbook_laplace` from ``value`` (exact; see the module doc).

    Returns ``(reachable, j, sign)``: a boolean array and, where reachable, the certifying :math:`|u|2^{53}` and
    sign of :math:`u` (a state that maps to the output exactly; -1 where unreachable).
    """
    o = np.atleast_1d(np.asarray(outputs, dtype=float))
    if not np.all(np.isfinite(o)):
        raise ValueError("outputs must be finite.")
    value = float(np.asarray(value, dtype=float))
    if not np.isfinite(value):
        raise ValueError(f"value must be finite, got {value!r}.")
    scale = check_positive_finite(scale, "scale")
    reachable = np.zeros(o.shape, dtype=bool)
    cert_j = np.full(o.shape, -1, dtype=np.int64)
    cert_s = np.zeros(o.shape)
    for sign in (1.0, -1.0):
        # output is non-decreasing in j for sign +1; non-increasing for sign -1: search on sign * output.
        target = sign * o
        lo = np.zeros(o.shape, dtype=np.int64)  # least j with sign*out(j) >= target lies in [lo, hi]
        hi = np.full(o.shape, _HALF, dtype=np.int64)
        for _ in range(60):
            active = lo < hi
            if not active.any():
                break
            mid = (lo + hi) // 2
            ge = sign * _textbook_from_j(value, scale, mid, sign) >= target
            hi = np.where(active & ge, mid, hi)
            lo = np.where(active & ~ge, mid + 1, lo)
        hit = _textbook_from_j(value, scale, lo, sign) == o
        new = hit & ~reachable
        cert_j[new], cert_s[new] = lo[new], sign
        reachable |= hit
    return reachable, cert_j, cert_s


@dataclass(frozen=True)
class DistinguishingRate:
    """Outputs of M(v0) that M(v1) cannot produce: count, sample size, rate and Clopper–Pearson interval."""

    count: int
    n: int
    rate: float
    low: float
    high: float


def distinguishing_rate(sampler, support, v0, v1, n, random_state=None, confidence=0.95):
    r"""Sample ``n`` outputs ``sampler(v0, n, rng)`` and count those with ``support(outputs, v1)`` False.

    Returns a :class:`DistinguishingRate` with the exact (Clopper–Pearson) interval: a count of 0 bounds the rate
    from above, it does not show it is 0.
    """
    if isinstance(n, bool) or not isinstance(n, (int, np.integer)) or n < 1:
        raise ValueError(f"n must be a positive integer, got {n!r}.")
    outputs = sampler(v0, n, check_random_state(random_state))
    outputs = outputs[np.isfinite(outputs)]
    own = support(outputs, v0)
    if not np.all(own):
        raise AssertionError("a sampled output is not reachable from its own input: the support test is wrong.")
    count = int(np.sum(~support(outputs, v1)))
    ci = stats.binomtest(count, outputs.size).proportion_ci(confidence_level=confidence, method="exact")
    return DistinguishingRate(count, int(outputs.size), count / outputs.size, float(ci.low), float(ci.high))


def snapping_mechanism(value, sensitivity, epsilon, bound, random_state=None):
    r"""Mironov's snapping mechanism (2012, Section 5.2), scalar case.

    .. math::

        \mathrm{clamp}_B\big(\lfloor \mathrm{clamp}_B(f(D)) \oplus S \otimes \lambda \otimes \ln U^* \rceil_\Lambda\big),
        \qquad \lambda = S_f/\varepsilon,

    with :math:`S = \pm 1` a fair sign, :math:`U^* = (k + 1)2^{-53}`, :math:`k` a 53-bit integer (a uniform
    double in :math:`(0, 1]`), :math:`\Lambda` the smallest power of two :math:`\ge \lambda`,
    :math:`\lfloor\cdot\rceil_\Lambda` rounding to the nearest multiple of :math:`\Lambda` (exact: division by a
    power of two), :math:`\oplus, \otimes` float64 operations. Requires :math:`\lambda < B < 2^{46}\lambda`
    (the range of Mironov's theorem). Outputs lie on :math:`\Lambda\mathbb{Z} \cap [-B, B]`.
    """
    sensitivity = check_positive_finite(sensitivity, "sensitivity")
    epsilon = check_positive_finite(epsilon, "epsilon")
    bound = check_positive_finite(bound, "bound")
    value = float(np.asarray(value, dtype=float))
    if not np.isfinite(value):
        raise ValueError(f"value must be finite, got {value!r}.")
    lam = sensitivity / epsilon
    if not lam < bound < 2.0 ** 46 * lam:
        raise ValueError(f"need lambda < bound < 2^46 lambda; lambda = {lam!r}, bound = {bound!r}.")
    grid = 2.0 ** int(np.ceil(np.log2(lam)))
    if grid < lam:
        grid *= 2.0
    while grid / 2.0 >= lam:
        grid /= 2.0
    rng = check_random_state(random_state)
    k = rng.integers(0, 2 ** 53, dtype=np.int64)
    sign = 1.0 if rng.integers(0, 2) else -1.0
    u = (float(k) + 1.0) * 2.0 ** -53
    x = min(max(value, -bound), bound) + sign * lam * np.log(u)
    snapped = np.round(x / grid) * grid
    return float(min(max(snapped, -bound), bound))

r"""The unit ball: rows beyond rounding refused, rows brought inside it, and the norms decided exactly for the tests.

NIPS 2008, Section 2 assumes every record has ``||x_i|| <= 1``; the privacy proofs are void without it, for the float64
entries as the real numbers they are. This module refuses rows outside by more than rounding
(:func:`refuse_rows_outside_ball`), brings rows into the ball (:func:`project_onto_ball`), composes the two for the
algorithms' input check (:func:`check_rows_in_ball`), and decides the norms exactly (:func:`rows_outside_ball`: the
tests' oracle, and the code that must know a row's side of the sphere).

The checks' rule, one vectorised pass (``_rule`` proves it): each row's sum of squares computed in float64 in any
order, :math:`\hat s`, is within :math:`\gamma_d S + d\,2^{-1073}` of the true one :math:`S` (Higham, *Accuracy and
Stability of Numerical Algorithms*, 2002, Sections 3.1 and 4.2). A row whose :math:`\hat s` proves it inside is left
bit for bit; one whose :math:`\hat s` proves it beyond the refusal's tolerance is refused; every other row -- after
``sklearn.preprocessing.Normalizer`` that is every row -- is scaled to the sphere by :math:`r / \sqrt{\hat s}` and
shrunk by :math:`1 - ku`, :math:`k \approx 1.5d + 5` units of roundoff, which provably lands it inside the ball exactly
*and* past the first screen, so that checking the result again changes nothing. Rows within :math:`\gamma_d` of the
sphere inside it move by that shrink too (about :math:`10^{-14}` relative for :math:`d = 50`): the price of deciding
without exact arithmetic. NaN and infinite entries are found in the same pass (``_sums_of_squares``).

The exact test (:func:`rows_outside_ball`): the same screen, then a vectorised compensated sum with a proven error
bound (``_near_signs``) for the rows near the sphere, which leaves open only rows within about :math:`10^{-20}`
(relative) of it; those are decided by error-free transformations and, failing them, by exact fractions
(``_exact_excess_sign``).

(Over 400 lines: the exact test and its proofs belong beside the checks whose oracle it is.)
"""
from __future__ import annotations

import functools
import math
import numbers
from fractions import Fraction
from typing import NamedTuple

import numpy as np

__all__ = [
    "check_rows_in_ball",
    "check_rows_in_ball_exactly",
    "refuse_rows_outside_ball",
    "project_onto_ball",
    "rows_outside_ball",
    "uniform_in_ball",
    "CHUNK_ROWS",
    "NORM_FIX",
    "ROUNDING_ULPS",
]


def _positive_radius(radius) -> float:
    """``float(radius)`` if it is a finite number > 0, else ``ValueError`` (the message of
    ``dplr.validation.check_positive_finite``, which imports this module and so cannot be imported here)."""
    if isinstance(radius, bool) or not isinstance(radius, numbers.Real) or not (np.isfinite(float(radius))
                                                                                and float(radius) > 0):
        raise ValueError(f"radius must be a positive finite number, got {radius!r}.")
    return float(radius)


#: A row may exceed the bound by this many units of roundoff (machine epsilons) of its input dtype and still be
#: accepted -- then projected onto the ball in float64 (:func:`check_rows_in_ball`).
ROUNDING_ULPS = 4

#: The advice appended to the error for rows outside the unit ball -- how to bring features into it.
NORM_FIX = (
    "Fix: bring the features into the ball with bounds that do not come from the data: centre and scale each "
    "feature by public bounds (dplr.preprocessing.scale_by_public_bounds(X, bounds, centre=...) maps it into "
    "[-1, 1]), divide by sqrt(n_features) or project with dplr.preprocessing.clip_to_unit_ball, and append a "
    "constant public feature if the model needs an offset (the separator passes through the origin). "
    "norm_bound=R, a public bound on ||x_i||, only rescales: on raw, uncentred features it gives a poor model."
)


#: :math:`u = 2^{-53}`, float64's unit roundoff.
_U = 2.0 ** -53
#: Entries smaller than this (and not 0), radii outside ``[_TINY, 1/_TINY]``: the exact test takes Python's
#: fractions (their squares could underflow, or the split of an entry overflow).
_TINY = 2.0 ** -400
#: Veltkamp's splitter for float64: ``x = hi + lo`` with ``hi`` and ``lo`` of at most 26 significant bits each.
_SPLITTER = 2.0 ** 27 + 1.0


def _gamma(k):
    return k * _U / (1.0 - k * _U)


def _split(x):
    """``(hi, lo)`` with ``x = hi + lo`` exactly and ``hi``, ``lo`` of at most 26 significant bits (Veltkamp)."""
    t = _SPLITTER * x
    hi = t - (t - x)
    return hi, x - hi


def _exact_excess_sign(rows, radius):
    r"""For rows of norm close to ``radius``: the sign of :math:`E = \sum_j x_j^2 - r^2` for the entries as real
    numbers.

    Each square is split exactly, :math:`x^2 = h + (m + l)` with :math:`h = \mathrm{hi}^2`, :math:`m = 2\,\mathrm{hi}
    \,\mathrm{lo}`, :math:`l = \mathrm{lo}^2` (Veltkamp's split :math:`x = \mathrm{hi} + \mathrm{lo}` into halves of at
    most 26 bits: no product rounds), :math:`r^2` likewise. The :math:`K` large terms :math:`b` (the :math:`h` and
    :math:`-r_h^2`) are added by TwoSum, whose errors :math:`q` are exact (Ogita, Rump & Oishi, *Accurate sum and dot
    product*, SIAM J. Sci. Comput. 26, 2005, Algorithm 4.4), giving :math:`p` with :math:`p + \sum q = \sum b`; the
    :math:`q` and the :math:`M` small terms :math:`c` (the two of an entry together at most
    :math:`(2^{-25} + 2^{-52})` times its large one; :math:`-r^2`'s small part rounded once, which the count
    :math:`K + M` covers) are summed in plain float64 into :math:`\sigma`, and the result is
    :math:`\mathrm{fl}(p + \sigma)`. With :math:`|q| \le u(1+\gamma_K)\sum|b|`, the sum of the :math:`K + M` numbers
    errs by at most :math:`\gamma_{K+M}(Ku(1+\gamma_K) + 2^{-25} + 2^{-52})\sum|b|` (Higham, 2002, Section 4.2), and
    the last addition by :math:`u|E|` more: a result beyond twice that bound has the sign of :math:`E` (the factor two
    also covers the rounding of the bound and of the computed :math:`\sum|b|`), and where nothing rounded (no
    :math:`q`, no small term: a row exactly on the sphere, such as a one-hot row) the result *is* :math:`E`. Rows it
    leaves undecided (a norm within a relative :math:`10^{-21}` or so of the radius, or entries so small that a square
    could underflow) are decided with Python's exact fractions. Returns an int array of -1, 0, 1."""
    rows = np.ascontiguousarray(rows)
    n = rows.shape[0]
    sign = np.zeros(n, dtype=int)
    if n == 0:
        return sign
    flat = np.flatnonzero(rows)  # row-major: each row's non-zero entries together (zeros contribute nothing)
    row = flat // rows.shape[1]
    values = rows.reshape(-1)[flat]
    size = np.abs(values)
    # entries whose squares could underflow, or whose split could overflow, and radii out of range: fractions
    by_fractions = np.zeros(n, dtype=bool)
    by_fractions[row[(size < _TINY) | (size > 1.0 / _TINY)]] = True
    if not _TINY <= radius <= 1.0 / _TINY:
        by_fractions[:] = True
    fast = np.flatnonzero(~by_fractions)
    if fast.size:
        # the non-zero entries packed left, as many columns as the most non-zeros of a row (zeros pad the others)
        position = np.arange(row.size) - np.searchsorted(row, np.arange(n))[row]
        entries = np.zeros((n, int(position.max(initial=-1)) + 1))
        entries[row, position] = values
        hi, lo = _split(entries[fast])
        big = hi * hi
        small = 2.0 * (hi * lo), lo * lo
        r_hi, r_lo = _split(np.float64(radius))
        r_small = -(2.0 * (r_hi * r_lo)) - r_lo * r_lo  # rounds: covered like the other small terms
        rounded = np.any(lo != 0.0, axis=1) | (r_lo != 0.0)
        p, sigma = np.full(fast.size, -(r_hi * r_hi)), np.zeros(fast.size)
        s, z, q = np.empty_like(p), np.empty_like(p), np.empty_like(p)
        for t in big.T:  # TwoSum: p + t = s + q exactly (q = (p - (s - z)) + (t - z), z = s - p)
            np.add(p, t, out=s)
            np.subtract(s, p, out=z)
            np.subtract(s, z, out=q)
            np.subtract(p, q, out=q)
            np.subtract(t, z, out=z)
            q += z
            rounded |= q != 0.0
            sigma += q
            p, s = s, p
        sigma += small[0].sum(axis=1) + small[1].sum(axis=1) + r_small
        result = p + sigma  # exact where nothing rounded (sigma is 0 there)
        k, m = big.shape[1] + 1, 2 * big.shape[1] + 2
        bound = 2.0 * _gamma(k + m) * (k * _U * (1.0 + _gamma(k)) + 2.0 ** -25 + 2.0 ** -52) * (big.sum(axis=1)
                                                                                               + r_hi * r_hi)
        decided = (np.abs(result) > bound) | ~rounded
        sign[fast[decided]] = np.sign(result[decided]).astype(int)
        by_fractions[fast[~decided]] = True
    r2 = Fraction(float(radius)) ** 2
    for i in np.flatnonzero(by_fractions):
        excess = sum(Fraction(float(v)) ** 2 for v in rows[i][rows[i] != 0.0]) - r2
        sign[i] = (excess > 0) - (excess < 0)
    return sign


def _near_signs(rows, radius):
    r"""For rows of norm near ``radius`` (in :math:`[2^{-400}, 2^{400}]`): ``(sign, decided)``, the sign of
    :math:`E = \sum_j x_j^2 - r^2` for the entries as real numbers where ``decided``, vectorised.

    Let :math:`r < 2^e \le 2r` and :math:`g = 2^{e-26}`. Each entry is split as :math:`x = h + l`, :math:`h` the
    multiple of :math:`g` nearest :math:`x` (:math:`h = \mathrm{fl}(\mathrm{fl}(x + K) - K)`, :math:`K = 1.5 \cdot
    2^{e+26}`: for :math:`|x| \le 2^e` the sum lies in a binade of spacing :math:`g` and the subtraction is exact,
    Sterbenz), :math:`l = x - h` exact (Sterbenz again, or :math:`h = 0`), :math:`|l| \le g/2`. Then
    :math:`x^2 = h^2 + (h + x)\,l`, and likewise :math:`r^2 = r_h^2 + (r_h + r)\,r_l`. Each :math:`h^2 = m^2 g^2` with
    :math:`|m| \le 2^{26}` is exact, and so is their sum :math:`A` in any order (every partial sum is a multiple of
    :math:`g^2` below :math:`2^{2e+1} = 2^{53} g^2`), provided the computed :math:`A < 2^{2e}` (rounding is monotone,
    so a larger term or partial sum would show in it); then :math:`D = A - r_h^2` is exact too. The small part
    :math:`C = \sum (h + x)\,l` is computed as a dot product of :math:`c = \mathrm{fl}(h + x)` and :math:`l`, which
    errs by at most :math:`\gamma_{d+1} P` with :math:`P = \sum (|h| + |x|)|l| \le \tfrac{g}{2}\sqrt d\,(2\sqrt A +
    \sqrt d\,g/2)` (Cauchy--Schwarz; Higham, *Accuracy and Stability of Numerical Algorithms*, 2002, Section 3.1, any
    summation order), plus :math:`2^{-1075}` per product that underflows. With :math:`\rho = (r_h + r) r_l` computed
    with error :math:`\gamma_2|\rho|`, the result :math:`\mathrm{fl}(D + \mathrm{fl}(\hat C - \hat\rho))` is
    :math:`(D + C - \rho + \theta)(1 + \delta)` with :math:`|\theta| \le \gamma_{d+3}(P + |\rho|) + d\,2^{-1075}`: a
    result larger in magnitude than twice that bound has the sign of :math:`E` (the factor two covers
    :math:`1 + \delta` and the rounding of the bound itself; :math:`(d + 3)u < 10^{-3}` is required). The rows left
    open are within about :math:`\gamma_{d+3}\sqrt d\,g` of the sphere (:math:`10^{-20}` relative for :math:`d = 50`),
    or exactly on it: of these, a row with every :math:`l = 0` (and :math:`r_l = 0`) has :math:`E = D` exactly."""
    n, d = rows.shape
    sign = np.zeros(n, dtype=int)
    decided = np.zeros(n, dtype=bool)
    if n == 0 or (d + 3) * _U >= 1e-3:
        return sign, decided
    e = math.frexp(radius)[1]
    shift = 1.5 * math.ldexp(1.0, e + 26)
    grid = math.ldexp(1.0, e - 26)
    r_hi = (radius + shift) - shift
    r_lo = radius - r_hi
    rho = (r_hi + radius) * r_lo
    step = max(1, (1 << 16) // max(d, 1))  # work arrays of 2**16 entries: they stay in the cache
    with np.errstate(over="ignore", invalid="ignore", under="ignore"):
        for start in range(0, n, step):
            x = rows[start:start + step]
            part = slice(start, start + x.shape[0])
            hi = x + shift
            hi -= shift
            big = np.einsum("ij,ij->i", hi, hi)
            lo = x - hi
            hi += x  # c = fl(h + x)
            small = np.einsum("ij,ij->i", hi, lo)
            result = (big - r_hi * r_hi) + (small - rho)
            bound = 2.0 * _gamma(d + 3) * (0.5 * grid * math.sqrt(d) * (2.0 * np.sqrt(big) + math.sqrt(d) * grid)
                                           + abs(rho)) + (d + 1) * 2.0 ** -1074
            exact = big < math.ldexp(1.0, 2 * e)  # A (and D) exact
            ok = exact & (np.abs(result) > bound)
            if r_lo == 0.0:  # rows with every l = 0: C = 0 and rho = 0, so the result is D, exact
                open_ = np.flatnonzero(exact & ~ok)
                ok[open_[~np.any(lo[open_] != 0.0, axis=1)]] = True
            decided[part] = ok
            sign[part] = np.where(ok, np.sign(result), 0).astype(int)
    return sign, decided


#: :func:`rows_outside_ball` decides this many rows at a time (its work arrays are a few times a chunk's size).
CHUNK_ROWS = 1 << 15


def _squares(X):
    """Each row's sum of squares in float64 (an overflow gives infinity: that row is outside)."""
    with np.errstate(over="ignore", under="ignore"):
        return np.einsum("ij,ij->i", X, X)


def _exactly_outside(X, radius, squares):
    r""":func:`rows_outside_ball` for finite rows and a radius in :math:`[2^{-400}, 2^{400}]`, given ``squares``: each
    row's sum of squares computed in float64, in any order (``_squares``).

    The screen: the computed sum :math:`s` is within :math:`\gamma_d S` of the true one :math:`S` (Higham, *Accuracy
    and Stability of Numerical Algorithms*, 2002, Section 3.1, any order). A square that underflows errs by at most
    :math:`2^{-1075}`: far below the slack of :math:`(d + 1) u r^2` when :math:`r \ge 2^{-400}`, so the screen holds
    for such rows too, both ways: :math:`s > r^2 (1 + 2\gamma_{d+2})` means a true sum above :math:`r^2`, and a square
    that overflows (an entry above :math:`2^{511} > r`) makes a row outside. The rows between are decided by
    ``_near_signs``, exactly, and the few it leaves open by ``_exact_excess_sign``."""
    slack = 2.0 * _gamma(X.shape[1] + 2)
    outside = squares > radius * radius * (1.0 + slack)
    near = ~outside & ~(squares <= radius * radius * (1.0 - slack))
    index = np.flatnonzero(near)
    if index.size:
        if index.size >= 0.75 * X.shape[0]:  # cheaper to decide every row than to gather most of them
            sign, decided = (part[index] for part in _near_signs(X, radius))
        else:
            sign, decided = _near_signs(X[index], radius)
        outside[index[decided]] = sign[decided] > 0
        index = index[~decided]
    for start in range(0, index.size, CHUNK_ROWS):
        chunk = index[start:start + CHUNK_ROWS]
        outside[chunk] = _exact_excess_sign(X[chunk], radius) > 0
    return outside


def rows_outside_ball(X, radius: float = 1.0):
    r"""Which rows of ``X`` have Euclidean norm greater than ``radius``, *exactly*: the float64 entries taken as the
    real numbers they are, as the privacy proofs take them -- not as ``numpy.linalg.norm`` rounds them.

    Rounding can leave a row just outside the ball although its norm computed in float64 is at most the radius: a row
    divided by its norm (each entry rounded), or one whose computed norm is below the true one. The computed sum of
    squares :math:`s` of a row is within :math:`\gamma_d` (relative) of the true one :math:`S` (Higham, *Accuracy and
    Stability of Numerical Algorithms*, 2002, Section 4.2); rows with :math:`s \le r^2(1 - 2\gamma_{d+2})` are
    inside, and the others are decided exactly (``_exact_excess_sign``: error-free products, a double-double sum with
    a proven error bound, and exact fractions where that bound leaves the sign open), :data:`CHUNK_ROWS` rows at a
    time (rows and radius scaled by a power of two, exactly, when the radius is below :math:`2^{-400}`). Returns a
    boolean array, one entry per row; a NaN or infinite entry raises ``ValueError``.
    """
    radius = _positive_radius(radius)
    X = np.asarray(X, dtype=np.float64)
    outside = np.zeros(X.shape[0], dtype=bool)
    if X.size == 0:
        return outside
    if not np.all(np.isfinite(X)):
        raise ValueError("X holds NaN or infinite values: a row's norm is not defined. Fix: remove or impute them.")
    if radius < _TINY:
        # Scaled by a power of two: below 2**-400 the screen's r / sqrt(d) could round by more than its slack (a
        # subnormal result keeps few bits). A row with an entry above r is outside (||x|| >= max |x_j|); the others
        # have entries at most r, which the scaling (r into [1/2, 1)) moves exactly and without overflow.
        largest = np.max(np.abs(X), axis=1)
        outside = largest > radius
        keep = np.flatnonzero(~outside)
        shift = -math.frexp(radius)[1]
        outside[keep] = rows_outside_ball(np.ldexp(X[keep], shift), math.ldexp(radius, shift))
        return outside
    if radius > 1.0 / _TINY:  # r**2 could overflow: screen by the largest entry (r / sqrt(d) is a normal number)
        largest = np.max(np.abs(X), axis=1)  # ||x|| <= sqrt(d) max|x_j|, and ||x|| >= max|x_j|
        outside = largest > radius
        near = ~outside & ~(largest <= radius / np.sqrt(X.shape[1]) * (1.0 - 2.0 ** -40))
    else:
        return _exactly_outside(X, radius, _squares(X))
    index = np.flatnonzero(near)
    for start in range(0, index.size, CHUNK_ROWS):
        chunk = index[start:start + CHUNK_ROWS]
        rows = X if chunk.size == X.shape[0] else X[chunk]
        outside[chunk] = _exact_excess_sign(rows, radius) > 0
    return outside


def _check_radius(radius):
    """A radius the ball helpers can work with: finite, > 0 and within ``[2**-400, 2**400]``."""
    radius = _positive_radius(radius)
    if not _TINY <= radius <= 1.0 / _TINY:
        raise ValueError(f"radius = {radius!r} is outside [2**-400, 2**400], where float64 cannot bring rows onto the "
                         f"sphere reliably. Fix: rescale the data by a public constant so that the bound on the rows' "
                         f"norms is near 1 (the algorithms' own bound is 1).")
    return radius


def _row_norms(X):
    """``numpy.linalg.norm`` of each row; where a row's squares overflow or underflow, the norm of the row scaled by a
    power of two (exact), scaled back. For the refusal's message, and the refusal at radii beyond ``[2**-400,
    2**400]``."""
    with np.errstate(over="ignore", under="ignore"):
        norms = np.linalg.norm(X, axis=1)
        bad = np.flatnonzero(~np.isfinite(norms) | (norms < _TINY))
        bad = bad[np.any(X[bad] != 0.0, axis=1)]  # (a norm below 2**-400 of a row of zeros is right)
        if bad.size:
            exponent = np.frexp(np.max(np.abs(X[bad]), axis=1))[1]
            norms[bad] = np.ldexp(np.linalg.norm(np.ldexp(X[bad], -exponent[:, None]), axis=1), exponent)
    return norms


def _float_below(q):
    """The largest float64 at most the fraction ``q`` (in float64's normal range)."""
    x = float(q)  # correctly rounded: Python divides integers to the nearest float
    return x if Fraction(x) <= q else math.nextafter(x, -math.inf)


def _float_above(q):
    """The smallest float64 at least the fraction ``q`` (in float64's normal range)."""
    x = float(q)
    return x if Fraction(x) >= q else math.nextafter(x, math.inf)


class _Rule(NamedTuple):
    """The fast rule's constants for one row length ``d``, radius :math:`r` and refusal tolerance (``_rule``)."""

    inside: float  #: a computed sum of squares at most this: the row is inside the ball exactly
    refuse: float  #: above this: the row is outside the tolerance exactly (refused)
    shrink: float  #: :math:`m = 1 - k u`, the shrink after the radial step
    k: int


def _shrink_lands_inside(k, d, radius, inside):
    r"""Condition :math:`C(k)` of ``_rule``, in exact rational arithmetic: the shrink :math:`1 - ku` brings every
    scaled row below the screen ``inside`` (and so inside the ball)."""
    u = Fraction(1, 2 ** 53)
    gamma = d * u / (1 - d * u)
    tau, beta = Fraction(d, 2 ** 1073), Fraction(d, 2 ** 1075)
    r, t = Fraction(radius), Fraction(inside)
    m = 1 - k * u
    a2 = m * m * (1 + u) ** 6 / (1 - u) ** 2 * (1 + tau / t) / (1 - gamma)
    return a2 <= 1 and (1 + gamma) * (a2 * r * r + 3 * r * beta) + tau <= t


@functools.lru_cache(maxsize=256)
def _rule(d, radius, eps):
    r"""The constants of the fast rule for rows of length ``d`` (at least 1), a radius :math:`r` in :math:`[2^{-400},
    2^{400}]` and the refusal tolerance :math:`R = r(1 + 4\epsilon)` (:data:`ROUNDING_ULPS`, ``eps`` the input's
    machine epsilon), each computed once in exact rational arithmetic and rounded in the safe direction.

    Notation: :math:`u = 2^{-53}`, :math:`\gamma_d = du/(1 - du)`, :math:`\tau = d\,2^{-1073}`, :math:`S = \sum_j
    x_j^2` the true sum of squares of a row, :math:`\hat s` the computed one (``_sums_of_squares``: :math:`|\hat s -
    S| \le \gamma_d S + \tau`).

    * ``inside`` :math:`= T_{in}`, the largest float64 :math:`\le r^2(1 - \gamma_d) - \tau`. If :math:`\hat s \le
      T_{in}` then :math:`S(1 - \gamma_d) \le \hat s + \tau \le r^2(1 - \gamma_d)`: :math:`S \le r^2`, the row is
      inside exactly.
    * ``refuse`` :math:`= T_{out}`, the smallest float64 :math:`\ge R^2(1 + \gamma_d) + \tau`. If :math:`\hat s >
      T_{out}` then :math:`S(1 + \gamma_d) \ge \hat s - \tau > R^2(1 + \gamma_d)`: :math:`S > R^2`, the row is outside
      the tolerance exactly. Conversely a row with :math:`S \le R^2` has :math:`\hat s \le T_{out}` and is never
      refused; a row with :math:`R^2 < S \le (R^2 (1 + \gamma_d) + \tau)/(1 - \gamma_d)` may be accepted (and
      projected): the boundary is decided to within :math:`\gamma_d`, deterministically for a given row and
      summation order.
    * ``shrink`` :math:`= m = 1 - ku` (exact in float64). A row with :math:`T_{in} < \hat s < \infty` is released as
      :math:`y_j = \mathrm{fl}(x_j f)`, :math:`f = \mathrm{fl}(\mathrm{fl}(r / \mathrm{fl}(\sqrt{\hat s}))\, m)`.
      Each operation is correctly rounded with a normal result (:math:`\hat s \ge r^2/2 \ge 2^{-801}`), so
      :math:`\mathrm{fl}(\sqrt{\hat s}) \ge \sqrt{\hat s}(1 - u)`, :math:`\mathrm{fl}(r/q) \le (r/q)(1 + u)`,
      :math:`f \le \mathrm{fl}(r/q)\, m (1 + u)` (Higham, 2002, Section 2.2, the standard model), and :math:`|y_j|
      \le |x_j| f (1 + u) + 2^{-1075}` (a product that underflows errs by half a subnormal step at most). With
      :math:`S/\hat s \le (1 + \tau/\hat s)/(1 - \gamma_d) < (1 + \tau/T_{in})/(1 - \gamma_d)` and the triangle
      inequality, :math:`\lVert y\rVert \le A r + \beta`, :math:`\beta = d\,2^{-1075} \ge \sqrt d\, 2^{-1075}`,
      :math:`A^2 = m^2 (1 + u)^6 (1 - u)^{-2} (1 + \tau/T_{in}) / (1 - \gamma_d)`. The condition :math:`C(k)`:
      :math:`A \le 1` and :math:`(1 + \gamma_d)(A^2 r^2 + 3 r \beta) + \tau \le T_{in}`. Under it (with :math:`\beta
      \le r`) :math:`S_y \le (Ar + \beta)^2 \le A^2 r^2 + 3r\beta`, so the computed sum of squares of :math:`y`, in
      any order, is :math:`\hat s_y \le (1 + \gamma_d) S_y + \tau \le T_{in}`: :math:`y` passes the screen -- it is
      inside the ball exactly (first point), and checking it again changes nothing (idempotence). :math:`k` is the
      least integer :math:`\ge 1` with :math:`C(k)` (``_shrink_lands_inside``, exact rationals; :math:`C` holds for
      every larger :math:`k`): about :math:`1.5d + 5` (the :math:`\gamma_d` of :math:`\hat s`, half of it through
      the root, and the :math:`\gamma_d` of the screen :math:`y` must pass, plus four roundings), 80 for
      :math:`d = 50`, about :math:`10^{-14}` relative."""
    if not d * 2.0 ** -53 < 1e-6:
        raise ValueError(f"rows of {d} entries are beyond the ball check's error bounds (at most 9e9 entries).")
    r = Fraction(radius)
    u = Fraction(1, 2 ** 53)
    gamma = d * u / (1 - d * u)
    tau = Fraction(d, 2 ** 1073)
    inside = _float_below(r * r * (1 - gamma) - tau)
    tolerance = r * (1 + ROUNDING_ULPS * Fraction(eps))
    refuse = _float_above(tolerance * tolerance * (1 + gamma) + tau)
    k = int(1.5 * d) + 1
    while not _shrink_lands_inside(k, d, radius, inside):
        k += 1
    while k > 1 and _shrink_lands_inside(k - 1, d, radius, inside):
        k -= 1
    return _Rule(inside, refuse, 1.0 - k * _U, k)


def _sums_of_squares(X, not_finite):
    r"""Each row's computed sum of squares :math:`\hat s` in float64 (``numpy.einsum``, in whatever order and with
    whatever SIMD, pairwise or fused multiply-add evaluation numpy takes), and the rows whose :math:`\hat s` overflowed;
    raises ``ValueError(not_finite)`` if an entry is NaN or infinite.

    The bound, for any order: the computation is a tree of :math:`d` products and :math:`d - 1` additions (some
    possibly fused) of non-negative numbers. Each correctly rounded operation returns its exact result times
    :math:`1 + \delta`, :math:`|\delta| \le u`, plus :math:`\eta`, :math:`|\eta| \le 2^{-1075}`, non-zero only when the
    result is subnormal (Higham, 2002, Section 2.1; additions of subnormals are exact). Each square passes through at
    most :math:`d` operations, so :math:`\hat s = \sum_j x_j^2 (1 + \theta_j) + \eta'` with :math:`|\theta_j| \le
    \gamma_d` (Higham, 2002, Lemma 3.1 and Section 3.1; Section 4.2 for summation in any order) and :math:`|\eta'| \le
    (2d - 1)(1 + \gamma_d) 2^{-1075} \le d\,2^{-1073} = \tau`: :math:`|\hat s - S| \le \gamma_d S + \tau`.

    Finiteness, fused: with non-negative terms every partial sum is at most the final one (rounding is monotone), so
    :math:`\hat s` is finite exactly when no entry is NaN or infinite (:math:`\infty^2`, :math:`\mathrm{NaN}^2` and
    sums with them are not finite; there is no :math:`\infty - \infty`) and nothing overflowed. Only the rows of
    non-finite :math:`\hat s` are looked at again, to tell the two apart -- no separate pass over the data.

    The sums are taken over a row-major copy when ``X`` is not row-major: numpy sums a strided row in another order,
    and a row's image must depend on its entries alone, not on the layout of the array it came in (nor on the other
    rows: numpy's loop over a row-major row is the same whatever the row's neighbours and alignment)."""
    X = np.ascontiguousarray(X)
    with np.errstate(over="ignore", invalid="ignore", under="ignore"):
        squares = np.einsum("ij,ij->i", X, X)
    overflow = np.flatnonzero(~np.isfinite(squares))
    if overflow.size and not np.all(np.isfinite(X[overflow])):
        raise ValueError(not_finite)
    return squares, overflow


_NOT_FINITE = ("X holds NaN or infinite values; every record must be a finite vector of norm at most {radius!r}. "
               "Fix: remove or impute them before fitting.")
_PROJECT_NOT_FINITE = ("X holds NaN or infinite values, which no projection onto the ball can bound. Fix: remove or "
                       "impute them first.")


def _tolerance(radius, dtype):
    """``(dtype, eps, r (1 + 4 eps))``: the input's dtype, its machine epsilon (float64's for integers) and the largest
    norm accepted as rounding."""
    dtype = np.dtype(np.float64 if dtype is None else dtype)
    eps = float(np.finfo(dtype).eps) if np.issubdtype(dtype, np.floating) else float(np.finfo(np.float64).eps)
    return dtype, eps, radius * (1 + ROUNDING_ULPS * eps)


def _refusal(X, too_long, radius, slack, dtype):
    norms = _row_norms(X[too_long])
    return ValueError(
        f"{too_long.size} of {X.shape[0]} rows have Euclidean norm > {radius!r} (largest {float(norms.max())!r}, "
        f"first at row {too_long[0]}: {float(norms[0])!r}; the bound is {radius!r}, and rows within rounding of the "
        f"{dtype.name} input, up to {slack!r}, would be accepted). The privacy guarantee of both algorithms assumes "
        f"||x_i|| <= 1 for every record (NIPS 2008, Section 2). {NORM_FIX}"
    )


def _refuse(X, radius, dtype, not_finite):
    """The refusal of :func:`refuse_rows_outside_ball`: returns ``(X as float64, squares, rule)``, ``squares`` and
    ``rule`` ``None`` at a radius outside ``[2**-400, 2**400]`` (decided there by the exact test instead)."""
    radius = _positive_radius(radius)
    dtype, eps, slack = _tolerance(radius, dtype)
    X = np.asarray(X, dtype=np.float64)
    not_finite = _NOT_FINITE.format(radius=radius) if not_finite is None else not_finite
    if not _TINY <= radius <= 1.0 / _TINY:  # rare: the exact test, and numpy's norm for the tolerance
        if not np.all(np.isfinite(X)):
            raise ValueError(not_finite)
        too_long = np.flatnonzero(rows_outside_ball(X, radius))
        too_long = too_long[_row_norms(X[too_long]) > slack]
        if too_long.size:
            raise _refusal(X, too_long, radius, slack, dtype)
        return X, None, None
    rule = _rule(max(X.shape[1], 1) if X.ndim == 2 else 1, radius, eps)
    squares, _ = _sums_of_squares(X, not_finite)
    # an overflowed sum (entries finite) is refused too: with every |x_j| <= R < 2**401 no square nor partial sum of
    # fewer than 2**200 of them overflows, so some |x_j| > R, and ||x|| >= |x_j| > R
    too_long = np.flatnonzero(squares > rule.refuse)
    if too_long.size:
        raise _refusal(X, too_long, radius, slack, dtype)
    return X, squares, rule


def refuse_rows_outside_ball(X, radius: float = 1.0, *, dtype=None, not_finite: str | None = None):
    r"""Raise ``ValueError`` if a row of ``X`` (n, d) lies outside the ball of ``radius`` by more than rounding; else
    return ``X`` as float64, unchanged.

    The rule: a row is refused when its computed sum of squares :math:`\hat s` proves :math:`\lVert x\rVert > R =
    r(1 + 4\epsilon)` for the entries as real numbers (:data:`ROUNDING_ULPS` = 4, :math:`\epsilon` the machine epsilon
    of ``dtype``, the dtype the data came in: 2.2e-16 for float64, 1.2e-7 for float32; float64's for integers): a row
    of norm at most :math:`R` is never refused, and one beyond it by more than :math:`\gamma_d \approx d \cdot 1.1
    \times 10^{-16}` (relative) always is (``_rule`` proves both; the boundary is decided to within that, not
    exactly). The rows it accepts may still lie outside the ball: :func:`check_rows_in_ball` projects those. NaN or
    infinite entries are refused (message ``not_finite``, if given), checked within the same pass over the data
    (``_sums_of_squares``). At a radius outside :math:`[2^{-400}, 2^{400}]` the exact test decides
    (:func:`rows_outside_ball`, with numpy's norm above :math:`R` as well).
    """
    return _refuse(X, radius, dtype, not_finite)[0]


def _radial_factors(squares, rows, radius, rule):
    """The factors :math:`f = \\mathrm{fl}(\\mathrm{fl}(r / \\mathrm{fl}(\\sqrt{\\hat s}))\\, m)` of ``rows`` (``_rule``
    proves the rows times them inside the ball and past its screen)."""
    return (radius / np.sqrt(squares[rows])) * rule.shrink


def check_rows_in_ball(X, radius: float = 1.0, *, dtype=None, not_finite: str | None = None):
    r"""Return ``X`` as float64 with every row of norm at most ``radius``, or raise ``ValueError``.

    :func:`refuse_rows_outside_ball`, then the projection of :func:`project_onto_ball` for the rows not certainly
    inside, in one pass over the data for the sums of squares and one for the product. A row whose computed sum of
    squares proves it inside the ball (``_rule``: :math:`\hat s \le r^2(1 - \gamma_d) - \tau`) is returned bit for bit;
    the others -- rows outside by rounding (a row divided by its own norm, ``sklearn.preprocessing.Normalizer``
    output) and rows within :math:`\gamma_d` of the sphere inside it, which the sum cannot tell apart -- are scaled to
    the sphere and shrunk by :math:`1 - ku` (:math:`k \approx 1.5d + 5` units of roundoff, ``_rule``), which lands
    them inside the ball exactly, for the float64 entries as real numbers (:func:`rows_outside_ball`, the exact test,
    is the tests' oracle), with ``numpy.linalg.norm`` at most the radius too and past the screen: checking the result
    again returns it unchanged. A row beyond rounding is refused (:func:`refuse_rows_outside_ball`): nothing beyond
    rounding is rescaled silently. Returns ``X`` itself when no row moves. At a radius outside :math:`[2^{-400},
    2^{400}]` a row outside the ball exactly is refused as :func:`project_onto_ball` refuses it (rescale the data by a
    public constant instead).
    """
    X, squares, rule = _refuse(X, radius, dtype, not_finite)
    radius = float(radius)
    if rule is None:
        if rows_outside_ball(X, radius).any():
            _check_radius(radius)
        return X
    move = np.flatnonzero(squares > rule.inside)
    if not move.size:
        return X
    factors = np.ones(X.shape[0])
    factors[move] = _radial_factors(squares, move, radius, rule)
    return np.multiply(X, factors[:, None], order="C")  # by 1.0 exactly for the rows inside: bit for bit


def check_rows_in_ball_exactly(X, radius: float = 1.0, *, refuse: bool = True):
    r""":func:`check_rows_in_ball` for the analysis code whose constructions need records exactly where they put them
    (a record at :math:`\pm e_1`, on the sphere, whose margin sits on a loss' kink): :func:`refuse_rows_outside_ball`
    (unless ``refuse`` is false: for rows already scaled onto the ball), then each row decided exactly
    (:func:`rows_outside_ball`): the rows inside the ball are returned bit for bit, the rows outside are brought inside
    by :func:`project_onto_ball`. Each row's image depends on that row alone, and checking the result again changes
    nothing. Slower than :func:`check_rows_in_ball` on rows near the sphere (the exact test); the algorithms' input
    check is that one."""
    X = refuse_rows_outside_ball(X, radius) if refuse else np.asarray(X, dtype=np.float64)
    outside = np.flatnonzero(rows_outside_ball(X, radius))
    if not outside.size:
        return X
    X = X.copy()
    X[outside] = project_onto_ball(X[outside], radius)
    return X


def project_onto_ball(X, radius: float = 1.0):
    r"""Rows of ``X`` (n, d) brought into the ball of ``radius``: :math:`x \min(1, r/\lVert x\rVert)`, to a few units
    of roundoff.

    Guaranteed exactly: every row of the result has Euclidean norm at most ``radius`` for its float64 entries as real
    numbers (:func:`rows_outside_ball`), ``numpy.linalg.norm(result, axis=1) <= radius`` as well (for any summation
    order: the proof bounds every order), and projecting the result again changes nothing. The rule (``_rule``
    proves it): a row whose computed sum of squares :math:`\hat s` proves it inside is returned bit for bit; every
    other row is multiplied by :math:`\mathrm{fl}(\mathrm{fl}(r / \mathrm{fl}(\sqrt{\hat s}))(1 - ku))`, :math:`k
    \approx 1.5d + 5` -- the radial step and a shrink by about :math:`1.5 d` units of roundoff (:math:`10^{-14}`
    relative for :math:`d = 50`), so rows near the sphere but inside it (within :math:`\gamma_d`) move by that shrink
    too. A row whose sum of squares overflows is first multiplied by a power of two that brings its largest entry to
    :math:`[2^e, 2^{e+1})`, :math:`r < 2^e` (entries far smaller may underflow). Each row's image depends on that row
    alone. Returns a new, row-major array; refuses a radius that is not a finite number in :math:`[2^{-400},
    2^{400}]`, and rows that are not finite (no projection makes them meaningful).
    """
    radius = _check_radius(radius)
    X = np.asarray(X, dtype=np.float64)
    rule = _rule(max(X.shape[1], 1) if X.ndim == 2 else 1, radius, 0.0)
    squares, overflow = _sums_of_squares(X, _PROJECT_NOT_FINITE)
    factors = np.ones(X.shape[0])
    move = np.flatnonzero(squares > rule.inside)
    move = move[np.isfinite(squares[move])]
    factors[move] = _radial_factors(squares, move, radius, rule)
    projected = np.multiply(X, factors[:, None], order="C")
    if overflow.size:  # rare: scaled by a power of two (largest entry into [2**e, 2**(e+1)), above r), then as above
        rows = X[overflow]
        shift = math.frexp(radius)[1] + 1 - np.frexp(np.max(np.abs(rows), axis=1))[1]
        rows = np.ldexp(rows, shift[:, None])
        squares, _ = _sums_of_squares(rows, _PROJECT_NOT_FINITE)  # finite: entries below 2**402, d below 2**200
        projected[overflow] = rows * _radial_factors(squares, np.arange(rows.shape[0]), radius, rule)[:, None]
    return projected


def uniform_in_ball(rng, shape):
    r"""Points uniform in the solid unit ball, shape ``shape`` (last axis: the dimension :math:`d`).

    Direction uniform on :math:`S^{d-1}` (a standard normal vector over its norm), radius :math:`U^{1/d}` with
    :math:`U \sim \mathrm{U}(0, 1)` (the volume inside radius :math:`r` is proportional to :math:`r^d`). ``rng`` is a
    ``numpy.random.Generator`` or ``RandomState``; it draws all normals first, then all uniforms. The one sampler of
    this law: data (``dplr.datasets.simulated``) and the searches' random starts (``dplr.analysis``). Points, not
    noise; floating-point rounding may leave a point an ulp outside (``project_onto_ball`` guarantees the bound).
    """
    p = rng.standard_normal(shape)
    p /= np.linalg.norm(p, axis=-1, keepdims=True)
    return p * rng.random(tuple(shape)[:-1] + (1,)) ** (1.0 / shape[-1])

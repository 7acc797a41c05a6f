"""The unit ball: the records' norms decided exactly, rows beyond rounding refused, rows projected onto it.

NIPS 2008, Section 2 assumes every record has ``||x_i|| <= 1``; the privacy proofs are void without it, for the float64
entries as the real numbers they are. This module decides that exactly (:func:`rows_outside_ball`), refuses rows
outside by more than rounding (:func:`refuse_rows_outside_ball`), projects rows onto the ball
(:func:`project_onto_ball`), and composes the two for the algorithms' input check (:func:`check_rows_in_ball`).

How the norms are decided, fast: a screen on the computed sum of squares certifies most rows inside (or outside);
the rows it leaves -- after ``sklearn.preprocessing.Normalizer`` that is every row, each within a few ulps of the
radius -- are decided by a vectorised compensated sum with a proven error bound (``_near_signs``), which leaves
open only rows within about :math:`10^{-20}` (relative) of the sphere; those are decided by error-free
transformations and, failing them, by exact fractions (``_exact_excess_sign``). Every decision is exact, so the
released data are the same numbers as with the exact test alone.

How rows are projected, fast (``_project``), with the same numbers as the reference path (``_project_scaled``: each
row scaled by a power of two for its norm, shrunk by a few ulps at a time and decided exactly again after each shrink):
the norm numpy computes for the refusal is the one the radial step needs (for rows of moderate entries the scaling
commutes with every rounding, proved there), the re-checks decide exactly only rows numpy's norm says are inside, and a
shrink is proved to land inside, with no exact test, when the exact test's own error bound (``_near_signs``) bounds
the row's excess over :math:`r^2` by less than the shrink removes. On ``Normalizer`` rows (every row within a few ulps
of the sphere) the exact test then runs once over the data and once over the few rows numpy's norm puts outside.

(Over 400 lines: the exact test of the norms and its proofs belong beside the checks and the projection that use it.)
"""
from __future__ import annotations

import math
import numbers
from fractions import Fraction

import numpy as np

__all__ = [
    "check_rows_in_ball",
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
    r"""For rows of norm near ``radius`` (in :math:`[2^{-400}, 2^{400}]`): ``(sign, decided, upper)``, the sign of
    :math:`E = \sum_j x_j^2 - r^2` for the entries as real numbers where ``decided``, vectorised, and a bound
    ``upper`` :math:`\ge E` (infinite where not decided).

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
    or exactly on it: of these, a row with every :math:`l = 0` (and :math:`r_l = 0`) has :math:`E = D` exactly.

    The bound: with :math:`\hat E` the result and :math:`b` the computed bound (at least :math:`|\theta|`, by its
    factor two), :math:`E = \hat E/(1 + \delta) - \theta \le \hat E + 2u|\hat E| + b`; ``upper`` is
    :math:`\mathrm{fl}(\hat E + 8u|\hat E| + 2b)`, whose rounding (at most :math:`2u` of its size) the doubled terms
    cover."""
    n, d = rows.shape
    sign = np.zeros(n, dtype=int)
    decided = np.zeros(n, dtype=bool)
    upper = np.full(n, np.inf)
    if n == 0 or (d + 3) * _U >= 1e-3:
        return sign, decided, upper
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
            upper[part] = np.where(ok, result + (8.0 * _U * np.abs(result) + 2.0 * bound), np.inf)
    return sign, decided, upper


#: :func:`rows_outside_ball` decides this many rows at a time (its work arrays are a few times a chunk's size).
CHUNK_ROWS = 1 << 15


def _squares(X):
    """Each row's sum of squares in float64 (an overflow gives infinity: that row is outside)."""
    with np.errstate(over="ignore", under="ignore"):
        return np.einsum("ij,ij->i", X, X)


def _exactly_outside(X, radius, squares, skip=None, upper=False):
    r""":func:`rows_outside_ball` for finite rows and a radius in :math:`[2^{-400}, 2^{400}]`, given ``squares``: each
    row's sum of squares computed in float64, in any order (``_squares``; not taken from ``numpy.linalg.norm``, so that
    no decision rests on how numpy computes a norm). Rows where ``skip`` is true and the screen does not decide are left ``False``: the caller does
    not need them.

    The screen: the computed sum :math:`s` is within :math:`\gamma_d S` of the true one :math:`S` (Higham, *Accuracy
    and Stability of Numerical Algorithms*, 2002, Section 3.1, any order). A square that underflows errs by at most
    :math:`2^{-1075}`: far below the slack of :math:`(d + 1) u r^2` when :math:`r \ge 2^{-400}`, so the screen holds
    for such rows too, both ways: :math:`s > r^2 (1 + 2\gamma_{d+2})` means a true sum above :math:`r^2`, and a square
    that overflows (an entry above :math:`2^{511} > r`) makes a row outside. The rows between are decided by
    ``_near_signs``, exactly, and the few it leaves open by ``_exact_excess_sign``. With ``upper``, returns
    ``(outside, bound)``: ``bound`` :math:`\ge \sum_j x_j^2 - r^2` where ``_near_signs`` decided, infinite elsewhere."""
    slack = 2.0 * _gamma(X.shape[1] + 2)
    bound = np.full(X.shape[0], np.inf) if upper else None
    outside = squares > radius * radius * (1.0 + slack)
    near = ~outside & ~(squares <= radius * radius * (1.0 - slack))
    if skip is not None:
        near &= ~skip
    index = np.flatnonzero(near)
    if index.size:
        if index.size >= 0.75 * X.shape[0]:  # cheaper to decide every row than to gather most of them
            sign, decided, excess = (part[index] for part in _near_signs(X, radius))
        else:
            sign, decided, excess = _near_signs(X[index], radius)
        outside[index[decided]] = sign[decided] > 0
        if upper:
            bound[index] = excess
        index = index[~decided]
    for start in range(0, index.size, CHUNK_ROWS):
        chunk = index[start:start + CHUNK_ROWS]
        outside[chunk] = _exact_excess_sign(X[chunk], radius) > 0
    return (outside, bound) if upper else outside


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


def _row_norms(X):
    """``numpy.linalg.norm`` of each row; where a row's squares overflow or underflow, the norm of the row scaled by a
    power of two (exact), scaled back."""
    with np.errstate(over="ignore", under="ignore"):
        norms = np.linalg.norm(X, axis=1)
        bad = np.flatnonzero(~np.isfinite(norms) | (norms < _TINY))
        bad = bad[np.any(X[bad] != 0.0, axis=1)]  # (a norm below 2**-400 of a row of zeros is right)
        if bad.size:
            exponent = np.frexp(np.max(np.abs(X[bad]), axis=1))[1]
            norms[bad] = np.ldexp(np.linalg.norm(np.ldexp(X[bad], -exponent[:, None]), axis=1), exponent)
    return norms


def _check_radius(radius):
    """A radius the ball helpers can work with: finite, > 0 and within ``[2**-400, 2**400]``."""
    radius = _positive_radius(radius)
    if not _TINY <= radius <= 1.0 / _TINY:
        raise ValueError(f"radius = {radius!r} is outside [2**-400, 2**400], where float64 cannot bring rows onto the "
                         f"sphere reliably. Fix: rescale the data by a public constant so that the bound on the rows' "
                         f"norms is near 1 (the algorithms' own bound is 1).")
    return radius


def project_onto_ball(X, radius: float = 1.0):
    r"""Rows of ``X`` (float64) projected onto the ball of ``radius``: :math:`x \min(1, r/\lVert x\rVert)`.

    Guaranteed exactly: every row of the result has Euclidean norm at most ``radius`` for its float64 entries as real
    numbers (:func:`rows_outside_ball`), and ``numpy.linalg.norm(result, axis=1) <= radius`` as well (the result is in
    row-major order, the order that guarantee is checked in; a norm computed otherwise, e.g. of one row with ``dot``,
    may sum in another order and exceed it by an ulp). The radial step computes each norm on the row scaled by a power
    of two (exact), so that rows of very large or very small entries neither overflow nor underflow (a row whose
    entries span more than float64's range of exponents loses its smallest ones to underflow). A row that rounding
    leaves outside after it is shrunk by a few units of roundoff at a time (factors :math:`1 - 2^{k}u`,
    :math:`k = 2, 3, \dots`) until it is inside; multiplying by a factor below 1 never lengthens an entry. Each row's
    image depends on that row alone. Returns a new array; refuses a radius that is not a finite number in
    :math:`[2^{-400}, 2^{400}]`, and rows that are not finite (no projection makes them meaningful).
    """
    radius = _check_radius(radius)
    X = np.array(X, dtype=np.float64, order="C")
    if X.size == 0:
        if not np.all(np.isfinite(X)):
            raise ValueError(_PROJECT_NOT_FINITE)
        return X
    norms = _moderate_norms(X)
    if norms is None:
        if not np.all(np.isfinite(X)):
            raise ValueError(_PROJECT_NOT_FINITE)
        return _project_scaled(X, radius)
    return _project(X, radius, norms, None)


_PROJECT_NOT_FINITE = ("X holds NaN or infinite values, which no projection onto the ball can bound. Fix: remove or "
                       "impute them first.")


def _moderate_norms(X):
    """``numpy.linalg.norm(X, axis=1)`` if every norm is finite and either at least :math:`2^{-400}` or of a row of
    zeros (then every entry is finite too: an infinite or NaN entry makes its norm so); else ``None``: the callers
    then take the paths that scale rows by powers of two, which cover every finite row."""
    with np.errstate(over="ignore", under="ignore", invalid="ignore"):
        norms = np.linalg.norm(X, axis=1)
    if not np.all(np.isfinite(norms)):
        return None
    small = np.flatnonzero(norms < _TINY)
    if small.size and np.any(X[small] != 0.0):
        return None
    return norms


def _outside_either_way(rows, radius, norms):
    """Rows outside exactly (:func:`rows_outside_ball`) or by ``numpy.linalg.norm`` (``norms``, those rows' norms),
    for finite rows and a radius in :math:`[2^{-400}, 2^{400}]`: the exact test only where numpy's norm does not decide
    already. Returns ``(outside, upper)``, ``upper`` as ``_exactly_outside`` gives it."""
    over = norms > radius
    outside, upper = _exactly_outside(rows, radius, _squares(rows), skip=over, upper=True)
    return outside | over, upper


#: Entries of a row to project whose magnitudes (the non-zero ones) all lie in ``[2**-_MODERATE, 2**_MODERATE]``: the
#: radial step needs no scaling by a power of two (``_project``).
_MODERATE = 250


def _project(X, radius, norms, outside, excess=None):
    r""":func:`project_onto_ball` of the finite rows ``X`` (float64), as a new array, for a radius in :math:`[2^{-400},
    2^{400}]`, given ``norms``, their ``numpy.linalg.norm``, ``outside``, whether each lies outside the ball exactly
    (``None``: not known; ``False`` is allowed for a row whose numpy norm is above ``radius``, projected either way),
    and ``excess``, bounds on :math:`\sum_j x_j^2 - r^2` (``None`` or infinite: not known) -- the same numbers as
    ``_project_scaled``, bit for bit.

    The radial step: ``_project_scaled`` scales a row by :math:`2^{-e}` (:math:`2^{e-1} \le \max_j |x_j| < 2^e`),
    computes the norm :math:`\hat n_s` of the scaled row, and where :math:`\hat n_s > r 2^{-e}` multiplies the scaled
    row by :math:`\mathrm{fl}(r / \hat n_s)`. When every non-zero entry has :math:`2^{-250} \le |x_j| \le 2^{250}`
    (so :math:`|e| \le 251`), every number in that computation is a normal float64 both scaled and unscaled: the
    scaled entries (at least :math:`2^{-501}`) and the squares of both (at least :math:`2^{-1002}`, at most
    :math:`2^{502} d`), their partial sums, the norms, :math:`r 2^{-e}` and both quotients (:math:`r \in [2^{-400},
    2^{400}]`). Scaling a normal float64 by a power of two that keeps it normal commutes with rounding, so every
    scaled square, partial sum and root is the unscaled one times the power of two: :math:`\hat n_s = \hat n
    2^{-e}`, the comparison is :math:`\hat n > r`, and :math:`\mathrm{fl}(r/\hat n_s) = \mathrm{fl}(r/\hat n)
    2^{e}`. The product :math:`\mathrm{fl}((x_j 2^{-e})(q 2^e))` rounds the same real number as
    :math:`\mathrm{fl}(x_j q)`. So for such rows the step is ``x * fl(r / n)`` with ``n`` the unscaled norm, which
    the caller has computed already. Other rows take ``_project_scaled``'s step. The test of the entries of the rows to
    move: the count of entries below :math:`2^{-250}` in magnitude equals the count of zeros, and every norm is at most
    :math:`2^{249}` (a norm is at least the largest entry, rounded: within a factor :math:`1 + \gamma_{d+1}`). The
    shrinks that follow are ``_project_scaled``'s, with the same decisions (:func:`rows_outside_ball` is exact, and
    ``numpy.linalg.norm`` is taken of the same rows): only the test is cheaper, exact only where numpy's norm says
    inside, skipped for rows the step did not move and that were outside exactly before, and skipped where a bound
    proves the shrunk row inside.

    That bound: the exact test gives :math:`B \ge E = \sum_j x_j^2 - r^2` (``_near_signs``) for the row before a
    shrink by :math:`c = 1 - 2^k u` (exact). Each entry of :math:`y = \mathrm{fl}(c x)` has :math:`|y_j| \le c|x_j|(1 +
    u)` (a result below :math:`2^{-1022}` adds at most :math:`2^{-2044}` to :math:`\lVert y\rVert^2` instead, far
    below the margin :math:`u r^2/2 \ge 2^{-854}` left below), and :math:`c(1 + u) \le 1 - (2^k - 1)u`, so
    :math:`\lVert y\rVert^2 \le (1 - (2^k - 1)u)^2 (r^2 + E)`. If :math:`E \le (2^{k+1} - 3) u r^2` this is at most
    :math:`r^2 (1 - u + 2^{2k} u^2) < r^2 (1 - u/2)` for :math:`k \le 20`: inside exactly. The test applied is
    :math:`\mathrm{fl}(B) \le \mathrm{fl}(r^2 (2^{k+1} - 4) u)`, whose right side (two roundings) stays below
    :math:`(2^{k+1} - 3) u r^2`. Numpy's norm of the shrunk row is computed and compared as before. After one
    shrink (:math:`k = 2`) this proves inside every ``Normalizer`` row outside exactly: their :math:`E` is at most a
    few :math:`u`."""
    X = np.asarray(X, dtype=np.float64)
    step = norms > radius  # ||x|| > r as numpy computes it: the rows the radial step moves
    stepped = np.flatnonzero(step)
    rows = X[stepped]
    if stepped.size and float(norms[stepped].max()) <= 2.0 ** (_MODERATE - 1) and (
            np.count_nonzero(np.abs(rows) < 2.0 ** -_MODERATE) == np.count_nonzero(rows == 0.0)):
        odd_rows = np.zeros(0, dtype=np.intp)
    else:
        size = np.abs(rows)
        odd = np.any((size > 2.0 ** _MODERATE) | ((size < 2.0 ** -_MODERATE) & (rows != 0.0)), axis=1)
        odd_rows, stepped, rows = stepped[odd], stepped[~odd], rows[~odd]
    projected = np.array(X, order="C")
    projected[stepped] = rows * (radius / norms[stepped])[:, None]  # the step of the moderate rows
    if odd_rows.size:  # the scaled step, as _project_scaled takes it
        rows = X[odd_rows]
        exponent = np.frexp(np.max(np.abs(rows), axis=1))[1]
        scaled = np.ldexp(rows, -exponent[:, None])
        scaled_norms = np.linalg.norm(scaled, axis=1)
        go = scaled_norms > np.ldexp(radius, -exponent)
        rows[go] = scaled[go] * (radius / scaled_norms[go])[:, None]
        projected[odd_rows] = rows
        step[odd_rows] = go
    # rows the step left as they were: outside either way still where they were outside exactly or by numpy's norm
    bound = np.full(X.shape[0], np.inf)
    if outside is None:
        still = np.zeros(X.shape[0], dtype=bool)
        unmoved = np.flatnonzero(~step)
        still[unmoved], bound[unmoved] = _outside_either_way(X[unmoved], radius, norms[unmoved])
    else:
        still = (outside | (norms > radius)) & ~step
        if excess is not None:
            bound[:] = excess
    moved = np.flatnonzero(step)
    if moved.size:
        rows = projected[moved]
        still[moved], bound[moved] = _outside_either_way(rows, radius, np.linalg.norm(rows, axis=1))
    still, k = np.flatnonzero(still), 2
    bound = bound[still]
    while still.size:  # each round shrinks by more than the last; a few rounds cover the rounding of a norm
        if k > 40:
            raise RuntimeError("project_onto_ball could not bring a row inside the ball (a bug: please report it).")
        rows = projected[still] * (1.0 - 2.0 ** k * _U)
        projected[still] = rows
        norms_k = np.linalg.norm(rows, axis=1)
        over = norms_k > radius
        # inside exactly, proven from the bound on the excess before this shrink (no exact test needed)
        proven = (bound <= radius * radius * ((2.0 ** (k + 1) - 4.0) * _U)) if k <= 20 else np.zeros(still.size, bool)
        test = np.flatnonzero(~over & ~proven)
        outside_k, bound = over, np.full(still.size, np.inf)
        if test.size:
            test_rows = rows[test]
            outside_k[test], bound[test] = _exactly_outside(test_rows, radius, _squares(test_rows), upper=True)
        keep = np.flatnonzero(outside_k)
        still, bound, k = still[keep], bound[keep], k + 1
    return projected


def _project_scaled(X, radius):
    """The projection of :func:`project_onto_ball` for finite rows ``X`` (a C-ordered float64 array, changed in place)
    of any magnitude: each row scaled by a power of two for its norm, re-checked after every shrink. The reference
    that ``_project`` computes faster, and the path of rows whose norms over- or underflow."""
    exponent = np.frexp(np.max(np.abs(X), axis=1))[1]  # the largest entry is f 2**exponent, 1/2 <= f < 1
    scaled = np.ldexp(X, -exponent[:, None])  # exact: entries below 1, norms at most sqrt(d)
    norms = np.linalg.norm(scaled, axis=1)
    with np.errstate(over="ignore"):  # r 2**-e is infinite only for rows of subnormal entries: not outside then
        outside = norms > np.ldexp(radius, -exponent)  # ||x|| > r, as the unscaled norm would say where it is finite
    # x r/||x|| as the scaled row times r/||x 2**-e||: the same numbers as the unscaled product where no entry under- or
    # overflows either way, and right where the unscaled one would overflow
    X[outside] = scaled[outside] * (radius / norms[outside])[:, None]

    def outside_either_way(rows):  # exactly, or as numpy computes the norm (what a user checks)
        return rows_outside_ball(rows, radius) | (np.linalg.norm(rows, axis=1) > radius)

    still, k = np.flatnonzero(outside_either_way(X)), 2
    while still.size:  # each round shrinks by more than the last; a few rounds cover the rounding of a norm
        if k > 40:
            raise RuntimeError("project_onto_ball could not bring a row inside the ball (a bug: please report it).")
        X[still] *= 1.0 - 2.0 ** k * _U
        still, k = still[outside_either_way(X[still])], k + 1
    return X


def _refuse(X, radius, dtype, to_project=False):
    r"""The refusal of :func:`refuse_rows_outside_ball`; returns ``(X as float64, computed norms, exactly outside)``.
    With ``to_project``, rows whose computed norm lies in :math:`(r, r(1 + 4\epsilon)]` are not decided exactly (they
    are neither refused nor kept as they are: :func:`check_rows_in_ball` projects them) and are marked ``False``; and
    the last of the four returned, ``excess``, bounds each row's :math:`\sum_j x_j^2 - r^2` from above (infinite where
    unknown), and is ``None`` unless the norms are ``numpy.linalg.norm``'s, finite and at least :math:`2^{-400}` (else
    they are those of rows scaled by powers of two, and the projection takes its scaled path)."""
    radius = _positive_radius(radius)
    dtype = np.dtype(np.float64 if dtype is None else dtype)
    eps = float(np.finfo(dtype).eps) if np.issubdtype(dtype, np.floating) else float(np.finfo(np.float64).eps)
    X = np.asarray(X, dtype=np.float64)
    slack = radius * (1 + ROUNDING_ULPS * eps)
    norms = _moderate_norms(X) if _TINY <= radius <= 1.0 / _TINY and X.size else None
    excess = None
    if norms is not None:  # finite rows (an infinite or NaN entry makes its norm so)
        skip = ((norms > radius) & (norms <= slack)) if to_project else None
        outside, excess = _exactly_outside(X, radius, _squares(X), skip=skip, upper=True)
    else:
        if not np.all(np.isfinite(X)):  # NaN > radius is False: it would pass the test below
            raise ValueError(f"X holds NaN or infinite values; every record must be a finite vector of norm at most "
                             f"{radius!r}. Fix: remove or impute them before fitting.")
        norms = _row_norms(X)
        outside = rows_outside_ball(X, radius)
    too_long = np.flatnonzero((norms > slack) & outside)  # a computed norm can also be above the true one
    if too_long.size:
        largest = float(norms[too_long].max())
        raise ValueError(
            f"{too_long.size} of {X.shape[0]} rows have Euclidean norm > {radius!r} (largest {largest!r}, "
            f"first at row {too_long[0]}: {float(norms[too_long[0]])!r}; the bound is {radius!r}, and rows within "
            f"rounding of the {dtype.name} input, up to {slack!r}, would be accepted). The privacy guarantee of "
            f"both algorithms assumes ||x_i|| <= 1 for every record (NIPS 2008, Section 2). {NORM_FIX}"
        )
    return X, norms, outside, excess


def refuse_rows_outside_ball(X, radius: float = 1.0, *, dtype=None):
    r"""Raise ``ValueError`` if a row of ``X`` lies outside the ball of ``radius`` by more than rounding; else return
    ``X`` as float64, unchanged.

    The rule: a row is refused when its norm exceeds :math:`r` exactly (:func:`rows_outside_ball`, for the entries as
    real numbers) *and* its computed norm (``numpy.linalg.norm``) exceeds :math:`r\,(1 + 4\epsilon)`
    (:data:`ROUNDING_ULPS` = 4, :math:`\epsilon` the machine epsilon of ``dtype``, the dtype the data came in:
    2.2e-16 for float64, 1.2e-7 for float32; float64's for integers). The rows it accepts may still lie outside by
    rounding: :func:`check_rows_in_ball` projects those. NaN or infinite entries are refused.
    """
    return _refuse(X, radius, dtype)[0]


def check_rows_in_ball(X, radius: float = 1.0, *, dtype=None):
    r"""Return ``X`` as float64 with every row of norm at most ``radius``, or raise ``ValueError``.

    :func:`refuse_rows_outside_ball`, then :func:`project_onto_ball` of the rows outside by rounding only. The rule: a
    row whose computed norm is at most :math:`r\,(1 + 4\epsilon)` (:data:`ROUNDING_ULPS` = 4, :math:`\epsilon` the
    machine epsilon of ``dtype``, the dtype the data came in: 2.2e-16 for float64, 1.2e-7 for float32; float64's for
    integers) but whose norm exceeds :math:`r` is outside by rounding only -- e.g. a row divided by its own norm, or
    ``sklearn.preprocessing.Normalizer`` output -- and is projected onto the ball of radius :math:`r` in float64
    (:func:`project_onto_ball`), so that the proofs' assumption :math:`\lVert x_i\rVert \le r` holds exactly, for the
    entries as real numbers (:func:`rows_outside_ball` decides it exactly: a computed norm of 1 can hide a true norm
    above 1), and ``numpy.linalg.norm`` of each row is at most :math:`r` too. A row beyond that computed bound *and*
    outside exactly is refused: nothing beyond rounding is rescaled silently. The rows inside exactly, with computed
    norm at most :math:`r`, are returned bit for bit; returns ``X`` itself when no row moves. A row to project at a
    radius outside :math:`[2^{-400}, 2^{400}]` is refused as :func:`project_onto_ball` refuses it (rescale the data by
    a public constant instead).
    """
    X, norms, outside, excess = _refuse(X, radius, dtype, to_project=True)
    move = outside | (norms > radius)  # the second for a user who checks with numpy
    if not move.any():
        return X
    if excess is not None and X.flags.c_contiguous:  # (numpy's norms of the released rows: in row-major order)
        # rows marked inside here have numpy norms above the radius: moved, or projected whatever their exact side
        return _project(X, radius, norms, outside, excess)
    X = X.copy()
    X[move] = project_onto_ball(X[move], radius)
    return X


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

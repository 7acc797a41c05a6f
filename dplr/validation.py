"""Input checks shared by the mechanisms, the calibrations, the solver, the algorithms and the estimators.

Privacy code is security code: every check fails loudly with a message that names the problem and
says how to fix it, and nothing is altered silently (NIPS 2008, Section 2 assumes every record has
``||x_i|| <= 1``; the privacy proofs are void without it).

Each input is checked once, where it enters the package: a public function checks what it is given
and passes clean values on. Public functions that other public functions call take
``check_input=False`` from them (the scikit-learn convention), so a value is not checked twice on
one call.

(Over 400 lines: the exact test of the records' norms, :func:`rows_outside_ball`, belongs beside the
checks and the projection that use it.)
"""
from __future__ import annotations

import math
import numbers
import warnings
from fractions import Fraction

import numpy as np

__all__ = [
    "PrivacyLeakWarning",
    "check_random_state",
    "check_positive_finite",
    "check_positive_integer",
    "check_tolerance",
    "check_solver_tol",
    "check_loss_constant",
    "check_epsilon",
    "check_delta",
    "check_lambda",
    "check_rows_in_ball",
    "project_onto_ball",
    "rows_outside_ball",
    "CHUNK_ROWS",
    "NORM_FIX",
    "ROUNDING_ULPS",
    "encode_binary_labels",
    "check_signed_data",
    "check_training_data",
    "warn_privacy_leak",
]


class PrivacyLeakWarning(UserWarning):
    """Emitted when an operation uses the data in a way the privacy guarantee does not cover.

    Example: rescaling every row by the largest row norm *of the data*. The scale itself depends on
    every record, so releasing a model trained on the rescaled data is no longer ε-DP.
    """


def check_random_state(random_state) -> np.random.Generator:
    """Turn ``None``, an integer seed, a ``SeedSequence`` or a ``Generator`` into a ``Generator``.

    There is no global random state in ``dplr``: a ``Generator`` passed in is used (and advanced)
    as it is, so a caller can thread one stream through several draws.
    """
    if isinstance(random_state, np.random.Generator):
        return random_state
    if random_state is None or isinstance(random_state, (numbers.Integral, np.random.SeedSequence)):
        if isinstance(random_state, numbers.Integral) and random_state < 0:
            raise ValueError(f"random_state must be a non-negative integer seed, got {random_state}.")
        return np.random.default_rng(random_state)
    raise TypeError(
        f"random_state must be None, a non-negative int, a numpy SeedSequence or a numpy Generator, "
        f"got {type(random_state).__name__}. Legacy np.random.RandomState objects are not accepted: "
        f"pass np.random.default_rng(seed) instead."
    )


def check_positive_finite(value, name: str) -> float:
    """Return ``float(value)`` if it is a finite number > 0, else raise ``ValueError``."""
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise ValueError(f"{name} must be a positive finite number, got {value!r}.")
    value = float(value)
    if not np.isfinite(value) or value <= 0:
        raise ValueError(f"{name} must be a positive finite number, got {value!r}.")
    return value


def check_positive_integer(value, name: str) -> int:
    """Return ``int(value)`` if it is an integer >= 1 (not a bool), else raise ``ValueError``."""
    if isinstance(value, bool) or not isinstance(value, numbers.Integral) or value < 1:
        raise ValueError(f"{name} must be a positive integer, got {value!r}.")
    return int(value)


def check_tolerance(tol) -> float:
    """Solver tolerance on the gradient norm: a finite number > 0 (``tol <= 0`` can never be met)."""
    if isinstance(tol, bool) or not isinstance(tol, numbers.Real) or not np.isfinite(float(tol)) or tol <= 0:
        raise ValueError(
            f"tol (the solver's tolerance on the gradient norm) must be a finite number > 0, got {tol!r}. "
            f"Fix: leave the default tol=1e-8, or pass a small positive number."
        )
    return float(tol)


def check_solver_tol(solver_tol) -> float:
    """The gradient-norm bound a released solver point is known to meet: a finite number >= 0 (0: exact)."""
    if isinstance(solver_tol, bool) or not isinstance(solver_tol, numbers.Real) or not (
            np.isfinite(float(solver_tol)) and solver_tol >= 0):
        raise ValueError(f"solver_tol (the gradient norm the released minimiser is known to meet) must be a finite "
                         f"number >= 0, got {solver_tol!r}. Fix: pass the tol the solver stopped at (0 only for an "
                         f"exact minimiser).")
    return float(solver_tol)


def check_loss_constant(value, name: str, allow_zero: bool = False) -> float:
    r"""A loss' proof constant (``lipschitz``: the bound :math:`L` on :math:`|\ell'|`, > 0; ``curvature``: the bound
    :math:`c` on :math:`\ell''`, >= 0).

    A wrong constant silently weakens the privacy proof it enters (a negative curvature shrinks the noise of
    Algorithm 2), so it is checked where a calibration receives it.
    """
    ok = not isinstance(value, bool) and isinstance(value, numbers.Real) and np.isfinite(float(value))
    if not (ok and (float(value) >= 0 if allow_zero else float(value) > 0)):
        bound = ">= 0" if allow_zero else "> 0"
        raise ValueError(f"{name} (a bound of the loss' derivatives, a constant of the privacy proof) must be a "
                         f"finite number {bound}, got {value!r}. Fix: take it from the loss object "
                         f"(dplr.losses.get_loss(...).{name}).")
    return float(value)


def check_epsilon(epsilon) -> float:
    """Privacy parameter ε: a finite number > 0."""
    if isinstance(epsilon, numbers.Real) and not isinstance(epsilon, bool):
        if not np.isfinite(float(epsilon)) or float(epsilon) <= 0:
            raise ValueError(
                f"epsilon must be a finite number > 0, got {epsilon!r}. Smaller epsilon means stronger "
                f"privacy; for a non-private model use dplr.StandardLR instead of an infinite epsilon."
            )
    return check_positive_finite(epsilon, "epsilon")


def check_delta(delta) -> float:
    """Privacy parameter δ of (ε, δ)-DP: a finite number with 0 < δ < 1.

    δ bounds the probability of an unbounded privacy loss, so it must be far below 1/n (a mechanism that
    releases one record at random is (0, 1/n)-DP); 1e-5 or 1/n² are usual. ``delta=0`` asks for pure ε-DP,
    which no Gaussian mechanism gives.
    """
    if isinstance(delta, bool) or not isinstance(delta, numbers.Real) or not np.isfinite(float(delta)) \
            or not 0.0 < float(delta) < 1.0:
        raise ValueError(
            f"delta (the δ of (ε, δ)-differential privacy) must be a number with 0 < delta < 1, got {delta!r}. "
            f"Gaussian noise cannot give delta = 0 (pure ε-DP: use dplr.sensitivity_method or "
            f"dplr.objective_perturbation); choose delta far below 1/n, e.g. 1e-5 or 1/n**2."
        )
    return float(delta)


def check_lambda(lam) -> float:
    """Regularisation parameter λ: a finite number > 0 (the sensitivity bound 2/(nλ) needs λ > 0)."""
    if isinstance(lam, numbers.Real) and not isinstance(lam, bool):
        if not np.isfinite(float(lam)) or float(lam) <= 0:
            raise ValueError(
                f"lam (the regularisation parameter λ) must be a finite number > 0, got {lam!r}. "
                f"Both private algorithms need the λ/2·||w||² term to be strongly convex "
                f"(NIPS 2008, Corollary 2); try lam=0.01, the value the paper tuned."
            )
    return check_positive_finite(lam, "lam")


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


#: :func:`rows_outside_ball` decides this many rows at a time (its work arrays are a few times a chunk's size).
CHUNK_ROWS = 1 << 15


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
    radius = check_positive_finite(radius, "radius")
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
        # a square that underflows errs by at most 2**-1075: far below the screen's slack of (d + 1) u r**2 when
        # r >= 2**-400, so the screen holds for such rows too (and an overflowing square makes a row "near")
        squares = np.einsum("ij,ij->i", X, X)
        near = ~(squares <= radius * radius * (1.0 - 2.0 * _gamma(X.shape[1] + 2)))
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
        bad = np.flatnonzero(~np.isfinite(norms) | ((norms < _TINY) & np.any(X != 0.0, axis=1)))
        if bad.size:
            exponent = np.frexp(np.max(np.abs(X[bad]), axis=1))[1]
            norms[bad] = np.ldexp(np.linalg.norm(np.ldexp(X[bad], -exponent[:, None]), axis=1), exponent)
    return norms


def _check_radius(radius):
    """A radius the ball helpers can work with: finite, > 0 and within ``[2**-400, 2**400]``."""
    radius = check_positive_finite(radius, "radius")
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
    if not np.all(np.isfinite(X)):
        raise ValueError("X holds NaN or infinite values, which no projection onto the ball can bound. Fix: remove "
                         "or impute them first.")
    if X.size == 0:
        return X
    exponent = np.frexp(np.max(np.abs(X), axis=1))[1]  # the largest entry is f 2**exponent, 1/2 <= f < 1
    scaled = np.ldexp(X, -exponent[:, None])  # exact: entries below 1, norms at most sqrt(d)
    norms = np.linalg.norm(scaled, axis=1)
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


def check_rows_in_ball(X, radius: float = 1.0, *, dtype=None):
    r"""Return ``X`` as float64 with every row of norm at most ``radius``, or raise ``ValueError``.

    The rule: a row whose computed norm is at most :math:`r\,(1 + 4\epsilon)` (:data:`ROUNDING_ULPS` = 4,
    :math:`\epsilon` the machine epsilon of ``dtype``, the dtype the data came in: 2.2e-16 for float64, 1.2e-7
    for float32; float64's for integers) but whose norm exceeds :math:`r` is outside by rounding only -- e.g. a row
    divided by its own norm, or ``sklearn.preprocessing.Normalizer`` output in float32 -- and is projected onto the
    ball of radius :math:`r` in float64 (:func:`project_onto_ball`), so that the proofs' assumption
    :math:`\lVert x_i\rVert \le r` holds exactly, for the entries as real numbers (:func:`rows_outside_ball`
    decides it exactly: a computed norm of 1 can hide a true norm above 1), and ``numpy.linalg.norm`` of each row is
    at most :math:`r` too. A row beyond that computed bound *and* outside exactly is refused: nothing beyond rounding
    is rescaled silently. Returns ``X`` itself when no row moves. A row to project at a radius outside
    :math:`[2^{-400}, 2^{400}]` is refused as :func:`project_onto_ball` refuses it (rescale the data by a public
    constant instead).
    """
    radius = check_positive_finite(radius, "radius")
    dtype = np.dtype(np.float64 if dtype is None else dtype)
    eps = float(np.finfo(dtype).eps) if np.issubdtype(dtype, np.floating) else float(np.finfo(np.float64).eps)
    X = np.asarray(X, dtype=np.float64)
    if not np.all(np.isfinite(X)):  # NaN > radius is False: it would pass the test below
        raise ValueError(f"X holds NaN or infinite values; every record must be a finite vector of norm at most "
                         f"{radius!r}. Fix: remove or impute them before fitting.")
    norms = _row_norms(X)
    slack = radius * (1 + ROUNDING_ULPS * eps)
    too_long = np.flatnonzero(norms > slack)
    too_long = too_long[rows_outside_ball(X[too_long], radius)]  # a computed norm can also be above the true one
    if too_long.size:
        largest = float(norms[too_long].max())
        raise ValueError(
            f"{too_long.size} of {X.shape[0]} rows have Euclidean norm > {radius!r} (largest {largest!r}, "
            f"first at row {too_long[0]}: {float(norms[too_long[0]])!r}; the bound is {radius!r}, and rows within "
            f"rounding of the {dtype.name} input, up to {slack!r}, would be accepted). The privacy guarantee of "
            f"both algorithms assumes ||x_i|| <= 1 for every record (NIPS 2008, Section 2). {NORM_FIX}"
        )
    outside = rows_outside_ball(X, radius) | (norms > radius)  # the second for a user who checks with numpy
    if outside.any():
        X = X.copy()
        X[outside] = project_onto_ball(X[outside], radius)
    return X


def encode_binary_labels(y):
    """Map exactly two classes to {-1, +1}: ``classes_[0] -> -1``, ``classes_[1] -> +1``.

    ``classes_`` is ``numpy.unique(y)``, i.e. sorted, as in scikit-learn. So labels {0, 1} map
    0 -> -1 and 1 -> +1; {-1, +1} map to themselves; strings sort alphabetically.

    Returns
    -------
    y_signed : ndarray of float, values in {-1, +1}
    classes : ndarray of the two original labels
    """
    classes, y_index = np.unique(y, return_inverse=True)
    if classes.size == 1:
        raise ValueError(
            f"Only one class is present in y ({classes[0]}); these classifiers need exactly 2 classes "
            f"(1 class found). Fix: include examples of both labels."
        )
    if classes.size > 2:
        raise ValueError(
            f"Only binary classification is supported. y has {classes.size} classes "
            f"({', '.join(map(str, classes[:5]))}{', ...' if classes.size > 5 else ''}); these classifiers map two "
            f"labels to -1/+1. Fix: reduce the task to two classes (e.g. one-vs-rest) before fitting."
        )
    return np.where(y_index == 1, 1.0, -1.0), classes


def check_signed_data(X, y):
    """Return ``X`` (n, d) and ``y`` (n,) as float arrays; ``y`` must already be coded in {-1, +1}."""
    X = np.asarray(X, dtype=float)
    y = np.asarray(y, dtype=float)
    if X.ndim != 2 or y.shape != (X.shape[0],):
        raise ValueError(f"X must be (n, d) and y (n,), got {X.shape} and {y.shape}.")
    if not np.all(np.abs(y) == 1):
        raise ValueError("y must take values in {-1, +1}; code two labels with "
                         "dplr.validation.encode_binary_labels first.")
    return X, y


def check_training_data(X, y):
    r"""The data of both algorithms: a non-empty finite ``X`` (n, d) with rows :math:`\lVert x_i\rVert \le 1`
    and labels ``y`` (n,) in {-1, +1}. Returns float arrays (rows outside by rounding only projected, as
    :func:`check_rows_in_ball` states)."""
    dtype = getattr(X, "dtype", None)
    X = np.asarray(X, dtype=float)
    y = np.asarray(y, dtype=float)
    if X.ndim != 2 or X.shape[0] == 0:
        raise ValueError(f"X must be a non-empty 2-D array, got shape {X.shape}.")
    if y.shape != (X.shape[0],):
        raise ValueError(f"X has {X.shape[0]} rows but y has shape {y.shape}.")
    if not np.all(np.isfinite(X)):
        raise ValueError("X contains NaN or infinite values; remove or impute them (with data-independent rules).")
    if not np.all(np.abs(y) == 1):
        raise ValueError("y must take values in {-1, +1}; use dplr.validation.encode_binary_labels.")
    return check_rows_in_ball(X, dtype=dtype), y


def warn_privacy_leak(message: str) -> None:
    """Warn with :class:`PrivacyLeakWarning`, pointing at the caller of the function that calls this."""
    warnings.warn(message, PrivacyLeakWarning, stacklevel=3)

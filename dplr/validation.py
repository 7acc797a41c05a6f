"""Input checks shared by the mechanisms, the calibrations, the solver, the algorithms and the estimators.

Privacy code is security code: every check fails loudly with a message that names the problem and
says how to fix it, and nothing is altered silently (NIPS 2008, Section 2 assumes every record has
``||x_i|| <= 1``; the privacy proofs are void without it).

Each input is checked once, where it enters the package: a public function checks what it is given
and passes clean values on. Public functions that other public functions call take
``check_input=False`` from them (the scikit-learn convention), so a value is not checked twice on
one call.
"""
from __future__ import annotations

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


def _square_terms(x):
    """Three float64 arrays whose exact sum is ``x**2`` (``hi**2 + 2 hi lo + lo**2``, each product exact)."""
    hi, lo = _split(x)
    return hi * hi, 2.0 * (hi * lo), lo * lo


def _exact_excess_sign(rows, radius):
    r"""For rows of norm close to ``radius``: the sign of :math:`\sum_j x_j^2 - r^2` for the entries as real numbers.

    Each square is split into three float64 numbers that sum to it exactly (Veltkamp's split: no product rounds),
    :math:`r^2` likewise, and the terms are summed in double-double arithmetic (Ogita, Rump & Oishi, *Accurate sum
    and dot product*, SIAM J. Sci. Comput. 26, 2005, Algorithm 4.4), whose result errs by at most
    :math:`u|E| + \gamma_{m-1}^2\sum|t|` (their Proposition 4.5) for :math:`m` terms :math:`t` summing to :math:`E`:
    a result beyond :math:`\gamma_{m-1}^2\sum|t|` has the sign of :math:`E`. Rows it leaves undecided (a norm within
    about :math:`10^{-27}` of the radius, or entries so small that a square could underflow) are decided with
    Python's exact fractions. Returns an int array of -1, 0, 1."""
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
        # the non-zero entries packed left, as many columns as the most non-zeros of a row
        position = np.arange(row.size) - np.searchsorted(row, np.arange(n))[row]
        entries = np.zeros((n, int(position.max(initial=-1)) + 1))
        entries[row, position] = values
        entries = entries[fast]
        terms = [term for column in entries.T for term in _square_terms(column)]
        terms += [np.full(fast.size, -term) for term in _square_terms(np.float64(radius))]
        p, sigma, size = terms[0].copy(), np.zeros(fast.size), np.abs(terms[0])
        s, z, q = np.empty_like(p), np.empty_like(p), np.empty_like(p)
        for t in terms[1:]:  # TwoSum: p + t = s + q exactly (q = (p - (s - z)) + (t - z), z = s - p); q into sigma
            np.add(p, t, out=s)
            np.subtract(s, p, out=z)
            np.subtract(s, z, out=q)
            np.subtract(p, q, out=q)
            np.subtract(t, z, out=z)
            q += z
            sigma += q
            size += np.abs(t, out=z)
            p, s = s, p
        result = p + sigma
        # the proven bound, with size (a computed sum of |t|) and the rounding of this line covered by the factor 2
        bound = 2.0 * _gamma(len(terms)) ** 2 * size
        decided = np.abs(result) > bound
        sign[fast[decided]] = np.where(result[decided] > 0, 1, -1)
        by_fractions[fast[~decided]] = True
    r2 = Fraction(float(radius)) ** 2
    for i in np.flatnonzero(by_fractions):
        excess = sum(Fraction(float(v)) ** 2 for v in rows[i][rows[i] != 0.0]) - r2
        sign[i] = (excess > 0) - (excess < 0)
    return sign


def rows_outside_ball(X, radius: float = 1.0):
    r"""Which rows of ``X`` have Euclidean norm greater than ``radius``, *exactly*: the float64 entries taken as the
    real numbers they are, as the privacy proofs take them -- not as ``numpy.linalg.norm`` rounds them.

    A computed norm may be below the true one by a few units of roundoff, so a row of computed norm 1 can lie outside
    the unit ball (half of the rows a projection puts on the sphere do). The computed sum of squares :math:`s` of a
    row is within :math:`\gamma_d` (relative) of the true one :math:`S` (Higham, *Accuracy and Stability of Numerical
    Algorithms*, 2002, Section 4.2); rows with :math:`s \le r^2(1 - 2\gamma_{d+2})` are inside, and the
    others are decided exactly (``_exact_excess_sign``: error-free products, a double-double sum with a proven error
    bound, and exact fractions where that bound leaves the sign open). Returns a boolean array, one entry per row.
    ``X`` must be finite (as :func:`check_rows_in_ball` ensures).
    """
    radius = check_positive_finite(radius, "radius")
    X = np.asarray(X, dtype=np.float64)
    outside = np.zeros(X.shape[0], dtype=bool)
    if X.size == 0:
        return outside
    if not _TINY <= radius <= 1.0 / _TINY:  # r**2 could under- or overflow: no screen
        near = np.ones(X.shape[0], dtype=bool)
    else:
        # a square that underflows errs by at most 2**-1075: far below the screen's slack of (d + 1) u r**2 when
        # r >= 2**-400, so the screen holds for such rows too (and an overflowing square makes a row "near")
        squares = np.einsum("ij,ij->i", X, X)
        near = ~(squares <= radius * radius * (1.0 - 2.0 * _gamma(X.shape[1] + 2)))
    if near.all():
        outside[:] = _exact_excess_sign(X, radius) > 0
    elif near.any():
        outside[near] = _exact_excess_sign(X[near], radius) > 0
    return outside


def project_onto_ball(X, radius: float = 1.0):
    r"""Rows of ``X`` (float64) projected onto the ball of ``radius``: :math:`x \min(1, r/\lVert x\rVert)`.

    Guaranteed exactly: every row of the result has Euclidean norm at most ``radius`` for its float64 entries as real
    numbers (:func:`rows_outside_ball`), and ``numpy.linalg.norm(row) <= radius`` as well. A row that rounding leaves
    outside after the radial step is shrunk by a few units of roundoff at a time (factors :math:`1 - 2^{k}u`,
    :math:`k = 2, 3, \dots`) until it is inside; multiplying by a factor below 1 never lengthens an entry. Each row's
    image depends on that row alone. Returns a new array; refuses a radius that is not a finite number > 0, and rows
    that are not finite (no projection makes them meaningful).
    """
    radius = check_positive_finite(radius, "radius")
    X = np.array(X, dtype=np.float64)
    if not np.all(np.isfinite(X)):
        raise ValueError("X holds NaN or infinite values, which no projection onto the ball can bound. Fix: remove "
                         "or impute them first.")
    norms = np.linalg.norm(X, axis=1)
    outside = norms > radius
    X[outside] *= (radius / norms[outside])[:, None]

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
    decides it exactly: a computed norm of 1 can hide a true norm above 1). A row beyond that is refused: nothing
    beyond rounding is rescaled silently.
    """
    radius = check_positive_finite(radius, "radius")
    dtype = np.dtype(np.float64 if dtype is None else dtype)
    eps = float(np.finfo(dtype).eps) if np.issubdtype(dtype, np.floating) else float(np.finfo(np.float64).eps)
    X = np.asarray(X, dtype=np.float64)
    if not np.all(np.isfinite(X)):  # NaN > radius is False: it would pass the test below
        raise ValueError(f"X holds NaN or infinite values; every record must be a finite vector of norm at most "
                         f"{radius!r}. Fix: remove or impute them before fitting.")
    norms = np.linalg.norm(X, axis=1)
    slack = radius * (1 + ROUNDING_ULPS * eps)
    too_long = np.flatnonzero(norms > slack)
    if too_long.size:
        largest = float(norms[too_long].max())
        raise ValueError(
            f"{too_long.size} of {X.shape[0]} rows have Euclidean norm > {radius!r} (largest {largest!r}, "
            f"first at row {too_long[0]}: {float(norms[too_long[0]])!r}; the bound is {radius!r}, and rows within "
            f"rounding of the {dtype.name} input, up to {slack!r}, would be accepted). The privacy guarantee of "
            f"both algorithms assumes ||x_i|| <= 1 for every record (NIPS 2008, Section 2). {NORM_FIX}"
        )
    outside = rows_outside_ball(X, radius)
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

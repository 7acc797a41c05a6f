"""Input checks shared by the mechanisms, the calibrations, the solver, the algorithms and the estimators.

Privacy code is security code: every check fails loudly with a message that names the problem and
says how to fix it, and nothing is altered silently (NIPS 2008, Section 2 assumes every record has
``||x_i|| <= 1``; the privacy proofs are void without it).

Each input is checked once, where it enters the package: a public function checks what it is given
and passes clean values on. Public functions that other public functions call take
``check_input=False`` from them (the scikit-learn convention), so a value is not checked twice on
one call.

The records' norms (the unit ball: the exact test, the refusal, the projection) are :mod:`dplr.ball`'s.
"""
from __future__ import annotations

import numbers
import warnings

import numpy as np

from dplr.ball import check_rows_in_ball

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
    :func:`dplr.ball.check_rows_in_ball` states)."""
    dtype = getattr(X, "dtype", None)
    X = np.asarray(X, dtype=float)
    y = np.asarray(y, dtype=float)
    if X.ndim != 2 or X.shape[0] == 0:
        raise ValueError(f"X must be a non-empty 2-D array, got shape {X.shape}.")
    if y.shape != (X.shape[0],):
        raise ValueError(f"X has {X.shape[0]} rows but y has shape {y.shape}.")
    # NaN or infinite entries are refused within the ball check's pass over X (dplr.ball's sums of squares)
    X = check_rows_in_ball(X, dtype=dtype, not_finite="X contains NaN or infinite values; remove or impute them (with "
                                                      "data-independent rules).")
    if not np.all(np.abs(y) == 1):
        raise ValueError("y must take values in {-1, +1}; use dplr.validation.encode_binary_labels.")
    return X, y


def warn_privacy_leak(message: str) -> None:
    """Warn with :class:`PrivacyLeakWarning`, pointing at the caller of the function that calls this."""
    warnings.warn(message, PrivacyLeakWarning, stacklevel=3)

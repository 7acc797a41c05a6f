r"""Bringing records into the unit ball, with and without leaking privacy.

Both algorithms assume :math:`\lVert x_i\rVert \le 1` (NIPS 2008, Section 2). There are two ways
to get there:

* :func:`clip_to_unit_ball` maps each row on its own: rows inside the ball are unchanged (those within
  :math:`\gamma_d` of its surface are shrunk by a few units of roundoff, :func:`dplr.ball.project_onto_ball`), rows
  outside are projected radially onto its surface. The map does not look at the other records, so
  it is a fixed per-record transformation and the privacy guarantee carries over unchanged.
  Combine it with :func:`scale_by_public_bounds`, which divides each column by a bound that the user
  knows *without looking at the data* (a measuring range, a documented maximum).
* :func:`scale_by_max_norm` divides by the largest row norm *of the data*. That scale depends on
  every record (changing one record can change it), so the model trained afterwards is no longer
  ε-DP with respect to the original records. It warns with :class:`~dplr.validation.PrivacyLeakWarning`.
"""
from __future__ import annotations

import numpy as np
from scipy import sparse

from dplr.ball import check_rows_in_ball, project_onto_ball
from dplr.validation import check_positive_finite, warn_privacy_leak

__all__ = ["clip_to_unit_ball", "scale_by_public_bounds", "scale_by_max_norm", "append_constant_feature"]


def _as_finite_matrix(X, name):
    if sparse.issparse(X):
        raise TypeError(
            f"{name} takes a dense array, got a scipy sparse matrix. Fix: convert with X.toarray() (the dplr "
            f"estimators take dense input only; their data are low-dimensional)."
        )
    X = np.asarray(X, dtype=float)
    if X.ndim != 2:
        raise ValueError(f"X must be a 2-D array (n, d), got shape {X.shape}.")
    if not np.all(np.isfinite(X)):
        raise ValueError("X contains NaN or infinite values; remove or impute them first.")
    return X


def clip_to_unit_ball(X, radius: float = 1.0):
    r"""Project each row onto the ball of the given radius: :math:`x \mapsto x \min(1, r/\lVert x\rVert)`.

    Data-independent: the image of a row depends on that row alone. Returns a new float64 array in which
    every row has norm at most ``radius`` exactly, for its float64 entries as real numbers, and
    ``numpy.linalg.norm(row) <= radius`` in floating point (:func:`dplr.ball.project_onto_ball`). Sparse input is refused (``TypeError``): convert it with
    ``X.toarray()``.
    """
    radius = check_positive_finite(radius, "radius")
    return project_onto_ball(_as_finite_matrix(X, "clip_to_unit_ball"), radius)


def scale_by_public_bounds(X, bounds, centre=None):
    r"""Map column :math:`j` to :math:`(x_{ij} - c_j)/B_j`, with *public* :math:`B_j \ge |x_{ij} - c_j|`.

    ``bounds`` (:math:`B`) and ``centre`` (:math:`c`, default 0) must not be computed from the private
    data: a feature known to lie in :math:`[a_j, b_j]` (a measuring range, a documented maximum) has
    ``centre = (a + b)/2`` and ``bounds = (b - a)/2``, and is mapped onto :math:`[-1, 1]`. Centring matters:
    both algorithms fit separators through the origin, so uncentred positive features (raw measurements) give a
    poor model. Values beyond a bound are not altered silently: they raise ``ValueError``. Follow with a
    division by ``sqrt(d)`` (every row then fits) or :func:`clip_to_unit_ball`.
    """
    X = _as_finite_matrix(X, "scale_by_public_bounds")
    bounds = np.asarray(bounds, dtype=float)
    if bounds.shape != (X.shape[1],) or not np.all(np.isfinite(bounds)) or np.any(bounds <= 0):
        raise ValueError(f"bounds must be {X.shape[1]} positive finite numbers, got shape {bounds.shape}.")
    centre = np.zeros(X.shape[1]) if centre is None else np.asarray(centre, dtype=float)
    if centre.shape != (X.shape[1],) or not np.all(np.isfinite(centre)):
        raise ValueError(f"centre must be {X.shape[1]} finite numbers, got shape {centre.shape}.")
    # a value at its documented bound can round past it (x - (a + b)/2 against (b - a)/2 errs by a few ulps of the
    # larger of x, the centre and the bound): it is on the bound, and is put back on it; nothing beyond rounding moves
    rounding = 4 * np.finfo(float).eps * (np.abs(X) + np.abs(centre) + bounds)
    X = X - centre
    scaled = X / bounds
    outside = np.argwhere(np.abs(X) > bounds + rounding)
    if outside.size:
        i, j = outside[0]
        raise ValueError(
            f"{len(outside)} values exceed their public bound (first: row {i}, column {j}, "
            f"|{X[i, j]!r}| > {bounds[j]!r}, after subtracting the centre). Fix: use a bound that really holds for every record, "
            f"or clip the column to [-bound, bound] explicitly (np.clip) and say so."
        )
    return np.clip(scaled, -1.0, 1.0)


def append_constant_feature(X, scale):
    r"""Append a constant feature at a public scale :math:`s`: :math:`x \mapsto (\sqrt{1 - s^2}\,x,\ s)`.

    Both algorithms fit separators through the origin (NIPS 2008, Section 2); a constant feature gives them an
    intercept. Rows in the unit ball stay in it, :math:`(1 - s^2)\lVert x\rVert^2 + s^2 \le 1`, so the algorithms'
    guarantees carry over: the map sends each record to a record, with :math:`s` fixed *without looking at the data*
    (neighbouring data sets go to neighbouring data sets). The last weight :math:`w_{d+1}` acts as an intercept
    :math:`b = s\,w_{d+1}`, regularised as :math:`\lambda b^2/(2s^2)` beside the other weights'
    :math:`\lambda \lVert w\rVert^2/(2(1 - s^2))` in the original units: a larger :math:`s` frees the intercept and
    shrinks the other features, whose signal then competes with more noise. This is the KDDCup99 ``"constant"``
    coding (:func:`~dplr.datasets.kddcup99.kddcup99_features`) with a public scale; an intercept regularised on its own would
    need a privacy proof of its own, which the book does not give.

    ``X``'s rows must lie in the unit ball (:func:`dplr.ball.check_rows_in_ball`: refused beyond rounding); a row
    the float64 product leaves outside by rounding is projected back (:func:`dplr.ball.project_onto_ball`), so every
    returned row is in the unit ball exactly (its entries, the constant among them, move by a few ulps). ``scale``
    must be in (0, 1).
    """
    X = check_rows_in_ball(_as_finite_matrix(X, "append_constant_feature"))
    scale = check_positive_finite(scale, "scale")
    if not scale < 1.0:
        raise ValueError(f"scale must be in (0, 1), got {scale!r}: at 1 every other feature would be multiplied "
                         f"by 0. Fix: a public constant such as 0.5.")
    out = np.hstack([np.sqrt(1.0 - scale * scale) * X, np.full((X.shape[0], 1), scale)])
    return check_rows_in_ball(out)


def scale_by_max_norm(X):
    r"""Divide every row by :math:`\max_i \lVert x_i\rVert` of *this data*. Leaks privacy: warns.

    Provided because published pipelines do this (it makes every norm at most 1), so that its
    effect can be shown; do not use it before a private release.
    """
    X = _as_finite_matrix(X, "scale_by_max_norm")
    warn_privacy_leak(
        "scale_by_max_norm divides by the largest row norm of the data itself: that scale depends on "
        "every record, so a model trained on the result is not ε-DP for the original records. Use "
        "scale_by_public_bounds with data-independent bounds and clip_to_unit_ball instead."
    )
    largest = np.linalg.norm(X, axis=1).max(initial=0.0)
    return X / largest if largest > 0 else X.copy()

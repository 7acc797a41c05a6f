r"""Simulated data of NIPS 2008, Section 6 (p. 6), with the readings the text leaves open.

The paper's two sentences:

* **Separable** ("Uniform, margin=0.03"): "We used a uniform distribution on the hypersphere in 10
  dimensions with zero mass within a small margin (0.03) from the generating linear separator."
* **Unseparable** ("uniform with noise 0.2 in margin 0.1"): "We sampled data from the surface of the
  unit ball in 10 dimensions, and labeled it with a classifier through the origin. In the band of
  margin :math:`\le 0.1` with respect to the perfect classifier, we performed random label flipping
  with probability 0.2."

Three things are left open; each is a keyword option here, and the replication chapter measures
what each changes.

``support`` -- where the points live.
    ``"sphere"`` (default): uniform on the surface :math:`S^{d-1} = \{x : \lVert x\rVert = 1\}`.
    Both sentences say "hypersphere" / "surface of the unit ball", and the paper's motivation ("the
    classification of a vector by a linear separator through the origin depends only on its angle,
    not its norm") fits points of norm 1. ``"ball"``: uniform in the solid ball
    :math:`\{x : \lVert x\rVert \le 1\}` (direction uniform, radius :math:`U^{1/d}`), the reading
    of "unit ball" without "surface".

``margin_method`` -- how the band :math:`|u^\top x| < \text{margin}` is emptied (separable data).
    ``"rejection"`` (default): points falling in the band are redrawn. The result is the uniform
    distribution conditioned on leaving the band -- "uniform ... with zero mass within a margin" read
    literally. ``"projection"``: points in the band are moved to the nearer edge of the band
    (:math:`u^\top x \to \pm\text{margin}`, the orthogonal part rescaled so that :math:`\lVert
    x\rVert` is unchanged); this puts probability mass *on* the band's edges. ``"shift"``: every
    point is pushed away from the separator, :math:`|u^\top x|` mapped affinely from
    :math:`[0, \lVert x\rVert]` onto :math:`[\text{margin}, \lVert x\rVert]` at fixed norm; this
    empties the band by opening a gap and leaves no extra mass at its edges.

``separator`` -- the generating separator :math:`u` (a unit vector; the separator is the
    hyperplane :math:`u^\top x = 0` through the origin). ``None`` (default): :math:`e_1`.
    ``"random"``: uniform on the sphere, drawn from the same random stream. A unit vector: itself.
    The uniform distribution on the sphere or ball is rotation invariant, so the choice does not change
    the joint law of :math:`(u^\top x, y)`, hence not the law of any experiment's result; with a fixed
    seed the particular numbers differ.

Labels are :math:`y = \operatorname{sgn}(u^\top x) \in \{-1, +1\}` (with :math:`\operatorname{sgn}(0)
= +1`, a probability-zero event). All rows satisfy :math:`\lVert x\rVert \le 1`, the condition of
both algorithms' privacy proofs.
"""
from __future__ import annotations

import numpy as np
from scipy import stats

from dplr.ball import uniform_in_ball
from dplr.validation import check_random_state

__all__ = [
    "SUPPORTS",
    "MARGIN_METHODS",
    "sample_unit_sphere",
    "generating_separator",
    "make_separable",
    "make_unseparable",
    "band_probability",
]

#: Where the records lie (``support``), on the sphere or in the ball.
SUPPORTS = ("sphere", "ball")
#: The values of ``margin_method`` (see the module's docstring).
MARGIN_METHODS = ("rejection", "projection", "shift")


def sample_unit_sphere(n, d, random_state=None):
    """``n`` points uniform on the unit sphere in R^d (normalised standard Gaussians)."""
    rng = check_random_state(random_state)
    points = rng.standard_normal((n, d))
    return points / np.linalg.norm(points, axis=1, keepdims=True)


def _sample(n, d, support, rng):
    if support == "sphere":
        return sample_unit_sphere(n, d, rng)
    if support == "ball":
        return uniform_in_ball(rng, (n, d))
    raise ValueError(f"support must be one of {SUPPORTS}, got {support!r}.")


def generating_separator(d, separator=None, random_state=None):
    """The unit normal :math:`u` of the generating separator: ``None`` -> e_1, ``"random"``, or a unit vector."""
    if separator is None:
        u = np.zeros(d)
        u[0] = 1.0
        return u
    if isinstance(separator, str):
        if separator == "random":
            return sample_unit_sphere(1, d, check_random_state(random_state))[0]
        raise ValueError(f"separator must be None, 'random' or a unit vector, got {separator!r}.")
    u = np.asarray(separator, dtype=float)
    if u.shape != (d,) or not np.isclose(np.linalg.norm(u), 1.0):
        raise ValueError(f"separator must be a unit vector of length {d}, None (e_1) or 'random'.")
    return u


def _labels(X, u):
    return np.where(X @ u >= 0, 1.0, -1.0)


def _move_out_of_band(X, u, margin, method):
    r"""Apply the ``projection`` or ``shift`` reading.

    Each row :math:`x = t u + x_\perp` (:math:`t = u^\top x`, norm :math:`r`) gets a new
    :math:`t'` with the sign of :math:`t`, and :math:`x_\perp` is rescaled so that the norm stays
    :math:`r`. ``projection``: :math:`|t'| = \text{margin}` for rows with :math:`|t| <` margin, others
    unchanged. ``shift``: :math:`|t'| = \text{margin} + (r - \text{margin})\,|t|/r` for every row,
    an affine compression of :math:`[0, r]` onto :math:`[\text{margin}, r]`. (A ball point with
    :math:`r <` margin cannot leave the band at its norm; it is placed at :math:`\pm\text{margin}\,u`.)
    """
    X = np.array(X, dtype=float)
    scores = X @ u
    rows = np.flatnonzero(np.abs(scores) < margin) if method == "projection" else np.arange(X.shape[0])
    t, x = scores[rows], X[rows]
    signs = np.where(t >= 0, 1.0, -1.0)
    norms = np.linalg.norm(x, axis=1)
    if method == "projection":
        new_abs_t = np.full(rows.size, float(margin))
    else:
        safe = np.maximum(norms, np.finfo(float).tiny)
        new_abs_t = np.where(norms > margin, margin + (norms - margin) * np.abs(t) / safe, margin)
    new_norms = np.maximum(norms, margin)
    perp = x - t[:, None] * u[None, :]
    perp_norm = np.linalg.norm(perp, axis=1)
    target = np.sqrt(np.maximum(new_norms**2 - new_abs_t**2, 0.0))
    factor = np.divide(target, perp_norm, out=np.zeros_like(target), where=perp_norm > 0)
    X[rows] = perp * factor[:, None] + (new_abs_t * signs)[:, None] * u[None, :]
    return X


def make_separable(n, d=10, margin=0.03, separator=None, random_state=None, *, support="sphere",
                   margin_method="rejection"):
    r"""Separable data: uniform on :math:`S^{d-1}` (or the ball) with no mass in :math:`|u^\top x| < \text{margin}`.

    NIPS 2008, Section 6 (p. 6), "Uniform, margin=0.03". Returns ``X`` of shape (n, d) and
    ``y`` in {-1, +1} :math:`= \operatorname{sgn}(u^\top x)`. See the module docstring for
    ``support``, ``margin_method`` and ``separator``. With the defaults (sphere, rejection, :math:`e_1`)
    every row has norm 1 and the data are linearly separable through the origin with margin
    ``margin``.
    """
    if margin_method not in MARGIN_METHODS:
        raise ValueError(f"margin_method must be one of {MARGIN_METHODS}, got {margin_method!r}.")
    if support not in SUPPORTS:
        raise ValueError(f"support must be one of {SUPPORTS}, got {support!r}.")
    if not 0 <= margin < 1:
        raise ValueError(f"margin must be in [0, 1), got {margin!r}.")
    rng = check_random_state(random_state)
    u = generating_separator(d, separator, rng)
    if margin_method == "rejection":
        kept = np.empty((0, d))
        while kept.shape[0] < n:
            batch = _sample(max(2 * (n - kept.shape[0]), 64), d, support, rng)
            kept = np.vstack([kept, batch[np.abs(batch @ u) >= margin]])
        X = kept[:n]
    else:
        X = _move_out_of_band(_sample(n, d, support, rng), u, margin, margin_method)
    return X, _labels(X, u)


def make_unseparable(n, d=10, margin=0.1, flip_probability=0.2, separator=None, random_state=None, *,
                     support="sphere"):
    r"""Unseparable data: uniform on :math:`S^{d-1}` (or the ball), labels :math:`\operatorname{sgn}(u^\top x)`
    flipped independently with probability ``flip_probability`` where :math:`|u^\top x| \le \text{margin}`.

    NIPS 2008, Section 6 (p. 6), "Unseparable (uniform with noise 0.2 in margin 0.1)". The Bayes
    error is ``flip_probability`` times the probability of the band (about 0.047 on the sphere and
    0.052 in the ball for d = 10; see :func:`band_probability`).
    """
    if not 0 <= flip_probability <= 1:
        raise ValueError(f"flip_probability must be in [0, 1], got {flip_probability!r}.")
    rng = check_random_state(random_state)
    u = generating_separator(d, separator, rng)
    X = _sample(n, d, support, rng)
    scores = X @ u
    y = _labels(X, u)
    flip = (np.abs(scores) <= margin) & (rng.random(n) < flip_probability)
    y[flip] *= -1
    return X, y


def band_probability(margin, d=10, support="sphere"):
    r""":math:`P(|u^\top x| \le \text{margin})` for :math:`x` uniform on the sphere or in the ball of R^d.

    :math:`t = u^\top x` has density proportional to :math:`(1-t^2)^{(d-3)/2}` on the sphere and
    :math:`(1-t^2)^{(d-1)/2}` in the ball, on :math:`[-1, 1]`; i.e. :math:`(t+1)/2` is
    Beta(a, a) with :math:`a = (d-1)/2` (sphere) or :math:`(d+1)/2` (ball).
    """
    if support not in SUPPORTS:
        raise ValueError(f"support must be one of {SUPPORTS}, got {support!r}.")
    a = (d - 1) / 2 if support == "sphere" else (d + 1) / 2
    law = stats.beta(a, a, loc=-1, scale=2)
    return float(law.cdf(margin) - law.cdf(-margin))


r"""Simulated data of NIPS 2008, Section 6 (p. 6).

* **Separable** ("Uniform, margin=0.03"): "a uniform distribution on the hypersphere in 10
  dimensions with zero mass within a small margin (0.03) from the generating linear separator".
* **Unseparable** ("uniform with noise 0.2 in margin 0.1"): "data from the surface of the unit ball
  in 10 dimensions, labeled with a classifier through the origin. In the band of margin ≤ 0.1 with
  respect to the perfect classifier, we performed random label flipping with probability 0.2."

Default reading (see the replication chapter for the alternatives): points uniform on the *surface*
of the unit sphere :math:`S^{d-1}` (both sentences say hypersphere / surface), the generating
separator :math:`u` a unit vector through the origin, labels :math:`\operatorname{sgn}(u^\top x)`,
and the margin emptied by *rejection* (redraw points with :math:`|u^\top x| < 0.03`), which keeps
the distribution uniform on the rest of the sphere. Every row has :math:`\lVert x\rVert = 1`.
"""
from __future__ import annotations

import numpy as np

from dplr.validation import check_random_state

__all__ = ["sample_unit_sphere", "make_separable", "make_unseparable"]


def sample_unit_sphere(n, d, random_state=None):
    """``n`` points uniform on the unit sphere in R^d (normalised standard Gaussians)."""
    rng = check_random_state(random_state)
    points = rng.standard_normal((n, d))
    return points / np.linalg.norm(points, axis=1, keepdims=True)


def _separator(d, separator, rng):
    if separator is None:
        u = np.zeros(d)
        u[0] = 1.0
        return u
    if isinstance(separator, str) and separator == "random":
        return sample_unit_sphere(1, d, rng)[0]
    u = np.asarray(separator, dtype=float)
    if u.shape != (d,) or not np.isclose(np.linalg.norm(u), 1.0):
        raise ValueError(f"separator must be a unit vector of length {d}, None (e_1) or 'random'.")
    return u


def make_separable(n, d=10, margin=0.03, separator=None, random_state=None):
    r"""Separable data: uniform on :math:`S^{d-1}` outside the band :math:`|u^\top x| < \text{margin}`.

    Returns ``X`` (n, d) with unit rows, ``y`` in {-1, +1} = :math:`\operatorname{sgn}(u^\top x)`.
    ``separator``: ``None`` for :math:`e_1`, ``"random"`` for a uniform random unit vector, or a
    unit vector. By the rotation invariance of the uniform distribution the choice does not change
    the distribution of :math:`(u^\top x, y)`.
    """
    rng = check_random_state(random_state)
    u = _separator(d, separator, rng)
    kept = np.empty((0, d))
    while kept.shape[0] < n:
        batch = sample_unit_sphere(max(2 * (n - kept.shape[0]), 64), d, rng)
        kept = np.vstack([kept, batch[np.abs(batch @ u) >= margin]])
    X = kept[:n]
    return X, np.where(X @ u >= 0, 1.0, -1.0)


def make_unseparable(n, d=10, margin=0.1, flip_probability=0.2, separator=None, random_state=None):
    r"""Unseparable data: uniform on :math:`S^{d-1}`, labels :math:`\operatorname{sgn}(u^\top x)`
    flipped with probability ``flip_probability`` where :math:`|u^\top x| \le \text{margin}`."""
    rng = check_random_state(random_state)
    u = _separator(d, separator, rng)
    X = sample_unit_sphere(n, d, rng)
    scores = X @ u
    y = np.where(scores >= 0, 1.0, -1.0)
    flip = (np.abs(scores) <= margin) & (rng.random(n) < flip_probability)
    y[flip] *= -1
    return X, y

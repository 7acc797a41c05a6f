r"""Noise mechanisms: the vector Laplace ("Gamma-norm") distribution and the Laplace mechanism.

Both algorithms of Chaudhuri & Monteleoni (NIPS 2008) draw a noise vector from the density

.. math::

    h(\eta) \propto e^{-\beta \lVert \eta \rVert}, \qquad \eta \in \mathbb{R}^d,

with :math:`\beta = n\lambda\varepsilon/2` for Algorithm 1 (Section 3) and
:math:`\beta = \varepsilon/2` for Algorithm 2 (Section 4). In polar coordinates
:math:`\eta = r u` with :math:`r \ge 0` and :math:`u` on the unit sphere, the volume element is
:math:`r^{d-1}\,dr\,du`, so the density factorises into :math:`r^{d-1} e^{-\beta r}` (a Gamma
density with shape :math:`d` and scale :math:`1/\beta`) times a constant in :math:`u` (the uniform
distribution on the sphere). This module samples exactly that way: norm from
:math:`\Gamma(d, 1/\beta)`, direction from a normalised standard Gaussian vector.

Adding such noise with :math:`\beta = \varepsilon / S` to a vector-valued function of L2
sensitivity :math:`S` gives ε-differential privacy (Dwork, McSherry, Nissim & Smith 2006): for two
centres :math:`c_1, c_2` with :math:`\lVert c_1 - c_2\rVert \le S`, the log-ratio of the two
densities at any output :math:`t` is :math:`\beta(\lVert t - c_2\rVert - \lVert t - c_1\rVert)`,
bounded by :math:`\beta \lVert c_1 - c_2\rVert \le \varepsilon` by the triangle inequality.
"""
from __future__ import annotations

import numpy as np
from scipy import special, stats

from dplr.validation import check_positive_finite, check_random_state

__all__ = [
    "sample_vector_laplace",
    "vector_laplace_norm_distribution",
    "vector_laplace_log_density",
    "laplace_mechanism",
    "vector_laplace_privacy_loss",
]


def _check_dim(dim) -> int:
    if isinstance(dim, bool) or not isinstance(dim, (int, np.integer)) or dim < 1:
        raise ValueError(f"dim must be a positive integer, got {dim!r}.")
    return int(dim)


def sample_vector_laplace(beta, dim, size=None, random_state=None):
    r"""Draw vectors from the density :math:`h(\eta) \propto e^{-\beta\lVert\eta\rVert}` on R^dim.

    The norm is drawn from :math:`\Gamma(\text{shape}=d, \text{scale}=1/\beta)` and the direction
    uniformly on the unit sphere :math:`S^{d-1}` (NIPS 2008, Algorithm 1 step 2 and Algorithm 2
    step 1).

    Parameters
    ----------
    beta : float
        Rate :math:`\beta > 0` of the density (e.g. :math:`n\lambda\varepsilon/2` for Algorithm 1).
    dim : int
        Dimension :math:`d`.
    size : int or None
        Number of vectors. ``None`` returns one vector of shape ``(dim,)``; an integer ``k``
        returns an array of shape ``(k, dim)``.
    random_state : None, int or numpy.random.Generator
        Source of randomness.

    Returns
    -------
    numpy.ndarray
    """
    beta = check_positive_finite(beta, "beta")
    dim = _check_dim(dim)
    rng = check_random_state(random_state)
    n_draws = 1 if size is None else int(size)
    if n_draws < 0:
        raise ValueError(f"size must be non-negative, got {size!r}.")
    norms = rng.gamma(shape=dim, scale=1.0 / beta, size=n_draws)
    directions = rng.standard_normal((n_draws, dim))
    directions /= np.linalg.norm(directions, axis=1, keepdims=True)
    draws = norms[:, None] * directions
    return draws[0] if size is None else draws


def vector_laplace_norm_distribution(beta, dim):
    r"""The law of :math:`\lVert\eta\rVert`: ``scipy.stats.gamma(a=dim, scale=1/beta)`` (frozen)."""
    beta = check_positive_finite(beta, "beta")
    return stats.gamma(a=_check_dim(dim), scale=1.0 / beta)


def vector_laplace_log_density(eta, beta):
    r"""Log of the normalised density :math:`h(\eta) = \beta^d\,\Gamma(d/2) / (2\pi^{d/2}\Gamma(d))\,e^{-\beta\lVert\eta\rVert}`.

    The constant follows from integrating in polar coordinates: the surface area of
    :math:`S^{d-1}` is :math:`2\pi^{d/2}/\Gamma(d/2)` and
    :math:`\int_0^\infty r^{d-1}e^{-\beta r}dr = \Gamma(d)/\beta^d`.
    ``eta`` has shape ``(..., d)``.
    """
    beta = check_positive_finite(beta, "beta")
    eta = np.asarray(eta, dtype=float)
    d = eta.shape[-1]
    log_const = (
        d * np.log(beta) + special.gammaln(d / 2) - np.log(2.0) - (d / 2) * np.log(np.pi) - special.gammaln(d)
    )
    return log_const - beta * np.linalg.norm(eta, axis=-1)


def laplace_mechanism(value, sensitivity, epsilon, random_state=None):
    r"""Release ``value + eta`` with :math:`\eta \propto e^{-(\varepsilon/S)\lVert\eta\rVert}`.

    ε-differentially private when ``sensitivity`` :math:`S` bounds the L2 change of ``value`` between
    neighbouring data sets (Dwork et al. 2006; NIPS 2008, Section 2). A scalar ``value`` is treated
    as a 1-vector, for which this is the classical Laplace mechanism with scale :math:`S/\varepsilon`.
    """
    sensitivity = check_positive_finite(sensitivity, "sensitivity")
    epsilon = check_positive_finite(epsilon, "epsilon")
    value = np.asarray(value, dtype=float)
    flat = np.atleast_1d(value)
    noise = sample_vector_laplace(epsilon / sensitivity, flat.shape[-1], random_state=random_state)
    return (flat + noise).reshape(value.shape)


def vector_laplace_privacy_loss(output, centre_1, centre_2, beta):
    r"""Privacy loss :math:`\log h(t - c_1)/h(t - c_2) = \beta(\lVert t-c_2\rVert - \lVert t-c_1\rVert)`.

    ``output`` may hold many points, shape ``(..., d)``. Its supremum over ``t`` is
    :math:`\beta\lVert c_1 - c_2\rVert`, reached on the ray from :math:`c_1` away from :math:`c_2`.
    """
    output = np.asarray(output, dtype=float)
    return beta * (np.linalg.norm(output - centre_2, axis=-1) - np.linalg.norm(output - centre_1, axis=-1))

r"""Scores for the black-box audit: maps from outputs to one number, large meaning "looks like :math:`D'`".

Thresholding a score gives the audit's events (:mod:`dplr.analysis.audit`): a projection gives
half-spaces, a histogram of the projection unions of bins (an estimate of the likelihood-ratio event),
and the floating-point grid score events no correct real-valued mechanism can produce in floating
point (Mironov 2012).
"""
from __future__ import annotations

from typing import Callable

import numpy as np

__all__ = ["projection_score", "histogram_score", "float_grid_score"]


def projection_score(direction) -> Callable[[np.ndarray], np.ndarray]:
    r"""The score :math:`t \mapsto \langle t, e\rangle` with :math:`e` = ``direction`` normalised (a 1-D projection)."""
    e = np.asarray(direction, dtype=float).ravel()
    norm = np.linalg.norm(e)
    if not np.isfinite(norm) or norm == 0:
        raise ValueError("the projection direction must be a non-zero finite vector.")
    e = e / norm

    def score(outputs):
        return np.asarray(outputs, dtype=float).reshape(-1, e.size) @ e

    return score


def histogram_score(scores, scores_prime, n_bins=100, then=None) -> Callable[[np.ndarray], np.ndarray]:
    r"""A score learned from selection runs: the log-ratio of two histograms of 1-D scores.

    Bin edges are ``n_bins`` quantiles of the pooled ``scores`` (runs on :math:`D`) and ``scores_prime``
    (runs on :math:`D'`); a bin's score is :math:`\log\big((c'_j + \frac12)/(c_j + \frac12)\big)` with
    :math:`c_j, c'_j` the two counts. Thresholding it gives events that are unions of bins, an estimate of
    the Neyman–Pearson (likelihood-ratio) event. The returned callable maps outputs to scores: first
    through ``then`` (e.g. a :func:`projection_score`) if given, else as 1-D values.
    """
    s = np.asarray(scores, dtype=float).ravel()
    s_p = np.asarray(scores_prime, dtype=float).ravel()
    inner = np.unique(np.quantile(np.r_[s, s_p], np.linspace(0.0, 1.0, int(n_bins) + 1)[1:-1]))
    counts = np.bincount(np.searchsorted(inner, s, side="right"), minlength=inner.size + 1)
    counts_p = np.bincount(np.searchsorted(inner, s_p, side="right"), minlength=inner.size + 1)
    log_ratio = np.log(counts_p + 0.5) - np.log(counts + 0.5)

    def score(outputs):
        values = then(outputs) if then is not None else np.asarray(outputs, dtype=float).ravel()
        return log_ratio[np.searchsorted(inner, values, side="right")]

    return score


def float_grid_score(centre) -> Callable[[np.ndarray], np.ndarray]:
    r"""A least-significant-bits score (Mironov 2012): 1 for outputs that :math:`c + \eta` cannot produce in floating point.

    For a 1-D release :math:`t = \mathrm{fl}(c + \eta)` with a float centre :math:`c \ne 0` and *any* float
    noise :math:`\eta`: let :math:`2^e \le |c| < 2^{e+1}` and :math:`u` be the spacing of floats at
    :math:`|c|` (``numpy.spacing``). If :math:`|t| < r = \min(|c| - 2^e, 2^e)`, then (rounding being
    monotone) :math:`|\eta| > 2^e`, so :math:`\eta` and :math:`c` are both integer multiples of :math:`u`, and
    so is their exact sum; its magnitude is below :math:`2^e`, so it is representable and :math:`t`, equal to
    it, is a multiple of :math:`u`. The score is
    1 on :math:`\{|t| < r,\ t/u \notin \mathbb{Z}\}` -- outputs that prove the centre was *not*
    :math:`c` -- and 0 elsewhere. Over the reals the event has positive probability under every centre;
    in floating point it has probability 0 under :math:`c`.
    """
    c = float(np.asarray(centre, dtype=float).ravel()[0])
    if c == 0 or not np.isfinite(c):
        raise ValueError("the centre must be a finite non-zero float.")
    low = 2.0 ** np.floor(np.log2(abs(c)))
    radius, spacing = min(abs(c) - low, low), float(np.spacing(abs(c)))

    def score(outputs):
        t = np.asarray(outputs, dtype=float).reshape(len(outputs), -1)[:, 0]
        off_grid = np.mod(t / spacing, 1.0) != 0.0  # t / spacing is exact: spacing is a power of two
        return ((np.abs(t) < radius) & off_grid).astype(float)

    return score

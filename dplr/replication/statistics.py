r"""Small statistics helpers for the replication: t-intervals over folds and the fold jackknife.

The experiments' unit of replication is the fold: each fold's result (e.g. the test error averaged
over its 200 restarts) is one value, and the five values give the spread. Intervals use Student's
t with :math:`k - 1` degrees of freedom (``scipy.stats.t``).
"""
from __future__ import annotations

import numpy as np
from scipy import stats

__all__ = ["t_interval", "jackknife_se", "t_quantile", "paired_fold_difference", "central_range", "holm",
           "paired_t_test", "paired_signed_rank_test"]


def t_quantile(level, df):
    """Two-sided quantile :math:`t_{(1+\\text{level})/2,\\ \\text{df}}`."""
    return float(stats.t.ppf(0.5 + level / 2.0, df))


def t_interval(values, level=0.95):
    r"""Student-t interval :math:`\bar v \pm t_{(1+\text{level})/2,\,k-1}\, s/\sqrt k` for the mean of ``values``.

    With zero spread (e.g. every fold has test error 0) the interval is the single point :math:`\bar v`.
    """
    values = np.asarray(values, dtype=float).ravel()
    k = values.size
    if k < 2:
        raise ValueError("a t-interval needs at least two values.")
    mean = float(values.mean())
    half = t_quantile(level, k - 1) * float(values.std(ddof=1)) / np.sqrt(k)
    return mean - half, mean + half


def jackknife_se(blocks, statistic):
    r"""Leave-one-block-out jackknife standard error of ``statistic(blocks)``.

    ``blocks`` is an array whose first axis indexes the :math:`k` blocks (folds). With
    :math:`\hat\theta_{(i)}` the statistic without block :math:`i`,

    .. math:: \widehat{\mathrm{se}} = \sqrt{\tfrac{k-1}{k}\textstyle\sum_i (\hat\theta_{(i)} - \bar\theta_{(\cdot)})^2}.

    For the mean of the fold means this is exactly :math:`s/\sqrt k` (Efron & Tibshirani 1993, §11.2).
    """
    blocks = np.asarray(blocks, dtype=float)
    k = blocks.shape[0]
    if k < 2:
        raise ValueError("the jackknife needs at least two blocks.")
    leave_out = np.array([statistic(np.delete(blocks, i, axis=0)) for i in range(k)], dtype=float)
    return float(np.sqrt((k - 1) / k * np.sum((leave_out - leave_out.mean()) ** 2)))


def paired_fold_difference(errors_a, errors_b, level=0.95):
    r"""Fold-paired difference of mean errors, b minus a: ``(mean, low, high)`` with a Student-t interval.

    ``errors_a`` and ``errors_b`` are ``(folds, restarts)`` arrays on the same folds; each fold's mean
    error is one value, and the :math:`k` differences of fold means give the interval
    (:func:`t_interval`). "b is worse than a" holds at the level when ``low > 0``.
    """
    diff = np.asarray(errors_b).mean(axis=1) - np.asarray(errors_a).mean(axis=1)
    low, high = t_interval(diff, level)
    return float(diff.mean()), low, high


def central_range(counts, coverage=0.8):
    r"""The observed values between which the central ``coverage`` of ``counts`` lie: ``(low, high)``.

    ``low`` is the largest observed value with at most :math:`(1 - \text{coverage})/2` of the counts below it and
    ``high`` the smallest with at most that share above it (numpy quantiles, methods ``"lower"`` and ``"higher"``).
    Meant for counts decided by a tolerance test (solver iterations, function evaluations): rounding on another
    machine can move a run that stops just at the tolerance by one step, which changes a mean or a maximum but
    leaves the central range unchanged unless a tenth of the runs sit at that edge.
    """
    counts = np.asarray(counts).ravel()
    if counts.size == 0:
        raise ValueError("central_range needs at least one count.")
    if not 0.0 < coverage <= 1.0:
        raise ValueError(f"coverage must be in (0, 1], got {coverage!r}.")
    tail = (1.0 - coverage) / 2.0
    return (np.quantile(counts, tail, method="lower").item(), np.quantile(counts, 1.0 - tail, method="higher").item())


def holm(p_values):
    """Holm's step-down adjusted p-values (controls the family-wise error rate at any level)."""
    p = np.asarray(p_values, dtype=float)
    order = np.argsort(p, kind="stable")
    m = p.size
    adjusted = np.maximum.accumulate((m - np.arange(m)) * p[order])
    out = np.empty(m)
    out[order] = np.minimum(adjusted, 1.0)
    return out


def paired_t_test(differences, level=0.95):
    """``(low, high, p)``: the t-interval of the mean of paired ``differences`` and the two-sided p-value of the
    t-test of mean 0. When every difference is the same the interval is that value and p is 1 (all zero) or 0.

    The differences are rounded to 12 decimals first: the studies' test errors are counts over a test set, and two
    differences of such fractions that are equal can differ in their last bit (0.3 - 0.1 is not 0.4 - 0.2), which
    would make a constant difference look variable (and scipy warn of catastrophic cancellation)."""
    diff = np.round(np.asarray(differences, dtype=float), 12)
    if np.ptp(diff) > 0:
        low, high = t_interval(diff, level)
        return low, high, float(stats.ttest_1samp(diff, 0.0).pvalue)
    return float(diff.mean()), float(diff.mean()), (1.0 if diff[0] == 0 else 0.0)


def paired_signed_rank_test(differences):
    r"""``(p, signed_rank_sum)``: Wilcoxon's signed-rank test of paired ``differences`` (Wilcoxon 1945,
    *Individual comparisons by ranking methods*, Biometrics Bulletin 1(6), 80-83).

    Zero differences are dropped (Wilcoxon's convention); the others are ranked by absolute value (ties get their
    average rank) and :math:`S = \sum_i \operatorname{sign}(d_i)\,\operatorname{rank}(|d_i|) = R^+ - R^-`, the
    returned ``signed_rank_sum``: negative when the differences lean negative, the direction the test points. The
    two-sided p-value is from the normal approximation of :math:`R^+` with scipy's tie correction and no continuity
    correction (``scipy.stats.wilcoxon(..., method="approx")``, chosen explicitly so that it does not change with
    the number of differences or with scipy's default; the studies compare 200 repeats). The test's null
    hypothesis is that the differences are symmetric about 0 -- a pseudo-median of 0, not a mean of 0 -- so it checks
    the t-test's verdicts against heavy tails and skew, and is not a second rule. Differences are rounded to 12
    decimals first, as in :func:`paired_t_test`; when every one is zero, ``(1.0, 0.0)``."""
    diff = np.round(np.asarray(differences, dtype=float), 12)
    nonzero = diff[diff != 0]
    if nonzero.size == 0:
        return 1.0, 0.0
    signed_rank_sum = float(np.sum(np.sign(nonzero) * stats.rankdata(np.abs(nonzero))))
    p = float(stats.wilcoxon(diff, zero_method="wilcox", correction=False, alternative="two-sided",
                             method="approx").pvalue)
    return p, signed_rank_sum

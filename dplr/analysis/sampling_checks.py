r"""Checks of a closed-form privacy loss against sampled outputs: checks that fail when the code or the maths is wrong.

Evaluating a closed-form privacy loss :math:`L(t) = \beta(\lVert t - c_2\rVert - \lVert t - c_1\rVert)` at sampled
outputs and finding it below :math:`\beta\lVert c_1 - c_2\rVert` checks nothing: the triangle inequality guarantees it
for any outputs whatsoever. What can be checked is that the *sampler* draws from the law the formula assumes. For the
vector Laplace mechanism :math:`t = c + \eta`, :math:`h(\eta) \propto e^{-\beta\lVert\eta\rVert}` (Algorithm 1 with
:math:`c = w^*(D)`), the half-spaces

.. math::

    T_s = \{t : \langle t - c_1, e\rangle \ge s\}, \qquad e = \frac{c_1 - c_2}{\lVert c_1 - c_2\rVert},

have :math:`\Pr[M(D) \in T_s] = H_\beta(s)` and :math:`\Pr[M(D') \in T_s] = H_\beta(s + \lVert c_1 - c_2\rVert)`,
with :math:`H_\beta(s) = \Pr[\langle\eta, e\rangle \ge s]` computed by quadrature
(:func:`dplr.analysis.privacy_loss.vector_laplace_halfspace_probability`). :func:`halfspace_check` counts the sampled outputs
of each data set in each :math:`T_s`, tests every count against its exact binomial law (two-sided exact binomial
tests, Bonferroni over all counts, so that a correct sampler fails with probability at most ``alpha``), and reports
the privacy loss of each event estimated from the samples, :math:`\log(\hat P_D(T_s)/\hat P_{D'}(T_s))`, beside its
exact value and the supremum :math:`\beta\lVert c_1 - c_2\rVert`. A wrong noise scale, a wrong centre or a wrong
norm law changes the counts and fails the check.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy import stats

from dplr.analysis.privacy_loss import vector_laplace_halfspace_probability
from dplr.validation import check_positive_finite

__all__ = ["HalfspaceRow", "HalfspaceCheck", "halfspace_check"]


@dataclass(frozen=True)
class HalfspaceRow:
    r"""One half-space :math:`T_s`: exact and sampled probabilities under both data sets, and the event's privacy loss.

    ``log_ratio`` is :math:`\log H(s)/H(s + \Delta)` (exact), ``log_ratio_hat`` the same from the sample frequencies
    and ``log_ratio_se`` its delta-method standard error. ``p_value`` is the smaller of the two binomial tests' p-values.
    """

    offset: float
    prob: float
    prob_hat: float
    prob_prime: float
    prob_prime_hat: float
    log_ratio: float
    log_ratio_hat: float
    log_ratio_se: float
    p_value: float


@dataclass(frozen=True)
class HalfspaceCheck:
    r"""Result of :func:`halfspace_check`. ``passed`` is False when some count is implausible under the exact law
    (smallest p-value below ``alpha`` divided by the number of counts); ``supremum`` is :math:`\beta\lVert c_1 - c_2\rVert`."""

    rows: tuple
    supremum: float
    alpha: float
    n_samples: int
    n_samples_prime: int

    @property
    def min_p_value(self) -> float:
        return float(min(r.p_value for r in self.rows))

    @property
    def passed(self) -> bool:
        return self.min_p_value >= self.alpha / (2 * len(self.rows))

    def as_records(self) -> list[dict]:
        """One dict per half-space (for a table)."""
        return [dict(vars(r)) for r in self.rows]


def halfspace_check(outputs, outputs_prime, centre, centre_prime, beta, offsets, alpha=1e-3) -> HalfspaceCheck:
    r"""Test sampled outputs of the vector Laplace mechanism against its exact law on half-spaces beyond ``centre``.

    ``outputs`` (shape ``(N, d)``) were drawn on :math:`D` (law :math:`c_1 + \eta`, ``centre`` :math:`= c_1`),
    ``outputs_prime`` (``(N', d)``) on :math:`D'` (``centre_prime`` :math:`= c_2 \ne c_1`); ``beta`` is the rate the
    mechanism claims; ``offsets`` are the :math:`s` of the half-spaces :math:`T_s` (module docstring). With
    probability at least :math:`1 - \alpha` a sampler that draws from the claimed law passes (Bonferroni over the
    :math:`2\times` ``len(offsets)`` exact two-sided binomial tests).
    """
    beta = check_positive_finite(beta, "beta")
    out = np.atleast_2d(np.asarray(outputs, dtype=float))
    out_p = np.atleast_2d(np.asarray(outputs_prime, dtype=float))
    c1, c2 = (np.atleast_1d(np.asarray(c, dtype=float)) for c in (centre, centre_prime))
    d = c1.shape[0]
    if out.shape[1] != d or out_p.shape[1] != d or c2.shape != c1.shape:
        raise ValueError("outputs, outputs_prime and both centres must have the same dimension.")
    gap = float(np.linalg.norm(c1 - c2))
    if gap == 0:
        raise ValueError("the two centres coincide: no half-space separates the data sets.")
    if not 0 < alpha < 1:
        raise ValueError(f"alpha must lie in (0, 1), got {alpha!r}.")
    e = (c1 - c2) / gap
    proj, proj_p = (out - c1) @ e, (out_p - c1) @ e
    rows = []
    for s in np.asarray(offsets, dtype=float):
        p, p_prime = vector_laplace_halfspace_probability(s, beta, d), vector_laplace_halfspace_probability(s + gap, beta, d)
        k, k_prime = int(np.sum(proj >= s)), int(np.sum(proj_p >= s))
        n, n_prime = proj.size, proj_p.size
        p_val = min(stats.binomtest(k, n, p).pvalue, stats.binomtest(k_prime, n_prime, p_prime).pvalue)
        with np.errstate(divide="ignore"):
            hat = float(np.log(k / n) - np.log(k_prime / n_prime)) if k and k_prime else float("nan")
        se = float(np.sqrt((1 - p) / (n * p) + (1 - p_prime) / (n_prime * p_prime)))
        rows.append(HalfspaceRow(float(s), float(p), k / n, float(p_prime), k_prime / n_prime,
                                 float(np.log(p) - np.log(p_prime)), hat, se, float(p_val)))
    return HalfspaceCheck(tuple(rows), beta * gap, float(alpha), out.shape[0], out_p.shape[0])

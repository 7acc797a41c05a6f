r"""Privacy audits: check a privacy claim by computation, exactly where possible and empirically always.

A proof can be wrong (the NIPS 2008 proof of Algorithm 2 leaves out a Jacobian term) and so can code
(a noise scale off by a factor of two). This module gives two independent checks of a claimed
:math:`\varepsilon`.

**Exact privacy loss.** For the mechanisms of Chaudhuri & Monteleoni (NIPS 2008) the output density is
known, so the privacy loss :math:`\log p_D(t)/p_{D'}(t)` can be computed and maximised
(:mod:`dplr.analysis.privacy_loss`: the closed form :math:`\beta(\lVert t - w_2\rVert - \lVert t - w_1\rVert)`
of Algorithm 1 with supremum :math:`\beta\lVert w_1 - w_2\rVert`, and the change-of-variables density
:math:`\nu(b_D(w))\,|\det\nabla b_D(w)|` of Algorithm 2 in both forms, maximised over :math:`w`
numerically). The auditable mechanisms (:mod:`dplr.analysis.auditable`, :mod:`dplr.analysis.broken`)
expose that computation as ``max_privacy_loss(pair)``; :func:`check_claim` runs both checks.

**Black-box audit** (:func:`audit`; Jagielski, Ullman & Oprea 2020; Nasr et al. 2021). It needs only the
ability to run the mechanism. For any event :math:`S` of outputs, :math:`(\varepsilon, \delta)`-DP gives
:math:`\Pr[M(D') \in S] \le e^{\varepsilon}\Pr[M(D) \in S] + \delta`. Read :math:`S` as the rejection
region of a test of :math:`H_0`: "the data are :math:`D`" against :math:`H_1`: "the data are :math:`D'`",
with false-positive rate :math:`\mathrm{FPR} = \Pr[M(D) \in S]` and false-negative rate
:math:`\mathrm{FNR} = \Pr[M(D') \notin S]`; then

.. math::

    \varepsilon \;\ge\; \log\frac{1 - \delta - \mathrm{FNR}}{\mathrm{FPR}} .

The audit runs the mechanism :math:`N` times on each data set, picks the event
:math:`S = \{\text{score} > \tau\}` (scores: :mod:`dplr.analysis.audit_scores`) on a *selection* part of the runs, counts false positives and false
negatives on the remaining *evaluation* runs, and replaces FPR and FNR by one-sided Clopper–Pearson upper
bounds. It does this in both directions (:math:`D'` against :math:`D` with :math:`\{\text{score} > \tau_1\}`
and :math:`D` against :math:`D'` with :math:`\{\text{score} < \tau_2\}`). That is four upper bounds; each is
taken at level :math:`\alpha/4` (Bonferroni), so with probability at least :math:`1 - \alpha` all four hold
at once, and then both directional bounds, hence their maximum :math:`\varepsilon_{lb}`, are below the
true :math:`\varepsilon` of the mechanism on this pair. Because the threshold is chosen on runs that
are not counted, the choice does not bias the bound.

An audit can only *refute* a claim: :math:`\varepsilon_{lb} > \varepsilon` shows (at confidence
:math:`1 - \alpha`) that the mechanism is not ε-DP; :math:`\varepsilon_{lb} \le \varepsilon` proves nothing.

Randomness: every run gets its own seed, derived from one ``random_state`` through
``numpy.random.SeedSequence`` (one child per data set, then one per run or per batch of runs), so
results are reproducible and do not depend on how many workers run them.
"""
from __future__ import annotations

import numbers
from dataclasses import dataclass

import numpy as np
from scipy import stats

from dplr.analysis.audit_scores import histogram_score, projection_score
from dplr.analysis.neighbours import NeighbouringPair
from dplr.validation import check_positive_finite

__all__ = [
    "DirectionAudit",
    "AuditResult",
    "clopper_pearson_upper",
    "epsilon_lower_bound",
    "seed_sequence",
    "run_mechanism",
    "audit_outputs",
    "pair_data",
    "audit",
    "ClaimCheck",
    "check_claim",
]


# ----------------------------------------------------------------------------------------------
# Confidence bounds
# ----------------------------------------------------------------------------------------------
def clopper_pearson_upper(k, n, alpha):
    r"""One-sided Clopper–Pearson upper bound on a binomial proportion: :math:`\Pr[p \le \text{bound}] \ge 1 - \alpha`.

    For :math:`k < n` successes in :math:`n` trials it is the :math:`1 - \alpha` quantile of
    :math:`\mathrm{Beta}(k + 1, n - k)`; for :math:`k = n` it is 1. Exact (never below the nominal
    coverage). Vectorised over ``k`` and ``n``.
    """
    k = np.asarray(k, dtype=float)
    n = np.asarray(n, dtype=float)
    if np.any(k < 0) or np.any(k > n) or np.any(n < 1):
        raise ValueError("need 0 <= k <= n and n >= 1.")
    if not 0 < alpha < 1:
        raise ValueError(f"alpha must lie in (0, 1), got {alpha!r}.")
    full = k >= n
    upper = stats.beta.ppf(1.0 - alpha, k + 1.0, np.where(full, 1.0, n - k))
    out = np.where(full, 1.0, upper)
    return float(out) if out.ndim == 0 else out


def epsilon_lower_bound(false_positives, n_null, false_negatives, n_alt, alpha, delta=0.0):
    r""":math:`\log\big((1 - \delta - \overline{\mathrm{FNR}})/\overline{\mathrm{FPR}}\big)` from counts.

    :math:`\overline{\mathrm{FPR}}` and :math:`\overline{\mathrm{FNR}}` are Clopper–Pearson upper bounds at
    level ``alpha`` *each* (:func:`clopper_pearson_upper`); the caller splits its budget. Returns
    ``-inf`` where the numerator is not positive (the event proves nothing). Vectorised.
    """
    fpr_upper = clopper_pearson_upper(false_positives, n_null, alpha)
    fnr_upper = clopper_pearson_upper(false_negatives, n_alt, alpha)
    numerator = 1.0 - delta - np.asarray(fnr_upper)
    with np.errstate(divide="ignore", invalid="ignore"):
        value = np.where(numerator > 0, np.log(np.maximum(numerator, 1e-300)) - np.log(fpr_upper), -np.inf)
    return float(value) if value.ndim == 0 else value


# ----------------------------------------------------------------------------------------------
# Running a mechanism many times
# ----------------------------------------------------------------------------------------------
def seed_sequence(random_state) -> np.random.SeedSequence:
    """One ``numpy.random.SeedSequence`` from ``None``, an int seed, a SeedSequence or a Generator.

    A Generator is advanced by one draw of 128 bits of entropy.
    """
    if isinstance(random_state, np.random.SeedSequence):
        return random_state
    if isinstance(random_state, np.random.Generator):
        return np.random.SeedSequence(random_state.integers(0, 2**63, size=2, dtype=np.uint64).tolist())
    if random_state is None or (isinstance(random_state, numbers.Integral) and not isinstance(random_state, bool)
                                and random_state >= 0):
        return np.random.SeedSequence(random_state)
    raise TypeError(f"random_state must be None, a non-negative int, a SeedSequence or a Generator, got "
                    f"{random_state!r}.")


def _as_rows(outputs, n_expected):
    out = np.asarray(outputs, dtype=float)
    if out.ndim == 1:
        out = out[:, None] if n_expected > 1 or out.shape[0] == n_expected else out[None, :]
    if out.ndim != 2 or out.shape[0] != n_expected:
        raise ValueError(f"the mechanism returned shape {np.shape(outputs)}; expected {n_expected} output vectors.")
    return out


def run_mechanism(mechanism, data, n_runs, random_state=None, batch_size=None):
    r"""Outputs of ``n_runs`` independent runs of ``mechanism`` on ``data``, shape ``(n_runs, d)``.

    ``batch_size=None``: ``mechanism(data, random_state)`` is called once per run and returns one output
    vector (or a scalar); run :math:`i` gets the :math:`i`-th child of ``seed_sequence(random_state)``.
    ``batch_size=k``: ``mechanism(data, random_state, size)`` is called once per block of ``k`` runs
    (the last block may be smaller) and returns ``(size, d)``; block :math:`j` gets the :math:`j`-th
    child. Either way the outputs depend only on ``random_state`` and ``batch_size``.
    """
    n_runs = int(n_runs)
    if n_runs < 1:
        raise ValueError(f"n_runs must be a positive integer, got {n_runs!r}.")
    root = seed_sequence(random_state)
    if batch_size is None:
        seeds = root.spawn(n_runs)
        return _as_rows([np.atleast_1d(np.asarray(mechanism(data, np.random.default_rng(s)), dtype=float))
                         for s in seeds], n_runs)
    batch_size = int(batch_size)
    if batch_size < 1:
        raise ValueError(f"batch_size must be a positive integer, got {batch_size!r}.")
    sizes = [min(batch_size, n_runs - start) for start in range(0, n_runs, batch_size)]
    seeds = root.spawn(len(sizes))
    return np.vstack([_as_rows(mechanism(data, np.random.default_rng(s), size), size) for s, size in zip(seeds, sizes)])


# ----------------------------------------------------------------------------------------------
# The audit
# ----------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class DirectionAudit:
    r"""One direction of an audit: the event, its counts on the evaluation runs and the bound.

    ``null`` and ``alt`` name the data sets of :math:`H_0` and :math:`H_1` ("D" or "D'"); the event
    (rejection region) is ``score > threshold`` when ``event == ">"`` and ``score < threshold`` when
    ``event == "<"``. ``false_positives`` of ``n_null`` runs on the null data set fell in the event,
    ``false_negatives`` of ``n_alt`` runs on the alternative did not. ``fpr_upper``, ``fnr_upper`` are the
    Clopper–Pearson upper bounds (each at level ``alpha / 4``), ``epsilon_lb`` the resulting bound (``-inf``
    when the event proves nothing) and ``epsilon_hat`` the same expression with the raw rates.
    """

    null: str
    alt: str
    event: str
    threshold: float
    false_positives: int
    n_null: int
    false_negatives: int
    n_alt: int
    fpr_upper: float
    fnr_upper: float
    epsilon_lb: float
    epsilon_hat: float


@dataclass(frozen=True)
class AuditResult:
    r"""Result of :func:`audit`: :math:`\varepsilon_{lb}` at confidence :math:`1 - \alpha` and how it was obtained.

    ``epsilon_lb = max(0, forward.epsilon_lb, backward.epsilon_lb)``: with probability at least
    :math:`1 - \alpha` over the runs, the mechanism's :math:`\varepsilon` on this pair is at least
    ``epsilon_lb`` (0 means "nothing shown"). ``forward`` tests :math:`D'` against :math:`D` (event
    ``score > threshold``), ``backward`` tests :math:`D` against :math:`D'` (event ``score < threshold``).
    ``n_selection`` runs per data set chose the thresholds; ``n_evaluation`` others were counted.
    """

    epsilon_lb: float
    forward: DirectionAudit
    backward: DirectionAudit
    alpha: float
    delta: float
    n_runs: int
    n_selection: int
    n_evaluation: int

    @property
    def best(self) -> DirectionAudit:
        """The direction that gives ``epsilon_lb``."""
        return self.forward if self.forward.epsilon_lb >= self.backward.epsilon_lb else self.backward

    @property
    def threshold(self) -> float:
        """Threshold of the event in the direction that gives ``epsilon_lb``."""
        return self.best.threshold

    def refutes(self, epsilon) -> bool:
        r"""True when the audit shows, at confidence :math:`1 - \alpha`, that the mechanism is not ``epsilon``-DP."""
        return bool(self.epsilon_lb > epsilon)


def _candidate_thresholds(scores, n_thresholds):
    """Midpoints between consecutive distinct quantiles of the scores (and one point beyond each end).

    Midpoints keep a threshold off the selection runs' own values, so that a gap between the two
    samples is split in the middle rather than at the edge of one of them.
    """
    levels = np.linspace(0.0, 1.0, int(n_thresholds))
    q = np.unique(np.quantile(scores, levels, method="inverted_cdf"))
    if q.size == 1:
        return q
    return np.r_[q[0] - 1.0, 0.5 * (q[:-1] + q[1:]), q[-1] + 1.0]


def _direction(null_sel, alt_sel, null_eval, alt_eval, n_thresholds, alpha_each, delta):
    """Choose tau maximising the bound on the selection runs for the event {score > tau}; count on the rest."""
    taus = _candidate_thresholds(np.r_[null_sel, alt_sel], n_thresholds)
    null_sorted, alt_sorted = np.sort(null_sel), np.sort(alt_sel)
    fp = null_sorted.size - np.searchsorted(null_sorted, taus, side="right")
    fn = np.searchsorted(alt_sorted, taus, side="right")
    candidate_bounds = epsilon_lower_bound(fp, null_sorted.size, fn, alt_sorted.size, alpha_each, delta)
    best = np.flatnonzero(candidate_bounds == np.max(candidate_bounds))
    tau = float(taus[best[best.size // 2]])  # among ties, the middle one
    fp_eval = int(np.sum(null_eval > tau))
    fn_eval = int(np.sum(alt_eval <= tau))
    n0, n1 = null_eval.size, alt_eval.size
    lb = epsilon_lower_bound(fp_eval, n0, fn_eval, n1, alpha_each, delta)
    fpr, fnr = fp_eval / n0, fn_eval / n1
    with np.errstate(divide="ignore"):
        hat = float(np.log(1.0 - delta - fnr) - np.log(fpr)) if (1.0 - delta - fnr) > 0 else -np.inf
    return tau, fp_eval, n0, fn_eval, n1, clopper_pearson_upper(fp_eval, n0, alpha_each), \
        clopper_pearson_upper(fn_eval, n1, alpha_each), lb, hat


def audit_outputs(outputs, outputs_prime, score=None, n_selection=None, alpha=0.05, delta=0.0, n_thresholds=401,
                  n_bins=100):
    r"""Audit from outputs already drawn: ``outputs`` on :math:`D`, ``outputs_prime`` on :math:`D'` (``(N, d)`` or ``(N,)``).

    The first ``n_selection`` rows of each (default: a fifth) choose the thresholds; the other rows are
    counted. ``score`` maps an ``(m, d)`` array of outputs to ``m`` real scores, large meaning "looks like
    :math:`D'`". ``None`` or ``"projection"``: project onto the difference of the mean outputs on the
    selection rows (:func:`~dplr.analysis.audit_scores.projection_score`); events are then half-spaces. ``"histogram"``: the same
    projection, then the log-ratio of the two histograms of the selection rows on ``n_bins`` bins
    (:func:`~dplr.analysis.audit_scores.histogram_score`); events are then unions of bins, e.g. an interval in the middle. Thresholds
    are searched over ``n_thresholds`` quantiles of the pooled selection scores. See the module docstring
    for the bound and its :math:`\alpha/4` Bonferroni split.
    """
    out = np.asarray(outputs, dtype=float)
    out_p = np.asarray(outputs_prime, dtype=float)
    out = out[:, None] if out.ndim == 1 else out
    out_p = out_p[:, None] if out_p.ndim == 1 else out_p
    if out.ndim != 2 or out_p.shape[1:] != out.shape[1:]:
        raise ValueError(f"outputs must be (N, d) arrays of the same width, got {out.shape} and {out_p.shape}.")
    if out.shape[0] != out_p.shape[0]:
        raise ValueError("the audit needs the same number of runs on D and on D'.")
    n_runs = out.shape[0]
    n_sel = n_runs // 5 if n_selection is None else int(n_selection)
    if not 1 <= n_sel < n_runs:
        raise ValueError(f"n_selection must lie in [1, {n_runs - 1}], got {n_sel}.")
    check_positive_finite(alpha, "alpha")
    if not alpha < 1 or not 0 <= delta < 1:
        raise ValueError("need 0 < alpha < 1 and 0 <= delta < 1.")
    if score is None or isinstance(score, str):
        kind = "projection" if score is None else score
        if kind not in ("projection", "histogram"):
            raise ValueError(f"score must be None, 'projection', 'histogram' or a callable, got {score!r}.")
        score = projection_score(out_p[:n_sel].mean(axis=0) - out[:n_sel].mean(axis=0))
        if kind == "histogram":
            score = histogram_score(score(out[:n_sel]), score(out_p[:n_sel]), n_bins, then=score)
    s = np.asarray(score(out), dtype=float).ravel()
    s_p = np.asarray(score(out_p), dtype=float).ravel()
    if s.shape != (n_runs,) or s_p.shape != (n_runs,):
        raise ValueError("score must return one real number per output.")
    alpha_each = alpha / 4.0  # four one-sided Clopper-Pearson bounds (FPR, FNR in each direction): Bonferroni
    args = (n_thresholds, alpha_each, delta)
    fwd = _direction(s[:n_sel], s_p[:n_sel], s[n_sel:], s_p[n_sel:], *args)
    bwd = _direction(-s_p[:n_sel], -s[:n_sel], -s_p[n_sel:], -s[n_sel:], *args)
    forward = DirectionAudit("D", "D'", ">", *fwd)
    b = list(bwd)
    b[0] = -b[0]  # event {-score > tau} is {score < -tau}
    backward = DirectionAudit("D'", "D", "<", *b)
    lb = max(0.0, forward.epsilon_lb, backward.epsilon_lb)
    return AuditResult(float(lb), forward, backward, float(alpha), float(delta), n_runs, n_sel, n_runs - n_sel)


def pair_data(pair):
    """``(data, data_prime)`` of a :class:`~dplr.analysis.neighbours.NeighbouringPair` (as ``(X, y)`` tuples) or of a 2-tuple."""
    if isinstance(pair, NeighbouringPair):
        return (pair.X, pair.y), (pair.X_prime, pair.y_prime)
    if isinstance(pair, (tuple, list)) and len(pair) == 2:
        return pair[0], pair[1]
    raise TypeError("pair must be a NeighbouringPair or a tuple (data, data_prime).")


def audit(mechanism, pair, n_runs, score=None, n_selection=None, alpha=0.05, delta=0.0, n_thresholds=401,
          n_bins=100, batch_size=None, random_state=None) -> AuditResult:
    r"""Black-box audit of ``mechanism`` on a neighbouring pair: a lower bound on its :math:`\varepsilon` at confidence :math:`1 - \alpha`.

    Parameters
    ----------
    mechanism : callable
        ``mechanism(data, random_state)`` returning one output vector, or, with ``batch_size``,
        ``mechanism(data, random_state, size)`` returning ``(size, d)``.
    pair : NeighbouringPair or (data, data_prime)
        The neighbouring inputs; a :class:`~dplr.analysis.neighbours.NeighbouringPair` is passed to the
        mechanism as ``(X, y)`` and ``(X_prime, y_prime)``.
    n_runs : int
        Runs on each data set (selection plus evaluation).
    score, n_selection, alpha, delta, n_thresholds, n_bins
        See :func:`audit_outputs`. ``alpha`` is the total error budget of the audit.
    batch_size : int or None
        See :func:`run_mechanism`.
    random_state : None, int, SeedSequence or Generator
        Its ``SeedSequence`` is split into one child per data set.

    Returns
    -------
    AuditResult
    """
    data, data_prime = pair_data(pair)
    side, side_prime = seed_sequence(random_state).spawn(2)
    outputs = run_mechanism(mechanism, data, n_runs, side, batch_size)
    outputs_prime = run_mechanism(mechanism, data_prime, n_runs, side_prime, batch_size)
    return audit_outputs(outputs, outputs_prime, score, n_selection, alpha, delta, n_thresholds, n_bins)


# ----------------------------------------------------------------------------------------------
# Exact and empirical checks of one claim
# ----------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class ClaimCheck:
    r"""Both checks of one privacy claim ":math:`M` is ``epsilon``-DP" on one neighbouring pair.

    ``exact`` is the mechanism's own :math:`\sup_t|\log p_D(t)/p_{D'}(t)|` on the pair (``None`` when
    not computed); ``audit`` the black-box :class:`AuditResult`. ``exact_violates`` and ``audit_refutes``
    say whether each check shows the claim false.
    """

    name: str
    epsilon: float
    exact: float | None
    audit: AuditResult

    @property
    def exact_violates(self) -> bool:
        return self.exact is not None and self.exact > self.epsilon

    @property
    def audit_refutes(self) -> bool:
        return self.audit.refutes(self.epsilon)

    def row(self) -> dict:
        """A dict for ``dplr.replication.tables.format_table``."""
        return {"mechanism": self.name, "epsilon": self.epsilon,
                "exact loss": float("nan") if self.exact is None else self.exact,
                "eps_lb": self.audit.epsilon_lb,
                "exact > eps": "yes" if self.exact_violates else "no",
                "eps_lb > eps": "yes" if self.audit_refutes else "no"}


def check_claim(name, mechanism, pair, epsilon, n_runs, exact=True, random_state=None, **audit_options) -> ClaimCheck:
    r"""Run :func:`audit` on ``mechanism`` and, with ``exact=True``, its ``max_privacy_loss(pair)``.

    ``audit_options`` go to :func:`audit` (``score``, ``batch_size``, ``alpha``, ...).
    """
    result = audit(mechanism, pair, n_runs, random_state=random_state, **audit_options)
    value = float(mechanism.max_privacy_loss(pair)) if exact else None
    return ClaimCheck(str(name), float(epsilon), value, result)

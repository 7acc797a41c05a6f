r"""Privacy audits of the contenders: every claim of the comparison tested from runs, with broken variants beside them.

The comparison (:mod:`~dplr.replication.modern.contenders`) trusts six privacy claims: ε-DP for Algorithms 1 and 2
(JMLR 2011), (ε, δ)-DP for Gaussian output perturbation (Balle & Wang 2018), Gaussian objective perturbation (Kifer,
Smith & Thakurta 2012), approximate minima perturbation (Iyengar et al. 2019) and DP-SGD (Abadi et al. 2016, ε from
Google's ``dp-accounting``). :func:`contender_audits` runs the black-box auditor of :mod:`dplr.analysis.audit`
(Jagielski, Ullman & Oprea 2020; Nasr et al. 2021) on each claim, with :math:`\delta` for the (ε, δ) ones (the
comparison's, :data:`~dplr.replication.modern.contenders.DELTA`), on a hard neighbouring pair where the claim could
fail, and on five deliberately broken variants (:mod:`dplr.analysis.broken`) of the new mechanisms on the same
pairs. For an event :math:`S` chosen on held-out runs, (ε, δ)-DP gives
:math:`\Pr[M(D') \in S] \le e^\varepsilon\Pr[M(D) \in S] + \delta`; with Clopper–Pearson bounds on
both probabilities the audit reports

.. math::

    \varepsilon_{lb} = \log\frac{1 - \delta - \overline{\mathrm{FNR}}}{\overline{\mathrm{FPR}}},

a lower bound on the mechanism's ε on the pair at confidence :math:`1 - \alpha` (:data:`ALPHA` = 10⁻³: 99.9 %).
The verdict is "refuted" when :math:`\varepsilon_{lb}` exceeds the claimed ε, a proof (at that confidence) that the
mechanism as implemented is not (ε, δ)-DP; "not refuted" proves nothing (one pair, one family of events, finitely
many runs). Where the pair's ε at δ has a closed form it is reported too (``exact_epsilon``): Algorithm 1's
:math:`\beta\lVert w^*(D) - w^*(D')\rVert` and the Gaussian output perturbations' ε of Gaussian noise around the two
minimisers (:meth:`dplr.mechanisms.IsotropicGaussian.epsilon`); elsewhere it is NaN, Algorithm 2's included: its
largest privacy loss is found by a numerical search, which only bounds it from below.

The settings (every claim at ε = :data:`EPSILON`, :math:`\lambda` = :data:`LAM`):

* **anchored** -- Algorithm 1, Gaussian output perturbation and its half-σ variant: the worst pair of
  :func:`~dplr.analysis.sensitivity.anchored_sensitivity_search` (:math:`n` = 1000, :math:`d` = 2), minimisers 0.95
  of the bound :math:`2/(n\lambda)` apart; half-space events (the projection score), :data:`ADDITIVE_RUNS` runs.
* **small nλ** -- the objective perturbations: :math:`n` = 10 in :math:`d` = 1, nine records at the origin (no
  gradient, no curvature) and a replaced record found worst by
  :func:`~dplr.analysis.privacy_loss_search.worst_case_objective_perturbation_privacy_loss` -- for the corrected
  Algorithm 2, its own worst; for Gaussian objective perturbation and approximate minima perturbation (each correct
  and without its ridge), the worst for Algorithm 2 without its ridge (as printed in 2008). :math:`n\lambda` = 10⁻³, where only the ridge :math:`\Delta`
  keeps the Jacobian ratio :math:`1 + c/(n(\lambda + \Delta))` in check. Histogram events (:data:`N_BINS` bins),
  :data:`RUNS` runs.
* **DP-SGD** -- nine records at 0 and a tenth, :math:`x = 1`, whose label flips: the lot's gradient sum moves by at
  most :math:`2C` after clipping and by up to :math:`10C` without it (:math:`C` = 0.1, :math:`|\ell'(0)| = 1/2`). Rate
  :math:`q` = 0.5, :math:`T` = 3 steps, learning rate 1; half-space events, :data:`RUNS` runs. The noise
  multipliers are fixed (:data:`DPSGD_SIGMA`, :data:`WRONG_RATE_SIGMA`: each is what
  :func:`dplr.dpsgd.dpsgd_noise_multiplier` returns, which tests/test_modern_audits.py checks against the accountant;
  fixing them spares the bisection's dozen accountant calls). The claims are the accountant's
  (:func:`dplr.dpsgd.dpsgd_epsilon`, two calls, cached; the extra ``dplr[accounting]``): DP-SGD without clipping
  claims what DP-SGD does, and the wrong-rate variant what its accountant says at :math:`q/10`.

Each audit draws from its own child of ``numpy.random.SeedSequence(random_state)`` (one per row, in table order),
so the table is a deterministic function of ``random_state``. At the default seed every verdict is far from its
threshold: ε lower bounds are rounded to 2 decimals, and tests/test_modern_audits.py states the margins.
"""
from __future__ import annotations

import functools
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from dplr.analysis import broken
from dplr.analysis.audit import check_claim, seed_sequence
from dplr.analysis.auditable import (
    ApproximateMinimaPerturbationMechanism,
    DPSGDMechanism,
    GaussianObjectivePerturbationMechanism,
    GaussianOutputPerturbationMechanism,
    ObjectivePerturbationMechanism,
    SensitivityMethodMechanism,
)
from dplr.analysis.neighbours import NeighbouringPair
from dplr.analysis.privacy_loss_search import worst_case_objective_perturbation_privacy_loss
from dplr.analysis.sensitivity import anchored_sensitivity_search
from dplr.replication.modern.contenders import DELTA

__all__ = ["EPSILON", "LAM", "ALPHA", "SEED", "RUNS", "ADDITIVE_RUNS", "N_BINS", "DPSGD_SIGMA", "WRONG_RATE_SIGMA",
           "DPSGD_PARTS", "COLUMNS", "AuditCase", "audit_cases", "contender_audits"]

#: The claimed ε of every audited mechanism.
EPSILON = 1.0
#: λ of every regularised mechanism audited (n λ = 0.1 on the anchored pair, 0.001 on the small-nλ pairs).
LAM = 1e-4
#: The audits' total error: each ε lower bound holds with probability at least 1 - ALPHA (99.9 %).
ALPHA = 1e-3
#: The default ``random_state`` of :func:`contender_audits`.
SEED = 20_190_519
#: Runs per data set of the audits that solve a problem or train per run (objective perturbations, DP-SGD).
RUNS = 200_000
#: Runs per data set of the audits that add noise to one fixed minimiser (cheap: one draw per run).
ADDITIVE_RUNS = 1_000_000
#: Bins of the histogram score of the objective perturbations' audits.
N_BINS = 400
#: DP-SGD's noise multiplier: ``dpsgd_noise_multiplier(1.0, 1e-5, 0.5, 3)`` (dp-accounting 0.6.0, PLD, replace one).
DPSGD_SIGMA = 6.446323377535616
#: The broken DP-SGD's: ``dpsgd_noise_multiplier(1.0, 1e-5, 0.05, 3)``, the accountant told a tenth of the rate.
WRONG_RATE_SIGMA = 1.1387886347566916
#: The parts of the wrong-rate slip: the rate handed to the accountant is the true one over this.
DPSGD_PARTS = 10
#: The columns of :func:`contender_audits`' table.
COLUMNS = ("contender", "mechanism", "broken", "epsilon", "delta", "setting", "runs", "eps_lb", "exact_epsilon",
           "verdict")

_BATCH = 50_000  # runs per call of a mechanism (every run count is a multiple; seeds are derived per block)
_CLIP, _RATE, _STEPS, _LEARNING_RATE = 0.1, 0.5, 3, 1.0


@dataclass(frozen=True)
class AuditCase:
    r"""One row of the table: an auditable mechanism, its claim (ε, δ), the pair and how the audit looks at it.

    ``contender`` names the contender of :data:`~dplr.replication.modern.contenders.CONTENDERS` the mechanism is (or
    breaks); ``exact`` says whether ``mechanism.max_privacy_loss(pair)`` is a closed form; ``score`` is the auditor's
    (``None``: projection, half-space events).
    """

    contender: str
    name: str
    broken: bool
    mechanism: Any
    epsilon: float
    delta: float
    pair: NeighbouringPair
    setting: str
    runs: int
    score: str | None
    exact: bool


@functools.lru_cache(maxsize=None)
def _accountant(mechanism, delta):
    return mechanism.epsilon(delta)  # the accountant is deterministic: one call per (mechanism, delta)


@functools.lru_cache(maxsize=1)
def _pairs():
    anchored = anchored_sensitivity_search(1000, LAM)
    shared = np.zeros((9, 1)), np.ones(9)
    printed = worst_case_objective_perturbation_privacy_loss(*shared, EPSILON, LAM, form="nips2008").pair
    corrected = worst_case_objective_perturbation_privacy_loss(*shared, EPSILON, LAM, form="corrected").pair
    flip = NeighbouringPair.from_records(*shared, [1.0], 1.0, [1.0], -1.0)
    return anchored, printed, corrected, flip


def audit_cases(n_runs=None) -> tuple[AuditCase, ...]:
    """The audits of :func:`contender_audits`, in table order: the six contenders, then the five broken variants.

    ``n_runs=None``: :data:`ADDITIVE_RUNS` or :data:`RUNS` per audit (module docstring); an int: that many for every
    audit (fewer runs give smaller lower bounds, so the broken variants' verdicts hold only at the defaults). The
    pairs are searched once per process and cached.
    """
    anchored, printed, corrected, flip = _pairs()
    additive, solved = (ADDITIVE_RUNS, RUNS) if n_runs is None else (int(n_runs), int(n_runs))
    lam, eps = LAM, EPSILON
    at_anchor = (f"n = 1000, λ = {lam:g}, d = 2: the anchored worst pair, minimisers {anchored.ratio:.2f} of "
                 f"2/(nλ) apart")
    small = f"n = 10, λ = {lam:g} (nλ = {10 * lam:g}), d = 1: nine records at 0, the replaced one found worst for "
    at_printed, at_corrected = small + "Algorithm 2 as printed (2008)", small + "the corrected Algorithm 2"
    at_flip = (f"n = 10, d = 1: nine records at 0, the tenth's label flips; q = {_RATE:g}, T = {_STEPS}, "
               f"C = {_CLIP:g}")
    dpsgd = DPSGDMechanism(DPSGD_SIGMA, _CLIP, _RATE, _STEPS, _LEARNING_RATE)
    unclipped = broken.UnclippedDPSGD(DPSGD_SIGMA, _CLIP, _RATE, _STEPS, _LEARNING_RATE)
    wrong_rate = broken.WrongRateDPSGD(WRONG_RATE_SIGMA, _CLIP, _RATE, _STEPS, _LEARNING_RATE, parts=DPSGD_PARTS)
    dpsgd_claim = _accountant(dpsgd, DELTA)
    return (
        AuditCase("sensitivity", "Algorithm 1 (sensitivity method)", False, SensitivityMethodMechanism(eps, lam),
                  eps, 0.0, anchored.pair, at_anchor, additive, None, True),
        # the two objective perturbations audited as the comparison runs them (contenders.idealised_parameters):
        # the exact minimiser, the papers' idealisation, in which the study's record was computed
        AuditCase("objective", "Algorithm 2 (objective perturbation, corrected)", False,
                  ObjectivePerturbationMechanism(eps, lam, release="exact_minimiser"), eps, 0.0, corrected,
                  at_corrected, solved, "histogram", False),
        AuditCase("gaussian_output", "Gaussian output perturbation", False,
                  GaussianOutputPerturbationMechanism(eps, DELTA, lam), eps, DELTA, anchored.pair, at_anchor,
                  additive, None, True),
        AuditCase("gaussian_objective", "Gaussian objective perturbation (KST)", False,
                  GaussianObjectivePerturbationMechanism(eps, DELTA, lam, release="exact_minimiser"), eps, DELTA,
                  printed, at_printed, solved, "histogram", False),
        AuditCase("amp", "approximate minima perturbation", False,
                  ApproximateMinimaPerturbationMechanism(eps, DELTA, lam), eps, DELTA, printed, at_printed, solved,
                  "histogram", False),
        AuditCase("dpsgd", "DP-SGD", False, dpsgd, dpsgd_claim, DELTA, flip, at_flip, solved, None, False),
        AuditCase("gaussian_output", "half-σ Gaussian output perturbation", True,
                  broken.HalfSigmaGaussianOutputPerturbation(eps, DELTA, lam), eps, DELTA, anchored.pair, at_anchor,
                  additive, None, True),
        AuditCase("gaussian_objective", "Gaussian objective perturbation without its ridge", True,
                  broken.NoRidgeGaussianObjectivePerturbation(eps, DELTA, lam), eps, DELTA, printed, at_printed,
                  solved, "histogram", False),
        AuditCase("amp", "approximate minima perturbation without its ridge", True,
                  broken.no_ridge_approximate_minima_perturbation(eps, DELTA, lam), eps, DELTA, printed, at_printed,
                  solved, "histogram", False),
        AuditCase("dpsgd", "DP-SGD without clipping", True, unclipped, dpsgd_claim, DELTA, flip, at_flip, solved,
                  None, False),
        AuditCase("dpsgd", f"DP-SGD accounted at q/{DPSGD_PARTS}", True, wrong_rate, _accountant(wrong_rate, DELTA),
                  DELTA, flip, at_flip + f", accountant told q = {wrong_rate.claimed_rate:g}", solved, None, False),
    )


def contender_audits(n_runs=None, random_state=SEED, alpha=ALPHA) -> pd.DataFrame:
    r"""Audit every contender's privacy claim and five broken variants; one row per audit (columns :data:`COLUMNS`).

    ``contender`` (the name in :data:`~dplr.replication.modern.contenders.CONTENDERS`), ``mechanism``, ``broken``,
    the claim ``epsilon`` (3 decimals; DP-SGD's is the accountant's) and ``delta`` (0 for the pure-ε algorithms),
    ``setting`` (n, λ, the pair), ``runs`` (per data set), ``eps_lb`` (the audit's lower bound on ε at confidence
    :math:`1 - \alpha`, 2 decimals), ``exact_epsilon`` (the pair's ε at δ where it has a closed form, 2 decimals, else
    NaN) and ``verdict``: "refuted" when the unrounded :math:`\varepsilon_{lb}` exceeds the claimed ε, else "not
    refuted". ``n_runs``: see :func:`audit_cases`. Each audit uses
    :func:`dplr.analysis.audit.check_claim`; the table's ``attrs`` record ``alpha`` and ``random_state``.
    About 7 s on one core; the pair searches and the dp-accounting calls are cached per process.
    """
    cases = audit_cases(n_runs)
    seeds = seed_sequence(random_state).spawn(len(cases))
    rows = []
    for case, seed in zip(cases, seeds):
        check = check_claim(case.name, case.mechanism, case.pair, case.epsilon, case.runs, exact=case.exact,
                            random_state=seed, score=case.score, n_bins=N_BINS, alpha=alpha, delta=case.delta,
                            batch_size=min(_BATCH, case.runs))
        rows.append({"contender": case.contender, "mechanism": case.name, "broken": case.broken,
                     "epsilon": round(case.epsilon, 3), "delta": case.delta, "setting": case.setting,
                     "runs": case.runs, "eps_lb": round(check.audit.epsilon_lb, 2),
                     "exact_epsilon": round(check.exact, 2) if check.exact is not None else float("nan"),
                     "verdict": "refuted" if check.audit_refutes else "not refuted"})
    table = pd.DataFrame(rows, columns=list(COLUMNS))
    table.attrs.update(alpha=float(alpha), random_state=random_state)
    return table

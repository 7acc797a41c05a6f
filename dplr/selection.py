r"""Private selection from private candidates: tuning λ on the whole training set (Liu & Talwar, STOC 2019).

Algorithm 3 of JMLR 2011 (:mod:`dplr.tuning`) pays for its privacy with data: each candidate λ trains on one part
of :math:`m + 1`. Liu & Talwar (*Private selection from private candidates*, STOC 2019, Section 3) pay with a small
multiple of ε instead, and every run uses all the data.

**Random stopping** (Liu & Talwar 2019, the random-stopping algorithm of Section 3). Let :math:`Q` be a randomised
algorithm that, on a data set :math:`D`, outputs a pair :math:`(x, q)`: a candidate :math:`x` and a real score
:math:`q`. Fix :math:`\gamma \in (0, 1]`. Repeat: run :math:`Q(D)` afresh, then stop with probability
:math:`\gamma`. Output the pair with the highest score among the runs made. The number of runs :math:`K` is
geometric, :math:`\Pr[K = k] = \gamma (1 - \gamma)^{k - 1}`, independent of the data; there is no cap.

**Theorem** (Liu & Talwar 2019, random stopping, the pure case with no cap). If :math:`Q` is
:math:`\varepsilon_0`-DP and its score has a continuous law on every data set (no atoms, so ties have probability
0), then random stopping is :math:`3\varepsilon_0`-DP, for every :math:`\gamma \in (0, 1]`. The book proves
the pure, uncapped case (``book/private_selection.ipynb``): with :math:`F_D(q) = \Pr[\text{score of }
Q(D) < q]`, the output has law :math:`\gamma\,(1 - (1-\gamma)F_D(q))^{-2}\,\mu_D(dx, dq)`; the base law
:math:`\mu_D` moves by :math:`e^{\varepsilon_0}` and the weight by :math:`e^{2\varepsilon_0}`.

**(ε, δ) runs, no cap** (the book's proposition ``prop-random-stopping-delta``, proved there by the same two
steps). If :math:`Q` is :math:`(\varepsilon_0, \delta_0)`-DP with a continuous score, random stopping is
:math:`(\varepsilon_0 + 2\ln c,\ c^2\delta_0/\gamma)`-DP with :math:`c = e^{\varepsilon_0} + \delta_0/\gamma`
(:func:`selection_guarantee`). Liu & Talwar also treat (ε, δ) runs, with a cap on the number of runs; the book
does not rely on that statement and proves this uncapped one, in which :math:`\delta_0/\gamma` only has to be small.
:func:`run_budget` splits a total (ε, δ) into a run's :math:`(\varepsilon_0, \delta_0)` that meets it.

**One run here** (:func:`private_selection`): a candidate drawn uniformly at random from a public list, the private
learner on the *whole* training set at :math:`\varepsilon_{\text{fit}} = (1 - s)\,\varepsilon_0`, and the score
minus the learner's training error plus Laplace noise of scale :math:`1/(n\,\varepsilon_{\text{score}})`,
:math:`\varepsilon_{\text{score}} = s\,\varepsilon_0` (the error of a fixed classifier changes by at most
:math:`1/n` when one record is replaced; :func:`dplr.mechanisms.laplace_mechanism`). By composition the run is
:math:`\varepsilon_0`-DP (the candidate's draw does not look at the data), and its score is continuous. So with
:math:`\varepsilon_0 = \varepsilon / 3` (:func:`run_epsilon`) the released classifier is ε-DP: the comparison with
Algorithm 3 at the same ε is at **equal total privacy**. The scores of the runs that are not the best, and which
candidates they tried, are *not* released (:class:`SelectionResult` keeps them for teaching only).

With ``delta > 0`` (:func:`private_selection`), the learner runs at :math:`((1-s)\varepsilon_0, \delta_0)` and the
score at :math:`s\varepsilon_0`, :math:`(\varepsilon_0, \delta_0)` = :func:`run_budget` of the total: the released
classifier is (ε, δ)-DP.

**A data-independent rule** (:func:`data_independent_lambda`): no tuning at all, the whole ε for one fit.

Papernot & Steinke (ICLR 2022) sharpen the accounting in Rényi DP (truncated negative binomial and Poisson numbers
of runs); that form is not implemented here.
"""
from __future__ import annotations

import sys
from dataclasses import dataclass
from fractions import Fraction

import numpy as np

from dplr.algorithms import objective_perturbation
from dplr.ball import check_rows_in_ball
from dplr.directed_rounding import exact, round_down, round_up
from dplr.losses import get_loss
from dplr.mechanisms import laplace_mechanism
from dplr.tuning import test_error
from dplr.validation import check_epsilon, check_lambda, check_random_state, check_signed_data

__all__ = [
    "SELECTION_MULTIPLE",
    "SelectionResult",
    "run_epsilon",
    "selection_epsilon",
    "selection_guarantee",
    "run_budget",
    "random_stopping",
    "noisy_training_error",
    "private_selection",
    "data_independent_lambda",
]

#: Random stopping over :math:`\varepsilon_0`-DP runs is :math:`3\varepsilon_0`-DP (the theorem's multiple).
SELECTION_MULTIPLE = 3


def run_epsilon(epsilon):
    r"""The budget :math:`\varepsilon_0 = \varepsilon / 3` of each run, for a total budget ``epsilon``, rounded *down*
    (:mod:`dplr.directed_rounding`): :math:`3\varepsilon_0 \le \varepsilon` exactly."""
    return round_down(exact(check_epsilon(epsilon)) / SELECTION_MULTIPLE)


def selection_epsilon(epsilon_run):
    r"""The total :math:`3\varepsilon_0` that random stopping over :math:`\varepsilon_0`-DP runs guarantees, rounded
    *up*: a privacy loss the procedure does not exceed."""
    return round_up(SELECTION_MULTIPLE * exact(check_epsilon(epsilon_run)))


def _split(epsilon_run, score_share):
    r"""Each run's :math:`(\varepsilon_{\text{fit}}, \varepsilon_{\text{score}})`: :math:`s\varepsilon_0` and
    :math:`\varepsilon_0 - s\varepsilon_0`, each rounded down, so they sum to at most :math:`\varepsilon_0` exactly;
    refused before any run when either is below the smallest normal float64 (2.2e-308; from it on, the score's
    Laplace rate :math:`n\varepsilon_{\text{score}}` has a finite scale, so :func:`noisy_training_error` never
    refuses inside a run)."""
    eps_score = round_down(exact(score_share) * exact(epsilon_run))
    eps_fit = round_down(exact(epsilon_run) - exact(eps_score))
    if not (eps_score >= sys.float_info.min and eps_fit >= sys.float_info.min):
        raise ValueError(f"score_share = {score_share!r} of the run budget {epsilon_run!r} leaves the score "
                         f"{eps_score!r} and the learner {eps_fit!r}: each needs a positive part of at least "
                         f"{sys.float_info.min!r}. Fix: a score_share nearer 0.5 (or a larger epsilon).")
    return eps_fit, eps_score


def selection_guarantee(epsilon_run, delta_run, stop_probability):
    r"""The total ``(epsilon, delta)`` of random stopping over :math:`(\varepsilon_0, \delta_0)`-DP runs with a
    continuous score, stopping probability :math:`\gamma`: :math:`(\varepsilon_0 + 2\ln c,\ c^2\delta_0/\gamma)`,
    :math:`c = e^{\varepsilon_0} + \delta_0/\gamma` (module docstring; :math:`\delta_0 = 0` gives
    :math:`(3\varepsilon_0, 0)`)."""
    epsilon_run, gamma = check_epsilon(epsilon_run), _check_probability(stop_probability)
    if isinstance(delta_run, bool) or not isinstance(delta_run, (int, float, np.floating)) \
            or not 0.0 <= float(delta_run) < 1.0:
        raise ValueError(f"delta_run must be a number in [0, 1), got {delta_run!r}.")
    slack = float(delta_run) / gamma
    c = np.exp(epsilon_run) + slack
    return float(epsilon_run + 2.0 * np.log(c)), float(c * c * slack)


def run_budget(epsilon, delta, stop_probability):
    r"""A run's :math:`(\varepsilon_0, \delta_0)` whose random stopping is (``epsilon``, ``delta``)-DP in total.

    :math:`a = \delta_0/\gamma = \delta e^{-2\varepsilon/3}/4` and :math:`\varepsilon_0 = (\varepsilon - 2a)/3`.
    Then :math:`2\ln(e^{\varepsilon_0} + a) \le 2\varepsilon_0 + 2a`, so the total ε is at most
    :math:`3\varepsilon_0 + 2a = \varepsilon`, and :math:`c^2 a \le e^{2\varepsilon_0}(1 + a)^2 a \le \delta`
    (:func:`selection_guarantee`, checked here). ``delta = 0``: :math:`(\varepsilon/3, 0)`, :func:`run_epsilon`
    (the pure theorem).
    """
    epsilon, gamma = check_epsilon(epsilon), _check_probability(stop_probability)
    if isinstance(delta, bool) or not isinstance(delta, (int, float, np.floating)) or not 0.0 <= float(delta) < 1.0:
        raise ValueError(f"delta must be a number in [0, 1), got {delta!r}.")
    if float(delta) == 0.0:
        return run_epsilon(epsilon), 0.0
    slack = float(delta) * np.exp(-2.0 * epsilon / 3.0) / 4.0
    # (1 - 1e-12): room for the rounding of the arithmetic, which the inequalities do not see
    epsilon_run, delta_run = (epsilon - 2.0 * slack) / SELECTION_MULTIPLE * (1.0 - 1e-12), gamma * slack
    total = selection_guarantee(epsilon_run, delta_run, gamma)
    if total[0] > epsilon or total[1] > float(delta):  # pragma: no cover - excluded by the inequalities above
        raise ArithmeticError(f"the run budget ({epsilon_run!r}, {delta_run!r}) gives {total}, above the target.")
    return float(epsilon_run), float(delta_run)


def _check_probability(stop_probability):
    if isinstance(stop_probability, bool) or not isinstance(stop_probability, (int, float, np.floating)) \
            or not 0.0 < float(stop_probability) <= 1.0:
        raise ValueError(f"stop_probability must be a number in (0, 1], got {stop_probability!r}: the number of "
                         f"runs is geometric with this parameter (1 stops after one run).")
    return float(stop_probability)


@dataclass(frozen=True)
class SelectionResult:
    r"""Outcome of random stopping.

    Released: ``output`` (for :func:`private_selection`, the classifier ``coef`` and its candidate ``lam``) and its
    ``score``. ``n_runs``, ``tried`` and ``scores`` describe every run; they are diagnostics, not released.
    """

    output: object
    score: float
    n_runs: int
    tried: tuple
    scores: np.ndarray

    @property
    def coef(self):
        return self.output[1]

    @property
    def lam(self):
        return self.output[0]


def random_stopping(run, stop_probability, random_state=None):
    r"""Liu & Talwar's random stopping: ``run`` again until a coin of bias ``stop_probability`` says stop.

    ``run(stream)`` returns ``(candidate, score)`` and draws its randomness only from ``stream`` (a Generator);
    each run gets its own stream, the stopping coins another. Returns a :class:`SelectionResult` with the
    highest-scoring run (the first among ties). Privacy: :math:`3\varepsilon_0`-DP when ``run`` is
    :math:`\varepsilon_0`-DP with a continuous score (module docstring); that is the caller's to ensure.
    """
    gamma = _check_probability(stop_probability)
    if not callable(run):
        raise ValueError(f"run must be a function run(random_state) -> (candidate, score), got {run!r}.")
    coins, runs = check_random_state(random_state).spawn(2)
    tried, scores = [], []
    while True:
        candidate, score = run(runs.spawn(1)[0])
        tried.append(candidate)
        scores.append(float(score))
        if coins.random() < gamma:  # stop with probability gamma after each run; no cap (no δ)
            break
    best = int(np.argmax(scores))
    return SelectionResult(tried[best], scores[best], len(scores), tuple(tried), np.array(scores))


def noisy_training_error(coef, X, y, epsilon, random_state=None):
    r"""The training error of ``coef`` plus Laplace noise of scale :math:`1/(n\varepsilon)`: ε-DP for a fixed ``coef``.

    Replacing one of the :math:`n` records changes the error fraction of a fixed classifier by at most :math:`1/n`.
    """
    sensitivity = round_up(Fraction(1, len(y)))  # 1/n, rounded up (dplr.directed_rounding)
    return float(laplace_mechanism(test_error(coef, X, y), sensitivity, epsilon, random_state).reshape(-1)[0])


def private_selection(X, y, lambdas, epsilon, stop_probability=0.1, score_share=0.1, loss="logistic",
                      huber_h=0.5, fit=None, random_state=None, release="certified", delta=0.0):
    r"""An ε-DP classifier whose λ is chosen by random stopping, every run on the whole training set.

    Each run is :math:`\varepsilon_0 = \varepsilon/3`-DP: a λ drawn uniformly from ``lambdas``, the learner at
    :math:`(1 - s)\varepsilon_0` and :func:`noisy_training_error` at :math:`s\varepsilon_0`, :math:`s` =
    ``score_share``; the highest score (the fewest noisy training errors) wins. The total is ε (module docstring).

    **Rounding and refusals.** :math:`\varepsilon_0` and its two parts are rounded down (:func:`run_epsilon`; the
    parts sum to at most :math:`\varepsilon_0` in exact arithmetic), the score's sensitivity :math:`1/n` up
    (:func:`noisy_training_error`). Everything a run could refuse on public quantities (the candidates, ``score_share``,
    the split, ``stop_probability``) is checked here, before any run reads the data; inside a run the default learner
    (:func:`dplr.algorithms.objective_perturbation`) refuses on nothing but public quantities (n, λ, its ε) and, in
    its certified release, its own noise draw, and never on whether its solver converged (the idealised release
    takes the solver's point as it is; the certified one falls back to a fixed number of steps,
    :func:`dplr.release.private_release`), so no run's refusal or fallback depends on the data. A ``fit`` of the
    caller's must do the same: the guarantee rests on it.

    Parameters
    ----------
    X, y : training data, rows with :math:`\lVert x\rVert \le 1`, labels in {-1, +1}
    lambdas : the public candidates (λ values; with ``fit``, any settings ``fit`` understands)
    epsilon : the total budget of the whole procedure
    stop_probability : γ, the stopping probability after each run (the expected number of runs is 1/γ)
    score_share : the share :math:`s \in (0, 1)` of each run's budget spent on the score
    loss, huber_h : as in :func:`dplr.algorithms.objective_perturbation`, the default learner
    fit : None, or ``fit(X, y, candidate, epsilon, random_state)`` returning a coefficient vector, ε-DP in the
        records for the ``epsilon`` it is given (the guarantee rests on it); with ``delta > 0``,
        ``fit(X, y, candidate, epsilon, random_state, delta)``, (ε, δ)-DP for the ``epsilon`` and ``delta`` given
    random_state : seed or Generator; the candidates, the noise and the stopping all draw from it
    release : the default learner's release (:func:`dplr.algorithms.objective_perturbation`): ``"certified"`` (the
        default, covered by a theorem for the solver's point) or ``"exact_minimiser"`` (the papers' idealisation)
    delta : the total δ (0: pure ε-DP). With ``delta > 0`` each run is :math:`(\varepsilon_0, \delta_0)` =
        :func:`run_budget` ``(epsilon, delta, stop_probability)`` and the release is (ε, δ)-DP (module docstring);
        it needs a ``fit``

    Returns
    -------
    SelectionResult, with ``lam`` and ``coef`` of the released run
    """
    epsilon = check_epsilon(epsilon)
    X, y = check_signed_data(X, y)
    X = check_rows_in_ball(X)
    candidates = list(lambdas)
    if not candidates:
        raise ValueError("lambdas must hold at least one candidate.")
    if isinstance(delta, bool) or not isinstance(delta, (int, float, np.floating)) or not 0.0 <= float(delta) < 1.0:
        raise ValueError(f"delta must be a number in [0, 1) (0: pure epsilon-DP), got {delta!r}.")
    delta = float(delta)
    if fit is None and delta > 0:
        raise ValueError("delta > 0 needs a fit(X, y, candidate, epsilon, random_state, delta) that is "
                         "(epsilon, delta)-DP; the default learner (objective perturbation) is pure epsilon-DP: "
                         "use delta=0.")
    if fit is None:
        candidates = [check_lambda(lam) for lam in candidates]
        loss = get_loss(loss, huber_h)

        def fit(X_, y_, lam, eps, stream):
            return objective_perturbation(X_, y_, eps, lam, loss, random_state=stream, check_input=False,
                                          release=release)
    elif not callable(fit):
        raise ValueError(f"fit must be a function fit(X, y, candidate, epsilon, random_state), got {fit!r}.")
    if isinstance(score_share, bool) or not 0.0 < float(score_share) < 1.0:
        raise ValueError(f"score_share must be in (0, 1), got {score_share!r}: the score needs a positive part "
                         f"of each run's budget, and so does the learner.")
    eps_run, delta_run = run_budget(epsilon, delta, stop_probability) if delta > 0 else (run_epsilon(epsilon), 0.0)
    eps_fit, eps_score = _split(eps_run, float(score_share))  # public, refused here or never
    extra = (delta_run,) if delta > 0 else ()

    def run(stream):
        pick, noise, score_noise = stream.spawn(3)
        index = int(pick.integers(len(candidates)))
        coef = np.asarray(fit(X, y, candidates[index], eps_fit, noise, *extra), dtype=float)
        return (candidates[index], coef), -noisy_training_error(coef, X, y, eps_score, score_noise)

    return random_stopping(run, stop_probability, random_state)


def data_independent_lambda(n, d, epsilon, learner="objective"):
    r"""A λ fixed before seeing the data: :math:`\lambda = d / (n\varepsilon)` (``learner="objective"``), or
    :math:`(d / (n\varepsilon))^{2/3}` (``"sensitivity"``).

    Why this form: objective perturbation's noise moves the minimiser by about
    :math:`\lVert b\rVert/(n\lambda)` with :math:`\lVert b\rVert \approx 2d/\varepsilon` (a Gamma(d) norm of rate
    ε/2), which costs about :math:`d^2/(n^2\varepsilon^2\lambda)` of excess risk, while the regulariser costs about
    :math:`\lambda\lVert w^*\rVert^2/2`; balancing the two with :math:`\lVert w^*\rVert` of order 1 (public: nothing
    is known of the data) gives :math:`\lambda \approx d/(n\varepsilon)` up to a constant, taken as 1 (a choice made
    before any run, not fitted). It uses only n, d and ε, so it costs no privacy.

    For Algorithm 1 (:func:`dplr.algorithms.sensitivity_method`) the noise is added to the minimiser itself,
    :math:`\lVert\eta\rVert \approx 2d/(n\lambda\varepsilon)`, and costs about
    :math:`\lVert\eta\rVert^2` (a smooth loss, curvature at most 1/4, plus :math:`\lambda/2`) of excess risk,
    :math:`\approx d^2/(n^2\lambda^2\varepsilon^2)` up to a constant; balanced against :math:`\lambda/2`:
    :math:`\lambda \approx (d/(n\varepsilon))^{2/3}`, the constant again 1.
    """
    if learner not in ("objective", "sensitivity"):
        raise ValueError(f"learner must be 'objective' or 'sensitivity', got {learner!r}.")
    if isinstance(n, bool) or not isinstance(n, (int, np.integer)) or n < 1 \
            or isinstance(d, bool) or not isinstance(d, (int, np.integer)) or d < 1:
        raise ValueError(f"n and d must be positive integers, got n={n!r}, d={d!r}.")
    ratio = float(d) / (float(n) * check_epsilon(epsilon))
    return ratio if learner == "objective" else ratio ** (2.0 / 3.0)

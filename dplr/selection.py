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
0), then random stopping is :math:`3\varepsilon_0`-DP, for every :math:`\gamma \in (0, 1]`. (They also treat
(ε, δ)-DP runs and a cap on the number of runs, which costs a δ; this module has no cap, so no δ.) The book proves
the pure, uncapped case (``book/private_selection.ipynb``): with :math:`F_D(q) = \Pr[\text{score of }
Q(D) < q]`, the output has law :math:`\gamma\,(1 - (1-\gamma)F_D(q))^{-2}\,\mu_D(dx, dq)`; the base law
:math:`\mu_D` moves by :math:`e^{\varepsilon_0}` and the weight by :math:`e^{2\varepsilon_0}`.

**One run here** (:func:`private_selection`): a candidate drawn uniformly at random from a public list, the private
learner on the *whole* training set at :math:`\varepsilon_{\text{fit}} = (1 - s)\,\varepsilon_0`, and the score
minus the learner's training error plus Laplace noise of scale :math:`1/(n\,\varepsilon_{\text{score}})`,
:math:`\varepsilon_{\text{score}} = s\,\varepsilon_0` (the error of a fixed classifier changes by at most
:math:`1/n` when one record is replaced; :func:`dplr.mechanisms.laplace_mechanism`). By composition the run is
:math:`\varepsilon_0`-DP (the candidate's draw does not look at the data), and its score is continuous. So with
:math:`\varepsilon_0 = \varepsilon / 3` (:func:`run_epsilon`) the released classifier is ε-DP: the comparison with
Algorithm 3 at the same ε is at **equal total privacy**. The scores of the runs that are not the best, and which
candidates they tried, are *not* released (:class:`SelectionResult` keeps them for teaching only).

**A data-independent rule** (:func:`data_independent_lambda`): no tuning at all, the whole ε for one fit.

Papernot & Steinke (ICLR 2022) sharpen the accounting in Rényi DP (truncated negative binomial and Poisson numbers
of runs); that form is not implemented here.
"""
from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction

import numpy as np

from dplr.algorithms import objective_perturbation
from dplr.ball import check_rows_in_ball
from dplr.directed_rounding import round_up
from dplr.mechanisms import laplace_mechanism
from dplr.tuning import test_error
from dplr.validation import check_epsilon, check_lambda, check_random_state, check_signed_data

__all__ = [
    "SELECTION_MULTIPLE",
    "SelectionResult",
    "run_epsilon",
    "selection_epsilon",
    "random_stopping",
    "noisy_training_error",
    "private_selection",
    "data_independent_lambda",
]

#: Random stopping over :math:`\varepsilon_0`-DP runs is :math:`3\varepsilon_0`-DP (the theorem's multiple).
SELECTION_MULTIPLE = 3


def run_epsilon(epsilon):
    r"""The budget :math:`\varepsilon_0 = \varepsilon / 3` of each run, for a total budget ``epsilon``."""
    return check_epsilon(epsilon) / SELECTION_MULTIPLE


def selection_epsilon(epsilon_run):
    r"""The total :math:`3\varepsilon_0` that random stopping over :math:`\varepsilon_0`-DP runs guarantees."""
    return SELECTION_MULTIPLE * check_epsilon(epsilon_run)


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
                      huber_h=0.5, fit=None, random_state=None, release="certified"):
    r"""An ε-DP classifier whose λ is chosen by random stopping, every run on the whole training set.

    Each run is :math:`\varepsilon_0 = \varepsilon/3`-DP: a λ drawn uniformly from ``lambdas``, the learner at
    :math:`(1 - s)\varepsilon_0` and :func:`noisy_training_error` at :math:`s\varepsilon_0`, :math:`s` =
    ``score_share``; the highest score (the fewest noisy training errors) wins. The total is ε (module docstring).

    Parameters
    ----------
    X, y : training data, rows with :math:`\lVert x\rVert \le 1`, labels in {-1, +1}
    lambdas : the public candidates (λ values; with ``fit``, any settings ``fit`` understands)
    epsilon : the total budget of the whole procedure
    stop_probability : γ, the stopping probability after each run (the expected number of runs is 1/γ)
    score_share : the share :math:`s \in (0, 1)` of each run's budget spent on the score
    loss, huber_h : as in :func:`dplr.algorithms.objective_perturbation`, the default learner
    fit : None, or ``fit(X, y, candidate, epsilon, random_state)`` returning a coefficient vector, ε-DP in the
        records for the ``epsilon`` it is given (the guarantee rests on it)
    random_state : seed or Generator; the candidates, the noise and the stopping all draw from it
    release : the default learner's release (:func:`dplr.algorithms.objective_perturbation`): ``"certified"`` (the
        default, covered by a theorem for the solver's point) or ``"exact_minimiser"`` (the papers' idealisation)

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
    if fit is None:
        candidates = [check_lambda(lam) for lam in candidates]

        def fit(X_, y_, lam, eps, stream):
            return objective_perturbation(X_, y_, eps, lam, loss, huber_h, random_state=stream, check_input=False,
                                          release=release)
    elif not callable(fit):
        raise ValueError(f"fit must be a function fit(X, y, candidate, epsilon, random_state), got {fit!r}.")
    if isinstance(score_share, bool) or not 0.0 < float(score_share) < 1.0:
        raise ValueError(f"score_share must be in (0, 1), got {score_share!r}: the score needs a positive part "
                         f"of each run's budget, and so does the learner.")
    eps_run = run_epsilon(epsilon)
    eps_score = float(score_share) * eps_run
    eps_fit = eps_run - eps_score

    def run(stream):
        pick, noise, score_noise = stream.spawn(3)
        index = int(pick.integers(len(candidates)))
        coef = np.asarray(fit(X, y, candidates[index], eps_fit, noise), dtype=float)
        return (candidates[index], coef), -noisy_training_error(coef, X, y, eps_score, score_noise)

    return random_stopping(run, stop_probability, random_state)


def data_independent_lambda(n, d, epsilon):
    r"""A λ fixed before seeing the data: :math:`\lambda = d / (n\varepsilon)`.

    Why this form: objective perturbation's noise moves the minimiser by about
    :math:`\lVert b\rVert/(n\lambda)` with :math:`\lVert b\rVert \approx 2d/\varepsilon` (a Gamma(d) norm of rate
    ε/2), which costs about :math:`d^2/(n^2\varepsilon^2\lambda)` of excess risk, while the regulariser costs about
    :math:`\lambda\lVert w^*\rVert^2/2`; balancing the two with :math:`\lVert w^*\rVert` of order 1 (public: nothing
    is known of the data) gives :math:`\lambda \approx d/(n\varepsilon)` up to a constant, taken as 1 (a choice made
    before any run, not fitted). It uses only n, d and ε, so it costs no privacy.
    """
    if isinstance(n, bool) or not isinstance(n, (int, np.integer)) or n < 1 \
            or isinstance(d, bool) or not isinstance(d, (int, np.integer)) or d < 1:
        raise ValueError(f"n and d must be positive integers, got n={n!r}, d={d!r}.")
    return float(d) / (float(n) * check_epsilon(epsilon))

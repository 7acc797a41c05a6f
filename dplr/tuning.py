r"""Choosing the regulariser λ with and without privacy (JMLR 2011, Section 5, Algorithm 3).

A private classifier is only as private as the way its hyperparameters were chosen: picking
:math:`\lambda` by the test or validation error of the *same* records leaks them. Chaudhuri,
Monteleoni & Sarwate (JMLR 12, 2011, Section 5) tune privately:

**Algorithm 3** (private parameter tuning). Given candidates :math:`\lambda_1, \dots, \lambda_m`
and a budget ε:

1. split the data at random into :math:`m + 1` disjoint parts :math:`D_1, \dots, D_{m+1}`;
2. for :math:`i = 1, \dots, m`: train :math:`w_i` on :math:`D_i` with :math:`\lambda_i` by an
   ε-differentially private algorithm (here Algorithm 1 or the corrected Algorithm 2, by default in its certified
   release: ``release="certified"``, :func:`private_tuning_experiment`);
3. count the errors :math:`z_i` of :math:`w_i` on :math:`D_{m+1}`;
4. release :math:`w_i` with probability proportional to :math:`e^{-\varepsilon z_i / 2}`.

Every record lies in exactly one part. A record of :math:`D_i`, :math:`i \le m`, influences only
:math:`w_i`, an ε-DP output; a record of :math:`D_{m+1}` changes each count :math:`z_i` by at most
1, so step 4 is the exponential mechanism with utility :math:`-z_i` of sensitivity 1, ε-DP for
that part (neighbouring data sets differ in one record, *replace one*). The parts are disjoint and the split does
not look at the records, so the released
:math:`w_i` is ε-DP for the whole data set (parallel composition; JMLR 2011, Theorem 10). The
candidates :math:`w_j, j \ne i`, and the counts :math:`z` are *not* released: they are diagnostics
(:class:`PrivateTuningResult` keeps them for teaching only).

The price: each candidate sees only :math:`n/(m+1)` records. The non-private alternative
(:func:`nonprivate_lambda_selection`) picks the λ with the smallest validation error -- the usual
practice, which is not differentially private.

One implementation of Algorithm 3 serves both entry points: :func:`private_lambda_selection` is one
run of it, :func:`private_tuning_experiment` many runs with several ε and both private methods sharing
each run's split (common random numbers). A run's randomness is planned first (the split and one
stream per candidate and per selection), then the parts are solved -- all problems of a run's parts
together (:func:`dplr.solver.solve_on_parts`) -- and the candidates selected. (This module is over 400 lines: the
two forms of Algorithm 3 share their planning and selection, which belong beside them.)
"""
from __future__ import annotations

import zlib
from dataclasses import dataclass

import numpy as np
import pandas as pd

from dplr.algorithms import sensitivity_method_noise, standard_erm
from dplr.ball import check_rows_in_ball
from dplr.calibration import (OBJECTIVE_PERTURBATION_RELEASES, certified_gamma,
                              certified_objective_perturbation_calibration, objective_perturbation_calibration)
from dplr.directed_rounding import exact, round_down
from dplr.losses import get_loss
from dplr.mechanisms import bernoulli_exp
from dplr.release import certified_output, certified_solve_plan, certify_release
from dplr.solver import fixed_step_descent, fixed_step_plan, solve_on_parts, stopping_tolerance
from dplr.threads import default_threads, one_blas_thread, thread_map
from dplr.validation import (
    check_epsilon,
    check_lambda,
    check_positive_integer,
    check_random_state,
    check_signed_data,
)

__all__ = [
    "TUNING_METHODS",
    "SOLVER_TOL",
    "PrivateTuningResult",
    "EXPONENTIAL_SAMPLERS",
    "exponential_coefficient",
    "exponential_mechanism",
    "tuning_split",
    "private_lambda_selection",
    "nonprivate_lambda_selection",
    "private_tuning_experiment",
    "private_tuning_with",
    "test_error",
]

#: Gradient norm Algorithm 1's released points are certified to meet, and the idealisation's perturbed solves reach
#: (:func:`dplr.solver.solve_on_parts`; the certified Algorithm 2 solves to its own γ); Algorithm 1's noise covers the
#: solver's distance :math:`\le` SOLVER_TOL/λ from the exact minimiser (:func:`dplr.calibration.sensitivity_bound`).
SOLVER_TOL = 1e-8

#: The private algorithms a tuning run can use, ``"sensitivity"`` (Algorithm 1), ``"objective"`` (Algorithm 2).
TUNING_METHODS = ("sensitivity", "objective")


@dataclass(frozen=True)
class PrivateTuningResult:
    r"""Outcome of Algorithm 3.

    Only ``coef`` (and the λ it was trained with) is released. ``candidates``,
    ``validation_errors`` and ``probabilities`` depend on the data without privacy protection and
    are kept for analysis only.

    Attributes
    ----------
    coef : ndarray (d,)
        The released classifier :math:`w_i`.
    index : int
        Which candidate was released; ``lambdas[index]`` is its λ.
    lam : float
    candidates : ndarray (m, d)
        :math:`w_1, \dots, w_m`, each trained privately on its own part.
    validation_errors : ndarray (m,) of int
        :math:`z_i`, errors of each candidate on the held-out part :math:`D_{m+1}`.
    probabilities : ndarray (m,)
        The exponential mechanism's selection probabilities :math:`\propto e^{-\varepsilon z_i/2}`.
    """

    coef: np.ndarray
    index: int
    lam: float
    candidates: np.ndarray
    validation_errors: np.ndarray
    probabilities: np.ndarray


def test_error(coef, X, y):
    r"""Fraction of rows misclassified by :math:`\operatorname{sgn}(w^\top x)` (0 counts as -1).

    ``coef`` of shape (d,) gives a float; of shape (k, d), an array of k error rates.
    """
    scores = np.asarray(X, dtype=float) @ np.asarray(coef, dtype=float).T
    y = np.asarray(y, dtype=float)
    if np.all((y == 1.0) | (y == -1.0)):  # labels in {-1, +1}: compare signs, no arrays of predictions
        wrong = (scores > 0) != (y > 0 if scores.ndim == 1 else (y > 0)[:, None])
    else:
        wrong = np.where(scores > 0, 1.0, -1.0) != (y if scores.ndim == 1 else y[:, None])
    return float(np.count_nonzero(wrong) / y.size) if scores.ndim == 1 else np.count_nonzero(wrong, axis=0) / y.size


test_error.__test__ = False  # a helper, not a pytest test


#: The samplers of :func:`exponential_mechanism`: ``"float"`` (``Generator.choice`` on float64 probabilities; the
#: default, whose streams the book's records and chapters reproduce) and ``"exact"`` (rejection sampling with exact
#: coins, pure ε-DP as run).
EXPONENTIAL_SAMPLERS = ("float", "exact")


def exponential_coefficient(epsilon, sensitivity=1.0) -> float:
    r"""The coefficient :math:`\varepsilon/(2\Delta u)` of the exponential mechanism's logits, rounded *down* to a
    float64 (:func:`dplr.directed_rounding.round_down`): the largest float64 :math:`\le` the exact quotient of the
    two float64 inputs, so that the float sampler's logits are no steeper than the proof's. For :math:`\Delta u`
    a power of two (Algorithm 3's 1) the quotient is a float64 and nothing changes."""
    return round_down(exact(epsilon) / (2 * exact(sensitivity)))


def exponential_mechanism(utilities, epsilon, sensitivity=1.0, random_state=None, sampler="float"):
    r"""Pick index :math:`i` with probability :math:`\propto \exp(\varepsilon u_i / (2\Delta u))`.

    The exponential mechanism (McSherry & Talwar, 2007) is ε-DP when changing one record changes
    every utility :math:`u_i` by at most ``sensitivity`` :math:`\Delta u`. In Algorithm 3 the
    utilities are :math:`-z_i` (minus the error counts) with :math:`\Delta u = 1`.

    ``sampler="float"`` (default): logits :math:`c\,u_i` with :math:`c` = :func:`exponential_coefficient` (rounded
    down), float64 probabilities, ``Generator.choice``. Not pure ε-DP as run: ``choice`` compares a uniform on the
    grid :math:`2^{-53}\mathbb{Z}` with the float64 cumulative sums, so a candidate whose probability is below
    about :math:`2^{-53}` is *never* drawn, while on a neighbouring data set (its utility one higher, its probability
    :math:`e^{\varepsilon/2}` times larger) it may be drawn with probability :math:`2^{-53}`: a ratio of infinity
    (``tests/test_tuning.py`` exhibits such a pair). It stays the default because the published numbers (paper,
    thesis, the real-data and selection records, the chapters) were drawn by it: another sampler draws another stream.

    ``sampler="exact"``: rejection sampling in exact arithmetic. With :math:`\varepsilon` and the utilities taken as
    the exact rationals of their float64 values and :math:`u_{\max} = \max_j u_j`, repeat: propose :math:`I`
    uniform on :math:`\{0, \dots, m-1\}` (``Generator.integers``), accept it with probability
    :math:`e^{-\gamma_I}`, :math:`\gamma_i = \varepsilon(u_{\max} - u_i)/(2\Delta u) \ge 0`, a rational,
    by the exact coin :func:`dplr.mechanisms.bernoulli_exp` (Canonne, Kamath & Steinke 2020, Algorithm 1).

    *Proof that it samples the exponential mechanism exactly.* One round accepts candidate :math:`i` with probability
    :math:`a_i = \tfrac1m e^{-\gamma_i}` and rejects with :math:`r = 1 - \sum_j a_j`; rounds are independent, so
    the output is :math:`i` with probability :math:`\sum_{k \ge 0} r^k a_i = a_i / \sum_j a_j
    = e^{\varepsilon u_i/(2\Delta u)} / \sum_j e^{\varepsilon u_j/(2\Delta u)}` (the factor
    :math:`e^{-\varepsilon u_{\max}/(2\Delta u)}` cancels). A maximiser has :math:`\gamma = 0`, so
    :math:`\sum_j a_j \ge 1/m`: :math:`r \le 1 - 1/m < 1`, the loop ends with probability 1 after at most
    :math:`m` rounds on average. Every step is exact given uniform random integers (the coin is exact for
    rational :math:`\gamma`, the proposal is numpy's unbiased bounded integers), so the released index has exactly
    the mechanism's law, and McSherry & Talwar's ratio bound :math:`e^{\varepsilon}` holds for every outcome of the
    sampler as run -- for the ε whose float64 the caller passed. (As for every sampler here, this assumes the
    Generator's bits are uniform; a pseudo-random generator's are only indistinguishable from uniform.)

    Returns ``(index, probabilities)``; ``probabilities`` are float64 (rounded, for diagnostics) for both samplers.
    """
    epsilon = check_epsilon(epsilon)
    rng = check_random_state(random_state)
    utilities = np.asarray(utilities, dtype=float)
    if utilities.ndim != 1 or utilities.size == 0 or not np.all(np.isfinite(utilities)):
        raise ValueError(f"utilities must be a non-empty 1-D array of finite numbers, got {utilities!r}.")
    if not np.isfinite(sensitivity) or sensitivity <= 0:
        raise ValueError(f"sensitivity must be a positive finite number, got {sensitivity!r}.")
    if not isinstance(sampler, str) or sampler not in EXPONENTIAL_SAMPLERS:
        raise ValueError(f"sampler must be one of {EXPONENTIAL_SAMPLERS}, got {sampler!r}.")
    logits = exponential_coefficient(epsilon, sensitivity) * utilities
    weights = np.exp(logits - logits.max())  # shift for stability; the probabilities are unchanged
    probabilities = weights / weights.sum()
    if sampler == "float":
        return int(rng.choice(utilities.size, p=probabilities)), probabilities
    scale = exact(epsilon) / (2 * exact(sensitivity))
    top = exact(utilities.max())
    while True:
        proposal = int(rng.integers(utilities.size))
        if bernoulli_exp(scale * (top - exact(utilities[proposal])), rng):
            return proposal, probabilities


def tuning_split(n, m, random_state=None):
    """Split ``range(n)`` at random into ``m + 1`` disjoint parts of (almost) equal size.

    The split is a uniformly random permutation, independent of the records' values.
    """
    if isinstance(n, bool) or not isinstance(n, (int, np.integer)) or isinstance(m, bool) \
            or not isinstance(m, (int, np.integer)) or m < 1:
        raise ValueError(f"n and m must be integers with m >= 1, got n={n!r}, m={m!r}.")
    if n < 2 * (m + 1):
        raise ValueError(f"{n} records cannot be split into {m + 1} parts of at least 2 records each; "
                         f"use fewer candidate λ values or more data.")
    rng = check_random_state(random_state)
    return np.array_split(rng.permutation(int(n)), int(m) + 1)


def _check_inputs(X, y, lambdas, method, release="certified"):
    X, y = check_signed_data(X, y)
    X = check_rows_in_ball(X)
    lambdas = np.array([check_lambda(lam) for lam in np.atleast_1d(lambdas)], dtype=float)
    if lambdas.size == 0:
        raise ValueError("lambdas must hold at least one candidate value.")
    if method not in TUNING_METHODS:
        raise ValueError(f"method must be one of {TUNING_METHODS}, got {method!r}.")
    if release not in OBJECTIVE_PERTURBATION_RELEASES:
        raise ValueError(f"release must be one of {OBJECTIVE_PERTURBATION_RELEASES}, got {release!r}.")
    return X, y, lambdas


@dataclass(frozen=True)
class _Run:
    """The randomness of one run of Algorithm 3: the split and the streams, fixed before anything is solved.

    ``parts``: the ``m + 1`` index arrays of :func:`tuning_split`; ``streams[method][epsilon]``: ``m``
    candidate streams (one per part) and one selection stream. From one stream ``s``: ``s.spawn(2)``
    gives the split's stream and the root of the others, which spawns ``m + 1`` streams per method and
    ε, in that order.
    """

    parts: list
    streams: dict

    @classmethod
    def plan(cls, n, m, epsilons, methods, stream, by_content=False):
        split_rng, noise_root = stream.spawn(2)
        parts = tuning_split(n, m, split_rng)
        if by_content:  # one stream per (method, ε), named by them: which other ε run changes no draw
            return cls(parts, {method: {eps: _named_stream(noise_root, method, eps).spawn(m + 1) for eps in epsilons}
                               for method in methods})
        return cls(parts, {method: {eps: noise_root.spawn(m + 1) for eps in epsilons} for method in methods})


def _named_stream(root, method, eps):
    """The child of ``root`` named by ``method`` and the bits of ``eps`` (as :mod:`dplr.replication.seeding` names)."""
    root = root.bit_generator.seed_seq  # the root's seed sequence (a Generator's, numpy >= 1.25)
    bits = int(np.float64(eps).view(np.uint64))
    key = (*root.spawn_key, zlib.crc32(str(method).encode("utf-8")), bits >> 32, bits & 0xFFFFFFFF)
    return np.random.default_rng(np.random.SeedSequence(root.entropy, spawn_key=key))


def _unperturbed_tolerance(n, d, lam, loss, with_erm):
    """The tolerance of a part's unperturbed solve and, with Algorithm 1, its fallback's plan (``None`` without): the
    tolerance is the one whose stop certifies :data:`SOLVER_TOL` despite rounding
    (:func:`dplr.solver.stopping_tolerance`), whether or not Algorithm 1 runs, so that Algorithm 2's start is the
    same either way; where float64 cannot certify it (a tiny λ), or its fallback cannot reach :data:`SOLVER_TOL`
    (:func:`dplr.solver.fixed_step_plan`), Algorithm 1 is refused -- on public quantities, before the data are read
    -- and Algorithm 2 alone starts from a point at :data:`SOLVER_TOL` (its proof needs the exact minimiser in any
    case)."""
    try:
        return (stopping_tolerance(SOLVER_TOL, n, d, lam, loss, name="SOLVER_TOL"),
                fixed_step_plan(SOLVER_TOL, n, d, lam, loss, name="SOLVER_TOL") if with_erm else None)
    except ValueError as error:
        if not with_erm:
            return SOLVER_TOL, None
        raise ValueError(f"Algorithm 1 cannot be tuned over the candidate lam = {float(lam)!r}: {error} Algorithm 3's "
                         f"SOLVER_TOL is fixed, so in practice: larger candidate lambdas, or "
                         f"method='objective'.") from None


def _objective_calibration(n, eps, lam, loss, release):
    r"""One part's Algorithm 2 calibration at ``eps``: :func:`~dplr.calibration.objective_perturbation_calibration`,
    or with ``release="certified"`` ε split as :func:`~dplr.calibration.certified_objective_perturbation_calibration`
    splits it, :math:`\gamma` = :func:`~dplr.calibration.certified_gamma` of the part's ``n``."""
    if release == "certified":
        return certified_objective_perturbation_calibration(eps, n, lam, certified_gamma(n), loss.curvature,
                                                            loss.lipschitz, check_input=False)
    return objective_perturbation_calibration(eps, n, lam, loss.curvature, loss.lipschitz, check_input=False)


def _solve_run(X, y, lambdas, parts, objective_rngs, loss, with_erm, release="certified"):
    r"""All solves one run needs: on each part, the non-private minimiser and one Algorithm 2 run per ε.

    ``objective_rngs[i]`` maps ε to the stream of part ``i``'s Algorithm 2 draws (:math:`b`, then with
    ``release="certified"`` the output noise). :func:`dplr.solver.solve_on_parts` computes each part's unperturbed
    minimiser (the start of its perturbed problems, and Algorithm 1's :math:`w^*`), one Hessian there, and solves
    every ε's problem, whatever its :math:`\Delta`, around it -- to :data:`SOLVER_TOL` for the idealisation
    (``release="exact_minimiser"``), to each problem's :func:`~dplr.release.certified_solve_plan` tolerance for the
    certified release, whose points are then certified or replaced by the fallback's and get their output noise
    (:func:`dplr.release.certified_output`, the one certificate of :mod:`dplr.release`). Each minimiser depends only
    on its own draw and its part, not on which other problems share the batch. Returns one ``(w_star or None,
    {epsilon: w})`` per part.
    """
    d = X.shape[1]
    problems, drawn, tolerances = [], [], []
    for part, lam, rngs in zip(parts, lambdas, objective_rngs):
        calibrations = [(eps, rng, _objective_calibration(len(part), eps, lam, loss, release)) for eps, rng in rngs.items()]
        # b from each calibration's mechanism, on the part's stream (as dplr.algorithms.objective_perturbation_noise)
        drawn.append([(eps, rng, cal, cal.mechanism(d).sample(random_state=rng)) for eps, rng, cal in calibrations])
        noise = np.reshape([b for _, _, _, b in drawn[-1]], (-1, d))
        problems.append((X[part], y[part], lam, noise, np.array([cal.ridge for _, _, cal, _ in drawn[-1]])))
        if release == "certified":  # each problem's tolerance and fallback plan: public (n, d, lam + Delta, ||b||)
            tolerances.append([certified_solve_plan(cal, len(part), d, lam, loss, b) for _, _, cal, b in drawn[-1]])
    targets, plans = zip(*[_unperturbed_tolerance(len(part), d, lam, loss, with_erm)
                           for part, lam in zip(parts, lambdas)])
    tol = ([np.array([target for target, _ in part], dtype=float) for part in tolerances]
           if release == "certified" and any(drawn) else SOLVER_TOL)
    solutions = solve_on_parts(problems, loss, tol=tol, tol_w0=list(targets))
    released = []
    for solution, part, lam, plan in zip(solutions, parts, lambdas, plans):
        if with_erm:  # Algorithm 1 releases w0 + noise: the one certificate of dplr.release, or its fallback
            released.append(certify_release(
                solution.grad_norm_w0, solution.w0, len(part), lam, loss, SOLVER_TOL,
                lambda failed, part=part, plan=plan: fixed_step_descent(X[part], y[part], loss, plan)[None]))
        else:
            released.append(None)
    out = []
    for i, (w0, solution, part, lam) in enumerate(zip(released, solutions, parts, lambdas)):
        coefs = {}
        for j, (eps, rng, cal, b) in enumerate(drawn[i]):
            coefs[eps] = solution.coef[j]
            if release == "certified":
                coefs[eps] = certified_output(X[part], y[part], lam, loss, cal, solution.coef[j],
                                              solution.grad_norm[j], b, tolerances[i][j][1], random_state=rng)
        out.append((w0, coefs))
    return out


def _candidates(method, eps, solved, run, lambdas, loss, d):
    """The ``m`` candidates of one method at one ε: Algorithm 2's solutions, or Algorithm 1's releases."""
    m = len(lambdas)
    if method == "objective":
        return np.vstack([solved[i][1][eps] for i in range(m)])
    rngs = run.streams[method][eps]
    return np.vstack([solved[i][0] + sensitivity_method_noise(len(run.parts[i]), d, eps, lambdas[i], loss,
                                                               random_state=rngs[i], check_input=False,
                                                               solver_tol=SOLVER_TOL)[0]
                      for i in range(m)])


def _error_counts(candidates, X_val, y_val):
    """Errors of each row of ``candidates`` on the held-out part: the counts z of step 3 (one matrix product)."""
    scores = X_val @ candidates.T
    return np.count_nonzero((scores > 0) != (y_val > 0)[:, None], axis=0).astype(int)  # labels in {-1, +1}


def _p_fewest_errors(z, probabilities):
    """Probability the exponential mechanism chose *a* candidate with the fewest validation errors ``z``: the sum
    over tied candidates (with ties, the first fewest-errors candidate's own probability would understate it)."""
    z = np.asarray(z)
    return min(1.0, float(np.asarray(probabilities)[z == z.min()].sum()))  # a sum of rounded shares can pass 1


def _select(z, epsilon, rng, sampler="float"):
    """Step 4: the exponential mechanism on the counts ``z``. Returns ``(index, probabilities)``."""
    return exponential_mechanism(-z.astype(float), epsilon, 1.0, rng, sampler)


def _solve_runs(X, y, lambdas, runs, epsilons, methods, loss, n_jobs, release="certified"):
    """Solve every part of every run, runs on threads (BLAS on one thread): ``solved[r][i]``."""
    m = len(lambdas)

    def run_task(run):
        rngs = [{eps: run.streams["objective"][eps][i] for eps in epsilons} if "objective" in methods else {}
                for i in range(m)]
        return _solve_run(X, y, lambdas, run.parts[:m], rngs, loss, "sensitivity" in methods, release)

    with one_blas_thread():
        return thread_map(run_task, runs, n_jobs)


def private_lambda_selection(X, y, lambdas, epsilon, method="objective", loss="logistic", huber_h=0.5,
                             random_state=None, release="certified", sampler="float"):
    r"""Algorithm 3 of JMLR 2011: an ε-DP classifier whose λ is chosen privately.

    Parameters
    ----------
    X, y : training data, rows with :math:`\lVert x\rVert \le 1`, labels in {-1, +1}
    lambdas : sequence of m candidate λ values
    epsilon : privacy budget of the whole procedure (each part is used once, with budget ε)
    method : "objective" (corrected Algorithm 2) or "sensitivity" (Algorithm 1)
    loss, huber_h : as in :func:`dplr.algorithms.objective_perturbation`
    random_state : seed or Generator; it draws the split, the noise and the selection
    release : "certified" (default) or "exact_minimiser", Algorithm 2's release (:func:`private_tuning_experiment`)
    sampler : the exponential mechanism's, :data:`EXPONENTIAL_SAMPLERS`: ``"float"`` (default; the streams the
        chapters show, and :func:`private_tuning_experiment`'s) or ``"exact"`` (step 4 ε-DP as run, not only over the
        reals: :func:`exponential_mechanism`)

    Returns
    -------
    PrivateTuningResult
    """
    epsilon = check_epsilon(epsilon)
    if not isinstance(sampler, str) or sampler not in EXPONENTIAL_SAMPLERS:  # before any solve
        raise ValueError(f"sampler must be one of {EXPONENTIAL_SAMPLERS}, got {sampler!r}.")
    X, y, lambdas = _check_inputs(X, y, lambdas, method, release)
    loss = get_loss(loss, huber_h)
    run = _Run.plan(len(y), len(lambdas), [epsilon], [method], check_random_state(random_state))
    solved = _solve_runs(X, y, lambdas, [run], [epsilon], (method,), loss, 1, release)[0]
    candidates = _candidates(method, epsilon, solved, run, lambdas, loss, X.shape[1])
    z = _error_counts(candidates, X[run.parts[-1]], y[run.parts[-1]])
    index, probabilities = _select(z, epsilon, run.streams[method][epsilon][-1], sampler)
    return PrivateTuningResult(candidates[index].copy(), index, float(lambdas[index]), candidates, z, probabilities)


def nonprivate_lambda_selection(X, y, X_val, y_val, lambdas, loss="logistic", huber_h=0.5):
    """Non-private tuning: fit each λ on ``(X, y)``, keep the one with the fewest errors on ``(X_val, y_val)``.

    Not differentially private (the choice depends on the validation records without noise); the
    usual practice and the baseline for Algorithm 3. Ties go to the first (smallest index) λ.
    Returns ``(index, coefs (m, d), validation_errors (m,))``.
    """
    X, y, lambdas = _check_inputs(X, y, lambdas, "objective")
    loss = get_loss(loss, huber_h)
    coefs = np.vstack([standard_erm(X, y, lam, loss, check_input=False) for lam in lambdas])
    errors = test_error(coefs, X_val, y_val)
    return int(np.argmin(errors)), coefs, errors


def private_tuning_experiment(X, y, X_test, y_test, lambdas, epsilons, n_repeats, loss="logistic", huber_h=0.5,
                              methods=TUNING_METHODS, random_state=None, n_jobs=None, release="certified"):
    r"""Run Algorithm 3 for several ε and both private methods, ``n_repeats`` times; test every outcome.

    Each repeat is one ``_Run``: one random split of ``(X, y)`` into ``len(lambdas) + 1`` parts,
    shared by all ε and both methods (common random numbers: the curves differ only through ε and the
    method). The non-private minimisers on the parts are computed once per repeat and reused by
    Algorithm 1 for every ε; Algorithm 2 solves one perturbed problem per part and ε, all problems of a
    repeat's parts together. Noise and selection draw from independent streams spawned from
    ``random_state``, so the result does not depend on ``n_jobs`` (threads; ``None``: every core).
    A repeat with one method and one ε is exactly :func:`private_lambda_selection` on the repeat's stream.

    ``release`` is Algorithm 2's (:data:`~dplr.calibration.OBJECTIVE_PERTURBATION_RELEASES`): ``"certified"`` (the
    default) releases each candidate as :func:`dplr.algorithms.objective_perturbation` does by default -- ε split
    into :math:`\varepsilon_1` for the objective and 1 % for the output noise
    (:func:`~dplr.calibration.certified_objective_perturbation_calibration`), the point certified at gradient norm
    :math:`\gamma = 1/n_i^2` of its part's :math:`n_i` (or the fallback's), plus output noise -- so each candidate is
    ε-DP as released (the book's theorem ``thm-op-certified``) and Algorithm 3's argument applies unchanged;
    ``"exact_minimiser"`` releases the solver's point at :data:`SOLVER_TOL` as if it were the exact minimiser (the
    papers' idealisation).

    Returns a DataFrame with one row per (repeat, method, ε):

    ``lam_private``, ``error_private``
        λ and test error of the classifier Algorithm 3 releases (ε-DP);
    ``lam_nonprivate``, ``error_nonprivate``
        the same candidates, but the one with the fewest validation errors (a non-private choice);
    ``error_best``
        the smallest test error among the candidates (an oracle no one can use);
    ``p_chosen_best``
        probability the exponential mechanism chose a candidate with the fewest validation errors (summed over
        candidates tied at the fewest).

    When ``"sensitivity"`` is among the methods, each repeat also has one row with
    ``method="nonprivate"`` and ``epsilon=inf``: the non-private minimisers of the same parts, the
    one with the fewest validation errors in ``lam_nonprivate`` / ``error_nonprivate`` (the private
    columns are NaN).
    """
    X, y, lambdas = _check_inputs(X, y, lambdas, "objective", release)
    X_test, y_test = np.asarray(X_test, dtype=float), np.asarray(y_test, dtype=float)
    epsilons = [check_epsilon(e) for e in np.atleast_1d(epsilons)]
    methods = tuple(methods)
    for method in methods:
        if method not in TUNING_METHODS:
            raise ValueError(f"methods must be taken from {TUNING_METHODS}, got {method!r}.")
    n_repeats = check_positive_integer(n_repeats, "n_repeats")
    loss = get_loss(loss, huber_h)
    m = len(lambdas)
    n_jobs = default_threads() if n_jobs is None else n_jobs
    if isinstance(n_jobs, bool) or not isinstance(n_jobs, (int, np.integer)) or n_jobs < 1:
        raise ValueError(f"n_jobs must be a positive integer or None, got {n_jobs!r}.")

    runs = [_Run.plan(len(y), m, epsilons, methods, stream)
            for stream in check_random_state(random_state).spawn(n_repeats)]
    solved = _solve_runs(X, y, lambdas, runs, epsilons, methods, loss, int(n_jobs), release)

    rows = []
    for r, run in enumerate(runs):
        X_val, y_val = X[run.parts[-1]], y[run.parts[-1]]
        cells = [(method, eps) for method in methods for eps in epsilons]
        candidates = {cell: _candidates(*cell, solved[r], run, lambdas, loss, X.shape[1]) for cell in cells}
        if "sensitivity" in methods:  # the non-private minimisers of the same parts
            candidates["nonprivate", np.inf] = np.vstack([solved[r][i][0] for i in range(m)])
        # every candidate of the repeat against the test set and the held-out part, one product each (a fixed
        # batch: the same result anywhere)
        everyone = np.vstack(list(candidates.values()))
        errors_of = dict(zip(candidates, test_error(everyone, X_test, y_test).reshape(len(candidates), m)))
        counts_of = dict(zip(candidates, _error_counts(everyone, X_val, y_val).reshape(len(candidates), m)))
        if "sensitivity" in methods:
            # The non-private minimisers of the same parts, chosen by fewest validation errors (no ε).
            errors = errors_of["nonprivate", np.inf]
            best_val = int(np.argmin(counts_of["nonprivate", np.inf]))
            rows.append({
                "repeat": r, "method": "nonprivate", "epsilon": np.inf,
                "lam_private": np.nan, "error_private": np.nan,
                "lam_nonprivate": float(lambdas[best_val]), "error_nonprivate": float(errors[best_val]),
                "error_best": float(errors.min()), "p_chosen_best": np.nan,
            })
        for method, eps in cells:
            z = counts_of[method, eps]
            index, probabilities = _select(z, eps, run.streams[method][eps][-1])
            errors = errors_of[method, eps]
            best_val = int(np.argmin(z))
            rows.append({
                "repeat": r, "method": method, "epsilon": eps,
                "lam_private": float(lambdas[index]), "error_private": float(errors[index]),
                "lam_nonprivate": float(lambdas[best_val]), "error_nonprivate": float(errors[best_val]),
                "error_best": float(errors.min()), "p_chosen_best": _p_fewest_errors(z, probabilities),
            })
    return pd.DataFrame(rows)


def private_tuning_with(fit, X, y, X_test, y_test, candidates, epsilons, n_repeats, name="custom", random_state=None,
                        n_jobs=None):
    r"""Algorithm 3 for any private learner: ``fit`` trains each part's candidate, the exponential mechanism selects.

    ``fit(X_part, y_part, candidate, epsilon, random_state)`` returns a coefficient vector (d,) and must be
    (ε, δ)-differentially private in the records of ``(X_part, y_part)`` for the ``epsilon`` it is given (δ = 0 for
    pure ε-DP); ``candidates`` are its hyperparameter settings (λ values, or whole configurations such as DP-SGD's
    clipping norm, steps and learning rate), candidate ``i`` trained on part ``i``. The privacy argument of the module
    docstring carries over unchanged: the parts are disjoint, each record is used once, by ``fit`` at (ε, δ) or by
    the ε-DP selection, so the released classifier is (ε, δ)-DP (parallel composition). It is not private if
    ``fit`` tunes anything on its part beyond what its own guarantee covers.

    The same repeat structure as :func:`private_tuning_experiment`: each repeat's split comes from its stream in the
    same way, so with the same ``random_state`` and as many candidates the parts are identical to the ones Algorithms
    1 and 2 get there (their comparisons are paired); the noise and the selection draw from streams named by
    ``name`` and ε, so a run at a subset of ``epsilons`` gives the same rows for those ε. Returns one row per
    (repeat, ε): ``method`` (= ``name``), ``epsilon``, ``candidate`` (its index), ``error_private``,
    ``error_nonprivate`` (the fewest-validation-errors candidate, not private), ``error_best`` (an oracle) and
    ``p_chosen_best`` (the probability of choosing a fewest-validation-errors candidate, ties summed). Results do not
    depend on ``n_jobs`` (threads).
    """
    X, y = check_signed_data(X, y)
    X = check_rows_in_ball(X)
    X_test, y_test = np.asarray(X_test, dtype=float), np.asarray(y_test, dtype=float)
    candidates = list(candidates)
    if not candidates:
        raise ValueError("candidates must hold at least one setting.")
    if not callable(fit):
        raise ValueError(f"fit must be a function fit(X, y, candidate, epsilon, random_state), got {fit!r}.")
    epsilons = [check_epsilon(e) for e in np.atleast_1d(epsilons)]
    n_repeats = check_positive_integer(n_repeats, "n_repeats")
    n_jobs = default_threads() if n_jobs is None else n_jobs
    m = len(candidates)
    runs = [_Run.plan(len(y), m, epsilons, [name], stream, by_content=True)
            for stream in check_random_state(random_state).spawn(n_repeats)]

    def part_task(key):
        r, eps, i = key
        part = runs[r].parts[i]
        return np.asarray(fit(X[part], y[part], candidates[i], eps, runs[r].streams[name][eps][i]), dtype=float)

    keys = [(r, eps, i) for r in range(n_repeats) for eps in epsilons for i in range(m)]
    with one_blas_thread():
        trained = dict(zip(keys, thread_map(part_task, keys, int(n_jobs))))
    rows = []
    for r, run in enumerate(runs):
        X_val, y_val = X[run.parts[-1]], y[run.parts[-1]]
        everyone = np.vstack([trained[r, eps, i] for eps in epsilons for i in range(m)])
        errors = test_error(everyone, X_test, y_test).reshape(len(epsilons), m)
        counts = _error_counts(everyone, X_val, y_val).reshape(len(epsilons), m)
        for e, eps in enumerate(epsilons):
            index, probabilities = _select(counts[e], eps, run.streams[name][eps][-1])
            best_val = int(np.argmin(counts[e]))
            rows.append({"repeat": r, "method": name, "epsilon": eps, "candidate": index,
                         "error_private": float(errors[e, index]), "error_nonprivate": float(errors[e, best_val]),
                         "error_best": float(errors[e].min()),
                         "p_chosen_best": _p_fewest_errors(counts[e], probabilities)})
    return pd.DataFrame(rows)

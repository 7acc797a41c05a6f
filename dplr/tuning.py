r"""Choosing the regulariser λ with and without privacy (JMLR 2011, Section 5, Algorithm 3).

A private classifier is only as private as the way its hyperparameters were chosen: picking
:math:`\lambda` by the test or validation error of the *same* records leaks them. Chaudhuri,
Monteleoni & Sarwate (JMLR 12, 2011, Section 5) tune privately:

**Algorithm 3** (private parameter tuning). Given candidates :math:`\lambda_1, \dots, \lambda_m`
and a budget ε:

1. split the data at random into :math:`m + 1` disjoint parts :math:`D_1, \dots, D_{m+1}`;
2. for :math:`i = 1, \dots, m`: train :math:`w_i` on :math:`D_i` with :math:`\lambda_i` by an
   ε-differentially private algorithm (here Algorithm 1 or the corrected Algorithm 2);
3. count the errors :math:`z_i` of :math:`w_i` on :math:`D_{m+1}`;
4. release :math:`w_i` with probability proportional to :math:`e^{-\varepsilon z_i / 2}`.

Every record lies in exactly one part. A record of :math:`D_i`, :math:`i \le m`, influences only
:math:`w_i`, an ε-DP output; a record of :math:`D_{m+1}` changes each count :math:`z_i` by at most
1, so step 4 is the exponential mechanism with utility :math:`-z_i` of sensitivity 1, ε-DP for
that part. The parts are disjoint and the split does not look at the records, so the released
:math:`w_i` is ε-DP for the whole data set (parallel composition; JMLR 2011, Theorem 10). The
candidates :math:`w_j, j \ne i`, and the counts :math:`z` are *not* released: they are diagnostics
(:class:`PrivateTuningResult` keeps them for teaching only).

The price: each candidate sees only :math:`n/(m+1)` records. The non-private alternative
(:func:`nonprivate_lambda_selection`) picks the λ with the smallest validation error -- the usual
practice, which is not differentially private.
"""
from __future__ import annotations

import os
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass

import numpy as np
import pandas as pd
from threadpoolctl import threadpool_limits

from dplr.algorithms import (
    objective_perturbation,
    objective_perturbation_calibration,
    sensitivity_method_noise_rate,
    standard_erm,
)
from dplr.losses import get_loss
from dplr.mechanisms import sample_vector_laplace
from dplr.solver import solve_regularized_erm
from dplr.validation import check_epsilon, check_lambda, check_random_state, check_rows_in_ball, check_signed_data

__all__ = [
    "TUNING_METHODS",
    "PrivateTuningResult",
    "exponential_mechanism",
    "tuning_split",
    "private_lambda_selection",
    "nonprivate_lambda_selection",
    "private_tuning_experiment",
    "test_error",
]

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
    predictions = np.where(scores > 0, 1.0, -1.0)
    y = np.asarray(y, dtype=float)
    wrong = predictions != (y if scores.ndim == 1 else y[:, None])
    return float(wrong.mean()) if scores.ndim == 1 else wrong.mean(axis=0)


test_error.__test__ = False  # a helper, not a pytest test


def exponential_mechanism(utilities, epsilon, sensitivity=1.0, random_state=None):
    r"""Pick index :math:`i` with probability :math:`\propto \exp(\varepsilon u_i / (2\Delta u))`.

    The exponential mechanism (McSherry & Talwar, 2007) is ε-DP when changing one record changes
    every utility :math:`u_i` by at most ``sensitivity`` :math:`\Delta u`. In Algorithm 3 the
    utilities are :math:`-z_i` (minus the error counts) with :math:`\Delta u = 1`.

    Returns ``(index, probabilities)``.
    """
    epsilon = check_epsilon(epsilon)
    rng = check_random_state(random_state)
    utilities = np.asarray(utilities, dtype=float)
    if utilities.ndim != 1 or utilities.size == 0 or not np.all(np.isfinite(utilities)):
        raise ValueError(f"utilities must be a non-empty 1-D array of finite numbers, got {utilities!r}.")
    if not np.isfinite(sensitivity) or sensitivity <= 0:
        raise ValueError(f"sensitivity must be a positive finite number, got {sensitivity!r}.")
    logits = epsilon * utilities / (2.0 * sensitivity)
    weights = np.exp(logits - logits.max())  # shift for stability; the probabilities are unchanged
    probabilities = weights / weights.sum()
    return int(rng.choice(utilities.size, p=probabilities)), probabilities


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


def _check_inputs(X, y, lambdas, method):
    X, y = check_signed_data(X, y)
    check_rows_in_ball(X)
    lambdas = np.array([check_lambda(lam) for lam in np.atleast_1d(lambdas)], dtype=float)
    if lambdas.size == 0:
        raise ValueError("lambdas must hold at least one candidate value.")
    if method not in TUNING_METHODS:
        raise ValueError(f"method must be one of {TUNING_METHODS}, got {method!r}.")
    return X, y, lambdas


def _sensitivity_from_erm(w_star, n, lam, epsilon, loss, rng):
    """Algorithm 1 given its non-private minimiser: w* + noise of rate nλε/(2L) (as dplr.sensitivity_method)."""
    rate = sensitivity_method_noise_rate(n, lam, epsilon, loss.lipschitz)
    return w_star + sample_vector_laplace(rate, w_star.shape[0], random_state=rng)


def _candidate(X, y, part, lam, epsilon, method, loss, rng, erm=None):
    if method == "objective":
        return objective_perturbation(X[part], y[part], epsilon, lam, loss, random_state=rng)
    w_star = standard_erm(X[part], y[part], lam, loss) if erm is None else erm
    return _sensitivity_from_erm(w_star, len(part), lam, epsilon, loss, rng)


def _solve_part(X, y, lam, objective_rngs, loss, with_erm):
    r"""All solves one part needs, batched: the non-private minimiser and one Algorithm 2 run per ε.

    ``objective_rngs`` maps ε to the stream of its Algorithm 2 draw. Each noise vector is drawn
    exactly as :func:`dplr.algorithms.objective_perturbation` draws it (the corrected calibration,
    one :func:`~dplr.mechanisms.sample_vector_laplace` call on that stream); problems that share the
    extra ridge term :math:`\Delta` -- and the unperturbed problem, :math:`b = 0, \Delta = 0` --
    are solved in one batch. The solver's minimisers do not depend on the batching, so each
    classifier equals the one ``objective_perturbation`` would return for that stream (up to the
    solver tolerance); the batching only shares the Hessian work between problems.
    Returns ``(w_star or None, {epsilon: w})``.
    """
    n, d = X.shape
    groups = {0.0: [None]} if with_erm else {}
    for eps, rng in objective_rngs.items():
        cal = objective_perturbation_calibration(eps, n, lam, loss.curvature, loss.lipschitz, "corrected")
        b = sample_vector_laplace(cal.noise_rate, d, random_state=rng)
        groups.setdefault(cal.delta, []).append((eps, b))
    w_star, coefs = None, {}
    for delta, items in groups.items():
        B = np.vstack([np.zeros(d) if item is None else item[1] for item in items])
        W = solve_regularized_erm(X, y, lam, loss, b=B, delta=delta, warm_start=False).coef
        for item, w in zip(items, W):
            if item is None:
                w_star = w
            else:
                coefs[item[0]] = w
    return w_star, coefs


def _select(candidates, X_val, y_val, epsilon, rng):
    scores = X_val @ candidates.T
    z = np.sum(np.where(scores > 0, 1.0, -1.0) != y_val[:, None], axis=0).astype(int)
    index, probabilities = exponential_mechanism(-z.astype(float), epsilon, 1.0, rng)
    return index, z, probabilities


def private_lambda_selection(X, y, lambdas, epsilon, method="objective", loss="logistic", huber_h=0.5,
                             random_state=None):
    r"""Algorithm 3 of JMLR 2011: an ε-DP classifier whose λ is chosen privately.

    Parameters
    ----------
    X, y : training data, rows with :math:`\lVert x\rVert \le 1`, labels in {-1, +1}
    lambdas : sequence of m candidate λ values
    epsilon : privacy budget of the whole procedure (each part is used once, with budget ε)
    method : "objective" (corrected Algorithm 2) or "sensitivity" (Algorithm 1)
    loss, huber_h : as in :func:`dplr.algorithms.objective_perturbation`
    random_state : seed or Generator; it draws the split, the noise and the selection

    Returns
    -------
    PrivateTuningResult
    """
    epsilon = check_epsilon(epsilon)
    X, y, lambdas = _check_inputs(X, y, lambdas, method)
    loss = get_loss(loss, huber_h)
    split_rng, run_rng = check_random_state(random_state).spawn(2)
    parts = tuning_split(len(y), len(lambdas), split_rng)
    rngs = run_rng.spawn(len(lambdas) + 1)
    candidates = np.vstack([_candidate(X, y, parts[i], lam, epsilon, method, loss, rngs[i])
                            for i, lam in enumerate(lambdas)])
    index, z, probabilities = _select(candidates, X[parts[-1]], y[parts[-1]], epsilon, rngs[-1])
    return PrivateTuningResult(candidates[index].copy(), index, float(lambdas[index]), candidates, z, probabilities)


def nonprivate_lambda_selection(X, y, X_val, y_val, lambdas, loss="logistic", huber_h=0.5):
    """Non-private tuning: fit each λ on ``(X, y)``, keep the one with the fewest errors on ``(X_val, y_val)``.

    Not differentially private (the choice depends on the validation records without noise); the
    usual practice and the baseline for Algorithm 3. Ties go to the first (smallest index) λ.
    Returns ``(index, coefs (m, d), validation_errors (m,))``.
    """
    X, y, lambdas = _check_inputs(X, y, lambdas, "objective")
    loss = get_loss(loss, huber_h)
    coefs = np.vstack([standard_erm(X, y, lam, loss) for lam in lambdas])
    errors = test_error(coefs, X_val, y_val)
    return int(np.argmin(errors)), coefs, errors


def private_tuning_experiment(X, y, X_test, y_test, lambdas, epsilons, n_repeats, loss="logistic", huber_h=0.5,
                              methods=TUNING_METHODS, random_state=None, n_jobs=None):
    r"""Run Algorithm 3 for several ε and both private methods, ``n_repeats`` times; test every outcome.

    Each repeat draws one random split of ``(X, y)`` into ``len(lambdas) + 1`` parts, shared by all
    ε and both methods (common random numbers: the curves differ only through ε and the method).
    The non-private minimisers on the parts are computed once per repeat and reused by Algorithm 1
    for every ε; Algorithm 2 solves one perturbed problem per part and ε, all of a part's problems in
    one batch (see ``_solve_part``). Noise and selection draw
    from independent streams spawned from ``random_state``, so the result does not depend on
    ``n_jobs`` (threads).

    Returns a DataFrame with one row per (repeat, method, ε):

    ``lam_private``, ``error_private``
        λ and test error of the classifier Algorithm 3 releases (ε-DP);
    ``lam_nonprivate``, ``error_nonprivate``
        the same candidates, but the one with the fewest validation errors (a non-private choice);
    ``error_best``
        the smallest test error among the candidates (an oracle no one can use);
    ``p_chosen_best``
        probability the exponential mechanism gave the candidate with the fewest validation errors.

    When ``"sensitivity"`` is among the methods, each repeat also has one row with
    ``method="nonprivate"`` and ``epsilon=inf``: the non-private minimisers of the same parts, the
    one with the fewest validation errors in ``lam_nonprivate`` / ``error_nonprivate`` (the private
    columns are NaN).
    """
    X, y, lambdas = _check_inputs(X, y, lambdas, "objective")
    X_test, y_test = np.asarray(X_test, dtype=float), np.asarray(y_test, dtype=float)
    epsilons = [check_epsilon(e) for e in np.atleast_1d(epsilons)]
    methods = tuple(methods)
    for method in methods:
        if method not in TUNING_METHODS:
            raise ValueError(f"methods must be taken from {TUNING_METHODS}, got {method!r}.")
    if isinstance(n_repeats, bool) or not isinstance(n_repeats, (int, np.integer)) or n_repeats < 1:
        raise ValueError(f"n_repeats must be a positive integer, got {n_repeats!r}.")
    loss = get_loss(loss, huber_h)
    m = len(lambdas)
    n_jobs = os.cpu_count() or 1 if n_jobs is None else int(n_jobs)
    if n_jobs < 1:
        raise ValueError(f"n_jobs must be a positive integer or None, got {n_jobs!r}.")

    repeat_streams = check_random_state(random_state).spawn(n_repeats)
    plans = []
    for stream in repeat_streams:
        split_rng, noise_root = stream.spawn(2)
        parts = tuning_split(len(y), m, split_rng)
        # streams[method][epsilon] = m candidate streams + 1 selection stream
        streams = {method: {eps: noise_root.spawn(m + 1) for eps in epsilons} for method in methods}
        plans.append((parts, streams))

    def part_task(key):
        r, i = key
        parts, streams = plans[r]
        rngs = {eps: streams["objective"][eps][i] for eps in epsilons} if "objective" in methods else {}
        return _solve_part(X[parts[i]], y[parts[i]], lambdas[i], rngs, loss, with_erm="sensitivity" in methods)

    keys = [(r, i) for r in range(n_repeats) for i in range(m)]
    with threadpool_limits(limits=1, user_api="blas"):
        if n_jobs > 1:
            with ThreadPoolExecutor(min(n_jobs, len(keys))) as pool:
                solved = dict(zip(keys, pool.map(part_task, keys)))
        else:
            solved = {key: part_task(key) for key in keys}

    rows = []
    for r, (parts, streams) in enumerate(plans):
        X_val, y_val = X[parts[-1]], y[parts[-1]]
        if "sensitivity" in methods:
            # The non-private minimisers of the same parts, chosen by fewest validation errors (no ε).
            candidates = np.vstack([solved[(r, i)][0] for i in range(m)])
            errors = test_error(candidates, X_test, y_test)
            best_val = int(np.argmin(test_error(candidates, X_val, y_val)))
            rows.append({
                "repeat": r, "method": "nonprivate", "epsilon": np.inf,
                "lam_private": np.nan, "error_private": np.nan,
                "lam_nonprivate": float(lambdas[best_val]), "error_nonprivate": float(errors[best_val]),
                "error_best": float(errors.min()), "p_chosen_best": np.nan,
            })
        for method in methods:
            for eps in epsilons:
                rngs = streams[method][eps]
                if method == "objective":
                    candidates = np.vstack([solved[(r, i)][1][eps] for i in range(m)])
                else:
                    candidates = np.vstack([_sensitivity_from_erm(solved[(r, i)][0], len(parts[i]), lambdas[i], eps,
                                                                  loss, rngs[i]) for i in range(m)])
                index, z, probabilities = _select(candidates, X_val, y_val, eps, rngs[-1])
                errors = test_error(candidates, X_test, y_test)
                best_val = int(np.argmin(z))
                rows.append({
                    "repeat": r, "method": method, "epsilon": eps,
                    "lam_private": float(lambdas[index]), "error_private": float(errors[index]),
                    "lam_nonprivate": float(lambdas[best_val]), "error_nonprivate": float(errors[best_val]),
                    "error_best": float(errors.min()), "p_chosen_best": float(probabilities[best_val]),
                })
    return pd.DataFrame(rows)

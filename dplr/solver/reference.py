r"""The reference solver: plain damped Newton with an Armijo line search on the objective.

For a :class:`~dplr.objective.RegularizedERM` (one data set shared by all problems, or one per
problem) and a start ``W0``, each iteration takes the Newton direction :math:`p_j = -\nabla^2
J_j(w_j)^{-1}\nabla J_j(w_j)`, and halves the step :math:`t_j` until :math:`J_j(w_j + t_j p_j) \le
J_j(w_j) + \sigma t_j \nabla J_j^\top p_j` (Armijo, :math:`\sigma = 10^{-4}`, with a relative slack of
:math:`10^{-14}` for rounding). The objective is :math:`(\lambda+\Delta)`-strongly convex, so this
converges to the unique minimiser from any start (Nocedal & Wright, *Numerical Optimization*,
Theorem 3.2 and Section 3.3). The iteration stops when every gradient norm is at most ``tol``.

It is short on purpose: it is the definition the fast path (:mod:`dplr.solver.batched`) is tested
against, and it serves the sensitivity searches (:mod:`dplr.analysis.sensitivity`), whose problems
each have their own data set and need gradients of the minimiser to 1e-12.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

__all__ = ["NewtonResult", "damped_newton"]


@dataclass(frozen=True)
class NewtonResult:
    """``coef`` (k, d) minimisers; ``grad_norm`` (k,) at them; ``n_iter`` Newton iterations; ``converged``."""

    coef: np.ndarray
    grad_norm: np.ndarray
    n_iter: int
    converged: bool


def damped_newton(problem, W0, tol=1e-12, max_iter=60, max_halvings=40) -> NewtonResult:
    r"""Minimise every :math:`J_j` of ``problem`` (a :class:`~dplr.objective.RegularizedERM`) from the rows of ``W0``."""
    k = W0.shape[0]
    W = W0.copy()
    n_iter, converged = 0, False
    for n_iter in range(max_iter):
        G = problem.gradient(W)
        if np.max(np.linalg.norm(G, axis=1)) <= tol:
            converged = True
            break
        P = -np.linalg.solve(problem.hessian(W), G[:, :, None])[:, :, 0]
        F0 = problem.value(W)
        slope = np.einsum("kd,kd->k", G, P)
        step = np.ones(k)
        for _ in range(max_halvings):
            F = problem.value(W + step[:, None] * P)
            ok = F <= F0 + 1e-4 * step * slope + 1e-14 * np.maximum(np.abs(F0), 1.0)
            if ok.all():
                break
            step = np.where(ok, step, 0.5 * step)
        W = W + step[:, None] * P
    else:
        n_iter, G = max_iter, problem.gradient(W)
        converged = bool(np.max(np.linalg.norm(G, axis=1)) <= tol)
    return NewtonResult(W, np.linalg.norm(G, axis=1), n_iter, converged)

r"""The fast path: a batched damped Newton for many perturbed problems on one data set.

It minimises, for every row :math:`b_j` of ``b`` (:mod:`dplr.objective`),

.. math::

    J_j(w) = \frac{\lambda + \Delta_j}{2}\lVert w\rVert^2 + \frac{b_j^\top w}{n}
             + \frac{1}{n}\sum_{i=1}^n \ell(y_i\, w^\top x_i).

**Method.** :math:`J_j` is :math:`(\lambda+\Delta_j)`-strongly convex, so its minimiser is the unique
root of :math:`\nabla J_j`, and Newton's method on :math:`\nabla J_j = 0`, damped by a backtracking
(Armijo) line search on the merit :math:`\varphi = \frac12\lVert\nabla J_j\rVert^2`, converges from any
start (Dennis & Schnabel, *Numerical Methods for Unconstrained Optimization*, Section 6.5): the slope
of :math:`\varphi` along the Newton direction :math:`p = -H^{-1}g` is :math:`-\lVert g\rVert^2`, and a
step :math:`t` is accepted when :math:`\varphi(w + tp) \le (1 - 2\sigma t)\varphi(w)`. A problem
stops when its gradient norm, computed in float64, is at most ``tol``; everything below only changes
the path to that point, which is why :func:`dplr.solver.damped_newton`, the plain reference, finds
the same minimisers. Each problem's iterates depend on its own :math:`b_j` and on quantities the
batch shares, so results never depend on the number of threads, and on the chunking only through
rounding.

**The tricks, each in one place.**

1. *Passes over the batch* (:mod:`dplr.solver.design`): the problems share the data, so an iteration
   is a few matrix products over the batch, through cache-sized blocks of points, with one
   exponential per margin, Hessians from a table of symmetric products, work arrays reused per thread.
2. *Mixed precision* (:data:`SINGLE_PRECISION_REG`, here): Hessians (and the Taylor tensors) are
   accumulated in float32 within a block and in float64 across blocks when :math:`\lambda + \Delta \ge
   10^{-4}\, c \max_i\lVert x_i\rVert^2` (:math:`c` the loss's curvature bound): their rounding error
   is then a small fraction of the smallest eigenvalue, which perturbs the Newton direction, not the
   gradient or the stopping test. Below that (very small :math:`\lambda`) they are float64; the Hessian
   of the shared start is always float64.
3. *Shared start and Taylor start* (:mod:`dplr.solver.taylor`): a batch starts from the unperturbed
   minimiser; its derivatives there give every problem a first trial step without a pass over the
   data, and a Hessian estimate at it.
4. *Where Hessians come from* (``_Batch``): after an accepted Taylor trial whose gradient is
   at most :math:`\sqrt{\mathrm{tol}}`, the model's corrected Jacobian serves as the Hessian and is
   carried along later steps by BFGS updates; a problem whose gradient exceeds
   :math:`\sqrt{\mathrm{tol}}` will surely need another step, so its Hessian at the trial point is
   accumulated *speculatively* in the same pass as the gradient; any other problem that needs a
   Hessian gets it in a separate pass. A trial that fails the line search falls back to the plain
   Newton step :math:`-H_0^{-1}\nabla J_j(w_0)`.
5. *Chunks on threads* (:func:`dplr.threads.thread_map`): the batch is split into chunks of
   problems solved concurrently, with BLAS on one thread (:func:`dplr.threads.one_blas_thread`).
6. *Per-problem* :math:`\Delta`: problems are grouped by their value of :math:`\Delta`, and each group
   is solved as one batch (it shares a start); a group's result does not depend on the other groups.

At the paper's setting (NIPS 2008, Section 6: :math:`n = 14{,}000`, :math:`d = 10`, 200 problems)
every problem converges after two passes over the data and none needs a Hessian of its own.
"""
from __future__ import annotations

import warnings
from dataclasses import dataclass

import numpy as np
from sklearn.exceptions import ConvergenceWarning

from dplr.losses import get_loss
from dplr.solver.design import Design, evaluate
from dplr.solver.taylor import bfgs_update, remainder_update, shared_start, taylor_order, taylor_steps
from dplr.threads import default_threads, one_blas_thread, thread_map
from dplr.validation import check_lambda, check_positive_integer, check_signed_data, check_tolerance

__all__ = ["SolverResult", "solve_regularized_erm", "SINGLE_PRECISION_REG", "CHUNK_ELEMENTS"]

ARMIJO = 1e-4
MAX_HALVINGS = 60
#: The default largest chunk, about this many margins (problems x points) per chunk.
CHUNK_ELEMENTS = 1 << 21
#: Hessians are accumulated in float32 when lam + Delta >= this times the curvature bound c of the loss
#: times max ||x_i||^2 (module docstring), else in float64.
SINGLE_PRECISION_REG = 1e-4

# How a problem's Hessian (H[j]) relates to its current iterate:
_NO_HESSIAN, _EXACT, _ESTIMATE = 0, 1, 2  # none / computed there / the Taylor model's, carried by secant updates


@dataclass(frozen=True)
class SolverResult:
    """Minimisers and diagnostics of :func:`solve_regularized_erm`.

    ``coef`` has shape ``(d,)`` for one problem or ``(k, d)`` for a batch; ``grad_norm`` and
    ``n_iter`` have one entry per problem.
    """

    coef: np.ndarray
    grad_norm: np.ndarray
    n_iter: np.ndarray
    converged: bool


def _as_batch(b, k_default, d):
    if b is None:
        return np.zeros((k_default, d)), True
    b = np.asarray(b, dtype=float)
    if b.ndim == 1:
        if b.shape[0] != d:
            raise ValueError(f"b has {b.shape[0]} entries but X has {d} features.")
        return b[None, :], True
    if b.ndim != 2 or b.shape[1] != d:
        raise ValueError(f"b must have shape (d,) or (k, d) with d = {d}, got {b.shape}.")
    return b, False


@dataclass
class _Trial:
    """The directions of one iteration for the active problems, and what the line search may fall back to.

    ``P`` (a, d): directions; ``on_model`` (a,): the direction is a third-order Taylor step (no
    speculative Hessian for it); ``J``: the Taylor model's Jacobians; ``fallback``, ``on_taylor``: the
    Newton steps and which problems still try the Taylor step (first iteration only).
    """

    P: np.ndarray
    on_model: np.ndarray
    J: np.ndarray | None = None
    fallback: np.ndarray | None = None
    on_taylor: np.ndarray | None = None


@dataclass
class _Batch:
    """Per-problem state of one chunk: iterates, gradients, merits, Hessians and bookkeeping.

    ``W`` (k, d) iterates, ``G`` (k, d) their gradients, ``merit`` (k,) :math:`\\frac12\\lVert G\\rVert^2`,
    ``H`` (k, d, d) Hessians or estimates, ``hessian`` (k,) what ``H`` holds (none, exact, estimate),
    ``n_iter`` (k,) Newton iterations, ``stalled`` (k,) the line search found no decrease.
    """

    W: np.ndarray
    G: np.ndarray
    merit: np.ndarray
    H: np.ndarray
    hessian: np.ndarray
    n_iter: np.ndarray
    stalled: np.ndarray

    @classmethod
    def at(cls, start, B, n):
        k, d = B.shape
        G = start.g + B / n
        return cls(W=np.repeat(start.w[None, :], k, axis=0), G=G, merit=0.5 * np.einsum("kd,kd->k", G, G),
                   H=np.empty((k, d, d)), hessian=np.zeros(k, dtype=np.int8), n_iter=np.zeros(k, dtype=int),
                   stalled=np.zeros(k, dtype=bool))

    def active(self, target, max_iter):
        """Problems still iterating: above the target merit, not stalled, iterations left."""
        return np.flatnonzero((self.merit > target) & ~self.stalled & (self.n_iter < max_iter))

    def newton_directions(self, active, design, B, reg, loss, speculate_above):
        """Newton directions -H^{-1} g of the active problems, after a pass for the Hessians they lack.

        A Taylor-model estimate is dropped (and recomputed) for a problem whose merit is still above
        ``speculate_above``: the model was not good enough there.
        """
        distrusted = active[(self.hessian[active] == _ESTIMATE) & (self.merit[active] > speculate_above)]
        self.hessian[distrusted] = _NO_HESSIAN
        missing = active[self.hessian[active] == _NO_HESSIAN]
        if missing.size:
            self.H[missing] = evaluate(design, self.W[missing], B[missing], reg, loss, np.arange(missing.size))[1]
        return np.linalg.solve(self.H[active], -self.G[active][:, :, None])[:, :, 0]

    def line_search(self, active, trial, design, B, reg, loss, target, speculate_above):
        """Backtracking along ``trial.P`` for the active problems; updates iterates, gradients and Hessians.

        Each round evaluates the pending problems at their trial points in one pass, speculatively with
        the Hessians of those whose merit is above ``speculate_above`` (they will need another step).
        Accepted problems keep what the pass computed; estimates carried from the Taylor model get a
        BFGS update (problems that converged need none); an accepted third-order Taylor trial turns the
        model's Jacobian, corrected by the gradient found there, into the Hessian estimate. A rejected
        Taylor trial retries the Newton step at full length; other rejected steps are halved.
        """
        P, on_model = trial.P, trial.on_model
        carry = self.hessian[active] == _ESTIMATE  # approximate Hessians, carried along the step by a secant update
        self.hessian[active] = _NO_HESSIAN
        step = np.ones(active.size)
        pending = np.arange(active.size)
        for _ in range(MAX_HALVINGS):
            rows = active[pending]
            W_try = self.W[rows] + step[pending, None] * P[pending]
            speculate = np.flatnonzero((self.merit[rows] > speculate_above) & ~on_model[pending])
            G_try, H_try = evaluate(design, W_try, B[rows], reg, loss, speculate if speculate.size else None)
            merit_try = 0.5 * np.einsum("kd,kd->k", G_try, G_try)
            ok = merit_try <= (1.0 - 2.0 * ARMIJO * step[pending]) * self.merit[rows]
            good = rows[ok]
            secant = ok & carry[pending] & (merit_try > target)
            if secant.any():
                moved = rows[secant]
                self.H[moved] = bfgs_update(self.H[moved], W_try[secant] - self.W[moved], G_try[secant] - self.G[moved])
                self.hessian[moved] = _ESTIMATE
            self.W[good], self.G[good], self.merit[good] = W_try[ok], G_try[ok], merit_try[ok]
            if H_try is not None:
                kept = ok[speculate]
                self.H[rows[speculate[kept]]] = H_try[kept]
                self.hessian[rows[speculate[kept]]] = _EXACT
            modelled = ok & on_model[pending]
            if modelled.any():
                self.H[rows[modelled]] = remainder_update(trial.J[pending[modelled]], P[pending[modelled]],
                                                          G_try[modelled], reg)
                self.hessian[rows[modelled]] = _ESTIMATE
            pending = pending[~ok]
            if pending.size == 0:
                break
            if trial.fallback is not None:
                retry = trial.on_taylor[pending]
                P[pending[retry]] = trial.fallback[pending[retry]]
                trial.on_taylor[pending[retry]] = on_model[pending[retry]] = False
                step[pending[~retry]] *= 0.5
            else:
                step[pending] *= 0.5
        self.n_iter[active] += 1
        self.stalled[active[pending]] = True


def _newton(design, B, start, reg, loss, tol, max_iter, taylor=None):
    """Damped Newton for grad J_j(w) = 0, one problem per row of B, from the shared ``start``.

    Returns ``(W, grad_norm, n_iter)``. The first iteration uses the start's shared Hessian; with
    ``taylor`` (:func:`~dplr.solver.taylor.taylor_steps` for the rows of B) its first trial is the
    Taylor step, falling back to the Newton step -H_0^{-1} g_j within the same iteration.
    """
    target = 0.5 * tol**2
    speculate_above = 0.5 * tol  # merit above it: the gradient norm exceeds sqrt(tol)
    batch = _Batch.at(start, B, design.n)
    first_iteration = True
    while True:
        active = batch.active(target, max_iter)
        if active.size == 0:
            return batch.W, np.sqrt(2.0 * batch.merit), batch.n_iter
        if not first_iteration:
            P = batch.newton_directions(active, design, B, reg, loss, speculate_above)
            trial = _Trial(P, np.zeros(active.size, dtype=bool))
        elif taylor is None:
            trial = _Trial(np.linalg.solve(start.H, -batch.G[active].T).T, np.zeros(active.size, dtype=bool))
        else:
            P, on_taylor, J, fallback = (part[active] for part in taylor)
            on_model = on_taylor.copy() if start.Q is not None else np.zeros(active.size, dtype=bool)
            trial = _Trial(P, on_model, J, fallback, on_taylor)
        first_iteration = False
        batch.line_search(active, trial, design, B, reg, loss, target, speculate_above)


def _solve_batch(X, y, B, lam, ridge, loss, tol, max_iter, warm_start, chunk_size, n_threads):
    """One batch with a common Delta: design, shared start (and Taylor start), chunks on threads."""
    n, d = X.shape
    k = B.shape[0]
    reg = lam + ridge
    radius2 = float(np.max(np.einsum("ij,ij->i", X, X))) if n else 0.0
    low_precision = reg >= SINGLE_PRECISION_REG * loss.curvature * radius2
    # one problem: its Hessians straight from the data, cheaper than building the table of products
    design = Design(X, y, np.float32 if low_precision else np.float64, keep_table=k > 1)

    n_chunks = -(-k // int(chunk_size))
    bounds = [k * i // n_chunks for i in range(n_chunks + 1)]
    chunks = [slice(bounds[i], bounds[i + 1]) for i in range(n_chunks)]
    with one_blas_thread():
        start = shared_start(design, np.zeros(d), reg, loss)
        if warm_start and k > 1:
            # The expansion point need not be exact (the model uses the gradient there, g_0 + b_j / n):
            # 1e-3 of the smallest perturbation b_j / n is plenty, and saves Newton steps.
            start_tol = max(tol, 1e-3 * float(np.min(np.linalg.norm(B, axis=1))) / n)
            w0, _, _ = _newton(design, np.zeros((1, d)), start, reg, loss, start_tol, max_iter)
            start = shared_start(design, w0[0], reg, loss, order=taylor_order(loss, d, k))

        taylor = None
        if start.T is not None:  # per problem: computing it for the whole batch at once changes nothing
            G = start.g + B / n
            taylor = taylor_steps(design, start, G, np.linalg.solve(start.H, -G.T).T)

        def solve(chunk):
            return _newton(design, B[chunk], start, reg, loss, tol, max_iter,
                           None if taylor is None else tuple(part[chunk] for part in taylor))

        parts = thread_map(solve, chunks, n_threads)
    return tuple(np.concatenate([p[i] for p in parts]) for i in range(3))


def solve_regularized_erm(X, y, lam, loss="logistic", *, b=None, ridge=0.0, huber_h=0.5, tol=1e-8, max_iter=100,
                          warm_start=True, chunk_size=None, n_threads=None, check_input=True):
    r"""Minimise :math:`\frac{\lambda+\Delta}{2}\lVert w\rVert^2 + b^\top w/n + \frac1n\sum_i \ell(y_i w^\top x_i)`.

    Parameters
    ----------
    X : array of shape (n, d)
    y : array of shape (n,), values in {-1, +1}
    lam : float
        :math:`\lambda > 0`.
    loss : "logistic", "huber" or a loss object from :mod:`dplr.losses`.
    b : None, array (d,) or array (k, d)
        Perturbation vectors; ``None`` means :math:`b = 0` (non-private ERM).
    ridge : float or array (k,)
        Extra ridge term :math:`\Delta \ge 0` of the corrected objective perturbation (JMLR 2011), one
        for all problems or one per problem. Problems with equal :math:`\Delta` are solved as one batch.
    tol : float
        Stop each problem when :math:`\lVert\nabla J_j\rVert \le` ``tol``.
    max_iter : int
        Newton iterations at most per problem; a ``sklearn.exceptions.ConvergenceWarning`` is
        emitted for problems that did not reach ``tol``.
    warm_start : bool
        For a batch (k > 1 problems with one :math:`\Delta`), start every problem from the minimiser of
        the unperturbed problem (:math:`b = 0`, same :math:`\lambda + \Delta`), solved first; when the
        loss has the derivatives and :math:`d(d+1)/2 \le k`, the first trial is the Taylor expansion of
        each minimiser around it (module docstring). The minimisers are unique, so this changes only the
        path, not the answer.
    chunk_size : int or None
        Most problems solved together: a batch is split into the fewest chunks of at most
        ``chunk_size`` problems, of equal sizes (up to one). ``None`` allows about 2^21 / n problems per
        chunk (at least 8), a function of n only. Chunks are independent: the result never depends on
        ``n_threads``, and on the chunking only through rounding.
    n_threads : int or None
        Threads that solve chunks concurrently (NumPy releases the GIL in its kernels); ``None``:
        :func:`dplr.threads.default_threads`. BLAS runs single-threaded inside the solver.
    check_input : bool
        ``False`` skips the checks of ``X``, ``y``, ``lam`` and ``loss`` (for callers that made them).

    Returns
    -------
    SolverResult
    """
    if check_input:
        lam = check_lambda(lam)
        ridge_values = np.asarray(ridge, dtype=float)
        if ridge_values.ndim > 1 or not np.all(np.isfinite(ridge_values)) or np.any(ridge_values < 0):
            raise ValueError(f"ridge must be a finite number >= 0 (or one per problem), got {ridge!r}.")
        loss = get_loss(loss, huber_h)
        X, y = check_signed_data(X, y)
        tol, max_iter = check_tolerance(tol), check_positive_integer(max_iter, "max_iter")
    n_threads = default_threads() if n_threads is None else int(n_threads)
    if chunk_size is None:
        chunk_size = max(8, CHUNK_ELEMENTS // X.shape[0])
    if int(chunk_size) < 1 or n_threads < 1:
        raise ValueError("chunk_size and n_threads must be positive integers.")
    per_problem = np.ndim(ridge) == 1
    B, single = _as_batch(b, np.size(ridge) if per_problem else 1, X.shape[1])
    k = B.shape[0]
    if not per_problem:
        W, grad_norm, n_iter = _solve_batch(X, y, B, lam, ridge, loss, tol, max_iter, warm_start, chunk_size,
                                            n_threads)
    else:  # one batch per value of Delta, in the order of first appearance
        ridges = np.asarray(ridge, dtype=float)
        if ridges.shape != (k,) or (single and b is not None):
            raise ValueError(f"one ridge per problem needs b of shape (k, d) and k = {ridges.size} ridges, "
                             f"got b of shape {np.shape(b)}.")
        single = False
        W, grad_norm, n_iter = np.empty_like(B), np.empty(k), np.empty(k, dtype=int)
        for value in dict.fromkeys(ridges.tolist()):
            rows = np.flatnonzero(ridges == value)
            W[rows], grad_norm[rows], n_iter[rows] = _solve_batch(
                X, y, B[rows], lam, value, loss, tol, max_iter, warm_start, chunk_size, n_threads)

    converged = bool(np.all(grad_norm <= tol))
    if not converged:
        bad = int(np.sum(grad_norm > tol))
        warnings.warn(
            f"{bad} of {k} problems did not reach gradient norm <= {tol:g} in {max_iter} Newton iterations "
            f"(largest {grad_norm.max():.3g}). Fix: raise max_iter (of dplr.algorithms.standard_erm and "
            f"sensitivity_method, solver_options of objective_perturbation, and dplr.solver.solve_regularized_erm), "
            f"or use a larger lam; for a private release, tol is part of the guarantee (see dplr.algorithms).",
            ConvergenceWarning,
            stacklevel=2,
        )
    coef = W[0] if single else W
    return SolverResult(coef=coef, grad_norm=grad_norm, n_iter=n_iter, converged=converged)

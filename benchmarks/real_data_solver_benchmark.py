"""The solves of private tuning at the real-data shape: dplr's shared-Hessian part solver, its batched solver, scipy.

One repeat of Algorithm 3 (JMLR 2011) on UCI Adult (d = 105) or a KDDCup99 sample: the training set is split
into m + 1 = 6 parts; on each of the first m parts, with its own λ, the unperturbed problem (Algorithm 1's w*)
and one Algorithm 2 problem per ε (seven ε from 0.01 to 3, each with its own Δ: Δ > 0 where ε' ≤ 0). So the
problems differ in the part, in λ and in Δ. Three solvers get the same parts and the same noise vectors:

* ``shared``: :func:`dplr.solver.solve_on_parts` on the repeat's parts, one Hessian per part shared by all its
  problems, equal rows folded into one with their count (what :func:`dplr.tuning.private_tuning_experiment` uses);
* ``batched``: :func:`dplr.solver.solve_regularized_erm`, the unperturbed problem, then the perturbed ones
  grouped by Δ (the path tuning used before);
* ``scipy``: a loop of ``scipy.optimize.minimize`` (L-BFGS-B), one fit per problem, the unperturbed one from 0
  and every perturbed one from it (the warm start dplr uses), its objective and gradient sharing one pass;
  where L-BFGS-B's line search stalls above the tolerance (a few Huber fits), scipy's trust-exact (exact
  Hessians) finishes the fit, inside the timing. Neither finishes every Huber fit at ε = 0.01 (the
  piecewise-quadratic loss): scipy's largest gradient norm is printed, and dplr's must be <= 1e-8 (asserted);
* ``scipy-folded``: the same loop on each part's distinct rows weighted by their counts -- the folding dplr does,
  given to scipy too, so that the two ratios separate what the folding gains (KDDCup99 repeats many records; Adult
  has almost no equal rows, and nothing is folded there) from what the solver gains.

Beside them, plain damped Newton (the exact Hessian at every iterate, :func:`dplr.solver.damped_newton`) from each
part's unperturbed minimiser counts the steps each perturbed problem needs: a floor on the passes of a method that
starts there and converges no faster than Newton.

All are run to gradient norm <= 1e-8 and checked afterwards with the same float64 gradient
(:func:`dplr.objective.regularized_erm_gradient`); BLAS on one thread for all (equal cores: one). Variants take
turns ``--repeats`` times; the best CPU time of each is reported. The last line is ``speedup: <ratio>``,
scipy's time over the shared solver's; before it, on Adult, one Algorithm 2 fit on all the data by dplr
beside diffprivlib's recorded per-fit cost (``diffprivlib_crosscheck.json``, measured in diffprivlib's environment).

Run with the project's environment:
    DPLR_DATA_DIR=/work/shared/datasets .venv/bin/python benchmarks/real_data_solver_benchmark.py [--data adult]
"""
import argparse
import gc
import json
import os
import platform
import time
from pathlib import Path

import numpy as np
from scipy.optimize import minimize
from threadpoolctl import threadpool_limits

from dplr import datasets
from dplr.algorithms import objective_perturbation, objective_perturbation_noise
from dplr.losses import get_loss
from dplr.objective import regularized_erm_gradient
from dplr.objective import RegularizedERM
from dplr.solver import damped_newton, solve_on_parts, solve_regularized_erm
from dplr.solver.shared import DISTINCT_FRACTION

TOL = 1e-8
LAMBDAS = 10.0 ** np.array([-3.0, -2.5, -2.0, -1.5, -1.0])
EPSILONS = [0.01, 0.03, 0.1, 0.3, 1.0, 2.0, 3.0]


def problems(X, y, loss, seed):
    """The parts of one repeat, each with its λ, noise vectors B (one per ε) and Δs."""
    rng = np.random.default_rng(seed)
    parts = np.array_split(rng.permutation(len(y)), len(LAMBDAS) + 1)[:-1]
    out = []
    for part, lam in zip(parts, LAMBDAS):
        n, d = len(part), X.shape[1]
        drawn = [objective_perturbation_noise(n, d, e, lam, loss, random_state=rng) for e in EPSILONS]
        out.append((X[part], y[part], lam, np.vstack([b for b, _ in drawn]), np.array([c.ridge for _, c in drawn])))
    return out


def run_shared(parts, loss):
    return [(s.w0, s.coef) for s in solve_on_parts(parts, loss, tol=TOL)]


def run_batched(parts, loss):
    out = []
    for X, y, lam, B, D in parts:
        w0 = solve_regularized_erm(X, y, lam, loss, tol=TOL, check_input=False).coef
        W = solve_regularized_erm(X, y, lam, loss, b=B, ridge=D, tol=TOL, warm_start=False, n_threads=1,
                                  check_input=False).coef
        out.append((w0, W))
    return out


def _lbfgsb(Xy, loss, reg, b, w, counts=None):
    """One fit to gradient norm TOL; ``counts``: each row stands for that many records (``None``: one each)."""
    n, d = (Xy.shape[0] if counts is None else counts.sum()), Xy.shape[1]
    weights = np.ones(len(Xy)) if counts is None else counts

    def fun(w):
        z = Xy @ w
        return (0.5 * reg * (w @ w) + (b @ w + loss.value(z) @ weights) / n,
                reg * w + (b + Xy.T @ (weights * loss.derivative(z))) / n)

    def hess(w):
        H = (Xy.T * (weights * loss.second_derivative(Xy @ w))) @ Xy / n
        H[np.arange(d), np.arange(d)] += reg
        return H

    for _ in range(5):  # a run that stops above TOL is restarted from its end point
        w = minimize(fun, w, jac=True, method="L-BFGS-B",
                     options={"gtol": TOL / np.sqrt(d), "ftol": 0.0, "maxiter": 20_000}).x
        if np.linalg.norm(fun(w)[1]) <= TOL:
            return w
    # L-BFGS-B's line search can stall just above TOL (Huber: rounding in J); scipy's trust-exact finishes
    return minimize(fun, w, jac=True, hess=hess, method="trust-exact", options={"gtol": TOL}).x


def run_scipy(parts, loss, fold=False):
    out = []
    for X, y, lam, B, D in parts:
        Xy, counts = X * y[:, None], None
        if fold:
            Xy, counts = np.unique(Xy, axis=0, return_counts=True)
            counts = counts.astype(float)
        w0 = _lbfgsb(Xy, loss, lam, np.zeros(X.shape[1]), np.zeros(X.shape[1]), counts)
        out.append((w0, np.vstack([_lbfgsb(Xy, loss, lam + ridge, b, w0.copy(), counts) for b, ridge in zip(B, D)])))
    return out


def passes_alone(parts, loss, repeats):
    """CPU seconds (best of ``repeats``, BLAS on one thread) of the gradient passes ``solve_on_parts`` makes on
    ``parts``, replayed bare: per part, its unperturbed problem's passes (one problem each) and one pass per step of
    its perturbed problems over the problems still iterating (``PartSolution.n_passes_w0`` and ``n_passes``), each the
    same two matrix products and loss evaluation as the solver's, on the rows it iterates on (a part's distinct rows
    with their counts where at most ``DISTINCT_FRACTION`` of them are distinct, as it folds them). Nothing else of the
    solver runs: no Hessian, no preparation, no direction, no line search, no Python step. Returns ``(seconds,
    passes, seconds of the unperturbed problems' passes alone)``."""
    work = []
    for (X, y, _, _, _), solution in zip(parts, solve_on_parts(parts, loss, tol=TOL)):
        Xy, counts = X * y[:, None], None
        distinct, counted = np.unique(Xy, axis=0, return_counts=True)
        if len(distinct) <= DISTINCT_FRACTION * len(Xy):
            Xy, counts = distinct, counted.astype(float)
        steps = [np.sum(solution.n_passes >= t) for t in range(1, solution.n_passes.max(initial=0) + 1)]
        work.append((np.ascontiguousarray(Xy.T), counts, solution.n_passes_w0,
                     [solution.w0[None]] * solution.n_passes_w0 + [solution.coef[:k] for k in steps]))

    def replay(unperturbed_only):
        for XyT, counts, n_w0, iterates in work:
            for W in iterates[:n_w0] if unperturbed_only else iterates:
                values, first = loss.value_and_derivative(W @ XyT)
                if counts is not None:
                    values, first = values @ counts, first * counts
                values.sum(), first @ XyT.T

    best = {}
    with threadpool_limits(limits=1, user_api="blas"):
        for _ in range(repeats):
            for unperturbed_only in (False, True):
                start = time.process_time()
                replay(unperturbed_only)
                best[unperturbed_only] = min(best.get(unperturbed_only, np.inf), time.process_time() - start)
    return best[False], sum(len(iterates) for _, _, _, iterates in work), best[True]


def newton_steps(parts, loss):
    """Per perturbed problem, the steps plain damped Newton (:func:`dplr.solver.damped_newton`: the exact Hessian at
    every iterate, Armijo backtracking) takes from its part's unperturbed minimiser to gradient norm TOL, beside the
    passes the shared solver makes; the two solutions are checked to agree. Every Newton step needs at least one pass
    (the gradient at the new point) and every step after the first a Hessian of its own (the first one's is the
    part's shared Hessian plus Delta I), so the mean is a floor on the passes of a method that starts from w0 and
    converges no faster than this Newton iteration. Returns ``(Newton's mean steps, the shared solver's mean
    passes)``."""
    newton, ours = [], []
    for (X, y, lam, B, D), solution in zip(parts, solve_on_parts(parts, loss, tol=TOL)):
        for b, ridge, passes, w in zip(B, D, solution.n_passes, solution.coef):
            problem = RegularizedERM(X * y[:, None], lam, loss, b=b[None], ridge=ridge)
            result = damped_newton(problem, solution.w0[None], tol=TOL)
            assert result.converged, "damped Newton did not converge"
            # both within TOL / (lam + Delta) of the one minimiser (strong convexity)
            assert np.linalg.norm(result.coef[0] - w) <= 2 * TOL / (lam + ridge), "Newton and dplr disagree"
            newton.append(result.n_iter)
            ours.append(passes)
    return float(np.mean(newton)), float(np.mean(ours))


def worst_gradient(parts, solved, loss):
    worst = 0.0
    for (X, y, lam, B, D), (w0, W) in zip(parts, solved):
        worst = max(worst, float(np.linalg.norm(regularized_erm_gradient(w0, X, y, lam, loss))))
        for b, ridge, w in zip(B, D, W):
            worst = max(worst, float(np.linalg.norm(regularized_erm_gradient(w, X, y, lam, loss, b=b, ridge=ridge))))
    return worst


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", choices=["adult", "kdd"], default="adult")
    parser.add_argument("--losses", nargs="+", default=["logistic", "huber"])
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--seed", type=int, default=16)
    args = parser.parse_args()
    data = (datasets.load_adult(download=False) if args.data == "adult" else
            datasets.load_kddcup99(n_train=40_000, n_test=10_000, download=False, random_state=args.seed))
    X, y = data.X_train, data.y_train
    load = os.getloadavg()[0]
    print(f"machine: {platform.machine()}, {os.cpu_count()} cores, load average {load:.1f}; "
          f"{data.name}: n = {len(y)}, d = {X.shape[1]}, parts of ~{len(y) // 6}, "
          f"{len(LAMBDAS)} parts x (1 + {len(EPSILONS)}) problems per repeat")
    runners = {"shared": run_shared, "batched": run_batched, "scipy": run_scipy,
               "scipy-folded": lambda parts, loss: run_scipy(parts, loss, fold=True)}
    totals = dict.fromkeys(runners, 0.0)
    totals["passes alone"] = totals["Newton's count"] = 0.0
    for loss_name in args.losses:
        loss = get_loss(loss_name, 0.5)
        parts = problems(X, y, loss, args.seed)
        best, stalled = {}, {}
        with threadpool_limits(limits=1, user_api="blas"):
            for _ in range(args.repeats):
                for name, run in runners.items():
                    gc.collect()
                    gc.disable()
                    start = time.process_time()
                    solved = run(parts, loss)
                    seconds = time.process_time() - start
                    gc.enable()
                    best[name] = min(best.get(name, np.inf), seconds)
                    worst = worst_gradient(parts, solved, loss)
                    stalled[name] = worst
                    assert name.startswith("scipy") or worst <= TOL, f"{name} stopped at gradient norm {worst:.3g}"
        for name in runners:
            totals[name] += best[name]
        bare, n_passes, bare_w0 = passes_alone(parts, loss, args.repeats)
        totals["passes alone"] += bare
        newton, ours = newton_steps(parts, loss)
        # an estimate: the perturbed problems' replayed passes cut in the ratio of Newton's steps to the solver's passes
        totals["Newton's count"] += bare_w0 + (bare - bare_w0) * newton / ours
        print(f"{loss_name:9} one repeat, CPU seconds on one core (best of {args.repeats}): "
              + ", ".join(f"{name} {best[name]:.3f}" for name in runners)
              + f"; largest gradient norm: " + ", ".join(f"{k} {v:.1e}" for k, v in stalled.items())
              + f"; the shared solver's {n_passes} passes alone {bare:.3f}")
        print(f"{loss_name:9} per perturbed problem from w0: exact Newton {newton:.1f} steps (each a pass, and each "
              f"after the first a Hessian), the shared solver {ours:.1f} passes")
    print(f"passes alone: {totals['passes alone'] / totals['shared']:.0%} of the shared solver's time; scipy / passes "
          f"alone: {totals['scipy'] / totals['passes alone']:.1f}, the most the shared solver could reach with its "
          f"passes and nothing else (no Hessian, preparation, direction or Python step)")
    newton_bound = totals["scipy"] / totals["Newton's count"]
    print(f"scipy / passes alone at Newton's count: {newton_bound:.1f}, an estimate (the "
          f"perturbed problems' replayed passes cut in the ratio of Newton's steps to the shared solver's passes; free "
          f"Hessians, nothing else)")
    print(f"batched / shared: {totals['batched'] / totals['shared']:.1f}; "
          f"scipy on folded rows / shared: {totals['scipy-folded'] / totals['shared']:.1f}")
    if args.data == "adult":
        diffprivlib_beside(X, y)
    print(f"speedup: {totals['scipy'] / totals['shared']:.1f}")


def diffprivlib_beside(X, y):
    """One Algorithm 2 fit on all of Adult: dplr here, diffprivlib as recorded in its own environment.

    diffprivlib does not import with this book's scikit-learn, so ``diffprivlib_crosscheck.py`` times its fits in
    diffprivlib's environment (wall clock, tol 1e-10) and stores them in ``diffprivlib_crosscheck.json``; dplr fits
    the same data, λ and ε here (CPU time on one core, gradient norm <= 1e-8)."""
    record = json.loads((Path(__file__).parent / "diffprivlib_crosscheck.json").read_text())
    assert (record["data"]["n"], record["data"]["d"]) == X.shape, "the record was made on other data"
    ours = []
    with threadpool_limits(limits=1, user_api="blas"):
        for run in record["runs"]:
            start = time.process_time()
            # the solver's point, as diffprivlib releases its own (like for like; not the certified default)
            objective_perturbation(X, y, run["epsilon"], record["lam"], random_state=run["seed"],
                                   release="exact_minimiser")
            ours.append(time.process_time() - start)
    theirs = [run["seconds"] for run in record["runs"]]
    print(f"one fit on all of Adult, lambda {record['lam']:g}, {len(theirs)} fits: diffprivlib "
          f"{record['versions']['diffprivlib']} {min(theirs):.2f}-{max(theirs):.2f} s (recorded, wall clock), "
          f"dplr {min(ours):.2f}-{max(ours):.2f} s (CPU, one core)")


if __name__ == "__main__":
    main()

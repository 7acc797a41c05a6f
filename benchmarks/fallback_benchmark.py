"""The fallback of an uncertified release (issue 38 §2): its worst-case cost beside the fast solver, and how often it
triggers on the real-data protocol.

Two measurements, written to ``benchmarks/fallback_benchmark.json`` (the chapter on Algorithm 1's sensitivity reads
it):

* **cost**: on all of Adult's training set (n = 32,561, d = 105), logistic loss, tol = 1e-8, for each λ of
  ``--lambdas``: the fast solver's solve to :func:`dplr.solver.stopping_tolerance` (what output perturbation runs)
  and the fallback, :func:`dplr.solver.fixed_step_descent` for the public :func:`dplr.solver.fixed_step_plan`'s K
  steps, which it runs whatever the data (its worst case is its only case). BLAS on one thread for both; the best
  CPU time of ``--repeats`` runs each. K for smaller λ follows from the plan alone and is recorded without a run
  (the time is K times the measured time per step).
* **triggers**: :func:`dplr.release.fallback_count` before and after the real-data protocol's Algorithm 3 runs of
  Algorithm 1 (:func:`dplr.tuning.private_tuning_experiment`, the study's λ grid ``LAMBDAS`` and ε grid
  ``EPSILONS``, its trade-off streams) on Adult and KDDCup99, both losses, ``--tuning-repeats`` repeats each, and
  one output perturbation fit (:func:`dplr.algorithms.sensitivity_method`) on the whole training set per λ, ε and
  loss.

Run with the project's environment:
    DPLR_DATA_DIR=/work/shared/datasets .venv/bin/python benchmarks/fallback_benchmark.py
"""
import argparse
import json
import os
import platform
import time
from pathlib import Path

import numpy as np
from threadpoolctl import threadpool_limits

import dplr.release as release
from dplr.algorithms import sensitivity_method
from dplr.losses import get_loss
from dplr.replication.real_data import EPSILONS, HUBER_H, LAMBDAS, study_data, tradeoff_stream
from dplr.solver import fixed_step_descent, fixed_step_plan, solve_regularized_erm, stopping_tolerance
from dplr.tuning import private_tuning_experiment

OUT = Path(__file__).with_name("fallback_benchmark.json")


def _best_cpu(run, repeats):
    best = float("inf")
    for _ in range(repeats):
        start = time.process_time()
        result = run()
        best = min(best, time.process_time() - start)
    return best, result


def cost(X, y, lambdas, extra_lambdas, tol, repeats):
    loss = get_loss("logistic")
    n, d = X.shape
    rows = []
    for lam in lambdas:
        target = stopping_tolerance(tol, n, d, lam, loss)
        plan = fixed_step_plan(tol, n, d, lam, loss)
        fast_s, fast = _best_cpu(lambda: solve_regularized_erm(X, y, lam, loss, tol=target, check_input=False),
                                 repeats)
        slow_s, w = _best_cpu(lambda: fixed_step_descent(X, y, loss, plan), 1 if plan.steps > 2000 else repeats)
        distance = float(np.linalg.norm(w - fast.coef))  # both within tol/lam of the minimiser
        assert distance <= 2 * plan.distance, (lam, distance, plan.distance)
        rows.append(dict(lam=lam, steps=plan.steps, fast_seconds=fast_s, fallback_seconds=slow_s,
                         seconds_per_step=slow_s / max(plan.steps, 1), distance_bound=plan.distance,
                         distance_to_fast=distance))
        print(f"lam = {lam:.3g}: K = {plan.steps}, fast {fast_s:.3f} s, fallback {slow_s:.2f} s, "
              f"|w_K - w_fast| = {distance:.2e} <= 2 tol/lam = {2 * plan.distance:.2e}", flush=True)
    per_step = max(r["seconds_per_step"] for r in rows)
    for lam in extra_lambdas:
        steps = fixed_step_plan(tol, n, d, lam, loss).steps
        rows.append(dict(lam=lam, steps=steps, fast_seconds=None, fallback_seconds=None,
                         seconds_per_step=None, estimated_seconds=steps * per_step))
        print(f"lam = {lam:.3g}: K = {steps}, estimated {steps * per_step:.0f} s (not run)", flush=True)
    return rows


def triggers(tuning_repeats, seed):
    out = []
    for key in ("adult", "kdd"):
        X, y, X_test, y_test = study_data(key)
        for loss in ("logistic", "huber"):
            before = release.fallback_count()
            start = time.perf_counter()
            private_tuning_experiment(X, y, X_test, y_test, LAMBDAS, list(EPSILONS), tuning_repeats, loss=loss,
                                      huber_h=HUBER_H, methods=("objective", "sensitivity"),
                                      random_state=tradeoff_stream(seed, key, loss), n_jobs=1)
            tuning_solves = tuning_repeats * len(LAMBDAS)
            tuning_fallbacks = release.fallback_count() - before
            before = release.fallback_count()
            fits = 0
            for lam in LAMBDAS:
                for eps in EPSILONS:
                    sensitivity_method(X, y, eps, lam, loss=loss, huber_h=HUBER_H, random_state=fits)
                    fits += 1
            out.append(dict(data=key, loss=loss, tuning_repeats=tuning_repeats, tuning_solves=tuning_solves,
                            tuning_fallbacks=tuning_fallbacks, full_fits=fits,
                            full_fallbacks=release.fallback_count() - before,
                            seconds=time.perf_counter() - start))
            print(out[-1], flush=True)
    return out


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--lambdas", type=float, nargs="+", default=[1e-1, 1e-2, 1e-3])
    parser.add_argument("--extra-lambdas", type=float, nargs="+", default=[1e-4, 1e-5])
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--tuning-repeats", type=int, default=20)
    parser.add_argument("--seed", type=int, default=20110301)
    parser.add_argument("--only", choices=["cost", "triggers"], default=None,
                        help="run one of the two measurements and update its part of the record")
    args = parser.parse_args()
    X, y, _, _ = study_data("adult")
    measured = {}
    with threadpool_limits(1):
        if args.only != "triggers":
            measured.update(cost=cost(X, y, args.lambdas, args.extra_lambdas, 1e-8, args.repeats),
                            load_average=os.getloadavg()[0])
        if args.only != "cost":
            measured.update(triggers=triggers(args.tuning_repeats, args.seed))
    record = json.loads(OUT.read_text()) if args.only and OUT.exists() else {}  # read now: the other part may run
    record.update(measured)
    record.update(machine=f"{platform.machine()} {platform.processor() or ''}".strip(), cpus=os.cpu_count(),
                  python=platform.python_version(), numpy=np.__version__, n=int(X.shape[0]), d=int(X.shape[1]),
                  tol=1e-8)
    OUT.write_text(json.dumps(record, indent=1, sort_keys=True) + "\n")
    print(f"written {OUT}")


if __name__ == "__main__":
    main()

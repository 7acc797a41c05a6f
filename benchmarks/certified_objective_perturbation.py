"""The accuracy cost of releasing Algorithm 2's certified point (issue 38 §3): paired test errors on the real data.

For each data set of the real-data protocol (:mod:`dplr.replication.real_data`: UCI Adult, the KDDCup99 sample), the
logistic loss, every ε of its grid and every λ of its candidates, the corrected Algorithm 2 is fitted ``--draws``
times in both releases of :func:`dplr.algorithms.objective_perturbation`: ``release="exact_minimiser"`` (the papers'
idealisation: the solver's point at gradient norm 1e-8, no output noise) and ``release="certified"`` (1 % of ε to
output noise, the point certified at gradient norm γ = 1/n²). Both draw from the same seed, so their objective noise
shares its underlying draws (common random numbers; the certified release's b is rescaled to ε₁ = 0.99 ε and then
draws its output noise): the differences pair draw by draw. On the whole training set, no tuning (λ is fixed per
row: what the release changes is the same at every λ, and Algorithm 3 would add its own noise to both).

Writes ``benchmarks/certified_objective_perturbation.json``: per (data set, ε, λ) the mean test error of each
release, the mean paired difference (certified minus idealisation) and its 95 % t-interval. The theory chapter on
objective perturbation reads it. Run (about 5 minutes on two shared cores)::

    PYTHONPATH=. DPLR_DATA_DIR=../shared/datasets .venv/bin/python benchmarks/certified_objective_perturbation.py
"""
from __future__ import annotations

import argparse
import json
import platform
import time
from pathlib import Path

import numpy as np
from scipy import stats

from dplr.algorithms import objective_perturbation
from dplr.replication.real_data import DEFAULT_SEED, EPSILONS, LAMBDAS, study_data
from dplr.replication.seeding import task_stream
from dplr.threads import single_threaded
from dplr.tuning import test_error

OUT = Path(__file__).with_suffix(".json")


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--draws", type=int, default=50)
    parser.add_argument("--datasets", nargs="+", default=["adult", "kdd"])
    args = parser.parse_args()
    rows, start = [], time.perf_counter()
    with single_threaded():
        for key in args.datasets:
            X, y, X_test, y_test = study_data(key)
            for eps in EPSILONS:
                for lam in LAMBDAS:
                    errors = {}
                    for release in ("exact_minimiser", "certified"):
                        rng = task_stream(DEFAULT_SEED, key, "certified-release", str(eps), str(lam))
                        W = objective_perturbation(X, y, eps, lam, n_draws=args.draws, random_state=rng,
                                                   release=release, check_input=False)
                        errors[release] = np.array([test_error(w, X_test, y_test) for w in W])
                    diff = errors["certified"] - errors["exact_minimiser"]
                    half = stats.t.ppf(0.975, len(diff) - 1) * diff.std(ddof=1) / np.sqrt(len(diff))
                    rows.append({"data": key, "n": int(X.shape[0]), "d": int(X.shape[1]), "epsilon": eps,
                                 "lam": float(lam), "draws": args.draws,
                                 "error_exact_minimiser": float(errors["exact_minimiser"].mean()),
                                 "error_certified": float(errors["certified"].mean()),
                                 "difference": float(diff.mean()), "ci_low": float(diff.mean() - half),
                                 "ci_high": float(diff.mean() + half)})
                    print(rows[-1], flush=True)
    OUT.write_text(json.dumps({"machine": platform.machine(), "python": platform.python_version(),
                               "seconds": round(time.perf_counter() - start, 1), "rows": rows}, indent=1) + "\n")


if __name__ == "__main__":
    main()

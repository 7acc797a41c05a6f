"""IBM diffprivlib's LogisticRegression as a contender of the comparison with today's methods.

The comparison (``dplr.replication.modern.study``) tunes every contender privately by Algorithm 3 (JMLR 2011)
through ``dplr.tuning.private_tuning_with`` on the splits of the real-data study. This script adds
``diffprivlib.models.LogisticRegression`` (0.6.6: objective perturbation after Chaudhuri, Monteleoni & Sarwate,
JMLR 2011, Algorithm 2, through its ``Vector`` mechanism; ε-DP, it spends δ = 0 on its accountant) in the same
protocol: on Adult and the KDDCup99 sample (``dplr.replication.real_data.load_data``), candidates
``dplr.replication.real_data.LAMBDAS`` (one per part), the ε grid ``dplr.replication.modern.study.EPSILONS``,
method name ``"diffprivlib"`` and the trade-off stream ``tradeoff_stream(DEFAULT_SEED, key, "logistic")``, so
repeat ``r`` has the same split as every other contender's repeat ``r``. Logistic loss only: diffprivlib has no
Huber SVM (nor any other loss for its objective perturbation).

Each part's learner maps the book's parametrisation to diffprivlib's as the cross-check does
(``diffprivlib_crosscheck.py``): ``C = 1/(n_part λ)``, ``data_norm = 1`` (dplr's rows are in the unit ball, so
diffprivlib's clipping changes nothing, and its PrivacyLeakWarning -- data_norm read off the data -- cannot
occur; it is made an error), ``fit_intercept=False``, and the cross-check's tight solver settings
(``tol=1e-10``, ``max_iter=10_000``: the guarantee is for the exact minimiser; L-BFGS-B's fixed ``factr`` stops
it first, and the record keeps how far from stationary it stopped). Labels ±1 go in as 0/1; for two
classes diffprivlib's ``coef_`` is the one-vs-rest model of ``classes_[1]`` = 1, so ``sign(w·x) > 0`` predicts +1,
as ``dplr.tuning.test_error`` reads it. diffprivlib's seed is an integer below 2**32 drawn from the part's
Generator (``private_tuning_with`` gives each (repeat, ε, part) its own stream); each fit gets a fresh
``BudgetAccountant`` (no global state between fits). Any other warning is counted by ε and kept in the record, not
raised: a ConvergenceWarning would say that L-BFGS-B hit ``max_iter``; scipy 1.17's DeprecationWarning about the
``iprint`` diffprivlib passes to L-BFGS-B comes with every fit and is harmless.

At data_norm = 1 without intercept diffprivlib's calibration is JMLR 2011's (``tests/test_diffprivlib_model.py``:
``test_shipped_calibration_is_cms11_at_unit_norm_and_not_above``), so this contender is dplr's ``"objective"``
with diffprivlib's noise draws and its L-BFGS-B solver.

Run it in diffprivlib's environment (``diffprivlib_requirements.txt``; see ``diffprivlib_crosscheck.py``),
on one core::

    python3.11 -m venv /tmp/venv-diffprivlib-modern
    /tmp/venv-diffprivlib-modern/bin/pip install -r benchmarks/diffprivlib_requirements.txt
    /tmp/venv-diffprivlib-modern/bin/pip install --no-deps -e .
    OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 DPLR_DATA_DIR=../shared/datasets \\
        /tmp/venv-diffprivlib-modern/bin/python benchmarks/diffprivlib_modern.py

It writes ``book/data/diffprivlib_modern.csv.gz`` in the format of the comparison's record
(``dplr.replication.modern.record.read_record`` reads it): one row per (data set, repeat, ε), and a settings
line with the versions, the solver settings, the warnings and, under ``seconds``, the machine and the wall
seconds per experiment, per fit and per tuned model (the five fits of one (repeat, ε)); ``solver`` holds the
largest gradient norm of a fit's perturbed objective at its output (``b`` and ``Δ`` read back as in the
cross-check), by ε. The default of ``--repeats`` (:data:`REPEATS`) pairs every repeat of the real-data study and
the comparison; it takes a few minutes on one core (``benchmarks/README.md`` gives the recorded timings).
"""
from __future__ import annotations

import argparse
import platform
import sys
import time
import warnings
from collections import Counter, defaultdict
from pathlib import Path

import diffprivlib
import numpy as np
import pandas as pd
import scipy
import sklearn
from scipy.special import expit
from diffprivlib.accountant import BudgetAccountant
from diffprivlib.mechanisms import Vector
from diffprivlib.models import LogisticRegression
from diffprivlib.utils import PrivacyLeakWarning

from dplr.replication.modern.record import FORMAT, read_record
from dplr.replication.modern.study import EPSILONS
from dplr.replication.real_data import DEFAULT_SEED, LAMBDAS, load_data, tradeoff_stream
from dplr.replication.record import write_record
from dplr.tuning import private_tuning_with

OUT = Path(__file__).resolve().parents[1] / "book" / "data" / "diffprivlib_modern.csv.gz"
DATASETS = ("adult", "kdd")
LOSS = "logistic"  # diffprivlib has no Huber SVM
METHOD = "diffprivlib"
#: Repeats per data set and ε: the real-data study's (``dplr.replication.real.study.DEFAULT_REPEATS``), so that every
#: repeat of Algorithm 2 there, and of every contender of the comparison (100 or 50), has its diffprivlib pair on
#: the same split. A repeat is 40 fits per data set (5 parts, 8 ε), a few hundredths of a second each.
REPEATS = 200
TOL, MAX_ITER = 1e-10, 10_000  # the cross-check's: L-BFGS-B run to the minimiser
LOGISTIC_CURVATURE = 0.25  # diffprivlib's function_sensitivity for the logistic loss


def gradient_norm(w, X, y, lam, epsilon, seed):
    """||∇J(w)|| for the objective diffprivlib minimised on ``(X, y)`` (labels ±1) with this seed: the mean logistic
    loss + (λ + Δ)/2 ||w||² + bᵀw/n, with the noise ``b`` and extra ridge ``Δ`` read back through diffprivlib's
    public ``Vector`` API with the same seed (as ``diffprivlib_crosscheck.py`` does)."""
    n, d = X.shape
    mechanism = Vector(epsilon=epsilon, dimension=d, alpha=n * lam, function_sensitivity=LOGISTIC_CURVATURE,
                       data_sensitivity=1.0, n=n, random_state=seed)
    randomised = mechanism.randomise(lambda v, *args: (0.0, np.zeros(d)))
    _, at_zero = randomised(np.zeros(d))  # b/n
    _, at_w = randomised(w)  # b/n + Δ w
    margins = y * (X @ w)
    grad_loss = -(X * (y * expit(-margins))[:, None]).mean(axis=0)
    return float(np.linalg.norm(grad_loss + lam * w + at_w))


class Learner:
    """``fit(X_part, y_part, lam, epsilon, random_state)`` for ``private_tuning_with``: diffprivlib's
    LogisticRegression on the part; keeps each fit's wall seconds (by ε) and the warnings it raised."""

    def __init__(self):
        self.seconds = defaultdict(list)
        self.warnings = defaultdict(Counter)  # "Category: message" -> {ε: count}
        self.iterations = defaultdict(list)
        self.gradient_norms = defaultdict(list)

    def __call__(self, X, y, lam, epsilon, random_state):
        n = len(y)
        seed = int(random_state.integers(2**32))  # diffprivlib takes an int (a RandomState seed), not a Generator
        model = LogisticRegression(epsilon=epsilon, data_norm=1.0, C=1.0 / (n * lam), fit_intercept=False, tol=TOL,
                                   max_iter=MAX_ITER, random_state=seed, accountant=BudgetAccountant())
        start = time.perf_counter()
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            warnings.simplefilter("error", PrivacyLeakWarning)  # data_norm is given: must not happen
            model.fit(X, (y > 0).astype(int))
        self.seconds[epsilon].append(time.perf_counter() - start)
        self.iterations[epsilon].append(int(model.n_iter_[0]))
        for w in caught:
            self.warnings[f"{w.category.__name__}: {w.message}"][str(epsilon)] += 1
        assert list(model.classes_) == [0, 1] and model.coef_.shape == (1, X.shape[1])
        w = model.coef_[0]  # the model of class 1 (label +1): w·x > 0 predicts +1
        self.gradient_norms[epsilon].append(gradient_norm(w, X, y, lam, epsilon, seed))
        return w


def run(key, repeats, seed=DEFAULT_SEED):
    """Algorithm 3 with diffprivlib on data set ``key``: ``(rows, n_test, timings, warnings, largest gradient norm
    of a fit's objective at its output, by ε)``."""
    data = load_data(key, seed)
    X, y = data.X_train, data.y_train
    learner = Learner()
    start = time.perf_counter()
    rows = private_tuning_with(learner, X, y, data.X_test, data.y_test, LAMBDAS, list(EPSILONS), repeats,
                               name=METHOD, random_state=tradeoff_stream(seed, key, LOSS), n_jobs=1)
    total = time.perf_counter() - start
    timings = {"experiment": round(total, 1),
               "per_fit": {str(e): round(float(np.mean(s)), 4) for e, s in learner.seconds.items()},
               "per_tuned_model": {str(e): round(float(np.sum(s)) / repeats, 4) for e, s in learner.seconds.items()},
               "iterations_per_fit": {str(e): round(float(np.mean(i)), 1) for e, i in learner.iterations.items()}}
    largest = {str(e): float(f"{max(g):.1e}") for e, g in learner.gradient_norms.items()}
    print(f"{key}: {len(rows)} rows in {total:.1f} s; seconds per fit by epsilon {timings['per_fit']}; "
          f"largest gradient norm by epsilon {largest}", flush=True)
    caught = {message: dict(counts) for message, counts in learner.warnings.items()}
    return rows.assign(data=key, loss=LOSS, n=len(y)), len(data.y_test), timings, caught, largest


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeats", type=int, default=REPEATS, help=f"repeats per data set and epsilon ({REPEATS})")
    parser.add_argument("--out", type=Path, default=OUT, help=f"the record to write ({OUT.name} in book/data)")
    args = parser.parse_args(argv)
    frames, n_test, seconds, caught, gradients = [], {}, {}, {}, {}
    for key in DATASETS:
        rows, n_test[key], seconds[key], caught[key], gradients[key] = run(key, args.repeats)
        frames.append(rows)
    seconds["machine"] = {"platform": platform.platform(), "processor": platform.machine(),
                          "note": "wall seconds on one core of a machine running other work on its other core"}
    settings = {
        "what": "diffprivlib LogisticRegression tuned by Algorithm 3 (dplr.tuning.private_tuning_with) on the "
                "splits of the comparison; C = 1/(n_part lam), data_norm = 1, no intercept",
        "command": f"python benchmarks/diffprivlib_modern.py --repeats {args.repeats}",
        "versions": {"diffprivlib": diffprivlib.__version__, "scikit-learn": sklearn.__version__,
                     "numpy": np.__version__, "scipy": scipy.__version__, "python": platform.python_version()},
        "seed": DEFAULT_SEED, "repeats": args.repeats, "epsilons": [float(e) for e in EPSILONS],
        "lambdas": [float(lam) for lam in LAMBDAS], "delta": 0.0,
        "solver": {"tol": TOL, "max_iter": MAX_ITER, "data_norm": 1.0, "fit_intercept": False,
                   "largest_gradient_norm": gradients},
        "warnings": caught, "seconds": seconds,
    }
    write_record(pd.concat(frames, ignore_index=True), FORMAT, n_test, args.out, settings)
    rows, _ = read_record(args.out)  # read back as the book will
    print(rows.groupby(["data", "epsilon"]).error_private.mean().unstack("data").round(4).to_string())
    print(f"warnings: {caught}\nwrote {args.out}")


if __name__ == "__main__":
    sys.exit(main())

"""What validation costs in a fit (issue 37 §4): an estimator's whole input check, with the unit-ball rule of
``dplr.ball`` (a proven float64 error bound on each row's sum of squares and a shrink by k = 1.5d + 5 units of
roundoff, no exact arithmetic) and, in the same run, with the exact check it replaced, beside scikit-learn's
``LogisticRegression`` on the same data.

Data: 20,000 x 50 Gaussian rows scaled to norm 1 by scikit-learn's ``Normalizer`` (every row within a few ulps of the
sphere, about half of them outside it exactly), the same rows times 0.999 (every row well inside), and Adult-like
one-hot rows (8 categorical features of 3-20 levels, each row scaled by 1/sqrt(8): on the sphere in the reals, near it
in float64). Per data set, in one run: scikit-learn's ``LogisticRegression(fit_intercept=False)``; per estimator
(``StandardLR``, ``ObjectivePerturbation(epsilon=1)``) its fit, its whole input check (``_validate_training_data``:
scikit-learn's ``validate_data``, the ball's check with the finiteness test fused into it, the labels) and the ratio
of the two; the ball's check alone; and all of it again with the old input check: ``dplr/ball.py`` as of commit
``cd1120e`` (read from git: every norm decided exactly, rows exactly inside released bit for bit), a separate
finiteness pass and scikit-learn's ``check_classification_targets`` on the labels, as ``_validate_training_data`` was.
Best of ``--repeats`` runs each (the machine is shared: the best is the least disturbed); ``--clock cpu`` times
process CPU time instead of wall time, with BLAS on one thread (``dplr.threads.one_blas_thread``): on a busy machine
wall times measure the other work, CPU times much less. The released data of both
checks are tested inside the ball exactly (``dplr.ball.rows_outside_ball``) and compared (rows that differ, largest
relative difference).

    .venv/bin/python benchmarks/validation_benchmark.py [--repeats 15] [--clock cpu]
"""
import argparse
import subprocess
import time
import types
from pathlib import Path

import numpy as np
from sklearn.linear_model import LogisticRegression
from sklearn.preprocessing import Normalizer
from sklearn.utils.multiclass import check_classification_targets
from sklearn.utils.validation import validate_data

import dplr.ball as ball
import dplr.estimators as estimators
from dplr import ObjectivePerturbation, StandardLR
from dplr.threads import one_blas_thread
from dplr.validation import check_positive_finite, encode_binary_labels

N, D = 20_000, 50
OLD_COMMIT = "cd1120e"  # the last commit with the exact check (issue 37 §4's starting point)


CLOCK = {"wall": time.perf_counter, "cpu": time.process_time}
clock = time.perf_counter


def best(f, repeats):
    times = []
    for _ in range(repeats):
        start = clock()
        f()
        times.append(clock() - start)
    return min(times)


def datasets():
    rng = np.random.default_rng(0)
    X = Normalizer().fit_transform(rng.normal(size=(N, D)))
    y = np.where(X @ rng.normal(size=D) + 0.3 * rng.normal(size=N) > 0, 1, 0)
    levels = rng.integers(3, 21, size=8)
    onehot = np.zeros((N, int(levels.sum())))
    offsets = np.r_[0, np.cumsum(levels)[:-1]]
    for offset, count in zip(offsets, levels):
        onehot[np.arange(N), offset + rng.integers(0, count, size=N)] = 1.0
    onehot *= 1.0 / np.sqrt(8.0)
    y_onehot = np.where(onehot @ rng.normal(size=onehot.shape[1]) > 0, 1, 0)
    return {"Normalizer rows": (X, y), "Normalizer rows x 0.999": (X * 0.999, y),
            "Adult-like one-hot / sqrt(8)": (onehot, y_onehot)}


def old_ball():
    """``dplr/ball.py`` as of ``OLD_COMMIT``, as a module (it imports numpy and the standard library only)."""
    root = Path(__file__).resolve().parent.parent
    source = subprocess.run(["git", "show", f"{OLD_COMMIT}:dplr/ball.py"], cwd=root, check=True, capture_output=True,
                            text=True).stdout
    module = types.ModuleType("dplr_ball_old")
    exec(compile(source, f"{OLD_COMMIT}:dplr/ball.py", "exec"), module.__dict__)
    return module


def old_validation(old):
    """``_validate_training_data`` as of ``OLD_COMMIT`` (for ``norm_bound = 1``)."""
    def validate(self, X, y):
        X, y = validate_data(self, X, y, dtype=[np.float64, np.float32], ensure_all_finite=False)
        if not np.all(np.isfinite(X)):
            raise ValueError("Input X contains NaN or infinite values.")
        check_classification_targets(y)
        y_signed, classes = encode_binary_labels(y)
        norm_bound = check_positive_finite(self.norm_bound, "norm_bound")
        return old.check_rows_in_ball(X, norm_bound, dtype=X.dtype), y_signed, classes, norm_bound
    return validate


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=15)
    parser.add_argument("--clock", choices=sorted(CLOCK), default="wall")
    args = parser.parse_args()
    global clock
    clock = CLOCK[args.clock]
    if args.clock == "cpu":
        with one_blas_thread():
            run(args.repeats)
    else:
        run(args.repeats)


def run(repeats):
    old = old_ball()
    checks = {"new": ball.check_rows_in_ball, "old": old.check_rows_in_ball}
    base = estimators.StandardLR.__mro__[1]  # the estimators' shared base class, which validates
    validations = {"new": base._validate_training_data, "old": old_validation(old)}
    makers = {"StandardLR": lambda: StandardLR(),
              "ObjectivePerturbation(epsilon=1)": lambda: ObjectivePerturbation(epsilon=1.0, random_state=0)}
    for name, (X, y) in datasets().items():
        outside = ball.rows_outside_ball(X)
        print(f"{name}: {X.shape[0]} x {X.shape[1]}, {outside.sum()} rows outside the ball exactly")
        sklearn = best(lambda: LogisticRegression(fit_intercept=False).fit(X, y), repeats)
        print(f"  scikit-learn LogisticRegression fit {sklearn * 1e3:7.1f} ms")
        released = {}
        for path in ("new", "old"):
            check = checks[path]
            base._validate_training_data = validations[path]
            try:
                ball_time = best(lambda: check(X, dtype=X.dtype), repeats)
                released[path] = check(X, dtype=X.dtype)
                for label, make in makers.items():
                    fit = best(lambda: make().fit(X, y), repeats)
                    validation = best(lambda: make()._validate_training_data(X, y), repeats)
                    print(f"  {path}  {label:34s} fit {fit * 1e3:7.1f} ms  validation {validation * 1e3:6.2f} ms "
                          f"(ball {ball_time * 1e3:6.2f} ms)  validation/fit {validation / fit:6.1%}  "
                          f"fit/sklearn {fit / sklearn:5.2f}")
            finally:
                base._validate_training_data = validations["new"]
        inside = {path: not ball.rows_outside_ball(rows).any() for path, rows in released.items()}
        differ = np.any(released["new"] != released["old"], axis=1)
        with np.errstate(invalid="ignore", divide="ignore"):
            relative = np.abs(released["new"] - released["old"]) / np.abs(released["old"])
        largest = float(np.nanmax(np.where(released["old"] != 0, relative, 0.0)))
        print(f"  released rows inside exactly: new {inside['new']}, old {inside['old']}; rows that differ "
              f"{differ.sum()} of {len(differ)}, largest relative difference {largest:.2e}; new released again "
              f"unchanged: {ball.check_rows_in_ball(released['new']) is released['new']}")


if __name__ == "__main__":
    main()

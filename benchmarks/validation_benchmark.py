"""What the unit-ball check costs in a fit (issue 37 §4): the exact test of the records' norms, before and after.

Data: 20,000 x 50 Gaussian rows scaled to norm 1 by scikit-learn's ``Normalizer`` (every row within a few ulps of the
sphere, about half of them outside it exactly), the same rows times 0.999 (every row well inside), and Adult-like
one-hot rows (8 categorical features of 3-20 levels, each row scaled by 1/sqrt(8): on the sphere in the reals, near it
in float64). Per data set and estimator (``StandardLR``, ``ObjectivePerturbation(epsilon=1)``), in one run: the fit
time, the time of ``dplr.ball.check_rows_in_ball`` on the same X, their ratio, and scikit-learn's
``LogisticRegression`` on the same data; and the same with the old exact path -- the vectorised compensated test
``_near_signs`` switched off, so that every row near the sphere goes to the error-free-transformation test
``_exact_excess_sign`` as before (the old estimators also checked the rows twice when ``norm_bound == 1``; the "old" fit
here checks once, so it understates the old cost). Best of ``--repeats`` runs each; the released data are compared
bit for bit between the two paths.

    .venv/bin/python benchmarks/validation_benchmark.py [--repeats 5]
"""
import argparse
import time

import numpy as np
from sklearn.linear_model import LogisticRegression
from sklearn.preprocessing import Normalizer

import dplr.ball as ball
from dplr import ObjectivePerturbation, StandardLR

N, D = 20_000, 50


def best(f, repeats):
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        f()
        times.append(time.perf_counter() - start)
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


def undecided(rows, radius):  # the old path: the compensated test decides nothing
    n = rows.shape[0]
    return np.zeros(n, dtype=int), np.zeros(n, dtype=bool)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=5)
    repeats = parser.parse_args().repeats
    fast = ball._near_signs
    estimators = {"StandardLR": lambda: StandardLR(),
                  "ObjectivePerturbation(epsilon=1)": lambda: ObjectivePerturbation(epsilon=1.0, random_state=0)}
    for name, (X, y) in datasets().items():
        outside = ball.rows_outside_ball(X)
        print(f"{name}: {X.shape[0]} x {X.shape[1]}, {outside.sum()} rows outside the ball exactly")
        sklearn = best(lambda: LogisticRegression(fit_intercept=False).fit(X, y), repeats)
        released = {}
        for path in ("new", "old"):
            ball._near_signs = fast if path == "new" else undecided
            try:
                check = best(lambda: ball.check_rows_in_ball(X, dtype=X.dtype), repeats)
                released[path] = ball.check_rows_in_ball(X, dtype=X.dtype)
                for label, make in estimators.items():
                    fit = best(lambda: make().fit(X, y), repeats)
                    print(f"  {path}  {label:34s} fit {fit * 1e3:8.1f} ms  validation {check * 1e3:7.1f} ms  "
                          f"ratio {check / fit:5.1%}   sklearn LogisticRegression {sklearn * 1e3:7.1f} ms")
            finally:
                ball._near_signs = fast
        same = np.array_equal(released["new"], released["old"]) and not ball.rows_outside_ball(released["new"]).any()
        print(f"  released data bit-identical between the paths and inside exactly: {same}")


if __name__ == "__main__":
    main()

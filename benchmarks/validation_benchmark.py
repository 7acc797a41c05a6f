"""What validation costs in a fit (issue 37 §4): the unit-ball check and the rest of an estimator's input check, before
and after the fast projection, beside scikit-learn's ``LogisticRegression`` on the same data.

Data: 20,000 x 50 Gaussian rows scaled to norm 1 by scikit-learn's ``Normalizer`` (every row within a few ulps of the
sphere, about half of them outside it exactly), the same rows times 0.999 (every row well inside), and Adult-like
one-hot rows (8 categorical features of 3-20 levels, each row scaled by 1/sqrt(8): on the sphere in the reals, near it
in float64). Per data set, in one run: scikit-learn's ``LogisticRegression(fit_intercept=False)``; per estimator
(``StandardLR``, ``ObjectivePerturbation(epsilon=1)``) its fit, its whole input check (``_validate_training_data``:
scikit-learn's ``validate_data``, finiteness, labels, ``dplr.ball.check_rows_in_ball``) and the ratio of the two; the
ball's check alone; and all of it again with the old check -- the one before the fast projection, kept in
``dplr.ball`` as the tests' reference: numpy's norms with their scaled fallback, the exact test, and every row to move
projected by the scaled path with a full exact re-check after each shrink (``_project_scaled``). Best of
``--repeats`` runs each (the machine is shared: the best is the least disturbed); the released data are compared bit
for bit between the two checks.

    .venv/bin/python benchmarks/validation_benchmark.py [--repeats 15]
"""
import argparse
import time

import numpy as np
from sklearn.linear_model import LogisticRegression
from sklearn.preprocessing import Normalizer

import dplr.ball as ball
import dplr.estimators as estimators
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


def old_check(X, radius=1.0, *, dtype=None):
    """check_rows_in_ball before the fast projection (its refusal is the same and never fires on these data)."""
    X = np.asarray(X, dtype=np.float64)
    if not np.all(np.isfinite(X)):
        raise ValueError("X holds NaN or infinite values.")
    move = ball.rows_outside_ball(X, radius) | (ball._row_norms(X) > radius)
    if not move.any():
        return X
    X = X.copy()
    X[move] = ball._project_scaled(np.array(X[move], order="C"), radius)
    return X


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=15)
    repeats = parser.parse_args().repeats
    fast = estimators.check_rows_in_ball
    makers = {"StandardLR": lambda: StandardLR(),
              "ObjectivePerturbation(epsilon=1)": lambda: ObjectivePerturbation(epsilon=1.0, random_state=0)}
    for name, (X, y) in datasets().items():
        outside = ball.rows_outside_ball(X)
        print(f"{name}: {X.shape[0]} x {X.shape[1]}, {outside.sum()} rows outside the ball exactly")
        sklearn = best(lambda: LogisticRegression(fit_intercept=False).fit(X, y), repeats)
        print(f"  scikit-learn LogisticRegression fit {sklearn * 1e3:7.1f} ms")
        released = {}
        for path, check in (("new", fast), ("old", old_check)):
            estimators.check_rows_in_ball = check
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
                estimators.check_rows_in_ball = fast
        same = (released["new"].tobytes() == released["old"].tobytes()
                and not ball.rows_outside_ball(released["new"]).any())
        print(f"  released data bit-identical between the checks and inside exactly: {same}")


if __name__ == "__main__":
    main()

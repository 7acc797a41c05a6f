"""Audit diffprivlib's LogisticRegression calibration (issue 17): read it, search its worst pairs, fit it on them.

Runs in diffprivlib's own environment (``benchmarks/diffprivlib_requirements.txt``, dplr installed on top with
``--no-deps``; see ``benchmarks/README.md``) and writes ``benchmarks/diffprivlib_audit.json``, which
``book/audit_diffprivlib.ipynb`` and ``tests/test_diffprivlib_model.py`` read. Three parts:

1. **Calibration as shipped.** For every setting of the grid (``data_norm`` q ∈ {1, 10, 100}, ``fit_intercept``,
   ε ∈ {0.1, 1, 5}, n ∈ {100, 10 000}, C = 1, two features) the ``Vector`` mechanism is built exactly as
   ``diffprivlib/models/logistic_regression.py`` (l. 358-359, 398-400) builds it, and its public ``randomise`` is
   read back: the extra ridge Δ (gradient of the randomised zero function at e_1 minus at 0), the noise vector b
   (n times the gradient at 0) and the noise scale (‖b‖ divided by the same seed's Gamma variate at scale 1, which
   numpy draws as scale × standard Gamma). The same for the corrected mechanism (``function_sensitivity`` c·s, i.e.
   c s² in diffprivlib's formula, and the intercept regularised like the coefficients).
2. **Adversarial pairs.** Without an intercept, diffprivlib's mechanism on rows ‖x‖ ≤ q is dplr's Algorithm 2 on
   the unit ball with other constants (``dplr.analysis.diffprivlib_model.unit_ball_equivalent``); the script runs
   dplr's adversarial search (anchors, replaced pair, output) on those equivalents and records each worst pair and
   output in diffprivlib's coordinates. With an intercept, the explicit construction
   ``dplr.analysis.diffprivlib_model.intercept_construction``.
3. **Real fits.** For the settings where the exact computation says the claim fails (n = 100), diffprivlib's real
   ``fit`` is run ``N_RUNS`` times on each data set of the recorded pair, as shipped and with the corrected
   calibration; the outputs are recorded (the chapter runs dplr's black-box auditor on them).

About 35 minutes on two busy cores (the recorded run: 2,040 s), almost all of it the 24,000 fits.
"""
from __future__ import annotations

import json
import os
import platform
import time
import warnings
from pathlib import Path

import diffprivlib
import diffprivlib.models.logistic_regression as dpl_logistic
import numpy as np
import scipy
import sklearn
from diffprivlib.mechanisms import Vector
from diffprivlib.models import LogisticRegression
from sklearn.exceptions import ConvergenceWarning

from dplr.analysis.diffprivlib_model import (
    DIFFPRIVLIB_CURVATURE,
    diffprivlib_calibration,
    intercept_construction,
    unit_ball_equivalent,
)
from dplr.analysis.objective_perturbation_search import search_privacy_loss

OUT = Path(__file__).with_name("diffprivlib_audit.json")
SEED = 17
C = 1.0  # diffprivlib's default
D = 2  # features
DATA_NORMS = (1.0, 10.0, 100.0)
INTERCEPTS = (False, True)
EPSILONS = (0.1, 1.0, 5.0)
NS = (100, 10_000)
N_RUNS = int(os.environ.get("DPLR_AUDIT_RUNS", 2000))  # fits per data set and audited setting (env: for trials)
T_INTERCEPT = 12.0  # output intercept of the recorded intercept construction
AUDITED = [  # (data_norm, fit_intercept, epsilon): n = 100; claims that the exact computation refutes
    (100.0, False, 1.0),
    (10.0, False, 5.0),
    (1.0, True, 1.0),
]


def grid():
    return [(q, fi, eps, n) for q in DATA_NORMS for fi in INTERCEPTS for eps in EPSILONS for n in NS]


class CorrectedVector(Vector):
    """The corrected calibration inside diffprivlib: c s² instead of c s, and the intercept regularised.

    ``function_sensitivity`` times ``data_sensitivity`` is what diffprivlib's ``vector.py`` l. 149 and 153 use
    for the curvature bound; multiplying ``function_sensitivity`` by ``data_sensitivity`` makes it c s² (the
    noise scale 2 s/ε' of l. 157 is unchanged in form). With ``intercept=True`` the randomised objective also
    gets (λ/2) w_0² with λ = α/n, the term scikit-learn's ``l2_penalty`` leaves out.
    """

    intercept = False

    def __init__(self, *, epsilon, function_sensitivity, data_sensitivity=1.0, dimension, alpha=0.01, n=1,
                 random_state=None):
        super().__init__(epsilon=epsilon, function_sensitivity=function_sensitivity * data_sensitivity,
                         data_sensitivity=data_sensitivity, dimension=dimension, alpha=alpha, n=n,
                         random_state=random_state)

    def randomise(self, value):
        lam = self.alpha / self.n

        def regularised(w, *args):
            f, g = value(w, *args)
            if self.intercept:
                f = f + 0.5 * lam * w[-1] ** 2
                g = g.copy()
                g[-1] += lam * w[-1]
            return f, g

        return super().randomise(regularised)


def read_vector(q, fit_intercept, eps, n, seed, corrected):
    """Δ, b and the noise scale that diffprivlib's Vector (shipped or corrected) draws with ``seed``."""
    s = float(np.sqrt(q**2 + 1)) if fit_intercept else q
    dim = D + int(fit_intercept)
    cls = CorrectedVector if corrected else Vector
    CorrectedVector.intercept = fit_intercept
    mech = cls(epsilon=eps, dimension=dim, alpha=1.0 / C, function_sensitivity=DIFFPRIVLIB_CURVATURE,
               data_sensitivity=s, n=n, random_state=seed)
    randomised = mech.randomise(lambda w, *args: (0.0, np.zeros(dim)))
    _, at_zero = randomised(np.zeros(dim))
    unit = np.zeros(dim)
    unit[0] = 1.0
    _, at_unit = randomised(unit)
    b = at_zero * n
    rs = np.random.RandomState(seed)  # vector.py l. 160-161: 4*dim normals, then four Gamma(dim/4, scale)
    rs.standard_normal((dim, 4))
    gamma_unit = rs.gamma(dim / 4, 1.0, 4).sum()
    return {"delta": float(at_unit[0] - at_zero[0]), "b": b.tolist(),
            "noise_scale": float(np.linalg.norm(b) / gamma_unit)}


def to_diffprivlib(case, s):
    """A dplr WorstCase (unit ball, labels +1) as diffprivlib data: rows s·u, labels {0, 1}, output w/s.

    Both classes are needed: the first shared row is flipped (x → -x, label 0), which leaves u = y x unchanged.
    """
    pair = case.pair()
    X, Xp = s * np.array(pair.X), s * np.array(pair.X_prime)
    y, yp = np.ones(pair.n), np.ones(pair.n)
    X[0], Xp[0], y[0], yp[0] = -X[0], -Xp[0], 0.0, 0.0
    return X, y, Xp, yp, case.w / s


def compact(X, y):
    """Rows as distinct (row, label, count) triples: the pairs are mostly copies of a few rows."""
    rows, counts = np.unique(np.c_[X, y], axis=0, return_counts=True)
    return {"rows": rows.tolist(), "counts": counts.tolist()}


def fit_outputs(X, y, q, fit_intercept, eps, corrected, seeds):
    out = []
    original = dpl_logistic.Vector
    dpl_logistic.Vector = CorrectedVector if corrected else Vector
    CorrectedVector.intercept = fit_intercept
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", ConvergenceWarning)  # counted below instead
            for seed in seeds:
                model = LogisticRegression(epsilon=eps, data_norm=q, C=C, fit_intercept=fit_intercept,
                                           random_state=int(seed)).fit(X, y)
                w = model.coef_.ravel()
                if fit_intercept:
                    w = np.r_[w, model.intercept_]
                out.append([float(f"{v:.9g}") for v in w])
    finally:
        dpl_logistic.Vector = original
    return out


def main():
    start = time.perf_counter()
    settings = grid()
    calibration = []
    for k, (q, fi, eps, n) in enumerate(settings):
        for corrected in (False, True):
            calibration.append({"data_norm": q, "fit_intercept": fi, "epsilon": eps, "n": n, "C": C,
                                "corrected": corrected, "seed": 1000 + k,
                                **read_vector(q, fi, eps, n, 1000 + k, corrected)})
    print(f"calibration read back: {len(calibration)} settings ({time.perf_counter() - start:.0f} s)")

    searched = [(q, fi, eps, n, corrected) for q, fi, eps, n in settings for corrected in (False, True)
                if not fi]
    equivalents = [unit_ball_equivalent(diffprivlib_calibration(eps, n, C, q, fi, corrected))
                   for q, fi, eps, n, corrected in searched]
    cases = search_privacy_loss(equivalents, D, random_state=SEED)
    worst = []
    for (q, fi, eps, n, corrected), case in zip(searched, cases):
        X, y, Xp, yp, w = to_diffprivlib(case, q)
        worst.append({"data_norm": q, "fit_intercept": fi, "epsilon": eps, "n": n, "C": C, "corrected": corrected,
                      "unit_ball_value": case.value, "w": w.tolist(), "D": compact(X, y), "D_prime": compact(Xp, yp),
                      "n_rows": int(n)})
    print(f"search: {len(cases)} settings ({time.perf_counter() - start:.0f} s)")

    audits = []
    for a, (q, fi, eps) in enumerate(AUDITED):
        n = 100
        if fi:
            X, y, Xp, yp, w = intercept_construction(n, diffprivlib_calibration(eps, n, C, q, fi), T_INTERCEPT)
            X = np.c_[X, np.zeros(n)]  # two features, the second always 0
            Xp = np.c_[Xp, np.zeros(n)]
            w = np.r_[w[0], 0.0, w[1]]
            source = "intercept_construction"
        else:
            row = next(r for r in worst if (r["data_norm"], r["fit_intercept"], r["epsilon"], r["n"],
                                            r["corrected"]) == (q, fi, eps, n, False))
            X, y, Xp, yp, w = (expand(row["D"])[0], expand(row["D"])[1], expand(row["D_prime"])[0],
                               expand(row["D_prime"])[1], np.array(row["w"]))
            source = "search"
        seeds = np.random.SeedSequence([SEED, a]).generate_state(4 * N_RUNS, dtype=np.uint32)
        record = {"data_norm": q, "fit_intercept": fi, "epsilon": eps, "n": n, "C": C, "source": source,
                  "w": np.asarray(w).tolist(), "D": compact(X, y), "D_prime": compact(Xp, yp)}
        for corrected in (False, True):
            base = 2 * N_RUNS * int(corrected)
            tag = "corrected" if corrected else "shipped"
            record[tag] = {
                "outputs_D": fit_outputs(X, y, q, fi, eps, corrected, seeds[base:base + N_RUNS]),
                "outputs_D_prime": fit_outputs(Xp, yp, q, fi, eps, corrected, seeds[base + N_RUNS:base + 2 * N_RUNS]),
            }
        audits.append(record)
        print(f"audit fits {q, fi, eps}: {2 * 2 * N_RUNS} fits ({time.perf_counter() - start:.0f} s)")

    record = {
        "what": "issue 17: diffprivlib LogisticRegression's calibration read back, worst pairs, real fits",
        "versions": {"diffprivlib": diffprivlib.__version__, "scikit-learn": sklearn.__version__,
                     "numpy": np.__version__, "scipy": scipy.__version__, "python": platform.python_version()},
        "C": C, "d": D, "seed": SEED, "n_runs": N_RUNS, "t_intercept": T_INTERCEPT,
        "calibration": calibration, "worst": worst, "audits": audits,
        "seconds": round(time.perf_counter() - start, 1),
    }
    OUT.write_text(json.dumps(record) + "\n")
    print(f"wrote {OUT} ({OUT.stat().st_size / 1e6:.2f} MB, {record['seconds']} s)")


def expand(compacted):
    """(X, y) from :func:`compact`'s rows and counts."""
    rows = np.repeat(np.array(compacted["rows"]), compacted["counts"], axis=0)
    return rows[:, :-1], rows[:, -1]


if __name__ == "__main__":
    main()

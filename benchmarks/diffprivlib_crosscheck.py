"""Cross-check dplr's corrected objective perturbation against IBM diffprivlib's LogisticRegression.

diffprivlib (Holohan et al.) implements the same algorithm -- objective perturbation of
Chaudhuri, Monteleoni & Sarwate, JMLR 2011, through its ``Vector`` mechanism -- with its own
calibration code and a different optimiser (L-BFGS). This script fits diffprivlib on UCI Adult,
preprocessed by ``dplr.datasets.load_adult``, with the book's parametrisation mapped to
diffprivlib's: ``C = 1/(n λ)``, ``data_norm = 1``, ``fit_intercept=False``. It records

* for a few (ε, seed): diffprivlib's coefficients and test error, and the noise vector ``b`` and
  extra ridge ``Δ`` it used, read back through diffprivlib's public ``Vector.randomise`` with the
  same seed (the gradient of the randomised zero function at ``w = 0`` is ``b/n``; at ``w = e_1`` it
  is ``b/n + Δ e_1``); the optimality residual of each fit under that ``b`` and ``Δ`` confirms that
  they are the ones the fit used;
* for each ε: the norms of 500 further noise vectors (``Vector`` draws only, no fitting).

``book/real_data.ipynb`` reads the JSON output and checks it against dplr live: the same ``Δ``
from dplr's calibration, the noise norms against dplr's Gamma law, and dplr's solver on the
recorded ``b`` against diffprivlib's coefficients.

Why a separate environment: diffprivlib 0.6.6 installs with the book's pins but does not import
with scikit-learn 1.9.1 (``diffprivlib.models.forest`` imports ``DOUBLE`` from
``sklearn.tree._tree``, which no longer exists). Run it with the pins of
``benchmarks/diffprivlib_requirements.txt``::

    python3.11 -m venv /tmp/venv-diffprivlib
    /tmp/venv-diffprivlib/bin/pip install -r benchmarks/diffprivlib_requirements.txt
    /tmp/venv-diffprivlib/bin/pip install --no-deps -e .
    DPLR_DATA_DIR=../shared/datasets /tmp/venv-diffprivlib/bin/python benchmarks/diffprivlib_crosscheck.py

It writes ``benchmarks/diffprivlib_crosscheck.json`` (about 2 minutes on two cores).
"""
from __future__ import annotations

import json
import platform
import time
import warnings
from pathlib import Path

import diffprivlib
import numpy as np
import scipy
import sklearn
from diffprivlib.mechanisms import Vector
from diffprivlib.models import LogisticRegression
from diffprivlib.utils import PrivacyLeakWarning
from sklearn.exceptions import ConvergenceWarning

from dplr.datasets import load_adult

OUT = Path(__file__).with_name("diffprivlib_crosscheck.json")
LAM = 1e-3
EPSILONS = (0.01, 0.1, 1.0)  # ε = 0.01 is below the threshold where Δ > 0 (n λ = 32.6, c = 1/4)
FIT_SEEDS = (0, 1, 2)
NORM_SEEDS = 500  # per ε, from seeds 1000 + 1000 k (k = index of ε): independent draws for each ε
LOGISTIC_CURVATURE = 0.25  # diffprivlib's function_sensitivity for the logistic loss


def noise_of(epsilon, n, d, C, seed):
    """(b, Δ) that diffprivlib's LogisticRegression(random_state=seed) adds, via the public Vector API."""
    mechanism = Vector(epsilon=epsilon, dimension=d, alpha=1.0 / C, function_sensitivity=LOGISTIC_CURVATURE,
                       data_sensitivity=1.0, n=n, random_state=seed)
    randomised = mechanism.randomise(lambda w, *args: (0.0, np.zeros(d)))
    _, at_zero = randomised(np.zeros(d))
    unit = np.zeros(d)
    unit[0] = 1.0
    _, at_unit = randomised(unit)
    return at_zero * n, float(at_unit[0] - at_zero[0])


def residual(w, X, y, lam, b, ridge):
    """||∇J(w)|| for J = mean logistic loss + (λ + Δ)/2 ||w||² + bᵀw/n."""
    n = X.shape[0]
    margins = y * (X @ w)
    grad_loss = -(X * (y / (1.0 + np.exp(margins)))[:, None]).mean(axis=0)
    return float(np.linalg.norm(grad_loss + (lam + ridge) * w + b / n))


def main():
    data = load_adult(download=False)
    X, y, X_test, y_test = data.X_train, data.y_train, data.X_test, data.y_test
    n, d = X.shape
    C = 1.0 / (n * LAM)
    runs = []
    for epsilon in EPSILONS:
        for seed in FIT_SEEDS:
            b, ridge = noise_of(epsilon, n, d, C, seed)
            model = LogisticRegression(epsilon=epsilon, data_norm=1.0, C=C, fit_intercept=False, tol=1e-10,
                                       max_iter=10_000, random_state=seed)
            start = time.perf_counter()
            with warnings.catch_warnings():
                # a convergence or privacy-leak warning must not pass silently (scipy's deprecation notes may)
                warnings.simplefilter("error", ConvergenceWarning)
                warnings.simplefilter("error", PrivacyLeakWarning)
                model.fit(X, y)
            seconds = time.perf_counter() - start
            w = model.coef_.ravel()
            runs.append({
                "epsilon": epsilon, "seed": seed,
                "delta": ridge,  # the ridge Δ, under the stored record's key (diffprivlib's own name for it)
                "b": b.tolist(), "coef": w.tolist(),
                "test_error": float(np.mean(np.where(X_test @ w > 0, 1.0, -1.0) != y_test)),
                "n_iter": int(model.n_iter_[0]), "seconds": round(seconds, 2),
                "optimality_residual": residual(w, X, y, LAM, b, ridge),
            })
            print(f"eps={epsilon:<5} seed={seed} Δ={ridge:.3e} ||b||={np.linalg.norm(b):9.2f} "
                  f"error={runs[-1]['test_error']:.4f} residual={runs[-1]['optimality_residual']:.1e} "
                  f"({seconds:.1f} s)")
    norms = {str(epsilon): [float(np.linalg.norm(noise_of(epsilon, n, d, C, 1000 * (k + 1) + i)[0]))
                            for i in range(NORM_SEEDS)]
             for k, epsilon in enumerate(EPSILONS)}
    record = {
        "what": "diffprivlib LogisticRegression on UCI Adult (dplr.datasets.load_adult), C = 1/(n lam), data_norm = 1",
        "versions": {"diffprivlib": diffprivlib.__version__, "scikit-learn": sklearn.__version__,
                     "numpy": np.__version__, "scipy": scipy.__version__, "python": platform.python_version()},
        "data": {"n": n, "d": d, "n_test": int(X_test.shape[0]), "sum_X": float(X.sum()), "sum_y": float(y.sum())},
        "lam": LAM, "C": C, "epsilons": list(EPSILONS), "runs": runs, "noise_norms": norms,
    }
    OUT.write_text(json.dumps(record, indent=1) + "\n")
    print(f"wrote {OUT}")


if __name__ == "__main__":
    main()

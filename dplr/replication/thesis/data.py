r"""The data of Veldhuizen (2020): the two simulated sets, the 2-D illustrations, the breast-cancer subset, the folds.

D. Veldhuizen, *Handling privacy preservation for binary classification data*, BSc thesis, Erasmus
School of Economics, 2020 (``seeds/004_2389f0caa551afc2.txt``), Section 3 "Data".

Simulated data (Section 3, p. 6--7)
-----------------------------------
* **Separable**: "10 variables and 10000 data points", "uniformly distributed from the unit 10
  dimensional hypersphere", a separator through the origin "along with a band margin of 0.03. A
  generated point is only added to the simulated data set if it falls outside of this margin."
  :func:`make_thesis_separable` is :func:`dplr.datasets.simulated.make_separable` (points uniform on the sphere,
  rejection of the band, labels :math:`\pm 1`).
* **Inseparable**: a *new* separable set made the same way; "a method called the support vector
  machine ... we estimate this perfect linear separator"; "the optimised margin is expanded ... we set
  the margin to 0.1"; "all points that fall inside this new margin are given an opposite label, with a
  probability of 0.2". :func:`make_thesis_inseparable` fits a hard-margin linear SVM
  (``sklearn.svm.SVC(kernel="linear", C=1e6)``, which includes an offset, as MATLAB's ``fitcsvm``
  does), measures every point's distance to the SVM hyperplane and flips labels with probability 0.2
  where that distance is at most 0.1. The separable set has no points within 0.03 of the generating
  separator, and the SVM hyperplane lies almost on it, so flips happen in a band
  :math:`0.03 \lesssim |d| \le 0.1` -- about 17 % of the points, hence a Bayes error near
  :math:`0.2 \times 0.17 \approx 0.035`.
* **Figures 1--2** are two-dimensional versions "to visualise"; Figure 2 uses flipping probability
  0.6 "to make a more clear distinction". :func:`illustration_2d` draws them in the unit *disc* (on
  the circle the band would be two short arcs; the thesis' ``randsphere`` helper is described as
  giving points on the sphere, we note the choice).

The real data (Section 3, p. 8; Section 1)
-------------------------------------------
The thesis uses five features of the Wisconsin Diagnostic Breast Cancer data ("5 variables and 565
data points"), loaded by :func:`dplr.datasets.breast_cancer.load_wdbc`.

**569 → 565.** The thesis' cross-validation "shuffles the complete data set and splits it up into
five equal parts" (Section 4.4; its helper ``Split 5`` "splits up the input data set in five equal
parts"). 569 = 5 × 113 + 4 is not divisible by five; 565 = 5 × 113 is the largest size that is, so
four records were dropped. Which four is not said; :func:`thesis_subset` drops the four that come
last after the seeded shuffle. (The simulated sets, 10,000 = 5 × 2,000, need no trimming.)

:func:`thesis_dataset` gives each of the three data sets of the study, :func:`thesis_folds` its five
folds; :func:`normalise` the readings of "normalising every data vector".
"""
from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

import numpy as np
from sklearn.svm import SVC

from dplr.datasets.breast_cancer import load_wdbc
from dplr.ball import uniform_in_ball
from dplr.datasets.simulated import make_separable
from dplr.replication.seeding import task_seed_sequence
from dplr.replication.thesis.published import KINDS, THESIS_FOLDS, THESIS_SEED
from dplr.validation import check_random_state, warn_privacy_leak

__all__ = [
    "THESIS_N",
    "THESIS_D",
    "THESIS_MARGIN",
    "THESIS_EXPANDED_MARGIN",
    "THESIS_FLIP_PROBABILITY",
    "THESIS_FIGURE2_FLIP_PROBABILITY",
    "THESIS_REAL_N",
    "THESIS_REAL_D",
    "MaxMarginSeparator",
    "InseparableData",
    "make_thesis_separable",
    "max_margin_separator",
    "make_thesis_inseparable",
    "illustration_2d",
    "thesis_subset",
    "NORMALISATIONS",
    "DATA_DEPENDENT_NORMALISATIONS",
    "normalise",
    "thesis_dataset",
    "thesis_folds",
    "full_training_size",
]

THESIS_N = 10_000
THESIS_D = 10
THESIS_MARGIN = 0.03
THESIS_EXPANDED_MARGIN = 0.1
THESIS_FLIP_PROBABILITY = 0.2
THESIS_FIGURE2_FLIP_PROBABILITY = 0.6
#: "The real data set contains 5 variables and 565 data points" (Section 3).
THESIS_REAL_N = 565
THESIS_REAL_D = 5


# --------------------------------------------------------------------------------------------------
# Simulated data
# --------------------------------------------------------------------------------------------------
def make_thesis_separable(n=THESIS_N, d=THESIS_D, margin=THESIS_MARGIN, random_state=None):
    """The thesis' separable set: uniform on the unit sphere, no mass within ``margin`` of the separator e₁.

    Returns ``X`` (n, d) with unit rows and ``y`` in {-1, +1}.
    """
    return make_separable(n, d, margin, random_state=check_random_state(random_state))


@dataclass(frozen=True)
class MaxMarginSeparator:
    """The hyperplane :math:`\\{x: u^\\top x + c = 0\\}` of a hard-margin linear SVM, :math:`\\lVert u\\rVert = 1`."""

    normal: np.ndarray
    offset: float
    margin: float  # geometric margin 1/||w|| of the SVM (half the width of the empty band)

    def distance(self, X):
        """Signed distance of each row of ``X`` to the hyperplane."""
        return np.asarray(X, dtype=float) @ self.normal + self.offset


def max_margin_separator(X, y, C=1e6, tol=1e-10):
    """Estimate the maximum-margin separator of separable data with a linear SVM (a large ``C`` ≈ hard margin).

    ``tol`` is libsvm's stopping tolerance. At its default there, 1e-3, the direction found differs between machines
    by about 2e-5 radians (rounding changes libsvm's path), enough to move a point across the expanded band of
    :func:`make_thesis_inseparable` (a point of the thesis' set lies 4e-6 from its edge); at 1e-10 the solution is
    converged far below that and the band holds the same points everywhere (for the thesis' set, the same points as
    with libsvm's default).
    """
    svm = SVC(kernel="linear", C=C, tol=tol).fit(X, y)
    w = svm.coef_.ravel()
    norm = float(np.linalg.norm(w))
    return MaxMarginSeparator(w / norm, float(svm.intercept_[0]) / norm, 1.0 / norm)


@dataclass(frozen=True)
class InseparableData:
    """The thesis' inseparable set and how it was made."""

    X: np.ndarray
    y: np.ndarray
    y_separable: np.ndarray
    separator: MaxMarginSeparator
    in_band: np.ndarray  # |distance to the SVM hyperplane| <= expanded margin
    flipped: np.ndarray


def make_thesis_inseparable(n=THESIS_N, d=THESIS_D, margin=THESIS_MARGIN, expanded_margin=THESIS_EXPANDED_MARGIN,
                            flip_probability=THESIS_FLIP_PROBABILITY, random_state=None):
    """Separable data, then labels flipped with ``flip_probability`` within ``expanded_margin`` of the SVM hyperplane.

    Section 3 of the thesis: the separable construction is repeated, the max-margin separator is
    estimated with a support vector machine (:func:`max_margin_separator`), its margin is expanded to
    ``expanded_margin`` and every point inside the expanded band gets the opposite label with
    probability ``flip_probability``. One generator supplies the points and then the flips.
    """
    if not 0 <= flip_probability <= 1:
        raise ValueError(f"flip_probability must be in [0, 1], got {flip_probability!r}.")
    rng = check_random_state(random_state)
    X, y = make_thesis_separable(n, d, margin, rng)
    separator = max_margin_separator(X, y)
    in_band = np.abs(separator.distance(X)) <= expanded_margin
    flipped = in_band & (rng.random(n) < flip_probability)
    y_new = np.where(flipped, -y, y)
    return InseparableData(X, y_new, y, separator, in_band, flipped)


def illustration_2d(kind, n=600, random_state=None):
    """The 2-D pictures of Figures 1--2: points uniform in the unit disc, separator the vertical axis.

    ``kind="separable"``: points with :math:`|x_1| < 0.03` are redrawn, labels :math:`\\operatorname{sgn}(x_1)`.
    ``kind="inseparable"``: as the thesis' Figure 2, the separable picture with the SVM band expanded to
    0.1 and flipping probability 0.6. Returns ``(X, y, info)``; ``info`` holds the separator and, for
    the inseparable picture, the band and flip masks.
    """
    rng = check_random_state(random_state)
    u = np.array([1.0, 0.0])
    kept = np.empty((0, 2))
    while kept.shape[0] < n:
        batch = uniform_in_ball(rng, (2 * n, 2))
        kept = np.vstack([kept, batch[np.abs(batch @ u) >= THESIS_MARGIN]])
    X = kept[:n]
    y = np.where(X @ u >= 0, 1.0, -1.0)
    if kind == "separable":
        return X, y, {"separator": MaxMarginSeparator(u, 0.0, THESIS_MARGIN)}
    if kind != "inseparable":
        raise ValueError(f"kind must be 'separable' or 'inseparable', got {kind!r}.")
    separator = max_margin_separator(X, y)
    in_band = np.abs(separator.distance(X)) <= THESIS_EXPANDED_MARGIN
    flipped = in_band & (rng.random(n) < THESIS_FIGURE2_FLIP_PROBABILITY)
    return X, np.where(flipped, -y, y), {"separator": separator, "in_band": in_band, "flipped": flipped}


def thesis_subset(n_records, n_keep=THESIS_REAL_N, random_state=None):
    """Indices of the records the thesis keeps: a seeded shuffle of all records, the first ``n_keep``.

    With 569 records and five equal folds of 113, the four that come last in the shuffle are dropped.
    The returned order is the shuffled order (fold :math:`k` is positions :math:`113k` to :math:`113(k+1)-1`).
    """
    if not 0 < n_keep <= n_records:
        raise ValueError(f"n_keep must be in (0, {n_records}], got {n_keep}.")
    return check_random_state(random_state).permutation(n_records)[:n_keep]


# --------------------------------------------------------------------------------------------------
# Normalisations: the thesis' (readings) and a sound one
# --------------------------------------------------------------------------------------------------
#: Readings of "Normalising every data vector secures this restriction" (Section 3).
NORMALISATIONS = {
    "none": "raw features (rows far outside the unit ball)",
    "row": "each row divided by its own norm, x/||x|| (a per-record map)",
    "max_norm": "every row divided by the largest row norm of the data",
    "column_max": "each column divided by its maximum in the data, then rows by sqrt(d)",
    "min_max": "each column mapped to [0, 1] with its minimum and maximum in the data, then rows by sqrt(d)",
    "zscore": "columns standardised with the data's mean and std, then rows by the largest row norm",
}
#: The readings whose scale depends on other records: a model trained after them is not ε-DP.
DATA_DEPENDENT_NORMALISATIONS = ("max_norm", "column_max", "min_max", "zscore")


def normalise(X, how, warn=True):
    """Apply one reading of the thesis' normalisation (see :data:`NORMALISATIONS`) to the whole data set.

    ``"row"`` maps each record on its own and leaks nothing; the readings in
    :data:`DATA_DEPENDENT_NORMALISATIONS` use maxima, minima or moments of the data, so every scaled
    record depends on the others: they warn with :class:`~dplr.validation.PrivacyLeakWarning` unless
    ``warn=False`` (the replication applies them on purpose and reports it).
    """
    X = np.asarray(X, dtype=float)
    if how not in NORMALISATIONS:
        raise ValueError(f"how must be one of {tuple(NORMALISATIONS)}, got {how!r}.")
    if warn and how in DATA_DEPENDENT_NORMALISATIONS:
        warn_privacy_leak(f"normalise(how={how!r}) scales every record with statistics of the whole data set; "
                          f"a model trained on the result is not ε-DP for the original records.")
    d = X.shape[1]
    if how == "none":
        return X.copy()
    if how == "row":
        return X / np.linalg.norm(X, axis=1, keepdims=True)
    if how == "max_norm":
        return X / np.linalg.norm(X, axis=1).max()
    if how == "column_max":
        return X / np.abs(X).max(axis=0) / np.sqrt(d)
    if how == "min_max":
        low, high = X.min(axis=0), X.max(axis=0)
        return (X - low) / (high - low) / np.sqrt(d)
    Z = (X - X.mean(axis=0)) / X.std(axis=0)
    return Z / np.linalg.norm(Z, axis=1).max()


# --------------------------------------------------------------------------------------------------
# The three data sets of the study and their folds
# --------------------------------------------------------------------------------------------------
@lru_cache(maxsize=8)
def thesis_dataset(kind, seed=THESIS_SEED):
    """``(X, labels)`` of one data set, read-only and cached. Real data: raw features and the malignant flags.

    Simulated sets: :math:`N` = 10,000, :math:`d` = 10, labels ±1. Real data: the 565 records of
    :func:`thesis_subset` in shuffled order (``load_wdbc("sklearn")``: offline).
    """
    rng = np.random.default_rng(task_seed_sequence(seed, "thesis-data", kind))
    if kind == "separable":
        X, y = make_thesis_separable(THESIS_N, random_state=rng)
    elif kind == "inseparable":
        data = make_thesis_inseparable(THESIS_N, random_state=rng)
        X, y = data.X, data.y
    elif kind == "real":
        wdbc = load_wdbc("sklearn")
        keep = thesis_subset(wdbc.n, THESIS_REAL_N, rng)
        X, y = wdbc.X[keep], wdbc.malignant[keep]
    else:
        raise ValueError(f"kind must be one of {KINDS}, got {kind!r}.")
    X, y = np.array(X, dtype=float), np.array(y)
    X.setflags(write=False)
    y.setflags(write=False)
    return X, y


def thesis_folds(n, n_splits=THESIS_FOLDS):
    """Five equal contiguous folds of the (already shuffled) data: a list of ``(train, test)`` index arrays."""
    if n % n_splits:
        raise ValueError(f"{n} records do not split into {n_splits} equal folds.")
    size = n // n_splits
    index = np.arange(n)
    return [(np.concatenate([index[:k * size], index[(k + 1) * size:]]), index[k * size:(k + 1) * size])
            for k in range(n_splits)]


def full_training_size(kind, n_splits=THESIS_FOLDS):
    """Records in the training part of a fold: 8,000 for the simulated sets, 452 for the real data."""
    return (THESIS_REAL_N if kind == "real" else THESIS_N) * (n_splits - 1) // n_splits

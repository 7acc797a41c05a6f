r"""The data of Veldhuizen (2020): the two simulated sets, the 2-D illustrations and the breast-cancer data.

D. Veldhuizen, *Handling privacy preservation for binary classification data*, BSc thesis, Erasmus
School of Economics, 2020 (``seeds/004_2389f0caa551afc2.txt``), Section 3 "Data".

Simulated data (Section 3, p. 6--7)
-----------------------------------
* **Separable**: "10 variables and 10000 data points", "uniformly distributed from the unit 10
  dimensional hypersphere", a separator through the origin "along with a band margin of 0.03. A
  generated point is only added to the simulated data set if it falls outside of this margin."
  :func:`make_thesis_separable` is :func:`dplr.data.make_separable` (points uniform on the sphere,
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
Wisconsin Diagnostic Breast Cancer (WDBC; UCI id 17; Wolberg, Mangasarian, Street & Street,
CC BY 4.0): 569 fine-needle aspirates, 357 benign and 212 malignant, 30 features. The thesis uses
"5 variables and 565 data points" and names "the area and the perimeter"; we take the first five
"mean" measurements (radius, texture, perimeter, area, smoothness), as the issue specifies.

**569 → 565.** The thesis' cross-validation "shuffles the complete data set and splits it up into
five equal parts" (Section 4.4; its helper ``Split 5`` "splits up the input data set in five equal
parts"). 569 = 5 × 113 + 4 is not divisible by five; 565 = 5 × 113 is the largest size that is, so
four records were dropped. Which four is not said; :func:`thesis_subset` drops the four that come
last after the seeded shuffle. (The simulated sets, 10,000 = 5 × 2,000, need no trimming.)

:func:`load_wdbc` reads the data with ``ucimlrepo`` (``fetch_ucirepo(id=17)``) when UCI is
reachable, and otherwise the copy that ships with scikit-learn (``load_breast_cancer``, the same
569 rows in the same order; its target codes 0 = malignant, 1 = benign). Both give the same arrays;
``tests/test_thesis.py`` checks the ucimlrepo path on a recorded response, without network.

Public bounds for a sound pipeline
----------------------------------
A differentially private model may only be trained on features scaled with constants that do not
come from the data. :data:`WDBC_PUBLIC_RANGES` declares a range for each feature from its definition
and two declared constants, and :func:`scale_wdbc_public` maps the features with them (see there).
"""
from __future__ import annotations

import socket
from dataclasses import dataclass

import numpy as np
from sklearn.svm import SVC

from dplr.data import make_separable, sample_unit_ball
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
    "WDBC_UCI_ID",
    "WDBC_UCI_COLUMNS",
    "WDBC_FEATURES",
    "WDBC",
    "wdbc_from_ucimlrepo",
    "wdbc_from_sklearn",
    "uci_reachable",
    "load_wdbc",
    "thesis_subset",
    "NORMALISATIONS",
    "DATA_DEPENDENT_NORMALISATIONS",
    "normalise",
    "PublicRange",
    "WDBC_PUBLIC_RANGES",
    "scale_wdbc_public",
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
        batch = sample_unit_ball(2 * n, 2, rng)
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


# --------------------------------------------------------------------------------------------------
# Wisconsin Diagnostic Breast Cancer
# --------------------------------------------------------------------------------------------------
WDBC_UCI_ID = 17
#: The first five "mean" measurements, as ucimlrepo names them (suffix 1 = mean, 2 = standard error, 3 = worst).
WDBC_UCI_COLUMNS = ("radius1", "texture1", "perimeter1", "area1", "smoothness1")
#: The same five in scikit-learn's copy: its columns 0--4.
WDBC_FEATURES = ("radius", "texture", "perimeter", "area", "smoothness")
_SKLEARN_COLUMNS = ("mean radius", "mean texture", "mean perimeter", "mean area", "mean smoothness")


@dataclass(frozen=True)
class WDBC:
    """The five WDBC features of the thesis, raw (unscaled), and the diagnosis."""

    X: np.ndarray  # (n, 5) radius, texture, perimeter, area, smoothness ("mean" values)
    malignant: np.ndarray  # bool, True for diagnosis "M"
    source: str  # "ucimlrepo" or "sklearn"

    feature_names: tuple = WDBC_FEATURES

    @property
    def n(self):
        return int(self.X.shape[0])


def wdbc_from_ucimlrepo(bundle) -> WDBC:
    """The five features and the diagnosis from a ``ucimlrepo.fetch_ucirepo(id=17)`` result."""
    metadata = bundle.metadata
    if metadata is not None and metadata.get("uci_id") not in (None, WDBC_UCI_ID):
        raise ValueError(f"expected UCI data set {WDBC_UCI_ID}, got {metadata.get('uci_id')!r}.")
    features, targets = bundle.data.features, bundle.data.targets
    missing = [c for c in WDBC_UCI_COLUMNS if c not in features.columns]
    if missing or targets is None or "Diagnosis" not in targets.columns:
        raise ValueError(f"the ucimlrepo response lacks the columns {missing or ['Diagnosis']}.")
    diagnosis = targets["Diagnosis"].astype(str).str.strip().to_numpy()
    if not np.isin(diagnosis, ["M", "B"]).all():
        raise ValueError(f"Diagnosis must be 'M' or 'B', found {sorted(set(diagnosis) - {'M', 'B'})}.")
    X = features[list(WDBC_UCI_COLUMNS)].to_numpy(dtype=float)
    return WDBC(X, diagnosis == "M", "ucimlrepo")


def wdbc_from_sklearn() -> WDBC:
    """The copy shipped with scikit-learn (offline). Its target codes 0 = malignant, 1 = benign."""
    from sklearn.datasets import load_breast_cancer

    bunch = load_breast_cancer()
    names = list(bunch.feature_names)
    columns = [names.index(c) for c in _SKLEARN_COLUMNS]
    malignant = np.asarray(bunch.target_names)[bunch.target] == "malignant"
    return WDBC(np.asarray(bunch.data[:, columns], dtype=float), malignant, "sklearn")


def uci_reachable(host="archive.ics.uci.edu", port=443, timeout=3.0) -> bool:
    """Whether a TCP connection to UCI opens within ``timeout`` seconds (ucimlrepo itself has no timeout)."""
    try:
        with socket.create_connection((host, port), timeout=timeout):
            return True
    except OSError:
        return False


def load_wdbc(source="auto") -> WDBC:
    """Load the thesis' five WDBC features and the diagnosis (569 records).

    ``source="ucimlrepo"``: ``ucimlrepo.fetch_ucirepo(id=17)`` (needs network). ``"sklearn"``: the
    copy in scikit-learn (offline; what the book and CI use). ``"auto"``: ucimlrepo when UCI answers
    within 3 s (:func:`uci_reachable`), scikit-learn otherwise. The two sources hold the same rows in
    the same order.
    """
    if source == "auto":
        source = "ucimlrepo" if uci_reachable() else "sklearn"
    if source == "sklearn":
        return wdbc_from_sklearn()
    if source == "ucimlrepo":
        import ucimlrepo  # only needed online

        return wdbc_from_ucimlrepo(ucimlrepo.fetch_ucirepo(id=WDBC_UCI_ID))
    raise ValueError(f"source must be 'auto', 'ucimlrepo' or 'sklearn', got {source!r}.")


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


@dataclass(frozen=True)
class PublicRange:
    """A declared range :math:`[\\text{low}, \\text{high}]` for one feature, and why."""

    feature: str
    low: float
    high: float
    reason: str


#: Two declared constants fix every range: nuclear radius between :math:`r_- = 1` and :math:`r_+ = 50`
#: image units, and 8-bit grey levels (0–255). They were not computed from the data. We had, however,
#: seen the data set's documented summary while writing this chapter, so they are not "blind"; a data
#: holder should fix such constants from the measurement protocol before collecting data. The privacy
#: guarantee holds for *any* fixed ranges (values outside are clipped record by record); only utility
#: depends on them, and the chapter measures how much by widening every range.
WDBC_PUBLIC_RANGES = (
    PublicRange("radius", 1.0, 50.0, "mean distance from the nucleus' centre to its contour: between r₋ = 1 and "
                                     "r₊ = 50 image units"),
    PublicRange("texture", 1.0, 127.5, "standard deviation of grey levels; for 8-bit levels in [0, 255] a standard "
                                       "deviation is at most 255/2 = 127.5 (below 1 means a flat image)"),
    PublicRange("perimeter", 2 * np.pi * 1.0, 4 * np.pi * 50.0, "at least the circumference 2πr₋ of the smallest "
                                                                "nucleus, at most twice that of the largest, 2·2πr₊, "
                                                                "for irregular contours"),
    PublicRange("area", np.pi * 1.0**2, np.pi * 50.0**2, "between the areas πr₋² and πr₊² of circles of the smallest "
                                                         "and largest radius"),
    PublicRange("smoothness", 1e-3, 1.0, "local variation of radius lengths relative to the radius: a fraction, "
                                         "taken in [0.001, 1]"),
)


def scale_wdbc_public(X, ranges=WDBC_PUBLIC_RANGES, scale="log", widen=1.0, intercept=True):
    r"""Map the five raw features into the unit ball with the declared :data:`WDBC_PUBLIC_RANGES` only.

    Each feature is clipped to its range :math:`[a/w, b\,w]` (``widen`` :math:`= w \ge 1` loosens every
    range, to measure what looser bounds cost) and mapped affinely onto :math:`[-1, 1]` -- on a
    logarithmic scale (``scale="log"``; radius, perimeter and area are sizes, so slack in a bound costs
    little) or a linear one (``"linear"``). With ``intercept=True`` a constant 1 is appended (a
    public feature standing in for the intercept, since both algorithms fit separators through the
    origin), and every row is divided by :math:`\sqrt{d'}`, :math:`d'` the number of columns, so
    :math:`\lVert x\rVert \le 1` holds by construction. Every step uses one record and public constants:
    the map leaks nothing.
    """
    X = np.asarray(X, dtype=float)
    if X.ndim != 2 or X.shape[1] != len(ranges):
        raise ValueError(f"X must have {len(ranges)} columns (one per range), got shape {X.shape}.")
    if widen < 1:
        raise ValueError(f"widen must be >= 1, got {widen!r}.")
    low = np.array([r.low for r in ranges]) / widen
    high = np.array([r.high for r in ranges]) * widen
    clipped = np.clip(X, low, high)
    if scale == "log":
        Z = 2 * (np.log(clipped) - np.log(low)) / (np.log(high) - np.log(low)) - 1
    elif scale == "linear":
        Z = 2 * (clipped - low) / (high - low) - 1
    else:
        raise ValueError(f"scale must be 'log' or 'linear', got {scale!r}.")
    if intercept:
        Z = np.hstack([Z, np.ones((Z.shape[0], 1))])
    return Z / np.sqrt(Z.shape[1])

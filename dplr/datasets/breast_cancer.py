r"""Wisconsin Diagnostic Breast Cancer (WDBC; UCI id 17): five features, the diagnosis, and public ranges.

Wolberg, Mangasarian, Street & Street, CC BY 4.0: 569 fine-needle aspirates, 357 benign and 212
malignant, 30 features. Veldhuizen (2020) uses "5 variables" and names "the area and the
perimeter"; :func:`load_wdbc` returns the first five "mean" measurements (radius, texture, perimeter,
area, smoothness) and the diagnosis.

:func:`load_wdbc` reads the data with ``ucimlrepo`` (``fetch_ucirepo(id=17)``) when UCI is
reachable, and otherwise the copy that ships with scikit-learn (``load_breast_cancer``, the same
569 rows in the same order; its target codes 0 = malignant, 1 = benign). Both give the same arrays;
the tests check the ucimlrepo path on a recorded response, without network.

Public bounds
-------------
A differentially private model may only be trained on features scaled with constants that do not
come from the data. :data:`WDBC_PUBLIC_RANGES` declares a range for each feature from its definition
and two declared constants, and :func:`scale_wdbc_public` maps the features with them (see there).
"""
from __future__ import annotations

import socket
from dataclasses import dataclass

import numpy as np

__all__ = [
    "WDBC_UCI_ID",
    "WDBC_UCI_COLUMNS",
    "WDBC_FEATURES",
    "WDBC",
    "wdbc_from_ucimlrepo",
    "wdbc_from_sklearn",
    "uci_reachable",
    "load_wdbc",
    "PublicRange",
    "WDBC_PUBLIC_RANGES",
    "scale_wdbc_public",
]

#: WDBC's id in the UCI Machine Learning Repository.
WDBC_UCI_ID = 17
#: The first five "mean" measurements, as ucimlrepo names them (suffix 1 = mean, 2 = standard error, 3 = worst).
WDBC_UCI_COLUMNS = ("radius1", "texture1", "perimeter1", "area1", "smoothness1")
#: The same five in scikit-learn's copy (its columns 0--4).
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
    from sklearn.datasets import load_breast_cancer  # imported here: scikit-learn's data module loads slowly

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
        import ucimlrepo  # imported here: an optional network client, only needed online

        return wdbc_from_ucimlrepo(ucimlrepo.fetch_ucirepo(id=WDBC_UCI_ID))
    raise ValueError(f"source must be 'auto', 'ucimlrepo' or 'sklearn', got {source!r}.")


@dataclass(frozen=True)
class PublicRange:
    """A declared range :math:`[\\text{low}, \\text{high}]` for one feature, and why."""

    feature: str
    low: float
    high: float
    reason: str


#: Two declared constants fix every range -- nuclear radius between :math:`r_- = 1` and :math:`r_+ = 50`
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

"""The data sets of the book: the paper's simulated data and the real data sets, with their loaders.

* :mod:`dplr.datasets.simulated` -- the simulated data of NIPS 2008, Section 6, with its unstated readings
* :mod:`dplr.datasets.adult`, :mod:`dplr.datasets.kddcup99` -- the UCI data sets of JMLR 2011, Section 6;
  :mod:`dplr.datasets.uci` -- their data folder, download and the preprocessing they share
* :mod:`dplr.datasets.breast_cancer` -- Wisconsin Diagnostic Breast Cancer (Veldhuizen 2020), with
  public feature ranges

The names of the UCI modules are available here too (``from dplr import datasets``;
``datasets.load_adult()``). Everything here builds on the core (:mod:`dplr`) and on nothing else.
"""
from dplr.datasets.adult import (
    ADULT_BOUNDS,
    ADULT_CATEGORIES,
    ADULT_COLUMNS,
    ADULT_UCI_ID,
    adult_features,
    load_adult,
    parse_adult,
    read_adult,
)
from dplr.datasets.kddcup99 import (
    KDDCUP99_BOUNDS,
    KDDCUP99_CATEGORIES,
    KDDCUP99_CODINGS,
    KDDCUP99_COLUMNS,
    KDDCUP99_N_ROWS,
    kddcup99_features,
    load_kddcup99,
    parse_kddcup99,
    read_kddcup99,
)
from dplr.datasets.uci import DATA_DIR_ENV, DatasetUnavailableError, RealDataset, data_home, majority_error

__all__ = [
    "DATA_DIR_ENV",
    "ADULT_UCI_ID",
    "ADULT_COLUMNS",
    "ADULT_CATEGORIES",
    "ADULT_BOUNDS",
    "KDDCUP99_N_ROWS",
    "KDDCUP99_COLUMNS",
    "KDDCUP99_CATEGORIES",
    "KDDCUP99_BOUNDS",
    "KDDCUP99_CODINGS",
    "DatasetUnavailableError",
    "RealDataset",
    "data_home",
    "parse_adult",
    "parse_kddcup99",
    "read_adult",
    "read_kddcup99",
    "adult_features",
    "kddcup99_features",
    "load_adult",
    "load_kddcup99",
    "majority_error",
]

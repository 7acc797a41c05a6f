r"""The UCI data sets of JMLR 2011 (Adult, KDDCup99): where their files live, and the steps they share.

Chaudhuri, Monteleoni & Sarwate (JMLR 12, 2011, Section 6) evaluate both private learners on two UCI
data sets, :mod:`dplr.datasets.adult` and :mod:`dplr.datasets.kddcup99`. This module holds what both
use: the data folder, the error raised when a file is missing, the preprocessed split
(:class:`RealDataset`) and the preprocessing steps of JMLR 2011 done without looking at other records.

Where the data come from
------------------------
:func:`data_home` names one folder, the *data folder*, looked up in this order: the ``data_dir``
argument, the environment variable ``DPLR_DATA_DIR`` (the Makefile sets it to ``../shared/datasets``
when that folder exists), then ``~/.cache/dplr`` (``$XDG_CACHE_HOME/dplr`` if set). Inside it the
loaders look for the layout of the UCI files::

    adult/adult.data.gz   adult/adult.test.gz            (plain adult.data / adult.test also work)
    kddcup99/kddcup.data_10_percent.gz                    (plain kddcup.data_10_percent also works)

When a file is missing and ``download=True``, Adult is fetched with ``ucimlrepo`` (UCI id 2) and
written into that layout, and KDDCup99 is fetched with ``sklearn.datasets.fetch_kddcup99``,
which keeps its own cache under ``<data folder>/scikit_learn_data``. Without network and without
the files, the loaders raise :class:`DatasetUnavailableError`, whose message says where to put
which file. The data are never part of the repository.

Preprocessing and privacy
-------------------------
JMLR 2011 one-hot codes the categorical attributes, scales every column to maximum 1 and every row
to norm at most 1. Two of those steps can leak information if they look at the data:

* **Categories** (:func:`one_hot`). The category lists are constants, taken from the data
  dictionaries, not learned from the rows. A missing value becomes an all-zero block; a value outside
  the list raises.
* **Column scales** (:func:`scale_columns`). Dividing by the column maximum *of the data* makes every
  record's features depend on the largest value of the others: a data-dependent step the privacy
  guarantee does not cover. Each numeric column is instead divided by a fixed bound, each with its
  basis: a definition (rates and indicators lie in [0, 1]), a top code, a cap of a feature extractor
  (seen in the file, not documented), or -- where no public bound exists -- the largest value in the
  published file, fixed as a constant and flagged as ``"published-file maximum"`` (honest about its
  origin: it came from the data, once, and is the same for every run). Values above a bound are
  clipped to it, record by record. ``bounds="data"`` reproduces the column-maximum scaling of the
  paper and warns with :class:`~dplr.validation.PrivacyLeakWarning`.
* **Row norms.** Each row is projected onto the unit ball on its own
  (:func:`dplr.preprocessing.clip_to_unit_ball`); no scale is shared between records.
"""
from __future__ import annotations

import gzip
import io
import os
import zlib
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

from dplr.validation import warn_privacy_leak

__all__ = [
    "DATA_DIR_ENV",
    "DatasetUnavailableError",
    "DataFileError",
    "read_data_file",
    "RealDataset",
    "data_home",
    "find_file",
    "open_text",
    "one_hot",
    "scale_columns",
    "signed_labels",
    "majority_error",
]

#: The environment variable naming the data folder (:func:`data_home`).
DATA_DIR_ENV = "DPLR_DATA_DIR"


class DatasetUnavailableError(RuntimeError):
    """The data set is neither in the data folder nor downloadable; the message says how to provide it."""


class DataFileError(DatasetUnavailableError, ValueError):
    """A data file is empty, truncated or corrupt; the message names it and says how to fetch it again."""


def read_data_file(path, parse, help_text):
    """``parse(path)``, refusing an empty (0-byte), truncated or corrupt file -- or one with no records.

    Every failure raises :class:`DataFileError` naming the file and how to replace it: delete it and load
    again (the loader downloads a missing file when ``download=True``), or follow ``help_text``.
    """
    path = Path(path)
    fix = (f"Fix: delete {path} and load again with download=True (a missing file is downloaded), or replace it "
           f"by hand. {help_text}")
    if path.stat().st_size == 0:
        raise DataFileError(f"The data file {path} is empty (0 bytes): an interrupted download? {fix}")
    try:
        frame = parse(path)
    except (EOFError, OSError, zlib.error, UnicodeDecodeError, ValueError) as err:
        raise DataFileError(f"The data file {path} could not be read, it is truncated or corrupt "
                            f"({type(err).__name__}: {err}). {fix}") from err
    if len(frame) == 0:
        raise DataFileError(f"The data file {path} holds no records. {fix}")
    return frame


@dataclass(frozen=True)
class RealDataset:
    """A preprocessed train/test split: rows in the unit ball, labels in {-1, +1}.

    ``bounds`` is the table of column bounds that was used (a DataFrame with the columns
    ``bound`` and ``basis``); ``positive`` names the class coded +1.
    """

    name: str
    X_train: np.ndarray
    y_train: np.ndarray
    X_test: np.ndarray
    y_test: np.ndarray
    feature_names: tuple
    positive: str
    bounds: pd.DataFrame

    @property
    def n_features(self) -> int:
        return self.X_train.shape[1]


# ---------------------------------------------------------------------------------------------
# The data folder
# ---------------------------------------------------------------------------------------------

def data_home(path=None) -> Path:
    """The data folder: ``path`` if given, else ``$DPLR_DATA_DIR``, else ``~/.cache/dplr``.

    ``$XDG_CACHE_HOME/dplr`` replaces ``~/.cache/dplr`` when ``XDG_CACHE_HOME`` is set. The folder
    is not created here (a read-only shared folder is fine as long as it holds the files).
    """
    if path is not None:
        return Path(path).expanduser()
    env = os.environ.get(DATA_DIR_ENV, "").strip()
    if env:
        return Path(env).expanduser()
    cache_home = os.environ.get("XDG_CACHE_HOME", "").strip()
    return (Path(cache_home) if cache_home else Path.home() / ".cache") / "dplr"


def find_file(folder: Path, name: str):
    """``folder/name.gz`` or ``folder/name``, whichever exists first, else ``None``."""
    for candidate in (folder / f"{name}.gz", folder / name):
        if candidate.is_file():
            return candidate
    return None


def open_text(source):
    """A text stream for a path (gzip by suffix), bytes, or an already open stream."""
    if isinstance(source, (str, os.PathLike)):
        path = Path(source)
        if path.suffix == ".gz":
            return gzip.open(path, "rt", encoding="ascii", newline="")
        return open(path, encoding="ascii", newline="")
    if isinstance(source, bytes):
        return io.StringIO(source.decode("ascii"))
    return source


# ---------------------------------------------------------------------------------------------
# Features: one-hot, column bounds, labels
# ---------------------------------------------------------------------------------------------

def one_hot(frame, categories, missing):
    """One-hot blocks of the categorical ``columns`` of ``frame`` with fixed ``categories`` ({column: levels}).

    Returns ``(blocks, names)``; a value in ``missing`` gives an all-zero row, any other unknown value raises.
    """
    blocks, names = [], []
    for column, levels in categories.items():
        values = frame[column].astype(str).to_numpy()
        codes = pd.Index(levels).get_indexer(values)  # -1 where the value is not a listed category
        unknown = np.flatnonzero((codes < 0) & ~np.isin(values, list(missing)))
        if unknown.size:
            odd = sorted(set(values[unknown]))
            raise ValueError(
                f"Column {column!r} has {unknown.size} values outside its documented categories, e.g. {odd[:5]}. "
                f"The category lists are fixed (not learned from the data); extend the list explicitly if the data "
                f"really use new categories."
            )
        block = np.zeros((len(values), len(levels)))
        seen = codes >= 0
        block[np.flatnonzero(seen), codes[seen]] = 1.0
        blocks.append(block)
        names.extend(f"{column}={level}" for level in levels)
    return blocks, names


def scale_columns(frame, bounds_table, bounds):
    """Numeric columns divided by their bounds ({column: (bound, basis)}), values above clipped: ``(values, table)``.

    ``bounds="public"`` uses ``bounds_table``; ``bounds="data"`` the column maxima of this data (warns:
    a privacy leak). ``table`` lists the bound and basis used per column.
    """
    columns = list(bounds_table)
    values = frame[columns].to_numpy(dtype=float)
    if not np.all(np.isfinite(values)):
        raise ValueError("The numeric columns contain NaN or infinite values; the UCI files have none -- is the file "
                         "corrupted?")
    if np.any(values < 0):
        j = int(np.flatnonzero((values < 0).any(axis=0))[0])
        raise ValueError(f"Column {columns[j]!r} has negative values; its bound assumes values >= 0.")
    if bounds == "public":
        limit = np.array([bounds_table[c][0] for c in columns])
        basis = [bounds_table[c][1] for c in columns]
    elif bounds == "data":
        warn_privacy_leak(
            "bounds='data' divides each column by its maximum in this data: every record's features then depend on "
            "the other records, and a model trained on them is not ε-DP for the original records. Use "
            "bounds='public' (the documented bounds) for private training."
        )
        limit = values.max(axis=0, initial=0.0)
        limit[limit == 0] = 1.0
        basis = ["maximum of this data (leaks privacy)"] * len(columns)
    else:
        raise ValueError(f"bounds must be 'public' or 'data', got {bounds!r}.")
    table = pd.DataFrame({"bound": limit, "basis": basis}, index=pd.Index(columns, name="column"))
    return np.minimum(values, limit) / limit, table


def signed_labels(values, positive):
    """+1 where ``values == positive``, else -1."""
    return np.where(np.asarray(values) == positive, 1.0, -1.0)


def majority_error(y_train, y_test) -> float:
    """Test error of always predicting the training majority class (the "chance" line of the talk)."""
    y_train, y_test = np.asarray(y_train), np.asarray(y_test)
    majority = 1.0 if np.sum(y_train > 0) > np.sum(y_train < 0) else -1.0
    return float(np.mean(y_test != majority))

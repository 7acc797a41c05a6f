r"""UCI Adult (id 2): 48,842 people; predict whether income exceeds $50K (JMLR 2011, Section 6).

After one-hot coding of the categorical attributes: 105 dimensions. The category lists are those of
``adult.names`` (the UCI data dictionary); the numeric columns are divided by the public bounds of
:data:`ADULT_BOUNDS`, each with its basis (:mod:`dplr.datasets.uci` explains the rules). Files, cache
and download: :mod:`dplr.datasets.uci`.
"""
from __future__ import annotations

import gzip
from pathlib import Path

import numpy as np
import pandas as pd

from dplr.datasets import uci
from dplr.preprocessing import clip_to_unit_ball

__all__ = [
    "ADULT_UCI_ID",
    "ADULT_COLUMNS",
    "ADULT_CATEGORIES",
    "ADULT_BOUNDS",
    "parse_adult",
    "read_adult",
    "adult_features",
    "load_adult",
]

#: Adult's id in the UCI Machine Learning Repository.
ADULT_UCI_ID = 2
ADULT_N_TRAIN, ADULT_N_TEST = 32_561, 16_281

#: The 14 feature columns of ``adult.data``, in file order (the label ``income`` follows them).
ADULT_COLUMNS = (
    "age", "workclass", "fnlwgt", "education", "education-num", "marital-status", "occupation",
    "relationship", "race", "sex", "capital-gain", "capital-loss", "hours-per-week", "native-country",
)
ADULT_LABEL = "income"

#: Category lists of ``adult.names`` (UCI data dictionary), in its order. 99 one-hot columns.
ADULT_CATEGORIES = {
    "workclass": ("Private", "Self-emp-not-inc", "Self-emp-inc", "Federal-gov", "Local-gov", "State-gov",
                  "Without-pay", "Never-worked"),
    "education": ("Bachelors", "Some-college", "11th", "HS-grad", "Prof-school", "Assoc-acdm", "Assoc-voc", "9th",
                  "7th-8th", "12th", "Masters", "1st-4th", "10th", "Doctorate", "5th-6th", "Preschool"),
    "marital-status": ("Married-civ-spouse", "Divorced", "Never-married", "Separated", "Widowed",
                       "Married-spouse-absent", "Married-AF-spouse"),
    "occupation": ("Tech-support", "Craft-repair", "Other-service", "Sales", "Exec-managerial", "Prof-specialty",
                   "Handlers-cleaners", "Machine-op-inspct", "Adm-clerical", "Farming-fishing", "Transport-moving",
                   "Priv-house-serv", "Protective-serv", "Armed-Forces"),
    "relationship": ("Wife", "Own-child", "Husband", "Not-in-family", "Other-relative", "Unmarried"),
    "race": ("White", "Asian-Pac-Islander", "Amer-Indian-Eskimo", "Other", "Black"),
    "sex": ("Female", "Male"),
    "native-country": ("United-States", "Cambodia", "England", "Puerto-Rico", "Canada", "Germany",
                       "Outlying-US(Guam-USVI-etc)", "India", "Japan", "Greece", "South", "China", "Cuba", "Iran",
                       "Honduras", "Philippines", "Italy", "Poland", "Jamaica", "Vietnam", "Mexico", "Portugal",
                       "Ireland", "France", "Dominican-Republic", "Laos", "Ecuador", "Taiwan", "Haiti", "Columbia",
                       "Hungary", "Guatemala", "Nicaragua", "Scotland", "Thailand", "Yugoslavia", "El-Salvador",
                       "Trinadad&Tobago", "Peru", "Hong", "Holand-Netherlands"),
}

#: Bound and basis for each numeric Adult column (6 columns).
ADULT_BOUNDS = {
    "age": (90.0, "top code: the census public-use data record ages above 90 as 90"),
    "fnlwgt": (1_490_400.0, "published-file maximum: a sampling weight has no documented bound"),
    "education-num": (16.0, "data dictionary: 16 education levels, coded 1..16"),
    "capital-gain": (99_999.0, "top code: the census public-use data cap capital gains at 99,999"),
    "capital-loss": (4_356.0, "published-file maximum: no documented top code"),
    "hours-per-week": (99.0, "top code: hours worked are recorded in two digits, at most 99"),
}

_ADULT_HELP = (
    "Provide the data: download adult.data and adult.test from https://archive.ics.uci.edu/dataset/2/adult "
    "and put them (gzip-compressed or not) in {folder}/adult/, or set the environment variable "
    f"{uci.DATA_DIR_ENV} to a folder that holds adult/adult.data.gz and adult/adult.test.gz."
)

def parse_adult(source) -> pd.DataFrame:
    """Parse one UCI Adult file (``adult.data`` or ``adult.test`` format) into a DataFrame.

    Lines are comma-separated with a space after each comma and no header; ``adult.test`` labels
    end with a period (``>50K.``) and its original first line is a comment (``|1x3 Cross
    validator``): both are handled. Blank lines are skipped. Returns the 14 attributes of
    :data:`ADULT_COLUMNS` (numbers as float, categories as str, ``?`` kept) and ``income`` in
    ``{"<=50K", ">50K"}``. Raises ``ValueError`` naming the first malformed line.
    """
    numeric = [c for c in ADULT_COLUMNS if c in ADULT_BOUNDS]
    rows = []
    stream = uci.open_text(source)
    try:
        for number, line in enumerate(stream, start=1):
            line = line.strip()
            if not line or line.startswith("|"):
                continue
            fields = [field.strip() for field in line.split(",")]
            if len(fields) != len(ADULT_COLUMNS) + 1:
                raise ValueError(
                    f"Adult line {number} has {len(fields)} fields, expected {len(ADULT_COLUMNS) + 1} "
                    f"(14 attributes and the income label): {line[:80]!r}. Is this the UCI adult.data/adult.test file?"
                )
            label = fields[-1].rstrip(".")
            if label not in ("<=50K", ">50K"):
                raise ValueError(f"Adult line {number}: income label {fields[-1]!r} is neither '<=50K' nor '>50K'.")
            fields[-1] = label
            rows.append(fields)
    finally:
        if stream is not source:
            stream.close()
    frame = pd.DataFrame(rows, columns=[*ADULT_COLUMNS, ADULT_LABEL])
    for column in numeric:
        try:
            frame[column] = frame[column].astype(float)
        except ValueError as err:
            raise ValueError(f"Adult column {column!r} holds a non-numeric value ({err}).") from err
    return frame


def _adult_from_ucimlrepo(folder: Path) -> None:
    """Download Adult with ucimlrepo and write it to ``folder/adult/adult.{data,test}.gz``.

    ucimlrepo serves the 48,842 rows of both files in one table; the test rows are the ones whose
    label ends with a period (``>50K.``), as in ``adult.test``. Missing values arrive as NaN or ``?``.
    """
    import ucimlrepo  # imported here: an optional network client, so that offline use never needs it

    bundle = ucimlrepo.fetch_ucirepo(id=ADULT_UCI_ID)
    features = bundle.data.features
    targets = bundle.data.targets
    missing = [c for c in ADULT_COLUMNS if c not in features.columns]
    if missing or ADULT_LABEL not in targets.columns:
        raise ValueError(f"The ucimlrepo response for Adult lacks the columns {missing or [ADULT_LABEL]}.")
    table = features[list(ADULT_COLUMNS)].astype(object).where(features[list(ADULT_COLUMNS)].notna(), "?")
    labels = targets[ADULT_LABEL].astype(str).str.strip()
    is_test = labels.str.endswith(".").to_numpy()
    lines = [", ".join(str(v).strip() for v in row) for row in table.itertuples(index=False)]
    lines = [f"{line}, {label}" for line, label in zip(lines, labels)]
    target = folder / "adult"
    target.mkdir(parents=True, exist_ok=True)
    for name, keep in (("adult.data", ~is_test), ("adult.test", is_test)):
        tmp = target / f".{name}.gz.partial"
        with gzip.open(tmp, "wt", encoding="ascii", newline="") as out:
            out.writelines(line + "\n" for line, k in zip(lines, keep) if k)
        tmp.replace(target / f"{name}.gz")


def read_adult(data_dir=None, download=True) -> pd.DataFrame:
    """All 48,842 Adult records: :func:`parse_adult` of both files, with a column ``split`` (train/test).

    Looks for ``adult/adult.data[.gz]`` and ``adult/adult.test[.gz]`` in the data folder
    (:func:`~dplr.datasets.uci.data_home`); if they are missing and ``download`` is true, fetches them with ucimlrepo and
    caches them there. Raises :class:`~dplr.datasets.uci.DatasetUnavailableError` otherwise, and :class:`~dplr.datasets.uci.DataFileError`
    (naming the file and how to fetch it again) for an empty, truncated or corrupt file.
    """
    folder = uci.data_home(data_dir)
    paths = [uci.find_file(folder / "adult", name) for name in ("adult.data", "adult.test")]
    if None in paths:
        if not download:
            raise uci.DatasetUnavailableError(
                f"Adult is not in the data folder {folder} (download=False). " + _ADULT_HELP.format(folder=folder))
        try:
            _adult_from_ucimlrepo(folder)
        except Exception as err:  # network, server or file-system failure: say how to provide the data
            raise uci.DatasetUnavailableError(
                f"Adult is not in the data folder {folder}, and downloading it with ucimlrepo failed "
                f"({type(err).__name__}: {err}). " + _ADULT_HELP.format(folder=folder)) from err
        paths = [uci.find_file(folder / "adult", name) for name in ("adult.data", "adult.test")]
    help_text = _ADULT_HELP.format(folder=folder)
    train, test = (uci.read_data_file(path, parse_adult, help_text) for path in paths)
    return pd.concat([train.assign(split="train"), test.assign(split="test")], ignore_index=True)


def adult_features(frame: pd.DataFrame, bounds="public"):
    """JMLR 2011 features of Adult: ``(X, y, feature_names, bounds_table)``, 105 columns.

    6 numeric columns divided by their bounds (:data:`ADULT_BOUNDS`, values above clipped), then the
    99 one-hot columns of :data:`ADULT_CATEGORIES` (``?`` gives an all-zero block); each row is then
    projected onto the unit ball. ``y`` is +1 for income ``>50K``, -1 otherwise.
    """
    numeric, table = uci.scale_columns(frame, ADULT_BOUNDS, bounds)
    blocks, names = uci.one_hot(frame, ADULT_CATEGORIES, missing={"?"})
    X = clip_to_unit_ball(np.hstack([numeric, *blocks]))
    return X, uci.signed_labels(frame[ADULT_LABEL], ">50K"), (*ADULT_BOUNDS, *names), table


def load_adult(data_dir=None, download=True, bounds="public") -> uci.RealDataset:
    """Adult with the UCI train/test split (32,561 / 16,281 people), preprocessed by :func:`adult_features`."""
    frame = read_adult(data_dir, download)
    X, y, names, table = adult_features(frame, bounds)
    train = (frame["split"] == "train").to_numpy()
    return uci.RealDataset("Adult", X[train], y[train], X[~train], y[~train], names, ">50K", table)

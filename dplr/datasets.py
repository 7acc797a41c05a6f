r"""UCI Adult and KDDCup99: loaders with a local cache, and the preprocessing of JMLR 2011, Section 6.

Chaudhuri, Monteleoni & Sarwate (JMLR 12, 2011, Section 6) and their talk "Privacy-Preserving
Classification" evaluate both private learners on two UCI data sets:

* **Adult** (UCI id 2, 48,842 people): predict whether income exceeds $50K. After one-hot coding
  of the categorical attributes: 105 dimensions.
* **KDDCup99** (the 10 % subset, 494,021 connections): predict whether a network connection is
  malicious (any attack) or normal, on a random subsample of about 50,000 connections. The papers
  report 119 dimensions after preprocessing; the coding below gives 118 (see
  :func:`kddcup99_features`).

Where the data come from
------------------------
:func:`data_home` names one folder, the *data folder*, looked up in this order: the ``data_dir``
argument, the environment variable ``DPLR_DATA_DIR`` (the Makefile sets it to ``../shared/datasets``
when that folder exists), then ``~/.cache/dplr`` (``$XDG_CACHE_HOME/dplr`` if set). Inside it the
loaders look for the layout of the UCI files::

    adult/adult.data.gz   adult/adult.test.gz            (plain adult.data / adult.test also work)
    kddcup99/kddcup.data_10_percent.gz                    (plain kddcup.data_10_percent also works)

When a file is missing and ``download=True``, Adult is fetched with ``ucimlrepo`` (UCI id 2) and
written into that layout, and KDDCup99 is fetched with :func:`sklearn.datasets.fetch_kddcup99`,
which keeps its own cache under ``<data folder>/scikit_learn_data``. Without network and without
the files, the loaders raise :class:`DatasetUnavailableError`, whose message says where to put
which file. The data are never part of the repository.

Preprocessing and privacy
-------------------------
JMLR 2011 one-hot codes the categorical attributes, scales every column to maximum 1 and every row
to norm at most 1. Two of those steps can leak information if they look at the data:

* **Categories.** The category lists are constants here, taken from the data dictionaries
  (``adult.names``; the service, protocol and flag names of KDDCup99), not learned from the rows.
  Adult's missing values (``?``) become an all-zero block; a value outside the list raises.
* **Column scales.** Dividing by the column maximum *of the data* makes every record's features
  depend on the largest value of the others: a data-dependent step the privacy guarantee does not
  cover. Each numeric column is instead divided by a fixed bound from :data:`ADULT_BOUNDS` /
  :data:`KDDCUP99_BOUNDS`, each with its basis: a definition (rates and indicators lie in [0, 1]), a
  top code of the census file, a cap of the KDDCup99 feature extractor (seen in the file, not
  documented), or -- where no public bound exists -- the largest value
  in the published file, which we fix as a constant and flag as ``"published-file maximum"``
  (honest about its origin: it came from the data, once, and is the same for every run). Values
  above a bound are clipped to it, record by record. ``bounds="data"`` reproduces the
  column-maximum scaling of the paper and warns with :class:`~dplr.validation.PrivacyLeakWarning`.
* **Row norms.** Each row is projected onto the unit ball on its own
  (:func:`dplr.preprocessing.clip_to_unit_ball`); no scale is shared between records.
"""
from __future__ import annotations

import gzip
import io
import os
import warnings
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

from dplr.preprocessing import clip_to_unit_ball
from dplr.validation import check_random_state, warn_privacy_leak

__all__ = [
    "DATA_DIR_ENV",
    "ADULT_COLUMNS",
    "ADULT_CATEGORIES",
    "ADULT_BOUNDS",
    "KDDCUP99_COLUMNS",
    "KDDCUP99_CATEGORIES",
    "KDDCUP99_BOUNDS",
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

DATA_DIR_ENV = "DPLR_DATA_DIR"

ADULT_UCI_ID = 2
ADULT_N_TRAIN, ADULT_N_TEST = 32_561, 16_281
KDDCUP99_N_ROWS = 494_021

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

KDDCUP99_COLUMNS = (
    "duration", "protocol_type", "service", "flag", "src_bytes", "dst_bytes", "land", "wrong_fragment", "urgent",
    "hot", "num_failed_logins", "logged_in", "num_compromised", "root_shell", "su_attempted", "num_root",
    "num_file_creations", "num_shells", "num_access_files", "num_outbound_cmds", "is_host_login", "is_guest_login",
    "count", "srv_count", "serror_rate", "srv_serror_rate", "rerror_rate", "srv_rerror_rate", "same_srv_rate",
    "diff_srv_rate", "srv_diff_host_rate", "dst_host_count", "dst_host_srv_count", "dst_host_same_srv_rate",
    "dst_host_diff_srv_rate", "dst_host_same_src_port_rate", "dst_host_srv_diff_host_rate", "dst_host_serror_rate",
    "dst_host_srv_serror_rate", "dst_host_rerror_rate", "dst_host_srv_rerror_rate",
)
KDDCUP99_LABEL = "label"
KDDCUP99_NORMAL = "normal"

#: Names of the three symbolic KDDCup99 attributes (network protocols, services and connection
#: states of the DARPA 1998 simulation), as they occur in the 10 % file. 80 one-hot columns.
KDDCUP99_CATEGORIES = {
    "protocol_type": ("icmp", "tcp", "udp"),
    "service": (
        "IRC", "X11", "Z39_50", "auth", "bgp", "courier", "csnet_ns", "ctf", "daytime", "discard", "domain",
        "domain_u", "echo", "eco_i", "ecr_i", "efs", "exec", "finger", "ftp", "ftp_data", "gopher", "hostnames",
        "http", "http_443", "imap4", "iso_tsap", "klogin", "kshell", "ldap", "link", "login", "mtp", "name",
        "netbios_dgm", "netbios_ns", "netbios_ssn", "netstat", "nnsp", "nntp", "ntp_u", "other", "pm_dump", "pop_2",
        "pop_3", "printer", "private", "red_i", "remote_job", "rje", "shell", "smtp", "sql_net", "ssh", "sunrpc",
        "supdup", "systat", "telnet", "tftp_u", "tim_i", "time", "urh_i", "urp_i", "uucp", "uucp_path", "vmnet",
        "whois",
    ),
    "flag": ("OTH", "REJ", "RSTO", "RSTOS0", "RSTR", "S0", "S1", "S2", "S3", "SF", "SH"),
}

_RATE = "definition: a fraction of connections, in [0, 1]"
_INDICATOR = "definition: an indicator, 0 or 1"
_FILE_MAX = "published-file maximum: no documented bound"
_COUNT_CAP = "cap of the feature extractor: the two-second counts stop at 511 (seen in the published file, not documented)"
_HOST_CAP = "cap of the feature extractor: the host counts stop at 255 (seen in the published file, not documented)"
#: Bound and basis for each numeric KDDCup99 column (38 columns).
KDDCUP99_BOUNDS = {
    "duration": (58_329.0, _FILE_MAX),
    "src_bytes": (693_375_640.0, _FILE_MAX),
    "dst_bytes": (5_155_468.0, _FILE_MAX),
    "land": (1.0, _INDICATOR),
    "wrong_fragment": (3.0, _FILE_MAX),
    "urgent": (3.0, _FILE_MAX),
    "hot": (30.0, _FILE_MAX),
    "num_failed_logins": (5.0, _FILE_MAX),
    "logged_in": (1.0, _INDICATOR),
    "num_compromised": (884.0, _FILE_MAX),
    "root_shell": (1.0, _INDICATOR),
    "su_attempted": (2.0, _FILE_MAX),
    "num_root": (993.0, _FILE_MAX),
    "num_file_creations": (28.0, _FILE_MAX),
    "num_shells": (2.0, _FILE_MAX),
    "num_access_files": (8.0, _FILE_MAX),
    "num_outbound_cmds": (1.0, "constant 0 in the published file; any positive bound, 1 chosen"),
    "is_host_login": (1.0, _INDICATOR),
    "is_guest_login": (1.0, _INDICATOR),
    "count": (511.0, _COUNT_CAP),
    "srv_count": (511.0, _COUNT_CAP),
    "serror_rate": (1.0, _RATE),
    "srv_serror_rate": (1.0, _RATE),
    "rerror_rate": (1.0, _RATE),
    "srv_rerror_rate": (1.0, _RATE),
    "same_srv_rate": (1.0, _RATE),
    "diff_srv_rate": (1.0, _RATE),
    "srv_diff_host_rate": (1.0, _RATE),
    "dst_host_count": (255.0, _HOST_CAP),
    "dst_host_srv_count": (255.0, _HOST_CAP),
    "dst_host_same_srv_rate": (1.0, _RATE),
    "dst_host_diff_srv_rate": (1.0, _RATE),
    "dst_host_same_src_port_rate": (1.0, _RATE),
    "dst_host_srv_diff_host_rate": (1.0, _RATE),
    "dst_host_serror_rate": (1.0, _RATE),
    "dst_host_srv_serror_rate": (1.0, _RATE),
    "dst_host_rerror_rate": (1.0, _RATE),
    "dst_host_srv_rerror_rate": (1.0, _RATE),
}

_ADULT_HELP = (
    "Provide the data: download adult.data and adult.test from https://archive.ics.uci.edu/dataset/2/adult "
    "and put them (gzip-compressed or not) in {folder}/adult/, or set the environment variable "
    f"{DATA_DIR_ENV} to a folder that holds adult/adult.data.gz and adult/adult.test.gz."
)
_KDD_HELP = (
    "Provide the data: download kddcup.data_10_percent.gz from https://archive.ics.uci.edu/dataset/130/"
    "kdd+cup+1999+data and put it in {folder}/kddcup99/, or set the environment variable "
    f"{DATA_DIR_ENV} to a folder that holds kddcup99/kddcup.data_10_percent.gz."
)


class DatasetUnavailableError(RuntimeError):
    """The data set is neither in the data folder nor downloadable; the message says how to provide it."""


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


def _find(folder: Path, name: str):
    for candidate in (folder / f"{name}.gz", folder / name):
        if candidate.is_file():
            return candidate
    return None


def _open_text(source):
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
# Adult
# ---------------------------------------------------------------------------------------------

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
    stream = _open_text(source)
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
    import ucimlrepo  # imported here so that offline use never needs it

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
    (:func:`data_home`); if they are missing and ``download`` is true, fetches them with ucimlrepo and
    caches them there. Raises :class:`DatasetUnavailableError` otherwise.
    """
    folder = data_home(data_dir)
    paths = [_find(folder / "adult", name) for name in ("adult.data", "adult.test")]
    if None in paths:
        if not download:
            raise DatasetUnavailableError(
                f"Adult is not in the data folder {folder} (download=False). " + _ADULT_HELP.format(folder=folder))
        try:
            _adult_from_ucimlrepo(folder)
        except Exception as err:  # network, server or file-system failure: say how to provide the data
            raise DatasetUnavailableError(
                f"Adult is not in the data folder {folder}, and downloading it with ucimlrepo failed "
                f"({type(err).__name__}: {err}). " + _ADULT_HELP.format(folder=folder)) from err
        paths = [_find(folder / "adult", name) for name in ("adult.data", "adult.test")]
    train, test = (parse_adult(path) for path in paths)
    return pd.concat([train.assign(split="train"), test.assign(split="test")], ignore_index=True)


# ---------------------------------------------------------------------------------------------
# KDDCup99
# ---------------------------------------------------------------------------------------------

def _kdd_frame(columns, labels) -> pd.DataFrame:
    frame = pd.DataFrame(dict(zip(KDDCUP99_COLUMNS, columns)))
    for column in KDDCUP99_COLUMNS:
        if column not in KDDCUP99_CATEGORIES:
            try:
                frame[column] = pd.to_numeric(frame[column], errors="raise").astype(float)
            except (ValueError, TypeError) as err:
                raise ValueError(f"KDDCup99 column {column!r} holds a non-numeric value ({err}).") from err
    frame[KDDCUP99_LABEL] = pd.Series(labels, dtype=object).astype(str).str.strip().str.rstrip(".").to_numpy()
    return frame


def parse_kddcup99(source) -> pd.DataFrame:
    """Parse the KDDCup99 file format (41 comma-separated attributes and a label such as ``normal.``).

    Returns the columns of :data:`KDDCUP99_COLUMNS` (numbers as float) and ``label`` without the
    trailing period (``normal``, ``smurf``, ...). Raises ``ValueError`` for a malformed line.
    """
    names = [*KDDCUP99_COLUMNS, KDDCUP99_LABEL]
    text_columns = {name: str for name in (*KDDCUP99_CATEGORIES, KDDCUP99_LABEL)}
    stream = _open_text(source)
    try:
        with warnings.catch_warnings():
            # pandas only warns when the first line has more fields than names (it would drop them)
            warnings.simplefilter("error", pd.errors.ParserWarning)
            table = pd.read_csv(stream, header=None, names=names, dtype=text_columns, skip_blank_lines=True,
                                na_filter=False, index_col=False, engine="c")
    except (pd.errors.ParserError, pd.errors.ParserWarning, ValueError) as err:
        raise ValueError(f"Malformed KDDCup99 file: {err}. Each line needs 41 attributes and a label.") from err
    finally:
        if stream is not source:
            stream.close()
    short = np.flatnonzero((table[KDDCUP99_LABEL] == "").to_numpy())
    if short.size:
        raise ValueError(f"KDDCup99 data row {short[0] + 1} has fewer than 42 fields (41 attributes and the label).")
    return _kdd_frame([table[c].to_numpy() for c in KDDCUP99_COLUMNS], table[KDDCUP99_LABEL].to_numpy())


def _decode(values):
    return np.array([v.decode("ascii") if isinstance(v, bytes) else str(v) for v in values], dtype=object)


def read_kddcup99(data_dir=None, download=True) -> pd.DataFrame:
    """The 494,021 connections of the KDDCup99 10 % file, parsed by :func:`parse_kddcup99`.

    Looks for ``kddcup99/kddcup.data_10_percent[.gz]`` in the data folder; otherwise calls
    :func:`sklearn.datasets.fetch_kddcup99` (``percent10=True``) with its cache in
    ``<data folder>/scikit_learn_data``, downloading only if ``download`` is true. Raises
    :class:`DatasetUnavailableError` when neither works.
    """
    folder = data_home(data_dir)
    path = _find(folder / "kddcup99", "kddcup.data_10_percent")
    if path is not None:
        return parse_kddcup99(path)
    from sklearn import datasets as sk_datasets

    try:
        bunch = sk_datasets.fetch_kddcup99(percent10=True, data_home=str(folder / "scikit_learn_data"),
                                           download_if_missing=bool(download))
    except Exception as err:  # not cached and no download (network or permission failure)
        how = "download=False" if not download else f"downloading it failed ({type(err).__name__}: {err})"
        raise DatasetUnavailableError(
            f"KDDCup99 is not in the data folder {folder} and {how}. " + _KDD_HELP.format(folder=folder)) from err
    data = np.asarray(bunch.data, dtype=object)
    if data.ndim != 2 or data.shape[1] != len(KDDCUP99_COLUMNS):
        raise ValueError(f"fetch_kddcup99 returned data of shape {data.shape}, expected (n, 41).")
    columns = [_decode(data[:, j]) if name in KDDCUP99_CATEGORIES else data[:, j]
               for j, name in enumerate(KDDCUP99_COLUMNS)]
    return _kdd_frame(columns, _decode(np.asarray(bunch.target, dtype=object)))


# ---------------------------------------------------------------------------------------------
# Features: one-hot, column bounds, unit ball
# ---------------------------------------------------------------------------------------------

def _one_hot(frame, categories, missing):
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


def _scale_columns(frame, bounds_table, bounds):
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


def _labels(values, positive):
    return np.where(np.asarray(values) == positive, 1.0, -1.0)


def adult_features(frame: pd.DataFrame, bounds="public"):
    """JMLR 2011 features of Adult: ``(X, y, feature_names, bounds_table)``, 105 columns.

    6 numeric columns divided by their bounds (:data:`ADULT_BOUNDS`, values above clipped), then the
    99 one-hot columns of :data:`ADULT_CATEGORIES` (``?`` gives an all-zero block); each row is then
    projected onto the unit ball. ``y`` is +1 for income ``>50K``, -1 otherwise.
    """
    numeric, table = _scale_columns(frame, ADULT_BOUNDS, bounds)
    blocks, names = _one_hot(frame, ADULT_CATEGORIES, missing={"?"})
    X = clip_to_unit_ball(np.hstack([numeric, *blocks]))
    return X, _labels(frame[ADULT_LABEL], ">50K"), (*ADULT_BOUNDS, *names), table


def kddcup99_features(frame: pd.DataFrame, bounds="public"):
    """JMLR 2011 features of KDDCup99: ``(X, y, feature_names, bounds_table)``, 118 columns.

    38 numeric columns divided by their bounds (:data:`KDDCUP99_BOUNDS`), then 80 one-hot columns
    (3 protocols, 66 services, 11 connection states); each row projected onto the unit ball.
    ``y`` is +1 for an attack (any label but ``normal``), -1 for a normal connection. JMLR 2011 and
    the talk report 119 dimensions; their exact coding is not published, and this one gives 118.
    """
    numeric, table = _scale_columns(frame, KDDCUP99_BOUNDS, bounds)
    blocks, names = _one_hot(frame, KDDCUP99_CATEGORIES, missing=set())
    X = clip_to_unit_ball(np.hstack([numeric, *blocks]))
    y = -_labels(frame[KDDCUP99_LABEL], KDDCUP99_NORMAL)
    return X, y, (*KDDCUP99_BOUNDS, *names), table


def majority_error(y_train, y_test) -> float:
    """Test error of always predicting the training majority class (the "chance" line of the talk)."""
    y_train, y_test = np.asarray(y_train), np.asarray(y_test)
    majority = 1.0 if np.sum(y_train > 0) > np.sum(y_train < 0) else -1.0
    return float(np.mean(y_test != majority))


# ---------------------------------------------------------------------------------------------
# Ready-made splits
# ---------------------------------------------------------------------------------------------

def load_adult(data_dir=None, download=True, bounds="public") -> RealDataset:
    """Adult with the UCI train/test split (32,561 / 16,281 people), preprocessed by :func:`adult_features`."""
    frame = read_adult(data_dir, download)
    X, y, names, table = adult_features(frame, bounds)
    train = (frame["split"] == "train").to_numpy()
    return RealDataset("Adult", X[train], y[train], X[~train], y[~train], names, ">50K", table)


def load_kddcup99(n_train=40_000, n_test=10_000, data_dir=None, download=True, bounds="public",
                  random_state=None) -> RealDataset:
    """A random subsample of KDDCup99 (10 % file): ``n_train`` training and ``n_test`` test connections.

    The two sets are disjoint and drawn uniformly without replacement from the 494,021 connections
    (JMLR 2011 uses "about 50,000"). The column bounds are fixed constants, so the subsample does not
    influence the scaling. ``random_state`` picks the subsample.
    """
    rng = check_random_state(random_state)
    for value, name in ((n_train, "n_train"), (n_test, "n_test")):
        if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < 1:
            raise ValueError(f"{name} must be a positive integer, got {value!r}.")
    frame = read_kddcup99(data_dir, download)
    if n_train + n_test > len(frame):
        raise ValueError(f"n_train + n_test = {n_train + n_test} exceeds the {len(frame)} connections available.")
    rows = rng.choice(len(frame), size=n_train + n_test, replace=False)
    X, y, names, table = kddcup99_features(frame.iloc[rows].reset_index(drop=True), bounds)
    return RealDataset("KDDCup99", X[:n_train], y[:n_train], X[n_train:], y[n_train:], names, "attack", table)

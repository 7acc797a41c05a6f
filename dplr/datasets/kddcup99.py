r"""KDDCup99 (the 10 % file, 494,021 connections): predict whether a connection is an attack (JMLR 2011, Section 6).

JMLR 2011 uses a random subsample of about 50,000 connections; the papers report 119 dimensions
after preprocessing, the coding here gives 118 (see :func:`kddcup99_features`). The category lists
are the protocol, service and flag names of the 10 % file; the numeric columns are divided by the
bounds of :data:`KDDCUP99_BOUNDS`, each with its basis (:mod:`dplr.datasets.uci` explains the rules).
Files, cache and download: :mod:`dplr.datasets.uci`.
"""
from __future__ import annotations

import warnings

import numpy as np
import pandas as pd

from dplr.datasets import uci
from dplr.preprocessing import clip_to_unit_ball
from dplr.validation import check_random_state

__all__ = [
    "KDDCUP99_N_ROWS",
    "KDDCUP99_COLUMNS",
    "KDDCUP99_CATEGORIES",
    "KDDCUP99_BOUNDS",
    "parse_kddcup99",
    "read_kddcup99",
    "KDDCUP99_CODINGS",
    "kddcup99_features",
    "load_kddcup99",
]

#: Rows of the 10% KDDCup99 file.
KDDCUP99_N_ROWS = 494_021
#: The 41 feature columns of KDDCup99, in file order (the label follows them).
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

#: Codings of :func:`kddcup99_features`: the documented attributes one-hot coded (118 columns), and the same with a
#: constant feature (119, the papers' count).
KDDCUP99_CODINGS = {"documented": "38 numeric columns and 80 indicators of the documented categories",
                    "constant": "the documented columns and a constant feature 1 (an intercept)"}

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

_KDD_HELP = (
    "Provide the data: download kddcup.data_10_percent.gz from https://archive.ics.uci.edu/dataset/130/"
    "kdd+cup+1999+data and put it in {folder}/kddcup99/, or set the environment variable "
    f"{uci.DATA_DIR_ENV} to a folder that holds kddcup99/kddcup.data_10_percent.gz."
)



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
    stream = uci.open_text(source)
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
    ``sklearn.datasets.fetch_kddcup99`` (``percent10=True``) with its cache in
    ``<data folder>/scikit_learn_data``, downloading only if ``download`` is true. Raises
    :class:`~dplr.datasets.uci.DatasetUnavailableError` when neither works, and :class:`~dplr.datasets.uci.DataFileError` (naming the file
    and how to fetch it again) when the file in the folder is empty, truncated or corrupt.
    """
    folder = uci.data_home(data_dir)
    path = uci.find_file(folder / "kddcup99", "kddcup.data_10_percent")
    if path is not None:
        return uci.read_data_file(path, parse_kddcup99, _KDD_HELP.format(folder=folder))
    from sklearn import datasets as sk_datasets  # imported here: only needed when the file is not in the folder

    try:
        bunch = sk_datasets.fetch_kddcup99(percent10=True, data_home=str(folder / "scikit_learn_data"),
                                           download_if_missing=bool(download))
    except Exception as err:  # not cached and no download (network or permission failure)
        how = "download=False" if not download else f"downloading it failed ({type(err).__name__}: {err})"
        raise uci.DatasetUnavailableError(
            f"KDDCup99 is not in the data folder {folder} and {how}. " + _KDD_HELP.format(folder=folder)) from err
    data = np.asarray(bunch.data, dtype=object)
    if data.ndim != 2 or data.shape[1] != len(KDDCUP99_COLUMNS):
        raise ValueError(f"fetch_kddcup99 returned data of shape {data.shape}, expected (n, 41).")
    columns = [_decode(data[:, j]) if name in KDDCUP99_CATEGORIES else data[:, j]
               for j, name in enumerate(KDDCUP99_COLUMNS)]
    return _kdd_frame(columns, _decode(np.asarray(bunch.target, dtype=object)))


def kddcup99_features(frame: pd.DataFrame, bounds="public", coding="documented"):
    """JMLR 2011 features of KDDCup99: ``(X, y, feature_names, bounds_table)``.

    ``coding="documented"`` (the default, 118 columns): 38 numeric columns divided by their bounds
    (:data:`KDDCUP99_BOUNDS`), then 80 one-hot columns (3 protocols, 66 services, 11 connection states).
    JMLR 2011 and the talk report 119 dimensions without publishing their coding; of the codings in
    :data:`KDDCUP99_CODINGS`, ``"constant"`` gives 119: the same columns and a constant feature 1 (an intercept
    the classifier learns like any weight) -- a guess at the authors' coding, not a documented one. Each row is
    then projected onto the unit ball. ``y`` is +1 for an attack (any label but ``normal``), -1 for a normal
    connection.
    """
    if coding not in KDDCUP99_CODINGS:
        raise ValueError(f"coding must be one of {tuple(KDDCUP99_CODINGS)}, got {coding!r}.")
    numeric, table = uci.scale_columns(frame, KDDCUP99_BOUNDS, bounds)
    blocks, names = uci.one_hot(frame, KDDCUP99_CATEGORIES, missing=set())
    if coding == "constant":
        blocks, names = [*blocks, np.ones((len(frame), 1))], [*names, "constant"]
    X = clip_to_unit_ball(np.hstack([numeric, *blocks]))
    y = -uci.signed_labels(frame[KDDCUP99_LABEL], KDDCUP99_NORMAL)
    return X, y, (*KDDCUP99_BOUNDS, *names), table


def load_kddcup99(n_train=40_000, n_test=10_000, data_dir=None, download=True, bounds="public",
                  random_state=None) -> uci.RealDataset:
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
    return uci.RealDataset("KDDCup99", X[:n_train], y[:n_train], X[n_train:], y[n_train:], names, "attack", table)

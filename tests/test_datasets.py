"""dplr.datasets: parsing, the data folder, the (mocked) download paths, and the JMLR 2011 features.

Every test builds its own few rows; no test touches the network. The last two tests use the real
files when DPLR_DATA_DIR holds them (CI, the developers' machines) and are skipped otherwise.
"""
import gzip
import io
import os
import re
import types
import warnings
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from sklearn.utils import Bunch

from dplr import datasets as ds
from dplr.ball import rows_outside_ball
from dplr.validation import PrivacyLeakWarning

ADULT_TRAIN_ROWS = [
    "39, State-gov, 77516, Bachelors, 13, Never-married, Adm-clerical, Not-in-family, White, Male, 2174, 0, 40, "
    "United-States, <=50K",
    "50, Self-emp-not-inc, 83311, Bachelors, 13, Married-civ-spouse, Exec-managerial, Husband, White, Male, 0, 0, "
    "13, United-States, >50K",
    "38, ?, 215646, HS-grad, 9, Divorced, ?, Not-in-family, White, Female, 0, 0, 40, ?, <=50K",
]
ADULT_TEST_ROWS = [
    "|1x3 Cross validator",
    "25, Private, 226802, 11th, 7, Never-married, Machine-op-inspct, Own-child, Black, Male, 0, 0, 40, "
    "United-States, <=50K.",
    "",
    "44, Private, 160323, Some-college, 10, Married-civ-spouse, Machine-op-inspct, Husband, Black, Male, 7688, 0, "
    "40, United-States, >50K.",
]


def _kdd_line(protocol="tcp", service="http", flag="SF", label="normal.", src_bytes=181, count=8):
    numbers = [0.0] * 38
    numbers[1] = src_bytes  # src_bytes is the 2nd numeric column (after duration)
    numbers[19] = count     # count
    values = [str(numbers[0]), protocol, service, flag] + [repr(float(v)) for v in numbers[1:]]
    return ",".join(values) + "," + label


KDD_ROWS = [
    _kdd_line(),
    _kdd_line("icmp", "ecr_i", "SF", "smurf.", src_bytes=1032, count=511),
    _kdd_line("tcp", "private", "S0", "neptune.", src_bytes=0, count=123),
    _kdd_line("udp", "domain_u", "SF", "normal.", src_bytes=45, count=2),
]


def _write_gz(path, lines):
    path.parent.mkdir(parents=True, exist_ok=True)
    with gzip.open(path, "wt") as out:
        out.write("\n".join(lines) + "\n")


@pytest.fixture
def adult_folder(tmp_path):
    _write_gz(tmp_path / "adult" / "adult.data.gz", ADULT_TRAIN_ROWS)
    _write_gz(tmp_path / "adult" / "adult.test.gz", ADULT_TEST_ROWS)
    return tmp_path


@pytest.fixture
def kdd_folder(tmp_path):
    _write_gz(tmp_path / "kddcup99" / "kddcup.data_10_percent.gz", KDD_ROWS)
    return tmp_path


# --- the data folder -------------------------------------------------------------------------

def test_data_home_precedence(monkeypatch, tmp_path):
    monkeypatch.delenv(ds.DATA_DIR_ENV, raising=False)
    monkeypatch.delenv("XDG_CACHE_HOME", raising=False)
    assert ds.data_home() == Path.home() / ".cache" / "dplr"
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    assert ds.data_home() == tmp_path / "xdg" / "dplr"
    monkeypatch.setenv(ds.DATA_DIR_ENV, str(tmp_path / "shared"))
    assert ds.data_home() == tmp_path / "shared"
    assert ds.data_home(tmp_path / "explicit") == tmp_path / "explicit"


# --- Adult -----------------------------------------------------------------------------------

def test_parse_adult_both_file_formats():
    train = ds.parse_adult(io.StringIO("\n".join(ADULT_TRAIN_ROWS)))
    test = ds.parse_adult(io.StringIO("\n".join(ADULT_TEST_ROWS)))
    assert list(train.columns) == [*ds.ADULT_COLUMNS, "income"]
    assert len(train) == 3 and len(test) == 2  # comment line and blank line skipped
    assert list(train["income"]) == ["<=50K", ">50K", "<=50K"]
    assert list(test["income"]) == ["<=50K", ">50K"]  # trailing periods removed
    assert train["age"].dtype == float and train.loc[0, "capital-gain"] == 2174.0
    assert train.loc[2, "workclass"] == "?"


@pytest.mark.parametrize("line, message", [
    ("39, State-gov, 77516, <=50K", "line 1 has 4 fields"),
    (ADULT_TRAIN_ROWS[0].replace("<=50K", "maybe"), "neither"),
    (ADULT_TRAIN_ROWS[0].replace("39,", "old,"), "'age'"),
])
def test_parse_adult_rejects_malformed_lines(line, message):
    with pytest.raises(ValueError, match=message):
        ds.parse_adult(io.StringIO(line))


def test_read_adult_from_folder_gz_and_plain(adult_folder, tmp_path_factory):
    frame = ds.read_adult(adult_folder, download=False)
    assert list(frame["split"]) == ["train"] * 3 + ["test"] * 2
    plain = tmp_path_factory.mktemp("plain")
    (plain / "adult").mkdir()
    (plain / "adult" / "adult.data").write_text("\n".join(ADULT_TRAIN_ROWS) + "\n")
    (plain / "adult" / "adult.test").write_text("\n".join(ADULT_TEST_ROWS) + "\n")
    pd.testing.assert_frame_equal(ds.read_adult(plain, download=False), frame)


def test_read_adult_reads_the_folder_named_by_the_environment(adult_folder, monkeypatch):
    monkeypatch.setenv(ds.DATA_DIR_ENV, str(adult_folder))
    assert len(ds.read_adult(download=False)) == 5


def test_read_adult_without_data_and_without_download_says_how_to_provide_it(tmp_path):
    with pytest.raises(ds.DatasetUnavailableError) as info:
        ds.read_adult(tmp_path, download=False)
    message = str(info.value)
    assert str(tmp_path) in message and ds.DATA_DIR_ENV in message and "adult.data" in message


def _ucimlrepo_response():
    """The shape of ucimlrepo.fetch_ucirepo(id=2): features and targets tables, NaN for missing values."""
    rows = [ds.parse_adult(io.StringIO("\n".join(ADULT_TRAIN_ROWS))),
            ds.parse_adult(io.StringIO("\n".join(ADULT_TEST_ROWS)))]
    features = pd.concat(rows, ignore_index=True)[list(ds.ADULT_COLUMNS)].astype(object)
    features = features.where(features != "?", np.nan)
    for column in ds.ADULT_BOUNDS:
        features[column] = features[column].astype(int)  # ucimlrepo serves integers
    targets = pd.DataFrame({"income": ["<=50K", ">50K", "<=50K", "<=50K.", ">50K."]})
    return types.SimpleNamespace(data=types.SimpleNamespace(features=features, targets=targets))


def test_read_adult_downloads_with_ucimlrepo_and_caches(tmp_path, adult_folder, monkeypatch):
    ucimlrepo = pytest.importorskip("ucimlrepo")  # the optional extra dplr[uci]

    calls = []

    def fake_fetch(id=None, name=None):
        calls.append(id)
        return _ucimlrepo_response()

    monkeypatch.setattr(ucimlrepo, "fetch_ucirepo", fake_fetch)
    cache = tmp_path / "cache"
    frame = ds.read_adult(cache)
    assert calls == [2]
    assert (cache / "adult" / "adult.data.gz").is_file() and (cache / "adult" / "adult.test.gz").is_file()
    # The cached files parse to the same records as the original UCI files.
    pd.testing.assert_frame_equal(frame, ds.read_adult(adult_folder, download=False))

    def no_network(id=None, name=None):
        raise AssertionError("the cache must be used")

    monkeypatch.setattr(ucimlrepo, "fetch_ucirepo", no_network)
    pd.testing.assert_frame_equal(ds.read_adult(cache), frame)


def test_read_adult_offline_download_failure_is_explained(tmp_path, monkeypatch):
    ucimlrepo = pytest.importorskip("ucimlrepo")  # the optional extra dplr[uci]

    def offline(id=None, name=None):
        raise ConnectionError("Error connecting to server")

    monkeypatch.setattr(ucimlrepo, "fetch_ucirepo", offline)
    with pytest.raises(ds.DatasetUnavailableError, match="downloading it with ucimlrepo failed") as info:
        ds.read_adult(tmp_path)
    assert isinstance(info.value.__cause__, ConnectionError)
    assert ds.DATA_DIR_ENV in str(info.value)
    assert not (tmp_path / "adult" / "adult.data.gz").exists()


def test_adult_features_one_hot_bounds_and_unit_ball(adult_folder):
    frame = ds.read_adult(adult_folder, download=False)
    X, y, names, table = ds.adult_features(frame)
    assert X.shape == (5, 105) and len(names) == 105
    assert list(y) == [-1, 1, -1, -1, 1]
    assert not rows_outside_ball(X).any()  # inside exactly, for the float64 entries as real numbers
    column = {name: j for j, name in enumerate(names)}
    # Row 0 before projection: 6 scaled numbers and one 1 in each of the 8 categorical blocks.
    raw0 = np.r_[[39 / 90, 77516 / 1_490_400, 13 / 16, 2174 / 99_999, 0.0, 40 / 99], np.ones(8)]
    assert np.isclose(X[0, column["age"]], raw0[0] / np.linalg.norm(raw0))
    assert np.isclose(X[0, column["workclass=State-gov"]], 1 / np.linalg.norm(raw0))
    # Missing values ("?") give an all-zero block.
    workclass = [j for name, j in column.items() if name.startswith("workclass=")]
    assert np.all(X[2, workclass] == 0)
    assert table.loc["age", "bound"] == 90.0 and "top code" in table.loc["age", "basis"]


def test_adult_features_clip_values_above_a_public_bound(adult_folder):
    frame = ds.read_adult(adult_folder, download=False)
    frame.loc[0, "hours-per-week"] = 500.0  # beyond the top code 99: clipped to the bound, record by record
    X, _, names, _ = ds.adult_features(frame)
    row = np.r_[[39 / 90, 77516 / 1_490_400, 13 / 16, 2174 / 99_999, 0.0, 1.0], np.ones(8)]
    assert np.isclose(X[0, list(names).index("hours-per-week")], 1.0 / np.linalg.norm(row))


def test_adult_features_column_maxima_from_the_data_warn(adult_folder):
    frame = ds.read_adult(adult_folder, download=False)
    with pytest.warns(PrivacyLeakWarning, match="not ε-DP"):
        _, _, _, table = ds.adult_features(frame, bounds="data")
    assert table.loc["age", "bound"] == 50.0  # the largest age among these five people
    with pytest.raises(ValueError, match="bounds must be"):
        ds.adult_features(frame, bounds="max")


def test_adult_features_reject_unknown_categories_and_negative_numbers(adult_folder):
    frame = ds.read_adult(adult_folder, download=False)
    odd = frame.copy()
    odd.loc[1, "race"] = "Martian"
    with pytest.raises(ValueError, match="'race'.*Martian"):
        ds.adult_features(odd)
    negative = frame.copy()
    negative.loc[1, "capital-loss"] = -5.0
    with pytest.raises(ValueError, match="'capital-loss' has negative values"):
        ds.adult_features(negative)


def test_published_tables_have_the_jmlr_dimensions():
    assert len(ds.ADULT_BOUNDS) + sum(len(v) for v in ds.ADULT_CATEGORIES.values()) == 105
    assert len(ds.KDDCUP99_BOUNDS) + sum(len(v) for v in ds.KDDCUP99_CATEGORIES.values()) == 118
    assert set(ds.ADULT_BOUNDS) | set(ds.ADULT_CATEGORIES) == set(ds.ADULT_COLUMNS)
    assert set(ds.KDDCUP99_BOUNDS) | set(ds.KDDCUP99_CATEGORIES) == set(ds.KDDCUP99_COLUMNS)
    for bound, basis in [*ds.ADULT_BOUNDS.values(), *ds.KDDCUP99_BOUNDS.values()]:
        assert bound > 0 and basis


# --- KDDCup99 --------------------------------------------------------------------------------

def test_parse_kddcup99_rows():
    frame = ds.parse_kddcup99(io.StringIO("\n".join(KDD_ROWS) + "\n\n"))
    assert len(frame) == 4 and list(frame.columns) == [*ds.KDDCUP99_COLUMNS, "label"]
    assert list(frame["label"]) == ["normal", "smurf", "neptune", "normal"]
    assert frame["src_bytes"].tolist() == [181.0, 1032.0, 0.0, 45.0]
    assert frame.loc[1, "service"] == "ecr_i"


@pytest.mark.parametrize("text, message", [
    ("0,tcp,http,SF,1,2\n", "fewer than 42 fields"),
    (KDD_ROWS[0] + ",extra\n", "Malformed KDDCup99 file"),
    (KDD_ROWS[0].replace(",181.0,", ",lots,") + "\n", "'src_bytes'"),
])
def test_parse_kddcup99_rejects_malformed_lines(text, message):
    with pytest.raises(ValueError, match=message):
        ds.parse_kddcup99(io.StringIO(text))


def test_read_kddcup99_from_folder(kdd_folder):
    frame = ds.read_kddcup99(kdd_folder, download=False)
    assert len(frame) == 4


def _kdd_bunch():
    """The shape of sklearn.datasets.fetch_kddcup99(percent10=True): object array, bytes for symbols."""
    frame = ds.parse_kddcup99(io.StringIO("\n".join(KDD_ROWS)))
    data = np.empty((len(frame), 41), dtype=object)
    for j, column in enumerate(ds.KDDCUP99_COLUMNS):
        values = frame[column].to_numpy()
        data[:, j] = [v.encode() for v in values] if column in ds.KDDCUP99_CATEGORIES else values
    target = np.array([(label + ".").encode() for label in frame["label"]], dtype=object)
    return Bunch(data=data, target=target)


def test_read_kddcup99_uses_scikit_learn_fetcher_with_its_cache_in_the_data_folder(tmp_path, kdd_folder,
                                                                                     monkeypatch):
    from sklearn import datasets as sk_datasets

    seen = {}

    def fake_fetch(**kwargs):
        seen.update(kwargs)
        return _kdd_bunch()

    monkeypatch.setattr(sk_datasets, "fetch_kddcup99", fake_fetch)
    frame = ds.read_kddcup99(tmp_path / "cache")
    assert seen["percent10"] is True and seen["download_if_missing"] is True
    assert seen["data_home"] == str(tmp_path / "cache" / "scikit_learn_data")
    pd.testing.assert_frame_equal(frame, ds.read_kddcup99(kdd_folder, download=False))


@pytest.mark.parametrize("download", [True, False])
def test_read_kddcup99_offline_is_explained(tmp_path, monkeypatch, download):
    from sklearn import datasets as sk_datasets

    def offline(**kwargs):
        if kwargs["download_if_missing"]:
            raise OSError("<urlopen error [Errno -2] Name or service not known>")
        raise OSError("Data not found and `download_if_missing` is False")

    monkeypatch.setattr(sk_datasets, "fetch_kddcup99", offline)
    with pytest.raises(ds.DatasetUnavailableError, match="kddcup.data_10_percent.gz") as info:
        ds.read_kddcup99(tmp_path, download=download)
    assert ds.DATA_DIR_ENV in str(info.value) and isinstance(info.value.__cause__, OSError)


def test_kddcup99_features(kdd_folder):
    frame = ds.read_kddcup99(kdd_folder, download=False)
    X, y, names, table = ds.kddcup99_features(frame)
    assert X.shape == (4, 118) and len(names) == 118
    assert list(y) == [-1, 1, 1, -1]  # +1 = attack
    assert np.all(np.linalg.norm(X, axis=1) <= 1 + 1e-12)
    count = list(names).index("count")
    raw = np.zeros(118)
    raw[list(names).index("src_bytes")] = 1032 / 693_375_640
    raw[count] = 1.0  # 511 / 511
    for name in ("protocol_type=icmp", "service=ecr_i", "flag=SF"):
        raw[list(names).index(name)] = 1.0
    assert np.allclose(X[1], raw / np.linalg.norm(raw))
    assert table.loc["serror_rate", "bound"] == 1.0
    # the papers' 119 dimensions: the same columns and a constant feature, each row projected onto the ball again
    X119, y119, names119, _ = ds.kddcup99_features(frame, coding="constant")
    assert X119.shape == (4, 119) and names119[-1] == "constant" and list(y119) == list(y)
    raw119 = np.append(raw, 1.0)
    assert np.allclose(X119[1], raw119 / np.linalg.norm(raw119))
    with pytest.raises(ValueError, match="coding must be one of"):
        ds.kddcup99_features(frame, coding="119")
    frame.loc[0, "service"] = "gopher2"
    with pytest.raises(ValueError, match="'service'"):
        ds.kddcup99_features(frame)


def test_load_kddcup99_disjoint_seeded_subsample(tmp_path):
    lines = [_kdd_line(src_bytes=i, label="normal." if i % 3 else "smurf.") for i in range(30)]
    _write_gz(tmp_path / "kddcup99" / "kddcup.data_10_percent.gz", lines)
    first = ds.load_kddcup99(12, 6, tmp_path, download=False, random_state=7)
    again = ds.load_kddcup99(12, 6, tmp_path, download=False, random_state=7)
    other = ds.load_kddcup99(12, 6, tmp_path, download=False, random_state=8)
    assert first.X_train.shape == (12, 118) and first.X_test.shape == (6, 118)
    np.testing.assert_array_equal(first.X_train, again.X_train)
    assert not np.array_equal(first.X_train, other.X_train)
    # Each of the 30 rows is unique (its own src_bytes), so the two sets are disjoint iff no row repeats.
    rows = np.vstack([first.X_train, first.X_test])
    assert len(np.unique(rows, axis=0)) == 18
    with pytest.raises(ValueError, match="exceeds"):
        ds.load_kddcup99(25, 6, tmp_path, download=False)
    with pytest.raises(ValueError, match="n_train"):
        ds.load_kddcup99(0, 6, tmp_path, download=False)


def test_majority_error():
    assert ds.majority_error([1, 1, -1], [1, -1, -1, -1]) == 0.75
    assert ds.majority_error([-1, -1, 1], [1, -1, -1, -1]) == 0.25


# --- the real files (skipped without them) ----------------------------------------------------

def _real_folder():
    folder = os.environ.get(ds.DATA_DIR_ENV, "")
    return Path(folder) if folder and (Path(folder) / "adult" / "adult.data.gz").is_file() else None


@pytest.mark.skipif(_real_folder() is None, reason="DPLR_DATA_DIR does not hold the UCI files")
def test_real_adult_matches_the_published_sizes_and_no_public_bound_is_exceeded():
    frame = ds.read_adult(download=False)
    assert (frame["split"] == "train").sum() == 32_561 and (frame["split"] == "test").sum() == 16_281
    for column, (bound, _) in ds.ADULT_BOUNDS.items():
        assert frame[column].max() <= bound, column
    data = ds.load_adult(download=False)
    assert data.n_features == 105 and data.X_test.shape == (16_281, 105)
    # every record is projected onto the sphere (eight one-hot entries alone have norm sqrt(8)); before the exact test
    # about half of them lay outside the unit ball by a unit of roundoff or two
    assert not rows_outside_ball(data.X_train).any() and not rows_outside_ball(data.X_test).any()


@pytest.mark.skipif(_real_folder() is None or not (_real_folder() / "kddcup99").is_dir(),
                    reason="DPLR_DATA_DIR does not hold the UCI files")
def test_real_kddcup99_matches_the_published_size_and_bounds():
    frame = ds.read_kddcup99(download=False)
    assert len(frame) == 494_021 and (frame["label"] == "normal").sum() == 97_278
    for column, (bound, _) in ds.KDDCUP99_BOUNDS.items():
        assert frame[column].max() <= bound, column
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        X, _, _, _ = ds.kddcup99_features(frame.iloc[:1000])
    assert X.shape == (1000, 118)
    assert not rows_outside_ball(X).any()



# --- damaged files (issue 19, item 4) ------------------------------------------------------------

def _damage(path, how):
    data = path.read_bytes()
    if how == "empty":
        path.write_bytes(b"")
    elif how == "truncated":
        path.write_bytes(data[: len(data) // 2])
    elif how == "corrupt":
        path.write_bytes(data[:10] + bytes(255 - b for b in data[10:]))
    else:  # a valid gzip file holding no records
        path.write_bytes(gzip.compress(b""))


@pytest.mark.parametrize("how, problem", [("empty", "is empty"), ("truncated", "truncated or corrupt"),
                                          ("corrupt", "truncated or corrupt"), ("no records", "holds no records")])
@pytest.mark.parametrize("dataset", ["adult", "kddcup99"])
def test_a_damaged_data_file_is_named_with_how_to_fetch_it_again(dataset, how, problem, adult_folder):
    from dplr.datasets.uci import DataFileError

    if dataset == "adult":
        path, read = adult_folder / "adult" / "adult.data.gz", ds.adult.read_adult
    else:
        path, read = adult_folder / "kddcup99" / "kddcup.data_10_percent.gz", ds.kddcup99.read_kddcup99
        _write_gz(path, KDD_ROWS)
    _damage(path, how)
    with pytest.raises(DataFileError, match=rf"{re.escape(str(path))} .*{problem}.*Fix: delete .* download=True"):
        read(adult_folder, download=False)

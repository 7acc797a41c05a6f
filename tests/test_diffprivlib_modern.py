"""The record of diffprivlib as a contender of the comparison (``book/data/diffprivlib_modern.csv.gz``).

It was written by diffprivlib itself, in its own environment (``benchmarks/diffprivlib_modern.py``); these tests
only read it (no diffprivlib here): its format is the comparison's, so ``dplr.replication.modern.record`` reads it
and its rows pair with the other contenders' by data set, ε and repeat.
"""
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from dplr.replication.modern.record import RECORD_COLUMNS, read_record
from dplr.replication.modern.study import EPSILONS
from dplr.replication.real_data import DEFAULT_SEED, KDD_SIZES, LAMBDAS

RECORD = Path(__file__).resolve().parents[1] / "book" / "data" / "diffprivlib_modern.csv.gz"


@pytest.fixture(scope="module")
def record():
    return read_record(RECORD)


def test_record_has_one_row_per_data_set_repeat_and_epsilon(record):
    rows, settings = record
    assert tuple(rows.columns) == RECORD_COLUMNS
    repeats = settings["repeats"]
    assert repeats >= 10 and settings["seed"] == DEFAULT_SEED
    assert len(rows) == 2 * repeats * len(EPSILONS)
    assert set(rows.method) == {"diffprivlib"} and set(rows.loss) == {"logistic"}  # no Huber SVM in diffprivlib
    assert settings["epsilons"] == list(EPSILONS) and settings["lambdas"] == pytest.approx(list(LAMBDAS), rel=1e-15)
    for _, group in rows.groupby(["data", "epsilon"]):
        assert sorted(group.repeat) == list(range(repeats))
    assert sorted(rows.groupby("data").epsilon.unique().explode().unique()) == list(EPSILONS)
    assert dict(rows.groupby("data").n.unique().map(list)) == {"adult": [32561], "kdd": [KDD_SIZES[0]]}
    assert settings["n_test"] == {"adult": 16281, "kdd": KDD_SIZES[1]}


def test_errors_are_counts_over_the_test_set_and_the_choice_is_a_candidate(record):
    rows, settings = record
    n_test = rows.data.map(settings["n_test"]).to_numpy(float)
    raw = pd.read_csv(RECORD, skiprows=1)  # the file itself: the errors as counts
    for column in ("error_private", "error_nonprivate", "error_best"):
        counts = raw[column]
        assert pd.api.types.is_integer_dtype(counts) and (counts >= 0).all() and (counts <= n_test).all()
        assert np.array_equal(rows[column].to_numpy(), counts.to_numpy() / n_test)  # what test_error returns
    assert (rows.error_best <= rows.error_private).all() and (rows.error_best <= rows.error_nonprivate).all()
    assert set(rows.candidate) <= set(range(len(LAMBDAS)))
    assert ((rows.p_chosen_best > 0) & (rows.p_chosen_best <= 1)).all()
    # sign(w·x) > 0 predicts +1: at the largest ε the released classifiers beat a coin (flipped ones would not)
    assert (rows[rows.epsilon == max(EPSILONS)].groupby("data").error_private.mean() < 0.25).all()


def test_settings_name_diffprivlib_and_its_environment(record):
    _, settings = record
    assert settings["versions"]["diffprivlib"] == "0.6.6"
    assert {"numpy", "scikit-learn", "scipy", "python"} <= set(settings["versions"])
    assert settings["command"].startswith("python benchmarks/diffprivlib_modern.py")
    assert settings["solver"]["data_norm"] == 1.0 and settings["solver"]["fit_intercept"] is False
    assert settings["delta"] == 0.0  # diffprivlib's LogisticRegression is ε-DP (its accountant spends δ = 0)
    for key in ("adult", "kdd"):
        caught = " ".join(settings["warnings"][key])
        assert "PrivacyLeakWarning" not in caught and "ConvergenceWarning" not in caught
        assert set(settings["seconds"][key]["per_fit"]) == {str(e) for e in EPSILONS}

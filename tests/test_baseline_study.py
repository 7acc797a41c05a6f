"""dplr.replication.baseline: the warm-started cross-validation path, the parts that sum to the gap, the record."""
from types import SimpleNamespace

import numpy as np
import pandas as pd
import pytest

from dplr.algorithms import standard_erm
from dplr.replication.baseline import record as baseline_record
from dplr.replication.baseline import study as bs


def _dataset(n=800, n_test=400, d=5, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n + n_test, d))
    X /= np.maximum(1.0, np.linalg.norm(X, axis=1))[:, None]
    y = np.where(X @ np.ones(d) + 0.5 * rng.standard_normal(n + n_test) > 0, 1.0, -1.0)
    return SimpleNamespace(X_train=X[:n], y_train=y[:n], X_test=X[n:], y_test=y[n:])


@pytest.mark.parametrize("loss", ["logistic", "huber"])
def test_the_warm_started_path_finds_the_solvers_minimisers(loss):
    data = _dataset()
    lambdas = [1e-1, 1e-3, 1e-5]
    coefs, norms = bs.newton_path(data.X_train, data.y_train, lambdas, loss, tol=1e-10)
    assert np.all(norms <= 1e-10)
    for lam, coef in zip(lambdas, coefs):
        np.testing.assert_allclose(coef, standard_erm(data.X_train, data.y_train, lam, loss, tol=1e-10,
                                                      max_iter=500), rtol=1e-6, atol=1e-8)


def test_the_path_with_an_intercept_matches_scikit_learn():
    from sklearn.linear_model import LogisticRegression
    data = _dataset()
    n = len(data.y_train)
    coefs, _ = bs.newton_path(data.X_train, data.y_train, [1e-2], "logistic", intercept=True, tol=1e-10)
    model = LogisticRegression(C=1 / (n * 1e-2), solver="newton-cholesky", tol=1e-12).fit(data.X_train, data.y_train)
    np.testing.assert_allclose(coefs[0], np.r_[model.coef_.ravel(), model.intercept_], rtol=1e-5, atol=1e-7)


def _tuned(methods=bs.METHODS, epsilons=(1.0,), repeats=2):
    # rows in the real-data record's columns (Algorithm 3's repeats), made up: the study reads, not recomputes, them
    rows = [{"data": "toy", "loss": loss, "part": "tradeoff", "n": 800, "repeat": r, "method": m, "epsilon": e,
             "lam_private": 1e-2, "error_private": 0.2 + 0.01 * r, "lam_nonprivate": 1e-2, "error_nonprivate": 0.2,
             "error_best": 0.2, "p_chosen_best": 1.0}
            for loss in bs.LOSSES for r in range(repeats) for m in methods for e in epsilons]
    return pd.DataFrame(rows)


def test_a_small_study_decomposes_the_gap_and_its_record_checks(tmp_path, monkeypatch):
    monkeypatch.setattr(bs, "WIDE_LAMBDAS", (1e-4, 1e-3, 1e-2, 1e-1))
    data = {"toy": _dataset()}
    study = bs.run_baseline_study(_tuned(), datasets=("toy",), n_repeats=2, epsilons=(1.0,), data=data)
    rows = study.rows
    assert set(rows.stage) == {"B0", "B1", "B2", "whole"} and len(rows) == 2 * 3 + 2 * 2 * 2
    assert set(rows[rows.stage == "B2"].lam) <= set(bs.LAMBDAS)
    # the parts' means sum to the total gap, per data set, loss, method and ε
    parts = study.parts
    for _, cell in parts.groupby(["loss", "method", "epsilon"]):
        means = cell.set_index("part")["mean"]
        assert means.drop("total").sum() == pytest.approx(means["total"], abs=1e-12)
        assert list(means.index) == [p for p, _, _ in bs.PARTS[:2]] + ["noise", "split and selection", "total"]
    # the record round-trips, and a recomputed slice agrees with it
    path = tmp_path / "baseline.csv.gz"
    baseline_record.write_record(rows, study.n_test, path, {"seed": study.seed, "n_repeats": 2})
    stored, settings = baseline_record.read_record(path)
    assert settings["n_repeats"] == 2
    live = bs.recompute_rows(stored, "toy", data=data)
    assert baseline_record.check_against_record(stored, live) == len(live) == 2 * (1 + 2)
    # a check that could fail: a changed error is caught
    broken = live.copy()
    broken.loc[0, "error"] += 1 / study.n_test["toy"]
    with pytest.raises(AssertionError):
        baseline_record.check_against_record(stored, broken)


def test_tuned_rows_need_enough_repeats_in_the_real_record():
    with pytest.raises(ValueError, match="fewer than 5 repeats"):
        bs.tuned_rows(_tuned(), 5)


def test_the_books_record_covers_the_study_and_pairs_with_the_real_data_record():
    from pathlib import Path

    from dplr.replication.real import record as real_record
    from dplr.replication.real_data import DATASETS, DEFAULT_SEED, EPSILONS
    book = Path(__file__).resolve().parents[1] / "book" / "data"
    rows, settings = baseline_record.read_record(book / "baseline_study.csv.gz")
    assert settings["seed"] == DEFAULT_SEED and settings["n_repeats"] >= bs.DEFAULT_REPEATS
    whole = rows[rows.stage == "whole"]
    cells = whole.groupby(["data", "loss", "method", "epsilon"]).repeat.nunique()
    assert len(cells) == len(DATASETS) * len(bs.LOSSES) * len(bs.METHODS) * len(EPSILONS)
    assert (cells == settings["n_repeats"]).all()
    real_rows, real_settings = real_record.read_record(book / "real_study.csv.gz")
    assert real_settings["seed"] == settings["seed"]
    study = bs.study_from_rows(rows, bs.tuned_rows(real_rows, settings["n_repeats"]), settings["seed"],
                               settings["n_repeats"], settings["n_test"])
    assert len(study.parts) == len(cells) * (len(bs.PARTS) + 1) and study.parts["mean"].notna().all()

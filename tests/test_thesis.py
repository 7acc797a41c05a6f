"""The replication of Veldhuizen (2020): data constructions, the thesis pipeline, cells, diagnosis, study.

Statistical checks use fixed seeds; each states its false-failure rate, i.e. the probability that
the check fails for a correct implementation on a random seed (with the fixed seed it either always
passes or always fails).
"""
import numpy as np
import pandas as pd
import pytest
from scipy import stats

from dplr.calibration import objective_perturbation_calibration
from dplr.datasets import breast_cancer as bc
from dplr.datasets.simulated import band_probability
from dplr.replication.thesis import cells, diagnosis, pipeline, published, study
from dplr.replication.thesis import data as tdata
from dplr.replication.verdicts import replication_verdict
from dplr.solver import solve_regularized_erm
from dplr.validation import PrivacyLeakWarning


# --------------------------------------------------------------------------------------------------
# Published values
# --------------------------------------------------------------------------------------------------
def test_published_values_are_unique_and_found():
    keys = [(v.data, v.method, v.n_train) for v in published.TABLE2 + published.TEXT_VALUES]
    assert len(keys) == len(set(keys)) == 10
    assert {v.data for v in published.TABLE2} == set(published.KINDS)
    assert published.thesis_value("real", "objective").printed == "0.461"
    assert published.thesis_value("real", "standard", 50).n_train == 50
    with pytest.raises(KeyError):
        published.thesis_value("real", "objective", 50)
    assert all(v.source.endswith("004_2389f0caa551afc2.txt") and v.where for v in published.TABLE2)


def test_grids():
    assert len(published.LAMBDA_GRID) == 25 and published.LAMBDA_GRID[12] == pytest.approx(0.01)
    assert published.SIMULATED_SIZES[-1] == 8000 and published.REAL_SIZES == tuple(range(50, 451, 50))


# --------------------------------------------------------------------------------------------------
# Simulated data
# --------------------------------------------------------------------------------------------------
def test_separable_has_margin_and_unit_rows():
    X, y = tdata.make_thesis_separable(2000, random_state=1)
    assert X.shape == (2000, 10)
    np.testing.assert_allclose(np.linalg.norm(X, axis=1), 1.0)
    assert np.all(np.abs(X[:, 0]) >= 0.03) and np.all(y == np.sign(X[:, 0]))


def test_inseparable_construction():
    data = tdata.make_thesis_inseparable(4000, random_state=2)
    sep = data.separator
    # The SVM separates the separable labels with margin at least the generating 0.03 (hard margin).
    assert np.all(data.y_separable * sep.distance(data.X) > 0)
    assert 0.03 - 1e-4 <= sep.margin < 0.05 and abs(sep.normal[0]) > 0.99
    assert np.all(data.in_band[data.flipped]) and np.all(data.y[data.flipped] == -data.y_separable[data.flipped])
    np.testing.assert_array_equal(data.y[~data.flipped], data.y_separable[~data.flipped])
    # The band |d| <= 0.1 around the SVM hyperplane minus the empty 0.03 band: its share is near
    # (P(|t|<=0.1) - P(|t|<0.03)) / (1 - P(|t|<0.03)) on the sphere. Binomial 4-sigma bounds:
    # false-failure rate below 1e-4 for each of the two checks.
    p_band = (band_probability(0.1) - band_probability(0.03)) / (1 - band_probability(0.03))
    n = data.X.shape[0]
    assert abs(data.in_band.mean() - p_band) < 4 * np.sqrt(p_band * (1 - p_band) / n) + 0.01
    m = int(data.in_band.sum())
    assert abs(data.flipped.sum() / m - 0.2) < 4 * np.sqrt(0.2 * 0.8 / m)


def test_illustrations():
    X, y, info = tdata.illustration_2d("separable", 500, random_state=3)
    assert X.shape == (500, 2) and np.all(np.linalg.norm(X, axis=1) <= 1) and np.all(np.abs(X[:, 0]) >= 0.03)
    X, y, info = tdata.illustration_2d("inseparable", 2000, random_state=3)
    m = int(info["in_band"].sum())
    # flip probability 0.6 in the band; 4-sigma binomial bound, false-failure rate below 1e-4
    assert abs(info["flipped"].sum() / m - 0.6) < 4 * np.sqrt(0.24 / m)
    with pytest.raises(ValueError):
        tdata.illustration_2d("other")


def test_thesis_subset_keeps_565_of_569():
    keep = tdata.thesis_subset(569, random_state=4)
    assert keep.size == 565 == len(set(keep.tolist())) and keep.max() < 569
    np.testing.assert_array_equal(keep, tdata.thesis_subset(569, random_state=4))
    assert 565 % 5 == 0 and 569 % 5 == 4


def test_normalisations():
    X = bc.load_wdbc("sklearn").X
    for how in tdata.NORMALISATIONS:
        if how in tdata.DATA_DEPENDENT_NORMALISATIONS:
            with pytest.warns(PrivacyLeakWarning):
                Z = tdata.normalise(X, how)
        else:
            Z = tdata.normalise(X, how)
        if how != "none":
            assert np.linalg.norm(Z, axis=1).max() <= 1 + 1e-12, how
    # "row" is per record: changing one record leaves every other scaled record unchanged ...
    X2 = X.copy()
    X2[0] *= 3
    np.testing.assert_array_equal(tdata.normalise(X, "row")[1:], tdata.normalise(X2, "row")[1:])
    # ... "max_norm" is not: one large record rescales everybody.
    assert not np.allclose(tdata.normalise(X, "max_norm", warn=False)[1:], tdata.normalise(X2, "max_norm", warn=False)[1:])


# --------------------------------------------------------------------------------------------------
# Fitting, noise, Algorithm 2 as printed, evaluation
# --------------------------------------------------------------------------------------------------
def _toy(n=300, d=4, seed=5):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d)) / np.sqrt(d) / 2
    y = np.where(X @ np.arange(1, d + 1) + 0.3 * rng.normal(size=n) > 0, 1.0, -1.0)
    return X, y


def test_l1_fit_with_intercept_satisfies_kkt_and_matches_liblinear_without():
    X, y = _toy()
    alpha = 0.01
    beta, c = pipeline.fit_l1_logistic(X + 0.3, y, alpha, intercept=True)
    z = y * ((X + 0.3) @ beta + c)
    slope = -y / (1 + np.exp(z)) / len(y)
    grad = (X + 0.3).T @ slope
    assert abs(slope.sum()) < 1e-6  # unpenalised intercept: zero derivative
    active = np.abs(beta) > 1e-8
    np.testing.assert_allclose(grad[active], -alpha * np.sign(beta[active]), atol=1e-6)
    assert np.all(np.abs(grad[~active]) <= alpha + 1e-6)
    # without an intercept the L-BFGS-B path and liblinear solve the same problem
    b_lib, _ = pipeline.fit_l1_logistic(X, y, alpha)
    assert b_lib.shape == (4,)
    z = y * (X @ b_lib)
    grad = X.T @ (-y / (1 + np.exp(z))) / len(y)
    act = np.abs(b_lib) > 1e-8
    np.testing.assert_allclose(grad[act], -alpha * np.sign(b_lib[act]), atol=1e-6)


def test_penalty_readings():
    X, y = _toy()
    n = len(y)
    np.testing.assert_allclose(pipeline.thesis_fit(X, y, 0.5, "l1_sum"), pipeline.thesis_fit(X, y, 0.5 / n, "l1_mean"), atol=1e-9)
    np.testing.assert_allclose(pipeline.thesis_fit(X, y, 0.01, "l2_mean"), solve_regularized_erm(X, y, 0.01).coef)
    # lassoglm: standardised columns, unpenalised intercept, coefficients returned on the original scale
    beta = pipeline.thesis_fit(3 * X + 1, y, 0.01, "lassoglm")
    np.testing.assert_allclose(beta * 3, pipeline.thesis_fit(X, y, 0.01, "lassoglm"), rtol=1e-5, atol=1e-7)
    with pytest.raises(ValueError):
        pipeline.thesis_fit(X, y, 0.01, "ridge")


def test_label_codings():
    m = np.array([True, False, True])
    np.testing.assert_array_equal(pipeline.code_labels(m, "M1B0"), [1, 0, 1])
    np.testing.assert_array_equal(pipeline.code_labels(m, "B1M0"), [0, 1, 0])
    np.testing.assert_array_equal(pipeline.code_labels(m, "pm1"), [1, -1, 1])
    with pytest.raises(ValueError):
        pipeline.code_labels(m, "yes/no")


def test_noise_readings_have_the_stated_laws():
    draws = pipeline.ThesisDraws.sample(np.random.default_rng(6), 20_000, 5)
    theta = 3.0
    norms = np.linalg.norm(pipeline.noise_vectors(draws, theta, "gamma_scale"), axis=1)
    rate_norms = np.linalg.norm(pipeline.noise_vectors(draws, theta, "gamma_rate"), axis=1)
    coords = pipeline.noise_vectors(draws, theta, "laplace_std")
    # Kolmogorov-Smirnov at level 1e-4: false-failure rate 1e-4 per check.
    assert stats.kstest(norms, stats.gamma(a=5, scale=theta).cdf).pvalue > 1e-4
    assert stats.kstest(rate_norms, stats.gamma(a=5, scale=1 / theta).cdf).pvalue > 1e-4
    assert stats.kstest(coords[:, 0], stats.laplace(scale=theta / np.sqrt(2)).cdf).pvalue > 1e-4
    assert coords[:, 0].std() == pytest.approx(theta, rel=0.05)  # the "standard deviation" reading
    with pytest.raises(ValueError):
        pipeline.noise_vectors(draws, theta, "gauss")


def test_thesis_algorithm2_equals_paper_form_on_pm1_and_solves_its_objective_on_01():
    X, y = _toy(200, 3)
    draws = pipeline.ThesisDraws.sample(np.random.default_rng(7), 4, 3)
    W = pipeline.thesis_objective_perturbation(X, y, 0.5, 0.05, draws)
    b = pipeline.noise_vectors(draws, 2 / 0.5, "gamma_scale")
    np.testing.assert_allclose(W, solve_regularized_erm(X, y, 0.05, b=b).coef)
    y01 = (y > 0).astype(float)
    for form in ("nips2008", "corrected"):
        W = pipeline.thesis_objective_perturbation(X, y01, 0.1, 0.05, draws, form=form)
        cal = objective_perturbation_calibration(0.1, 200, 0.05, form=form)
        b = pipeline.noise_vectors(draws, 1 / cal.noise_rate, "gamma_scale")
        # gradient of (λ+Δ)/2||w||² + bᵀw/n + (1/n)Σ ln(1 + exp(-y xᵀw)) with y in {0, 1}
        Z = (X * y01[:, None]) @ W.T
        grad = (0.05 + cal.ridge) * W + b / 200 - ((1 / (1 + np.exp(Z))).T @ (X * y01[:, None])) / 200
        assert np.abs(grad).max() < 1e-7


def test_error_definitions():
    S = np.array([[2.0], [-1.0], [0.5], [-3.0]])
    y = np.array([1.0, 1.0, -1.0, -1.0])
    usual = pipeline.thesis_errors(S, y)
    assert usual[0] == 0.5
    assert pipeline.thesis_errors(S, y, "inverted", "correct")[0] == usual[0]  # the two slips cancel on ±1
    assert pipeline.thesis_errors(S, y, "inverted", "misclassified")[0] == 1 - usual[0]
    y01 = np.array([1.0, 1.0, 0.0, 0.0])
    # ±1 predictions against 0/1 labels: every 0 is counted wrong
    assert pipeline.thesis_errors(S, y01)[0] == 0.75
    with pytest.raises(ValueError):
        pipeline.thesis_errors(S, y, "maybe")


# --------------------------------------------------------------------------------------------------
# Runners
# --------------------------------------------------------------------------------------------------
def test_folds():
    folds = tdata.thesis_folds(565)
    assert [t.size for _, t in folds] == [113] * 5
    assert sorted(np.concatenate([t for _, t in folds]).tolist()) == list(range(565))
    with pytest.raises(ValueError):
        tdata.thesis_folds(569)


def test_run_cells_is_independent_of_n_jobs_and_matches_the_diagnosis():
    pipe = pipeline.ThesisPipeline(normalisation="max_norm", labels="B1M0", penalty="l1_mean", prediction="sign",
                             error="misclassified")
    batch = [cells.Cell("real", pipe, None, 0.01, (0.1, 0.5), n_restarts=20),
             cells.Cell("real", pipe, 100, 0.01, (0.1,), n_restarts=20)]
    e1, _ = cells.run_cells(batch, n_jobs=1)
    e2, _ = cells.run_cells(batch, n_jobs=2)
    assert e1.keys() == e2.keys()
    for key in e1:
        np.testing.assert_array_equal(e1[key], e2[key])
    table = diagnosis.diagnosis_search("real", n_restarts=20, penalties=("l1_mean",), small_n=None)
    row = table[(table.normalisation == "max_norm") & (table.labels == "B1M0") & (table.noise == "gamma_scale")
                & (table.noise_n == "train") & (table.rule == "sign/misclassified")].iloc[0]
    for method in ("standard", "sensitivity", "objective"):
        np.testing.assert_allclose(row[f"fold_{method}"], cells.cell_errors(e1, batch[0], method).mean(axis=1))
    assert diagnosis.pipeline_from_row(row) == pipe
    assert len(table) == 5 * 3 * 3 * 2 * 4


def test_sound_pipeline_replicas_stand_for_a_larger_data_set():
    # Algorithm 1 depends on n·ε only: m = 2 at ε = 0.5 equals m = 1 at ε = 1 draw for draw
    sound = pipeline.SoundPipeline()
    a = cells.Cell("real", sound, None, 0.001, (0.5,), ("sensitivity",), 10, replicas=2)
    b = cells.Cell("real", sound, None, 0.001, (1.0,), ("sensitivity",), 10, replicas=1)
    e, _ = cells.run_cells([a, b])
    np.testing.assert_array_equal(e[(a, "sensitivity", 0.5)], e[(b, "sensitivity", 1.0)])
    # Algorithm 2 on m copies solves the same objective with noise calibrated for m n records: more
    # records, less noise, so the error does not grow (fold means; 20 restarts)
    c = [cells.Cell("real", sound, None, 0.001, (0.5,), ("objective",), 20, replicas=m) for m in (1, 100)]
    e, _ = cells.run_cells(c)
    assert e[(c[1], "objective", 0.5)].mean() <= e[(c[0], "objective", 0.5)].mean()
    with pytest.raises(ValueError):
        cells.Cell("real", pipeline.LITERAL, replicas=2)


def test_records_needed_and_curve_table():
    sound = pipeline.SoundPipeline()
    batch = cells.sample_size_cells(sound, replicas=(1, 50), lambdas=(1e-3,), epsilons=(1.0,), n_restarts=5)
    errors, _ = cells.run_cells(batch)
    curves = cells.curve_table(errors, batch)
    assert set(curves.n_train) == {452, 22_600}
    need = cells.records_needed(errors, batch, target=1.0)
    assert (need.n_needed == 452).all()
    need = cells.records_needed(errors, batch, target=-1.0)
    assert need.n_needed.isna().all()


def test_best_match_and_verdicts():
    table = pd.DataFrame({"penalty": ["a", "b"], "standard": [0.30, 0.39],
                          "fold_standard": [np.full(5, 0.30), np.array([0.38, 0.39, 0.40, 0.39, 0.39])]})
    ranked = diagnosis.best_match(table, {"standard": published.thesis_value("real", "standard")})
    assert list(ranked.penalty) == ["b", "a"] and list(ranked.reproduced) == [1, 0]
    assert diagnosis.best_match(table, {"standard": published.thesis_value("real", "standard")}, penalty=("a",)).shape[0] == 1
    results = {(v.data, v.method): np.full((5, 3), v.value) for v in published.TABLE2}
    results[("real", "objective")] = np.full((5, 3), 0.2)
    v = cells.verdicts(results)
    assert v.reproduced.sum() == 8 and not v.set_index(["data", "method"]).loc[("real", "objective"), "reproduced"]
    expected = replication_verdict(0.391, results[("real", "standard")], lambda F: F.mean(), 3)
    assert v.iloc[6].reproduced == expected.reproduced


def test_lambda_search_and_timing():
    table = cells.lambda_search("real", pipeline.SoundPipeline(), lambdas=(1e-4, 1e-2, 1.0))
    assert table.attrs["fold_errors"].shape == (5, 3) and table.attrs["best"] in (1e-4, 1e-2, 1.0)
    assert table.loc[table.lam == table.attrs["best"], "minimiser"].all()
    X, y = _toy(100, 3)
    times = study.time_fits(X, y, repeats=1, n_draws=4, random_state=0)
    assert len(times) == 5 and (times.seconds > 0).all()


def test_time_fits_reports_the_median_per_fit_and_per_draw(monkeypatch):
    # A clock that advances one second per reading makes every timed call last exactly 1 s: the table must
    # then show 1 s per single fit and 1/n_draws s per draw of a batch, after one untimed warm-up call each.
    ticks = iter(range(10_000))
    monkeypatch.setattr(study.time, "perf_counter", lambda: float(next(ticks)))
    X, y = _toy(100, 3)
    times = study.time_fits(X, y, repeats=3, n_draws=8, random_state=0).set_index("fit").seconds
    assert list(times.index) == ["standard LR (one fit)", "Algorithm 1 (one fit)", "Algorithm 2 (one fit)",
                                 "Algorithm 1 (8 batched, per draw)", "Algorithm 2 (8 batched, per draw)"]
    np.testing.assert_array_equal(times.to_numpy(), [1.0, 1.0, 1.0, 1 / 8, 1 / 8])
    assert next(ticks) == 5 * 3 * 2  # three timed calls per fit, two clock readings each; warm-ups untimed


def test_the_pipelines_say_they_are_not_estimators_in_docstring_and_repr():
    from dplr.replication.thesis.pipeline import LITERAL, SoundPipeline, ThesisPipeline

    for obj in (LITERAL, SoundPipeline()):
        assert type(obj).__doc__.splitlines()[0].startswith("Not an estimator")
        assert "not an estimator" in repr(obj) and eval(repr(obj)) == obj
    assert "not differentially private" in repr(ThesisPipeline(labels="pm1"))

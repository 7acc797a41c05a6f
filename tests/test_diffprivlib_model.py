"""diffprivlib's objective perturbation as a pure function (issue 17), and dplr's norm_bound scaling.

The record ``benchmarks/diffprivlib_audit.json`` was written by diffprivlib 0.6.6 itself
(``benchmarks/diffprivlib_audit.py``, in its own environment); these tests hold dplr's model to it. All
tests here are deterministic (no sampling).
"""
import json
from pathlib import Path

import numpy as np
import pytest

from dplr.analysis.diffprivlib_model import (
    diffprivlib_calibration,
    diffprivlib_privacy_loss,
    intercept_construction,
    intercept_upper_bound,
    proven_upper_bound,
    unit_ball_equivalent,
)
from dplr.analysis.objective_perturbation_search import coupled_privacy_bound, search_privacy_loss
from dplr.calibration import objective_perturbation_calibration
from dplr.estimators import ObjectivePerturbation

RECORD = Path(__file__).resolve().parents[1] / "benchmarks" / "diffprivlib_audit.json"


@pytest.fixture(scope="module")
def record():
    return json.loads(RECORD.read_text())


def _expand(compacted):
    rows = np.repeat(np.array(compacted["rows"]), compacted["counts"], axis=0)
    return rows[:, :-1], rows[:, -1]


def test_model_reproduces_diffprivlib_recorded_delta_and_noise_scale(record):
    assert record["versions"]["diffprivlib"] == "0.6.6"
    assert len(record["calibration"]) == 72  # 36 settings, shipped and corrected
    for c in record["calibration"]:
        cal = diffprivlib_calibration(c["epsilon"], c["n"], c["C"], c["data_norm"], c["fit_intercept"],
                                      c["corrected"])
        assert cal.noise_scale == pytest.approx(c["noise_scale"], rel=1e-12)
        assert cal.ridge == pytest.approx(c["delta"], rel=1e-12, abs=1e-15)


def test_shipped_calibration_is_cms11_at_unit_norm_and_not_above():
    for eps in (0.1, 1.0, 5.0):
        for n in (100, 10_000):
            shipped = diffprivlib_calibration(eps, n, 1.0, 1.0, fit_intercept=False)
            jmlr = objective_perturbation_calibration(eps, n, 1.0 / n)
            assert (shipped.epsilon_prime, shipped.ridge) == pytest.approx((jmlr.epsilon_prime, jmlr.ridge))
            assert shipped.noise_rate == pytest.approx(jmlr.noise_rate)
            for q in (10.0, 100.0):
                # c q in place of c q^2: a smaller Delta (or a larger eps') than CMS11 needs
                s, k = (diffprivlib_calibration(eps, n, 1.0, q, False, corrected=c) for c in (False, True))
                assert s.ridge < k.ridge or s.epsilon_prime > k.epsilon_prime


def test_corrected_calibration_is_proven_private_and_shipped_is_not_for_large_norms():
    for fit_intercept in (False, True):
        for q in (1.0, 10.0, 100.0):
            for eps in (0.1, 1.0, 5.0):
                assert proven_upper_bound(diffprivlib_calibration(eps, 100, 1.0, q, fit_intercept, True)) < eps
    assert proven_upper_bound(diffprivlib_calibration(1.0, 100, 1.0, 100.0, False)) > 3.0
    assert intercept_upper_bound(diffprivlib_calibration(1.0, 100, 1.0, 1.0, True)) == np.inf
    assert intercept_upper_bound(diffprivlib_calibration(0.1, 100, 1.0, 1.0, True)) < 0.1


def test_unit_ball_equivalent_has_the_same_privacy_loss():
    # the worst pair of the equivalent, rescaled into diffprivlib's coordinates, has the same exact loss
    cal = diffprivlib_calibration(1.0, 60, 1.0, 10.0, fit_intercept=False)
    setting = unit_ball_equivalent(cal)
    case = search_privacy_loss([setting], 2, n_starts=4, n_steps=(150, 80, 150), random_state=0)[0]
    pair = case.pair()
    direct = diffprivlib_privacy_loss(case.w / 10.0, 10.0 * pair.X, (pair.y > 0), 10.0 * pair.X_prime,
                                      (pair.y_prime > 0), cal)[0][0]
    assert direct == pytest.approx(case.value, rel=1e-9)
    assert case.value <= coupled_privacy_bound(setting[2], setting[0], setting[1]) + 1e-12
    n, lam, eps, form = setting
    unit = objective_perturbation_calibration(eps, n, lam)
    assert unit.ridge == 0 and unit.noise_rate == pytest.approx(10.0 * cal.noise_rate)


def test_recorded_worst_pairs_recompute_in_diffprivlib_coordinates(record):
    for row in record["worst"]:
        cal = diffprivlib_calibration(row["epsilon"], row["n"], row["C"], row["data_norm"], row["fit_intercept"],
                                      row["corrected"])
        (X, y), (Xp, yp) = _expand(row["D"]), _expand(row["D_prime"])
        value = diffprivlib_privacy_loss(np.array(row["w"]), X, y, Xp, yp, cal)[0][0]
        assert value == pytest.approx(row["unit_ball_value"], rel=1e-7, abs=1e-9)
        assert value <= proven_upper_bound(cal) + 1e-9


def test_intercept_construction_grows_without_bound():
    cal = diffprivlib_calibration(1.0, 100, 1.0, 1.0, fit_intercept=True)
    assert cal.ridge == 0
    for t in (20.0, 40.0, 80.0):
        X, y, Xp, yp, w = intercept_construction(100, cal, t)
        total, _, _ = diffprivlib_privacy_loss(w, X, y, Xp, yp, cal)
        assert total[0] >= t - np.log(4 * 100) - cal.epsilon_prime  # the chapter's proof
    fixed = diffprivlib_calibration(1.0, 100, 1.0, 1.0, fit_intercept=True, corrected=True)
    X, y, Xp, yp, w = intercept_construction(100, fixed, 80.0)
    assert diffprivlib_privacy_loss(w, X, y, Xp, yp, fixed)[0][0] < 1.0


@pytest.mark.parametrize("R", [1.0, 10.0, 100.0])
@pytest.mark.parametrize("eps", [0.1, 1.0, 5.0])
@pytest.mark.parametrize("n", [100, 10_000])
def test_norm_bound_calibration_scales_sensitivity_with_R_and_curvature_with_R_squared(R, eps, n):
    lam = 1.0 / n
    unit = objective_perturbation_calibration(eps, n, lam)
    # rows with ||x|| <= R: |d/dw l(y w.x)| <= R, curvature <= c R^2; fitting X/R with lam is the
    # original-scale problem with regulariser lam R^2
    scaled = objective_perturbation_calibration(eps, n, lam * R**2, curvature=0.25 * R**2, lipschitz=R)
    assert scaled.epsilon_prime == pytest.approx(unit.epsilon_prime, rel=1e-12)
    assert scaled.ridge == pytest.approx(unit.ridge * R**2, rel=1e-12, abs=1e-300)
    assert scaled.noise_rate == pytest.approx(unit.noise_rate / R, rel=1e-12)
    assert coupled_privacy_bound(eps, n, lam) < eps


@pytest.mark.parametrize("R", [10.0, 100.0])
def test_norm_bound_estimator_is_the_unit_ball_mechanism_rescaled(R):
    rng = np.random.default_rng(1)
    X = rng.standard_normal((80, 2))
    X /= np.maximum(1.0, np.linalg.norm(X, axis=1))[:, None]
    y = np.where(rng.random(80) < 0.5, -1, 1)
    for eps in (0.1, 1.0, 5.0):
        unit = ObjectivePerturbation(epsilon=eps, lam=0.01, random_state=3).fit(X, y)
        scaled = ObjectivePerturbation(epsilon=eps, lam=0.01, norm_bound=R, random_state=3).fit(R * X, y)
        np.testing.assert_allclose(scaled.coef_ * R, unit.coef_, rtol=1e-10, atol=1e-12)
        assert scaled.calibration_ == unit.calibration_
    # in original coordinates the estimator is the corrected calibration with data_norm R and lam R^2 (C below):
    # its unit-ball equivalent is the R = 1 mechanism itself, whatever R
    n, lam = 80, 0.01
    for eps in (0.1, 1.0, 5.0):
        original = diffprivlib_calibration(eps, n, 1.0 / (n * lam * R**2), R, False, corrected=True)
        unit = diffprivlib_calibration(eps, n, 1.0 / (n * lam), 1.0, False, corrected=True)
        assert original.lam == pytest.approx(lam * R**2) and original.ridge == pytest.approx(unit.ridge * R**2)
        assert original.noise_rate == pytest.approx(unit.noise_rate / R)
        np.testing.assert_allclose(unit_ball_equivalent(original)[1:3], unit_ball_equivalent(unit)[1:3], rtol=1e-12)

"""The paper's study (dplr.replication.paper): seeding, readings, splits, summaries, verdict logic, n_jobs invariance."""
import dataclasses

import numpy as np
import pytest

from dplr.calibration import objective_perturbation_calibration
from dplr.objective import regularized_erm_gradient
from dplr.replication.paper.lambda_tuning import lambda_tuning_result, tune_lambda
from dplr.replication.paper.protocol import (
    FIGURE1_VARIANTS,
    DataSpec,
    Figure1Variant,
    Reading,
    Task,
    cv_splits,
    epsilon_curve_tasks,
    expand,
    figure1_tasks,
    learning_curve_tasks,
    private_classifiers,
    run_task,
    run_tasks,
)
from dplr.replication.paper.published import FIGURE2_AXES
from dplr.replication.paper.study import Replication, run_replication
from dplr.replication.paper.summaries import (
    STD_READINGS,
    cell_errors,
    correction_effect,
    effective_epsilon,
    interpolate_log_epsilon,
    summarise_cell,
)
from dplr.replication.seeding import task_seed_sequence
from dplr.tuning import test_error

SMALL = DataSpec("unseparable", n=600)


def misclassification_rates(W, X, y):
    """Test error of each row of ``W`` (a 1-D ``W`` is one row), as the protocol computes it."""
    return test_error(np.atleast_2d(W), X, y)


def _data(n=400, seed=0):
    return DataSpec("unseparable", n=n).generate(seed)


def test_seed_sequences_are_keyed_by_content():
    a = np.random.default_rng(task_seed_sequence(1, "restarts", "separable", 3)).random(4)
    b = np.random.default_rng(task_seed_sequence(1, "restarts", "separable", 3)).random(4)
    c = np.random.default_rng(task_seed_sequence(1, "restarts", "separable", 4)).random(4)
    d = np.random.default_rng(task_seed_sequence(2, "restarts", "separable", 3)).random(4)
    np.testing.assert_array_equal(a, b)
    assert not np.allclose(a, c) and not np.allclose(a, d)
    assert task_seed_sequence(1, "x", 5).spawn_key == task_seed_sequence(1, "x", 5).spawn_key


def test_data_specs_and_folds():
    X, y = SMALL.generate(0)
    X2, y2 = SMALL.generate(0)
    np.testing.assert_array_equal(X, X2)
    holdout = dataclasses.replace(SMALL, role="holdout").generate(0)[0]
    assert not np.allclose(X, holdout)
    splits = cv_splits(SMALL, 5, 0)
    tests = np.concatenate([test for _, test in splits])
    assert sorted(tests.tolist()) == list(range(600))
    for train, test in splits:
        assert train.size == 480 and test.size == 120 and not set(train) & set(test)
    assert DataSpec("separable", support="ball", margin_method="shift").label() == "separable, ball, shift"
    with pytest.raises(ValueError):
        DataSpec("circles")


def test_test_errors_counts_sign_mistakes():
    X = np.array([[1.0, 0.0], [-1.0, 0.0], [0.0, 1.0], [0.0, 0.0]])
    y = np.array([1.0, -1.0, -1.0, 1.0])
    W = np.array([[1.0, 0.0], [-1.0, 0.0]])
    # classifier 1: rows 0, 1 right; row 2 has score 0 -> -1, right; row 3 score 0 -> -1, wrong.
    np.testing.assert_allclose(misclassification_rates(W, X, y), [0.25, 0.75])


@pytest.mark.parametrize("objective", ["sum", "sum_loss"])
def test_sum_readings_minimise_the_sum_objectives(objective):
    X, y = _data(300)
    n, lam, eps = X.shape[0], 0.01, 0.1
    W = private_classifiers(X, y, "objective", lam, eps, "nips2008", Reading(objective=objective), n_draws=3,
                            random_state=np.random.default_rng(1))
    # Recreate the same b and check the gradient of the sum-form objective vanishes.
    calibration = objective_perturbation_calibration(eps, n, lam, form="nips2008")
    b = calibration.mechanism(10).sample(3, np.random.default_rng(1))
    # sum:      lam/2|w|^2 + b'w   + sum(loss)  -> gradient = lam w + b   + n * mean-gradient
    # sum_loss: lam/2|w|^2 + b'w/n + sum(loss)
    b_term = b if objective == "sum" else b / n
    mean_loss_grad = regularized_erm_gradient(W, X, y, lam=1e-300) - 1e-300 * W
    grad = lam * W + b_term + n * mean_loss_grad
    assert np.max(np.linalg.norm(grad, axis=1)) < 1e-6 * n


def test_gamma_rate_reading_and_noise_n_total_change_the_noise_scale():
    X, y = _data(400)
    lam, eps = 0.01, 0.1
    w_star = private_classifiers(X, y, "standard", lam)[0]
    scale = Reading(gamma="rate")
    total = Reading(noise_n="total")
    default = private_classifiers(X, y, "sensitivity", lam, eps, n_draws=4000,
                                  random_state=np.random.default_rng(2)) - w_star
    rate = private_classifiers(X, y, "sensitivity", lam, eps, reading=scale, n_draws=4000,
                               random_state=np.random.default_rng(2)) - w_star
    bigger_n = private_classifiers(X, y, "sensitivity", lam, eps, reading=total, n_draws=4000,
                                   random_state=np.random.default_rng(2), n_total=1000) - w_star
    theta = 2 / (400 * lam * eps)  # the paper's Γ(d, 2/(nλε)) parameter
    # Same underlying draws (common random numbers): the norms scale exactly.
    norms = np.linalg.norm(default, axis=1)
    np.testing.assert_allclose(np.linalg.norm(rate, axis=1), norms / theta**2, rtol=1e-10)
    np.testing.assert_allclose(np.linalg.norm(bigger_n, axis=1), norms * 400 / 1000, rtol=1e-10)
    # Mean norm d*theta under the scale reading: 4000 draws, relative sd 1/sqrt(40000) = 0.5%; 5 sd tolerance.
    assert abs(norms.mean() / (10 * theta) - 1) < 0.025


def test_run_task_swapped_and_subset_match_manual_computation():
    X, y = SMALL.generate(0)
    train, test = cv_splits(SMALL, 5, 0)[2]
    swapped = run_task(Task(SMALL, 2, "standard", reading=Reading(cv="swapped")), seed=0)
    w = private_classifiers(X[test], y[test], "standard", 0.01)
    np.testing.assert_array_equal(swapped, misclassification_rates(w, X[train], y[train]))
    subset = run_task(Task(SMALL, 2, "standard", n_train=100), seed=0)
    w = private_classifiers(X[train[:100]], y[train[:100]], "standard", 0.01)
    np.testing.assert_array_equal(subset, misclassification_rates(w, X[test], y[test]))
    with pytest.raises(ValueError, match="exceeds"):
        run_task(Task(SMALL, 0, "standard", n_train=10_000), seed=0)


def test_tasks_validate_their_fields():
    with pytest.raises(ValueError):
        Task(SMALL, 0, "objective", epsilon=0.1)  # no form
    with pytest.raises(ValueError):
        Task(SMALL, 0, "sensitivity")  # no epsilon
    with pytest.raises(ValueError):
        Task(SMALL, 5, "standard")
    with pytest.raises(ValueError):
        Reading(gamma="shape")
    assert Task(SMALL, 0, "standard", epsilon=0.3).epsilon is None


def test_common_random_numbers_make_the_correction_a_paired_comparison():
    # At n = 480, lam = 0.01, eps = 0.1: eps' = 0.1 - log(1 + 2c/(n lam) + ...) = 0.0036, so the corrected
    # form's noise is ~28x larger on the same draws and its error must be larger in every fold.
    cells = figure1_tasks(SMALL, n_restarts=50)
    errors, _ = run_tasks(expand(cells), seed=0)
    effect = correction_effect(errors, cells)
    assert len(effect) == 1 and effect.difference[0] > 0.02 and effect.significant[0]
    assert np.isclose(effect.epsilon_prime[0], objective_perturbation_calibration(0.1, 480, 0.01).epsilon_prime)


def test_summaries_and_std_readings():
    E = np.arange(10, dtype=float).reshape(5, 2) / 10
    s = summarise_cell(E)
    assert np.isclose(s["mean"], 0.45)
    assert np.isclose(s["std_fold"], np.std([0.05, 0.25, 0.45, 0.65, 0.85], ddof=1))
    assert np.isclose(s["std_all_runs"], np.std(E.ravel(), ddof=1))
    assert np.isclose(s["std_within_fold"], np.std([0, 0.1], ddof=1))
    assert np.isclose(s["std_per_restart"], np.std(E[:, 0], ddof=1))
    assert s["ci_low"] < 0.45 < s["ci_high"]
    assert set(STD_READINGS) == {"fold", "fold_ddof0", "all_runs", "within_fold", "per_restart"}


def test_effective_epsilon_inverts_a_log_linear_curve():
    eps = np.array([0.01, 0.02, 0.05, 0.1])
    means = 0.5 - 0.1 * np.log(eps / 0.01)  # decreasing in eps, linear in log eps
    assert np.isclose(effective_epsilon(eps, means, 0.5 - 0.1 * np.log(3.0)), 0.03)
    assert np.isnan(effective_epsilon(eps, means, 0.9))
    assert np.isclose(interpolate_log_epsilon(eps, means, 0.03), 0.5 - 0.1 * np.log(3.0))
    with pytest.raises(ValueError):
        interpolate_log_epsilon(eps, means, 0.2)


def test_lambda_tuning_rule():
    # Ties go to the largest lambda; one_se is the largest lambda within one standard error of the minimum.
    rows = [[0.0, 0.0, 0.01], [0.0, 0.0, 0.02], [0.0, 0.0, 0.0], [0.0, 0.0, 0.01], [0.0, 0.0, 0.0]]
    tuning = lambda_tuning_result((1e-3, 1e-2, 1e-1), rows)
    assert tuning.best == 1e-2 and tuning.one_se == 1e-2 and tuning.minimisers() == (1e-3, 1e-2)
    rows = [[0.05, 0.05, 0.06], [0.04, 0.05, 0.06], [0.05, 0.05, 0.06], [0.06, 0.055, 0.06], [0.05, 0.05, 0.06]]
    tuning = lambda_tuning_result((1e-3, 1e-2, 1e-1), rows)
    assert tuning.best == 1e-3 and tuning.one_se == 1e-2
    assert tuning.within_one_se(1e-2) and not tuning.within_one_se(1e-1)
    real = tune_lambda("unseparable", lambdas=(1e-3, 1e-2), n_holdout=500, seed=0)
    assert real.fold_errors.shape == (5, 2) and real.best in (1e-3, 1e-2)


def test_results_do_not_depend_on_the_number_of_workers():
    kwargs = dict(seed=3, n_restarts=4, n_total=500, n_holdout=300, sizes=(200, 400), epsilons=(0.05, 0.2),
                  epsilon_n=300, variants=(Figure1Variant("default", "d"),
                                           Figure1Variant("epsilon=0.05", "e", epsilon=0.05),
                                           Figure1Variant("lambda=tuned", "t", lam=None),
                                           Figure1Variant("support=ball", "b", data_options=(("support", "ball"),))))
    serial = run_replication(n_jobs=1, **kwargs)
    parallel = run_replication(n_jobs=2, **kwargs)
    assert serial.errors.keys() == parallel.errors.keys()
    for task, errors in serial.errors.items():
        np.testing.assert_array_equal(errors, parallel.errors[task])
    for kind in ("separable", "unseparable"):
        np.testing.assert_array_equal(serial.tuning[kind].fold_errors, parallel.tuning[kind].fold_errors)
    assert serial.fitted_epsilon == parallel.fitted_epsilon
    # The tables the chapter prints are built from these errors, so they agree too.
    assert serial.figure1_table().equals(parallel.figure1_table())
    assert serial.readings_summary().equals(parallel.readings_summary())
    assert len(serial.learning_curves()) == 2 * 2 * 4 and len(serial.epsilon_curves()) == 2 * 2 * 3
    assert set(serial.claims().claim) == {"figure1_order", "learning_final", "learning_smaller",
                                          "epsilon_majority", "epsilon_small"}
    assert list(serial.axis_check().panel) == ["a", "b", "c", "d"]
    assert cell_errors(serial.errors, serial.parts["figure1"][1]).shape == (5, 4)


# --------------------------------------------------------------------------------------------------
# The verdict logic of the chapter: the text's claims and the plotted ranges, on errors made to order
# --------------------------------------------------------------------------------------------------
SIZES, EPSILONS = (100, 200, 400), (0.01, 0.05, 0.1)  # n = 500: the full training part of a fold is 400


def _made_to_order(level):
    """A Replication whose every task has the errors ``level(task) + 0.001 * fold`` (5 folds, 3 restarts).

    The fold offsets are shared by all methods, so every fold-paired difference is exact (no spread):
    a claim holds or fails by the sign of the difference alone.
    """
    parts = {"figure1": [], "learning": [], "epsilon": []}
    for kind in ("separable", "unseparable"):
        data = DataSpec(kind, n=500)
        parts["figure1"] += figure1_tasks(data, n_restarts=3)
        parts["learning"] += learning_curve_tasks(data, SIZES, n_restarts=3)
        parts["epsilon"] += epsilon_curve_tasks(data, EPSILONS, n_train=200, n_restarts=3)
    tasks = set(expand([c for cells in parts.values() for c in cells]))
    errors = {t: np.full(t.n_restarts, level(t) + 0.001 * t.fold) for t in tasks}
    return Replication(seed=0, n_restarts=3, errors=errors, seconds={}, parts=parts, tuning={}, wall_seconds={},
                       variants=FIGURE1_VARIANTS[:1])


def _paper_like(task, sensitivity_small=0.10, objective_final=0.15, objective_large_eps=0.15):
    """Standard LR 0.02, the new method 0.15, the sensitivity method 0.30; the three knobs change one claim each."""
    if task.method == "standard":
        return 0.02
    if task.method == "sensitivity":
        return sensitivity_small if task.epsilon == EPSILONS[0] else 0.30
    if task.n_train is None:
        return objective_final
    return objective_large_eps if task.epsilon in EPSILONS[1:] else 0.15


def _holds(replication, form="nips2008"):
    claims = replication.claims(form=form)
    return {(row.claim, row.data): row.holds for row in claims.itertuples()}


def test_claims_hold_when_the_errors_say_so():
    holds = _holds(_made_to_order(_paper_like))
    assert set(holds.values()) == {True} and len(holds) == 10
    assert set(_holds(_made_to_order(_paper_like), form="corrected").values()) == {True}


def test_each_claim_fails_when_its_comparison_turns():
    # the new method worse than the sensitivity method at the full training size: the final learning-curve
    # point fails, and Figure 1 (the same cell) no longer orders the methods as the text says
    holds = _holds(_made_to_order(lambda t: _paper_like(t, objective_final=0.35)))
    assert not holds[("learning_final", "separable")] and not holds[("figure1_order", "unseparable")]
    assert holds[("learning_smaller", "separable")] and holds[("epsilon_majority", "separable")]
    # the sensitivity method no better at the smallest epsilon: "sensitivity better for very small eps" fails
    holds = _holds(_made_to_order(lambda t: _paper_like(t, sensitivity_small=0.30)))
    assert not holds[("epsilon_small", "separable")] and holds[("epsilon_majority", "separable")]
    # the new method worse at the two larger epsilons: it wins at 1 of 3, not a majority
    holds = _holds(_made_to_order(lambda t: _paper_like(t, objective_large_eps=0.40)))
    assert not holds[("epsilon_majority", "unseparable")] and holds[("learning_final", "unseparable")]
    # a tie is not a win: equal errors at every smaller size
    holds = _holds(_made_to_order(lambda t: 0.30 if t.method != "standard" and t.n_train in SIZES[:-1]
                                  else _paper_like(t)))
    assert not holds[("learning_smaller", "separable")]


def test_axis_check_counts_the_points_inside_the_papers_ranges():
    rep = _made_to_order(_paper_like)
    axis = rep.axis_check().set_index("panel")
    # panels a, b: three methods x three sizes; c, d: two methods x three epsilons
    assert list(axis.points) == [9, 9, 6, 6]
    # standard LR (0.02) is inside a's range from 0 but below b's from 0.05; the sensitivity method's 0.10 at the
    # smallest epsilon and the new method's 0.15 are inside c's range (from 0.1), below d's (from 0.2)
    assert axis.loc["a", "inside"] == 9 and axis.loc["b", "inside"] == 6
    assert axis.loc["c", "inside"] == 6 and axis.loc["d", "inside"] == 2
    assert FIGURE2_AXES["b"].y_range[0] == 0.05 and FIGURE2_AXES["d"].y_range[0] == 0.2
    assert axis.loc["b", "our_min"] == pytest.approx(0.022)  # fold offsets 0..0.004, mean 0.002

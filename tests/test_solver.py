"""The solvers: the batched Newton against scipy.optimize, scikit-learn and the reference damped Newton."""
import numpy as np
import pytest
from scipy.optimize import minimize
from sklearn.exceptions import ConvergenceWarning
from sklearn.linear_model import LogisticRegression

from dplr.mechanisms import sample_vector_laplace
from dplr.calibration import objective_perturbation_calibration
from dplr.datasets.simulated import make_separable
from dplr.losses import get_loss
from dplr.objective import RegularizedERM, regularized_erm_gradient, regularized_erm_objective
from dplr.solver import damped_newton, solve_on_part, solve_regularized_erm
from dplr.replication.paper import protocol as ex
from dplr.solver import design
from dplr.solver.taylor import remainder_update


def _problem(n, d, seed, noise=0.3):
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, d))
    X /= np.maximum(1.0, np.linalg.norm(X, axis=1, keepdims=True))
    w = rng.standard_normal(d)
    y = np.where(X @ w + noise * rng.standard_normal(n) > 0, 1.0, -1.0)
    return X, y


CASES = [  # (n, d, lam, loss, ridge, beta of b or None)
    (300, 2, 1e-2, "logistic", 0.0, None),
    (500, 5, 1e-3, "logistic", 0.0, 0.05),
    (200, 10, 1.0, "logistic", 0.3, 0.5),
    (400, 4, 1e-2, "huber", 0.0, 0.05),
    (150, 3, 1e-1, "huber", 0.05, None),
]


@pytest.mark.parametrize("n, d, lam, loss, ridge, beta", CASES)
def test_matches_scipy_lbfgs_to_high_accuracy(n, d, lam, loss, ridge, beta):
    X, y = _problem(n, d, seed=n + d)
    b = None if beta is None else sample_vector_laplace(beta, d, random_state=d)
    result = solve_regularized_erm(X, y, lam, loss, b=b, ridge=ridge)
    assert result.converged and result.grad_norm[0] <= 1e-8

    def fun(w):
        return regularized_erm_objective(w, X, y, lam, loss, b=b, ridge=ridge)[0]

    def jac(w):
        return regularized_erm_gradient(w, X, y, lam, loss, b=b, ridge=ridge)[0]

    reference = minimize(fun, np.zeros(d), jac=jac, method="L-BFGS-B",
                         options={"gtol": 1e-11, "ftol": 0, "maxiter": 10_000})
    # Strong convexity: ||w - w*|| <= ||grad|| / (lam + ridge); both gradients are tiny.
    bound = (np.linalg.norm(jac(reference.x)) + 1e-8) / (lam + ridge)
    assert np.linalg.norm(result.coef - reference.x) <= bound + 1e-12
    assert fun(result.coef) <= fun(reference.x) + 1e-12


def test_batch_equals_one_at_a_time():
    X, y = _problem(400, 6, seed=3)
    B = sample_vector_laplace(0.05, 6, size=7, random_state=11)
    batch = solve_regularized_erm(X, y, 0.01, b=B).coef
    singles = np.array([solve_regularized_erm(X, y, 0.01, b=B[j]).coef for j in range(7)])
    np.testing.assert_allclose(batch, singles, atol=1e-10)
    assert batch.shape == (7, 6)


def test_agrees_with_sklearn_logistic_regression_when_objectives_coincide():
    # lam/2 ||w||^2 + mean loss  ==  (1/(n lam)) * [ ||w||^2/2 + C * sum loss ] with C = 1/(n lam).
    X, y = _problem(600, 5, seed=8)
    lam = 0.01
    ours = solve_regularized_erm(X, y, lam).coef
    theirs = LogisticRegression(C=1 / (len(y) * lam), fit_intercept=False, tol=1e-12, max_iter=10_000).fit(X, y)
    np.testing.assert_allclose(ours, theirs.coef_[0], atol=1e-7)


def test_bad_inputs():
    X, y = _problem(50, 3, seed=0)
    with pytest.raises(ValueError, match="lam"):
        solve_regularized_erm(X, y, 0.0)
    with pytest.raises(ValueError, match="-1, \\+1"):
        solve_regularized_erm(X, (y > 0).astype(float), 0.1)
    with pytest.raises(ValueError, match="shape"):
        solve_regularized_erm(X, y, 0.1, b=np.zeros((2, 4)))
    with pytest.raises(ValueError, match="ridge"):
        solve_regularized_erm(X, y, 0.1, ridge=-1.0)


def test_warns_when_not_converged():
    X, y = _problem(100, 3, seed=1)
    with pytest.warns(ConvergenceWarning, match="did not reach"):
        result = solve_regularized_erm(X, y, 1e-4, max_iter=1)
    assert not result.converged


def _gradient_norms(W, X, y, lam, loss="logistic", b=None, ridge=0.0):
    return np.linalg.norm(regularized_erm_gradient(W, X, y, lam, loss, b=b, ridge=ridge), axis=1)


@pytest.mark.parametrize("loss", ["logistic", "huber"])
def test_results_do_not_depend_on_threads_and_only_by_rounding_on_chunks(loss):
    X, y = _problem(3000, 5, seed=21)
    B = sample_vector_laplace(0.02, 5, size=90, random_state=5)
    runs = {(chunk, threads): solve_regularized_erm(X, y, 0.01, loss, b=B, chunk_size=chunk, n_threads=threads)
            for chunk in (None, 7, 90) for threads in (1, 3)}
    for (chunk, threads), result in runs.items():
        assert result.converged and np.all(_gradient_norms(result.coef, X, y, 0.01, loss, b=B) <= 1e-8)
        # same chunks, any number of threads: bit for bit
        np.testing.assert_array_equal(result.coef, runs[(chunk, 1)].coef)
        np.testing.assert_array_equal(result.n_iter, runs[(chunk, 1)].n_iter)
        # other chunks: the same minimisers (||w - w*|| <= ||grad|| / lam)
        np.testing.assert_allclose(result.coef, runs[(None, 1)].coef, atol=2e-6)


def test_taylor_start_gives_the_minimisers_of_one_at_a_time_solves():
    # d = 4 and k = 40: the batch uses the third-order Taylor start and the model's Hessian estimate.
    X, y = _problem(2000, 4, seed=13)
    B = sample_vector_laplace(0.05, 4, size=40, random_state=2)
    batch = solve_regularized_erm(X, y, 0.01, b=B, ridge=0.002)
    assert batch.converged and np.all(batch.n_iter <= 6)
    singles = np.array([solve_regularized_erm(X, y, 0.01, b=b, ridge=0.002, tol=1e-12).coef for b in B])
    np.testing.assert_allclose(batch.coef, singles, atol=1e-6)  # ||w - w*|| <= tol / (lam + ridge)
    assert np.all(_gradient_norms(batch.coef, X, y, 0.01, b=B, ridge=0.002) <= 1e-8)
    cold = solve_regularized_erm(X, y, 0.01, b=B, ridge=0.002, warm_start=False)
    np.testing.assert_allclose(batch.coef, cold.coef, atol=1e-6)


def test_tiny_lambda_uses_double_precision_hessians_and_still_converges():
    X, y = _problem(1500, 5, seed=4, noise=0.0)  # separable: the minimiser is far out
    B = sample_vector_laplace(0.5, 5, size=30, random_state=8)
    result = solve_regularized_erm(X, y, 1e-6, b=B, max_iter=200)
    assert result.converged
    assert np.all(_gradient_norms(result.coef, X, y, 1e-6, b=B) <= 1e-8)


def test_block_built_products_give_the_same_minimisers(monkeypatch):

    X, y = _problem(2500, 6, seed=9)
    B = sample_vector_laplace(0.05, 6, size=60, random_state=1)
    kept = solve_regularized_erm(X, y, 0.01, b=B).coef
    monkeypatch.setattr(design, "TABLE_MAX", 100)  # tables too large to keep: built block by block
    rebuilt = solve_regularized_erm(X, y, 0.01, b=B).coef
    np.testing.assert_allclose(rebuilt, kept, atol=2e-6)
    assert np.all(_gradient_norms(rebuilt, X, y, 0.01, b=B) <= 1e-8)


def test_remainder_update_satisfies_the_euler_secant_condition():

    rng = np.random.default_rng(3)
    k, d, reg = 6, 5, 0.01
    A = rng.normal(size=(k, d, d))
    J = np.einsum("kab,kcb->kac", A, A) + np.eye(d)
    s, g = rng.normal(size=(k, d)), 1e-5 * rng.normal(size=(k, d))
    updated = remainder_update(J, s, g, reg)
    np.testing.assert_allclose(updated, updated.transpose(0, 2, 1))  # still symmetric
    # J' s = J s + 4 g: the Jacobian of a remainder homogeneous of degree 4 maps s to 4 R(s)
    np.testing.assert_allclose(np.einsum("kab,kb->ka", updated, s), np.einsum("kab,kb->ka", J, s) + 4 * g,
                               rtol=0, atol=1e-12)
    # a correction larger than reg / 2 (Frobenius norm) is not applied; nor is one along a zero step
    big = remainder_update(J, s, 10.0 * g / 1e-5, reg)
    np.testing.assert_array_equal(big, J)
    s[0] = 0.0
    with np.errstate(all="raise"):
        np.testing.assert_array_equal(remainder_update(J, s, g, reg)[0], J[0])


def test_paper_setting_converges_in_two_passes_over_the_data():
    # The paper's setting (benchmarks/solver_benchmark.py): the Taylor start plus the remainder-corrected
    # model Hessian bring every one of 200 problems to ||grad|| <= 1e-8 in two evaluations (trial point,
    # then one Newton step). Deterministic (fixed seed); a change to the start shows up here as n_iter = 3.

    rng = np.random.default_rng(2008)
    n, lam = ex.PAPER_N * (ex.PAPER_FOLDS - 1) // ex.PAPER_FOLDS, ex.PAPER_LAMBDA  # one training fold
    X, y = make_separable(n, d=ex.PAPER_D, random_state=rng)
    cal = objective_perturbation_calibration(ex.PAPER_EPSILON, n, lam)
    B = sample_vector_laplace(cal.noise_rate, ex.PAPER_D, size=ex.PAPER_RESTARTS, random_state=rng)
    result = solve_regularized_erm(X, y, lam, b=B, ridge=cal.ridge, tol=1e-8)
    assert result.converged and np.all(result.n_iter == 2)
    assert np.all(_gradient_norms(result.coef, X, y, lam, b=B, ridge=cal.ridge) <= 1e-8)


def test_one_ridge_per_problem_solves_each_group_as_its_own_batch():
    X, y = _problem(300, 3, 20)
    B = sample_vector_laplace(0.05, 3, size=7, random_state=21)
    ridges = np.array([0.0, 0.2, 0.0, 0.05, 0.2, 0.0, 0.05])
    grouped = solve_regularized_erm(X, y, 0.01, b=B, ridge=ridges)
    for value in (0.0, 0.2, 0.05):
        rows = ridges == value
        np.testing.assert_array_equal(grouped.coef[rows], solve_regularized_erm(X, y, 0.01, b=B[rows], ridge=value).coef)
    with pytest.raises(ValueError, match="one ridge per problem"):
        solve_regularized_erm(X, y, 0.01, b=B[:3], ridge=ridges)
    with pytest.raises(ValueError, match="ridge"):
        solve_regularized_erm(X, y, 0.01, b=B, ridge=-ridges)


@pytest.mark.parametrize("loss", ["logistic", "huber"])
def test_fast_path_finds_the_minimisers_of_the_reference_newton(loss):
    X, y = _problem(500, 4, 22)
    B = sample_vector_laplace(0.05, 4, size=40, random_state=23)
    fast = solve_regularized_erm(X, y, 0.02, loss, b=B, ridge=0.03, tol=1e-10)
    problem = RegularizedERM(X * y[:, None], 0.02, get_loss(loss), b=B, ridge=0.03)
    reference = damped_newton(problem, np.zeros_like(B))
    assert reference.converged and np.all(reference.grad_norm <= 1e-12)
    # gradient norms 1e-10 and 1e-12 of a 0.05-strongly convex objective: minimisers within 2e-9 / 0.05
    np.testing.assert_allclose(fast.coef, reference.coef, rtol=0, atol=4e-8)


def test_reference_newton_solves_one_data_set_per_problem():
    data = [_problem(50, 2, s) for s in range(3)]
    U = np.stack([X * y[:, None] for X, y in data])
    result = damped_newton(RegularizedERM(U, 0.1, get_loss("logistic")), np.zeros((3, 2)))
    for (X, y), w in zip(data, result.coef):
        np.testing.assert_allclose(w, solve_regularized_erm(X, y, 0.1, tol=1e-12).coef, rtol=0, atol=1e-10)
    stopped = damped_newton(RegularizedERM(U, 0.1, get_loss("logistic")), np.full((3, 2), 5.0), max_iter=1)
    assert not stopped.converged and stopped.n_iter == 1


@pytest.mark.parametrize("loss", ["logistic", "huber"])
def test_shared_part_solver_finds_the_reference_minimisers_for_every_delta(loss):
    # The tuning path: one part, problems with different Delta (some far from w0: large b), around one Hessian.
    X, y = _problem(400, 5, 31)
    B = np.vstack([sample_vector_laplace(s, 5, size=4, random_state=32 + i) for i, s in enumerate((0.02, 0.2, 2.0))])
    ridges = np.repeat([0.0, 0.01, 0.3], 4)
    part = solve_on_part(X, y, 0.02, get_loss(loss), B, ridges, tol=1e-10)
    problem = RegularizedERM(X * y[:, None], 0.02, get_loss(loss), b=B, ridge=ridges)
    reference = damped_newton(problem, np.zeros_like(B))
    assert reference.converged and np.all(part.grad_norm <= 1e-10)
    # gradient norms 1e-10 and 1e-12 of a 0.02-strongly convex objective: minimisers within ~5e-9 of each other
    np.testing.assert_allclose(part.coef, reference.coef, rtol=0, atol=2e-8)
    w0 = damped_newton(RegularizedERM(X * y[:, None], 0.02, get_loss(loss)), np.zeros((1, 5))).coef[0]
    np.testing.assert_allclose(part.w0, w0, rtol=0, atol=2e-6)  # w0 to the default tol 1e-8: within 1e-8 / 0.02


def test_shared_part_solver_does_not_depend_on_the_batch():
    # Each problem's iterates use only its own b, Delta and the part: solving a subset gives the same minimisers.
    X, y = _problem(300, 4, 41)
    B = sample_vector_laplace(0.1, 4, size=6, random_state=42)
    ridges = np.array([0.0, 0.05, 0.0, 0.2, 0.05, 0.0])
    whole = solve_on_part(X, y, 0.01, get_loss("logistic"), B, ridges, tol=1e-10)
    for rows in ([0], [1, 3], [5, 2, 4]):
        alone = solve_on_part(X, y, 0.01, get_loss("logistic"), B[rows], ridges[rows], tol=1e-10)
        np.testing.assert_allclose(alone.coef, whole.coef[rows], rtol=0, atol=1e-12)
    assert solve_on_part(X, y, 0.01, get_loss("logistic"), B[:0], ridges[:0]).coef.shape == (0, 4)


def _parts_with_duplicates(seed):
    """Parts of Algorithm 3's shape: different sizes and lambdas, some drawn from a small pool of rows (repeats)."""
    rng = np.random.default_rng(seed)
    X, y = _problem(900, 6, seed)
    pool = rng.integers(0, 60, size=500)  # 500 records, at most 60 distinct
    sources = [(X[:300], y[:300]), (X[pool], y[pool]), (X[300:340], y[300:340]), (X[pool[:200]], y[pool[:200]])]
    parts = []
    for i, ((Xp, yp), lam) in enumerate(zip(sources, (0.003, 0.01, 0.03, 0.1))):
        B = sample_vector_laplace(0.05 * (i + 1), 6, size=3, random_state=seed + i)
        parts.append((Xp, yp, lam, B, np.array([0.0, 0.02, 0.0])))
    return parts


@pytest.mark.parametrize("loss", ["logistic", "huber"])
def test_parts_solved_together_are_each_the_part_solved_alone(loss, monkeypatch):
    # solve_on_parts shares the steps' bookkeeping, never a number: every part's solution bit for bit, in one group
    # or in many
    from dplr.solver import shared, solve_on_parts
    parts = _parts_with_duplicates(51)
    alone = [solve_on_part(X, y, lam, get_loss(loss), B, d) for X, y, lam, B, d in parts]
    together = solve_on_parts(parts, get_loss(loss))
    monkeypatch.setattr(shared, "GROUP_ELEMENTS", 2000)  # every part alone, or two small ones together
    grouped = solve_on_parts(parts, get_loss(loss))
    for one, *others in zip(alone, together, grouped):
        for other in others:
            np.testing.assert_array_equal(other.w0, one.w0)
            np.testing.assert_array_equal(other.coef, one.coef)
            assert other.n_hessians == one.n_hessians
            assert other.n_passes_w0 == one.n_passes_w0 >= 1


@pytest.mark.parametrize("loss", ["logistic", "huber"])
def test_folded_duplicates_give_the_reference_minimisers(loss):
    # a part of 500 records with at most 60 distinct rows: the solver folds them, the objective is the same
    from dplr.solver.shared import _fold_duplicates
    Xp, yp, lam, B, ridges = _parts_with_duplicates(52)[1]
    distinct, counts = _fold_duplicates(Xp * yp[:, None])
    assert counts is not None and len(distinct) <= 60 and counts.sum() == len(yp)
    part = solve_on_part(Xp, yp, lam, get_loss(loss), B, ridges, tol=1e-10)
    problem = RegularizedERM(Xp * yp[:, None], lam, get_loss(loss), b=B, ridge=ridges)
    reference = damped_newton(problem, np.zeros_like(B))
    assert reference.converged and np.all(part.grad_norm <= 1e-10)
    np.testing.assert_allclose(part.coef, reference.coef, rtol=0, atol=1e-10 / lam)


def test_folding_checks_its_hash_and_survives_collisions(monkeypatch):
    # rows grouped by a hash are compared exactly; with every hash equal (all collide) the exact fallback folds the
    # same rows with the same counts, in order of first occurrence
    from dplr.solver import shared
    Xp, yp, *_ = _parts_with_duplicates(53)[1]
    Xy = Xp * yp[:, None]
    distinct, counts = shared._fold_duplicates(Xy)
    monkeypatch.setattr(shared, "_row_hash", lambda rows: np.zeros(len(rows)))
    again, again_counts = shared._fold_duplicates(Xy)
    np.testing.assert_array_equal(again, distinct)
    np.testing.assert_array_equal(again_counts, counts)
    first = [int(np.flatnonzero((Xy == row).all(axis=1))[0]) for row in distinct]
    assert first == sorted(first)  # distinct rows in order of first occurrence
    for row, count in zip(distinct, counts):
        assert count == np.sum((Xy == row).all(axis=1))
    # nearly all rows distinct: nothing folded, whether the hash separates them or not
    X, y = _problem(200, 5, 54)
    assert shared._fold_duplicates(X * y[:, None])[1] is None
    monkeypatch.undo()
    assert shared._fold_duplicates(X * y[:, None])[1] is None


def test_the_screen_passes_parts_with_repeats_to_the_fold(monkeypatch):
    # a part larger than SCREEN_ROWS: equal rows among the evenly spaced sample send it to the fold, whose counts make
    # the same objective; a part without repeats is left as it is (no counts)
    from dplr.solver import shared
    Xp, yp, lam, B, ridges = _parts_with_duplicates(55)[1]
    monkeypatch.setattr(shared, "SCREEN_ROWS", 50)
    assert shared._may_repeat(Xp, yp)
    part = shared._prepare(Xp, yp, lam, get_loss("logistic"))
    assert part.counts is not None and part.counts.sum() == len(yp) and part.XyT.shape[1] <= 60
    X, y = _problem(400, 5, 56)
    assert not shared._may_repeat(X, y)
    assert shared._prepare(X, y, 0.1, get_loss("logistic")).counts is None

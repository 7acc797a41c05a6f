"""The unit ball's fast exact test (dplr.ball): seeded batteries against exact rational arithmetic.

Every decision of ``rows_outside_ball`` is exact, so each battery compares it with Python's fractions (the oracle)
row by row, and with the old path -- the compensated test switched off, every near row decided by error-free
transformations -- which must agree bit for bit. No test here is statistical: the batteries are seeded, and a
mismatch on any row is a bug, not chance.
"""
from fractions import Fraction

import numpy as np
import pytest
from sklearn.preprocessing import Normalizer

import dplr.ball as ball
from dplr.ball import check_rows_in_ball, project_onto_ball, refuse_rows_outside_ball, rows_outside_ball


def _outside_exactly(X, radius=1.0):
    r2 = Fraction(float(radius)) ** 2
    return np.array([sum(Fraction(float(v)) ** 2 for v in row if v != 0.0) > r2 for row in X])


def _battery(n, d, seed):
    """Rows on the sphere to rounding (Normalizer), nudged by up to 4 ulps either way, with adversarial rows mixed
    in: one-hot, exact halves, rows with subnormal or tiny entries beside large ones, entries of very different
    scales, and rows a bound away from the sphere."""
    rng = np.random.default_rng(seed)
    X = Normalizer().fit_transform(rng.normal(size=(n, d)) * rng.choice([1e-150, 1.0, 1e150], size=(n, 1)))
    X *= 1.0 + 2.0 ** -53 * rng.integers(-4, 5, size=(n, 1))
    k = n // 8
    X[:k] = 0.0
    X[np.arange(k), rng.integers(0, d, size=k)] = rng.choice([1.0, -1.0, np.nextafter(1.0, 2.0),
                                                              np.nextafter(1.0, 0.0)], size=k)
    if d >= 4:
        X[k:2 * k] = 0.0
        X[k:2 * k, :4] = 0.5
    X[2 * k:3 * k, 0] = rng.choice([5e-324, 2.0 ** -1000, 2.0 ** -540, 1e-300], size=k)  # subnormal and tiny entries
    X[3 * k:4 * k] *= 1.0 + rng.choice([-1.0, 1.0], size=(k, 1)) * 2.0 ** -rng.integers(40, 52, size=(k, 1))
    X[4 * k:5 * k, -1] *= rng.choice([1e-200, 1e-17, 3.0], size=k)  # one entry far smaller (or larger) than the rest
    return X


@pytest.mark.parametrize("d", [1, 2, 3, 8, 50, 300])
@pytest.mark.parametrize("radius", [1.0, 0.3, 7.0, 2.0 ** -390, 2.0 ** 390, 1.0 / 3.0])
def test_rows_outside_ball_agrees_with_exact_fractions(d, radius):
    X = _battery(400, d, seed=d) * radius
    reference = _outside_exactly(X, radius)
    np.testing.assert_array_equal(rows_outside_ball(X, radius), reference)


def test_rows_outside_ball_agrees_with_exact_fractions_in_ten_thousand_dimensions():
    X = _battery(24, 10_000, seed=7)
    np.testing.assert_array_equal(rows_outside_ball(X), _outside_exactly(X))


@pytest.mark.parametrize("d", [2, 50, 105])
def test_the_fast_path_and_the_old_exact_path_decide_alike(d, monkeypatch):
    X = _battery(2000, d, seed=100 + d)
    X = X[~(np.linalg.norm(X, axis=1) > 1.0 + 4 * 2.0 ** -52)]  # rows beyond rounding would be refused
    fast = rows_outside_ball(X)
    checked = check_rows_in_ball(X)
    projected = project_onto_ball(X)
    monkeypatch.setattr(ball, "_near_signs", lambda rows, radius: (np.zeros(len(rows), dtype=int),
                                                                   np.zeros(len(rows), dtype=bool),
                                                                   np.full(len(rows), np.inf)))
    np.testing.assert_array_equal(rows_outside_ball(X), fast)
    np.testing.assert_array_equal(check_rows_in_ball(X), checked)  # the released data: bit for bit the same
    np.testing.assert_array_equal(project_onto_ball(X), projected)


def test_normalizer_rows_are_decided_by_the_compensated_sum_nearly_all(monkeypatch):
    # the case of issue 37: every row within a few ulps of the sphere. The error-free path may see only the rows
    # the proven bound leaves open (within about 1e-20 of the sphere), none of these 20,000 here.
    X = Normalizer().fit_transform(np.random.default_rng(3).normal(size=(20_000, 50)))
    seen = []
    exact = ball._exact_excess_sign
    monkeypatch.setattr(ball, "_exact_excess_sign", lambda rows, radius: seen.append(len(rows)) or exact(rows, radius))
    outside = rows_outside_ball(X)
    assert 0.3 < outside.mean() < 0.7 and sum(seen) == 0
    np.testing.assert_array_equal(outside[:300], _outside_exactly(X[:300]))


def test_released_rows_are_inside_exactly_and_untouched_rows_are_bit_identical():
    X = _battery(1500, 12, seed=21)
    X = X[~(np.linalg.norm(X, axis=1) > 1.0 + 4 * 2.0 ** -52)]  # beyond rounding: refused, tested elsewhere
    released = check_rows_in_ball(X)
    assert not _outside_exactly(released).any() and (np.linalg.norm(released, axis=1) <= 1.0).all()
    kept = ~_outside_exactly(X) & (np.linalg.norm(X, axis=1) <= 1.0)
    np.testing.assert_array_equal(released[kept], X[kept])  # rows inside exactly are released as they came
    np.testing.assert_allclose(released, X, rtol=16 * 2.0 ** -52, atol=0)  # the others move by a few ulps


def test_refusing_and_projecting_are_separate():
    X = np.array([[0.6, 0.8], [0.3, 0.4]])  # the first outside exactly, by rounding only
    accepted = refuse_rows_outside_ball(X)
    np.testing.assert_array_equal(accepted, X)  # refusal moves nothing
    assert rows_outside_ball(accepted)[0] and not rows_outside_ball(project_onto_ball(accepted)).any()
    with pytest.raises(ValueError, match=r"1 of 2 rows have Euclidean norm > 1"):
        refuse_rows_outside_ball(np.array([[0.6, 0.9], [0.3, 0.4]]))


def _scaled_path_check(X, radius):
    """check_rows_in_ball as it was before the fast projection: every row's numpy norm (scaled where it over- or
    underflows), the exact test, and each row to move projected by the scaled, re-checked path."""
    X = np.asarray(X, dtype=np.float64)
    move = rows_outside_ball(X, radius) | (ball._row_norms(X) > radius)
    released = X.copy()
    released[move] = ball._project_scaled(np.array(X[move], order="C"), radius)
    return released


def _adversarial(n, d, radius, seed):
    """Rows at 1 ulp outside and inside the sphere, rows of norm exactly r, one-hot rows, subnormal and tiny entries
    beside large ones (rows the fast radial step must leave to the scaled one), on top of the battery."""
    rng = np.random.default_rng(seed)
    X = _battery(n, d, seed) * radius
    k = n // 10
    X[:k] = Normalizer().fit_transform(rng.normal(size=(k, d))) * radius
    X[:k] = np.nextafter(X[:k], np.where(rng.random((k, 1)) < 0.5, np.inf, 0.0) * np.sign(X[:k]))  # 1 ulp out or in
    X[k:2 * k] = 0.0
    X[k:2 * k, 0] = radius  # norm exactly r
    if d >= 2:
        X[2 * k:3 * k, :2] = np.array([0.6, 0.8]) * radius  # exactly r in the reals, not in float64 for every r
        tiny = Normalizer().fit_transform(rng.normal(size=(k, d)) * (np.arange(d) != 1))  # near the sphere, and
        tiny *= radius * (1.0 + 2.0 ** -52 * rng.integers(0, 3, size=(k, 1)))  # a tiny entry beside the others
        tiny[:, 1] = rng.choice([5e-324, 2.0 ** -1060, 2.0 ** -900, 2.0 ** -300, 2.0 ** -251], size=k)
        X[3 * k:4 * k] = tiny
    X[4 * k:5 * k] *= 1.0 + 2.0 ** -52 * rng.integers(-3, 4, size=(k, 1))
    return X[~(ball._row_norms(X) > radius * (1.0 + 4 * 2.0 ** -52))]  # beyond rounding: refused, tested elsewhere


@pytest.mark.parametrize("d", [1, 2, 7, 50, 120])
@pytest.mark.parametrize("radius", [1.0, 1.0 / 3.0, 7.0, 2.0 ** -390, 2.0 ** 390, 2.0 ** -200, 2.0 ** 240])
def test_the_fast_projection_releases_the_rows_of_the_scaled_path_bit_for_bit(d, radius):
    # the fast radial step (x * fl(r/||x||), no scaling by powers of two) and the cheaper re-checks must give the very
    # numbers of the scaled, fully re-checked path, and those are inside exactly (fractions) and by numpy's norm
    X = _adversarial(800, d, radius, seed=d + 31)
    released = check_rows_in_ball(X, radius)
    reference = _scaled_path_check(X, radius)
    assert released.tobytes() == reference.tobytes() and released.flags.c_contiguous
    assert project_onto_ball(X, radius).tobytes() == ball._project_scaled(np.array(X), radius).tobytes()
    assert not _outside_exactly(released, radius).any()
    assert (np.linalg.norm(released, axis=1) <= radius).all()
    moved = np.any(released != X, axis=1)
    assert moved.any() or d == 1  # the battery has rows to project (every one-entry row is on the sphere exactly)
    np.testing.assert_array_equal(moved, _outside_exactly(X, radius) | (np.linalg.norm(X, axis=1) > radius))


def test_the_fast_projection_is_bit_identical_on_normalizer_rows_and_any_memory_order():
    X = Normalizer().fit_transform(np.random.default_rng(5).normal(size=(3000, 50)))
    reference = _scaled_path_check(X, 1.0)
    assert (reference != X).any()
    for Z in (X, np.asfortranarray(X), X[::-1][::-1]):
        assert check_rows_in_ball(Z).tobytes() == reference.tobytes()


def test_numpy_norms_decide_only_where_they_can():
    # a row whose numpy norm is at most r but lies outside exactly must move; one inside exactly with numpy norm
    # above r must move too (the row of 174 entries 1/sqrt(174): its sum of squares rounds up); one inside both ways
    # must not (bit for bit)
    X = Normalizer().fit_transform(np.random.default_rng(9).normal(size=(2000, 174)))
    X = np.vstack([X, np.full((1, 174), 1.0 / np.sqrt(174.0))])
    numpy_over = np.linalg.norm(X, axis=1) > 1.0
    exact_out = _outside_exactly(X)
    assert (exact_out & ~numpy_over).any() and (numpy_over & ~exact_out).any() and (~exact_out & ~numpy_over).any()
    released = check_rows_in_ball(X)
    np.testing.assert_array_equal(np.any(released != X, axis=1), exact_out | numpy_over)
    assert released.tobytes() == _scaled_path_check(X, 1.0).tobytes()


def _excess_exactly(X, radius=1.0):
    r2 = Fraction(float(radius)) ** 2
    return [sum(Fraction(float(v)) ** 2 for v in row if v != 0.0) - r2 for row in X]


@pytest.mark.parametrize("radius", [1.0, 0.7, 2.0 ** 100])
def test_the_bound_on_the_excess_holds_and_the_shrinks_it_skips_land_inside(radius):
    # the exact test's bound on sum x_j^2 - r^2 must hold (fractions); and the shrink loop, which skips the exact test
    # where that bound proves a row inside after the shrink, must release only rows inside exactly -- on rows outside
    # by 0 to 60 units of roundoff, entered as rows the radial step leaves to the shrinks
    rng = np.random.default_rng(17)
    X = Normalizer().fit_transform(rng.normal(size=(600, 40))) * radius
    X *= 1.0 + 2.0 ** -53 * rng.integers(0, 30, size=(600, 1))
    norms = np.linalg.norm(X, axis=1)
    outside, excess = ball._exactly_outside(X, radius, norms * norms, upper=True)
    exact = _excess_exactly(X, radius)
    assert all(e <= Fraction(float(b)) for e, b in zip(exact, excess) if np.isfinite(b))
    assert np.isfinite(excess).mean() > 0.99 and outside.mean() > 0.5
    released = ball._project(X, radius, np.minimum(norms, radius), outside, excess)
    assert not _outside_exactly(released, radius).any() and (np.linalg.norm(released, axis=1) <= radius).all()
    np.testing.assert_array_equal(np.any(released != X, axis=1), outside)

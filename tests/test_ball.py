"""The unit ball (dplr.ball): the exact test against exact rational arithmetic, and the fast rule of the checks
against the exact test.

Every decision of ``rows_outside_ball`` is exact, so each battery compares it with Python's fractions row by row; it
is then the oracle of the fast rule (``check_rows_in_ball``, ``project_onto_ball``: a proven error bound on the
computed sum of squares and a shrink by k units of roundoff), whose every released row must be inside exactly. No test
here is statistical: the batteries are seeded, and a mismatch on any row is a bug, not chance.
"""
import math
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
    # the exact test with its compensated sum switched off (every near row by error-free transformations and
    # fractions) decides every row alike
    X = _battery(2000, d, seed=100 + d)
    fast = rows_outside_ball(X)
    monkeypatch.setattr(ball, "_near_signs", lambda rows, radius: (np.zeros(len(rows), dtype=int),
                                                                   np.zeros(len(rows), dtype=bool)))
    np.testing.assert_array_equal(rows_outside_ball(X), fast)


def test_normalizer_rows_are_decided_by_the_compensated_sum_nearly_all(monkeypatch):
    # every row within a few ulps of the sphere: the error-free path of the exact test may see only the rows the
    # proven bound leaves open (within about 1e-20 of the sphere), none of these 20,000 here
    X = Normalizer().fit_transform(np.random.default_rng(3).normal(size=(20_000, 50)))
    seen = []
    exact = ball._exact_excess_sign
    monkeypatch.setattr(ball, "_exact_excess_sign", lambda rows, radius: seen.append(len(rows)) or exact(rows, radius))
    outside = rows_outside_ball(X)
    assert 0.3 < outside.mean() < 0.7 and sum(seen) == 0
    np.testing.assert_array_equal(outside[:300], _outside_exactly(X[:300]))


def test_refusing_and_projecting_are_separate():
    X = np.array([[0.6, 0.8], [0.3, 0.4]])  # the first outside exactly, by rounding only
    accepted = refuse_rows_outside_ball(X)
    np.testing.assert_array_equal(accepted, X)  # refusal moves nothing
    assert rows_outside_ball(accepted)[0] and not rows_outside_ball(project_onto_ball(accepted)).any()
    with pytest.raises(ValueError, match=r"1 of 2 rows have Euclidean norm > 1"):
        refuse_rows_outside_ball(np.array([[0.6, 0.9], [0.3, 0.4]]))


# ---- the fast rule (dplr.ball._rule) against the exact test ----

def _gamma(d):
    return d * 2.0 ** -53 / (1 - d * 2.0 ** -53)


def _near_the_sphere(n, d, radius, seed, dtype=np.float64):
    """Rows a checked data set meets: Normalizer rows, the same nudged by up to 4 units of roundoff (of ``dtype``)
    either way and by a few gamma_d either way (within and beyond the screen), one-hot rows and rows of equal entries
    (on the sphere exactly), rows of tiny entries beside the others (squares that underflow), rows well inside, and rows
    far outside by rounding of float32 input. Rows beyond the refusal's tolerance are left out."""
    rng = np.random.default_rng(seed)
    eps = float(np.finfo(dtype).eps)
    X = Normalizer().fit_transform(rng.normal(size=(n, d)))
    k = n // 8
    X[k:2 * k] *= 1.0 + eps / 2 * rng.integers(-8, 5, size=(k, 1))
    X[2 * k:3 * k] *= 1.0 - rng.uniform(0.0, 3.0, size=(k, 1)) * _gamma(d)  # inside, near the screen's threshold
    X[3 * k:4 * k] = 0.0
    X[3 * k:4 * k, rng.integers(0, d, size=k) % d] = 0.0
    X[np.arange(3 * k, 4 * k), rng.integers(0, d, size=k)] = rng.choice([1.0, -1.0], size=k)  # one-hot
    if d >= 4:
        X[4 * k:4 * k + k // 2] = 0.0
        X[4 * k:4 * k + k // 2, :4] = 0.5  # exactly on the sphere
    if d >= 2:
        X[5 * k:6 * k, 1] = rng.choice([5e-324, 2.0 ** -1060, 2.0 ** -540, 1e-300], size=k)  # squares underflow
    X[6 * k:7 * k] *= rng.uniform(0.0, 0.999, size=(k, 1))  # well inside
    X = (X * radius).astype(dtype)
    norms = np.linalg.norm(X.astype(np.float64), axis=1)
    return X[norms <= radius * (1 + 3 * eps)]  # within the tolerance of 4 eps (by more than numpy's own rounding)


def _assert_released_properly(X, radius, dtype=None, oracle=rows_outside_ball):
    """Every released row inside exactly (the oracle), the rows inside by more than the screen's margin bit for bit,
    the others moved by the radial step and the shrink only, and checking the result again changes nothing."""
    released = check_rows_in_ball(X, radius, dtype=dtype)
    X64 = np.asarray(X, dtype=np.float64)
    d = X64.shape[1]
    assert not oracle(released, radius).any()
    assert (np.linalg.norm(released, axis=1) <= radius).all()
    certainly_inside = ~rows_outside_ball(X64, radius * (1 - 2 * _gamma(d)))  # S <= r^2 (1 - 2 gamma_d)^2
    np.testing.assert_array_equal(released[certainly_inside], X64[certainly_inside])  # bit for bit
    with np.errstate(divide="ignore"):  # (a norm that underflows to 0: factor 1)
        radial = X64 * np.minimum(1.0, radius / np.linalg.norm(X64, axis=1))[:, None]
    np.testing.assert_allclose(released, radial, rtol=(2.5 * d + 16) * 2.0 ** -53, atol=1e-300)  # k + gamma_d + 8u
    assert check_rows_in_ball(released, radius) is released  # idempotent: past the screen, unchanged
    assert project_onto_ball(released, radius).tobytes() == released.tobytes()
    assert project_onto_ball(X64, radius).tobytes() == released.tobytes()  # the same rule
    return released


@pytest.mark.parametrize("d", [1, 2, 3, 7, 50, 105, 300, 2000])
def test_every_released_row_is_inside_exactly_near_the_sphere(d):
    n = 4000 if d <= 300 else 800
    X = _near_the_sphere(n, d, 1.0, seed=d)
    released = _assert_released_properly(X, 1.0)
    assert (released != X).any(axis=1).mean() > 0.3  # most rows are in the band the shrink serves
    if d <= 50:  # the oracle itself against fractions on a part
        assert not _outside_exactly(released[:400]).any()


@pytest.mark.parametrize("radius", [1.0 / 3.0, 7.0, 2.0 ** -390, 2.0 ** 390, 2.0 ** -200, 2.0 ** 240])
@pytest.mark.parametrize("d", [1, 2, 50, 120])
def test_every_released_row_is_inside_exactly_at_other_radii(d, radius):
    X = _near_the_sphere(1200, d, radius, seed=d + 7)
    _assert_released_properly(X, radius)
    _assert_released_properly(X[:200], radius, oracle=_outside_exactly)


def test_each_rows_image_depends_on_that_row_alone():
    # not on the memory layout (numpy sums a strided row in another order), nor on the other rows or the batch
    X = _near_the_sphere(3000, 50, 1.0, seed=9)
    released = check_rows_in_ball(X)
    for Z in (np.asfortranarray(X), X[::-1][::-1]):
        assert check_rows_in_ball(Z).tobytes() == released.tobytes()
    assert project_onto_ball(np.asfortranarray(X)).tobytes() == released.tobytes()
    part = np.arange(0, len(X), 7)
    assert check_rows_in_ball(X[part]).tobytes() == released[part].tobytes()
    wide = np.hstack([X, X])[:, :50]  # rows strided in memory
    assert check_rows_in_ball(wide).tobytes() == released.tobytes()


def test_float32_input_is_checked_with_float32_rounding_and_released_inside_exactly():
    X = _near_the_sphere(3000, 20, 1.0, seed=5, dtype=np.float32)
    assert np.linalg.norm(X.astype(np.float64), axis=1).max() > 1 + 1e-8  # outside by float32 rounding
    released = _assert_released_properly(X, 1.0, dtype=np.float32)
    assert released.dtype == np.float64
    with pytest.raises(ValueError, match="Euclidean norm > 1"):
        check_rows_in_ball(X)  # the same rows as float64 input: beyond float64's rounding


def test_one_hot_rows_and_tiny_or_huge_entries():
    one_hot = np.eye(105)[np.random.default_rng(6).integers(0, 105, size=500)]
    released = _assert_released_properly(one_hot, 1.0)
    # on the sphere exactly, but the sum cannot tell: shrunk by the rule's k units of roundoff and no more
    k = ball._rule(105, 1.0, 2.0 ** -52).k
    np.testing.assert_array_equal(released[one_hot == 1.0], np.float64(1.0) * (1.0 - k * 2.0 ** -53))
    mixed = np.array([[1.0, 2.0 ** -600, 0.0], [1e-300, 5e-324, 0.0], [0.6, 0.8, 1e-200], [2.0 ** -1074, 0.0, 1.0]])
    _assert_released_properly(mixed, 1.0, oracle=_outside_exactly)
    huge = np.array([[1e200, 1e200, 1e-200], [1e308, -1e308, 3.0], [2.0 ** 600, 1.0, 2.0 ** -600]])
    projected = project_onto_ball(huge)  # sums of squares overflow: scaled by a power of two first
    assert not _outside_exactly(projected).any() and project_onto_ball(projected).tobytes() == projected.tobytes()
    np.testing.assert_allclose(projected[:, :2], [[2 ** -0.5, 2 ** -0.5], [2 ** -0.5, -2 ** -0.5], [1.0, 0.0]],
                               rtol=1e-13, atol=1e-170)
    with pytest.raises(ValueError, match=r"3 of 3 rows have Euclidean norm > 1\.0 \(largest 1\.41.*e\+308"):
        check_rows_in_ball(huge)  # refused, the overflowed sums too (NaN is another message)


def test_the_refusal_boundary_is_decided_within_gamma_d():
    # a row of norm at most R = r (1 + 4 eps) exactly is never refused; one beyond R (1 + 2 gamma_d) always is
    rng = np.random.default_rng(8)
    for d in (1, 3, 50, 400):
        R = 1.0 + 4 * 2.0 ** -52
        X = Normalizer().fit_transform(rng.normal(size=(3000, d))) * R
        X = X[~rows_outside_ball(X, R)]  # at most R exactly, many of them on R to rounding
        assert len(X) > 1000
        _assert_released_properly(X, 1.0)
        beyond = Normalizer().fit_transform(rng.normal(size=(200, d))) * (R * (1 + 2.5 * _gamma(d)))
        for row in beyond:
            with pytest.raises(ValueError, match=r"1 of 1 rows have Euclidean norm > 1\.0"):
                refuse_rows_outside_ball(row[None, :])


def test_non_finite_entries_are_found_in_the_same_pass_and_keep_their_messages():
    X = np.array([[0.1, 0.2], [np.inf, 0.0], [1e200, 1e200]])
    for bad in (np.nan, np.inf, -np.inf):
        X[1, 0] = bad
        with pytest.raises(ValueError, match="X holds NaN or infinite values; every record"):
            check_rows_in_ball(X)
        with pytest.raises(ValueError, match="custom message"):
            refuse_rows_outside_ball(X, not_finite="custom message")
        with pytest.raises(ValueError, match="no projection onto the ball can bound"):
            project_onto_ball(X)


@pytest.mark.parametrize("d", [1, 2, 5, 50, 105, 1000, 2000])
@pytest.mark.parametrize("radius", [1.0, 1.0 / 3.0, 2.0 ** -390, 2.0 ** 390])
def test_k_is_the_least_shrink_the_proof_allows(d, radius):
    # the condition C(k) of dplr.ball._rule, in exact rationals: it holds at k and fails at k - 1; and k covers the
    # gamma_d of the sum twice over (the row's own sum and the screen its image must pass): at least 1.5 d
    rule = ball._rule(d, radius, 2.0 ** -52)
    assert ball._shrink_lands_inside(rule.k, d, radius, rule.inside)
    assert not ball._shrink_lands_inside(rule.k - 1, d, radius, rule.inside)
    assert rule.k >= 1.5 * d and rule.shrink == 1.0 - rule.k * 2.0 ** -53
    # the screen and the refusal's threshold: the exact bounds rounded in the safe direction
    u, r = Fraction(1, 2 ** 53), Fraction(radius)
    gamma, tau = d * u / (1 - d * u), Fraction(d, 2 ** 1073)
    assert Fraction(rule.inside) <= r * r * (1 - gamma) - tau < Fraction(math.nextafter(rule.inside, math.inf))
    R = r * (1 + 4 * u * 2)
    assert Fraction(rule.refuse) >= R * R * (1 + gamma) + tau > Fraction(math.nextafter(rule.refuse, 0.0))


def _rows_whose_sums_round_down(n, d, seed):
    """Rows near the sphere whose computed sum of squares lies below the true one by many units of roundoff: entries
    whose squares all round down (found by trying), so that only a bound with gamma_d covers them."""
    rng = np.random.default_rng(seed)
    X = Normalizer().fit_transform(rng.normal(size=(n, d))) * (1.0 - 8 * 2.0 ** -53)
    x = X.reshape(-1)
    for _ in range(4):  # nudge each entry to a neighbour whose square rounds down (exact test of the rounding)
        hi, lo = ball._split(x)
        err = ((hi * hi - x * x) + 2.0 * hi * lo) + lo * lo  # x^2 - fl(x^2), the error-free product's tail
        x = np.where(err > 0, x, np.nextafter(x, 2.0 * x))
    return x.reshape(n, d)


@pytest.mark.parametrize("d", [500, 2000])
def test_a_shrink_without_gamma_d_fails_these_properties(d, monkeypatch):
    # the properties above catch a rule whose shrink ignores the sum's error bound (k = 4: the roundings of the root,
    # the quotient and the products only): rows are then released outside exactly, or not past the screen (checking
    # them again moves them): the batteries are strong enough to fail a k that is too small
    X = np.vstack([_near_the_sphere(600, d, 1.0, seed=d), _rows_whose_sums_round_down(600, d, seed=d)])
    _assert_released_properly(X, 1.0)
    rule = ball._rule(d, 1.0, 2.0 ** -52)
    monkeypatch.setattr(ball, "_rule", lambda d, radius, eps: rule._replace(shrink=1.0 - 4 * 2.0 ** -53, k=4))
    with pytest.raises(AssertionError):
        _assert_released_properly(X, 1.0)
    released = check_rows_in_ball(X)
    assert rows_outside_ball(released).any()  # rows released outside the ball exactly (9 of 1200 at d = 500)
    assert check_rows_in_ball(released) is not released  # and not idempotent
    # (k - 1 is not caught by these batteries -- the worst case of every rounding at once is not met by them --: the
    # exact test of the proof's condition above fails it)


def test_the_exact_check_keeps_rows_inside_exactly_bit_for_bit():
    # for the analysis' constructions (a record at e_1 on a loss' kink): inside exactly -> untouched; outside by
    # rounding -> projected inside; beyond rounding -> refused (unless refuse=False); checking again changes nothing
    X = np.vstack([np.eye(3), -np.eye(3), [[0.6, 0.8, 0.0]], Normalizer().fit_transform(
        np.random.default_rng(4).normal(size=(300, 3)))])
    outside = _outside_exactly(X)
    assert outside.any() and (~outside).sum() > 6
    checked = ball.check_rows_in_ball_exactly(X)
    np.testing.assert_array_equal(checked[~outside], X[~outside])
    assert not _outside_exactly(checked).any()
    assert ball.check_rows_in_ball_exactly(checked).tobytes() == checked.tobytes()
    with pytest.raises(ValueError, match="Euclidean norm > 1"):
        ball.check_rows_in_ball_exactly(np.array([[0.6, 0.9]]))
    assert not _outside_exactly(ball.check_rows_in_ball_exactly(np.array([[0.6, 0.9]]), refuse=False)).any()

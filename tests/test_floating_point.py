import numpy as np
import pytest

from dplr.analysis import floating_point as fp
from dplr.gaussian import gaussian_mechanism


def _sampler(v, n, rng):
    return fp.textbook_laplace(v, 1.0, n, rng)


def _support(o, v):
    return fp.textbook_support(o, v, 1.0)[0]


def test_sampled_outputs_are_certified_reachable_from_their_own_input():
    rng = np.random.default_rng(0)
    for v in (0.0, 1.0, -3.5):
        out = fp.textbook_laplace(v, 0.7, 500, rng)
        ok, j, s = fp.textbook_support(out, v, 0.7)
        assert ok.all()
        assert np.array_equal(fp._textbook_from_j(v, 0.7, j, s), out)  # the exhibited state maps to the output


def test_unreachable_output_is_refused():
    # 0.5 + 2^-50 style values between reachable outputs: at least one of a run of neighbours is unreachable
    o = 1.0 + np.arange(1, 200) * 2.0 ** -52
    ok, _, _ = fp.textbook_support(o, 0.0, 1.0)
    assert not ok.all()


def test_textbook_sampler_is_distinguished():
    r = fp.distinguishing_rate(_sampler, _support, 0.0, 1.0, 1000, random_state=1)
    assert r.low > 0.5
    assert r.low <= r.rate <= r.high


def test_bad_inputs_are_refused():
    with pytest.raises(ValueError):
        fp.textbook_support([np.nan], 0.0, 1.0)
    with pytest.raises(ValueError):
        fp.textbook_support([0.0], 0.0, -1.0)
    with pytest.raises(ValueError):
        fp.textbook_laplace(np.inf, 1.0)
    with pytest.raises(ValueError):
        fp.distinguishing_rate(_sampler, _support, 0.0, 1.0, 0)
    with pytest.raises(ValueError):
        fp.snapping_mechanism(0.0, 1.0, 1.0, 0.5)  # B below lambda
    with pytest.raises(ValueError):
        fp.snapping_mechanism(0.0, 1.0, 0.0, 10.0)


def test_snapping_outputs_on_grid_and_clamped():
    lam = 1.0 / 0.3  # grid 4
    out = np.array([fp.snapping_mechanism(50.0, 1.0, 0.3, 8.0, i) for i in range(300)])
    assert np.all(np.abs(out) <= 8.0)
    assert np.all(out / 4.0 == np.round(out / 4.0))
    assert np.any(out == 8.0)
    assert 4.0 >= lam > 2.0


# --- dplr's own scalar release (numpy's ziggurat exponential) ---------------------------------------------------


def test_ziggurat_replay_matches_numpy_bit_for_bit():
    tables = fp.exponential_ziggurat_tables()
    for seed in (7, 11):  # seeds other than the one that pinned the widths
        raw = np.random.PCG64(seed).random_raw(30_000)
        drawn = np.random.Generator(np.random.PCG64(seed)).standard_exponential(10_000)
        assert np.array_equal(fp.replay_standard_exponential(raw, 10_000, tables), drawn)
        # Generator.gamma(1.0) is that sampler, draw for draw (what VectorLaplace's norm uses at d = 1)
        assert np.array_equal(np.random.Generator(np.random.PCG64(seed)).gamma(1.0, 1.0, 10_000), drawn)


def test_dplr_support_never_refuses_an_output_of_its_own_input():
    # deterministic (fixed seeds); fails if any state of the real sampler is missed by the model
    for value, eps, n, seed in ((0.3, 0.5, 10_000, 3), (-3.5, 2.0, 2_000, 4), (1e6, 1.0, 1_000, 5)):
        out = fp.dplr_laplace(value, 1.0, eps, n, seed)
        assert fp.dplr_laplace_support(out, value, 1.0, eps).all()


def test_dplr_scalar_release_is_distinguished():
    # measured rate about 0.45 at n = 1000: the lower 95% bound falls under 0.3 with probability < 1e-12
    r = fp.distinguishing_rate(lambda v, n, rng: fp.dplr_laplace(v, 1.0, 1.0, n, rng),
                               lambda o, v: fp.dplr_laplace_support(o, v, 1.0, 1.0), 0.0, 1.0, 2000, random_state=6)
    assert r.low > 0.3


def test_dplr_support_tail_is_conservative_and_inputs_checked():
    far = np.array([100.0, -100.0])  # beyond r * theta: the unmodelled tail could reach them
    assert fp.dplr_laplace_support(far, 0.0, 1.0, 1.0).all()
    with pytest.raises(ValueError):
        fp.dplr_laplace_support([np.inf], 0.0, 1.0, 1.0)
    with pytest.raises(ValueError):
        fp.dplr_laplace_support([0.0], 0.0, 1.0, -1.0)


# --- dplr's Gaussian release (numpy's normal ziggurat; Jin et al. 2022's support attack) ----------------------------


def test_normal_ziggurat_replay_matches_numpy_bit_for_bit():
    tables = fp.normal_ziggurat_tables()
    for seed in (7, 11):  # seeds other than the one that pinned the widths
        raw = np.random.PCG64(seed).random_raw(40_000)
        drawn = np.random.Generator(np.random.PCG64(seed)).standard_normal(12_000)
        out, idx, rabs = fp.replay_standard_normal(raw, 12_000, tables, trace=True)
        assert np.array_equal(out, drawn)
        # on these seeds the tail and the wedge were both taken (deterministic), so both branches were replayed
        assert (idx == -1).any()
        assert (rabs[idx >= 0] >= tables.ki[idx[idx >= 0]].astype(np.int64)).any()


def test_dplr_gaussian_is_the_mechanism_draw_for_draw():
    for value in (0.0, np.array([0.5, -2.0])):
        rng = np.random.default_rng(3)
        calls = np.array([gaussian_mechanism(value, 1.0, 1.0, 1e-5, rng) for _ in range(40)])
        assert np.array_equal(fp.dplr_gaussian(value, 1.0, 1.0, 1e-5, 40, 3), calls)


def test_gaussian_support_never_refuses_an_output_of_its_own_input():
    # deterministic (fixed seeds); fails if any state of the real sampler is missed by the model (or a width is wrong)
    cases = ((0.0, 1.0, 1e-5, 3000, 3), (-3.5, 0.3, 1e-6, 1000, 4), (1e6, 2.0, 1e-5, 500, 5),
             (np.array([0.25, -1.0]), 1.0, 1e-5, 500, 6))
    for value, eps, delta, n, seed in cases:
        out = fp.dplr_gaussian(value, 1.0, eps, delta, n, seed)
        assert fp.dplr_gaussian_support(out, value, 1.0, eps, delta).all()


def test_dplr_gaussian_release_is_distinguished():
    # measured rate about 0.22 (scalar, 0 against 1, eps = 1, delta = 1e-5; 4000 draws); at n = 1000 the lower 95%
    # bound falls under 0.1 (fewer than 120 hits) with probability < 1e-9 if the rate is 0.2 (Chernoff)
    r = fp.gaussian_distinguishing_rate(0.0, 1.0, 1.0, 1.0, 1e-5, 1000, random_state=6)
    assert r.low > 0.1 and r.n == 1000


def test_dplr_gaussian_vector_release_is_distinguished_per_coordinate():
    # d = 2, 0 against the diagonal point of norm < 1: measured rate about 0.48 at n = 2000; at n = 300 the lower
    # bound falls under 0.25 (fewer than 90 hits) with probability < 1e-6 if the rate is 0.45 (Chernoff)
    c = np.nextafter(np.sqrt(0.5), 0.0)  # 2c^2 < 1 exactly
    r = fp.gaussian_distinguishing_rate(np.zeros(2), np.array([c, c]), 1.0, 1.0, 1e-5, 300, random_state=7)
    assert r.low > 0.25 and r.n == 300


def test_gaussian_support_tail_is_conservative_and_inputs_checked():
    far = np.array([100.0, -100.0])  # beyond r * sigma: the unmodelled tail could reach them
    assert fp.dplr_gaussian_support(far, 0.0, 1.0, 1.0, 1e-5).all()
    with pytest.raises(ValueError):
        fp.dplr_gaussian_support([np.inf], 0.0, 1.0, 1.0, 1e-5)
    with pytest.raises(ValueError):
        fp.dplr_gaussian_support(np.zeros((3, 2)), 0.0, 1.0, 1.0, 1e-5)  # a scalar's outputs are (n,)
    with pytest.raises(ValueError):
        fp.dplr_gaussian_support([0.0], 0.0, 1.0, 1.0, 2.0)  # delta >= 1
    with pytest.raises(ValueError):
        fp.dplr_gaussian(np.nan, 1.0, 1.0, 1e-5, 3)

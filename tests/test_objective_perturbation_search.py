"""Adversarial search for the privacy loss of Algorithm 2: gradients, attained values, proven bounds."""
import numpy as np
import pytest

from dplr.losses import HuberLoss, LogisticLoss
from dplr.analysis.objective_perturbation_search import (
    AnchoredConfiguration,
    anchored_loss_and_gradient,
    coupled_privacy_bound,
    huber_attaining_pair,
    limit_construction,
    nips2008_private_threshold,
    search_privacy_loss,
    worst_case_from_dict,
)
from dplr.analysis.privacy_loss import objective_perturbation_privacy_bound, objective_perturbation_privacy_loss

FIELDS = ("w", "anchors", "multiplicity", "record", "record_prime")


def _random_configuration(rng, B=4, K=2, d=3):
    def ball(shape):
        x = rng.standard_normal(shape)
        return x / np.linalg.norm(x, axis=-1, keepdims=True) * rng.random(shape[:-1] + (1,))

    return AnchoredConfiguration(2.0 * rng.standard_normal((B, d)), ball((B, K, d)), rng.uniform(0, 40, (B, K)),
                                 ball((B, d)), ball((B, d)))


@pytest.mark.parametrize("loss", [LogisticLoss(), HuberLoss(0.5)], ids=["logistic", "huber"])
def test_gradient_matches_central_differences(loss):
    rng = np.random.default_rng(0)
    config = _random_configuration(rng)
    mu, beta = rng.uniform(0.5, 20, 4), rng.uniform(0.05, 1, 4)
    _, _, _, grads = anchored_loss_and_gradient(config, mu, beta, loss)
    h = 1e-6
    for field in FIELDS:
        base = getattr(config, field)
        numeric = np.zeros_like(base)
        for idx in np.ndindex(base.shape[1:]):
            for sign in (1.0, -1.0):
                moved = base.copy()
                moved[(slice(None),) + idx] += sign * h
                parts = {f: getattr(config, f) for f in FIELDS} | {field: moved}
                numeric[(slice(None),) + idx] += sign * anchored_loss_and_gradient(
                    AnchoredConfiguration(**parts), mu, beta, loss, gradient=False)[0] / (2 * h)
        # central differences have error O(h^2) ~ 1e-12 times third derivatives, plus rounding ~1e-16/h
        np.testing.assert_allclose(getattr(grads, field), numeric, atol=1e-8)


def test_anchored_loss_equals_the_exact_loss_of_the_explicit_pair():
    # the batched formula (multiplicities) against dplr.analysis.privacy_loss on the full data sets
    rng = np.random.default_rng(1)
    config = _random_configuration(rng, B=3, K=2, d=2)
    m = np.floor(config.multiplicity)
    n, lam, eps = int(m.sum(axis=1).max()) + 5, 0.003, 0.5
    from dplr.analysis.objective_perturbation_search import _build_pair, _rate_and_mu
    for form in ("nips2008", "corrected"):
        beta, mu = _rate_and_mu(eps, n, lam, LogisticLoss(), form)
        total, noise, jac, _ = anchored_loss_and_gradient(AnchoredConfiguration(
            config.w, config.anchors, m, config.record, config.record_prime), np.full(3, mu), np.full(3, beta),
            LogisticLoss(), gradient=False)
        for b in range(3):
            pair = _build_pair(n, config.anchors[b], m[b], config.record[b], config.record_prime[b])
            exact = objective_perturbation_privacy_loss(config.w[b], pair, eps, lam, "logistic", form)
            assert total[b] == pytest.approx(exact.total, rel=1e-9, abs=1e-12)
            assert noise[b] == pytest.approx(exact.noise, rel=1e-9, abs=1e-12)


def test_coupled_bound_is_the_maximum_over_margins_and_improves_the_sharp_bound():
    z = np.linspace(-40, 40, 400_001)
    for eps, n, lam in [(0.1, 1000, 0.01), (1.0, 50, 0.01), (0.1, 100_000, 0.01), (0.5, 7, 0.3)]:
        for form in ("nips2008", "corrected"):
            for loss in (LogisticLoss(), HuberLoss(0.5)):
                U = coupled_privacy_bound(eps, n, lam, loss, form)
                from dplr.analysis.objective_perturbation_search import _rate_and_mu
                beta, mu = _rate_and_mu(eps, n, lam, loss, form)
                on_grid = np.max(beta * (1 + np.abs(loss.derivative(z))) + np.log1p(loss.second_derivative(z) / mu))
                assert on_grid <= U + 1e-12
                assert on_grid == pytest.approx(U, abs=1e-8)  # the grid is fine enough to reach the maximum
                sharp = objective_perturbation_privacy_bound(eps, n, lam, loss.curvature, form=form)
                assert U <= sharp + 1e-15
                if form == "corrected":
                    assert U < eps


def test_nips2008_threshold_is_two_over_epsilon_for_the_logistic_loss():
    for eps in (0.005, 0.1, 1.0):
        t = nips2008_private_threshold(eps)
        assert t == pytest.approx(2 / eps)
        lam = 0.01
        above = int(np.ceil(t / lam)) + 1
        below = int(np.floor(t / lam)) - 1
        assert coupled_privacy_bound(eps, above, lam, form="nips2008") == eps  # exactly: the maximum is at p = 1
        assert coupled_privacy_bound(eps, below, lam, form="nips2008") > eps
    assert nips2008_private_threshold(0.1, "huber") == np.inf


@pytest.mark.parametrize("form", ["nips2008", "corrected"])
@pytest.mark.parametrize("n, lam", [(2, 0.5), (40, 0.01), (10_000, 0.001)])
def test_huber_pair_attains_the_coupled_bound(form, n, lam):
    pair, w = huber_attaining_pair(n, lam, 0.1, form=form)
    loss = HuberLoss(0.5)
    value = objective_perturbation_privacy_loss(w, pair, 0.1, lam, loss, form).total
    assert value == pytest.approx(coupled_privacy_bound(0.1, n, lam, loss, form), rel=1e-12)


def test_limit_construction_approaches_the_bound_as_lambda_shrinks():
    # fixed n lambda = 3 and epsilon = 0.1 (NIPS form: 3 < 2/eps, so the bound exceeds epsilon)
    eps, n_lam = 0.1, 3.0
    U = coupled_privacy_bound(eps, 300, n_lam / 300, form="nips2008")
    assert U > eps
    values = []
    for lam in (1e-2, 1e-4, 1e-6, 1e-8):
        n = int(round(n_lam / lam))
        c = limit_construction(eps, n, lam, form="nips2008")
        assert c.multiplicity.sum() <= n - 1
        from dplr.analysis.objective_perturbation_search import _rate_and_mu
        beta, mu = _rate_and_mu(eps, n, lam, LogisticLoss(), "nips2008")
        total = anchored_loss_and_gradient(AnchoredConfiguration(*(np.asarray(getattr(c, f))[None] for f in FIELDS)),
                                           np.array([mu]), np.array([beta]), LogisticLoss(), gradient=False)[0][0]
        values.append(total)
    assert np.all(np.diff(values) > 0)
    assert np.all(np.array(values) <= U)
    assert U - values[-1] < 1e-3 * U
    assert values[-1] > eps  # the NIPS form is not eps-DP at this n lambda, for small enough lambda


SETTINGS = [(300, 0.01, 0.1, "nips2008"), (300, 0.01, 0.1, "corrected"), (10_000, 0.001, 1.0, "nips2008"),
            (12, 0.1, 1.0, "corrected")]


@pytest.fixture(scope="module")
def searched():
    return {d: search_privacy_loss(SETTINGS, d, n_starts=8, n_steps=(200, 100, 300), random_state=3) for d in (1, 2, 3)}


def test_search_value_is_attained_by_its_explicit_pair_and_output(searched):
    for d, results in searched.items():
        for r, (n, lam, eps, form) in zip(results, SETTINGS):
            assert (r.n, r.lam, r.epsilon, r.form, r.d) == (n, lam, eps, form, d)
            pair = r.pair()
            assert pair.n == n and pair.d == d
            assert np.all(np.linalg.norm(pair.X, axis=1) <= 1.0) and np.all(np.linalg.norm(pair.X_prime, axis=1) <= 1.0)
            exact = objective_perturbation_privacy_loss(r.w, pair, eps, lam, "logistic", form)
            assert exact.total == r.value and exact.noise == r.noise and exact.jacobian == r.jacobian
            assert r.multiplicity.sum() <= n - 1


def test_search_never_exceeds_the_proven_bounds(searched):
    for results in searched.values():
        for r in results:
            assert r.value <= r.upper_bound + 1e-12
            if r.form == "corrected":
                assert r.value <= r.epsilon


def test_search_finds_the_nips2008_violation_in_two_and_three_dimensions(searched):
    # n lambda = 3 < 2/eps = 20: the NIPS form's loss exceeds eps; d >= 2 comes close to the bound
    for d in (2, 3):
        r = searched[d][0]
        assert r.value > 1.4 * r.epsilon
        assert r.value > 0.95 * r.upper_bound


def test_a_recorded_worst_case_is_recomputed_not_read(searched):
    import json

    r = searched[2][0]
    text = json.dumps(r.to_dict())
    assert "value" not in json.loads(text)  # a record carries the configuration, never the loss
    again = worst_case_from_dict(json.loads(text))
    assert (again.value, again.noise, again.jacobian, again.upper_bound) == (r.value, r.noise, r.jacobian,
                                                                           r.upper_bound)
    moved = json.loads(text)
    moved["w"] = (np.array(moved["w"]) * 1.5).tolist()  # another output: another (recomputed) loss
    assert worst_case_from_dict(moved).value != r.value
    too_many = json.loads(text)
    too_many["multiplicity"] = [r.n, 0]
    with pytest.raises(ValueError, match="do not fit"):
        worst_case_from_dict(too_many)


def test_canonical_representative_keeps_the_value(searched):
    r = searched[2][2]
    c = r.canonical()
    assert c.w[0] > 0 and abs(c.w[1]) < 1e-9 * np.linalg.norm(c.w) and c.record[1] >= 0
    value = objective_perturbation_privacy_loss(c.w, c.pair(), r.epsilon, r.lam, "logistic", r.form).total
    assert value == pytest.approx(r.value, rel=1e-9)


def test_search_reproduces_the_huber_closed_form():
    results = search_privacy_loss([(50, 0.01, 0.1, "nips2008"), (50, 0.01, 0.1, "corrected")], 2, loss="huber",
                                  n_starts=4, n_steps=(50, 20, 20), random_state=0)
    for r in results:
        assert r.value == pytest.approx(r.upper_bound, rel=1e-12)


def test_search_at_least_matches_a_brute_force_grid_in_one_dimension():
    # n = 2: one shared record v; grid over (w, v, u, u'). The search must reach the grid's maximum (up to the grid's
    # resolution, which can only make the grid smaller than the supremum).
    from dplr.analysis.objective_perturbation_search import _rate_and_mu
    n, lam, eps, form = 2, 0.5, 0.1, "nips2008"
    beta, mu = _rate_and_mu(eps, n, lam, LogisticLoss(), form)
    W = np.r_[-np.geomspace(1e-2, 100, 60)[::-1], np.geomspace(1e-2, 100, 60)]
    g = np.linspace(-1, 1, 21)
    best = -np.inf
    for m in (0.0, 1.0):
        w, v, u, up = (a.reshape(-1, 1) for a in np.meshgrid(W, g, g, g, indexing="ij"))
        B = w.shape[0]
        c = AnchoredConfiguration(w, v[:, :, None], np.full((B, 1), m), u, up)
        best = max(best, anchored_loss_and_gradient(c, np.full(B, mu), np.full(B, beta), LogisticLoss(),
                                                    gradient=False)[0].max())
    r = search_privacy_loss([(n, lam, eps, form)], 1, n_starts=16, random_state=0)[0]
    assert r.value >= best - 1e-9


def test_a_setting_gets_the_same_result_in_any_batch():
    alone = search_privacy_loss([SETTINGS[2]], 2, n_starts=4, n_steps=(50, 20, 20), random_state=9)[0]
    batched = search_privacy_loss(SETTINGS[:3], 2, n_starts=4, n_steps=(50, 20, 20), random_state=9)[2]
    assert alone.value == batched.value
    np.testing.assert_array_equal(alone.w, batched.w)


def test_input_validation():
    with pytest.raises(ValueError, match="n must be an integer >= 2"):
        search_privacy_loss([(1, 0.1, 0.1, "nips2008")], 2)
    with pytest.raises(ValueError, match="form must be one of"):
        search_privacy_loss([(10, 0.1, 0.1, "nips")], 2)
    with pytest.raises(ValueError, match="d >= 2"):
        limit_construction(0.1, 100, 0.01, d=1)

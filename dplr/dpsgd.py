r"""DP-SGD (Abadi et al., CCS 2016) for the package's losses, vectorised in NumPy, with Google's accountant.

**The algorithm** (Abadi, Chu, Goodfellow, McMahan, Mironov, Talwar & Zhang, "Deep learning with
differential privacy", CCS 2016, Algorithm 1). From :math:`w_0 = 0`, for :math:`t = 0, \dots, T-1`:

1. Poisson subsampling: each record joins the lot :math:`B_t` independently with probability :math:`q`.
2. Per-example gradients of :math:`\ell(y_i w^\top x_i)` are closed-form, :math:`g_i = \ell'(y_i w_t^\top x_i)\,y_i x_i`,
   clipped to norm :math:`C`: :math:`\bar g_i = g_i / \max(1, \lVert g_i\rVert/C)`.
3. Noise: :math:`\tilde g = \frac{1}{m}\big(\sum_{i \in B_t}\bar g_i + N(0, \sigma^2C^2 I)\big)`, :math:`\sigma` the
   *noise multiplier*, :math:`m` the public expected lot size (``lot_size``; :math:`qn` by default).
4. Step: :math:`w_{t+1} = w_t - \eta(\tilde g + \lambda w_t)` (the ridge term is data-independent: no noise).

The release is :math:`w_T`. No per-example gradient array is formed: :math:`\lVert g_i\rVert = |\ell'|\,\lVert x_i\rVert`,
so clipping scales a scalar per record and the lot's sum is one matrix product.

**Privacy.** Each step is the Poisson-subsampled Gaussian mechanism on the sum of clipped gradients
(sensitivity :math:`C` when a record is added or removed, :math:`2C` when one is replaced), and the release is
their :math:`T`-fold adaptive composition. Its ε at a given δ is computed by ``dp-accounting`` (Google's
maintained accountant, the optional extra ``dplr[accounting]``) for the event ``SelfComposedDpEvent(
PoissonSampledDpEvent(q, GaussianDpEvent(σ)), T)``: :func:`dpsgd_epsilon`, and its inverse
:func:`dpsgd_noise_multiplier`. Neighbouring relation: ``"replace"`` (default; one record replaced, the
definition of NIPS 2008 and JMLR 2011 that the rest of the package uses) or ``"add_remove"`` (Abadi et
al.'s). The privacy-loss-distribution accountant (``"pld"``, default; Koskela et al. 2020, Doroshenko et al.
2022) gives a pessimistic (upper) estimate of ε and handles both relations; the Rényi accountant (``"rdp"``,
Mironov 2017; Mironov, Talwar & Zhang 2019) only ``"add_remove"`` with Poisson subsampling.

Two readings to know. The accountant composes all :math:`T` steps as if every iterate were released, so the ε of
releasing :math:`w_T` alone is at most what it reports (conservative). The accountant covers the noisy sums; what
divides them must not depend on the data. Under ``"replace"`` the default :math:`qn` does not (:math:`n` is the
same on both data sets); under ``"add_remove"`` :math:`n` is what differs, so a public ``lot_size`` must be passed
(Abadi et al.'s :math:`L = qN` for a public :math:`N`): dividing by the private :math:`qn` is not covered (at
:math:`n = 10` the exact δ at the target ε is hundreds of times the target).

**Float64, covered** (``rounding="directed"``, the default of :func:`dpsgd_train` and :func:`dp_sgd`). The accountant
assumes every record's clipped gradient has norm at most :math:`C` and the lot's sum is exact; in float64
:math:`g\min(1, C/\lVert g\rVert)` can exceed :math:`C` by ulps and the summed lot differs from the exact sum by a
rounding error that depends on the records. :func:`clip_caps` clips each :math:`|\ell'|` to a cap rounded down
below :math:`C` over an upper bound on :math:`\lVert y_ix_i\rVert`, so each clipped gradient, as a real vector,
has norm :math:`\le C` exactly; :func:`covered_clip_norm` widens :math:`C` by Higham's bound on the lot sum's
rounding, and the noise is :math:`\sigma` times that, rounded up (:func:`noise_scale`); proofs in their
docstrings. ``rounding="nearest"`` keeps the arithmetic of the book's DP-SGD records (the rescaling
:math:`g/\max(1, \lVert g\rVert/C)` in float64, noise :math:`\sigma C` rounded up, no rounding term), which
``dplr.replication.real_data.dpsgd_parameters`` pins: another arithmetic draws other bits. Not covered either
way: numpy's Gaussian sampler is float64 (Jin et al. 2022; the book's chapter on floating point).
"""
from __future__ import annotations

import functools
from dataclasses import dataclass
from fractions import Fraction

import numpy as np

from dplr.directed_rounding import exact, round_up
from dplr.losses import get_loss
from dplr.mechanisms import IsotropicGaussian
from dplr.validation import (
    check_delta,
    check_epsilon,
    check_positive_finite,
    check_positive_integer,
    check_random_state,
    check_training_data,
)

__all__ = [
    "NEIGHBOURING_RELATIONS",
    "DPSGD_ROUNDINGS",
    "clip_caps",
    "covered_clip_norm",
    "ACCOUNTANTS",
    "dpsgd_epsilon",
    "clear_calibration_cache",
    "dpsgd_noise_multiplier",
    "DPSGDCalibration",
    "dpsgd_calibration",
    "dpsgd_train",
    "dpsgd_train_with_clipping",
    "dp_sgd",
    "noise_scale",
]

#: The neighbouring relations the accountant is asked about, one record replaced or one added or removed.
NEIGHBOURING_RELATIONS = ("replace", "add_remove")
#: The accountants of ``dp-accounting`` used, privacy-loss distributions and Rényi DP.
ACCOUNTANTS = ("pld", "rdp")
#: The choices of DP-SGD's float64 arithmetic, ``"directed"`` (clipping provably within :math:`C`, noise covering the
#: lot sum's rounding; the default) or ``"nearest"`` (the records' arithmetic; module docstring).
DPSGD_ROUNDINGS = ("directed", "nearest")

#: The unit roundoff of float64, :math:`u = 2^{-53}`.
_UNIT_ROUNDOFF = Fraction(1, 2**53)


def _gamma(n) -> Fraction:
    r"""Higham's :math:`\gamma_n = nu/(1 - nu)`, exactly (:math:`nu < 1`)."""
    if n * _UNIT_ROUNDOFF >= 1:
        raise ValueError(f"{n} terms are beyond float64's error bound (n * 2**-53 < 1 needed).")
    return n * _UNIT_ROUNDOFF / (1 - n * _UNIT_ROUNDOFF)


def clip_caps(U, clip_norm) -> np.ndarray:
    r"""Per record, a float64 cap :math:`a_i` with :math:`a_i\lVert u_i\rVert \le C` exactly: clipping
    :math:`\ell'` to :math:`[-a_i, a_i]` gives a gradient :math:`\ell' u_i` of norm :math:`\le C` as a real vector.

    ``U`` (n, d) holds the rows :math:`u_i = y_i x_i`. *Proof.* :math:`s_i` = ``sum(U*U, axis=1)`` in float64, in
    any order, with or without fused multiply-adds, satisfies :math:`|s_i - S_i| \le \gamma_d S_i + d\,2^{-1074}`
    for :math:`S_i = \lVert u_i\rVert^2` (Higham, *Accuracy and Stability of Numerical Algorithms*, 2nd ed., 2002,
    Section 3.1, with each product's underflow error at most :math:`2^{-1075}`), so :math:`S_i \le (s_i + d\,
    2^{-1074})/(1 - \gamma_d)`. Each of the three float64 steps -- :math:`t_i = s_i + d\,2^{-1074}`,
    :math:`r_i = \sqrt{t_i}`, :math:`b_i = r_i\kappa` with :math:`\kappa` = :math:`1/(1-\gamma_d)` rounded up
    (:math:`\ge 1/\sqrt{1-\gamma_d}`) -- is followed by ``nextafter`` toward :math:`+\infty`, which makes a
    round-to-nearest result at least the exact one; so :math:`b_i \ge \lVert u_i\rVert` (and :math:`b_i > 0`).
    Then :math:`a_i` = ``nextafter(C / b_i, 0)``: a correctly rounded quotient is within half an ulp of
    :math:`C/b_i`, so the float64 below it is :math:`\le C/b_i \le C/\lVert u_i\rVert`.
    """
    U = np.asarray(U, dtype=float)
    d = U.shape[1]
    kappa = round_up(1 / (1 - _gamma(d)))
    tiny = d * 2.0**-1074  # exact: a multiple of the smallest subnormal
    t = np.nextafter(np.sum(U * U, axis=1) + tiny, np.inf)
    bound = np.nextafter(np.nextafter(np.sqrt(t), np.inf) * kappa, np.inf)
    with np.errstate(over="ignore"):  # C / b beyond float64's range: inf, and nextafter(inf, 0) is the largest float
        return np.nextafter(float(clip_norm) / bound, 0.0)


def covered_clip_norm(clip_norm, n, d) -> Fraction:
    r"""The clipping norm :math:`\tilde C = C(1 + 2n\gamma_n) + d\,n\,2^{-1073}` (exact) that the float64 sum of a
    lot's clipped gradients, over ``n`` records in ``d`` dimensions, respects as the accountant needs :math:`C`.

    *Proof* (neighbouring relation ``"replace"``). The lot's sum is the product ``(c * mask) @ U``: each coordinate
    an inner product of length :math:`n` whose masked terms are exact zeros. Higham's bound (2002, Section 3.1,
    any order of summation, fused multiply-adds or not), with underflow, gives :math:`\lVert \hat S(B) - S(B)
    \rVert \le \gamma_n \sum_{i \in B}\lVert c_iu_i\rVert + \sqrt d\,n\,2^{-1074}` for the exact sum
    :math:`S(B)`, and each :math:`\lVert c_iu_i\rVert \le C` (:func:`clip_caps`). Condition on the step's other
    members :math:`R` (the same on neighbours: one record replaced, the masks by position). If the replaced record
    is not in the lot, both data sets compute the same products, hence the same :math:`\hat S(R)`. If it is,
    :math:`\lVert \hat S(R \cup \{x\}) - \hat S(R)\rVert \le C + \gamma_n nC + \gamma_n nC + 2\sqrt d\,n\,
    2^{-1074} \le \tilde C` (at most :math:`n` members). So, translated by :math:`\hat S(R)`, the step is the
    accountant's Poisson-subsampled Gaussian with contributions of norm :math:`\le \tilde C`; its noise
    :math:`\sigma\tilde C` (rounded up: a wider Gaussian is the narrower one plus independent noise,
    post-processing) makes it exactly the accountant's mechanism at multiplier :math:`\ge \sigma`, scaled. Adding the
    noise in float64 rounds the exact real :math:`\hat S + Z`: post-processing too.

    Not covered: under ``"add_remove"`` :math:`n` differs between neighbours and the others' sum is computed with
    one row more or less, which a blocked summation may round differently (its noise scale uses the ``n`` it is
    given); and the Gaussian draws are numpy's float64 ones (module docstring).
    """
    n = check_positive_integer(n, "n")
    return exact(clip_norm) * (1 + 2 * n * _gamma(n)) + Fraction(d * n, 2**1073)


def noise_scale(noise_multiplier, clip_norm, n=None, d=None) -> float:
    r"""The standard deviation :math:`\sigma C` of a step's noise, rounded *up* to a float64
    (:mod:`dplr.directed_rounding`): the accountant's guarantee for :math:`\sigma` holds for noise at least
    :math:`\sigma C` wide on sums of gradients clipped to :math:`C`; the product rounded to nearest is below the exact
    one about half of the time. With ``n`` records in ``d`` dimensions, :math:`\sigma\tilde C` rounded up instead,
    :math:`\tilde C` = :func:`covered_clip_norm`: the noise that covers the float64 sum of a lot, too."""
    if n is None:
        return round_up(exact(noise_multiplier) * exact(clip_norm))
    return round_up(exact(noise_multiplier) * covered_clip_norm(clip_norm, n, check_positive_integer(d, "d")))


def _check_rate(sampling_rate):
    q = check_positive_finite(sampling_rate, "sampling_rate (the Poisson sampling probability q)")
    if q > 1.0:
        raise ValueError(f"sampling_rate q is a probability, 0 < q <= 1; got {q!r}. Fix: the expected lot size "
                         f"divided by the number of records n.")
    return q


def _check_choices(neighbouring, accountant):
    if not isinstance(neighbouring, str) or neighbouring not in NEIGHBOURING_RELATIONS:
        raise ValueError(f"neighbouring must be one of {NEIGHBOURING_RELATIONS}, got {neighbouring!r}.")
    if not isinstance(accountant, str) or accountant not in ACCOUNTANTS:
        raise ValueError(f"accountant must be one of {ACCOUNTANTS}, got {accountant!r}.")


def _check_rounding(rounding):
    if not isinstance(rounding, str) or rounding not in DPSGD_ROUNDINGS:
        raise ValueError(f"rounding must be one of {DPSGD_ROUNDINGS}, got {rounding!r}.")


def _accountant(neighbouring, accountant):
    _check_choices(neighbouring, accountant)
    try:
        import dp_accounting  # imported here: dp-accounting is the optional extra dplr[accounting]
    except ImportError as error:  # pragma: no cover - exercised only without the extra
        raise ImportError("DP-SGD's privacy accounting needs Google's dp-accounting: pip install 'dplr[accounting]' "
                          "(or pip install dp-accounting).") from error
    relation = (dp_accounting.NeighboringRelation.REPLACE_ONE if neighbouring == "replace" else
                dp_accounting.NeighboringRelation.ADD_OR_REMOVE_ONE)
    if accountant == "rdp":
        if neighbouring == "replace":
            raise ValueError("the RDP accountant of dp-accounting supports Poisson subsampling only for "
                             "add_remove neighbours. Fix: accountant='pld', or neighbouring='add_remove'.")
        return dp_accounting, dp_accounting.rdp.RdpAccountant(neighboring_relation=relation)
    return dp_accounting, dp_accounting.pld.PLDAccountant(neighboring_relation=relation)


def dpsgd_epsilon(noise_multiplier, sampling_rate, steps, delta, neighbouring="replace", accountant="pld"):
    r"""ε of DP-SGD at ``delta``: :math:`T` = ``steps`` compositions of the Poisson-subsampled (rate :math:`q`) Gaussian mechanism.

    ``noise_multiplier`` :math:`\sigma` is the noise's standard deviation over the clipping norm. Computed by
    ``dp-accounting`` (module docstring): an upper bound on the smallest ε for which DP-SGD is (ε, δ)-DP
    under ``neighbouring``. At Abadi et al.'s MNIST setting (:math:`q = 0.01`, :math:`\sigma = 4`,
    :math:`T = 10^4`, :math:`\delta = 10^{-5}`, add/remove) their moments accountant gave ε ≈ 1.26 (CCS 2016,
    Section 3.1); the accountants here, with tighter conversions, give less (tests/test_dpsgd.py).
    """
    noise_multiplier = check_positive_finite(noise_multiplier, "noise_multiplier")
    q, steps, delta = _check_rate(sampling_rate), check_positive_integer(steps, "steps"), check_delta(delta)
    library, ledger = _accountant(neighbouring, accountant)
    event = library.SelfComposedDpEvent(
        library.PoissonSampledDpEvent(q, library.GaussianDpEvent(noise_multiplier)), steps)
    ledger.compose(event)
    return float(ledger.get_epsilon(delta))


def dpsgd_noise_multiplier(epsilon, delta, sampling_rate, steps, neighbouring="replace", accountant="pld",
                           rtol=1e-3):
    r"""The smallest noise multiplier :math:`\sigma` for which :func:`dpsgd_epsilon` is at most ``epsilon``, by bisection.

    ε decreases in :math:`\sigma`; an upper end is found by doubling from 1, a lower by halving, then the
    bracket is bisected (on :math:`\log\sigma`) until its ends are within a factor ``1 + rtol``. The *upper*
    end is returned: its ε, as the accountant computes it, is at most ``epsilon`` (conservative), and it exceeds
    the smallest such :math:`\sigma` by at most a factor ``1 + rtol``. The search goes no lower than
    :math:`\sigma = 10^{-3}` (a target met there returns a value near it) and no higher than :math:`10^6` (refused).
    """
    epsilon, delta = check_epsilon(epsilon), check_delta(delta)
    q, steps = _check_rate(sampling_rate), check_positive_integer(steps, "steps")
    rtol = check_positive_finite(rtol, "rtol")

    def private_enough(sigma):
        return dpsgd_epsilon(sigma, q, steps, delta, neighbouring, accountant) <= epsilon

    high = 1.0
    while not private_enough(high):
        high *= 2.0
        if high > 1e6:
            raise ValueError(f"no noise multiplier up to 1e6 reaches epsilon={epsilon!r} at delta={delta!r} with "
                             f"q={q!r} and {steps} steps. Fix: fewer steps, a smaller q, or a larger epsilon.")
    low = high / 2.0
    while private_enough(low) and low > 1e-3:
        high, low = low, low / 2.0
    while high / low > 1.0 + rtol:
        middle = np.sqrt(low * high)
        if private_enough(middle):
            high = middle
        else:
            low = middle
    return float(high)


@dataclass(frozen=True)
class DPSGDCalibration:
    r"""DP-SGD's noise for a privacy target: noise multiplier, clipping norm, sampling rate, steps.

    ``mechanism(dim)`` is the noise added to a lot's sum of clipped gradients, :math:`N(0, (\sigma C)^2 I)`.
    ``epsilon`` is what the accountant reports for ``noise_multiplier`` (at most the target).
    """

    noise_multiplier: float
    clip_norm: float
    sampling_rate: float
    steps: int
    epsilon: float
    target_delta: float
    neighbouring: str
    accountant: str

    def mechanism(self, dim) -> IsotropicGaussian:
        """The noise of one step: :math:`N(0, (\\sigma C)^2 I_{dim})`, :math:`\\sigma C` rounded up (:func:`noise_scale`);
        :func:`dpsgd_train`'s default ``rounding="directed"`` draws it a rounding term wider (:func:`covered_clip_norm`)."""
        return IsotropicGaussian.from_sigma(dim, noise_scale(self.noise_multiplier, self.clip_norm))


def dpsgd_calibration(epsilon, delta, sampling_rate, steps, clip_norm=1.0, neighbouring="replace", accountant="pld"):
    """Calibrate DP-SGD: :func:`dpsgd_noise_multiplier`, and the ε it actually reaches (:func:`dpsgd_epsilon`).

    A pure function of its arguments (the accountant is deterministic), so its results are cached: refitting a
    model at the same privacy target does not run the accountant again.
    """
    _check_choices(neighbouring, accountant)
    return _cached_calibration(check_epsilon(epsilon), check_delta(delta), _check_rate(sampling_rate),
                               check_positive_integer(steps, "steps"), check_positive_finite(clip_norm, "clip_norm"),
                               neighbouring, accountant)


@functools.lru_cache(maxsize=256)
def _cached_calibration(epsilon, delta, sampling_rate, steps, clip_norm, neighbouring, accountant):
    sigma = dpsgd_noise_multiplier(epsilon, delta, sampling_rate, steps, neighbouring, accountant)
    reached = dpsgd_epsilon(sigma, sampling_rate, steps, delta, neighbouring, accountant)
    return DPSGDCalibration(sigma, clip_norm, float(sampling_rate), int(steps), reached, float(delta), neighbouring,
                            accountant)


def clear_calibration_cache():
    """Forget every cached calibration (:func:`dpsgd_calibration`): a timing that must include the accountant's work
    starts here."""
    _cached_calibration.cache_clear()


def dpsgd_train(X, y, noise_multiplier, clip_norm, sampling_rate, steps, learning_rate, lam=0.0, loss="logistic",
                huber_h=0.5, n_draws=None, random_state=None, clip=True, check_input=True, lot_size=None,
                rounding="directed"):
    r"""The DP-SGD iteration of the module docstring: ``n_draws`` independent runs at once; returns :math:`w_T`.

    Returns shape ``(d,)`` (``n_draws=None``) or ``(n_draws, d)``. The stream is used per step in this order:
    the lots' masks (``n_draws * n`` uniforms, record :math:`i` in the lot when its uniform is below :math:`q`),
    then the noise (``n_draws * d`` standard normals); the runs of one call share the stream, so a run depends
    on ``n_draws``. ``noise_multiplier`` may be 0 (no noise: not private). ``clip=False`` skips the clipping
    (for :mod:`dplr.analysis.broken`; never private with a clipping norm below the gradients'). The privacy of
    the result is what :func:`dpsgd_epsilon` reports for the same :math:`(\sigma, q, T)` under ``"replace"``, and
    under ``"add_remove"`` when ``lot_size`` (the public divisor :math:`m`; ``None``: :math:`qn`) is given.

    ``rounding`` (:data:`DPSGD_ROUNDINGS`): ``"directed"`` clips :math:`\ell'` to :func:`clip_caps` and draws noise
    :func:`noise_scale` ``(sigma, C, n, d)`` (module docstring: the float64 computation is covered, under
    ``"replace"``); ``"nearest"`` is the records' arithmetic (:math:`\ell'/\max(1, |\ell'|\lVert u_i\rVert/C)`
    in float64, noise :math:`\sigma C` rounded up).

    :func:`dpsgd_train_with_clipping` also returns how much the clipping binds.
    """
    return _dpsgd_train(X, y, noise_multiplier, clip_norm, sampling_rate, steps, learning_rate, lam,
                        get_loss(loss, huber_h), n_draws, random_state, clip, check_input, lot_size, False, rounding)


def dpsgd_train_with_clipping(X, y, noise_multiplier, clip_norm, sampling_rate, steps, learning_rate, lam=0.0,
                              loss="logistic", huber_h=0.5, n_draws=None, random_state=None, clip=True,
                              check_input=True, lot_size=None, rounding="directed"):
    r"""``(coef, clipped)``: :func:`dpsgd_train`'s ``coef`` (the same arguments, the same numbers) and ``clipped``,
    the fraction of the per-example gradients of all lots, over all steps, whose norm exceeded ``clip_norm`` -- how
    much the clipping binds; one number per draw, a float for ``n_draws=None`` (numpy's ``size`` rule). A diagnostic
    computed from the records, not covered by the privacy guarantee: do not release it.
    """
    return _dpsgd_train(X, y, noise_multiplier, clip_norm, sampling_rate, steps, learning_rate, lam,
                        get_loss(loss, huber_h), n_draws, random_state, clip, check_input, lot_size, True, rounding)


def _dpsgd_train(X, y, noise_multiplier, clip_norm, sampling_rate, steps, learning_rate, lam, loss, n_draws,
                 random_state, clip, check_input, lot_size, return_clipped, rounding):
    _check_rounding(rounding)
    if check_input:
        X, y = check_training_data(X, y)
    sigma = float(noise_multiplier)
    if not (np.isfinite(sigma) and sigma >= 0):
        raise ValueError(f"noise_multiplier must be a finite number >= 0, got {noise_multiplier!r}.")
    clip_norm = check_positive_finite(clip_norm, "clip_norm")
    q, steps = _check_rate(sampling_rate), check_positive_integer(steps, "steps")
    eta = check_positive_finite(learning_rate, "learning_rate")
    lam = float(lam)
    if not (np.isfinite(lam) and lam >= 0):
        raise ValueError(f"lam must be a finite number >= 0 (0: no ridge term), got {lam!r}.")
    rng = check_random_state(random_state)
    k = 1 if n_draws is None else check_positive_integer(n_draws, "n_draws")
    n, d = X.shape
    divisor = q * n if lot_size is None else check_positive_finite(lot_size, "lot_size (the public expected lot size)")
    U = X * y[:, None]
    norms = np.linalg.norm(U, axis=1)
    W = np.zeros((k, d))
    # the noise N(0, (sigma C)^2 I) of each step, drawn by its mechanism; sigma = 0 (not private) draws the same
    # normals and adds zeros, so that the lots' masks use the stream as for any sigma
    scale = noise_scale(sigma, clip_norm) if rounding == "nearest" else noise_scale(sigma, clip_norm, n, d)
    caps = clip_caps(U, clip_norm) if rounding == "directed" else None
    noise = IsotropicGaussian.from_sigma(d, scale if scale > 0 else 1.0)
    clipped, members = np.zeros(k), np.zeros(k)
    for _ in range(steps):
        mask = rng.random((k, n)) < q
        first = loss.derivative(W @ U.T)  # (k, n): g_i = first * u_i, ||g_i|| = |first| * ||u_i||
        if return_clipped:
            clipped += ((np.abs(first) * norms > clip_norm) & mask).sum(axis=1)
            members += mask.sum(axis=1)
        if clip and rounding == "directed":
            first = np.clip(first, -caps, caps)  # exact: |first_i| <= caps_i, so ||first_i u_i|| <= C (clip_caps)
        elif clip:
            size = np.abs(first) * norms
            first = first / np.maximum(1.0, size / clip_norm)
        gradient = (first * mask) @ U + (noise.sample(k, rng) if scale > 0 else noise.sample(k, rng) * 0.0)
        W -= eta * (gradient / divisor + lam * W)
    coef = W[0] if n_draws is None else W
    if not return_clipped:
        return coef
    fraction = clipped / np.maximum(members, 1.0)
    return coef, (float(fraction[0]) if n_draws is None else fraction)


def dp_sgd(X, y, epsilon, delta, sampling_rate, steps, learning_rate, clip_norm=1.0, lam=0.0, loss="logistic",
           huber_h=0.5, n_draws=None, random_state=None, neighbouring="replace", accountant="pld",
           check_input=True, lot_size=None, rounding="directed"):
    r"""DP-SGD at a privacy target: calibrate :math:`\sigma` with the accountant (:func:`dpsgd_calibration`), then train.

    (ε, δ)-DP under ``neighbouring`` (module docstring): clipping alone bounds each record's contribution. The
    package's rows (:math:`\lVert x_i\rVert \le 1`, checked as everywhere) have gradients of norm at most :math:`L`,
    so ``clip_norm >= 1`` never clips them.
    ``lot_size``: the public number the lot's noisy sum is divided by (module docstring); required under
    ``"add_remove"``, where the default :math:`qn` would depend on the record added or removed.
    ``rounding``: :func:`dpsgd_train`'s (``"directed"``, or the records' ``"nearest"``).

    Returns: ``coef``, shape ``(d,)`` or ``(n_draws, d)``; the calibration it trained with is
    ``dpsgd_calibration(epsilon, delta, sampling_rate, steps, clip_norm, neighbouring, accountant)`` (the same
    arguments; :func:`dplr.algorithms.calibration_used` binds them from a call's).
    """
    _check_rounding(rounding)
    if check_input:
        X, y = check_training_data(X, y)
    loss = get_loss(loss, huber_h)
    calibration = dpsgd_calibration(epsilon=epsilon, delta=delta, sampling_rate=sampling_rate, steps=steps,
                                    clip_norm=clip_norm, neighbouring=neighbouring, accountant=accountant)
    if neighbouring == "add_remove" and lot_size is None:
        raise ValueError("under neighbouring='add_remove' the number of records n differs between neighbours, so the "
                         "lot's sum must not be divided by q*n. Fix: pass lot_size, a public expected lot size (q "
                         "times a public number of records), or use neighbouring='replace'.")
    return dpsgd_train(X, y, calibration.noise_multiplier, calibration.clip_norm, calibration.sampling_rate,
                       calibration.steps, learning_rate, lam, loss, n_draws=n_draws, random_state=random_state,
                       check_input=False, lot_size=lot_size, rounding=rounding)

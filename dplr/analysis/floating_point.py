r"""Floating point, attacked and defended: the support tests of Mironov and Jin et al., and Mironov's snapping.

Mironov (CCS 2012, "On significance of the least significant bits for differential privacy") showed that a
textbook floating-point Laplace sampler, :math:`o = v - b\,\mathrm{sign}(u)\log(1 - 2|u|)` with :math:`u` a
53-bit uniform, reaches only some doubles, and which ones depends on :math:`v`: an output that one input can
produce and its neighbour cannot identifies the input with certainty (a privacy loss of :math:`\infty`).

:func:`textbook_laplace` is that sampler, with :math:`u = k 2^{-53} - 1/2`, :math:`k` uniform on
:math:`\{0, \dots, 2^{53} - 1\}` (every operation exact except ``1 - 2|u|`` (exact too: a multiple of
:math:`2^{-52}` in :math:`[0, 1]`), ``log``, the product and the sum). :func:`textbook_support` decides, exactly,
whether an output :math:`o` is reachable from input :math:`v`: for each sign, the sampler's output is a
non-decreasing function of :math:`j = |k - 2^{52}|` (``1 - 2|u|`` decreases, ``log`` is monotone — an
assumption on the platform's libm, true of every correctly- or faithfully-rounded monotone implementation —,
multiplication by :math:`-b < 0` and adding :math:`v` are monotone under round-to-nearest), so bisection over the
:math:`2^{52} + 1` integers finds the least :math:`j` whose output is :math:`\ge o`; :math:`o` is reachable iff that
:math:`j` maps to :math:`o` exactly. A reachable output is certified by the exhibited :math:`j`; an unreachable
one by the monotonicity argument (every :math:`j` below maps below :math:`o`, every :math:`j` from it on maps above).

:func:`distinguishing_rate` samples outputs of :math:`M(v_0)` and counts those :math:`M(v_1)` cannot produce, with
a Clopper–Pearson 95% interval.

:func:`snapping_mechanism` is Mironov's defence (2012, Section 5.2): clamp :math:`f(D)` to :math:`[-B, B]`, add
Laplace noise of scale :math:`\lambda` computed from a 53-bit uniform, round to the nearest multiple of
:math:`\Lambda`, the smallest power of two :math:`\ge\lambda`, clamp to :math:`[-B, B]`. Its outputs lie on the grid
:math:`\Lambda\mathbb{Z}`, where the support test has nothing to find. Its privacy guarantee is Mironov's
(2012, Section 5.2, Theorem 1), which this module does not restate.

**dplr's own scalar release.** :func:`dplr.mechanisms.laplace_mechanism` on a float draws
:math:`G \sim \Gamma(1, 1)` with ``Generator.gamma(1.0)``, which is numpy's ziggurat exponential
(``random_standard_exponential_zig`` in ``numpy/random/src/distributions/distributions.c``, numpy 2.x): from one
64-bit word, a layer ``idx`` (8 bits) and a 53-bit integer ``ri``, :math:`G = \mathrm{fl}(ri \cdot w_{idx})`; when
``ri`` exceeds the layer's bound the draw is either still :math:`\mathrm{fl}(ri\,w_{idx})` (the wedge test accepts
it), or redrawn, or, in layer 0, a tail draw :math:`r - \log(1 - U) \ge r \approx 7.697`. The direction is a
normalised standard normal, exactly :math:`\pm 1` in one dimension, so the release is
:math:`o = \mathrm{fl}(v \pm \mathrm{fl}(G\,\theta))`, :math:`\theta` the mechanism's scale.
:func:`exponential_ziggurat_tables` rebuilds the layer widths :math:`w_{idx}`: the Marsaglia–Tsang recursion
(Marsaglia & Tsang 2000; in double precision as in Bateman's randmtzig) agrees with numpy's tables to about
:math:`10^{-13}` but not bit for bit, so each width is then pinned exactly by numpy's own draws (the one double
consistent with every draw of its layer), and :func:`replay_standard_exponential` replays numpy's sampler from the
raw 64-bit stream. :func:`dplr_laplace_support` decides whether :math:`o` is reachable from :math:`v`: for each
sign and each of the 256 layers the release is monotone in ``ri`` (every operation is monotone under
round-to-nearest), so bisection over the :math:`2^{53}` integers finds the only candidate. It is exact except where
it says "possible" conservatively: outputs whose noise magnitude is at least :math:`\mathrm{fl}(r\theta)` (the
tail branch, probability about :math:`e^{-r} \approx 4.5\cdot 10^{-4}`, not modelled), and wedge draws whose
acceptance probability rounds to 0. "Unreachable" is therefore certain; the distinguishing rate it gives is a
lower bound on the attack's.

**dplr's Gaussian release** (Jin, McMurtry, Rubinstein & Ohrimenko, "Are we there yet? Timing and floating-point
attacks on differential privacy systems", IEEE S&P 2022: the floating-point support attack, on Gaussian samplers).
:func:`dplr.gaussian.gaussian_mechanism` releases :math:`o = \mathrm{fl}(v + \mathrm{fl}(\sigma Z))` per coordinate,
:math:`Z` from ``Generator.standard_normal``: numpy's normal ziggurat (``random_standard_normal``), whose 64-bit word
gives a layer (8 bits), a sign (1 bit) and a 52-bit integer ``rabs``, :math:`Z = \pm\mathrm{fl}(\mathrm{rabs}\cdot
w_{idx})`. With one bit fewer than the exponential's, consecutive products of one layer (edge :math:`x_i`) are
:math:`x_i/2^m > 1` doubles apart in the binade :math:`[2^m, 2^{m+1})`: each layer misses doubles, and near the top
of the range, where few layers overlap, so does their union. Scaling by :math:`\sigma` and adding :math:`v` round
again; released from 0, an output near 0 keeps low bits finer than :math:`\mathrm{fl}(1 + \mathrm{fl}(\sigma Z))`
can produce. :func:`normal_ziggurat_tables` pins numpy's widths from its
own draws (the recursion with Marsaglia & Tsang's 12-digit area is about :math:`3\cdot 10^{-10}` off),
:func:`replay_standard_normal` replays the sampler bit for bit, and :func:`dplr_gaussian_support` is the support
test, per coordinate, exact up to the same conservative treatment of the wedge and the tail.

**Algorithm 2's certified release** (:func:`dplr.algorithms.objective_perturbation`, ``release="certified"``)
releases :math:`o = \mathrm{fl}(\tilde w(D, b) + \eta)`: its pre-noise point depends on the secret draw :math:`b`,
so the support of :math:`M(D')` is the union, over every :math:`b'` the sampler can draw, of the supports of
:math:`\tilde w(D', b') + \eta`. No attacker can enumerate it (one solve per :math:`b'`); the attack needs a
double that no :math:`b'` reaches. :func:`certified_witnesses` looks for the opposite, constructively: for each
output, a sampled (or aimed) :math:`b'` (:func:`dplr.release.certified_point` computes its :math:`\tilde w(D', b')` as the release
does) and an output-noise state mapping to it exactly; :func:`certified_release_attack` counts the outputs left
without a witness, an upper bound on the support attack's rate (in one dimension, where the output noise is one
ziggurat draw).

Over 400 lines because it rebuilds two of numpy's samplers bit for bit, each with its exact support test.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from functools import lru_cache

import numpy as np
from scipy import stats

from dplr.algorithms import calibration_used, objective_perturbation
from dplr.directed_rounding import exact, round_down
from dplr.gaussian import analytic_gaussian_sigma
from dplr.losses import get_loss
from dplr.mechanisms import IsotropicGaussian, VectorLaplace, laplace_mechanism
from dplr.release import certified_point
from dplr.validation import check_positive_finite, check_random_state, check_training_data

__all__ = [
    "textbook_laplace",
    "textbook_support",
    "DistinguishingRate",
    "distinguishing_rate",
    "snapping_mechanism",
    "ZIGGURAT_EXP_R",
    "ExponentialZiggurat",
    "exponential_ziggurat_tables",
    "replay_standard_exponential",
    "dplr_laplace",
    "dplr_laplace_support",
    "ZIGGURAT_NOR_R",
    "NormalZiggurat",
    "normal_ziggurat_tables",
    "replay_standard_normal",
    "dplr_gaussian",
    "dplr_gaussian_support",
    "gaussian_distinguishing_rate",
    "certified_witnesses",
    "certified_release_attack",
]

_HALF = 2 ** 52  # |k - 2^52| ranges over 0 .. 2^52


def _textbook_from_j(value, scale, j, sign):
    """The textbook sampler's output for |u| = j 2^-53 and sign(u) = sign (arrays of int64 j)."""
    one_minus = 1.0 - j.astype(np.float64) * 2.0 ** -52  # exact: j < 2^53
    with np.errstate(divide="ignore"):
        noise = -scale * sign * np.log(one_minus)
    return value + noise


def textbook_laplace(value, scale, size=None, random_state=None):
    r"""Mironov's textbook Laplace sampler: :math:`v - b\,\mathrm{sign}(u)\log(1 - 2|u|)`, :math:`u = k2^{-53} - 1/2`.

    ``k`` is a 53-bit integer (``rng.integers(0, 2**53)``); :math:`k = 0` (:math:`|u| = 1/2`) gives an infinite
    output, which is returned as such (probability :math:`2^{-53}`).
    """
    value = float(np.asarray(value, dtype=float))
    if not np.isfinite(value):
        raise ValueError(f"value must be finite, got {value!r}.")
    scale = check_positive_finite(scale, "scale")
    n = 1 if size is None else size
    if isinstance(n, bool) or not isinstance(n, (int, np.integer)) or n < 0:
        raise ValueError(f"size must be None or a non-negative integer, got {size!r}.")
    k = check_random_state(random_state).integers(0, 2 ** 53, size=n, dtype=np.int64)
    d = k - _HALF
    out = _textbook_from_j(value, scale, np.abs(d), np.sign(d).astype(np.float64))
    return out[0] if size is None else out


def _support_inputs(outputs, value):
    """A support test's outputs (a finite float array) and input value (a finite float), or ValueError."""
    o = np.atleast_1d(np.asarray(outputs, dtype=float))
    if not np.all(np.isfinite(o)):
        raise ValueError("outputs must be finite.")
    value = float(np.asarray(value, dtype=float))
    if not np.isfinite(value):
        raise ValueError(f"value must be finite, got {value!r}.")
    return o, value


def textbook_support(outputs, value, scale):
    r"""Whether each output can be produced by :func:`textbook_laplace` from ``value`` (exact; see the module doc).

    Returns ``(reachable, j, sign)``: a boolean array and, where reachable, the certifying :math:`|u|2^{53}` and
    sign of :math:`u` (a state that maps to the output exactly; -1 where unreachable).
    """
    o, value = _support_inputs(outputs, value)
    scale = check_positive_finite(scale, "scale")
    reachable = np.zeros(o.shape, dtype=bool)
    cert_j = np.full(o.shape, -1, dtype=np.int64)
    cert_s = np.zeros(o.shape)
    for sign in (1.0, -1.0):
        # output is non-decreasing in j for sign +1; non-increasing for sign -1: search on sign * output.
        target = sign * o
        lo = np.zeros(o.shape, dtype=np.int64)  # least j with sign*out(j) >= target lies in [lo, hi]
        hi = np.full(o.shape, _HALF, dtype=np.int64)
        for _ in range(60):
            active = lo < hi
            if not active.any():
                break
            mid = (lo + hi) // 2
            ge = sign * _textbook_from_j(value, scale, mid, sign) >= target
            hi = np.where(active & ge, mid, hi)
            lo = np.where(active & ~ge, mid + 1, lo)
        hit = _textbook_from_j(value, scale, lo, sign) == o
        new = hit & ~reachable
        cert_j[new], cert_s[new] = lo[new], sign
        reachable |= hit
    return reachable, cert_j, cert_s


@dataclass(frozen=True)
class DistinguishingRate:
    """Outputs of M(v0) that M(v1) cannot produce: count, sample size, rate and Clopper–Pearson interval."""

    count: int
    n: int
    rate: float
    low: float
    high: float


def distinguishing_rate(sampler, support, v0, v1, n, random_state=None, confidence=0.95):
    r"""Sample ``n`` outputs ``sampler(v0, n, rng)`` and count those with ``support(outputs, v1)`` False.

    Outputs are scalars (shape ``(n,)``) or vectors (``(n, d)``, one support answer per row); non-finite ones are
    dropped. The count's law is Binomial(n, p), p the probability that :math:`M(v_0)` lands outside the support of
    :math:`M(v_1)`: such an event has probability 0 under :math:`M(v_1)`, so (ε, δ)-DP requires :math:`\delta \ge p`.

    Returns a :class:`DistinguishingRate` with the exact (Clopper–Pearson) interval: a count of 0 bounds the rate
    from above, it does not show it is 0.
    """
    if isinstance(n, bool) or not isinstance(n, (int, np.integer)) or n < 1:
        raise ValueError(f"n must be a positive integer, got {n!r}.")
    outputs = np.asarray(sampler(v0, n, check_random_state(random_state)))
    outputs = outputs[np.all(np.isfinite(outputs.reshape(len(outputs), -1)), axis=1)]  # rows: vector outputs
    own = support(outputs, v0)
    if not np.all(own):
        raise AssertionError("a sampled output is not reachable from its own input: the support test is wrong.")
    return _rate(int(np.sum(~support(outputs, v1))), len(outputs), confidence)


def _rate(count, size, confidence):
    """``count`` of ``size`` with its Clopper–Pearson interval, a :class:`DistinguishingRate`."""
    ci = stats.binomtest(count, size).proportion_ci(confidence_level=confidence, method="exact")
    return DistinguishingRate(count, size, count / size, float(ci.low), float(ci.high))


def snapping_mechanism(value, sensitivity, epsilon, bound, random_state=None):
    r"""Mironov's snapping mechanism (2012, Section 5.2), scalar case.

    .. math::

        \mathrm{clamp}_B\big(\lfloor \mathrm{clamp}_B(f(D)) \oplus S \otimes \lambda \otimes \ln U^* \rceil_\Lambda\big),
        \qquad \lambda = S_f/\varepsilon,

    with :math:`S = \pm 1` a fair sign, :math:`U^* = (k + 1)2^{-53}`, :math:`k` a 53-bit integer (a uniform
    double in :math:`(0, 1]`), :math:`\Lambda` the smallest power of two :math:`\ge \lambda`,
    :math:`\lfloor\cdot\rceil_\Lambda` rounding to the nearest multiple of :math:`\Lambda` (exact: division by a
    power of two), :math:`\oplus, \otimes` float64 operations. Requires :math:`\lambda < B < 2^{46}\lambda`
    (the range of Mironov's theorem). Outputs lie on :math:`\Lambda\mathbb{Z} \cap [-B, B]`.
    """
    sensitivity = check_positive_finite(sensitivity, "sensitivity")
    epsilon = check_positive_finite(epsilon, "epsilon")
    bound = check_positive_finite(bound, "bound")
    value = float(np.asarray(value, dtype=float))
    if not np.isfinite(value):
        raise ValueError(f"value must be finite, got {value!r}.")
    lam = sensitivity / epsilon
    if not lam < bound < 2.0 ** 46 * lam:
        raise ValueError(f"need lambda < bound < 2^46 lambda; lambda = {lam!r}, bound = {bound!r}.")
    grid = 2.0 ** int(np.ceil(np.log2(lam)))
    if grid < lam:
        grid *= 2.0
    while grid / 2.0 >= lam:
        grid /= 2.0
    rng = check_random_state(random_state)
    k = rng.integers(0, 2 ** 53, dtype=np.int64)
    sign = 1.0 if rng.integers(0, 2) else -1.0
    u = (float(k) + 1.0) * 2.0 ** -53
    x = min(max(value, -bound), bound) + sign * lam * np.log(u)
    snapped = np.round(x / grid) * grid
    return float(min(max(snapped, -bound), bound))


#: The exponential ziggurat's tail start r (numpy's ``ziggurat_exp_r``; Marsaglia & Tsang 2000, 256 layers).
ZIGGURAT_EXP_R = 7.6971174701310497140446280481
_EXP_AREA = 0.0039496598225815571993  # the area v of each layer
_TWO53 = 2.0 ** 53


@dataclass(frozen=True)
class ExponentialZiggurat:
    """The tables of numpy's ziggurat exponential: widths ``we`` (exact), bounds ``ke`` and heights ``fe``
    (the Marsaglia–Tsang recursion: about 1e-13 from numpy's, which moves an accept/reject decision only when a
    draw falls within that of a boundary)."""

    we: np.ndarray
    ke: np.ndarray
    fe: np.ndarray


def _recursion_tables():
    """Marsaglia & Tsang's recursion x_i = -log(v/x_{i+1} + e^{-x_{i+1}}) in double precision (Bateman's layout)."""
    ke = np.zeros(256, dtype=np.uint64)
    we = np.zeros(256)
    fe = np.zeros(256)
    x1 = ZIGGURAT_EXP_R
    we[255], fe[255] = x1 / _TWO53, math.exp(-x1)
    ke[0] = int(x1 * fe[255] / _EXP_AREA * _TWO53)
    we[0], fe[0] = _EXP_AREA / fe[255] / _TWO53, 1.0
    for i in range(254, 0, -1):
        x = -math.log(_EXP_AREA / x1 + fe[i + 1])
        ke[i + 1] = int(x / x1 * _TWO53)
        we[i], fe[i] = x / _TWO53, math.exp(-x)
        x1 = x
    return ExponentialZiggurat(we, ke, fe)


def _next_double(word):
    return (int(word) >> 11) * 2.0 ** -53


def replay_standard_exponential(raw, n, tables, trace=False):
    """numpy's ``random_standard_exponential_zig`` replayed on the raw 64-bit words ``raw`` (``random_raw()``).

    Returns ``n`` draws (and, with ``trace``, per draw ``(idx, ri)`` of the returned ziggurat value, idx -1 for a
    tail draw). Raises if ``raw`` runs out.
    """
    out = np.empty(n)
    idxs = np.full(n, -1, dtype=np.int64)
    ris = np.zeros(n, dtype=np.int64)
    pos = 0
    for i in range(n):
        while True:
            word = int(raw[pos]) >> 3
            pos += 1
            idx, ri = word & 0xFF, word >> 8
            x = ri * float(tables.we[idx])
            if ri < int(tables.ke[idx]):
                out[i], idxs[i], ris[i] = x, idx, ri
                break
            u = _next_double(raw[pos])
            pos += 1
            if idx == 0:
                out[i] = ZIGGURAT_EXP_R - math.log(1.0 - u)
                break
            if (tables.fe[idx - 1] - tables.fe[idx]) * u + tables.fe[idx] < math.exp(-x):
                out[i], idxs[i], ris[i] = x, idx, ri
                break
    return (out, idxs, ris) if trace else out


def _pin_width(ri, x, approx):
    """The one double w with fl(ri * w) == x for every draw (ri, x) of a layer, searched within 4096 ulps of approx."""
    cands = approx + np.arange(-4096, 4097) * np.spacing(approx)
    cands = np.unique(np.concatenate([cands, np.nextafter(cands, np.inf)]))
    ok = np.ones(cands.size, dtype=bool)
    for r, xx in zip(ri, x):
        ok &= float(r) * cands == xx
    if ok.sum() != 1:
        raise RuntimeError(f"numpy's ziggurat width is not pinned ({int(ok.sum())} candidates): has numpy's "
                           "exponential sampler changed? This reconstruction follows numpy 2.x.")
    return cands[ok][0]


@lru_cache(maxsize=1)
def exponential_ziggurat_tables(n_draws=2 ** 15, seed=20121016):
    """numpy's exponential ziggurat tables: the recursion's, with every width pinned exactly by ``n_draws`` of
    numpy's own draws (``PCG64(seed)``; raises if a layer's width is not determined or a draw disagrees)."""
    approx = _recursion_tables()
    raw = np.random.PCG64(seed).random_raw(3 * n_draws)
    drawn = np.random.Generator(np.random.PCG64(seed)).standard_exponential(n_draws)
    rel = 1e-11
    _, idxs, ris = replay_standard_exponential(raw, n_draws, approx, trace=True)
    we = approx.we.copy()
    for idx in range(256):
        at = (idxs == idx) & (ris > 0)
        if not at.any():
            raise RuntimeError(f"layer {idx} got no draw: raise n_draws.")
        if not np.all(np.abs(ris[at] * approx.we[idx] - drawn[at]) <= rel * drawn[at]):
            raise RuntimeError("the replay disagrees with numpy: has numpy's exponential sampler changed?")
        we[idx] = _pin_width(ris[at], drawn[at], approx.we[idx])
    tables = ExponentialZiggurat(we, approx.ke, approx.fe)
    if not np.array_equal(replay_standard_exponential(raw, n_draws, tables), drawn):
        raise RuntimeError("the pinned tables do not replay numpy bit for bit.")
    return tables


def dplr_laplace(value, sensitivity, epsilon, size, random_state=None):
    """``size`` releases of :func:`dplr.mechanisms.laplace_mechanism` on the float ``value``, one call each (one stream)."""
    rng = check_random_state(random_state)
    return np.array([float(laplace_mechanism(float(value), sensitivity, epsilon, rng)) for _ in range(size)])


def _release(value, theta, sign, we, ri):
    return value + sign * ((ri.astype(np.float64) * we) * theta)


def _ziggurat_support(o, value, scale, widths, n_ri, tail, chunk=256):
    r"""Whether each output in the 1-d array ``o`` is :math:`\mathrm{fl}(v \pm \mathrm{fl}(\mathrm{fl}(k w_i)\,s))`
    for some layer :math:`i`, sign and integer :math:`0 \le k <` ``n_ri``, or at least ``tail`` from ``value`` (the
    ziggurat's tail branch, conservatively). For a fixed layer and sign the release is monotone in :math:`k` (every
    operation is monotone under round-to-nearest), so bisection finds the least :math:`k` whose release reaches the
    output, the only candidate; the answer is exact for that set of states. ``value``: a float, or one per output."""
    values = np.broadcast_to(np.asarray(value, dtype=float), o.shape)
    reachable = (o >= values + tail) | (o <= values - tail)
    steps = int(n_ri).bit_length() + 1
    for start in range(0, o.size, chunk):
        part, value = o[start:start + chunk], values[start:start + chunk, None]
        target = part[:, None]
        hit = np.zeros(part.shape, dtype=bool)
        for sign in (1.0, -1.0):
            lo = np.zeros((part.size, widths.size), dtype=np.int64)
            hi = np.full((part.size, widths.size), n_ri - 1, dtype=np.int64)
            for _ in range(steps):
                active = lo < hi
                if not active.any():
                    break
                mid = (lo + hi) // 2
                ge = sign * _release(value, scale, sign, widths, mid) >= sign * target
                hi = np.where(active & ge, mid, hi)
                lo = np.where(active & ~ge, mid + 1, lo)
            hit |= np.any(_release(value, scale, sign, widths, lo) == target, axis=1)
        reachable[start:start + chunk] |= hit
    return reachable


def dplr_laplace_support(outputs, value, sensitivity, epsilon, chunk=256):
    r"""Whether each output can be released by :func:`dplr.mechanisms.laplace_mechanism` from the float ``value``.

    Exact but conservative (see the module doc): False is certain (no layer, integer and sign map to the output,
    and the output is not in the tail's range); True means an exhibited state maps to it, or it lies where the
    unmodelled tail could reach.
    """
    o, value = _support_inputs(outputs, value)
    sensitivity = check_positive_finite(sensitivity, "sensitivity")
    epsilon = check_positive_finite(epsilon, "epsilon")
    # the scale the release multiplies by, computed as dplr.mechanisms.laplace_mechanism computes it
    theta = VectorLaplace.from_rate(1, round_down(exact(epsilon) / exact(sensitivity))).scale
    we = exponential_ziggurat_tables().we
    return _ziggurat_support(o, value, theta, we, 2 ** 53, ZIGGURAT_EXP_R * theta, chunk)


# --- dplr's Gaussian release: numpy's normal ziggurat (Jin et al. 2022's attack, specialised) ----------------------

#: The normal ziggurat's tail start r (numpy's ``ziggurat_nor_r``; Marsaglia & Tsang 2000, 256 layers).
ZIGGURAT_NOR_R = 3.6541528853610088
_NOR_INV_R = 0.27366123732975827203338247596  # numpy's ziggurat_nor_inv_r, 1/r as a literal (the tail multiplies by it)
_NOR_AREA = 0.00492867323399  # the area v of each layer, as Marsaglia & Tsang print it (12 digits)
_TWO52 = 2.0 ** 52


@dataclass(frozen=True)
class NormalZiggurat:
    """The tables of numpy's normal ziggurat: widths ``wi`` (exact, pinned by draws), bounds ``ki`` and heights
    ``fi`` (recomputed from the pinned widths; they decide only which path a draw takes, never its value)."""

    wi: np.ndarray
    ki: np.ndarray
    fi: np.ndarray


def _normal_recursion_widths():
    """Marsaglia & Tsang's recursion x_i = sqrt(-2 log(v/x_{i+1} + f(x_{i+1}))), f(x) = e^{-x^2/2}: widths x_i/2^52."""
    wi = np.zeros(256)
    x1 = ZIGGURAT_NOR_R
    f1 = math.exp(-0.5 * x1 * x1)
    wi[255], wi[0] = x1 / _TWO52, _NOR_AREA / f1 / _TWO52
    for i in range(254, 0, -1):
        x = math.sqrt(-2.0 * math.log(_NOR_AREA / x1 + f1))
        wi[i], f1, x1 = x / _TWO52, math.exp(-0.5 * x * x), x
    return wi


def _normal_tables_from_widths(wi):
    """``ki`` and ``fi`` from the layer edges x_i = 2^52 w_i: k_i = floor(2^52 x_{i-1}/x_i) (k_0 = floor(r/w_0),
    k_1 = 0: the top layer always takes the wedge test), f_i = e^{-x_i^2/2} (f_0 = 1)."""
    x = wi * _TWO52
    ki = np.zeros(256, dtype=np.uint64)
    ki[0] = int(ZIGGURAT_NOR_R / wi[0])
    for i in range(2, 256):
        ki[i] = int(x[i - 1] / x[i] * _TWO52)
    fi = np.array([1.0] + [math.exp(-0.5 * xi * xi) for xi in x[1:]])  # libm's exp, as numpy's C code calls it
    return NormalZiggurat(wi, ki, fi)


def replay_standard_normal(raw, n, tables, trace=False):
    r"""numpy's ``random_standard_normal`` (numpy 2.x) replayed on the raw 64-bit words ``raw`` (``random_raw()``).

    Per draw: a word :math:`r`; layer ``idx`` = its low 8 bits, then the sign bit, then a 52-bit integer
    ``rabs``; :math:`x = \pm\mathrm{fl}(\mathrm{rabs}\cdot w_{idx})`, returned at once when ``rabs`` < ``ki[idx]``.
    Otherwise a uniform :math:`u` (53 bits) decides the wedge, :math:`(f_{idx-1} - f_{idx})u + f_{idx} <
    e^{-x^2/2}`, or, in layer 0, the tail :math:`\pm(r + \xi)`, :math:`\xi = -\log(1 - u_1)\cdot\mathrm{fl}(1/r)` accepted when
    :math:`-2\log(1 - u_2) > \xi^2`, its sign bit 8 of ``rabs``. Returns ``n`` draws (with ``trace``, per draw
    ``(idx, rabs)`` of the returned ziggurat value, idx -1 for a tail draw). Raises if ``raw`` runs out.
    """
    out = np.empty(n)
    idxs = np.full(n, -1, dtype=np.int64)
    rabss = np.zeros(n, dtype=np.int64)
    pos = 0
    for i in range(n):
        while True:
            word = int(raw[pos]) >> 8
            idx = int(raw[pos]) & 0xFF
            pos += 1
            rabs = (word >> 1) & 0x000FFFFFFFFFFFFF
            x = rabs * float(tables.wi[idx])
            if word & 1:
                x = -x
            if rabs < int(tables.ki[idx]):
                out[i], idxs[i], rabss[i] = x, idx, rabs
                break
            if idx == 0:
                while True:
                    xx = -_NOR_INV_R * math.log1p(-_next_double(raw[pos]))
                    yy = -math.log1p(-_next_double(raw[pos + 1]))
                    pos += 2
                    if yy + yy > xx * xx:
                        break
                out[i] = -(ZIGGURAT_NOR_R + xx) if (rabs >> 8) & 1 else ZIGGURAT_NOR_R + xx
                break
            u = _next_double(raw[pos])
            pos += 1
            if (tables.fi[idx - 1] - tables.fi[idx]) * u + tables.fi[idx] < math.exp(-0.5 * x * x):
                out[i], idxs[i], rabss[i] = x, idx, rabs
                break
    return (out, idxs, rabss) if trace else out


@lru_cache(maxsize=1)
def normal_ziggurat_tables(n_draws=2 ** 15, seed=20220522):
    """numpy's normal ziggurat tables: every width pinned exactly by ``n_draws`` of numpy's own draws
    (``PCG64(seed)``), ``ki`` and ``fi`` recomputed from them; raises unless the tables replay those draws bit for bit.

    The recursion (``_normal_recursion_widths``, with the 12-digit area) lands about 3e-10 (relative) from
    numpy's widths, so each width is searched near the ratio ``x / rabs`` of its layer's draw with the largest
    ``rabs`` and must then map every draw of its layer exactly (within 1e-9 of the recursion's, or it raises).
    """
    approx = _normal_tables_from_widths(_normal_recursion_widths())
    raw = np.random.PCG64(seed).random_raw(3 * n_draws)
    # numpy's draws as the mechanism makes them: standard_normal times sigma = 1 (exact)
    drawn = IsotropicGaussian.from_sigma(1, 1.0).sample(n_draws, np.random.Generator(np.random.PCG64(seed)))[:, 0]
    _, idxs, rabss = replay_standard_normal(raw, n_draws, approx, trace=True)
    wi = approx.wi.copy()
    for idx in range(256):
        at = (idxs == idx) & (rabss > 0)
        if not at.any():
            raise RuntimeError(f"layer {idx} got no draw: raise n_draws.")
        ri, x = rabss[at], np.abs(drawn[at])
        top = int(np.argmax(ri))
        wi[idx] = _pin_width(ri, x, x[top] / float(ri[top]))
        if abs(wi[idx] - approx.wi[idx]) > 1e-9 * approx.wi[idx]:
            raise RuntimeError("the replay disagrees with numpy: has numpy's normal sampler changed?")
    tables = _normal_tables_from_widths(wi)
    if not np.array_equal(replay_standard_normal(raw, n_draws, tables), drawn):
        raise RuntimeError("the pinned tables do not replay numpy bit for bit.")
    return tables


def dplr_gaussian(value, sensitivity, epsilon, delta, size, random_state=None):
    r"""``size`` releases of :func:`dplr.gaussian.gaussian_mechanism` on ``value`` (a float or a 1-d array), one stream.

    Bit for bit the outputs of ``size`` successive calls (a test checks it): :math:`\sigma` =
    :func:`dplr.gaussian.analytic_gaussian_sigma` computed once, then ``value + standard_normal((size, d)) * sigma``
    as :meth:`dplr.mechanisms.IsotropicGaussian.sample` draws it. Shape ``(size,)`` for a scalar, ``(size, d)``.
    """
    flat = np.atleast_1d(np.asarray(value, dtype=float))
    if flat.ndim != 1 or not np.all(np.isfinite(flat)):
        raise ValueError(f"value must be a finite float or 1-d array, got {value!r}.")
    sigma = analytic_gaussian_sigma(epsilon, delta, sensitivity)
    out = flat + IsotropicGaussian.from_sigma(flat.size, sigma).sample(size, check_random_state(random_state))
    return out[:, 0] if np.ndim(value) == 0 else out


def dplr_gaussian_support(outputs, value, sensitivity, epsilon, delta, chunk=128):
    r"""Whether each output can be released by :func:`dplr.gaussian.gaussian_mechanism` from ``value``: Jin et al.'s
    floating-point support test on numpy's normal ziggurat.

    Jin, McMurtry, Rubinstein & Ohrimenko, "Are we there yet? Timing and floating-point attacks on differential
    privacy systems", IEEE S&P 2022: a float Gaussian release :math:`o = \mathrm{fl}(v + \mathrm{fl}(\sigma Z))`
    reaches only the doubles its sampler's states map to, and which ones depends on :math:`v`; an output of
    :math:`M(v_0)` that no state maps to from :math:`v_1` identifies :math:`v_0`. Here the sampler is numpy's
    ziggurat (:func:`replay_standard_normal`): per coordinate
    :math:`o_j = \mathrm{fl}(v_j \pm \mathrm{fl}(\sigma\,\mathrm{fl}(k\,w_i)))` for a layer :math:`i`, a sign and a
    52-bit integer :math:`k`. For each of the 256 layers and both signs the release is monotone in :math:`k`, so
    bisection over :math:`[0, 2^{52})` finds the only candidate, which must map to :math:`o_j` exactly.

    Conservative in the direction that keeps "unreachable" certain: every :math:`k < 2^{52}` of every layer counts
    (the fast path takes :math:`k < k_i`; the wedge test can return the same :math:`\mathrm{fl}(k w_i)` for larger
    :math:`k`, with a probability this test does not compute, and in layer 0 such :math:`k` go to the tail instead),
    and every output at least :math:`\mathrm{fl}(\sigma r)` from :math:`v_j` counts as reachable (the tail
    :math:`|Z| \ge r`, probability about :math:`2.6\cdot 10^{-4}`, not modelled). The 64-bit words are modelled as
    free (every word possible, the coordinates' draws independent); PCG64 reaching fewer states only removes
    outputs. So False -- some coordinate unreachable -- is certain, and :func:`distinguishing_rate` with this test
    is a lower bound on the support attack's rate. ``outputs``: shape ``(n,)`` for a scalar ``value``, ``(n, d)``
    for a ``d``-vector; returns one boolean per output (all its coordinates reachable).
    """
    flat = np.atleast_1d(np.asarray(value, dtype=float))
    o = np.asarray(outputs, dtype=float)
    if flat.ndim != 1:
        raise ValueError(f"value must be a float or a 1-d array, got shape {flat.shape}.")
    scalar = np.ndim(value) == 0
    o2 = np.atleast_1d(o)[:, None] if scalar and o.ndim <= 1 else o
    if o2.ndim != 2 or o2.shape[1] != flat.size or (scalar and o.ndim > 1):
        shape = "(n,)" if scalar else f"(n, {flat.size})"
        raise ValueError(f"outputs must have shape {shape} for this value, got {o.shape}.")
    sigma = analytic_gaussian_sigma(epsilon, delta, sensitivity)
    wi = normal_ziggurat_tables().wi
    reachable = np.ones(o2.shape[0], dtype=bool)
    for j in range(flat.size):
        oj, vj = _support_inputs(o2[:, j], flat[j])
        reachable &= _ziggurat_support(oj, vj, sigma, wi, 2 ** 52, ZIGGURAT_NOR_R * sigma, chunk)
    return reachable


def gaussian_distinguishing_rate(v0, v1, sensitivity, epsilon, delta, n, random_state=None, confidence=0.95):
    r"""Jin et al.'s support attack on :func:`dplr.gaussian.gaussian_mechanism`: :func:`distinguishing_rate` of
    :math:`M(v_0)` against :math:`M(v_1)` with :func:`dplr_gaussian` and :func:`dplr_gaussian_support`.

    ``v0``, ``v1``: floats or 1-d arrays of one length (a vector release is tested per coordinate). The rate is
    the probability that an output of :math:`M(v_0)` is certainly not an output of :math:`M(v_1)`, estimated from
    ``n`` draws with its Clopper–Pearson interval; (ε, δ)-DP of the float release needs δ at least that
    probability when :math:`\lVert v_0 - v_1\rVert \le` ``sensitivity`` (the caller's to check).
    """
    return distinguishing_rate(lambda v, size, rng: dplr_gaussian(v, sensitivity, epsilon, delta, size, rng),
                               lambda o, v: dplr_gaussian_support(o, v, sensitivity, epsilon, delta),
                               v0, v1, n, random_state=random_state, confidence=confidence)


# --- Algorithm 2's certified release: the pre-noise point depends on the secret b --------------------------------

def certified_witnesses(outputs, candidates, rate, tries=8):
    r"""Whether each scalar output is exhibited as :math:`\mathrm{fl}(v \pm \mathrm{fl}(\mathrm{fl}(k w_i)\,\theta))`
    for one of the pre-noise values ``candidates`` (:math:`v`), the output noise being
    ``VectorLaplace.from_rate(1, rate)`` drawn by numpy's ziggurat (scale :math:`\theta`; a layer :math:`i`, a sign,
    an integer :math:`k < 2^{53}`, as :func:`dplr_laplace_support` models it).

    For each output the ``tries`` nearest candidates less than :math:`\mathrm{fl}(r\theta)` away (:math:`r` =
    :data:`ZIGGURAT_EXP_R`, the ziggurat's main range; the tail is not modelled, so it certifies nothing here) are
    tried, nearest first, by the bisection of :func:`dplr_laplace_support`. True: a candidate and a state that map to
    the output exactly (a witness); False: none found among those tried, which does not show that none exists.
    """
    o = np.atleast_1d(np.asarray(outputs, dtype=float))
    values = np.unique(np.asarray(candidates, dtype=float))
    if not (np.all(np.isfinite(o)) and values.size and np.all(np.isfinite(values))):
        raise ValueError("outputs and candidates must be finite, and candidates non-empty.")
    theta = VectorLaplace.from_rate(1, check_positive_finite(rate, "rate")).scale
    we, reach = exponential_ziggurat_tables().we, ZIGGURAT_EXP_R * theta
    # each output's candidates, nearest first: the `tries` values either side of it in sorted order, by distance
    at = np.searchsorted(values, o)
    window = np.clip(at[:, None] + np.arange(-tries, tries)[None, :], 0, values.size - 1)
    near = values[window]
    near = np.take_along_axis(near, np.argsort(np.abs(near - o[:, None]), axis=1, kind="stable"), axis=1)
    found = np.zeros(o.shape, dtype=bool)
    for t in range(tries):
        todo = ~found & (np.abs(near[:, t] - o) < reach)
        if todo.any():
            found[todo] = _ziggurat_support(o[todo], near[todo, t], theta, we, 2 ** 53, np.inf)
    return found


def certified_release_attack(X, y, X_prime, y_prime, epsilon, lam, n, n_candidates, random_state=None,
                             confidence=0.95):
    r"""The support attack on Algorithm 2's certified release in one dimension: how many of ``n`` outputs of
    :math:`M(D)` (``objective_perturbation(X, y, epsilon, lam)``, one call each, seeds from ``random_state``) have no
    witness (:func:`certified_witnesses`) among ``n_candidates`` pre-noise points :math:`\tilde w(D', b')` of the
    neighbour, :math:`b'` drawn by the release's own sampler (so reachable) and :math:`\tilde w` computed as the
    release computes it (:func:`dplr.release.certified_point`, one solve each, as ``n_draws=None`` solves); an output
    left without one is tried again against points aimed at it (``_aimed_points``: 25 values :math:`b'` the
    sampler can draw, its tail included, chosen so that :math:`\tilde w(D', b')` lies within three noise scales).

    An output with a witness is certainly an output :math:`M(D')` can produce (with the 64-bit words of
    :func:`dplr_gaussian_support`'s model: every word possible); so the count without one bounds the support attack's
    count from above, and its Clopper–Pearson interval (a :class:`DistinguishingRate`) bounds the attack's rate.
    Returns ``(rate, own)``: ``own`` counts the outputs without a witness from :math:`D`'s own candidates (drawn
    alike), a check of the search's reach: an output always comes from :math:`D`.
    """
    X, y = check_training_data(X, y)
    X_prime, y_prime = check_training_data(X_prime, y_prime)
    if X.shape != (len(y), 1) or X_prime.shape != X.shape:
        raise ValueError("the attack runs in one dimension: X and X_prime of shape (n, 1), of the same n.")
    rng = check_random_state(random_state)
    seeds = rng.integers(0, 2 ** 63, size=n)
    outputs = np.array([objective_perturbation(X, y, epsilon, lam, random_state=int(s), check_input=False)[0]
                        for s in seeds])
    calibration = calibration_used(objective_perturbation, X, y, epsilon, lam)
    loss = get_loss("logistic")

    def candidates(features, labels):
        b = calibration.mechanism(1).sample(n_candidates, rng)
        return np.array([certified_point(features, labels, lam, loss, calibration, row)[0] for row in b])

    def missing(features, labels):
        found = certified_witnesses(outputs, candidates(features, labels), calibration.output_rate)
        for i in np.flatnonzero(~found):  # aimed: b' whose point lies a few noise scales from the output
            aimed = _aimed_points(outputs[i], features, labels, lam, loss, calibration)
            found[i] = certified_witnesses(outputs[i], aimed, calibration.output_rate, tries=aimed.size)[0]
        return int(np.sum(~found))

    own = missing(X, y)
    return _rate(missing(X_prime, y_prime), n, confidence), own


def _aimed_points(output, X, y, lam, loss, calibration, offsets=np.linspace(-3, 3, 25)):
    r"""Certified points :math:`\tilde w(D, b')` aimed at ``output`` + ``offsets`` output-noise scales (d = 1), each
    :math:`b'` a value the objective's sampler draws: :math:`\pm\mathrm{fl}(\mathrm{fl}(k w_i)\,\theta_b)`, the
    radius :math:`\mathrm{fl}(k w_i)` of a ziggurat layer :math:`i \ge 1` with :math:`k` below 0.99 of the layer's
    bound (returned without the wedge test: reachable by the fast path), or beyond :math:`r` the tail's
    :math:`\mathrm{fl}(r - \log(1 - k2^{-53}))` (numpy's ``ziggurat_exp_r - npy_log1p(-next_double)``, the platform's
    ``log1p`` as Python's ``math.log1p`` calls it, as :func:`replay_standard_normal` assumes). The aim is the exact minimiser's
    :math:`b = -n(\lambda+\Delta)w - \sum_i \ell'(y_i w x_i)\,y_i x_i` at the target :math:`w`."""
    n = X.shape[0]
    tables = exponential_ziggurat_tables()
    theta_b = calibration.mechanism(1).scale
    points = []
    for target in output + offsets / calibration.output_rate:
        aim = -n * (lam + calibration.ridge) * target - float(np.sum(loss.derivative(y * X[:, 0] * target) * y * X[:, 0]))
        radius = abs(aim) / theta_b
        if radius > ZIGGURAT_EXP_R:
            u = math.floor(-math.expm1(ZIGGURAT_EXP_R - radius) * 2 ** 53) * 2.0 ** -53
            b = np.array([np.copysign((ZIGGURAT_EXP_R - math.log1p(-u)) * theta_b, aim)])
            points.append(certified_point(X, y, lam, loss, calibration, b)[0])
            continue
        for layer in range(1, 256):
            k = int(radius / tables.we[layer])
            if k < 0.99 * float(tables.ke[layer]):
                b = np.array([np.copysign(float(k) * tables.we[layer] * theta_b, aim)])
                points.append(certified_point(X, y, lam, loss, calibration, b)[0])
                break
    return np.array(points)

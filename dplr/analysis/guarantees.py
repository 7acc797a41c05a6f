r"""Learning guarantees of NIPS 2008, Section 5: the bounds as functions, and a simulation to test them.

Notation (NIPS 2008, Section 3): :math:`\hat L(w) = \frac1n\sum_i \log(1 + e^{-y_i w^\top x_i})`,
:math:`\hat f_\lambda(w) = \frac\lambda2\lVert w\rVert^2 + \hat L(w)`, :math:`w^* = \arg\min \hat f_\lambda`.
Records satisfy :math:`\lVert x_i\rVert \le 1`, labels are :math:`\pm1`, :math:`d` is the dimension.
With probability at least :math:`1 - \delta` over the privacy noise:

* **Lemma 3** (Algorithm 1): :math:`\hat f_\lambda(w_{\text{priv}}) - \hat f_\lambda(w^*) \le
  \frac{2d^2(1+\lambda)\log^2(d/\delta)}{\lambda^2 n^2 \varepsilon^2}`.
* **Lemma 4** (Algorithm 2): :math:`\hat f_\lambda(w_{\text{priv}}) - \hat f_\lambda(w^*) \le
  \frac{8 d^2\log^2(d/\delta)}{\lambda n^2\varepsilon^2}`.

Both follow from a deterministic inequality and a tail bound for the noise norm:

* Algorithm 1: :math:`w_{\text{priv}} = w^* + \eta` and :math:`\nabla^2 \hat f_\lambda \preceq (\lambda + c) I`
  (:math:`c = 1/4` bounds :math:`\ell''`), so the excess is at most
  :math:`\frac{\lambda + c}{2}\lVert\eta\rVert^2` (the paper uses :math:`1 + \lambda`).
* Algorithm 2: by :math:`\lambda`-strong convexity the excess is at most
  :math:`\lVert b\rVert^2 / (2 n^2\lambda)` (the paper's constant is four times larger).
* :math:`\lVert\eta\rVert \sim \Gamma(d, \theta)` is a sum of :math:`d` exponentials of mean
  :math:`\theta`, so :math:`\Pr[\lVert\eta\rVert > d\theta\log(d/\delta)] \le \delta` (union bound);
  :math:`\theta = 2/(n\lambda\varepsilon)` for :math:`\eta`, :math:`2/\varepsilon` for :math:`b`.

``constants="paper"`` returns the bounds as printed; ``constants="sharp"`` uses the constants above and
the exact Gamma quantile instead of the union bound. Theorems 4 and 5 (sample sizes for expected loss
within :math:`g` of a reference classifier :math:`w_0`) are in :func:`theorem4_sample_size` and
:func:`theorem5_sample_size`; their constant :math:`C` is not given in the paper.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy import stats

from dplr.algorithms import (
    objective_perturbation,
    objective_perturbation_noise,
    sensitivity_method_noise,
    standard_erm,
)
from dplr.calibration import objective_perturbation_calibration
from dplr.losses import LogisticLoss
from dplr.objective import regularized_erm_objective
from dplr.validation import check_epsilon, check_lambda, check_random_state

__all__ = [
    "CONSTANTS",
    "gamma_tail_radius",
    "lemma3_bound",
    "lemma4_bound",
    "corrected_objective_perturbation_bound",
    "lemma_bound_ratio",
    "theorem4_sample_size",
    "theorem5_sample_size",
    "corrected_theorem4_sample_size",
    "ExcessLossDraws",
    "excess_loss_draws",
    "ExcessLossSummary",
    "simulate_excess_loss",
]

#: The constants the bounds can use, ``"paper"`` (as printed) or ``"sharp"`` (see the module's docstring).
CONSTANTS = ("paper", "sharp")
_CURVATURE = LogisticLoss.curvature  # c = 1/4 bounds the logistic loss' second derivative


def _check_constants(constants):
    if constants not in CONSTANTS:
        raise ValueError(f"constants must be one of {CONSTANTS}, got {constants!r}.")


def _check_delta(delta):
    if not 0 < delta < 1:
        raise ValueError(f"delta (the failure probability) must lie in (0, 1), got {delta!r}.")
    return float(delta)


def gamma_tail_radius(d, scale, delta, method="union"):
    r"""A radius :math:`r` with :math:`\Pr[\Gamma(d, \text{scale}) > r] \le \delta`.

    ``method="union"``: :math:`d\cdot\text{scale}\cdot\log(d/\delta)` (the paper's; valid when
    :math:`d/\delta > 1`, always here): if a sum of :math:`d` exponentials exceeds it, one of them
    exceeds :math:`\text{scale}\log(d/\delta)`, which has probability :math:`\delta/d`.
    ``method="exact"``: the :math:`(1-\delta)`-quantile of :math:`\Gamma(d, \text{scale})`.
    """
    delta = _check_delta(delta)
    if method == "union":
        return float(d * scale * np.log(d / delta))
    if method == "exact":
        return float(stats.gamma(a=d, scale=scale).ppf(1 - delta))
    raise ValueError(f"method must be 'union' or 'exact', got {method!r}.")


def lemma3_bound(n, lam, epsilon, d, delta, constants="paper"):
    r"""Lemma 3 (NIPS 2008): excess regularised training loss of Algorithm 1, w.p. :math:`\ge 1-\delta`.

    ``"paper"``: :math:`2d^2(1+\lambda)\log^2(d/\delta)/(\lambda^2n^2\varepsilon^2)`.
    ``"sharp"``: :math:`\frac{\lambda + 1/4}{2} r^2` with :math:`r` the exact :math:`(1-\delta)`-quantile
    of :math:`\Gamma(d, 2/(n\lambda\varepsilon))`.
    """
    _check_constants(constants)
    lam, epsilon, delta = check_lambda(lam), check_epsilon(epsilon), _check_delta(delta)
    if constants == "paper":
        return 2 * d**2 * (1 + lam) * np.log(d / delta) ** 2 / (lam**2 * n**2 * epsilon**2)
    r = gamma_tail_radius(d, 2 / (n * lam * epsilon), delta, "exact")
    return (lam + _CURVATURE) / 2 * r**2


def lemma4_bound(n, lam, epsilon, d, delta, constants="paper"):
    r"""Lemma 4 (NIPS 2008): excess regularised training loss of Algorithm 2 (NIPS form), w.p. :math:`\ge 1-\delta`.

    ``"paper"``: :math:`8d^2\log^2(d/\delta)/(\lambda n^2\varepsilon^2)`.
    ``"sharp"``: :math:`r^2/(2n^2\lambda)` with :math:`r` the exact :math:`(1-\delta)`-quantile of
    :math:`\Gamma(d, 2/\varepsilon)`.
    """
    _check_constants(constants)
    lam, epsilon, delta = check_lambda(lam), check_epsilon(epsilon), _check_delta(delta)
    if constants == "paper":
        return 8 * d**2 * np.log(d / delta) ** 2 / (lam * n**2 * epsilon**2)
    r = gamma_tail_radius(d, 2 / epsilon, delta, "exact")
    return r**2 / (2 * n**2 * lam)


def corrected_objective_perturbation_bound(n, lam, epsilon, d, delta, w_star_norm=None):
    r"""The analogue of Lemma 4 for the corrected Algorithm 2 (JMLR 2011), w.p. :math:`\ge 1-\delta`.

    The output minimises :math:`G(w) + b^\top w/n` with :math:`G = \hat f_\lambda + \frac\Delta2\lVert w\rVert^2`,
    which is :math:`(\lambda+\Delta)`-strongly convex and :math:`b \propto e^{-\varepsilon'\lVert b\rVert/2}`.
    Then :math:`\hat f_\lambda(w_{\text{priv}}) - \hat f_\lambda(w^*) \le G(w_{\text{priv}}) - G(w^*) +
    \frac\Delta2\lVert w^*\rVert^2 \le \frac{r^2}{2n^2(\lambda+\Delta)} + \frac\Delta2\lVert w^*\rVert^2`,
    with :math:`r` the exact :math:`(1-\delta)`-quantile of :math:`\Gamma(d, 2/\varepsilon')`.
    ``w_star_norm`` defaults to the data-free bound :math:`\sqrt{2\log 2/\lambda}`
    (from :math:`\hat f_\lambda(w^*) \le \hat f_\lambda(0) = \log 2`).
    """
    lam, delta = check_lambda(lam), _check_delta(delta)
    cal = objective_perturbation_calibration(epsilon, n, lam, _CURVATURE, 1.0, "corrected")
    if w_star_norm is None:
        w_star_norm = np.sqrt(2 * np.log(2) / lam)
    r = gamma_tail_radius(d, 2 / cal.epsilon_prime, delta, "exact")
    return r**2 / (2 * n**2 * (lam + cal.ridge)) + cal.ridge / 2 * w_star_norm**2


def lemma_bound_ratio(lam, constants="paper"):
    r"""(Lemma 3 bound) / (Lemma 4 bound); it does not depend on :math:`n, d, \varepsilon, \delta`.

    ``"paper"``: :math:`(1+\lambda)/(4\lambda)`, larger than 1 exactly when :math:`\lambda < 1/3`.
    ``"sharp"``: :math:`(\lambda + 1/4)/\lambda = 1 + 1/(4\lambda)`, larger than 1 for every :math:`\lambda`.
    """
    _check_constants(constants)
    lam = np.asarray(lam, dtype=float)
    return (1 + lam) / (4 * lam) if constants == "paper" else (lam + _CURVATURE) / lam


def theorem4_sample_size(w0_norm, g, d, delta, epsilon, C=1.0):
    r"""Theorem 4 (NIPS 2008) as its proof gives it: Algorithm 2 (NIPS form) with :math:`\lambda = g/\lVert w_0\rVert^2`

    has expected loss :math:`\le L(w_0) + g` with probability :math:`\ge 1 - 2\delta` (sample and noise) once
    :math:`n \ge C\max\big(\lVert w_0\rVert^2\log(e/\delta)/g^2,\; d\log(d/\delta)\lVert w_0\rVert/(g\varepsilon)\big)`.
    The :math:`\log(e/\delta)` of the first term comes from the uniform bound of Sridharan, Srebro &
    Shalev-Shwartz (NIPS 2008, Theorem 1), whose constant is absorbed in :math:`C`; the paper prints the first term
    without it, and with probability :math:`1 - \delta`. ``C=1`` is for comparing shapes only.
    """
    delta = _check_delta(delta)
    return C * np.maximum(w0_norm**2 * np.log(np.e / delta) / g**2, d * np.log(d / delta) * w0_norm / (g * epsilon))


def theorem5_sample_size(w0_norm, g, d, delta, epsilon, C=1.0):
    r"""Theorem 5 (NIPS 2008; stated there for "Algorithm 2", meant for Algorithm 1) as its proof gives it:

    :math:`n \ge C\max\big(\lVert w_0\rVert^2\log(e/\delta)/g^2,\;
    d\log(d/\delta)\lVert w_0\rVert^2/(g^{3/2}\varepsilon)\big)`, probability :math:`\ge 1 - 2\delta`. The proof
    needs :math:`\lambda = g/\lVert w_0\rVert^2 \le 1`, i.e. :math:`g \le \lVert w_0\rVert^2` (checked); then the
    paper's middle term :math:`d\log(d/\delta)\lVert w_0\rVert/(g\varepsilon)` never exceeds the last one.
    """
    if np.any(np.asarray(g) > np.asarray(w0_norm) ** 2):
        raise ValueError("Theorem 5 needs lambda = g / ||w0||^2 <= 1, i.e. g <= ||w0||^2; got "
                         f"g={g!r}, ||w0||={w0_norm!r}.")
    return C * np.maximum(theorem4_sample_size(w0_norm, g, d, delta, epsilon, 1.0),
                          d * np.log(d / delta) * w0_norm**2 / (g**1.5 * epsilon))


def corrected_theorem4_sample_size(w0_norm, g, d, delta, epsilon, C=1.0, curvature=_CURVATURE):
    r"""Theorem 4 for the *corrected* Algorithm 2 (JMLR 2011): Theorem 4's sample size and the extra term

    :math:`c\lVert w_0\rVert^2/(g(e^{\varepsilon/4} - 1))`, which makes :math:`n\lambda \ge c/(e^{\varepsilon/4} - 1)`:
    then :math:`\Delta = 0` and :math:`\varepsilon' \ge \varepsilon/2`, so the noise is at most twice the NIPS form's.
    Of order :math:`4c\lVert w_0\rVert^2/(g\varepsilon)` for small ε (book: *Learning guarantees*).
    """
    return np.maximum(theorem4_sample_size(w0_norm, g, d, delta, epsilon, C),
                      C * curvature * w0_norm**2 / (g * np.expm1(epsilon / 4)))


@dataclass(frozen=True)
class ExcessLossDraws:
    r"""Excess regularised training loss :math:`\hat f_\lambda(w_{\text{priv}}) - \hat f_\lambda(w^*)` per draw.

    ``excess[name]`` and ``noise_norm[name]`` (:math:`\lVert\eta\rVert` for Algorithm 1,
    :math:`\lVert b\rVert` for Algorithm 2, as drawn) for ``name`` in
    ``"sensitivity"``, ``"objective_nips2008"``, ``"objective_corrected"``; ``ridge`` is the corrected
    form's :math:`\Delta`.
    """

    excess: dict
    noise_norm: dict
    w_star: np.ndarray
    ridge: float


ALGORITHMS = ("sensitivity", "objective_nips2008", "objective_corrected")


def excess_loss_draws(X, y, lam, epsilon, n_draws, random_state=None) -> ExcessLossDraws:
    r"""Run Algorithm 1 and both forms of Algorithm 2 ``n_draws`` times each on ``(X, y)`` (logistic loss).

    The noise is drawn first (:func:`~dplr.algorithms.sensitivity_method_noise`,
    :func:`~dplr.algorithms.objective_perturbation_noise`) and then released with the solver's minimiser
    (:math:`w^* + \eta`; the minimiser of the perturbed objective with that :math:`b`), as
    :func:`~dplr.algorithms.sensitivity_method` and :func:`~dplr.algorithms.objective_perturbation` do with the same
    stream: ``noise_norm`` holds the norms of the drawn noise, so an inequality checked against them checks the
    solver's outputs, not only the algebra."""
    rng = check_random_state(random_state)
    n, d = X.shape
    tol = 1e-10
    w_star = standard_erm(X, y, lam, tol=tol)
    f_star = regularized_erm_objective(w_star, X, y, lam)[0]
    excess, norms = {}, {}
    eta, _ = sensitivity_method_noise(n, d, epsilon, lam, n_draws=n_draws, random_state=rng, solver_tol=tol)
    excess["sensitivity"] = regularized_erm_objective(w_star + eta, X, y, lam) - f_star
    norms["sensitivity"] = np.linalg.norm(eta, axis=1)
    ridge = 0.0
    for form in ("nips2008", "corrected"):
        b, cal = objective_perturbation_noise(n, d, epsilon, lam, form=form, n_draws=n_draws, random_state=rng)
        # the exact minimiser (to tol = 1e-10) for the drawn b: the object of the papers' excess-risk theorems
        W = objective_perturbation(X, y, epsilon, lam, form=form, noise=b, tol=tol, release="exact_minimiser")
        excess[f"objective_{form}"] = regularized_erm_objective(W, X, y, lam) - f_star
        norms[f"objective_{form}"] = np.linalg.norm(b, axis=1)
        if form == "corrected":
            ridge = cal.ridge
    return ExcessLossDraws(excess, norms, w_star, float(ridge))


@dataclass(frozen=True)
class ExcessLossSummary:
    r"""One cell of :func:`simulate_excess_loss`: observed quantile and mean of the excess vs the bounds.

    ``above_paper`` / ``above_sharp``: fraction of draws whose excess exceeds the bound; a bound that
    holds with probability :math:`1-\delta` has an expected fraction of at most :math:`\delta`.
    """

    n: int
    lam: float
    algorithm: str
    quantile: float
    mean: float
    bound_paper: float
    bound_sharp: float
    above_paper: float
    above_sharp: float
    deterministic_ok: bool


def simulate_excess_loss(ns, lams, epsilon, d, n_draws, delta=0.05, random_state=None, *, data):
    r"""Excess regularised training loss of each algorithm against its bound, over a grid of :math:`n, \lambda`.

    For each ``n`` one data set ``data(n, d=d, random_state=rng)`` is drawn (e.g.
    :func:`dplr.datasets.simulated.make_unseparable`, the unseparable data of NIPS 2008, Section 6),
    from the same stream ``rng`` as the noise; for each ``lam`` every algorithm runs ``n_draws`` times. Each :class:`ExcessLossSummary` gives the observed
    :math:`(1-\delta)`-quantile and the mean of the excess, the fraction of draws above each bound, the
    bound with the paper's constants (Lemma 3,
    Lemma 4; for the corrected form :func:`corrected_objective_perturbation_bound` in both columns) and
    with sharp constants, and whether every draw satisfied the *deterministic* inequality behind its
    bound (excess :math:`\le \frac{\lambda+1/4}{2}\lVert\eta\rVert^2`, resp.
    :math:`\le \lVert b\rVert^2/(2n^2(\lambda+\Delta)) + \frac\Delta2\lVert w^*\rVert^2`).
    """
    rng = check_random_state(random_state)
    rows = []
    for n in ns:
        X, y = data(int(n), d=d, random_state=rng)
        for lam in lams:
            draws = excess_loss_draws(X, y, lam, epsilon, n_draws, random_state=rng)
            w_norm = float(np.linalg.norm(draws.w_star))
            for name in ALGORITHMS:
                ex, nb = draws.excess[name], draws.noise_norm[name]
                slack = 1e-9 * (1 + np.abs(ex))  # solver tolerance
                if name == "sensitivity":
                    bounds = (lemma3_bound(n, lam, epsilon, d, delta, "paper"),
                              lemma3_bound(n, lam, epsilon, d, delta, "sharp"))
                    det = ex <= (lam + _CURVATURE) / 2 * nb**2 + slack
                elif name == "objective_nips2008":
                    bounds = (lemma4_bound(n, lam, epsilon, d, delta, "paper"),
                              lemma4_bound(n, lam, epsilon, d, delta, "sharp"))
                    det = ex <= nb**2 / (2 * n**2 * lam) + slack
                else:
                    b = corrected_objective_perturbation_bound(n, lam, epsilon, d, delta, w_star_norm=w_norm)
                    bounds = (b, b)
                    det = ex <= nb**2 / (2 * n**2 * (lam + draws.ridge)) + draws.ridge / 2 * w_norm**2 + slack
                rows.append(ExcessLossSummary(int(n), float(lam), name, float(np.quantile(ex, 1 - delta)),
                                              float(ex.mean()), float(bounds[0]), float(bounds[1]),
                                              float(np.mean(ex > bounds[0])), float(np.mean(ex > bounds[1])),
                                              bool(np.all(det))))
    return rows

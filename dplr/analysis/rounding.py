r"""The stopping certificate (:mod:`dplr.solver.stopping`) against exact arithmetic.

An output perturbation releases a solver's point only when its certified gradient norm -- the float64 norm the
solver computed, plus the rounding bound of the lemma in :mod:`dplr.solver.stopping` -- is at most the tolerance
:math:`\tau` its noise covers. :func:`exact_gradient_norm` computes the *true* gradient norm of a float64 point from
the same float64 inputs in decimal arithmetic with 60 significant digits (Python's ``decimal`` module, whose ``exp`` is
correctly rounded), and :func:`certificate_check` compares the three numbers on the solvers' own outputs. The
comparison can only illustrate the lemma (the rounding a case shows is one draw of what the machine can do); the
lemma's proof is the upper bound.
"""
from __future__ import annotations

import decimal
from dataclasses import dataclass
from decimal import Decimal

import numpy as np

from dplr.losses import get_loss
from dplr.solver import certified_gradient_norm, solve_on_part, solve_regularized_erm

__all__ = ["exact_gradient_norm", "CertificateCase", "certificate_check"]


def _exact_derivative(z, loss):
    r""":math:`\ell'(z)` of a decimal margin, in the context's precision: the logistic loss through ``exp``, the
    Huber loss exactly (:math:`\min(\max((z - 1 - h)/(2h), -1), 0)`)."""
    if loss.name == "huber":
        h = Decimal(float(loss.h))
        return min(max((z - 1 - h) / (2 * h), Decimal(-1)), Decimal(0))
    return -1 / (1 + z.exp())


def exact_gradient_norm(X, y, w, reg, loss="logistic", b=None, digits=60) -> float:
    r""":math:`\lVert\rho w + b/n + \frac1n\sum_i\ell'(y_iw^\top x_i)\,y_ix_i\rVert` from the float64 ``X``, ``y``
    (labels :math:`\pm1`), ``w``, ``reg`` (:math:`\rho`) and ``b``, in decimal arithmetic with ``digits``
    significant digits (every float64 input converts exactly), rounded to float64 at the end. Slow (pure Python):
    for checks on a few thousand records."""
    loss = get_loss(loss)
    X, y = np.asarray(X, dtype=float), np.asarray(y, dtype=float)
    n, d = X.shape
    with decimal.localcontext() as context:
        context.prec = digits
        w = [Decimal(float(v)) for v in np.reshape(w, -1)]
        total = [Decimal(0)] * d
        for i in range(n):
            u = [Decimal(float(y[i] * X[i, j])) for j in range(d)]  # y = +-1: y x is exact in float64
            c = _exact_derivative(sum(a * v for a, v in zip(w, u)), loss)
            total = [t + c * v for t, v in zip(total, u)]
        rho = Decimal(float(reg))
        shift = [Decimal(0)] * d if b is None else [Decimal(float(v)) / n for v in np.reshape(b, -1)]
        gradient = [t / n + rho * v + s for t, v, s in zip(total, w, shift)]
        return float(sum(g * g for g in gradient).sqrt())


@dataclass(frozen=True)
class CertificateCase:
    """One solver output: the problem (``path``, ``loss``, ``n``, ``d``, ``reg``, ``perturbation_norm``), the point's
    ``coef_norm``, the solver's ``computed`` gradient norm, the ``certified`` bound and the ``exact`` norm."""

    path: str
    loss: str
    n: int
    d: int
    reg: float
    perturbation_norm: float
    coef_norm: float
    computed: float
    certified: float
    exact: float

    @property
    def bound(self) -> float:
        """What the certificate adds to the computed norm (at most a relative :math:`10^{-14}` of it, plus
        :math:`E`)."""
        return self.certified - self.computed


def certificate_check(X, y, lam, loss="logistic", b_scale=50.0, n_perturbed=2, fold=20, tol=1e-9,
                      random_state=None):
    r"""The certificate on each solver path's outputs for one data set: ``solve_regularized_erm`` on the
    unperturbed problem (``"unperturbed"``) and on ``n_perturbed`` objective-perturbation problems with
    :math:`b \sim N(0, \text{b\_scale}^2 I)` and :math:`\Delta = 2\lambda` (``"perturbed"``), and
    ``solve_on_part`` on the data's first ``n // fold`` rows each repeated ``fold`` times, folded into one with
    their count (``"folded"``, private tuning's path), each solved to ``tol``. Returns a list of
    :class:`CertificateCase`."""
    loss = get_loss(loss)
    rng = np.random.default_rng(random_state)
    X, y = np.asarray(X, dtype=float), np.asarray(y, dtype=float)
    n, d = X.shape
    runs = []
    result = solve_regularized_erm(X, y, lam, loss, tol=tol, max_iter=200)
    runs.append(("unperturbed", X, y, lam, None, result.coef, float(result.grad_norm[0])))
    B = rng.normal(scale=b_scale, size=(n_perturbed, d))
    result = solve_regularized_erm(X, y, lam, loss, b=B, ridge=2 * lam, tol=tol, max_iter=200)
    runs += [("perturbed", X, y, lam + 2 * lam, B[j], result.coef[j], float(result.grad_norm[j]))
             for j in range(n_perturbed)]
    Xf, yf = np.repeat(X[:n // fold], fold, axis=0), np.repeat(y[:n // fold], fold)
    part = solve_on_part(Xf, yf, lam, loss, np.zeros((0, d)), np.zeros(0), tol=tol)
    runs.append(("folded", Xf, yf, lam, None, part.w0, part.grad_norm_w0))
    cases = []
    for path, Xc, yc, reg, b, w, computed in runs:
        b_norm = 0.0 if b is None else float(np.linalg.norm(b))
        certified = certified_gradient_norm(computed, w, Xc.shape[0], reg, loss, perturbation_norm=b_norm)
        cases.append(CertificateCase(path, loss.name, Xc.shape[0], d, float(reg), b_norm, float(np.linalg.norm(w)),
                                     computed, certified, exact_gradient_norm(Xc, yc, w, reg, loss, b)))
    return cases

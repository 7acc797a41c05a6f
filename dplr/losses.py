r"""Loss functions of the margin :math:`z = y\,w^\top x`, with the constants the privacy proofs use.

Each loss :math:`\ell(z)` is convex and differentiable with

* ``lipschitz``: a bound on :math:`|\ell'(z)|` — it bounds the L2 sensitivity of the minimiser
  (Algorithm 1, :math:`2\,\text{lipschitz}/(n\lambda)`) and of the gradient (Algorithm 2);
* ``curvature``: the constant :math:`c` with :math:`0 \le \ell''(z) \le c`, which enters the
  corrected objective perturbation through :math:`\varepsilon' = \varepsilon - \log(1 + 2c/(n\lambda)
  + c^2/(n^2\lambda^2))` (Chaudhuri, Monteleoni & Sarwate, JMLR 2011, Algorithm 2).

All methods are vectorised over arrays of margins and stable for margins of any size.

What a loss object provides -- the solvers, the analyses and the algorithms ask for nothing else,
and never ask which loss it is:

* ``value``, ``derivative``, ``second_derivative``: :math:`\ell, \ell', \ell''`;
* ``value_and_derivative(z)``: :math:`\ell` and :math:`\ell'` together, as cheaply as the loss allows;
* ``derivatives(z, second=True, out=None)``: :math:`\ell'` and :math:`\ell''` together, as cheaply as
  the loss allows (``out`` may receive :math:`\ell'`, possibly ``z`` itself);
* ``second_derivative_from(z, first, dtype, workspace=None)``: :math:`\ell''` at ``z`` given
  :math:`\ell'` there from ``derivatives`` (the logistic loss needs no exponential for it);
* ``derivative_order`` and ``derivatives_up_to(z, count)``: the first ``count`` derivatives, for
  ``count`` up to ``derivative_order`` (the solver's Taylor start needs three or four);
* ``lipschitz`` and ``curvature``: the constants of the privacy proofs;
* ``derivative_rounding``: :math:`\kappa`, a bound on the absolute error of the computed :math:`\ell'` at a float64
  margin in units of :math:`u = 2^{-53}`, which the stopping certificate of released points uses
  (:mod:`dplr.solver.stopping`).
"""
from __future__ import annotations

import numpy as np
from scipy.special import expit

from dplr.directed_rounding import exact, round_up
from dplr.validation import check_positive_finite

__all__ = ["LogisticLoss", "HuberLoss", "MIN_HUBER_H", "check_huber_h", "get_loss"]


class LogisticLoss:
    r"""Logistic loss :math:`\ell(z) = \log(1 + e^{-z})` (NIPS 2008, Sections 3–4).

    :math:`\ell'(z) = -1/(1+e^{z}) \in (-1, 0)`, so ``lipschitz = 1``;
    :math:`\ell''(z) = \sigma(z)\sigma(-z) \in (0, 1/4]`, so ``curvature = 1/4``.
    """

    name = "logistic"
    lipschitz = 1.0
    curvature = 0.25
    derivative_order = 4
    #: :math:`\ell' = -1/(1 + e^z)` errs by at most :math:`(\kappa_{\exp} + 3)u` (one rounding each for the sum and the
    #: quotient, :math:`|\ell'| \le 1`): 256 assumes the platform's ``exp`` within :math:`\kappa_{\exp} = 253` ulp
    #: (glibc and numpy document at most four).
    derivative_rounding = 256.0

    @staticmethod
    def value(z):
        r""":math:`\log(1 + e^{-z}) = \max(-z, 0) + \log(1 + e^{-|z|})`: no overflow, within 1e-15 of ``logaddexp``
        and about twice as fast (the shared part solver evaluates it on every trial step)."""
        z = np.asarray(z, dtype=float)
        return np.log1p(np.exp(-np.abs(z))) + np.maximum(-z, 0.0)

    @staticmethod
    def derivative(z):
        return -expit(-np.asarray(z, dtype=float))

    @staticmethod
    def value_and_derivative(z):
        r""":math:`\ell` and :math:`\ell'` together, the same numbers as :meth:`value` and :meth:`derivatives`, with
        fewer temporary arrays (the shared part solver evaluates both on every trial step)."""
        z = np.asarray(z, dtype=float)
        value = np.abs(z)
        np.negative(value, out=value)
        np.exp(value, out=value)
        np.log1p(value, out=value)
        value -= np.minimum(z, 0.0)  # + max(-z, 0)
        with np.errstate(over="ignore"):
            first = np.exp(z)
        first += 1.0
        np.divide(-1.0, first, out=first)
        return value, first

    @staticmethod
    def second_derivative(z):
        z = np.asarray(z, dtype=float)
        return expit(z) * expit(-z)

    @staticmethod
    def third_derivative(z):
        r""":math:`\ell'''(z) = -\sigma(z)\sigma(-z)\,(\sigma(z) - \sigma(-z))`: odd, at most :math:`1/(6\sqrt3)` in size.

        The solver uses it for the second-order start of a batch of perturbed problems (:mod:`dplr.solver`).
        """
        z = np.asarray(z, dtype=float)
        s, t = expit(-z), expit(z)
        return -s * t * (t - s)

    @staticmethod
    def fourth_derivative(z):
        r""":math:`\ell''''(z) = \sigma(z)\sigma(-z)\,\big((\sigma(z) - \sigma(-z))^2 - 2\sigma(z)\sigma(-z)\big)`, even.

        The solver uses it, with :meth:`third_derivative`, for the third-order start of a batch.
        """
        z = np.asarray(z, dtype=float)
        s, t = expit(-z), expit(z)
        return s * t * ((t - s) ** 2 - 2.0 * s * t)

    @staticmethod
    def derivatives(z, second=True, out=None):
        r"""First and second derivative at once, from one exponential: :math:`\ell' = -1/(1 + e^{z}) = -s`.

        :math:`\ell'' = -\ell'(1 + \ell') = s(1 - s)` with :math:`s = \sigma(-z)` (absolute error below
        2e-16 where :math:`\ell''` underflows); ``second=False`` returns ``None`` for it. Where
        :math:`e^{z}` overflows (:math:`z > 709`), :math:`\ell' = -0`, its correctly rounded value.
        Float32 input stays float32; anything else becomes float64. ``out`` (an array of z's shape and
        dtype, possibly ``z`` itself) receives :math:`\ell'`. Used by the solver, which needs no loss
        values: three cheap passes over ``z`` (exp, add, divide), several times faster than ``expit``.
        """
        z = np.asarray(z)
        if z.dtype != np.float32 and z.dtype != np.float64:
            z = z.astype(float)
        with np.errstate(over="ignore"):
            first = np.exp(z, out=out)
        first += 1.0
        np.divide(-1.0, first, out=first)
        if not second:
            return first, None
        curvature = first + 1.0
        curvature *= first
        np.negative(curvature, out=curvature)
        return first, curvature

    @staticmethod
    def second_derivative_from(z, first, dtype=np.float64, workspace=None):
        r""":math:`\ell'' = -\ell'(1 + \ell')` in ``dtype`` from :math:`\ell'` (``first``) alone; ``z`` is not read.

        :math:`\ell'` is first rounded to ``dtype`` and the product formed there (the solver's float32
        Hessians). ``workspace(name, shape, dtype)``, if given, supplies the two scratch arrays (the
        solver reuses its memory); the result lives in one of them.
        """
        def scratch(name):
            return np.empty(first.shape, dtype=dtype) if workspace is None else workspace(name, first.shape, dtype)

        if first.dtype != dtype:
            cast = scratch("selected")
            np.copyto(cast, first, casting="same_kind")
            first = cast
        curvature = np.add(first, 1.0, out=scratch("curvature"))
        curvature *= first
        return np.negative(curvature, out=curvature)

    @staticmethod
    def derivatives_up_to(z, count):
        r"""The derivatives of order 1 to ``count`` (at most 4), all from one exponential.

        With :math:`s = \sigma(-z)` and :math:`t = 1 - s`: :math:`\ell' = -s`, :math:`\ell'' = st`, the
        third :math:`st(s - t)` and the fourth :math:`st((t - s)^2 - 2st)` (as :meth:`third_derivative`
        and :meth:`fourth_derivative`).
        """
        if not 1 <= count <= 4:
            raise ValueError(f"the logistic loss provides derivatives 1 to 4, asked for {count}.")
        s = -LogisticLoss.derivatives(z, second=False)[0]
        t = 1.0 - s
        st = s * t
        return (-s, st, st * (s - t), st * ((t - s) ** 2 - 2.0 * st))[:count]

    def __repr__(self):
        return "LogisticLoss()"


#: Smallest Huber width :math:`h` accepted (:func:`check_huber_h`).
MIN_HUBER_H = 1e-8


class HuberLoss:
    r"""Huber (smoothed) hinge loss with parameter :math:`h` (JMLR 2011, Section 3.4.2; the talk's SVM).

    .. math::

        \ell_h(z) = \begin{cases}
            0 & z > 1 + h \\
            \frac{(1 + h - z)^2}{4h} & |1 - z| \le h \\
            1 - z & z < 1 - h
        \end{cases}

    :math:`|\ell_h'| \le 1` (``lipschitz = 1``) and :math:`0 \le \ell_h'' \le 1/(2h)`
    (``curvature = 1/(2h)``). As :math:`h \to 0` it tends to the hinge loss :math:`\max(0, 1 - z)`.
    :math:`\ell_h''` jumps at :math:`z = 1 \pm h`; there ``second_derivative`` returns the value of
    the quadratic piece (a valid element of the generalised Hessian).
    """

    name = "huber"
    lipschitz = 1.0
    derivative_order = 2  # l'' jumps at 1 +- h: no Taylor expansion beyond the second order

    def __init__(self, h: float = 0.5):
        self.h = check_huber_h(h)
        self.curvature = round_up(1 / (2 * exact(self.h)))  # 1/(2h) rounded up: a bound the proofs may use
        # value_and_derivative: l' = clip((z - fl(1 + h)) / (2h), -1, 0): fl(1 + h) errs by u(1 + h), the difference
        # and the quotient by a rounding each (where either value is in the band, |z - 1 - h| <= 2h(1 + u)), the clip
        # by nothing: (1 + h)/(2h) + 3 units of u. derivative: -(fl(1 + h) - z)/(2h) in the band, the same roundings;
        # its branches test z against fl(1 + h) and fl(1 - h) unclipped, so a margin within u(1 + h) of a kink may
        # take the neighbouring piece, whose value there differs from the true one by at most u(1 + h)/(2h) + u:
        # inside the same bound. One more unit for safety. No library function.
        self.derivative_rounding = (1.0 + self.h) / (2.0 * self.h) + 4.0

    def value(self, z):
        z = np.asarray(z, dtype=float)
        h = self.h
        quad = (1.0 + h - np.clip(z, 1.0 - h, 1.0 + h)) ** 2 / (4.0 * h)  # clipped: no overflow far out
        return np.where(z > 1.0 + h, 0.0, np.where(z < 1.0 - h, 1.0 - z, quad))

    def derivative(self, z):
        z = np.asarray(z, dtype=float)
        h = self.h
        return np.where(z > 1.0 + h, 0.0, np.where(z < 1.0 - h, -1.0, -(1.0 + h - z) / (2.0 * h)))

    def second_derivative(self, z):
        z = np.asarray(z, dtype=float)
        return np.where(np.abs(1.0 - z) <= self.h, 1.0 / (2.0 * self.h), 0.0)

    def value_and_derivative(self, z):
        r""":math:`\ell_h` and :math:`\ell_h'` together in eight cheap passes (no branch per piece):
        :math:`\ell_h' = g = \min(\max((z - 1 - h)/(2h), -1), 0)` and :math:`\ell_h = h g^2 + \max(1 - h - z, 0)`
        (the quadratic piece in the band, exactly 0 above it, :math:`h + (1 - h - z) = 1 - z` below). The shared part
        solver evaluates both on every trial step."""
        z = np.asarray(z, dtype=float)
        h = self.h
        first = z - (1.0 + h)
        first /= 2.0 * h
        np.clip(first, -1.0, 0.0, out=first)
        value = first * first
        value *= h
        value += np.maximum((1.0 - h) - z, 0.0)
        return value, first

    def derivatives(self, z, second=True, out=None):
        """First and second derivative at once (for the solver); ``second=False`` returns ``None`` for the second.

        ``out`` belongs to the common interface and is not used: the result is a new array.
        """
        return self.derivative(z), (self.second_derivative(z) if second else None)

    def second_derivative_from(self, z, first, dtype=np.float64, workspace=None):
        r""":math:`\ell''` at ``z`` in ``dtype``; ``first`` and ``workspace`` belong to the common interface."""
        return self.second_derivative(z).astype(dtype, copy=False)

    def derivatives_up_to(self, z, count):
        r""":math:`\ell'` (``count=1``), or :math:`\ell'` and :math:`\ell''` (``count=2``)."""
        if not 1 <= count <= 2:
            raise ValueError(f"the Huber loss provides derivatives 1 and 2, asked for {count}.")
        return (self.derivative(z), self.second_derivative(z))[:count]

    def __repr__(self):
        return f"HuberLoss(h={self.h!r})"


def check_huber_h(h) -> float:
    r"""The Huber width :math:`h`: a finite number, at least :data:`MIN_HUBER_H`.

    Narrower than :math:`10^{-8}` the loss is the hinge to within the solver's tolerance, its curvature
    :math:`1/(2h) > 5\cdot10^7` stalls Newton's method, and Algorithm 2's corrected calibration inflates
    :math:`\Delta` in proportion: refused, with the fix.
    """
    h = check_positive_finite(h, "huber_h")
    if h < MIN_HUBER_H:
        raise ValueError(
            f"huber_h must be at least {MIN_HUBER_H:g}, got {h!r}: narrower, the Huber loss is the hinge to within "
            f"the solver's tolerance and its curvature 1/(2h) stalls the solver. Fix: huber_h=0.5 (JMLR 2011) or "
            f"any value >= {MIN_HUBER_H:g}."
        )
    return h


def get_loss(loss="logistic", huber_h: float = 0.5):
    """Return a loss object from its name (``"logistic"`` or ``"huber"``) or pass one through.

    ``huber_h`` is checked with either name, so that a bad value never passes unnoticed.
    """
    if isinstance(loss, (LogisticLoss, HuberLoss)):
        return loss
    check_huber_h(huber_h)
    if loss == "logistic":
        return LogisticLoss()
    if loss == "huber":
        return HuberLoss(huber_h)
    raise ValueError(f"loss must be 'logistic' or 'huber', got {loss!r}.")

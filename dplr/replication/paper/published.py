r"""The paper's published experimental results, as data (the rule that judges them: :mod:`dplr.replication.verdicts`).

Source: K. Chaudhuri & C. Monteleoni, "Privacy-preserving logistic regression", NIPS 2008
(Advances in Neural Information Processing Systems 21, pp. 289–296), Section 6 "Results in
Simulation". The paper's page 6 is proceedings page 294 (Figure 1), page 7 is 295 (Figure 2).

The figures did not survive the text extractions in ``/work/shared/seeds/``; what did:

* ``000_53a819177eee7109.txt`` (the most faithful extraction) holds the Figure 1 table and, on one
  line after page 7, the concatenated tick labels and titles of the four panels of Figure 2;
* ``003_e97ea9f992c7fdbd.txt`` holds the same tick labels split over lines (a cross-check).

Every number below is typed once, here, with where it comes from. Nothing in :mod:`dplr` computes
with these numbers except to compare them with ours.
"""
from __future__ import annotations

import re
from dataclasses import dataclass

import numpy as np

__all__ = [
    "PAPER",
    "PublishedValue",
    "FIGURE1",
    "figure1_value",
    "AxisRange",
    "FIGURE2_AXES",
    "FIGURE2_TICK_TEXT",
    "parse_tick_run",
    "TEXT_CLAIMS",
    "minimum_mean_given_std",
]

PAPER = "Chaudhuri & Monteleoni, NIPS 2008, Section 6"
_EXTRACTION = "seeds/000_53a819177eee7109.txt"


@dataclass(frozen=True)
class PublishedValue:
    """One entry of Figure 1: test error, mean ± standard deviation "over five folds", N = 17,500."""

    data: str  # "separable" ("Uniform, margin=0.03") or "unseparable" ("uniform with noise 0.2 in margin 0.1")
    method: str  # "standard", "sensitivity" or "objective" (the paper's "New method")
    mean: float
    std: float
    printed: str  # exactly as printed
    decimals: int = 4  # printed precision of the mean and std
    figure: str = "Figure 1"
    page: str = "p. 6 (proceedings p. 294)"
    source: str = _EXTRACTION
    note: str = ""


FIGURE1 = (
    PublishedValue("separable", "sensitivity", 0.2962, 0.0617, "0.2962±0.0617"),
    PublishedValue("separable", "objective", 0.1426, 0.1284, "0.1426±0.1284"),
    PublishedValue("separable", "standard", 0.0, 0.0016, "0±0.0016",
                   note="The mean is printed as '0' without decimals. Five non-negative errors with sample std "
                        "0.0016 have mean at least 0.0016/sqrt(5) = 0.0007, so '0' and '±0.0016' cannot both be "
                        "exact at four decimals."),
    PublishedValue("unseparable", "sensitivity", 0.3257, 0.0536, "0.3257±0.0536"),
    PublishedValue("unseparable", "objective", 0.1903, 0.1105, "0.1903±0.1105"),
    PublishedValue("unseparable", "standard", 0.0530, 0.1105, "0.0530±0.1105",
                   note="The std repeats the New method's 0.1105 digit for digit, and five errors with mean "
                        "0.0530 can have a std of 0.1105 only if one fold carries almost all the error: very "
                        "likely a typo in the paper. Reported as printed; not corrected."),
)


def figure1_value(data, method) -> PublishedValue:
    """The Figure 1 entry for ``data`` ("separable"/"unseparable") and ``method``."""
    for value in FIGURE1:
        if value.data == data and value.method == method:
            return value
    raise KeyError((data, method))


@dataclass(frozen=True)
class AxisRange:
    """The plotted ranges of one panel of Figure 2, read from its surviving tick labels."""

    panel: str
    title: str  # the panel's title as extracted
    x_label: str
    x_ticks: tuple
    y_ticks: tuple
    legend: tuple
    page: str = "p. 7 (proceedings p. 295)"
    source: str = _EXTRACTION + " (tick labels after page 7); cross-checked in seeds/003_e97ea9f992c7fdbd.txt"

    @property
    def x_range(self):
        return (self.x_ticks[0], self.x_ticks[-1])

    @property
    def y_range(self):
        return (self.y_ticks[0], self.y_ticks[-1])


#: The tick labels of each panel as they survive in the extraction: x ticks then y ticks, concatenated
#: without separators (extraction 000, the line after page 7).
FIGURE2_TICK_TEXT = {
    "a": "246810121400.10.20.30.40.50.60.7",
    "b": "24681012140.050.10.150.20.250.30.350.40.450.50.55",
    "c": "00.020.040.060.080.10.120.140.160.180.20.10.150.20.250.30.350.40.450.50.550.6",
    "d": "00.020.040.060.080.10.120.140.160.180.20.20.250.30.350.40.450.50.55",
}

_N_TICKS = tuple(float(v) for v in range(2, 15, 2))
_EPS_TICKS = tuple(round(0.02 * i, 2) for i in range(11))

FIGURE2_AXES = {
    "a": AxisRange("a", "Learning curve for uniform data. d=10, epsilon=0.1, margin=0.03, lambda=0.01",
                   "N/1000", _N_TICKS, tuple(round(0.1 * i, 1) for i in range(8)),
                   ("Our method", "Standard LR", "Sensitivity method")),
    "b": AxisRange("b", "Learning curve for unseparable data. d=10, epsilon=0.1, lambda=0.01",
                   "N/1000", _N_TICKS, tuple(round(0.05 * i, 2) for i in range(1, 12)),
                   ("Our method", "Standard LR", "Sensitivity method")),
    "c": AxisRange("c", "Epsilon. Uniform data, d=10, n=10,000, margin=0.03, lambda=0.01",
                   "Epsilon", _EPS_TICKS, tuple(round(0.05 * i, 2) for i in range(2, 13)),
                   ("Our method", "Sensitivity method")),
    "d": AxisRange("d", "Epsilon. Unseparable data, d=10, n=10,000, lambda=0.01",
                   "Epsilon", _EPS_TICKS, tuple(round(0.05 * i, 2) for i in range(4, 12)),
                   ("Our method", "Sensitivity method")),
}


def parse_tick_run(text, first_axis_ticks):
    """Split a run of concatenated tick labels whose first axis is known; return the second axis' ticks.

    The first axis' labels are stripped from the front (they must match ``first_axis_ticks`` as
    printed, e.g. ``2, 4, ..., 14`` or ``0, 0.02, ..., 0.2``); the rest is split greedily into numbers
    that each start with ``0.`` or are a lone ``0``.
    """
    rest = text
    for tick in first_axis_ticks:
        label = f"{tick:g}"
        if not rest.startswith(label):
            raise ValueError(f"expected tick {label!r} at {rest[:12]!r}")
        rest = rest[len(label):]
    ticks = []
    for match in re.finditer(r"0\.\d*?(?=0\.|0$|$)|0(?=0\.)|0$", rest):
        ticks.append(float(match.group()))
    if "".join(m.group() for m in re.finditer(r"0\.\d*?(?=0\.|0$|$)|0(?=0\.)|0$", rest)) != rest:
        raise ValueError(f"could not split {rest!r} into tick labels")
    return tuple(ticks)


#: What the text says about the curves, for the qualitative verdicts (Section 6, pp. 6–7).
TEXT_CLAIMS = {
    "learning_final": ("the new method reach[es] a lower final error than the sensitivity method", "p. 7"),
    "learning_smaller": ("it also has better performance at most smaller training set sizes", "p. 7"),
    "epsilon_majority": ("For the majority of values of ε that we tested, the new method is superior in "
                         "managing the tradeoff between privacy and learning performance.", "p. 7"),
    "epsilon_small": ("For very small ε, corresponding to extremely stringent privacy requirements, the "
                      "sensitivity method performs better but also has a predication accuracy close to chance",
                      "p. 7"),
    "figure1_order": ("In both simulations, our new method is superior to the sensitivity method, although "
                      "incurs more error than standard (non-private) logistic regression.", "p. 6"),
}


def minimum_mean_given_std(std, k=5):
    r"""Smallest possible mean of :math:`k` non-negative numbers with sample std ``std``: :math:`s/\sqrt k`.

    Attained by one positive value and :math:`k-1` zeros (then :math:`s = x/\sqrt k`, mean
    :math:`x/k`). Used to flag Figure 1's "0±0.0016".
    """
    return float(std) / np.sqrt(k)

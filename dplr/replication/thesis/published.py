r"""What Veldhuizen (2020) printed: its test errors (Table 2 and the text), and its protocol.

D. Veldhuizen, *Handling privacy preservation for binary classification data*, BSc thesis, Erasmus
School of Economics, 2020 (``seeds/004_2389f0caa551afc2.txt``). Every number is typed once, here,
with where it is printed, and only ever compared with ours. The protocol constants are the thesis'
(Section 5.1: λ = 0.01 from 25 candidates by five-fold cross-validation; five folds; 200 restarts) or,
where it is silent, ours, each marked.
"""
from __future__ import annotations

from dataclasses import dataclass

__all__ = [
    "THESIS",
    "ThesisValue",
    "TABLE2",
    "TEXT_VALUES",
    "FigureClaim",
    "FIGURE_CLAIMS",
    "thesis_value",
    "THESIS_SEED",
    "THESIS_LAMBDA",
    "THESIS_EPSILON",
    "THESIS_RESTARTS",
    "THESIS_FOLDS",
    "LAMBDA_GRID",
    "EPSILON_GRID",
    "SIMULATED_SIZES",
    "REAL_SIZES",
    "KINDS",
    "METHODS",
]

THESIS = "Veldhuizen (2020), BSc thesis, Erasmus School of Economics"
_SOURCE = "seeds/004_2389f0caa551afc2.txt"


@dataclass(frozen=True)
class ThesisValue:
    """One number the thesis reports: a test error, with where it is printed."""

    data: str  # "separable", "inseparable" or "real"
    method: str  # "standard", "sensitivity" (Algorithm 1) or "objective" (Algorithm 2)
    value: float
    printed: str
    where: str
    n_train: int | None = None  # None: the whole training part of a fold
    decimals: int = 3
    source: str = _SOURCE
    note: str = ""


_T2 = "Table 2, Section 5.1 (p. 15)"
TABLE2 = (
    ThesisValue("separable", "standard", 0.0, "0", _T2, note="printed without decimals; read as 0.000"),
    ThesisValue("separable", "sensitivity", 0.029, "0.029", _T2),
    ThesisValue("separable", "objective", 0.031, "0.031", _T2),
    ThesisValue("inseparable", "standard", 0.035, "0.035", _T2),
    ThesisValue("inseparable", "sensitivity", 0.062, "0.062", _T2),
    ThesisValue("inseparable", "objective", 0.051, "0.051", _T2),
    ThesisValue("real", "standard", 0.391, "0.391", _T2),
    ThesisValue("real", "sensitivity", 0.395, "0.395", _T2, note="also in the text: 'a test error of 0.395'"),
    ThesisValue("real", "objective", 0.461, "0.461", _T2, note="the text prints '0,461'"),
)
#: Numbers stated in the text about the figures (the figures themselves are lost).
TEXT_VALUES = (
    ThesisValue("real", "standard", 0.86, "0.86", "Section 5.2 (p. 16), on Figure 6", n_train=50, decimals=2,
                note="'using a small data set of 50 observations logistic regression has a test error of 0.86'"),
)



@dataclass(frozen=True)
class FigureClaim:
    """What the thesis' text says its Figures 4-9 show (the figures themselves are lost), with the test we judge it by.

    ``curve`` is "learning" (Figures 4-6, ε = 0.1) or "epsilon" (Figures 7-9, full training size); ``test`` is
    "falls" (both private algorithms: the 95% interval over folds at the largest x lies below the one at the
    smallest), "similar" (neither
    algorithm significantly better at most points), "algorithm2_most" / "algorithm1_most" (that algorithm
    significantly better at most points) or "algorithm2_all" / "algorithm1_all" (at every point).
    """

    figure: str
    data: str
    curve: str
    test: str
    quote: str
    where: str = "Section 5.2 (p. 16)"
    source: str = _SOURCE


_FALLS_N = ("as the number of observations in the training data increases, we see that the test errors of both "
            "algorithms decline")
_FALLS_EPS = "As the value of ϵ increases, the test errors become smaller. [...] This accounts for both algorithms."
#: The text's statements about Figures 4-9, quoted (Sections 5.2, p. 16, and 5.3, p. 17).
FIGURE_CLAIMS = (
    FigureClaim("Figure 4", "separable", "learning", "falls", _FALLS_N),
    FigureClaim("Figure 4", "separable", "learning", "similar",
                "In the case of the separable data, we see the graphs of both algorithms lie on top of each other."),
    FigureClaim("Figure 5", "inseparable", "learning", "falls", _FALLS_N),
    FigureClaim("Figure 5", "inseparable", "learning", "algorithm2_most",
                "Here we see the learning curve of algorithm 2 lying underneath the curve of algorithm 1"),
    FigureClaim("Figure 6", "real", "learning", "falls",
                "The learning curve is more or less decreasing for both algorithms."),
    FigureClaim("Figure 6", "real", "learning", "algorithm1_most",
                "overall, the learning curve of algorithm 1 lies above the learning curve of algorithm 2. This means "
                "that for this data set algorithm 1 has a better performance than algorithm 2."),
    FigureClaim("Figure 7", "separable", "epsilon", "falls", _FALLS_EPS, "Section 5.3 (p. 17)"),
    FigureClaim("Figure 7", "separable", "epsilon", "similar",
                "For separable data the curves are once again similar for both algorithms.", "Section 5.3 (p. 17)"),
    FigureClaim("Figure 8", "inseparable", "epsilon", "falls", _FALLS_EPS, "Section 5.3 (p. 17)"),
    FigureClaim("Figure 8", "inseparable", "epsilon", "algorithm2_all",
                "no matter how tight the restriction of privacy preservation is, algorithm 2 makes better "
                "predictions than algorithm 1 for the inseparable data.", "Section 5.3 (p. 17)"),
    FigureClaim("Figure 9", "real", "epsilon", "falls",
                "Similar to the simulated data, both curves decrease as ϵ increases.", "Section 5.3 (p. 17)"),
    FigureClaim("Figure 9", "real", "epsilon", "algorithm1_all",
                "the curve of algorithm 1 lies above algorithm 2 for all values of ϵ. So, no matter how tight the "
                "restriction of privacy preservation is, algorithm 1 makes better predictions than algorithm 2",
                "Section 5.3 (p. 17)"),
)

def thesis_value(data, method, n_train=None) -> ThesisValue:
    for value in TABLE2 + TEXT_VALUES:
        if value.data == data and value.method == method and value.n_train == n_train:
            return value
    raise KeyError((data, method, n_train))


#: Ours (every random draw of the replication descends from it): the thesis' date, July 5, 2020.
THESIS_SEED = 20200705
#: λ found by the thesis' search (Section 5.1).
THESIS_LAMBDA = 0.01
#: The ε of Table 2 is not stated: the paper's 0.1.
THESIS_EPSILON = 0.1
#: Restarts per fold and folds (Section 4.4).
THESIS_RESTARTS = 200
THESIS_FOLDS = 5
#: The thesis searched 25 values of λ (Appendix, "Lambda") without listing them: ours are quarter
#: decades from 1e-5 to 10, centred on the value it found.
LAMBDA_GRID = tuple(float(10.0 ** (-5 + k / 4)) for k in range(25))
#: ε values for the analogues of Figures 7-9 (the thesis does not list the values it plotted).
EPSILON_GRID = (0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 1.0)
#: Figures 4-5: "increments of 1000" up to the 8,000 training points of a fold; Figure 6: increments of 50.
SIMULATED_SIZES = tuple(range(1000, 8001, 1000))
REAL_SIZES = tuple(range(50, 451, 50))
KINDS = ("separable", "inseparable", "real")
#: "standard" (LR), "sensitivity" (Algorithm 1), "objective" (Algorithm 2)
METHODS = ("standard", "sensitivity", "objective")

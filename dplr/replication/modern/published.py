r"""The protocol of Iyengar et al.'s benchmark, typed once with its source, for the comparison's "published
reference points".

Iyengar, Near, Song, Thakkar, Thakurta & Wang, "Towards practical differentially private convex optimization",
IEEE S&P 2019, benchmark approximate minima perturbation and other private convex learners on Adult and KDDCup99
among other data sets. Their code is public: ``sunblaze-ucb/dpml-benchmark``, read at commit
:data:`IYENGAR_COMMIT` (the protocol files unchanged since ``820cc89``). Every value below is from that code
(the file named in its ``source``); the repository holds no result files, and we did not have the paper's tables
in a form we could cite, so no published *error* is typed here.
"""
from __future__ import annotations

from dataclasses import dataclass

__all__ = ["IYENGAR_REPOSITORY", "IYENGAR_COMMIT", "ProtocolValue", "IYENGAR_PROTOCOL"]

#: Their code.
IYENGAR_REPOSITORY = "sunblaze-ucb/dpml-benchmark"
#: The commit read.
IYENGAR_COMMIT = "95feb4683acc421b9fe970b10249e3deec98d7a8"


@dataclass(frozen=True)
class ProtocolValue:
    """One setting of their protocol: what it is, its value and the file of :data:`IYENGAR_REPOSITORY` it is from."""

    what: str
    value: object
    source: str


#: Their protocol, the settings where it differs from this book's comparison.
IYENGAR_PROTOCOL = {p.what: p for p in (
    ProtocolValue("epsilons", (0.01, 0.0316, 0.1, 0.316, 1.0, 3.16, 10.0), "gridsearch.py"),
    ProtocolValue("delta", "1/n_train^2", "gridsearch.py"),
    ProtocolValue("repeats", 10, "gridsearch.py (NUM_REPEATS)"),
    ProtocolValue("hyperparameters", "the configuration with the best mean test accuracy over the repeats, "
                                     "chosen after the runs, outside the privacy budget", "gridsearch.py "
                                                                                         "(max_correct_list)"),
    ProtocolValue("split", "the first 80 % of the shuffled records for training, the last 20 % for testing",
                  "gridsearch.py"),
    ProtocolValue("row norm", "rows clipped to an L2 norm L in {0.1, 1, 10}, L a hyperparameter", "gridsearch.py"),
    ProtocolValue("adult", "adult.data and adult.test merged, rows with missing values dropped, continuous columns "
                           "divided by their maximum in the data", "datasets/preprocess/adult.py"),
    ProtocolValue("kddcup99", "70,000 rows drawn with replacement from the 10 % file, numeric columns not scaled",
                  "datasets/preprocess/kddcup99.py"),
)}

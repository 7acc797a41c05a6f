"""dplr: differentially private logistic regression, for teaching and replication.

Chaudhuri & Monteleoni, "Privacy-preserving logistic regression", NIPS 2008, and the corrected
objective perturbation of Chaudhuri, Monteleoni & Sarwate, JMLR 12 (2011).

Modules, named after the paper's objects:

* :mod:`dplr.mechanisms` -- the noise :math:`h(\\eta) \\propto e^{-\\beta\\lVert\\eta\\rVert}` and the Laplace mechanism
* :mod:`dplr.losses` -- logistic and Huber hinge losses with their proof constants
* :mod:`dplr.solver` -- batched Newton solver for the perturbed regularised ERM problem
* :mod:`dplr.algorithms` -- Algorithm 1 (sensitivity method) and Algorithm 2 (objective perturbation)
* :mod:`dplr.estimators` -- scikit-learn estimators around them
* :mod:`dplr.preprocessing` -- getting records into the unit ball (and what leaks privacy)
* :mod:`dplr.validation` -- input checks and :class:`PrivacyLeakWarning`
* :mod:`dplr.data` -- the simulated data of the paper's Section 6, with its unstated readings as options
* :mod:`dplr.experiments` -- the paper's protocol (CV, restarts, curves, readings) as seeded tasks
* :mod:`dplr.published` -- the paper's published numbers as data, and the verdict rule
* :mod:`dplr.stats` -- intervals and jackknife standard errors
* :mod:`dplr.privacy_loss` -- exact privacy loss of both algorithms (change of variables for Algorithm 2)
* :mod:`dplr.sensitivity` -- adversarial search for neighbouring data sets
* :mod:`dplr.guarantees` -- the learning guarantees (Lemmas 3-4, Theorems 4-5) and their simulation
* :mod:`dplr.audit` -- black-box privacy auditing with Clopper-Pearson bounds (:mod:`dplr.broken`: deliberately broken mechanisms)
* :mod:`dplr.datasets` -- UCI Adult and KDDCup99 loaders and preprocessing; :mod:`dplr.tuning` -- private choice of λ
* :mod:`dplr.thesis_data`, :mod:`dplr.thesis`, :mod:`dplr.thesis_study` -- the Veldhuizen (2020) thesis: its data, its pipeline as switches and its published numbers, the study
* :mod:`dplr.summary` -- every published number beside ours, for the summary page
* :mod:`dplr.plotting` -- the book's one plotting style
* :mod:`dplr.parallel` -- independent tasks on this machine (joblib) or a Dask cluster, with the same results
* :mod:`dplr.reproduce` -- ``python -m dplr reproduce``: every figure and table of the replications, as CSV and PNG
"""
from dplr.algorithms import (
    ObjectivePerturbationCalibration,
    objective_perturbation,
    objective_perturbation_calibration,
    sensitivity_bound,
    sensitivity_method,
    sensitivity_method_noise_rate,
    standard_erm,
)
from dplr.estimators import ObjectivePerturbation, SensitivityMethod, StandardLR
from dplr.losses import HuberLoss, LogisticLoss
from dplr.mechanisms import laplace_mechanism, sample_vector_laplace
from dplr.preprocessing import clip_to_unit_ball
from dplr.solver import solve_regularized_erm
from dplr.validation import PrivacyLeakWarning

__version__ = "0.1.0"

__all__ = [
    "HuberLoss",
    "LogisticLoss",
    "ObjectivePerturbation",
    "ObjectivePerturbationCalibration",
    "PrivacyLeakWarning",
    "SensitivityMethod",
    "StandardLR",
    "clip_to_unit_ball",
    "laplace_mechanism",
    "objective_perturbation",
    "objective_perturbation_calibration",
    "sample_vector_laplace",
    "sensitivity_bound",
    "sensitivity_method",
    "sensitivity_method_noise_rate",
    "solve_regularized_erm",
    "standard_erm",
]

"""dplr: differentially private logistic regression, for teaching and replication.

Chaudhuri & Monteleoni, "Privacy-preserving logistic regression", NIPS 2008, and the corrected
objective perturbation of Chaudhuri, Monteleoni & Sarwate, JMLR 12 (2011).

The core -- what a user imports -- is this package's top level, one idea per module, named after the
paper's objects:

* :mod:`dplr.mechanisms` -- the noise :math:`h(\\eta) \\propto e^{-\\beta\\lVert\\eta\\rVert}` (:class:`~dplr.mechanisms.VectorLaplace`) and the Laplace mechanism
* :mod:`dplr.calibration` -- the privacy maps: sensitivity bound, Algorithm 1's noise, Algorithm 2's noise and Δ
* :mod:`dplr.gaussian` -- the (ε, δ) privacy maps with Gaussian noise (:class:`~dplr.mechanisms.IsotropicGaussian`): analytic Gaussian, and the algorithms below
* :mod:`dplr.losses` -- logistic and Huber hinge losses with their derivatives and proof constants
* :mod:`dplr.objective` -- the regularised, perturbed ERM objective: value, gradient, Hessian
* :mod:`dplr.solver` -- the fast batched Newton solver and the plain reference one
* :mod:`dplr.algorithms` -- Algorithm 1 (sensitivity method) and Algorithm 2 (objective perturbation): calibrate, draw, solve; and the (ε, δ) algorithms: Gaussian output and objective perturbation, approximate minima perturbation
* :mod:`dplr.dpsgd` -- DP-SGD, with Google's ``dp-accounting`` as its accountant (the optional extra ``dplr[accounting]``)
* :mod:`dplr.estimators` -- scikit-learn estimators around them
* :mod:`dplr.tuning` -- private choice of λ (JMLR 2011, Algorithm 3)
* :mod:`dplr.preprocessing` -- getting records into the unit ball (and what leaks privacy)
* :mod:`dplr.validation` -- input checks and :class:`~dplr.validation.PrivacyLeakWarning`; :mod:`dplr.threads` -- threads and BLAS

Built on it: :mod:`dplr.analysis` (exact privacy loss, sensitivity searches, guarantees, audits),
:mod:`dplr.datasets` (the simulated data, Adult, KDDCup99, breast cancer) and ``dplr.replication``
(the two replications and ``python -m dplr reproduce``). ``ARCHITECTURE.md`` at the repository root
is the map.
"""
from dplr.algorithms import (
    approximate_minima_perturbation,
    gaussian_objective_perturbation,
    gaussian_output_perturbation,
    objective_perturbation,
    objective_perturbation_noise,
    sensitivity_method,
    sensitivity_method_noise,
    standard_erm,
)
from dplr.calibration import (
    ObjectivePerturbationCalibration,
    SensitivityMethodCalibration,
    objective_perturbation_calibration,
    sensitivity_bound,
    sensitivity_method_calibration,
    sensitivity_method_noise_rate,
)
from dplr.estimators import (
    DPSGD,
    ApproximateMinimaPerturbation,
    GaussianObjectivePerturbation,
    GaussianOutputPerturbation,
    ObjectivePerturbation,
    SensitivityMethod,
    StandardLR,
)
from dplr.losses import HuberLoss, LogisticLoss
from dplr.mechanisms import IsotropicGaussian, VectorLaplace, laplace_mechanism, sample_vector_laplace
from dplr.preprocessing import clip_to_unit_ball
from dplr.solver import solve_regularized_erm
from dplr.validation import PrivacyLeakWarning

__version__ = "0.1.0"

__all__ = [
    "ApproximateMinimaPerturbation",
    "DPSGD",
    "GaussianObjectivePerturbation",
    "GaussianOutputPerturbation",
    "HuberLoss",
    "IsotropicGaussian",
    "LogisticLoss",
    "ObjectivePerturbation",
    "ObjectivePerturbationCalibration",
    "PrivacyLeakWarning",
    "SensitivityMethod",
    "SensitivityMethodCalibration",
    "StandardLR",
    "VectorLaplace",
    "approximate_minima_perturbation",
    "clip_to_unit_ball",
    "gaussian_objective_perturbation",
    "gaussian_output_perturbation",
    "laplace_mechanism",
    "objective_perturbation",
    "objective_perturbation_calibration",
    "objective_perturbation_noise",
    "sample_vector_laplace",
    "sensitivity_bound",
    "sensitivity_method",
    "sensitivity_method_calibration",
    "sensitivity_method_noise",
    "sensitivity_method_noise_rate",
    "solve_regularized_erm",
    "standard_erm",
]

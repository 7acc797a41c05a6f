"""One description of each learner (dplr.learners) and the adapters built from it."""
import numpy as np
import pytest

from dplr.algorithms import calibration_used, gaussian_output_perturbation, objective_perturbation, sensitivity_method
from dplr.analysis.auditable import ObjectivePerturbationMechanism
from dplr.datasets.simulated import make_separable
from dplr.estimators import GaussianOutputPerturbation, SensitivityMethod, StandardLR
from dplr.learners import LEARNERS, Learner, get_learner
from dplr.replication.modern.contenders import CONTENDERS, fit_contender


def _data():
    return make_separable(200, d=3, random_state=1)


def test_the_registry_holds_the_books_learners_and_their_guarantees():
    assert set(LEARNERS) == {"standard", "sensitivity", "objective", "gaussian_output", "gaussian_objective", "amp",
                             "dpsgd"}
    assert set(CONTENDERS) <= set(LEARNERS)
    assert get_learner("objective").privacy_target == ("epsilon",)
    assert get_learner("amp").privacy_target == ("epsilon", "delta")
    assert get_learner("standard").privacy_target == ()
    with pytest.raises(ValueError, match="unknown learner"):
        get_learner("lasso")
    with pytest.raises(ValueError, match="guarantee"):
        Learner("x", sensitivity_method, "renyi", ())


def test_release_refuses_a_privacy_parameter_its_guarantee_does_not_have():
    X, y = _data()
    with pytest.raises(TypeError, match="takes no delta"):
        get_learner("sensitivity").release(X, y, epsilon=1.0, delta=1e-5, lam=0.1)
    with pytest.raises(TypeError, match="takes no epsilon"):
        get_learner("standard").release(X, y, epsilon=1.0, lam=0.1)
    # the calibration of a call takes the same arguments and refuses the same way; the non-private learner has none
    with pytest.raises(TypeError, match="takes no delta"):
        get_learner("sensitivity").calibration(X, y, epsilon=1.0, delta=1e-5, lam=0.1)
    with pytest.raises(ValueError, match="one of the private algorithms"):
        get_learner("standard").calibration(X, y, lam=0.1)
    assert get_learner("gaussian_output").calibration(X, y, epsilon=1.0, delta=1e-5, lam=0.1, random_state=3) == \
        calibration_used(gaussian_output_perturbation, X, y, 1.0, 1e-5, 0.1)


def test_the_adapters_draw_what_the_algorithms_draw():
    X, y = _data()
    released = get_learner("gaussian_output").release(X, y, epsilon=1.0, delta=1e-5, lam=0.1, random_state=3)
    np.testing.assert_array_equal(released, gaussian_output_perturbation(X, y, 1.0, 1e-5, 0.1, random_state=3))
    model = GaussianOutputPerturbation(epsilon=1.0, delta=1e-5, lam=0.1, random_state=3).fit(X, y)
    np.testing.assert_array_equal(model.coef_, released)
    np.testing.assert_array_equal(SensitivityMethod(1.0, 0.1, random_state=4).fit(X, y).coef_,
                                  sensitivity_method(X, y, 1.0, 0.1, random_state=4))
    assert StandardLR().fit(X, y).calibration_ is None  # every estimator has calibration_
    np.testing.assert_array_equal(fit_contender("objective", X, y, 0.1, 1.0, 5),  # pinned as the record ran it
                                  objective_perturbation(X, y, 1.0, 0.1, random_state=5, check_input=False,
                                                         release="exact_minimiser"))
    audited = ObjectivePerturbationMechanism(1.0, 0.1)((X, y), random_state=6, size=2)
    np.testing.assert_array_equal(audited, objective_perturbation(X, y, 1.0, 0.1, n_draws=2, random_state=6,
                                                                  solver_options={"chunk_size": 4096}))

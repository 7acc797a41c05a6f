"""Loss objects below the public boundary (issue 37, section 2), and one calibration per release.

A public function (in a module's ``__all__``) or an estimator takes ``loss`` as a name or a loss object and
``huber_h`` for the name, and resolves them once (:func:`dplr.losses.get_loss`); nothing private takes ``huber_h``.
Each private algorithm of :data:`dplr.learners.LEARNERS` calibrates once per release, and so does each estimator's
fit (its ``calibration_`` is the record the release computed).
"""
import importlib
import importlib.util
import inspect
import pkgutil
from unittest import mock

import numpy as np
import pytest

import dplr
import dplr.algorithms
import dplr.dpsgd
import dplr.estimators
from dplr.datasets.simulated import make_separable
from dplr.learners import LEARNERS


def _private_functions():
    """Every function of ``dplr`` whose name starts with one underscore, module-level or a method."""
    for info in pkgutil.walk_packages(dplr.__path__, "dplr."):
        module = importlib.import_module(info.name)
        for name, obj in vars(module).items():
            members = [(name, obj)]
            if inspect.isclass(obj) and obj.__module__ == module.__name__:
                members += [(f"{name}.{key}", value) for key, value in vars(obj).items()]
            for qualname, function in members:
                last = qualname.rsplit(".", 1)[-1]
                if (inspect.isfunction(function) and function.__module__ == module.__name__
                        and last.startswith("_") and not last.startswith("__")):
                    yield f"{module.__name__}.{qualname}", function


def _accounting(name):
    """DP-SGD's accounting is the optional extra dplr[accounting] (absent from make test-oldest's venv)."""
    if name == "dpsgd":
        pytest.importorskip("dp_accounting")


def test_no_private_function_takes_huber_h():
    pytest.importorskip("matplotlib")  # the walk imports dplr.replication.figures (absent from make test-oldest's venv)
    functions = dict(_private_functions())
    assert len(functions) > 100  # the walk found the package's private functions
    offenders = [name for name, function in functions.items() if "huber_h" in inspect.signature(function).parameters]
    assert offenders == [], (f"{offenders} take huber_h: resolve (loss, huber_h) once at the public boundary "
                             f"(dplr.losses.get_loss) and pass the loss object")


_ARGUMENTS = {"dpsgd": {"sampling_rate": 0.1, "steps": 5, "learning_rate": 0.5}}


def _counted_calibrations():
    """Patches counting every call of a calibration function the algorithms call (dplr.algorithms' and
    dplr.dpsgd's names ending in ``_calibration``, private ones included) -- and the counts."""
    counts = {}
    patches = []
    for module in (dplr.algorithms, dplr.dpsgd):
        for name, function in vars(module).items():
            if name.endswith("_calibration") and callable(function) and not name.startswith("_cached"):
                def counted(*args, _function=function, _name=f"{module.__name__}.{name}", **kwargs):
                    counts[_name] = counts.get(_name, 0) + 1
                    return _function(*args, **kwargs)
                patches.append(mock.patch.object(module, name, counted))
    return patches, counts


def _release_calls(release, learner, data, **options):
    target = {name: value for name, value in (("epsilon", 1.0), ("delta", 1e-5)) if name in learner.privacy_target}
    patches, counts = _counted_calibrations()
    for patch in patches:
        patch.start()
    try:
        result = release(*data, **target, lam=0.1, random_state=0, **_ARGUMENTS.get(learner.name, {}), **options)
    finally:
        for patch in patches:
            patch.stop()
    return result, counts


@pytest.mark.parametrize("name", [name for name, learner in LEARNERS.items() if learner.guarantee != "none"])
def test_each_algorithm_calibrates_once_per_release(name):
    _accounting(name)
    learner, data = LEARNERS[name], make_separable(200, d=3, random_state=1)
    _, counts = _release_calls(learner.release, learner, data)
    # one call of the algorithm's own calibration step, which calls one calibration function of the core
    # (dp_sgd has no step of its own: dpsgd_calibration)
    own = {key: count for key, count in counts.items() if key.startswith("dplr.algorithms._")}
    core = {key: count for key, count in counts.items() if key not in own}
    assert list(own.values()) in ([1], []) and list(core.values()) == [1], counts
    # calibrated_release returns the release's own calibration, the one calibration_used computes
    (coef, calibration), counts = _release_calls(learner.calibrated_release, learner, data)
    assert sum(counts.values()) == (2 if own else 1), counts
    assert calibration == learner.calibration(*data, epsilon=1.0, **({"delta": 1e-5} if "delta" in
                                                                       learner.privacy_target else {}), lam=0.1,
                                              **_ARGUMENTS.get(name, {}))
    assert np.asarray(coef).shape == (3,)


def test_each_estimators_fit_calibrates_once():
    X, y = make_separable(200, d=3, random_state=1)
    estimators = [cls for cls in vars(dplr.estimators).values() if inspect.isclass(cls)
                  and getattr(cls, "_learner", "standard") != "standard"]
    assert len(estimators) == len(LEARNERS) - 1
    for cls in estimators:
        if cls._learner == "dpsgd" and importlib.util.find_spec("dp_accounting") is None:
            continue  # the optional extra dplr[accounting] (absent from make test-oldest's venv)
        options = {"steps": 5} if cls._learner == "dpsgd" else {}
        dplr.dpsgd.clear_calibration_cache()
        patches, counts = _counted_calibrations()
        accountant = mock.patch.object(dplr.dpsgd, "dpsgd_noise_multiplier", wraps=dplr.dpsgd.dpsgd_noise_multiplier)
        for patch in patches:
            patch.start()
        try:
            with accountant as runs:
                model = cls(random_state=0, **options).fit(X, y)
        finally:
            for patch in patches:
                patch.stop()
        core = {key: count for key, count in counts.items() if not key.startswith("dplr.algorithms._")}
        assert list(core.values()) == [1], (cls.__name__, counts)
        assert runs.call_count == (1 if cls._learner == "dpsgd" else 0)  # the accountant too runs once
        assert model.calibration_ is not None


@pytest.mark.parametrize("name", [name for name, learner in LEARNERS.items() if learner.guarantee != "none"])
def test_every_algorithm_follows_the_size_rule(name):
    _accounting(name)
    # dplr.algorithms' module docstring: n_draws=None -> (d,), n_draws=k -> (k, d), k = 1 included; one type, ndarray
    learner, (X, y) = LEARNERS[name], make_separable(100, d=3, random_state=0)
    target = {key: value for key, value in (("epsilon", 1.0), ("delta", 1e-5)) if key in learner.privacy_target}
    releases = [{}] + ([{"release": "grid"}] if name in ("sensitivity", "gaussian_output") else [])
    for options in releases:
        for n_draws, shape in ((None, (3,)), (1, (1, 3)), (2, (2, 3))):
            coef = learner.release(X, y, **target, lam=0.1, n_draws=n_draws, random_state=0,
                                   **_ARGUMENTS.get(name, {}), **options)
            assert type(coef) is np.ndarray and coef.shape == shape, (name, options, n_draws)

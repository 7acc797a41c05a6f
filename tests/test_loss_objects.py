"""Loss objects below the public boundary (issue 37, section 2).

A public function (in a module's ``__all__``) or an estimator takes ``loss`` as a name or a loss object and
``huber_h`` for the name, and resolves them once (:func:`dplr.losses.get_loss`); nothing private takes ``huber_h``.
"""
import importlib
import inspect
import pkgutil

import dplr


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


def test_no_private_function_takes_huber_h():
    functions = dict(_private_functions())
    assert len(functions) > 100  # the walk found the package's private functions
    offenders = [name for name, function in functions.items() if "huber_h" in inspect.signature(function).parameters]
    assert offenders == [], (f"{offenders} take huber_h: resolve (loss, huber_h) once at the public boundary "
                             f"(dplr.losses.get_loss) and pass the loss object")

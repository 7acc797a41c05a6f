"""The package's layout, as ARCHITECTURE.md states it, checked on the source: imports run one way only.

Layers, from the bottom: the **core** (``dplr/*.py`` and ``dplr/solver/``) imports only the core;
**analysis** (``dplr/analysis/``) and **datasets** (``dplr/datasets/``) import the core and themselves;
**replication** (``dplr/replication/``) imports all of them, and its studies (``paper/``, ``thesis/``, ``real/``, ``modern/``)
do not import each other (what they share lives in ``dplr/replication/``); only the command line
(``dplr/replication/cli.py``, ``dplr/__main__.py``) may use both. Every import counts -- at module level
or inside a function. Besides: no private name is imported from another module, an import inside a
function is an optional heavy dependency (or a dplr module that imports one) with a comment saying so, and a module longer than about 400
lines says at its top why.
"""
import ast
import json
import re
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[1] / "dplr"
LONG = 420  # "about 400 lines"

#: layer -> the layers it may import
ALLOWED = {
    "core": {"core"},
    "analysis": {"core", "analysis"},
    "datasets": {"core", "datasets"},
    "replication": {"core", "analysis", "datasets", "replication"},
    "paper": {"core", "analysis", "datasets", "replication", "paper"},
    "thesis": {"core", "analysis", "datasets", "replication", "thesis"},
    "real": {"core", "analysis", "datasets", "replication", "real"},
    "modern": {"core", "analysis", "datasets", "replication", "modern"},
    "entry": {"core", "analysis", "datasets", "replication", "paper", "thesis", "real", "modern", "entry"},
}
ENTRY_POINTS = {"dplr.__main__", "dplr.replication.cli"}


def layer(module):
    """The layer of a dotted module name inside dplr."""
    parts = module.split(".")
    if module in ENTRY_POINTS:
        return "entry"
    if len(parts) >= 3 and parts[1] == "replication" and parts[2] in ("paper", "thesis", "real", "modern"):
        return parts[2]
    if len(parts) >= 2 and parts[1] in ("analysis", "datasets", "replication"):
        return parts[1]
    return "core"


def module_name(path):
    parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def imports(tree):
    """``(node, imported module, imported names, inside a function)`` for every import in ``tree``."""
    found = []

    def visit(node, in_function):
        for child in ast.iter_child_nodes(node):
            inside = in_function or isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda))
            if isinstance(child, ast.Import):
                for alias in child.names:
                    found.append((child, alias.name, (), in_function))
            elif isinstance(child, ast.ImportFrom):
                names = tuple(alias.name for alias in child.names)
                found.append((child, child.module or "", names, in_function))
                if child.module and child.module.startswith("dplr"):
                    # `from dplr.replication import thesis` imports the module dplr.replication.thesis
                    found.extend((child, f"{child.module}.{name}", (), in_function) for name in names)
            visit(child, inside)

    visit(tree, False)
    return found


def violations(module, source):
    """Every rule this module's source breaks, as readable strings."""
    tree = ast.parse(source)
    lines = source.splitlines()
    problems = []
    for node, target, names, in_function in imports(tree):
        if target.startswith("dplr.") or target == "dplr":
            if layer(target) not in ALLOWED[layer(module)] and target != "dplr":
                problems.append(f"{module} ({layer(module)}) imports {target} ({layer(target)}), line {node.lineno}")
            private = [n for n in names if n.startswith("_") and n != "__version__"]
            if private and target != module:
                problems.append(f"{module} imports the private {private} from {target}, line {node.lineno}")
        if in_function and "imported here" not in lines[node.lineno - 1]:
            problems.append(f"{module} imports {target} inside a function without saying why "
                            f"('# imported here: ...'), line {node.lineno}")
    docstring = ast.get_docstring(tree) or ""
    if len(lines) > LONG and "400 lines" not in docstring:
        problems.append(f"{module} has {len(lines)} lines and no reason at its top")
    return problems


def modules():
    return sorted(PACKAGE.rglob("*.py"))


@pytest.mark.parametrize("path", modules(), ids=lambda p: str(p.relative_to(PACKAGE)))
def test_module_follows_the_architecture(path):
    assert violations(module_name(path), path.read_text()) == []


def test_every_module_is_in_a_known_layer_and_the_layers_are_all_used():
    seen = {layer(module_name(path)) for path in modules()}
    assert seen == set(ALLOWED)


@pytest.mark.parametrize("module, source, expected", [
    ("dplr.algorithms", "from dplr.analysis.audit import audit\n", "imports dplr.analysis.audit"),
    ("dplr.solver.batched", "def f():\n    import dplr.replication.runner\n", "imports dplr.replication.runner"),
    ("dplr.analysis.audit", "from dplr.replication import verdicts\n", "imports dplr.replication.verdicts"),
    ("dplr.datasets.adult", "from dplr.analysis import lasso\n", "imports dplr.analysis.lasso"),
    ("dplr.replication.thesis.cells", "from dplr.replication.paper.protocol import Task\n",
     "imports dplr.replication.paper.protocol"),
    ("dplr.replication.paper.study", "def f():\n    from dplr.replication.thesis import cells\n",
     "imports dplr.replication.thesis"),
    ("dplr.tuning", "from dplr.algorithms import _check\n", "private ['_check']"),
    ("dplr.tuning", "def f():\n    import scipy\n", "without saying why"),
    ("dplr.replication.cli", "def f():\n    from dplr.replication import figures\n", "without saying why"),
    ("dplr.tuning", '"""Short."""\n' + "x = 1\n" * 500, "no reason at its top"),
])
def test_the_checks_catch_a_wrong_import(module, source, expected):
    # The rules above are only worth something if they can fail: each of these breaks one.
    assert any(expected in problem for problem in violations(module, source))


def test_the_checks_accept_what_is_allowed():
    assert violations("dplr.replication.thesis.cells", "from dplr.analysis.lasso import l1_logistic_regression\n"
                      "from dplr.replication.runner import run_calls\nfrom dplr.algorithms import standard_erm\n") == []
    assert violations("dplr.replication.cli", "from dplr.replication.paper import study\n"
                      "from dplr.replication.thesis import study as t\n") == []
    assert violations("dplr.datasets.adult", "def f():\n    import ucimlrepo  # imported here: optional\n") == []
    assert violations("dplr.replication.cli", "def f():\n    from dplr.replication import figures  # imported here: "
                      "it needs matplotlib\n") == []
    assert violations("dplr.solver.batched", '"""Why: over 400 lines because ..."""\n' + "x = 1\n" * 500) == []


def _module_rows():
    """ARCHITECTURE.md's module tables: {first cell without backticks: the row's text}; a row may span lines."""
    rows, current = {}, None
    for line in (PACKAGE.parent / "ARCHITECTURE.md").read_text().splitlines():
        if line.startswith("| `"):
            current = line.split("|")[1].strip().strip("`")
            rows[current] = line
        elif current and line.strip() and not line.startswith("|"):
            rows[current] += "\n" + line  # a row continued on the next line
        else:
            current = None
    return rows


def _named(text, name):
    return re.search(r"`" + re.escape(name) + r"`", text) is not None


def test_architecture_lists_every_module():
    """Every module of dplr is named (in backticks) in its package's row of ARCHITECTURE.md's tables: a core module
    has a row of its own, a solver module is in the `solver/` row, an analysis or datasets module in that package's,
    a replication module in the replication row -- a study's module after that study's `paper/:`-style heading."""
    rows = _module_rows()
    text = (PACKAGE.parent / "ARCHITECTURE.md").read_text()
    missing = []
    for path in sorted(PACKAGE.rglob("*.py")):
        parts = path.relative_to(PACKAGE).with_suffix("").parts
        name = parts[-1]
        if name == "__init__":
            continue
        if parts == ("__main__",):
            ok = "dplr/__main__.py" in text
        elif len(parts) == 1:
            ok = name in rows
        elif parts[0] == "solver":
            ok = _named(rows.get("solver/", ""), name)
        elif parts[0] in ("analysis", "datasets"):
            ok = _named(rows.get(parts[0], ""), name)
        elif parts[0] == "replication" and len(parts) == 2:
            ok = _named(re.split(r"`\w+/`:", rows.get("replication", ""))[0], name)
        elif parts[0] == "replication":
            segment = re.search(r"`" + parts[1] + r"/`:(.*?)(?=`\w+/`:|$)", rows.get("replication", ""), re.S)
            ok = bool(segment) and _named(segment.group(1), name)
        else:
            ok = False
        if not ok:
            missing.append("/".join(parts) + ".py")
    assert not missing, f"modules missing from ARCHITECTURE.md's tables: {missing}"


# Δ, the extra ridge of objective perturbation (JMLR 2011, Algorithm 2), is `ridge` in the code; `delta` is δ only
# (the privacy slack of (ε, δ)-DP, or a failure probability in the learning guarantees). Patterns of `delta` as a
# ridge: added to λ, times an identity, passed to the solver or the objective, or read off an objective-perturbation
# calibration.
RIDGE_AS_DELTA = [
    r"\blam\w*\s*\+\s*[\w.]*\bdelta\b",
    r"\bdelta\b\s*\*\s*np\.eye",
    r"(solve_regularized_erm|regularized_erm_objective|regularized_erm_gradient|RegularizedERM|perturbation_from_output"
    r"|log_abs_det_jacobian|jacobian_log_ratio_bound|solve_on_part)\([^)]*\bdeltas?=",
    r"\b(cal|calibration|calibrations\[\d\]|cal_\w+|c|scaled)\.delta\b",
    r"\b(calibration\[\w+\]|calibration_|\))\.delta\b(?!\()",
    r"\bdelta_reg\b",
]


def _code_lines(path):
    """The lines of a Python file, or of a notebook's code cells."""
    if path.suffix == ".ipynb":
        cells = json.loads(path.read_text())["cells"]
        return "\n".join("".join(c["source"]) for c in cells if c["cell_type"] == "code").splitlines()
    return path.read_text().splitlines()


def test_delta_is_never_the_ridge():
    """In the package, the benchmarks, the tests and the chapters' code."""
    root = PACKAGE.parent
    paths = [*PACKAGE.rglob("*.py"), *(root / "benchmarks").glob("*.py"), *(root / "tests").rglob("*.py"),
             *(root / "book").glob("*.ipynb")]
    offending = []
    for path in sorted(paths):
        if path.name == "test_architecture.py":  # the examples below
            continue
        for number, line in enumerate(_code_lines(path), 1):
            if any(re.search(p, line) for p in RIDGE_AS_DELTA):
                offending.append(f"{path.relative_to(root)}:{number}: {line.strip()}")
    assert not offending, "delta used for the ridge Δ (call it ridge):\n" + "\n".join(offending)


def test_the_ridge_pattern_catches_the_old_names():
    old = ["reg = lam + cal.delta", "solve_regularized_erm(X, y, lam, b=b, delta=cal.delta).coef",
           "factors += [_inverse_factor(H0 + delta * np.eye(d))]", "delta = calibrations[0].delta",
           "np.array([c.delta for _, c in drawn])", "ObjectivePerturbation().fit(X, y).calibration_.delta",
           "objective_perturbation_calibration(0.1, n, lam).delta > 0"]
    assert all(any(re.search(p, line) for p in RIDGE_AS_DELTA) for line in old)
    fine = ["gaussian_output_perturbation(X, y, epsilon, delta, lam)", "check_delta(delta)", "cal.deltas[0]",
            "sigma = analytic_gaussian_sigma(self.epsilon, self.delta, self.sensitivity)"]
    assert not any(re.search(p, line) for line in fine for p in RIDGE_AS_DELTA)


# --------------------------------------------------------------------------------------------------
# One release path (ARCHITECTURE.md, "The core"): noise is drawn only by dplr.mechanisms, and a solve is composed with
# a noise draw only in dplr.release.private_release
# --------------------------------------------------------------------------------------------------
#: what draws noise by hand: a Generator's samplers of the mechanisms' laws
HAND_DRAWS = {"laplace", "standard_normal", "gamma", "normal", "exponential"}

#: modules that call a Generator's sampler for something that is no privacy release, each with its reason
HAND_DRAWS_ALLOWED = {
    "mechanisms.py": "the samplers of the noise laws themselves",
    "ball.py": "uniform_in_ball: points (data, the searches' starts), not noise",
    "datasets/simulated.py": "data, not noise: NIPS 2008's simulated points",
    "replication/verdicts.py": "a simulation of the verdict rule's false-failure rate (statistics, no release)",
    "analysis/privacy_loss_search.py": "search directions of the privacy-loss search, no release",
    "analysis/objective_perturbation_search.py": "random starts of the adversarial search, no release",
    "analysis/sensitivity.py": "random starts of the adversarial neighbours' search, no release",
    "analysis/rounding.py": "test perturbations b for the stopping certificate's check against exact arithmetic",
}

#: the solver's entry points and what draws noise: a mechanism's ``sample``, the algorithms' noise steps
SOLVES = {"solve_regularized_erm", "solve_on_part", "solve_on_parts"}
NOISE_CALLS = re.compile(r"^(sample|\w+_noise|noise_vectors)$")

#: functions that compose a solve with a noise draw outside dplr.release, each with its reason
COMPOSITIONS_ALLOWED = {
    ("release.py", "private_release"): "the one release path",
    ("tuning.py", "_solve_run"): "Algorithm 3 solves all parts of a run together (solve_on_parts); its draws are "
                                 "the calibrations' mechanisms' and its certificates dplr.release's (certify_release, "
                                 "certified_output)",
    ("analysis/broken.py", "__call__"): "deliberately broken mechanisms, for the auditor to catch",
    ("replication/thesis/pipeline.py", "thesis_objective_perturbation"): "Algorithm 2 as the thesis prints it (labels "
                                                                          "entering as coded, rows of label 0 dropped): "
                                                                          "not the library's algorithm; the sound "
                                                                          "pipeline goes through private_release",
    ("replication/paper/protocol.py", "private_classifiers"): "the paper's other readings of its own text (another "
                                                              "Gamma parameter, objective scaling): not the library's "
                                                              "algorithm; its default reading goes through "
                                                              "private_release",
}


def _called_name(call):
    func = call.func
    return func.attr if isinstance(func, ast.Attribute) else func.id if isinstance(func, ast.Name) else None


def hand_draws(source):
    """Calls ``x.laplace(...)``-style of a Generator (not ``stats.gamma``, a scipy distribution) in ``source``."""
    return [node.lineno for node in ast.walk(ast.parse(source))
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr in HAND_DRAWS
            and not (isinstance(node.func.value, ast.Name) and node.func.value.id == "stats")]


def compositions(source):
    """Names of the functions in ``source`` that call both a solver entry point and a noise draw."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            names = {_called_name(call) for call in ast.walk(node) if isinstance(call, ast.Call)}
            if names & SOLVES and any(name and NOISE_CALLS.match(name) for name in names):
                found.append(node.name)
    return found


@pytest.mark.parametrize("path", modules(), ids=lambda p: str(p.relative_to(PACKAGE)))
def test_noise_is_drawn_only_by_the_mechanisms(path):
    relative = path.relative_to(PACKAGE).as_posix()
    if relative in HAND_DRAWS_ALLOWED:
        return
    lines = hand_draws(path.read_text())
    assert not lines, (f"{relative} draws noise by hand (lines {lines}): draw through a mechanism of dplr.mechanisms "
                       f"(a calibration's mechanism(dim).sample, or a new mechanism class there), or, if this is no "
                       f"privacy release, add the module to HAND_DRAWS_ALLOWED with its reason.")


@pytest.mark.parametrize("path", modules(), ids=lambda p: str(p.relative_to(PACKAGE)))
def test_every_release_goes_through_the_release_path(path):
    relative = path.relative_to(PACKAGE).as_posix()
    outside = [name for name in compositions(path.read_text()) if (relative, name) not in COMPOSITIONS_ALLOWED]
    assert not outside, (f"{relative}: {outside} draw noise and solve: release through "
                         f"dplr.release.private_release (or add the function to COMPOSITIONS_ALLOWED with its reason).")


def test_the_release_checks_catch_a_hand_made_release():
    source = ("def f(X, y, rng, cal):\n"
              "    b = rng.laplace(size=3)\n"
              "    w = solve_regularized_erm(X, y, 0.1, b=cal.mechanism(3).sample(1, rng)).coef\n"
              "    return stats.gamma(a=3).ppf(0.5), rng.standard_normal(2)\n")
    assert hand_draws(source) == [2, 4]
    assert compositions(source) == ["f"]
    assert compositions("def g(X, y):\n    return solve_regularized_erm(X, y, 0.1).coef\n") == []
    assert all(any(p.relative_to(PACKAGE).as_posix() == m for p in modules()) for m in HAND_DRAWS_ALLOWED)
    assert all(name in compositions((PACKAGE / m).read_text()) for m, name in COMPOSITIONS_ALLOWED)

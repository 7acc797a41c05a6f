"""dplr's ranges (pyproject.toml), the book's lock (requirements/book.lock) and conda's environment.yml agree.

- dplr states ranges, never pins: every dependency has a lower bound `>=X` (the oldest version, which
  `make test-oldest` installs and tests) and no `==`;
- the lock pins one exact version of every package the book installs, and each satisfies dplr's ranges
  (core and every extra);
- environment.yml lists exactly the lock's pins.
"""
import re
import tomllib
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
LOCK = ROOT / "requirements" / "book.lock"


def _normalise(name):
    return re.sub(r"[-_.]+", "-", name).lower()


def _pin(line):
    name, version = re.fullmatch(r"\s*([A-Za-z0-9][A-Za-z0-9_.\-]*)\s*==\s*([^\s;#]+)\s*", line).groups()
    return _normalise(name), version


def _lock():
    lines = [line.split("#", 1)[0].strip() for line in LOCK.read_text().splitlines()]
    pins = [_pin(line) for line in lines if line]
    names = [name for name, _ in pins]
    assert len(names) == len(set(names)), "a package is pinned twice in the lock"
    return dict(pins)


def _project():
    return tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]


def _all_requirements():
    project = _project()
    return project["dependencies"] + [r for group in project["optional-dependencies"].values() for r in group]


def test_dplr_states_ranges_with_a_tested_floor_not_pins():
    for requirement in _all_requirements():
        if requirement.startswith("dplr["):
            continue
        assert "==" not in requirement, f"{requirement}: dplr states ranges; exact versions go in {LOCK.name}"
        assert re.search(r">=\s*\d", requirement), f"{requirement}: needs a lower bound (its oldest tested version)"
    for requirement in _project()["dependencies"]:
        assert "<" not in requirement, f"{requirement}: no upper bounds on dplr's own dependencies"


def test_the_lock_satisfies_dplrs_ranges():
    packaging_requirements = pytest.importorskip("packaging.requirements")
    pins = _lock()
    checked = 0
    for text in _all_requirements():
        requirement = packaging_requirements.Requirement(text)
        name = _normalise(requirement.name)
        if name == "dplr":  # the book extra includes dplr's own extras
            continue
        assert name in pins, f"{text}: not pinned in {LOCK.name}"
        assert requirement.specifier.contains(pins[name], prereleases=True), \
            f"{LOCK.name} pins {name}=={pins[name]}, outside dplr's range {text!r}"
        checked += 1
    assert checked >= 20


def test_the_lock_pins_threadpoolctl_which_dplr_imports():
    assert "threadpoolctl" in _lock()
    assert any(r.startswith("threadpoolctl") for r in _project()["dependencies"])


def test_environment_yml_equals_the_lock():
    yaml = pytest.importorskip("yaml")
    environment = yaml.safe_load((ROOT / "environment.yml").read_text())
    pip_section = next(d["pip"] for d in environment["dependencies"] if isinstance(d, dict))
    listed = [_pin(r) for r in pip_section if not r.startswith("-e")]
    assert dict(listed) == _lock() and len(listed) == len(_lock()), \
        "environment.yml differs from requirements/book.lock: run `make lock-env`"
    assert "-e ." in pip_section
    python = [d for d in environment["dependencies"] if isinstance(d, str) and d.startswith("python")]
    assert python == ["python=3.11"]

"""Dependency tools: dplr's ranges (pyproject.toml), the book's lock (requirements/book.lock), conda's
environment.yml, and the oldest-versions test.

Usage (from the repository root, with any Python 3.11):

    python .ci/deps.py floors [EXTRA ...]   # print `name==floor` for dplr's dependencies (and those extras')
    python .ci/deps.py environment          # rewrite environment.yml from requirements/book.lock
    python .ci/deps.py test-oldest          # `make test-oldest`: see test_oldest() below
    python .ci/deps.py check-venv PYTHON    # every package PYTHON's environment holds is at the lock's version

Standard library only: it runs before any venv exists.
"""
from __future__ import annotations

import os
import re
import xml.etree.ElementTree as ET
import shutil
import subprocess
import sys
import time
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
LOCK = ROOT / "requirements" / "book.lock"
ENVIRONMENT = ROOT / "environment.yml"
OLDEST_VENV = ROOT / "_build" / "venv-oldest"
# The extras a user may add to plain `pip install dplr`; each is installed at its floors in the second phase.
USER_EXTRAS = ("plot", "dask", "uci", "accounting")
REQUIREMENT = re.compile(r"^\s*([A-Za-z0-9][A-Za-z0-9._-]*)\s*(\[[^\]]*\])?\s*(.*?)\s*$")


def normalise(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def project() -> dict:
    return tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]


def floors(extras=()) -> dict[str, str]:
    """{name: oldest version} for dplr's dependencies and those of ``extras``; every one must state ``>=X``."""
    project_ = project()
    requirements = list(project_["dependencies"])
    for extra in extras:
        requirements += [r for r in project_["optional-dependencies"][extra] if not r.startswith("dplr[")]
    out = {}
    for requirement in requirements:
        name, _, spec = REQUIREMENT.match(requirement).groups()
        lower = re.search(r">=\s*([^,\s;]+)", spec)
        if not lower or "==" in spec:
            raise SystemExit(f"pyproject.toml: {requirement!r} needs a lower bound `>=X` (and no pin) so that "
                             "the oldest-versions test can install X")
        out[normalise(name)] = lower.group(1)
    return out


def lock() -> dict[str, str]:
    """{normalised name: version} of requirements/book.lock (comments and blank lines skipped)."""
    pins = {}
    for line in LOCK.read_text().splitlines():
        line = line.split("#", 1)[0].strip()
        if not line:
            continue
        name, version = re.fullmatch(r"([A-Za-z0-9][A-Za-z0-9._-]*)==(\S+)", line).groups()
        pins[normalise(name)] = version
    return pins


def lock_lines() -> list[str]:
    return [line.strip() for line in LOCK.read_text().splitlines() if line.split("#", 1)[0].strip()]


def write_environment() -> None:
    header = ("# For conda users: `conda env create -f environment.yml && conda activate dplr-book`.\n"
              "# Generated from requirements/book.lock by `make lock-env` (python .ci/deps.py environment);\n"
              "# tests/test_environment_pins.py checks that the two agree. `make test` / `make book` do not need conda.\n")
    body = ["name: dplr-book", "channels:", "  - conda-forge", "dependencies:", "  - python=3.11", "  - pip",
            "  - pip:"]
    body += [f"      - {line}" for line in lock_lines()]
    body += ["      - -e ."]
    ENVIRONMENT.write_text(header + "\n".join(body) + "\n")


# --------------------------------------------------------------------------------------------------
# make test-oldest
# --------------------------------------------------------------------------------------------------
def _run(cmd, **kwargs):
    print("+", " ".join(str(c) for c in cmd), flush=True)
    return subprocess.run([str(c) for c in cmd], check=True, cwd=ROOT, **kwargs)


def _freeze(python) -> dict[str, str]:
    out = subprocess.run([str(python), "-m", "pip", "freeze", "--all", "--exclude-editable"], check=True,
                         capture_output=True, text=True).stdout
    pins = {}
    for line in out.splitlines():
        if "==" in line:
            name, version = line.split("==", 1)
            pins[normalise(name)] = version
    return pins


def _check_unchanged(before, after, what):
    changed = {n: (v, after.get(n)) for n, v in before.items() if after.get(n) != v}
    if changed:
        raise SystemExit(f"installing {what} changed packages that were already installed at supported versions "
                         f"(name: (before, after)): {changed}. The ranges in pyproject.toml must accept them.")
    added = sorted(set(after) - set(before))
    print(f"installing {what} left every installed package as it was; besides dplr it added: "
          f"{', '.join(added) or 'nothing'}")


def test_oldest() -> None:
    """dplr alone at the oldest versions it states, in a fresh venv; then its user extras at theirs.

    1. A fresh venv (_build/venv-oldest) gets exactly the floors of pyproject.toml's dependencies
       (``numpy>=2.0.0`` -> numpy==2.0.0) and the test tools pytest, pyyaml, packaging (the lock's versions;
       not dplr's dependencies).
    2. ``pip install -e .`` -- the ordinary resolver, no ``--no-deps`` -- must leave every one of them as it
       is: dplr's ranges accept its own floors.
    3. The unit tests run there (tests needing an optional package skip: pytest.importorskip).
    4. The extras plot, dask, uci and accounting are installed at their floors, with the core held at its floors
       (a constraints file): nothing installed before may change. The tests that skipped in 3 for want of
       an optional package run now, required not to skip (DPLR_REQUIRE_EXTRAS=1, see tests/conftest.py).
    """
    started = time.monotonic()
    if sys.version_info[:2] != (3, 11):
        raise SystemExit(f"run with Python 3.11 (got {sys.version.split()[0]}): the lock and the floors are for 3.11")
    shutil.rmtree(OLDEST_VENV, ignore_errors=True)
    _run([sys.executable, "-m", "venv", OLDEST_VENV])
    python = OLDEST_VENV / "bin" / "python"
    pip = [python, "-m", "pip", "install", "--quiet", "--disable-pip-version-check"]
    _run(pip + ["--upgrade", "pip"])

    core = floors()
    # The test runner and what the tests themselves read (YAML, version specifiers): not dplr's dependencies.
    test_tools = [f"{name}=={lock()[name]}" for name in ("pytest", "pyyaml", "packaging")]
    constraints = OLDEST_VENV / "oldest-constraints.txt"
    constraints.write_text("".join(f"{n}=={v}\n" for n, v in core.items()))
    print("dplr's floors:", ", ".join(f"{n}=={v}" for n, v in core.items()), flush=True)
    _run(pip + [f"{n}=={v}" for n, v in core.items()] + test_tools)
    before = _freeze(python)
    _run(pip + ["-e", "."])
    after = _freeze(python)
    _check_unchanged(before, after, "dplr")
    installed = {n: after[n] for n in core}
    assert installed == core, f"the venv does not hold the floors: {installed} != {core}"

    env = {k: v for k, v in os.environ.items() if k != "DPLR_REQUIRE_EXTRAS"}
    report = OLDEST_VENV / "unit-tests.xml"
    tests = [python, "-m", "pytest", "tests", "--ignore=tests/browser", "--ignore=tests/pdf", "-p", "no:cacheprovider",
             "-q", f"--junitxml={report}"]
    _run(tests, env=env)
    needs_extra = []
    for case in ET.parse(report).getroot().iter("testcase"):
        skipped = case.find("skipped")
        if skipped is not None and "could not import" in (skipped.get("message") or ""):
            parts = case.get("classname").split(".")  # tests.test_x[.TestClass]
            cut = next(i for i in range(len(parts), 0, -1) if (ROOT / ("/".join(parts[:i]) + ".py")).is_file())
            needs_extra.append("::".join(["/".join(parts[:cut]) + ".py", *parts[cut:], case.get("name")]))
    if not needs_extra:
        raise SystemExit("no unit test skipped for want of an optional package: is an extra installed with the floors?")
    print(f"unit tests passed at the floors ({time.monotonic() - started:.0f} s so far)", flush=True)

    extra = floors(USER_EXTRAS)
    extra_only = {n: v for n, v in extra.items() if n not in core}
    print("the extras' floors:", ", ".join(f"{n}=={v}" for n, v in extra_only.items()), flush=True)
    before = _freeze(python)
    _run(pip + ["-c", constraints] + [f"{n}=={v}" for n, v in extra_only.items()])
    _run(pip + ["-c", constraints, "-e", f".[{','.join(USER_EXTRAS)}]"])
    after = _freeze(python)
    _check_unchanged(before, after, f"dplr[{','.join(USER_EXTRAS)}]")
    print(f"the {len(needs_extra)} tests that skipped for want of an extra:", " ".join(needs_extra), flush=True)
    _run([python, "-m", "pytest", *needs_extra, "-p", "no:cacheprovider", "-q"], env={**env, "DPLR_REQUIRE_EXTRAS": "1"})
    print(f"test-oldest passed in {time.monotonic() - started:.0f} s", flush=True)


def check_venv(python) -> None:
    """After `pip install -c requirements/book.lock -e ".[book]"`: nothing installed floats outside the lock.

    A constraints file only pins what it lists; a new dependency of a locked package would otherwise be
    installed at whatever version is newest. pip, setuptools and wheel (the installer's own) are not locked.
    """
    pins, installed = lock(), _freeze(python)
    unlocked = {n: v for n, v in installed.items() if n not in pins and n not in ("pip", "setuptools", "wheel")}
    differ = {n: (v, pins[n]) for n, v in installed.items() if n in pins and pins[n] != v}
    if unlocked or differ:
        raise SystemExit(f"{python}'s environment is not the lock's: not in {LOCK.relative_to(ROOT)}: {unlocked}; "
                         f"other versions (installed, locked): {differ}. Add them to the lock (then `make lock-env`) "
                         "or remove the .venv (`make clean`).")
    print(f"{len(installed)} installed packages, all at the versions of {LOCK.relative_to(ROOT)}")


def main(argv):
    if not argv:
        raise SystemExit(__doc__)
    command, *args = argv
    if command == "floors":
        print("\n".join(f"{n}=={v}" for n, v in floors(args).items()))
    elif command == "environment":
        write_environment()
        print(f"wrote {ENVIRONMENT.relative_to(ROOT)} from {LOCK.relative_to(ROOT)}")
    elif command == "test-oldest":
        test_oldest()
    elif command == "check-venv" and len(args) == 1:
        check_venv(args[0])
    else:
        raise SystemExit(__doc__)


if __name__ == "__main__":
    main(sys.argv[1:])

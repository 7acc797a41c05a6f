"""environment.yml (for conda users) must list exactly the pins of pyproject.toml."""
import re
import tomllib
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[1]


def _normalise(requirement):
    name, version = re.fullmatch(r"\s*([A-Za-z0-9_.\-]+)\s*==\s*([^\s;]+)\s*", requirement).groups()
    return re.sub(r"[-_.]+", "-", name).lower(), version


def test_environment_yml_pins_equal_pyproject_pins():
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    pinned = project["dependencies"] + [r for group in project["optional-dependencies"].values() for r in group]
    expected = dict(_normalise(r) for r in pinned)
    environment = yaml.safe_load((ROOT / "environment.yml").read_text())
    pip_section = next(d["pip"] for d in environment["dependencies"] if isinstance(d, dict))
    listed = dict(_normalise(r) for r in pip_section if not r.startswith("-e"))
    assert listed == expected
    python = [d for d in environment["dependencies"] if isinstance(d, str) and d.startswith("python")]
    assert python == ["python=3.11"]


def test_every_pyproject_dependency_is_pinned_exactly():
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    for requirement in project["dependencies"] + project["optional-dependencies"]["book"]:
        assert "==" in requirement, f"{requirement} is not pinned exactly"

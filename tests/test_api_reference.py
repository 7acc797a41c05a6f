"""The book's API reference (book/api, Sphinx autodoc) covers the core, analysis and datasets, checked on the sources.

Every module of those layers that has an ``__all__`` has an ``automodule`` with ``:members:`` and
``:undoc-members:`` on one of the pages, so each public name is documented (autodoc follows ``__all__``);
a public module constant needs a ``#:`` doc comment, since autodoc documents no module constant without
one; and the pages are in the table of contents. Whether each cross-reference resolves is checked by the
build itself (``make book``: nitpicky, warnings as errors).
"""
import ast
import re
from pathlib import Path

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[1]
PAGES = ("core", "analysis", "datasets")


def _modules():
    """Dotted names of the modules of the core, analysis and datasets that declare ``__all__``."""
    names = []
    for path in sorted((ROOT / "dplr").rglob("*.py")):
        parts = path.relative_to(ROOT).with_suffix("").parts
        if "replication" in parts or parts[-1] == "__main__":
            continue
        if "__all__" in path.read_text(encoding="utf-8"):
            names.append(".".join(parts[:-1] if parts[-1] == "__init__" else parts))
    return names


def _documented():
    """module -> the options of its automodule directive, over the API pages."""
    found = {}
    for page in PAGES:
        text = (ROOT / "book" / "api" / f"{page}.md").read_text(encoding="utf-8")
        for match in re.finditer(r"^\.\. automodule:: (\S+)\n((?:   :.*\n)*)", text, re.M):
            found[match.group(1)] = match.group(2)
    return found


@pytest.mark.parametrize("module", _modules())
def test_every_public_module_has_its_members_in_the_reference(module):
    options = _documented().get(module)
    assert options is not None, f"{module} is not on a page of book/api"
    if module != "dplr" and module not in ("dplr.analysis", "dplr.datasets"):
        assert ":members:" in options and ":undoc-members:" in options, module


@pytest.mark.parametrize("module", [m for m in _modules() if m not in ("dplr", "dplr.datasets", "dplr.solver")])
def test_every_public_constant_has_a_doc_comment(module):
    path = ROOT / Path(*module.split("."))
    path = path / "__init__.py" if path.is_dir() else path.with_suffix(".py")
    source = path.read_text(encoding="utf-8")
    tree = ast.parse(source)
    public = next(ast.literal_eval(node.value) for node in tree.body if isinstance(node, ast.Assign)
                  and any(isinstance(t, ast.Name) and t.id == "__all__" for t in node.targets))
    lines = source.splitlines()
    for node in tree.body:
        if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
            name = node.targets[0].id
            if name in public:
                assert lines[node.lineno - 2].lstrip().startswith("#:"), f"{module}.{name} has no #: doc comment"


def test_the_api_pages_are_in_the_table_of_contents():
    toc = yaml.safe_load((ROOT / "_toc.yml").read_text(encoding="utf-8"))
    part = next(p for p in toc["parts"] if p["caption"] == "API reference")
    assert [c["file"] for c in part["chapters"]] == [f"book/api/{page}" for page in PAGES]


def _docstrings(tree):
    """(line, text) of every docstring in a parsed module: the module's, its classes' and its functions'."""
    nodes = [tree] + [n for n in ast.walk(tree) if isinstance(n, (ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef))]
    for node in nodes:
        body = getattr(node, "body", [])
        if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant) \
                and isinstance(body[0].value.value, str):
            yield body[0].lineno, body[0].value.value


def test_no_docstring_holds_a_control_character():
    # ":math:`1/\beta`" in a docstring that is not raw is a backspace and "eta" (and "\times" a tab and "imes"):
    # the page shows garbage and the PDF build stops on the invalid character. Write such docstrings r"""...""".
    bad = []
    for path in sorted((ROOT / "dplr").rglob("*.py")):
        for line, text in _docstrings(ast.parse(path.read_text(encoding="utf-8"))):
            if re.search(r"[\x00-\x08\x0b-\x1f]|\t", text):
                bad.append(f"{path.relative_to(ROOT)}:{line}")
    assert not bad, "docstrings with a control character (make them raw strings): " + ", ".join(bad)

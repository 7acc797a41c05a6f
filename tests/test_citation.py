"""CITATION.cff (Citation File Format 1.2) describes this software and agrees with pyproject.toml and
references.bib; the README and the landing page tell readers how to cite.

(`cffconvert --validate -i CITATION.cff` checks it against the CFF 1.2 JSON schema; it is not a dependency.)
"""
import re
import tomllib
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def cff():
    yaml = pytest.importorskip("yaml")
    return yaml.safe_load((ROOT / "CITATION.cff").read_text())


def _plain(title):
    return re.sub(r"[{}]", "", title).strip().lower()


def test_citation_cff_describes_this_software(cff):
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    assert cff["cff-version"] == "1.2.0" and cff["type"] == "software"
    assert cff["message"] and cff["title"] and cff["authors"]
    assert str(cff["version"]) == project["version"]
    assert cff["license"] == project["license"]["text"]


def test_citation_cff_references_are_the_books_sources(cff):
    bib = (ROOT / "references.bib").read_text()
    entries = dict(re.findall(r"@\w+\{([^,\s]+),.*?^\s*title\s*=\s*\{(.+?)\},?\s*$", bib, re.M | re.S))
    dois = dict(re.findall(r"@\w+\{([^,\s]+),[^@]*?^\s*doi\s*=\s*\{(.+?)\}", bib, re.M | re.S))
    by_title = {_plain(t): key for key, t in entries.items()}
    keys = []
    for reference in cff["references"]:
        key = by_title.get(_plain(reference["title"]))
        assert key, f"CITATION.cff reference {reference['title']!r} is not in references.bib"
        if "doi" in reference:
            assert reference["doi"] == dois.get(key), f"{key}: DOI differs from references.bib"
        keys.append(key)
    # the paper, its correction and the thesis the book replicates
    assert {"chaudhuri2008privacy", "chaudhuri2011erm", "veldhuizen2020thesis"} <= set(keys)


def test_readme_and_landing_page_say_how_to_cite():
    for page in ("README.md", "book/intro.md"):
        text = (ROOT / page).read_text()
        assert re.search(r"^#+ How to cite", text, re.M), f"{page}: no 'How to cite' section"
        assert "CITATION.cff" in text, f"{page}: the 'How to cite' section should point at CITATION.cff"

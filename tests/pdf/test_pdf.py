"""The book as one PDF (`make pdf`), read back with poppler's pdftotext and pdfimages.

Run by `make pdf` after the build (CI too). It checks what a reader of the PDF needs: every chapter, the math
typeset (XeLaTeX with unicode-math writes math as Unicode mathematical letters, which NFKC maps back to
plain ones), every theorem block of the sources with its number and title, the figures, the results table of
Figure 1 with its verdicts, the bibliography with the sources' entries, no unresolved reference ("??"), and that
the copy served with the site is this PDF.
"""
from __future__ import annotations

import functools
import json
import re
import shutil
import subprocess
import unicodedata
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
LATEX = ROOT / "_build" / "latex"
PDF = LATEX / "dplr-book.pdf"
SITE_COPY = ROOT / "_build" / "html" / "dplr-book.pdf"


def _flat(text: str) -> str:
    """NFKC (math italic 𝑛 -> n), words rejoined across line-end hyphens, whitespace collapsed."""
    text = unicodedata.normalize("NFKC", text).replace("\u2019", "'").replace("\u2018", "'")
    text = re.sub(r"(\w)-\n\s*(\w)", r"\1\2", text)
    return re.sub(r"\s+", " ", text)


@functools.lru_cache(maxsize=None)
def pdf_text() -> str:
    if not PDF.is_file():
        pytest.fail(f"{PDF} not found: run `make pdf`")
    if shutil.which("pdftotext") is None:
        pytest.fail("pdftotext not found: apt-get install poppler-utils (.ci/debian-packages tex does)")
    return subprocess.run(["pdftotext", str(PDF), "-"], check=True, capture_output=True, text=True).stdout


def _sources():
    # book/api: the API reference's pages (Markdown)
    return sorted((ROOT / "book").glob("*.ipynb")) + sorted((ROOT / "book").glob("*.md")) + \
        sorted((ROOT / "book" / "api").glob("*.md"))


def _source_text(path: Path) -> str:
    if path.suffix == ".ipynb":
        cells = json.loads(path.read_text())["cells"]
        return "\n".join("".join(c["source"]) for c in cells if c["cell_type"] == "markdown")
    return path.read_text()


def test_is_a_pdf_of_the_whole_book():
    assert PDF.read_bytes()[:5] == b"%PDF-"
    info = subprocess.run(["pdfinfo", str(PDF)], check=True, capture_output=True, text=True).stdout
    pages = int(re.search(r"^Pages:\s+(\d+)", info, re.M).group(1))
    assert pages >= 50, f"only {pages} pages"
    text = _flat(pdf_text())
    toc = (ROOT / "_toc.yml").read_text()
    for chapter in re.findall(r"file:\s*(book/\S+)", toc):
        source = next(p for p in _sources() if p.with_suffix("").as_posix().endswith(chapter))
        title = re.search(r"^# (.+)$", _source_text(source), re.M).group(1)
        title = _flat(re.sub(r"[*`]|\$[^$]*\$", "", title)).strip()
        words = [w for w in re.findall(r"[A-Za-z]{4,}", title)][:4]
        assert words and all(w in text for w in words), f"chapter {chapter} ({title!r}) not found in the PDF"


def test_math_is_typeset():
    # book/intro.md: "... how far one record can move the classifier ($2/(n\lambda)$)"
    assert "move the classifier (2/(nλ))" in _flat(pdf_text())


def test_every_theorem_block_is_there_with_its_title():
    text = _flat(pdf_text())
    titles = []
    for source in _sources():
        titles += re.findall(r"```\{prf:theorem\}[ \t]*([^\n`]+)", _source_text(source))
    assert len(titles) >= 5, "the sources hold fewer theorems than expected: is the pattern out of date?"
    # numbered blocks read "Theorem 3 (title)", those marked :nonumber: "Theorem (title)"
    missing = [t for t in titles
               if not re.search(r"Theorem (\d+(\.\d+)* )?\(" + re.escape(_flat(t).strip()) + r"\)", text)]
    assert not missing, f"theorem blocks missing from the PDF (as 'Theorem N (title)'): {missing}"


def test_figures_are_embedded():
    copied = sorted(p.name for p in LATEX.glob("*.png"))
    listing = subprocess.run(["pdfimages", "-list", str(PDF)], check=True, capture_output=True, text=True).stdout
    images = [line for line in listing.splitlines()[2:] if line.strip()]
    assert len(copied) >= 10, f"only {len(copied)} figures in the LaTeX build"
    assert len(images) >= len(copied), f"{len(copied)} figures in the LaTeX build but {len(images)} images in the PDF"
    assert len(re.findall(r"Fig\. \d+\.\d+:", pdf_text())) >= 10, "figure captions missing"


def test_figure1_verdict_table_is_there():
    """The replication's results table (Figure 1 of the paper): its section, its rows and their verdicts."""
    text = _flat(pdf_text())
    start = text.find("Figure 1: the table", text.find("Figure 1: the table") + 1)  # the section, not the contents
    assert start > 0, "section 'Figure 1: the table' not found (beyond the table of contents)"
    section = text[start:start + 12_000]
    end = re.search(r"\d+\.\d+ Figure 2", section)
    section = section[:end.start()] if end else section
    for method in ("Standard LR", "Sensitivity method", "New method"):
        assert section.count(method) >= 2, f"row {method!r} of the Figure 1 table missing"
    assert re.search(r"\breproduced\b", section) and "NOT reproduced" in section, \
        "the verdicts ('reproduced' / 'NOT reproduced') of the Figure 1 table are not in the PDF"


def test_bibliography_lists_the_sources():
    text = _flat(pdf_text())
    start = text.rfind("BIBLIOGRAPHY")
    assert start > 0, "no bibliography"
    bibliography = text[start:].lower()
    bib = (ROOT / "references.bib").read_text()
    entries = dict(re.findall(r"@\w+\{([^,\s]+),.*?^\s*title\s*=\s*\{(.+?)\},?\s*$", bib, re.M | re.S))
    cited = set()
    for source in _sources():
        for keys in re.findall(r"\{cite(?::\w+)?\}`([^`]+)`", _source_text(source)):
            cited.update(k.strip() for k in keys.split(","))
    assert len(cited) >= 10 and cited <= set(entries), f"cited keys not in references.bib: {cited - set(entries)}"
    missing = []
    for key in sorted(cited):
        plain = re.sub(r"[{}]", "", entries[key]).lower()
        if _flat(plain)[:40] not in bibliography:
            missing.append(entries[key])
    assert not missing, f"entries of references.bib missing from the PDF's bibliography: {missing}"


def test_no_unresolved_references():
    assert "??" not in pdf_text(), "LaTeX printed '??' for an unresolved reference"


def test_the_site_serves_this_pdf():
    if not (ROOT / "_build" / "html").is_dir():
        pytest.skip("no site built (make book)")
    assert SITE_COPY.is_file(), "the site lacks dplr-book.pdf: `make pdf` copies it into _build/html"
    assert SITE_COPY.read_bytes() == PDF.read_bytes(), "the site's dplr-book.pdf is not the latest build (make pdf)"


def test_results_tables_are_typeset_as_tables_within_the_page():
    """Every table a chapter displays (dplr.replication.tables: a MyST table in text/markdown, which the LaTeX builder
    prefers to text) is a LaTeX longtable with the column spec dplr gives it, not fixed-width text in a code block, and
    no line in any longtable is wider than its place (LaTeX's log: an overfull line in an alignment -- a row wider than
    the page -- or in a paragraph within one -- a word wider than its column)."""
    stored = 0
    for chapter in sorted((ROOT / "book").glob("*.ipynb")):
        for cell in json.loads(chapter.read_text())["cells"]:
            for output in cell.get("outputs", []):
                stored += "\n:::{table}" in "".join(output.get("data", {}).get("text/markdown", ""))
    assert stored >= 40, f"only {stored} tables stored as Markdown: were the chapters executed with this dplr?"
    tex = (LATEX / "dplr-book.tex").read_text().splitlines()
    # dplr's specs: l and r only (natural widths), or ragged \X columns; Sphinx's own tables have rules or [c]
    ours = [line for line in tex if re.match(r"\\begin\{longtable\}\{([lr]+|>\{\\ragged)", line)]
    assert len(ours) >= stored, f"{len(ours)} longtables with dplr's column spec in the PDF, {stored} in the chapters"
    # a table printed as text shows its fixed-width header rule in the PDF (pdftotext joins runs of spaces into one)
    assert not re.search(r"-{3,} -{3,}", pdf_text()), "a table printed as fixed-width text in the PDF"
    inside = set()
    begin = None
    for number, line in enumerate(tex, start=1):
        if line.startswith("\\begin{longtable}"):
            begin = number
        elif line.startswith("\\end{longtable}") and begin is not None:
            inside.update(range(begin, number + 1))
            begin = None
    log = (LATEX / "dplr-book.log").read_text(errors="replace")
    # line numbers are of the file TeX is reading: dplr-book.tex's run from after its table of contents to the index
    start, end = log.find("(./dplr-book.toc"), log.find("(./dplr-book.ind")
    assert start >= 0, "dplr-book.log does not show where dplr-book.tex's body starts"
    body = log[start:end if end > start else len(log)]
    wide = [(float(points), int(line)) for points, line in
            re.findall(r"Overfull \\hbox \(([\d.]+)pt too wide\) (?:in paragraph|in alignment) at lines (\d+)", body)]
    too_wide = sorted((points, line) for points, line in wide if line in inside and points > 1.0)
    assert not too_wide, f"lines wider than their table column or the page (pt, line of dplr-book.tex): {too_wide[-5:]}"


def _collapsed_openings(text: str) -> list[str]:
    """The first plain line of prose of every block the site collapses (a dropdown, a proof or admonition of class
    dropdown, a solution): its first six words, in order."""
    openings = []
    lines = text.splitlines()
    for i, line in enumerate(lines):
        if not re.match(r"^\s*(`{3,}|:{3,})\s*\{(dropdown|solution|solution-start|prf:proof|admonition)\}", line):
            continue
        j, options = i + 1, []
        while j < len(lines) and re.match(r"^\s*:[\w-]+:", lines[j]):
            options.append(lines[j])
            j += 1
        if "{dropdown}" not in line and not any("dropdown" in o for o in options):
            continue
        for body in lines[j:j + 12]:
            if re.match(r"^\s*(`{3,}|:{3,})", body):
                break
            if re.search(r"[$`{}\\|<>*_\[]", body) or not body.strip():
                continue
            words = re.findall(r"[A-Za-z]+", body)
            if len(words) >= 6:
                openings.append(" ".join(words[:6]))
                break
    return openings


def test_collapsed_blocks_are_printed():
    """What the site hides in dropdowns (proofs, floating-point bookkeeping, protocol detail, exercises' solutions)
    is printed in the PDF: the opening words of every collapsed block's first plain line are there, in order."""
    text = _flat(pdf_text())
    openings = [(source.name, o) for source in _sources() for o in _collapsed_openings(_source_text(source))]
    assert len(openings) >= 20, f"only {len(openings)} collapsed blocks found in the sources"
    # consecutive words, or words a page break separates (its running head and page number: a dozen words at most)
    gap = r"[^A-Za-z]+(?:\S+\s+){0,12}?"
    missing = [(name, o) for name, o in openings if not re.search(gap.join(map(re.escape, o.split())), text)]
    assert not missing, f"{len(missing)} collapsed block(s) not in the PDF, e.g. {missing[:5]}"

"""The reading conventions of every chapter (.ci/reading_path.py, `make words`): an "In brief" of at most 150 words
and short learning objectives, at most 3,000 words on the main path, hidden imports, exercises with collapsed
solutions (at least one of which runs code), and a closing summary."""
import importlib.util
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
spec = importlib.util.spec_from_file_location("reading_path", ROOT / ".ci" / "reading_path.py")
reading_path = importlib.util.module_from_spec(spec)
spec.loader.exec_module(reading_path)


@pytest.mark.parametrize("name", reading_path.chapters())
def test_chapter_follows_the_reading_conventions(name):
    failures = reading_path.measure(name).failures()
    assert not failures, f"{name}: " + "; ".join(failures)


def test_main_path_excludes_collapsed_blocks():
    cells = [("markdown", "# T\n\nfour words of prose\n\n```{prf:proof}\n:class: dropdown\nhidden words here\n```\n"
                          ":::{dropdown} Title\nmore hidden\n:::\n```{solution-start} ex-a\n:class: dropdown\n```\n"
                          "gated hidden"),
             ("code", "x = 1"),
             ("markdown", "still hidden\n```{solution-end}\n```\nvisible again $x^2$ here")]
    main, hidden = reading_path.split_main_path(cells)
    assert reading_path.prose_words(main) == len("# T four words of prose visible again M here".split())
    assert "hidden words" in hidden and "more hidden" in hidden and "gated hidden" in hidden
    assert "still hidden" in hidden


def test_a_long_chapter_fails(tmp_path, monkeypatch):
    chapter = reading_path.Chapter(name="book/theory_x", main_words=3001, all_words=3001, brief_words=151,
                                   objectives_words=10, exercises=["ex-a"], solutions={"ex-a": False},
                                   last_section="Exercises")
    monkeypatch.setattr(reading_path, "chapter_path", lambda name: tmp_path / "x.md")
    failures = " | ".join(chapter.failures())
    for part in ("3001 words on the main path", "151 words", "1 exercise(s) (at least 3)", "not collapsed",
                 "not 'Summary'"):
        assert part in failures


def test_a_dropdown_that_never_closes_is_found():
    # five colons opened, four closed: everything after it in the cell would be swallowed into the dropdown
    assert reading_path.unclosed_fences(":::::{dropdown} A\ntext\n::::\nmore") == [":::::{dropdown} A"]
    assert reading_path.unclosed_fences("````{dropdown} B\n```{math}\nx\n```\n````\n```{prf:proof}\n:class: dropdown\n"
                                        "p\n```") == []
    assert reading_path.unclosed_fences("```{solution-start} ex-a\n:class: dropdown\n```\ngated text") == []


def test_no_output_is_hidden_from_the_pdf():
    """hide-output and hide-cell collapse a cell's outputs on the site, and the LaTeX builder leaves them out of the
    PDF altogether (two results tables were missing from it): audit trails hide their input, never their output."""
    import json

    hidden = [f"{path.name} cell {i}" for path in sorted((ROOT / "book").glob("*.ipynb"))
              for i, cell in enumerate(json.loads(path.read_text())["cells"])
              if {"hide-output", "hide-cell"} & set(cell.get("metadata", {}).get("tags", []))]
    assert not hidden, f"outputs hidden from the PDF (tag hide-input instead): {hidden}"

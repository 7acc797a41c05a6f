"""The reading conventions of the chapters, measured (`make words`).

Every chapter opens with an "In brief" admonition (at most 150 words) and short learning objectives, keeps at most
3,000 words of prose on its main path, hides its imports, ends with a "Summary" section, and has exercises whose
solutions are collapsed (at least three in a theory chapter, two elsewhere). This script measures each of those for
every chapter of the table of contents; `tests/test_reading_path.py` holds the book to them.

The *main path* is what a reader sees without opening anything: the prose of the Markdown cells outside collapsible
blocks -- a ``{dropdown}``, any directive with ``:class: dropdown`` (proofs, admonitions, solutions), a ``{toggle}``,
a ``{margin}``, and everything between ``{solution-start}`` and ``{solution-end}``. Fenced code and directive options
are not prose; display math counts as nothing and inline math as one word, a glued value as one word, like the words
around them. Exercises' statements are on the main path (a reader sees them).

Usage: python .ci/reading_path.py [book/chapter.ipynb ...]   -- one line per chapter, then the failures.
"""
import json
import re
import sys
from dataclasses import dataclass, field
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parent.parent
MAIN_PATH_WORDS = 3000
BRIEF_WORDS = 150
OBJECTIVES_WORDS = 90
# Pages that are not chapters to learn from: the navigation pages, the API reference and the back matter's lists.
NOT_CHAPTERS = {"book/intro", "book/tour", "book/notation", "book/bibliography", "book/exec_stats",
                "book/api/core", "book/api/analysis", "book/api/datasets"}

FENCE = re.compile(r"^(`{3,}|:{3,})\s*(\{[^}]*\})?\s*(.*)$")
HIDDEN_DIRECTIVES = ("{dropdown}", "{toggle}", "{margin}", "{solution}", "{solution-start}")
IMPORT = re.compile(r"^\s*(import\s+\w|from\s+[\w.]+\s+import\s)", re.M)


def chapters():
    """The chapters of _toc.yml in reading order (paths without suffix), less the pages that are not chapters."""
    toc = yaml.safe_load((ROOT / "_toc.yml").read_text())
    files = [chapter["file"] for part in toc["parts"] for chapter in part["chapters"]]
    return [f for f in files if f not in NOT_CHAPTERS]


def chapter_path(name):
    for suffix in (".ipynb", ".md"):
        if (ROOT / (name + suffix)).exists():
            return ROOT / (name + suffix)
    raise FileNotFoundError(name)


def is_theory(name):
    """Theory chapters (three exercises or more): the foundations and the Theory part."""
    stem = Path(name).name
    return stem.startswith("theory_") or stem == "differential_privacy"


def prose_words(text):
    """Words of prose in Markdown ``text``: display math dropped, inline math and glued values one word each."""
    text = re.sub(r"\$\$.*?\$\$", " ", text, flags=re.S)
    text = re.sub(r"\$[^$\n]*\$", " M ", text)
    text = re.sub(r"\{glue:text\}`[^`]*`|\{glue\}`[^`]*`", " N ", text)
    text = re.sub(r"<!--.*?-->", " ", text, flags=re.S)
    return len(text.split())


def split_main_path(cells):
    """(main-path text, collapsed text) of a chapter's cells [(type, source)], in order.

    A ``{solution-start}`` opens a region that lasts, across cells, to its ``{solution-end}``; a fenced directive
    is collapsed when its name is one of ``HIDDEN_DIRECTIVES`` or its options carry the class ``dropdown``."""
    main, hidden = [], []
    in_solution = False
    for kind, source in cells:
        if kind != "markdown":
            continue
        lines = source.splitlines()
        stack = []  # (fence, hidden) of the open directives
        i = 0
        while i < len(lines):
            line = lines[i].strip()
            if "{solution-start}" in line:
                in_solution = True
            m = FENCE.match(line)
            if m and m.group(2):  # a directive opens: its options follow
                j = i + 1
                options = []
                while j < len(lines) and re.match(r"^\s*:[\w-]+:", lines[j]):
                    options.append(lines[j])
                    j += 1
                collapsed = (m.group(2) in HIDDEN_DIRECTIVES
                             or any(re.match(r"^\s*:class:.*\bdropdown\b", o) for o in options))
                if m.group(2) in ("{solution-start}", "{solution-end}", "{exercise-start}", "{exercise-end}"):
                    # gated directives close on the next bare fence of this cell
                    if m.group(2) == "{solution-end}":
                        in_solution = False
                stack.append((m.group(1), collapsed, m.group(2)))
                if m.group(2) in ("{code-block}", "{code-cell}", "{code}"):
                    stack[-1] = (m.group(1), True, m.group(2))  # code is not prose
                i = j
                if m.group(3) and not in_solution and not any(h for _, h, _ in stack):
                    main.append(m.group(3))  # a title is read, unless it sits in (or is) a collapsed block
                continue
            if m and not m.group(2) and not m.group(3) and stack and m.group(1) == stack[-1][0]:
                stack.pop()
                i += 1
                continue
            if m and not m.group(2) and not stack:  # a plain code fence (``` python ...): not prose
                fence = m.group(1)
                i += 1
                while i < len(lines) and lines[i].strip() != fence:
                    i += 1
                i += 1
                continue
            (hidden if in_solution or any(h for _, h, _ in stack) else main).append(lines[i])
            i += 1
    return "\n".join(main), "\n".join(hidden)


@dataclass
class Chapter:
    name: str
    main_words: int
    all_words: int
    brief_words: int | None
    objectives_words: int | None
    exercises: list = field(default_factory=list)
    solutions: dict = field(default_factory=dict)  # label -> collapsed?
    code_solutions: int = 0
    last_section: str | None = None
    visible_imports: list = field(default_factory=list)
    unclosed: list = field(default_factory=list)
    first_code_hidden: bool | None = None

    def failures(self):
        need = 3 if is_theory(self.name) else 2
        out = []
        if self.brief_words is None:
            out.append("no 'In brief' admonition in the first cell")
        elif self.brief_words > BRIEF_WORDS:
            out.append(f"'In brief' has {self.brief_words} words (at most {BRIEF_WORDS})")
        if self.objectives_words is None:
            out.append("no 'Learning objectives' admonition in the first cell")
        elif self.objectives_words > OBJECTIVES_WORDS:
            out.append(f"learning objectives have {self.objectives_words} words (at most {OBJECTIVES_WORDS})")
        if self.main_words > MAIN_PATH_WORDS:
            out.append(f"{self.main_words} words on the main path (at most {MAIN_PATH_WORDS})")
        if len(self.exercises) < need:
            out.append(f"{len(self.exercises)} exercise(s) (at least {need})")
        for label in self.exercises:
            if label not in self.solutions:
                out.append(f"exercise {label} has no solution")
            elif not self.solutions[label]:
                out.append(f"the solution of {label} is not collapsed (:class: dropdown)")
        if chapter_path(self.name).suffix == ".ipynb":
            if self.code_solutions < 1:
                out.append("no solution runs code (a {solution-start} ... {solution-end} with a code cell)")
            if self.first_code_hidden is False:
                out.append("the first code cell (imports, set-up) is not hidden (tag hide-input or remove-input)")
            if self.visible_imports:
                out.append(f"imports in visible code cells {self.visible_imports} (they belong in the hidden "
                           "first cell)")
        for fence in self.unclosed:
            out.append(f"a fence never closed in its cell: {fence[:60]!r}")
        if self.last_section != "Summary":
            out.append(f"the last section is {self.last_section!r}, not 'Summary'")
        return out


def unclosed_fences(source):
    """The directives and code fences of one Markdown cell left open at its end (MyST closes a fence with the same
    character, at least as many times, alone on its line): a dropdown that never closes swallows what follows."""
    stack = []
    for line in source.splitlines():
        stripped = line.strip()
        m = re.match(r"^(`{3,}|:{3,})(.*)$", stripped)
        if not m:
            continue
        fence, rest = m.group(1), m.group(2).strip()
        if stack and not rest and fence[0] == stack[-1][0][0] and len(fence) >= len(stack[-1][0]):
            stack.pop()
        elif rest or not stack:
            if stack and stack[-1][0][0] == "`" and not stack[-1][1].startswith("{"):
                continue  # inside a plain code block: not a fence
            stack.append((fence, rest))
    return [f"{fence}{rest}" for fence, rest in stack]


def admonition_words(first_cell, title):
    m = re.search(r"^(`{3,}|:{3,})\{admonition\}\s*" + title + r"\s*\n(.*?)^\1\s*$", first_cell, re.S | re.M)
    if not m:
        return None
    body = re.sub(r"^\s*:[\w-]+:.*$", "", m.group(2), flags=re.M)
    return prose_words(body)


def read_cells(path):
    if path.suffix == ".ipynb":
        nb = json.loads(path.read_text())
        return [(c["cell_type"], "".join(c["source"]), c.get("metadata", {})) for c in nb["cells"]]
    return [("markdown", path.read_text(), {})]


def measure(name):
    path = chapter_path(name)
    cells = read_cells(path)
    main, hidden = split_main_path([(k, s) for k, s, _ in cells])
    markdown = "\n".join(s for k, s, _ in cells if k == "markdown")
    first = next(s for k, s, _ in cells if k == "markdown")
    chapter = Chapter(name=name, main_words=prose_words(main), all_words=prose_words(markdown),
                      brief_words=admonition_words(first, "In brief"),
                      objectives_words=admonition_words(first, "Learning objectives"))
    for m in re.finditer(r"\{exercise(?:-start)?\}[^\n]*\n(?:\s*:[\w-]+:[^\n]*\n)*", markdown):
        label = re.search(r":label:\s*(\S+)", m.group(0))
        chapter.exercises.append(label.group(1) if label else f"(unlabelled {len(chapter.exercises) + 1})")
    for m in re.finditer(r"\{solution(?:-start)?\}\s*(\S+)[^\n]*\n((?:\s*:[\w-]+:[^\n]*\n)*)", markdown):
        chapter.solutions[m.group(1)] = bool(re.search(r":class:.*\bdropdown\b", m.group(2)))
    chapter.unclosed = [fence for kind, source, _ in cells if kind == "markdown" for fence in unclosed_fences(source)]
    headings = re.findall(r"^##\s+(.+?)\s*$", main, re.M)
    chapter.last_section = headings[-1] if headings else None
    in_solution = False
    code_index = 0
    for kind, source, metadata in cells:
        if kind == "markdown":
            for line in source.splitlines():
                if "{solution-start}" in line:
                    in_solution = True
                if "{solution-end}" in line:
                    in_solution = False
            continue
        if not source.strip():
            continue
        tags = set(metadata.get("tags", []))
        hidden_input = bool(tags & {"hide-input", "remove-input", "remove-cell", "hide-cell"})
        if code_index == 0:
            chapter.first_code_hidden = hidden_input
        elif not hidden_input and not in_solution and IMPORT.search(source):
            chapter.visible_imports.append(code_index)
        if in_solution:
            chapter.code_solutions += 1
        code_index += 1
    return chapter


def main(argv):
    names = [str(Path(a).with_suffix("")) for a in argv] or chapters()
    failed = 0
    print(f"{'chapter':40s} {'main':>6s} {'all':>6s} {'brief':>6s} {'obj':>4s} {'exer':>5s}")
    measured = [measure(n) for n in names]
    for c in measured:
        print(f"{c.name:40s} {c.main_words:6d} {c.all_words:6d} {c.brief_words if c.brief_words is not None else '-':>6} "
              f"{c.objectives_words if c.objectives_words is not None else '-':>4} {len(c.exercises):5d}")
    for c in measured:
        for f in c.failures():
            print(f"{c.name}: {f}")
            failed += 1
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

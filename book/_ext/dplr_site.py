"""The site's own Sphinx extension (loaded through ``sphinx: local_extensions`` in ``_config.yml``).

It does three things for the reader's site:

1. **MathJax served from the site.** ``mathjax_path`` in ``_config.yml`` names a file under
   ``mathjax/`` (so Sphinx links ``_static/mathjax/...``); after an HTML build this copies MathJax 3's
   ``es5`` tree from the installed PyPI package ``django-static-mathjax`` (its version locked in requirements/book.lock;
   it ships MathJax 3.2.2 under Apache-2.0 and needs no Django) into ``_build/html/_static/mathjax``,
   with MathJax's licence. No CDN: the site typesets offline.
2. **Notebook download + how to run it.** Every chapter whose source is a notebook gets a box under its
   title with a direct download link to its ``.ipynb`` (Sphinx's copy in ``_sources/``) and a link to the
   landing page's ``(how-to-run)=`` section.
3. **Execution statistics.** The ``{dplr-exec-stats}`` directive renders a table of each chapter's
   run time as recorded in the notebook's metadata (``metadata.dplr.execution``) by
   ``.ci/execute_notebooks.py`` (``make notebooks``) when the stored outputs were produced. The site build
   itself executes nothing (``execute_notebooks: off``), so myst-nb's own ``{nb-exec-table}`` would be empty.
   Its last column names the commit that stored each chapter's outputs (git, at build time).
4. **Where the stored outputs come from.** The ``{dplr-outputs-provenance}`` directive (on the execution-statistics page)
   says, computed when the site is built: the newest commit that changed a chapter notebook (its outputs are
   those of that commit), with its date; the span of times the chapters were executed and the commit
   ``make notebooks`` ran on (from the notebooks' metadata); and any chapter changed since its last commit.
5. **The PDF.** Figures pasted with ``{glue}`` point at the LaTeX build's copy of the image.
6. **A figure glued from another chapter, with alt text.** ``{dplr-glue-figure} key`` (options ``:doc:``, the
   notebook, ``:alt:``, required, and ``:name:``; the content is the caption) pastes a figure another notebook glued,
   as a figure with a caption and alt text: myst-nb's ``{glue:figure}`` reads only its own page's glue, and its
   ``{glue}`` with ``:doc:`` pastes a bare image whose alt text is its file name.
"""
from __future__ import annotations

import json
import os
import posixpath
import re
import shutil
import subprocess
from html import escape
from pathlib import Path

from docutils import nodes
from docutils.parsers.rst import directives
from sphinx.application import Sphinx
from sphinx.util import logging
from sphinx.util.docutils import SphinxDirective

logger = logging.getLogger(__name__)

MATHJAX_PREFIX = "mathjax/"          # mathjax_path must start with this; files land in _static/mathjax/
HOW_TO_RUN_LABEL = "how-to-run"      # the label of the landing page's "How to run it" section
EXEC_METADATA_KEY = "dplr"           # notebook metadata written by .ci/execute_notebooks.py


# --------------------------------------------------------------------------------------------------
# 1. MathJax from the built site
# --------------------------------------------------------------------------------------------------
def mathjax_es5_dir() -> Path:
    """MathJax 3's ``es5`` directory inside the installed ``django-static-mathjax`` package."""
    try:
        import mathjax  # the import name of the PyPI package django-static-mathjax
    except ImportError as err:  # pragma: no cover - only without the book dependencies
        raise RuntimeError("MathJax is served from the site: install the book dependencies "
                           "(`make book` does: pip install -e '.[book]', which pins django-static-mathjax)") from err
    return Path(mathjax.__file__).parent / "static" / "mathjax" / "es5"


def _copy_if_changed(src: Path, dst: Path) -> None:
    if dst.exists():
        s, d = src.stat(), dst.stat()
        if s.st_size == d.st_size and int(s.st_mtime) == int(d.st_mtime):
            return
    dst.parent.mkdir(parents=True, exist_ok=True)
    shutil.copy2(src, dst)


def copy_mathjax(app: Sphinx, exception: Exception | None) -> None:
    if exception is not None or app.builder.format != "html":
        return
    path = app.config.mathjax_path
    if "://" in path or not path.startswith(MATHJAX_PREFIX):
        logger.warning(f"dplr_site: mathjax_path={path!r} is not a local {MATHJAX_PREFIX}... file; "
                       "the site would fetch MathJax from elsewhere and not read offline")
        return
    es5 = mathjax_es5_dir()
    component = path[len(MATHJAX_PREFIX):].split("?")[0]
    if not (es5 / component).is_file():
        logger.warning(f"dplr_site: MathJax component {component!r} not found in {es5}")
        return
    dest = Path(app.outdir) / "_static" / "mathjax"
    # The entry component, plus every sub-directory it loads from on demand (fonts, TeX extensions for
    # autoload/\require, the accessibility menu's modules and speech rules). The other combined
    # components (tex-svg.js, mml-chtml.js, ...) are not used and not copied.
    _copy_if_changed(es5 / component, dest / component)
    _copy_if_changed(es5.parent / "LICENSE", dest / "LICENSE")
    for sub in sorted(p for p in es5.iterdir() if p.is_dir()):
        for src in sub.rglob("*"):
            if src.is_file():
                _copy_if_changed(src, dest / src.relative_to(es5))


# --------------------------------------------------------------------------------------------------
# 2. Download this notebook + how to run it
# --------------------------------------------------------------------------------------------------
def add_download_box(app: Sphinx, pagename: str, templatename: str, context: dict, doctree) -> None:
    if doctree is None or app.builder.format != "html":
        return
    source = app.env.doc2path(pagename, base=False)
    if not str(source).endswith(".ipynb"):
        return
    sourcename = context.get("sourcename")  # e.g. book/chapter.ipynb (html_sourcelink_suffix is "")
    body = context.get("body", "")
    if not sourcename or not app.config.html_copy_source or "</h1>" not in body:
        logger.warning(f"dplr_site: cannot offer {pagename}'s notebook for download", location=pagename)
        return
    pathto = context["pathto"]
    href = pathto("_sources/" + sourcename, resource=True)
    filename = os.path.basename(sourcename)
    labels = app.env.get_domain("std").labels
    if HOW_TO_RUN_LABEL not in labels:
        logger.warning(f"dplr_site: label ({HOW_TO_RUN_LABEL})= not found; the landing page should mark "
                       "its 'How to run it' section with it", location=pagename)
        return
    run_doc, run_id, run_title = labels[HOW_TO_RUN_LABEL]
    run_href = pathto(run_doc) + "#" + run_id
    box = (
        '<div class="admonition tip dplr-notebook-download">\n'
        '<p class="admonition-title">Run this chapter yourself</p>\n'
        f'<p>This chapter is a Jupyter notebook: download <a class="reference download dplr-ipynb" '
        f'href="{escape(href)}" download="{escape(filename)}"><code>{escape(filename)}</code></a>. '
        f'To run it locally with the book\'s locked environment, see '
        f'<a class="reference internal" href="{escape(run_href)}">{escape(run_title)}</a>.</p>\n'
        '</div>\n'
    )
    head, tail = body.split("</h1>", 1)
    context["body"] = head + "</h1>\n" + box + tail


# --------------------------------------------------------------------------------------------------
# Inline scripts written twice
# --------------------------------------------------------------------------------------------------
def dedupe_inline_scripts(app: Sphinx, pagename: str, templatename: str, context: dict, doctree) -> None:
    """Write each inline ``<script>`` once.

    Sphinx < 8.2 (jupyter-book 1 pins Sphinx 7) adds an inline script registered with
    ``app.add_js_file(None, body=...)`` during the build twice: once with filename None, once with ''
    (fixed upstream by sphinx-doc/sphinx#13402). sphinx-thebe's ``const THEBE_JS_URL = ...`` then throws
    "Identifier 'THEBE_JS_URL' has already been declared" on every page. This drops the second copy.
    """
    scripts = context.get("script_files")
    if not scripts:
        return
    seen, unique = set(), []
    for script in scripts:
        attributes = getattr(script, "attributes", {})
        key = (getattr(script, "filename", script) or "", getattr(script, "priority", None),
               tuple(sorted(attributes.items())) if isinstance(attributes, dict) else ())
        if key not in seen:
            seen.add(key)
            unique.append(script)
    context["script_files"] = unique


# --------------------------------------------------------------------------------------------------
# 3. Execution statistics
# --------------------------------------------------------------------------------------------------
class exec_stats_placeholder(nodes.General, nodes.Element):
    """Replaced by the table once every document has been read (the toctree order is known then)."""


class ExecStatsDirective(SphinxDirective):
    has_content = False

    def run(self):
        # Re-render this page when any notebook (and so its recorded run time) changes.
        srcdir = Path(self.env.srcdir)
        for nb in sorted(srcdir.glob("book/*.ipynb")):
            self.env.note_dependency(str(nb))
        return [exec_stats_placeholder()]


def _toc_order(env, root: str) -> list[str]:
    order, stack, seen = [], [root], set()
    while stack:
        doc = stack.pop(0)
        if doc in seen:
            continue
        seen.add(doc)
        order.append(doc)
        stack[0:0] = env.toctree_includes.get(doc, [])
    return order


def read_execution_record(path: Path) -> dict | None:
    """``metadata.dplr.execution`` of a notebook, or None when it was not recorded."""
    with open(path, encoding="utf-8") as f:
        meta = json.load(f).get("metadata", {})
    record = meta.get(EXEC_METADATA_KEY, {}).get("execution")
    return record if isinstance(record, dict) and "seconds" in record else None


def format_seconds(seconds: float) -> str:
    if seconds < 60:
        return f"{seconds:.1f} s"
    minutes, sec = divmod(round(seconds), 60)
    return f"{minutes} min {sec:02d} s"


def _row(cells, header=False):
    row = nodes.row()
    for cell in cells:
        entry = nodes.entry()
        para = nodes.paragraph()
        if isinstance(cell, nodes.Node):
            para += cell
        else:
            para += nodes.Text(str(cell))
        entry += para
        row += entry
    return row


def render_exec_stats(app: Sphinx, doctree, docname: str) -> None:
    placeholders = list(doctree.findall(exec_stats_placeholder))
    if not placeholders:
        return
    env = app.env
    headers = ["Chapter", "Run time", "Executed (UTC)", "Where", "Outputs stored in"]
    rows, total, missing = [], 0.0, []
    for doc in _toc_order(env, app.config.root_doc):
        path = Path(env.doc2path(doc))
        if path.suffix != ".ipynb":
            continue
        link = nodes.reference("", "", internal=True, refuri=app.builder.get_relative_uri(docname, doc))
        link += nodes.Text(env.titles[doc].astext() if doc in env.titles else doc)
        record = read_execution_record(path)
        stored = last_commit(Path(env.srcdir), [path])
        stored = f"{stored['short']} ({stored['date']})" if stored else "not committed"
        if record is None:
            missing.append(doc)
            rows.append([link, "not recorded", "—", "—", stored])
            continue
        total += float(record["seconds"])
        where = f"{record.get('cores', '?')} cores, Python {record.get('python', '?')}, {record.get('platform', '?')}"
        rows.append([link, format_seconds(float(record["seconds"])), record.get("finished", "?"), where, stored])
    if len(rows) > len(missing):
        rows.append([nodes.strong(text="All chapters with a record"), format_seconds(total), "", "", ""])

    table = nodes.table(classes=["dplr-exec-stats"])
    tgroup = nodes.tgroup(cols=len(headers))
    table += tgroup
    for width in (34, 12, 17, 22, 15):
        tgroup += nodes.colspec(colwidth=width)
    thead = nodes.thead()
    thead += _row(headers)
    tgroup += thead
    tbody = nodes.tbody()
    for cells in rows:
        tbody += _row(cells)
    tgroup += tbody

    result = [table]
    if missing:
        note = nodes.paragraph()
        note += nodes.Text(f"{len(missing)} chapter(s) carry no record: their stored outputs were produced "
                           "some other way (by hand in Jupyter, or before run times were recorded). ")
        note += nodes.literal(text="make notebooks NB=book/<chapter>.ipynb")
        note += nodes.Text(" re-executes a chapter and records its run time.")
        result.append(note)
    for node in placeholders:
        node.replace_self(result)


# --------------------------------------------------------------------------------------------------
# 4. Where the stored outputs come from
# --------------------------------------------------------------------------------------------------
def _git(root: Path, *args: str) -> str | None:
    """git's output, trailing newlines removed (not leading spaces: ``status --porcelain`` lines begin with one)."""
    try:
        result = subprocess.run(["git", "-C", str(root), *args], capture_output=True, text=True, timeout=30)
    except (OSError, subprocess.SubprocessError):
        return None
    return result.stdout.rstrip("\n") if result.returncode == 0 else None


def last_commit(root: Path, paths: list[Path]) -> dict | None:
    """The newest commit that changed any of ``paths``: {hash, short, date (YYYY-MM-DD, committer's)}, or None."""
    if not paths:
        return None
    out = _git(root, "log", "-1", "--format=%H%x09%h%x09%cs", "--", *[str(p.relative_to(root)) for p in paths])
    if not out:
        return None
    full, short, date = out.split("\t")
    return {"hash": full, "short": short, "date": date}


def uncommitted(root: Path, paths: list[Path]) -> list[str] | None:
    """Those of ``paths`` that differ from the last commit (None: not a git checkout)."""
    out = _git(root, "status", "--porcelain", "--", *[str(p.relative_to(root)) for p in paths])
    if out is None:
        return None
    return sorted(line[3:] for line in out.splitlines() if line.strip())


class provenance_placeholder(nodes.General, nodes.Element):
    """Replaced by the provenance paragraph once every document has been read."""


class ProvenanceDirective(SphinxDirective):
    has_content = False

    def run(self):
        for nb in sorted(Path(self.env.srcdir).glob("book/*.ipynb")):
            self.env.note_dependency(str(nb))
        return [provenance_placeholder()]


def render_provenance(app: Sphinx, doctree, docname: str) -> None:
    placeholders = list(doctree.findall(provenance_placeholder))
    if not placeholders:
        return
    env = app.env
    root = Path(env.srcdir)
    chapters = [Path(env.doc2path(d)) for d in _toc_order(env, app.config.root_doc)
                if Path(env.doc2path(d)).suffix == ".ipynb"]
    para = nodes.paragraph()
    commit = last_commit(root, chapters)
    if commit is None:
        para += nodes.Text("This copy of the book is not a git checkout, so the commit its stored outputs come from "
                           "is not known here. ")
    else:
        para += nodes.Text("The outputs shown in the chapters are those stored in commit ")
        para += nodes.literal(text=commit["short"])
        para += nodes.Text(f" of {commit['date']}, the newest commit that changed a chapter notebook (read from "
                           "git when this book was built). ")
    records = [r for r in (read_execution_record(p) for p in chapters) if r]
    if records:
        finished = sorted(r["finished"] for r in records if r.get("finished"))
        para += nodes.Text(f"{len(records)} of the {len(chapters)} chapters record in their metadata when ")
        para += nodes.literal(text="make notebooks")
        para += nodes.Text(f" executed them: between {finished[0]} and {finished[-1]} (UTC)")
        with_commit = [r for r in records if r.get("commit")]
        ran_on = sorted({r["commit"][:7] + (" with uncommitted changes" if r.get("uncommitted") else "")
                         for r in with_commit})
        if ran_on:
            para += nodes.Text(f", {len(with_commit)} of them on the code of commit " + ", ".join(ran_on))
        para += nodes.Text(". ")
    changed = uncommitted(root, chapters)
    if changed:
        para += nodes.Text("Changed since that commit (not yet committed): " + ", ".join(changed) + ". ")
    para += nodes.Text("Every change to the code re-executes each chapter and compares it with these outputs (")
    para += nodes.literal(text="pytest --nbval")
    para += nodes.Text(" in ")
    para += nodes.literal(text="make test")
    para += nodes.Text(" and CI).")
    for node in placeholders:
        node.replace_self(para.deepcopy())


# --------------------------------------------------------------------------------------------------
# 5. The PDF (LaTeX builder): glued figures
# --------------------------------------------------------------------------------------------------
_GLUED_IMAGE = re.compile(r"[0-9a-f]{64}\.(png|jpeg|gif|pdf)")


def fix_glued_image_paths(app: Sphinx, doctree, docname: str) -> None:
    """Point figures pasted with ``{glue}`` at the LaTeX build's own copy of the image.

    myst-nb writes a glued image into the builder's image folder and links it relative to the page
    (``../<sha256>.png`` from ``book/intro``): right for the HTML pages, which sit in ``book/``; but the
    LaTeX builder resolves the whole book as one document named after the root page, so the same
    relative link points outside ``_build/latex`` and XeLaTeX stops ("Unable to load picture").
    """
    if app.builder.format != "latex":
        return
    base = posixpath.dirname(docname)
    for image in doctree.findall(nodes.image):
        uri = image.get("uri", "")
        if not uri.startswith("../"):
            continue
        target = posixpath.normpath(posixpath.join(base, uri))
        if _GLUED_IMAGE.fullmatch(target):
            image["uri"] = target
            image["candidates"] = {"*": target}


# --------------------------------------------------------------------------------------------------
# 6. A figure glued from another notebook, with alt text and a caption
# --------------------------------------------------------------------------------------------------
class GlueFigureDirective(SphinxDirective):
    """``{dplr-glue-figure} key`` with ``:doc:`` (the notebook that glued it), ``:alt:`` and ``:name:``; the
    content, one paragraph, is the caption."""

    required_arguments = 1
    has_content = True
    option_spec = {"doc": directives.unchanged_required, "alt": directives.unchanged_required,
                   "name": directives.unchanged}

    def run(self):
        from myst_nb.ext.glue.utils import create_pending_glue_ref  # imported here: myst-nb's internals, Sphinx only

        for option in ("doc", "alt"):
            if not self.options.get(option):
                raise self.error(f"dplr-glue-figure needs :{option}:")
        ref = create_pending_glue_ref(self.state.document, self.get_source_info()[0], self.lineno,
                                      self.options["doc"], self.arguments[0])
        figure = nodes.figure("", ref, classes=["dplr-glue-figure"])
        figure["dplr_alt"] = self.options["alt"]
        self.set_source_info(figure)
        self.add_name(figure)
        if self.content:
            parsed = nodes.Element()
            self.state.nested_parse(self.content, self.content_offset, parsed)
            first = parsed[0]
            if not isinstance(first, nodes.paragraph):
                raise self.error("the caption of dplr-glue-figure must be one paragraph")
            caption = nodes.caption(first.rawsource, "", *first.children)
            caption.source, caption.line = first.source, first.line
            figure += caption
        return [figure]


def set_glued_figure_alt(app: Sphinx, doctree, docname: str) -> None:
    """The alt text of a ``{dplr-glue-figure}`` on its image (myst-nb pastes the image when the doctree is resolved)."""
    for figure in doctree.findall(nodes.figure):
        if figure.get("dplr_alt"):
            images = list(figure.findall(nodes.image))
            if not images:
                logger.warning(f"dplr-glue-figure: no image was pasted into the figure on {docname}", location=figure)
            for image in images:
                image["alt"] = figure["dplr_alt"]


def title_collapsed_proofs(app: Sphinx, doctree, docname: str) -> None:
    """Proofs on the site: each with an id of its own, and a proof of class dropdown (``{prf:proof}`` with
    ``:class: dropdown``) with a title.

    sphinx-proof writes every proof as ``<div class="proof admonition" id="proof">``: the same id for all the proofs
    of a page, and no ``admonition-title``. sphinx-togglebutton turns every ``.admonition.dropdown`` into a button by
    its title -- without one its script stopped with a TypeError, which left no block of the page collapsible -- and
    finds the block again by its id, so with shared ids every button toggled the first proof. The ids become
    ``proof-1``, ``proof-2``, ... in page order; a collapsed proof's title, "Proof", is the button the reader clicks
    (the "Proof. " sphinx-proof puts before its first words moves into it). The PDF (another builder) prints the
    proofs as they are."""
    if app.builder.format != "html":
        return
    count = 0
    for node in list(doctree.findall(nodes.admonition)):
        classes = node.get("classes", [])
        if "proof" not in classes or node.get("ids") != ["proof"]:
            continue
        count += 1
        node["ids"] = [f"proof-{count}"]
        if "dropdown" in classes:
            first = node.children[0] if node.children else None
            if isinstance(first, nodes.paragraph) and first.children and isinstance(first.children[0], nodes.Text) \
                    and first.children[0].astext().startswith("Proof. "):
                first.replace(first.children[0], nodes.Text(first.children[0].astext()[len("Proof. "):]))
            node.insert(0, nodes.paragraph("", "Proof", classes=["admonition-title"]))


def setup(app: Sphinx) -> dict:
    app.connect("build-finished", copy_mathjax)
    app.connect("html-page-context", add_download_box)
    app.connect("html-page-context", dedupe_inline_scripts, priority=900)  # after others add theirs
    app.add_node(exec_stats_placeholder)
    app.add_directive("dplr-exec-stats", ExecStatsDirective)
    app.connect("doctree-resolved", render_exec_stats)
    app.connect("doctree-resolved", fix_glued_image_paths)
    app.add_node(provenance_placeholder)
    app.add_directive("dplr-outputs-provenance", ProvenanceDirective)
    app.connect("doctree-resolved", render_provenance)
    app.add_directive("dplr-glue-figure", GlueFigureDirective)
    app.connect("doctree-resolved", set_glued_figure_alt)
    app.connect("doctree-resolved", title_collapsed_proofs)
    return {"version": "1.0", "parallel_read_safe": True, "parallel_write_safe": True}

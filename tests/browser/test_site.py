"""The built site, opened page by page in headless Chromium, as a reader would see it.

Run with `make site-test` after `make book` (`.ci/run` does both, and installs Debian's chromium first).
Not part of `make unit`, which runs before the site exists.

The site in _build/html is served on 127.0.0.1 (a free port) from a thread; Playwright drives Debian's
/usr/bin/chromium (never `playwright install`). Every HTML page is opened once and inspected; the tests below
then check, for every page:

- no console errors, no uncaught exceptions, no failed or 4xx/5xx requests, and no request leaving localhost
  (all are blocked, so the test sees the site as an offline reader does: MathJax must come from the site);
- math typeset: MathJax (the site's copy) loaded, every math element holds MathJax output, no MathJax error,
  and no raw `$...$`, `\\(`, `\\[` or TeX command (`\\frac`, `\\le`, ...) left in the prose;
- every image loaded (naturalWidth > 0) and has alt text (not its file name, which Sphinx puts there when none is given);
- every same-site link (cross-references, {prf:ref}, {numref}, citations, navigation) points to a page that
  exists and to an anchor on it that exists, and no cross-reference was left unresolved (`.xref` outside a link);
- the left navigation reaches every page listed in _toc.yml, and clicking it navigates;
- each notebook chapter offers its .ipynb for download, and the download is the notebook;
- the landing page links the book's PDF (`make pdf` puts it in the site), and the link serves that PDF;
- dark mode (pydata-sphinx-theme's `data-theme="dark"`, as a reader whose system prefers dark gets it) renders:
  body text, headings, the notebook-download box and the results tables (cells, captions, failed verdicts) keep a
  readable contrast against their background; every
  figure sits on a light card (the background behind each image, its own or an ancestor's, is light: the figures
  are drawn on white); on a page with results tables, a failed verdict keeps its contrast against the table's card;
- the site's own search (offline, Sphinx's search index) finds a theorem of the theory chapters by its title;
- no output area or table is wider than the content column at 1280 px (the article's content box), or reaches past
  its right edge, on any page; and that column is the width dplr.replication.figures.check_legible assumes;
- at a phone's 390 px no page is wider than the screen (wide outputs, code and equations scroll in their own box).

Screenshots of the landing page and one chapter, light and dark, are saved in _build/screenshots/.
"""
from __future__ import annotations

import functools
import json
import os
import re
import threading
import time
from dataclasses import dataclass, field
from html.parser import HTMLParser
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from urllib.parse import quote, unquote, urldefrag, urlparse

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[2]
SITE = ROOT / "_build" / "html"
SHOTS = ROOT / "_build" / "screenshots"
CHROMIUM = os.environ.get("DPLR_CHROMIUM", "/usr/bin/chromium")
# Flags that let Debian's Chromium run headless here as root with no network: without the background
# networking flags it keeps trying (and failing) to reach Google's services. Playwright adds --headless and
# gives every launch a fresh temporary --user-data-dir itself.
CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                 "--disable-background-networking", "--disable-component-update", "--disable-sync"]
PAGE_TIMEOUT_MS = 20_000     # bound on every navigation and wait
MATHJAX_TIMEOUT_MS = 20_000  # bound on MathJax's first typesetting of a page
SKIP_DIRS = {"_static", "_sources", "_images", "_sphinx_design_static", "_panels_static"}


# --------------------------------------------------------------------------------------------------
# What the book says it contains
# --------------------------------------------------------------------------------------------------
def toc_docs() -> list[str]:
    """Every document of _toc.yml, root first, as docnames (paths without suffix)."""
    toc = yaml.safe_load((ROOT / "_toc.yml").read_text())
    docs = [toc["root"]]

    def walk(entries):
        for entry in entries or []:
            if "file" in entry:
                docs.append(re.sub(r"\.(md|ipynb)$", "", entry["file"]))
            for key in ("chapters", "sections", "parts"):
                walk(entry.get(key))

    walk(toc.get("parts"))
    walk(toc.get("chapters"))
    return docs


def doc_source(doc: str) -> Path | None:
    for suffix in (".ipynb", ".md"):
        if (ROOT / (doc + suffix)).exists():
            return ROOT / (doc + suffix)
    return None


class _Ids(HTMLParser):
    def __init__(self):
        super().__init__()
        self.ids: set[str] = set()

    def handle_starttag(self, tag, attrs):
        for name, value in attrs:
            if name == "id" and value:
                self.ids.add(value)


@functools.lru_cache(maxsize=None)
def ids_of(path: Path) -> frozenset[str]:
    parser = _Ids()
    parser.feed(path.read_text(encoding="utf-8"))
    return frozenset(parser.ids)


def theorem_to_search() -> tuple[str, str]:
    """(title, docname) of a theorem in a theory chapter whose title is plain words, for the search test."""
    for path in sorted((ROOT / "book").glob("theory_*.ipynb")):
        cells = json.loads(path.read_text())["cells"]
        text = "\n".join("".join(c["source"]) for c in cells if c["cell_type"] == "markdown")
        for title in re.findall(r"```\{prf:theorem\}[ \t]*([^\n`]+)", text):
            title = title.strip()
            if re.fullmatch(r"[A-Za-z ]+", title) and len(re.findall(r"[A-Za-z]{4,}", title)) >= 2:
                return title, path.relative_to(ROOT).with_suffix("").as_posix()
    raise AssertionError("no theorem with a plain-words title in book/theory_*.ipynb")


# Dark mode: the theme's mode, and for text elements the contrast of their colour against the background that
# shows behind them (the nearest ancestor with an opaque background), as WCAG 2 defines contrast.
DARK_JS = r"""
() => {
  const rgba = s => { const m = s.match(/rgba?\(([^)]+)\)/); if (!m) return null;
                      const v = m[1].split(/[ ,\/]+/).filter(Boolean).map(Number);
                      return {r: v[0], g: v[1], b: v[2], a: v.length > 3 ? v[3] : 1}; };
  const lum = c => { const f = x => { x /= 255; return x <= 0.03928 ? x / 12.92 : Math.pow((x + 0.055) / 1.055, 2.4); };
                     return 0.2126 * f(c.r) + 0.7152 * f(c.g) + 0.0722 * f(c.b); };
  const background = el => { for (let e = el; e; e = e.parentElement) {
                               const c = rgba(getComputedStyle(e).backgroundColor);
                               if (c && c.a > 0.5) return c; }
                             return {r: 255, g: 255, b: 255, a: 1}; };
  const out = {theme: document.documentElement.dataset.theme || null,
               mode: document.documentElement.dataset.mode || null, samples: []};
  const selectors = ['article p', 'article h1', 'article li', '.dplr-notebook-download p', 'nav.bd-docs-nav a',
                     'div.cell_output pre', 'div.cell_input pre', 'table.dplr-table td.dplr-failed',
                     'table.dplr-table caption', 'table.dplr-table td'];
  for (const sel of selectors) {
    const el = document.querySelector(sel);
    if (!el) continue;
    const fg = rgba(getComputedStyle(el).color), bg = background(el);
    const [hi, lo] = [lum(fg), lum(bg)].sort((a, b) => b - a);
    out.samples.push({selector: sel, color: getComputedStyle(el).color,
                      background: `rgb(${bg.r}, ${bg.g}, ${bg.b})`, backgroundLuminance: lum(bg),
                      contrast: (hi + 0.05) / (lo + 0.05)});
  }
  // What shows behind each figure: the image's own background, else its nearest opaque ancestor's.
  out.images = Array.from(document.querySelectorAll('article img')).map(img => {
    const bg = background(img);
    return {src: img.getAttribute('src'), background: `rgb(${bg.r}, ${bg.g}, ${bg.b})`, luminance: lum(bg)};
  });
  return out;
}
"""


# --------------------------------------------------------------------------------------------------
# Serving the site and opening every page
# --------------------------------------------------------------------------------------------------
class _QuietHandler(SimpleHTTPRequestHandler):
    def log_message(self, *args):
        pass


class _SiteServer(ThreadingHTTPServer):
    # The standard library listens with a backlog of 5 connections. Chromium opens up to six at once per host,
    # and on a loaded two-core machine (CI) the accepting thread can fall behind: a refused SYN is retried
    # after 1, 2, 4, 8 s..., which once left a request of a large page running past the bound below.
    request_queue_size = 128


@dataclass
class PageReport:
    path: str
    console_errors: list[str] = field(default_factory=list)
    failed_requests: list[str] = field(default_factory=list)
    external_requests: list[str] = field(default_factory=list)
    dom: dict = field(default_factory=dict)


# Runs in the page once it has loaded: waits (bounded) for MathJax and the images, then reports.
INSPECT_JS = r"""
async (timeoutMs) => {
  const withTimeout = (p, what) => Promise.race([p, new Promise((_, reject) =>
      setTimeout(() => reject(new Error(what + ' did not finish in ' + timeoutMs + ' ms')), timeoutMs))]);
  const out = {errors: []};
  const mathNodes = Array.from(document.querySelectorAll('.math'));
  const mjScript = Array.from(document.scripts).find(s => /mathjax/i.test(s.src || ''));
  out.mathjaxSrc = mjScript ? mjScript.src : null;
  out.mathjaxVersion = (window.MathJax && window.MathJax.version) || null;
  if (out.mathjaxSrc) {
    if (!out.mathjaxVersion || !window.MathJax.startup) {
      out.errors.push('MathJax script present but MathJax did not load');
    } else {
      try { await withTimeout(window.MathJax.startup.promise, 'MathJax typesetting'); }
      catch (e) { out.errors.push(String(e)); }
    }
  }
  out.mathCount = mathNodes.length;
  out.mjxCount = document.querySelectorAll('mjx-container').length;
  out.untypeset = mathNodes.filter(n => !n.querySelector('mjx-container'))
                           .map(n => n.textContent.trim().slice(0, 80));
  // TeX errors: MathJax shows them as merror, and undefined macros (its noundefined extension) in red.
  out.mathErrors = [];
  if (out.mathjaxVersion && window.MathJax.startup && window.MathJax.startup.document) {
    for (const item of window.MathJax.startup.document.math) {
      const mml = window.MathJax.startup.toMML(item.root);
      if (/<merror|mathcolor="red"/.test(mml)) out.mathErrors.push(String(item.math).slice(0, 120));
    }
  }
  // Raw TeX left in the prose: text outside code, scripts and MathJax output.
  const skip = 'pre, code, script, style, textarea, mjx-container, .highlight, .math';
  const walker = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT);
  const raw = [];
  // delimiters, environments, and TeX commands a formula would hold (\frac, \lVert, \varepsilon, \le, ...)
  const rawTex = /\$[^$\s][^$]*\$|\\\(|\\\)|\\\[|\\\]|\\begin\{|\\end\{|\\(frac|lVert|rVert|varepsilon|epsilon|lambda|Lambda|Delta|delta|mathbb|mathcal|sum|int|le|leq|ge|geq|cdot|infty|sqrt|log|exp|nabla|top|mid|quad|operatorname|text|mathrm|left|right|big|Big)(?![A-Za-z])/;
  for (let node = walker.nextNode(); node; node = walker.nextNode()) {
    const parent = node.parentElement;
    if (!parent || parent.closest(skip)) continue;
    if (rawTex.test(node.textContent)) raw.push(node.textContent.trim().slice(0, 120));
  }
  out.rawMath = raw;
  // Images: make lazy ones load, then wait (bounded) for all to settle.
  const imgs = Array.from(document.images);
  imgs.forEach(img => { img.loading = 'eager'; });
  try {
    await withTimeout(Promise.all(imgs.map(img => img.complete ? null :
        new Promise(r => { img.addEventListener('load', r); img.addEventListener('error', r); }))), 'images');
  } catch (e) { out.errors.push(String(e)); }
  // Web fonts (MathJax's among them) finish loading before the page is left, and none failed.
  try { await withTimeout(document.fonts.ready, 'fonts'); } catch (e) { out.errors.push(String(e)); }
  document.fonts.forEach(f => { if (f.status === 'error') out.errors.push('font failed: ' + f.family); });
  out.images = imgs.length;
  out.brokenImages = imgs.filter(img => !(img.complete && img.naturalWidth > 0))
                         .map(img => img.getAttribute('src'));
  // Content images without alt text: none, empty, or the file name (what Sphinx writes when none is given).
  out.imagesWithoutAlt = Array.from(document.querySelectorAll('article img')).filter(img => {
    const alt = (img.getAttribute('alt') || '').trim(), src = img.getAttribute('src') || '';
    return !alt || alt === src || /\.(png|jpe?g|gif|svg)$/i.test(alt);
  }).map(img => img.getAttribute('src'));
  // Links and cross-references.
  out.links = Array.from(document.querySelectorAll('a[href]'))
                   .filter(a => a.getAttribute('href') !== '#' && !a.getAttribute('href').startsWith('javascript:'))
                   .map(a => ({href: a.href, text: a.textContent.trim().slice(0, 60),
                               cls: a.className, internal: a.matches('a.reference.internal')}));
  out.unresolved = Array.from(document.querySelectorAll('.xref'))
                        .filter(n => !n.closest('a')).map(n => n.textContent.trim().slice(0, 80));
  out.questionMarks = Array.from(document.querySelectorAll('a.reference'))
                           .filter(a => a.textContent.includes('??')).map(a => a.getAttribute('href'));
  out.nav = Array.from(document.querySelectorAll('nav.bd-docs-nav a[href]')).map(a => a.href);
  out.downloads = Array.from(document.querySelectorAll('a.dplr-ipynb, a.btn-download-source-button'))
                       .map(a => ({href: a.href, cls: a.className, download: a.getAttribute('download')}));
  out.title = document.title;
  // Collapsed blocks (admonitions, proofs and solutions of class dropdown): each has its toggle button (the
  // theme's script made one), and an id of its own (the script finds the block by its id).
  const collapsed = Array.from(document.querySelectorAll('.admonition.dropdown'));
  out.collapsed = collapsed.length;
  out.collapsedWithoutButton = collapsed.filter(e => !e.querySelector('button.toggle-button'))
                                        .map(e => (e.id || '') + ' ' + e.textContent.trim().slice(0, 60));
  const ids = collapsed.map(e => e.id).filter(Boolean);
  out.collapsedSharedIds = ids.filter((id, i) => ids.indexOf(id) !== i);
  const article = document.querySelector('article.bd-article');
  const articleStyle = article && getComputedStyle(article);
  out.columnWidth = article ? article.getBoundingClientRect().width - parseFloat(articleStyle.paddingLeft)
                              - parseFloat(articleStyle.paddingRight) : null;  // its content box
  out.wide = wideElements();
  return out;
}
"""

# Output areas and tables wider than the content column: what a reader cannot see without scrolling sideways.
# An element counts when its content (scrollWidth: what a horizontal scroll bar hides) or its box is wider than
# the article column, by more than one pixel. Code inputs are not outputs and are not checked.
WIDE_JS = r"""
function wideElements() {
  const column = document.querySelector('article.bd-article') || document.querySelector('main') || document.body;
  // the column's content box: an element is cut off when its content reaches past the box's right edge (a table
  // narrower than the column but indented by its output area can still be), or it is wider than the box
  const style = getComputedStyle(column), box = column.getBoundingClientRect();
  const right = box.right - parseFloat(style.paddingRight) - parseFloat(style.borderRightWidth);
  const limit = right - (box.left + parseFloat(style.paddingLeft) + parseFloat(style.borderLeftWidth)) + 1;
  const selectors = ['div.cell_output', 'div.output', 'div.cell_output pre', 'div.output pre',
                     'div.cell_output table', 'article table'];
  const seen = new Set(), wide = [];
  for (const el of column.querySelectorAll(selectors.join(','))) {
    if (seen.has(el) || el.closest('.cell_input')) continue;
    seen.add(el);
    const r = el.getBoundingClientRect();
    const width = Math.max(el.scrollWidth, r.width);
    if (width > limit || r.left + width > right + 1) wide.push([el, width]);
  }
  // Report the innermost offender of each nest (a wide <pre> also makes its output area wide).
  return wide.filter(([el]) => !wide.some(([other]) => other !== el && el.contains(other))).map(([el, width]) => {
    const section = el.closest('section[id]');
    return {element: el.tagName.toLowerCase() + (el.className ? '.' + String(el.className).trim().split(/\s+/).join('.') : ''),
            width: Math.round(width), column: Math.round(limit - 1), section: section ? section.id : '',
            text: (el.innerText || '').trim().split('\n')[0].slice(0, 70)};
  });
}
"""
INSPECT_JS = INSPECT_JS.replace("async (timeoutMs) => {", "async (timeoutMs) => {\n" + WIDE_JS, 1)


PHONE_WIDTH = 390
# The page's width at a phone's viewport, and what overflows: the innermost elements whose box reaches past the
# viewport's right edge and that do not sit inside a box that scrolls (or clips) horizontally.
PHONE_JS = r"""
() => {
  const vw = window.innerWidth;
  // inside a box that scrolls or clips horizontally and itself ends within the screen
  const clipped = el => { for (let e = el.parentElement; e && e !== document.body; e = e.parentElement) {
                            const o = getComputedStyle(e).overflowX;
                            if ((o === 'auto' || o === 'scroll' || o === 'hidden' || o === 'clip')
                                && e.getBoundingClientRect().right <= vw + 1) return true; }
                          return false; };
  const over = [];
  for (const el of document.querySelectorAll('body *')) {
    const r = el.getBoundingClientRect();
    // its box, or its text overflowing a box that does not scroll (a heading's unbreakable word)
    const textRight = getComputedStyle(el).overflowX === 'visible' ? r.left + el.scrollWidth : r.right;
    if (r.width === 0 || Math.max(r.right, textRight) <= vw + 1 || clipped(el)) continue;
    if (getComputedStyle(el).visibility === 'hidden') continue;
    over.push(el);
  }
  const innermost = over.filter(el => !over.some(other => other !== el && el.contains(other)));
  return {scrollWidth: document.documentElement.scrollWidth, viewport: vw,
          overflowing: innermost.slice(0, 5).map(el => ({
            element: el.tagName.toLowerCase() + (el.className && typeof el.className === 'string'
                                                 ? '.' + el.className.trim().split(/\s+/).join('.') : ''),
            right: Math.round(el.getBoundingClientRect().right), text: (el.textContent || '').trim().slice(0, 60)}))};
}
"""


def site_pages() -> list[str]:
    pages = []
    for path in sorted(SITE.rglob("*.html")):
        rel = path.relative_to(SITE)
        if rel.parts[0] in SKIP_DIRS or rel.as_posix() == "index.html":  # index.html only redirects
            continue
        pages.append(rel.as_posix())
    return pages


@pytest.fixture(scope="module")
def site():
    if not (SITE / "index.html").is_file():
        pytest.fail(f"no built site in {SITE}: run `make book` first")
    if not (os.path.isfile(CHROMIUM) and os.access(CHROMIUM, os.X_OK)):
        pytest.fail(f"{CHROMIUM} not found: install Debian's chromium (`apt-get install chromium`; .ci/run does)")
    server = _SiteServer(("127.0.0.1", 0), functools.partial(_QuietHandler, directory=str(SITE)))
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/"
    finally:
        server.shutdown()
        server.server_close()


@pytest.fixture(scope="module")
def crawl(site):
    """Open every page of the site once; return {page path: PageReport}, plus the landing-page click check."""
    from playwright.sync_api import sync_playwright

    origin = site.rstrip("/")
    reports: dict[str, PageReport] = {}
    current: list[PageReport] = []

    def route(route):
        url = route.request.url
        if url.startswith(origin + "/"):
            route.continue_()
        else:
            if current:
                current[-1].external_requests.append(url)
            route.abort()

    SHOTS.mkdir(parents=True, exist_ok=True)
    started = time.monotonic()
    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=CHROMIUM, headless=True, args=CHROMIUM_ARGS,
                                     timeout=PAGE_TIMEOUT_MS)
        try:
            context = browser.new_context(viewport={"width": 1280, "height": 900})
            context.set_default_timeout(PAGE_TIMEOUT_MS)
            context.set_default_navigation_timeout(PAGE_TIMEOUT_MS)
            context.route("**/*", route)
            page = context.new_page()
            page.on("console", lambda msg: current and msg.type == "error"
                    and current[-1].console_errors.append(f"{msg.text} ({msg.location.get('url', '')})"))
            page.on("pageerror", lambda err: current and current[-1].console_errors.append(f"uncaught: {err}"))
            page.on("requestfailed", lambda req: current and req.url.startswith(origin)
                    and current[-1].failed_requests.append(f"{req.url}: {req.failure}"))
            page.on("response", lambda resp: current and resp.status >= 400
                    and current[-1].failed_requests.append(f"{resp.url}: HTTP {resp.status}"))
            # Requests in flight, to name them when a page does not settle.
            in_flight: dict = {}  # playwright Request -> its URL
            page.on("request", lambda req: in_flight.__setitem__(req, req.url))
            page.on("requestfinished", lambda req: in_flight.pop(req, None))
            page.on("requestfailed", lambda req: in_flight.pop(req, None))

            for rel in site_pages():
                report = PageReport(rel)
                current.append(report)
                in_flight.clear()  # a request left over from the last page is that page's (reported there)
                page.goto(site + rel, wait_until="load")
                report.dom = page.evaluate(INSPECT_JS, MATHJAX_TIMEOUT_MS)
                # Let late requests (fonts, lazy scripts) finish here, so none is cut off, or blamed on the next
                # page, by leaving: wait until none of the page's requests has been in flight for 500 ms. (Not
                # Chromium's "networkidle", which twice on CI never came within the bound for the largest page,
                # book/api/analysis.html, although none of the page's requests was in flight.)
                quiet_since, deadline = time.monotonic(), time.monotonic() + PAGE_TIMEOUT_MS / 1000
                while not (not in_flight and time.monotonic() - quiet_since >= 0.5):
                    if in_flight:
                        quiet_since = time.monotonic()
                    if time.monotonic() > deadline:
                        report.dom["errors"].append(f"requests still running {PAGE_TIMEOUT_MS} ms after the page "
                                                    f"loaded: {', '.join(sorted(set(in_flight.values())))}")
                        break
                    page.wait_for_timeout(50)  # lets Playwright deliver the page's events
                reports[rel] = report

            # The redirect at the site's root leads to the landing page.
            root_doc = toc_docs()[0] + ".html"
            current.append(PageReport("index.html"))
            page.goto(site + "index.html", wait_until="load")
            page.wait_for_url(site + root_doc)
            reports["index.html"] = current[-1]
            # Pages opened again below (screenshots, the click) were checked above; their events go here.
            current.append(PageReport("__revisits__"))

            # Screenshots: the landing page, and the first notebook chapter (top, and its first figure).
            page.goto(site + root_doc, wait_until="load")
            page.evaluate("() => window.MathJax && MathJax.startup && MathJax.startup.promise")
            page.screenshot(path=str(SHOTS / "landing.png"), full_page=True)
            chapter = next((d for d in toc_docs()[1:] if (s := doc_source(d)) and s.suffix == ".ipynb"), None)
            if chapter:
                page.goto(site + chapter + ".html", wait_until="load")
                page.evaluate("() => window.MathJax && MathJax.startup && MathJax.startup.promise")
                page.screenshot(path=str(SHOTS / "chapter.png"))
                figure = page.locator("article img").first
                if figure.count():
                    figure.scroll_into_view_if_needed()
                    page.screenshot(path=str(SHOTS / "chapter-figure.png"))

            # The PDF the landing page links: served by the site, and a PDF.
            page.goto(site + root_doc, wait_until="load")
            pdf = {"links": page.eval_on_selector_all("a.dplr-pdf", "els => els.map(a => a.href)")}
            if pdf["links"]:
                response = context.request.get(pdf["links"][0])
                body = response.body()
                pdf.update(status=response.status, type=response.headers.get("content-type", ""),
                           magic=body[:5].decode("latin-1"), size=len(body))
            reports["__pdf__"] = PageReport("__pdf__", dom=pdf)

            # The site's own search, offline: a theorem of the theory chapters by its title.
            title, doc = theorem_to_search()
            page.goto(site + "search.html?q=" + quote(title), wait_until="load")
            page.wait_for_selector("#search-results .search-summary")
            reports["__search__"] = PageReport("__search__", dom={
                "title": title, "doc": doc,
                "summary": page.inner_text("#search-results .search-summary"),
                "hits": page.eval_on_selector_all("#search-results ul.search li a", "els => els.map(a => a.href)")})
            page.screenshot(path=str(SHOTS / "search.png"))

            # Clicking the navigation moves to the chapter it names.
            page.goto(site + root_doc, wait_until="load")
            first_chapter = toc_docs()[1] + ".html"
            link = page.locator(f'nav.bd-docs-nav a[href$="{Path(first_chapter).name}"]').first
            link.click()
            page.wait_for_url(site + first_chapter)
            reports["__click__"] = PageReport("__click__", dom={"url": page.url})
            context.close()

            # Dark mode, as a reader whose system prefers it sees the site (the theme's default mode is "auto").
            dark_report = PageReport("__dark__")
            current.append(dark_report)
            dark = browser.new_context(viewport={"width": 1280, "height": 900}, color_scheme="dark")
            dark.set_default_timeout(PAGE_TIMEOUT_MS)
            dark.route("**/*", route)
            dark_page = dark.new_page()
            dark_page.on("console", lambda msg: msg.type == "error" and dark_report.console_errors.append(msg.text))
            dark_page.on("pageerror", lambda err: dark_report.console_errors.append(f"uncaught: {err}"))
            # a chapter whose results table marks a failed verdict (a cell of class dplr-failed, not only the CSS rule)
            failed_cell = re.compile(r'<td [^>]*class="data [^"]*dplr-failed')
            tables = next((d for d in toc_docs() if (s := doc_source(d)) and s.suffix == ".ipynb"
                           and failed_cell.search((SITE / (d + ".html")).read_text(encoding="utf-8"))), None)
            for name, doc in (("landing", root_doc[:-5]), ("chapter", chapter), ("tables", tables)):
                if not doc:
                    continue
                dark_page.goto(site + doc + ".html", wait_until="load")
                dark_page.evaluate("() => window.MathJax && MathJax.startup && MathJax.startup.promise")
                dark_report.dom[name] = dark_page.evaluate(DARK_JS)
                dark_page.screenshot(path=str(SHOTS / f"{name}-dark.png"))
            reports["__dark__"] = dark_report
            dark.close()

            # A phone: every page at 390 px (CSS pixels, as an iPhone 14 reports), after MathJax: the page's width
            # and the innermost elements that reach past the screen's right edge.
            phone_report = PageReport("__phone__")
            current.append(phone_report)
            phone = browser.new_context(viewport={"width": PHONE_WIDTH, "height": 844}, device_scale_factor=1)
            phone.set_default_timeout(PAGE_TIMEOUT_MS)
            phone.route("**/*", route)
            phone_page = phone.new_page()
            for rel in site_pages():
                phone_page.goto(site + rel, wait_until="load")
                phone_page.evaluate("() => window.MathJax && MathJax.startup && MathJax.startup.promise")
                phone_report.dom[rel] = phone_page.evaluate(PHONE_JS)
            phone_page.goto(site + chapter + ".html", wait_until="load")
            phone_page.evaluate("() => window.MathJax && MathJax.startup && MathJax.startup.promise")
            phone_page.screenshot(path=str(SHOTS / "chapter-phone.png"))
            reports["__phone__"] = phone_report
            phone.close()
        finally:
            browser.close()
    reports["__seconds__"] = PageReport("__seconds__", dom={"seconds": time.monotonic() - started})
    return reports


def pages(crawl):
    return {k: v for k, v in crawl.items() if not k.startswith("__")}


def site_path(url: str, base: str) -> str | None:
    """The site-relative file path of a same-site URL, or None for other URLs."""
    if not url.startswith(base):
        return None
    path = unquote(urlparse(url).path).lstrip("/")
    return path + "index.html" if path.endswith("/") or not path else path


# --------------------------------------------------------------------------------------------------
# The checks
# --------------------------------------------------------------------------------------------------
def test_every_page_was_opened(crawl):
    opened = set(pages(crawl))
    expected = {d + ".html" for d in toc_docs()}
    assert expected <= opened, f"pages of _toc.yml missing from the site: {sorted(expected - opened)}"
    # (how long the crawl took is printed, not asserted: a timed test fails on a busy machine, not on a slow site)
    print(f"crawled {len(opened)} pages in {crawl['__seconds__'].dom['seconds']:.0f} s")


def test_no_console_errors_or_failed_requests(crawl):
    problems = {p: r.console_errors + r.failed_requests for p, r in pages(crawl).items()
                if r.console_errors or r.failed_requests}
    assert not problems, json.dumps(problems, indent=1)


def test_every_page_finishes_loading(crawl):
    """MathJax loads and typesets, images and web fonts settle, all within the bounds (no font failed)."""
    problems = {p: r.dom["errors"] for p, r in pages(crawl).items() if r.dom and r.dom["errors"]}
    assert not problems, json.dumps(problems, indent=1)


def test_nothing_is_fetched_from_outside_the_site(crawl):
    external = {p: r.external_requests for p, r in pages(crawl).items() if r.external_requests}
    assert not external, "the site must read offline; these pages reach outside it:\n" + json.dumps(external, indent=1)


def test_math_is_typeset_by_the_sites_own_mathjax(crawl, site):
    problems, math_pages = {}, 0
    for path, report in pages(crawl).items():
        dom = report.dom
        if not dom:
            continue
        issues = []
        if dom["mathCount"]:
            math_pages += 1
            if not (dom["mathjaxSrc"] or "").startswith(site + "_static/mathjax/"):
                issues.append(f"MathJax not served by the site: {dom['mathjaxSrc']}")
            if dom["mjxCount"] == 0:
                issues.append("no MathJax output (mjx-container)")
        for key, what in (("untypeset", "math left untypeset"), ("mathErrors", "MathJax errors"),
                          ("rawMath", "raw TeX in the text")):
            if dom[key]:
                issues.append(f"{what}: {dom[key][:5]}")
        if issues:
            problems[path] = issues
    assert not problems, json.dumps(problems, indent=1)
    assert math_pages >= 1, "no page has math: the MathJax check checked nothing"


def test_every_image_loads(crawl):
    broken = {p: r.dom["brokenImages"] for p, r in pages(crawl).items() if r.dom and r.dom["brokenImages"]}
    assert not broken, json.dumps(broken, indent=1)


def test_every_figure_has_alt_text(crawl):
    images = sum(r.dom["images"] for r in pages(crawl).values() if r.dom)
    assert images >= 10, f"only {images} images on the whole site: the check checked little"
    missing = {p: r.dom["imagesWithoutAlt"] for p, r in pages(crawl).items() if r.dom and r.dom["imagesWithoutAlt"]}
    assert not missing, "images without alt text (give the cell mystnb.image.alt, or :alt:):\n" + \
        json.dumps(missing, indent=1)


def test_every_reference_resolves(crawl, site):
    problems: dict[str, list[str]] = {}
    for path, report in pages(crawl).items():
        dom = report.dom
        if not dom:
            continue
        issues = [f"unresolved cross-reference: {t!r}" for t in dom["unresolved"]]
        issues += [f"link text '??' (unnumbered target): {h}" for h in dom["questionMarks"]]
        for link in dom["links"]:
            target = site_path(link["href"], site)
            if target is None:
                if link["internal"]:
                    issues.append(f"internal reference leaves the site: {link['href']}")
                continue
            file = SITE / target
            if not file.is_file():
                issues.append(f"link to a missing page: {link['href']} ({link['text']!r})")
                continue
            fragment = unquote(urldefrag(link["href"]).fragment)
            if fragment and file.suffix == ".html" and fragment not in ids_of(file):
                issues.append(f"link to a missing anchor: {link['href']} ({link['text']!r})")
        if issues:
            problems[path] = sorted(set(issues))
    assert not problems, json.dumps(problems, indent=1)


def test_navigation_reaches_every_chapter(crawl, site):
    expected = {d + ".html" for d in toc_docs()}
    problems = {}
    for path, report in pages(crawl).items():
        if not report.dom or path.rsplit(".", 1)[0] not in toc_docs():
            continue
        reached = {site_path(u, site) for u in report.dom["nav"]}
        if path == toc_docs()[0] + ".html":
            reached.add(path)  # the landing page need not link to itself
        if not expected <= reached:
            problems[path] = sorted(expected - reached)
    assert not problems, f"the left navigation misses pages of _toc.yml: {problems}"
    assert crawl["__click__"].dom["url"] == site + toc_docs()[1] + ".html"


def test_each_notebook_chapter_offers_its_notebook(crawl, site):
    notebooks = [d for d in toc_docs() if (s := doc_source(d)) and s.suffix == ".ipynb"]
    assert notebooks, "no notebook chapter in _toc.yml"
    for doc in notebooks:
        dom = crawl[doc + ".html"].dom
        box = [d for d in dom["downloads"] if "dplr-ipynb" in d["cls"]]
        button = [d for d in dom["downloads"] if "btn-download-source-button" in d["cls"]]
        name = Path(doc).name + ".ipynb"
        assert box and box[0]["download"] == name, f"{doc}: no download link for {name} under the title"
        assert button, f"{doc}: the theme's download button (.ipynb) is missing"
        for link in box + button:
            target = SITE / site_path(link["href"], site)
            assert target.suffix == ".ipynb" and target.is_file(), f"{doc}: {link['href']} is not a notebook"
            assert json.loads(target.read_text())["cells"] == json.loads(doc_source(doc).read_text())["cells"], \
                f"{doc}: the downloadable notebook differs from book/{name} (a stale site? `make book`)"


def test_screenshots_saved(crawl):
    for name in ("landing.png", "chapter.png", "landing-dark.png", "chapter-dark.png", "search.png"):
        shot = SHOTS / name
        assert shot.is_file() and shot.stat().st_size > 10_000, f"screenshot {shot} missing or empty"


def test_the_landing_page_links_the_pdf(crawl, site):
    pdf = crawl["__pdf__"].dom
    assert pdf["links"], "the landing page has no link to the PDF (a.dplr-pdf)"
    target = site_path(pdf["links"][0], site)
    assert target == "dplr-book.pdf", f"the PDF link points at {pdf['links'][0]}"
    assert pdf["status"] == 200, f"the PDF link answers HTTP {pdf['status']}: run `make pdf` (it copies the PDF into the site)"
    assert pdf["magic"] == "%PDF-" and "pdf" in pdf["type"], f"the PDF link does not serve a PDF: {pdf}"
    assert pdf["size"] == (SITE / "dplr-book.pdf").stat().st_size > 100_000


def test_dark_mode_renders_readably(crawl):
    report = crawl["__dark__"]
    assert not report.console_errors, report.console_errors
    assert "tables" in report.dom, "no notebook chapter with a failed verdict in a results table was found"
    for name in ("landing", "chapter", "tables"):
        dom = report.dom[name]
        assert dom["theme"] == "dark", f"{name}: data-theme is {dom['theme']!r}, not dark"
        samples = {s["selector"]: s for s in dom["samples"]}
        assert "article p" in samples, f"{name}: no body text found"
        for selector, sample in samples.items():
            # WCAG AA: 4.5 for body text; the background must really be dark (luminance of #333 is 0.033)
            assert sample["contrast"] >= 4.5, f"{name}: {selector} has contrast {sample['contrast']:.2f} in dark mode ({sample})"
        assert samples["article p"]["backgroundLuminance"] < 0.05, f"{name}: the page background is not dark: {samples['article p']}"
        assert (SHOTS / f"{name}-dark.png").stat().st_size > 10_000
        # figures are drawn on white: in dark mode each must sit on a light card (luminance of #ccc is 0.60)
        dark_behind = [i for i in dom["images"] if i["luminance"] < 0.6]
        assert not dark_behind, f"{name}: images on a dark background in dark mode: {dark_behind}"
    assert report.dom["landing"]["images"] and report.dom["chapter"]["images"], "no figure checked in dark mode"
    failed = [s for s in report.dom["tables"]["samples"] if s["selector"] == "table.dplr-table td.dplr-failed"]
    assert failed, "the tables page shows no failed verdict in dark mode"


def test_search_finds_a_theorem_by_its_title(crawl, site):
    search = crawl["__search__"].dom
    pages = {site_path(h, site).split("#")[0] for h in search["hits"] if site_path(h, site)}
    assert search["doc"] + ".html" in pages, \
        f"searching for the theorem {search['title']!r} does not list {search['doc']}: {search['summary']!r}, {sorted(pages)}"
    # ... and one hit leads to the theorem block itself (sphinx-proof registers it as a searchable object)
    page_html = (SITE / (search["doc"] + ".html")).read_text(encoding="utf-8")
    theorem_ids = set(re.findall(r'<div class="proof theorem[^"]*" id="([^"]+)"', page_html))
    fragments = {unquote(urldefrag(h).fragment) for h in search["hits"] if site_path(h, site) == search["doc"] + ".html"}
    assert theorem_ids & fragments, f"no search hit leads to a theorem block of {search['doc']}: {sorted(fragments)}"


def wide_outputs(crawl) -> dict[str, list[dict]]:
    """{page: [output areas or tables wider than the content column at 1280 px]} over the whole site."""
    return {p: r.dom["wide"] for p, r in pages(crawl).items() if r.dom and r.dom.get("wide")}


def test_no_output_or_table_is_wider_than_the_column(crawl):
    everything = wide_outputs(crawl)
    (SHOTS / "wide-outputs.json").write_text(json.dumps(everything, indent=1))
    wide = everything
    assert not wide, f"{sum(map(len, wide.values()))} output areas or tables wider than the content column " \
                     f"(listed in {SHOTS / 'wide-outputs.json'}):\n" + json.dumps(wide, indent=1)


def test_no_page_is_wider_than_a_phone(crawl):
    """At 390 px no page scrolls sideways: wide tables, outputs, code and equations scroll inside their own box."""
    phone = crawl["__phone__"].dom
    assert set(phone) == set(site_pages()), "not every page was opened at phone width"
    wide = {rel: report for rel, report in phone.items() if report["scrollWidth"] > report["viewport"] + 1}
    assert not wide, "pages wider than a 390 px screen: " + "; ".join(
        f"{rel} ({r['scrollWidth']} px: {r['overflowing']})" for rel, r in sorted(wide.items())[:30])


def test_the_content_column_is_the_width_figures_are_drawn_for(crawl):
    """dplr.replication.figures.check_legible computes figures' text size on the site from SITE_COLUMN_PX: the
    column measured at 1280 px must be within 5% of it."""
    from dplr.replication.figures import SITE_COLUMN_PX
    widths = {rel: r.dom.get("columnWidth") for rel, r in pages(crawl).items() if rel.startswith("book/")
              and r.dom.get("columnWidth")}
    assert widths, "no chapter's article column was measured"
    off = {rel: w for rel, w in widths.items() if abs(w - SITE_COLUMN_PX) > 0.05 * SITE_COLUMN_PX}
    assert not off, f"content column differs from figures.SITE_COLUMN_PX = {SITE_COLUMN_PX}: {off}"


def test_every_collapsed_block_can_be_opened(crawl):
    """Dropdowns (rigour one click away, exercises' solutions): every block of class dropdown got its toggle button,
    and no two share an id (the toggle script finds a block by its id: sphinx-proof gave every proof id="proof")."""
    bad = {rel: {"without button": r.dom.get("collapsedWithoutButton"), "shared ids": r.dom.get("collapsedSharedIds")}
           for rel, r in pages(crawl).items()
           if r.dom.get("collapsedWithoutButton") or r.dom.get("collapsedSharedIds")}
    assert not bad, f"collapsed blocks that cannot be opened: {json.dumps(bad, indent=1)[:3000]}"
    assert sum(r.dom.get("collapsed", 0) for r in pages(crawl).values()) >= 50, "fewer collapsed blocks than expected"

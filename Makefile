# Two commands do all the set-up on a fresh machine with Python 3.11 and pip:
#   make test   -- unit tests and `pytest --nbval` over every chapter
#   make book   -- the HTML site in _build/html, warnings as errors
# and, with Debian's packages (installed here when run as root, else named in a message):
#   make pdf          -- the whole book as one PDF (TeX), checked with pdftotext, served with the site
#   make site-test    -- every page of the built site in headless Chromium
#   make test-oldest  -- dplr alone at the oldest dependency versions it states, in a fresh venv
#   make lab          -- the chapters in JupyterLab (installed into .venv on first use)
SHELL := /bin/bash
.SHELLFLAGS := -eo pipefail -c
PYTHON ?= python3.11
VENV := .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed-stamp
# The exact versions the chapters are verified with (a constraints file); pyproject.toml states dplr's ranges.
LOCK := requirements/book.lock
PDF := _build/latex/dplr-book.pdf

# Offline data: when the shared copies of the UCI data sets sit beside the project (CI, the
# developers' machines) -- or beside the checkout this one was cloned from, for a local test clone
# such as /tmp/check -- the loaders' cache points there; elsewhere the loaders download and cache.
ORIGIN := $(shell git config --get remote.origin.url 2>/dev/null)
ifneq ($(wildcard ../shared/datasets/README.md),)
export DPLR_DATA_DIR ?= $(abspath ../shared/datasets)
else ifneq ($(and $(ORIGIN),$(wildcard $(ORIGIN)/../shared/datasets/README.md)),)
export DPLR_DATA_DIR ?= $(abspath $(ORIGIN)/../shared/datasets)
endif

.PHONY: test book unit nbval nbval-portable nbval-all notebooks site-test pdf test-oldest lab lock-env clean real-record modern-record modern-record-check words \
	real-record-check selection-record selection-record-check baseline-record baseline-record-check

$(STAMP): pyproject.toml $(LOCK)
	@command -v $(PYTHON) >/dev/null || { echo "Python 3.11 is required ($(PYTHON) not found); set PYTHON=/path/to/python3.11"; exit 1; }
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -c $(LOCK) -e ".[book]"
	$(PY) .ci/deps.py check-venv $(PY)
	touch $(STAMP)

test: unit nbval

# DPLR_REQUIRE_EXTRAS=1: a test that would skip for want of an optional package fails here (tests/conftest.py).
unit: $(STAMP)
	DPLR_REQUIRE_EXTRAS=1 $(PY) -m pytest tests --ignore=tests/browser --ignore=tests/pdf

nbval: $(STAMP)
	$(PY) -m pytest --nbval --nbval-current-env --nbval-sanitize-with tests/nbval_sanitize.cfg book

# The stored outputs again, under other numeric configurations (OpenBLAS kernels, numpy's SIMD dispatch, BLAS threads),
# standing in for readers' machines: see .ci/nbval_portable.py. NB=book/x.ipynb limits it to chapters.
nbval-portable: $(STAMP)
	$(PY) .ci/nbval_portable.py $(NB)

# make nbval and make nbval-portable in one step, all configurations at once (one process per configuration keeps
# both cores busy): on CI, make unit 262 s + make nbval-all 1,066 s, against make test 722 s + make nbval-portable 718 s.
nbval-all: $(STAMP)
	$(PY) .ci/nbval_portable.py --default $(NB)

book: $(STAMP)
	rm -rf _build/html
	mkdir -p _build
	$(VENV)/bin/jupyter-book build . -W -n --keep-going 2>&1 | tee _build/build.log
	@if [ -f $(PDF) ]; then cp $(PDF) _build/html/; echo "copied $(PDF) into the site (make pdf rebuilds it)"; fi

# The whole book as one PDF: Jupyter Book's LaTeX builder, XeLaTeX from Debian's TeX packages
# (.ci/debian-packages installs them as root, else says which). Copied into the site (_build/html/dplr-book.pdf,
# linked from the landing page) when the site exists, and checked: tests/pdf reads its text with pdftotext.
pdf: $(STAMP)
	.ci/debian-packages tex
	rm -rf _build/latex
	mkdir -p _build
	$(VENV)/bin/jupyter-book build . --builder pdflatex -W -n --keep-going 2>&1 | tee _build/pdf.log
	@test -f $(PDF) || { echo "no $(PDF): see _build/pdf.log and _build/latex/dplr-book.log"; exit 1; }
	@if [ -d _build/html ]; then cp $(PDF) _build/html/; echo "copied $(PDF) into _build/html"; fi
	$(PY) -m pytest tests/pdf

# The built site in headless Chromium (Debian's /usr/bin/chromium; .ci/debian-packages installs it as root):
# console errors, math, images, references, navigation, downloads, the PDF link, dark mode, search;
# screenshots in _build/screenshots.
site-test: $(STAMP)
	@test -f _build/html/index.html || { echo "no site in _build/html: run make book (and make pdf) first"; exit 1; }
	.ci/debian-packages chromium
	$(PY) -m pytest tests/browser

# dplr alone (no extras) at the oldest versions pyproject.toml states, in a fresh venv (_build/venv-oldest):
# installing dplr must change none of them; the unit tests run there; then the extras plot, dask, uci, accounting at
# their oldest versions and the tests that use them. See .ci/deps.py.
test-oldest:
	@command -v $(PYTHON) >/dev/null || { echo "Python 3.11 is required ($(PYTHON) not found); set PYTHON=/path/to/python3.11"; exit 1; }
	$(PYTHON) .ci/deps.py test-oldest

# Each chapter's reading conventions measured: words on its main path (prose outside dropdowns and solutions),
# its In brief, learning objectives and exercises (.ci/reading_path.py; tests/test_reading_path.py holds the book to them).
words: $(STAMP)
	$(PY) .ci/reading_path.py $(NB)

# Re-execute chapters in place (all, or NB=book/x.ipynb) and store their outputs.
notebooks: $(STAMP)
	$(PY) .ci/execute_notebooks.py $(NB)

# The real-data chapter's record (dplr.replication.real.record): the full 200-repeat study, written to
# book/data/real_study.csv.gz (real-record), or its first REPEATS repeats recomputed and compared with the stored
# ones (real-record-check).
real-record: $(STAMP)
	$(PY) -m dplr reproduce real --out _build/reproduce-real
	cp _build/reproduce-real/real-study.csv.gz book/data/real_study.csv.gz

# The check recomputes the first REPEATS repeats of every experiment (each repeat has its own stream, so they are the
# record's first ones) and compares them with the record's: 50 of 200 on CI, where the whole study took 211 s.
REPEATS ?= 50
real-record-check: $(STAMP)
	$(PY) -m dplr reproduce real --out _build/reproduce-real-check --restarts $(REPEATS) --quiet
	$(PY) -c "from dplr.replication.real.record import compare_records as c; \
	print(c('_build/reproduce-real-check/real-study.csv.gz', 'book/data/real_study.csv.gz', prefix=True), \
	'rows agree (the first $(REPEATS) repeats of every experiment)')"

# The record of the chapter on today's methods (dplr.replication.modern.record): the full comparison (about an hour
# on two cores), written to book/data/modern_study.csv.gz (modern-record), or recomputed and compared with it.
modern-record: $(STAMP)
	$(PY) -m dplr reproduce modern --out _build/reproduce-modern
	cp _build/reproduce-modern/modern-study.csv.gz book/data/modern_study.csv.gz

modern-record-check: $(STAMP)
	$(PY) -m dplr reproduce modern --out _build/reproduce-modern-check --quiet
	$(PY) -c "from dplr.replication.modern.record import compare_records as c; \
	print(c('_build/reproduce-modern-check/modern-study.csv.gz', 'book/data/modern_study.csv.gz'), 'rows agree')"

# The record of the chapter on private selection (dplr.replication.real.selection): Algorithm 3, private selection
# and a data-independent lambda for Algorithms 1 and 2 on Adult and KDDCup99, for DP-SGD on Adult, and for the
# Gaussian contenders (all three on Adult, output perturbation and AMP on KDDCup99), 10 repeats
# (about 80 minutes on two cores), written to book/data/selection_study.csv.gz (selection-record), or its first
# SELECTION_REPEATS repeats recomputed and compared with the stored ones (selection-record-check).
selection-record: $(STAMP)
	$(PY) -m dplr reproduce selection --out _build/reproduce-selection --workers 1
	cp _build/reproduce-selection/selection-study.csv.gz book/data/selection_study.csv.gz

SELECTION_REPEATS ?= 2
selection-record-check: $(STAMP)
	$(PY) -m dplr reproduce selection --out _build/reproduce-selection-check --restarts $(SELECTION_REPEATS) \
	--workers 1 --quiet
	$(PY) -c "from dplr.replication.real.selection import compare_selection_records as c; \
	print(c('_build/reproduce-selection-check/selection-study.csv.gz', 'book/data/selection_study.csv.gz', \
	prefix=True), 'rows agree (the first $(SELECTION_REPEATS) repeats of every arm)')"

# The record of the chapter on the cost of privacy (dplr.replication.baseline): the non-private chain (cross-validation
# on the whole training sets) and the private learners on the whole training sets, both data sets and losses; it
# reads Algorithm 3's repeats from book/data/real_study.csv.gz. baseline-record-check recomputes every stage with the
# first two repeats and compares them with the stored ones.
baseline-record: $(STAMP)
	$(PY) -m dplr reproduce baseline --out _build/reproduce-baseline
	cp _build/reproduce-baseline/baseline-study.csv.gz book/data/baseline_study.csv.gz

baseline-record-check: $(STAMP)
	$(PY) -m dplr reproduce baseline --out _build/reproduce-baseline-check --restarts 2 --quiet
	$(PY) -c "from dplr.replication.baseline.record import compare_records as c; \
	print(c('_build/reproduce-baseline-check/baseline-study.csv.gz', 'book/data/baseline_study.csv.gz', prefix=True), \
	'rows agree (every stage, the first 2 repeats)')"

# JupyterLab on the chapters, from the project's environment (installed on first use, at the lock's versions).
lab: $(STAMP)
	@test -x $(VENV)/bin/jupyter-lab || $(PY) -m pip install --quiet -c $(LOCK) -e ".[book,lab]"
	$(VENV)/bin/jupyter lab $(if $(filter 0,$(shell id -u)),--allow-root) book/

# After editing requirements/book.lock: rewrite environment.yml (conda) from it.
lock-env:
	$(PYTHON) .ci/deps.py environment

clean:
	rm -rf _build $(VENV)

# Two commands do all the set-up on a fresh machine with Python 3.11 and pip:
#   make test   -- unit tests and `pytest --nbval` over every chapter
#   make book   -- the HTML site in _build/html, warnings as errors
SHELL := /bin/bash
.SHELLFLAGS := -eo pipefail -c
PYTHON ?= python3.11
VENV := .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed-stamp

# Offline data: when the shared copies of the UCI data sets sit beside the project (CI, the
# developers' machines) -- or beside the checkout this one was cloned from, for a local test clone
# such as /tmp/check -- the loaders' cache points there; elsewhere the loaders download and cache.
ORIGIN := $(shell git config --get remote.origin.url 2>/dev/null)
ifneq ($(wildcard ../shared/datasets/README.md),)
export DPLR_DATA_DIR ?= $(abspath ../shared/datasets)
else ifneq ($(and $(ORIGIN),$(wildcard $(ORIGIN)/../shared/datasets/README.md)),)
export DPLR_DATA_DIR ?= $(abspath $(ORIGIN)/../shared/datasets)
endif

.PHONY: test book unit nbval nbval-portable notebooks site-test clean

$(STAMP): pyproject.toml
	@command -v $(PYTHON) >/dev/null || { echo "Python 3.11 is required ($(PYTHON) not found); set PYTHON=/path/to/python3.11"; exit 1; }
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -e ".[book]"
	touch $(STAMP)

test: unit nbval

unit: $(STAMP)
	$(PY) -m pytest tests --ignore=tests/browser

nbval: $(STAMP)
	$(PY) -m pytest --nbval --nbval-current-env --nbval-sanitize-with tests/nbval_sanitize.cfg book

# The stored outputs again, under other numeric configurations (OpenBLAS kernels, numpy's SIMD dispatch, BLAS threads),
# standing in for readers' machines: see .ci/nbval_portable.py. NB=book/x.ipynb limits it to chapters.
nbval-portable: $(STAMP)
	$(PY) .ci/nbval_portable.py $(NB)

book: $(STAMP)
	rm -rf _build/html
	mkdir -p _build
	$(VENV)/bin/jupyter-book build . -W -n --keep-going 2>&1 | tee _build/build.log

# The built site in headless Chromium (Debian's /usr/bin/chromium: `apt-get install chromium`; .ci/run
# installs it): console errors, math, images, references, navigation, downloads; screenshots in _build/screenshots.
site-test: $(STAMP)
	@test -f _build/html/index.html || { echo "no site in _build/html: run make book first"; exit 1; }
	$(PY) -m pytest tests/browser

# Re-execute chapters in place (all, or NB=book/x.ipynb) and store their outputs.
notebooks: $(STAMP)
	$(PY) .ci/execute_notebooks.py $(NB)

clean:
	rm -rf _build $(VENV)

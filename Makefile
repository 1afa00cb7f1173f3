# loadcurve. On a fresh machine: `make site`, then `make test`.
# Every target installs what it needs (.venv from the pinned requirements, Jekyll).
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
RUNS ?= runs
# The address the site is published at, for one build (`make site URL=https://...`); empty:
# _config.yml's `url`. LOADCURVE_URL in the environment does the same.
URL ?= $(LOADCURVE_URL)

.PHONY: site analyse serve lint check test test-python test-bench golden perf bench post jekyll-deps clean help

help:
	@echo "make site     analyse runs/ and build _site/ (installs what it needs)"
	@echo "              URL=https://host  the published address for this build (else _config.yml)"
	@echo "make serve    preview the site on http://127.0.0.1:4000"
	@echo "make test     run every test"
	@echo "make check    lint and the fast tests (about a minute): the everyday loop"
	@echo "make lint     pyflakes over the Python code"
	@echo "make golden   re-record golden files from the reference tools (intended changes only)"
	@echo "make perf     speed benchmarks against the reference tools (bench/perf/)"
	@echo "make bench RUN=<id>   measure a new run with the bench/ harness"
	@echo "make post RUN=<id>    draft a methodology post for a run into _drafts/"

$(VENV)/.installed: requirements.txt requirements-dev.txt
	$(PYTHON) -m venv $(VENV)
	$(VENV)/bin/pip install -q --disable-pip-version-check -r requirements-dev.txt
	@# hgrm's compiled inner loops (.cache/native/; rebuilt on first use when the source
	@# changes); without a C compiler the numpy code runs, with the same output
	-$(VENV)/bin/python -m analysis.read.hdr.native
	@# the JFR reader's compiled checkpoint walk (the same; without it the Python reader)
	-$(VENV)/bin/python -m analysis.read.jfr.native
	@# the og:image's PNG row filter (the same; without it Pillow's save, the same bytes)
	-$(VENV)/bin/python -m analysis.write.charts.png_encode
	touch $@

jekyll-deps:
	@bash scripts/ensure-jekyll.sh

# The checkers make test runs on the built site (Nu HTML checker, axe-core), pinned in
# package-lock.json. --ignore-scripts: vnu-jar's install script would fetch a Java runtime;
# the system's java runs the checker.
node_modules/.installed: package.json package-lock.json
	@if command -v npm >/dev/null 2>&1; then \
	  npm ci --ignore-scripts --no-audit --no-fund --loglevel=error && touch $@; \
	else echo "warning: npm not found: the Nu checker and axe-core tests will skip (apt-get install npm)" >&2; fi

analyse: $(VENV)/.installed
	$(PY) -m analysis build --runs $(RUNS)
	$(PY) scripts/tag_feeds.py

# A run that fails gets no page; the site is still built from the others, then make fails with
# the errors listed last (scripts/site.sh).
site: $(VENV)/.installed jekyll-deps
	LOADCURVE_URL="$(URL)" PY=$(PY) RUNS=$(RUNS) bash scripts/site.sh

# runs/ and the charts are mirrored into .cache/preview/ once, at the start (scripts/build-site.sh):
# Jekyll's watch does not see them; restart after `make analyse` to preview new runs. The preview
# is not _site/, so a `make site` beside it leaves it whole.
serve: analyse jekyll-deps
	PY=$(PY) bash scripts/build-site.sh serve --host 127.0.0.1

lint: $(VENV)/.installed
	$(PY) -m pyflakes analysis tests scripts bench

# The everyday loop: lint, then every test not marked slow, site, browser or harness (those
# build whole sites, run the Java oracles or a browser; `make test` runs them, as CI does).
check: lint
	$(PY) -m pytest -q -m "not slow and not site and not browser and not harness"

# Three workers (pytest-xdist) on the 2-core machine the times in docs/reliability.md were
# taken on: a third of the tests' wall is waiting (the harness's real-time runs, Chromium, the
# builds' Java and Jekyll children), and the third worker runs other tests in it; one per core
# left a core idle for minutes. Four were tried (session 17's rehearsal): pytest took 737 s
# against three's 712 s, the harness beside it 351 s against 314 s, and the knee test failed
# under the load. A test file at a time, so a module's built site or run is made once, in one
# worker; tests/conftest.py sends the longest files out first (--no-loadscope-reorder: else
# xdist hands files out by their number of tests, most first, and the few-test files that
# build whole sites went out last).
TEST_WORKERS ?= 3
PYTEST := $(PY) -m pytest -q -n $(TEST_WORKERS) --dist loadfile --no-loadscope-reorder

# The harness's jars first: pytest's harness tests (tests/test_harness_url.py) drive them, and
# without them those tests fail in CI. Then the harness's checks (bench/test.sh), which mostly
# wait on the clock, run beside pytest; their output follows pytest's.
test: $(VENV)/.installed jekyll-deps node_modules/.installed
	bash bench/test.sh --beside $(PYTEST)

test-python: $(VENV)/.installed jekyll-deps node_modules/.installed
	$(PYTEST)

test-bench: $(VENV)/.installed
	bash bench/test.sh

golden: $(VENV)/.installed
	@for s in tests/golden/*/regen; do echo "== $$s"; PY=$(PY) bash $$s || exit 1; done

perf: $(VENV)/.installed
	@for b in bench/perf/*.py; do echo "== $$b"; $(PY) $$b || exit 1; done

bench: $(VENV)/.installed
	@test -n "$(RUN)" || { echo "error: give a run id: make bench RUN=<id>"; exit 1; }
	bash bench/run.sh $(RUN) $(if $(URL),--url '$(URL)') $(if $(RATES),--rates $(RATES))

post: $(VENV)/.installed
	@test -n "$(RUN)" || { echo "error: give a run id: make post RUN=<id>"; exit 1; }
	$(PY) -m analysis new-post $(RUN)

clean:
	rm -rf _site .jekyll-cache .jekyll-metadata .cache

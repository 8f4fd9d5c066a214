# Two commands set everything up: `make lab` and `make test` (see README.md).
PYTHON ?= python3
VENV ?= .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.ctxlab-installed

.PHONY: test lab bench lint typecheck unit js browser notebooks binder docs mutate fuzz clean vendor-plotly

$(STAMP): pyproject.toml
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -e '.[dev,lab]'
	touch $(STAMP)

lint: $(STAMP)
	$(PY) -m ruff check ctxlab tests benchmarks
	$(PY) -m ruff format --check ctxlab tests benchmarks

typecheck: $(STAMP)
	$(PY) -m mypy

unit: $(STAMP)
	$(PY) -m pytest tests --ignore=tests/browser --ignore=tests/binder

# The front ends (widgets/*.js) on a fake model and DOM, in node's own test runner: no browser,
# no build step, no npm package.
js:
	node --test tests/js/

# Binder as repo2docker builds it (binder/runtime.txt's Python, binder/requirements.txt from the
# repository root), in a fresh venv, then the tour there. The packages are downloaded first, so
# the test itself is offline.
WHEELHOUSE := build/wheelhouse
$(WHEELHOUSE)/.done: binder/requirements.txt pyproject.toml
	$(PY) -m pip download --quiet -d $(WHEELHOUSE) -r binder/requirements.txt nbval hatchling
	touch $@

binder: $(STAMP) $(WHEELHOUSE)/.done
	$(PY) -m pytest tests/binder

# plotly.js's basic bundle (scatter, bar and pie: every trace the widgets' plots draw), the file
# npm publishes, vendored as widgets/plotly-basic.min.js: the kernel sends it to the page (1.2 MB
# to load and compile, not the plotly package's 4.8 MB full bundle). This rule re-makes it from
# the pinned release and fails unless the tarball and the file are byte for byte the ones
# pinned (tests/widgets/test_plot.py checks the committed file against PLOTLY_BASIC_SHA256).
PLOTLY_BASIC := plotly.js-basic-dist-min@4.1.1
PLOTLY_BASIC_TGZ_SHA512 := 1oNF8PeQx2hv/y7tqEVWKD3JGwn/MGEMQ8mL9HUwsaqG9FGy/OU5FHUHvzqbqxN4mnwZGI9abTiE775C4kkjMQ==
PLOTLY_BASIC_SHA256 := 99784e3abfb07b142a15e521a439e6d9addceadb3f79553fd24c72774f0649ba
vendor-plotly:
	rm -rf build/plotly && mkdir -p build/plotly
	cd build/plotly && npm pack --silent $(PLOTLY_BASIC) >/dev/null
	test "$$(openssl dgst -sha512 -binary build/plotly/*.tgz | base64 -w0)" = "$(PLOTLY_BASIC_TGZ_SHA512)"
	tar -xzf build/plotly/*.tgz -C build/plotly
	echo "$(PLOTLY_BASIC_SHA256)  build/plotly/package/plotly-basic.min.js" | sha256sum -c --quiet
	cp build/plotly/package/plotly-basic.min.js widgets/plotly-basic.min.js
	cp build/plotly/package/LICENSE LICENSES/plotly.js-MIT.txt

# JupyterLab in headless Chromium (Debian's `chromium`; skipped with the reason when absent).
browser: $(STAMP)
	$(PY) -m pytest tests/browser

notebooks: $(STAMP)
	$(PY) -m pytest --nbval-lax --nbval-current-env -p no:cacheprovider notebooks

# The docs site, strictly (warnings and broken links fail), into build/site; tests/test_docs_site.py
# runs the same build in `make test`.
docs: $(STAMP)
	NO_MKDOCS_2_WARNING=1 $(PY) -m mkdocs build --strict

test: lint typecheck unit js notebooks browser binder

lab: $(STAMP)
	$(VENV)/bin/jupyter lab $(if $(filter 0,$(shell id -u)),--allow-root) notebooks/01_tour.ipynb

# Mutation testing (mutmut) of MODULE (default: the modules of ctxlab/ the working tree or the
# last commit changed) against TESTS (default: each module's tests/<package>/); prints the
# survivors and the score. Not part of `make test`: see docs/contributing.md.
mutate: $(STAMP)
	$(PY) -m pip install --quiet 'mutmut==3.8.1'
	$(PY) tests/mutate.py $(MODULE) $(if $(TESTS),--tests $(TESTS))

# The fuzz harness (tests/fuzz) at length: every public entry point on FUZZ_EXAMPLES hostile
# inputs per test (the unit suite draws 25), and the audit of every regular expression. Not
# part of `make test`: about an hour and a half on two cores. See docs/contributing.md.
FUZZ_EXAMPLES ?= 1000
fuzz: $(STAMP)
	CTXLAB_FUZZ_EXAMPLES=$(FUZZ_EXAMPLES) $(PY) -m pytest tests/fuzz tests/util/test_regex_audit.py -p no:cacheprovider -q

# Issue 54's benchmarks in one sitting (benchmarks/bench_table.py lists them; each step stopped
# past 20 minutes), then the table of their figures — each a ratio measured in this run, the
# load beside it — printed and kept in benchmarks/results/bench_table.txt (the scripts' whole
# output in bench_table.log). BENCH_ARGS=--quick: a smaller size of each, in minutes;
# BENCH_ARGS=--all: the earlier issues' benchmarks too.
BENCH_ARGS ?=
bench: $(STAMP)
	$(PY) -m pip install --quiet 'agentscope==2.0.11'
	nice $(PY) benchmarks/bench_table.py $(BENCH_ARGS)

clean:
	rm -rf $(VENV) .pytest_cache .mypy_cache .ruff_cache build/mutate

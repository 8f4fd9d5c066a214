# Two commands set everything up: `make lab` and `make test` (see README.md).
PYTHON ?= python3
VENV ?= .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.ctxlab-installed

.PHONY: test lab bench lint typecheck unit browser notebooks clean

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
	$(PY) -m pytest tests --ignore=tests/browser

# JupyterLab in headless Chromium (Debian's `chromium`; skipped with the reason when absent).
browser: $(STAMP)
	$(PY) -m pytest tests/browser

notebooks: $(STAMP)
	$(PY) -m pytest --nbval-lax --nbval-current-env -p no:cacheprovider notebooks

test: lint typecheck unit notebooks browser

lab: $(STAMP)
	$(VENV)/bin/jupyter lab $(if $(filter 0,$(shell id -u)),--allow-root) notebooks/01_tour.ipynb

bench: $(STAMP)
	$(PY) -m pip install --quiet 'agentscope==2.0.11'
	$(PY) benchmarks/prepare_bench.py
	$(PY) benchmarks/loop_bench.py
	$(PY) benchmarks/lab_bench.py

clean:
	rm -rf $(VENV) .pytest_cache .mypy_cache .ruff_cache

# topics_crawler — quick start: `make demo`, then `make test`.
SHELL := /bin/bash
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed

.PHONY: venv system-deps demo test lint typecheck unit fixtures bench fuzz clean lock

venv: $(STAMP)

# The venv is exactly the lock: pip brings the locked uv, uv installs the rest (in parallel,
# about 4x faster than pip), then the project itself, editable, without dependencies.
$(STAMP): requirements.txt pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet "$$(grep -E '^uv==' requirements.txt)"
	$(VENV)/bin/uv pip sync --quiet --python $(PY) requirements.txt
	$(VENV)/bin/uv pip install --quiet --python $(PY) --no-deps --no-build-isolation --editable .
	touch $(STAMP)

# The locks, from pyproject.toml: requirements.txt pins everything (all extras, for this
# venv and CI), requirements-runtime.txt what a crawl needs (the Scrapyd egg). Existing pins
# are kept unless pyproject.toml needs others; `make lock LOCK_ARGS=--upgrade` updates all.
LOCK := $(VENV)/bin/uv pip compile pyproject.toml --universal --python-version 3.11 \
	--quiet --custom-compile-command "make lock" $(LOCK_ARGS)
lock: venv
	$(LOCK) --extra dev -o requirements.txt
	$(LOCK) --constraint requirements.txt -o requirements-runtime.txt

# Debian packages the browser and distributed tests need (chromium, redis-server).
system-deps:
	@bash scripts/system-deps.sh

demo: venv
	$(PY) -m topics_crawler.site.demo --out data/demo

lint: venv
	$(VENV)/bin/ruff check .
	$(VENV)/bin/ruff format --check .

typecheck: venv
	$(VENV)/bin/mypy

# The suite on every core (pytest-xdist), each test module on one worker: a module's
# crawl or server fixture runs once. PYTEST_ARGS adds to it (PYTEST_ARGS="-n 0": serial).
XDIST := -n auto --dist loadscope
unit: venv
	$(VENV)/bin/pytest $(XDIST) -m "not integration and not browser and not slow" $(PYTEST_ARGS)

test: venv system-deps lint typecheck
	$(VENV)/bin/pytest $(XDIST) $(PYTEST_ARGS)

fixtures: venv
	$(PY) -m topics_crawler.site.archive_fixtures
	$(PY) -m tests.variants_2026
	$(PY) -m tests.fixture_cases --regenerate

bench: venv
	$(PY) -m bench.run_all

# The full parser fuzz run: 10 seeds x 10,000 pages over the captures and over our own
# pages alone (about 15 minutes on 2 cores); CI runs a bounded seed matrix instead.
fuzz: venv
	$(PY) -m bench.fuzz_pages --seeds 10 --pages 10000

clean:
	rm -rf $(VENV) .pytest_cache .mypy_cache .ruff_cache build dist *.egg-info

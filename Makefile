# make demo installs the runtime and the report's charts (`pip install '.[charts]'`: what a user sees in the demo
# has its charts); make test / lint / bench / baseline add the dev extras (pytest, Playwright, pyspark, the linters...). Each creates .venv when missing and reinstalls only when
# pyproject.toml changed: one stamp per set.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
# uv, when on the PATH, installs the same packages several times faster than pip
UV ?= $(shell command -v uv 2>/dev/null)
ifeq ($(UV),)
PIP := $(BIN)/python -m pip install --quiet --disable-pip-version-check
else
PIP := $(UV) pip install --quiet --python $(BIN)/python
endif
RUNTIME := $(VENV)/.installed-runtime
DEV := $(VENV)/.installed-dev
DEMO_DB := reports/demo.duckdb
FIXTURE_SOURCES := fixtures/seed/seed.db fixtures/sqlite fixtures/sessions fixtures/anthropic fixtures/claude_code fixtures/openai fixtures/memory
QUESTIONS := fixtures/labels/memory.questions.jsonl

.PHONY: demo test lint baseline bench clean clean-bench

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)

$(RUNTIME): pyproject.toml | $(BIN)/python
	$(PIP) -e '.[charts]'
	touch $@

$(DEV): pyproject.toml $(RUNTIME)
	$(PIP) -e '.[dev]'
	touch $@

demo: $(RUNTIME)
	mkdir -p reports
	rm -f $(DEMO_DB)
	$(BIN)/forensics ingest $(FIXTURE_SOURCES) --db $(DEMO_DB)
	$(BIN)/forensics report --db $(DEMO_DB) --out reports/ --questions $(QUESTIONS)
	@echo
	@echo "Read the report: open reports/report.html in a browser (one file, nothing fetched), or reports/report.md"
	@echo "Explore it:      $(BIN)/forensics serve --db $(DEMO_DB) --open   (http://127.0.0.1:8765/, read-only)"

CHECK_DB := .venv/fixtures-check.duckdb

# the layers contract (import-linter), ruff over every Python file and the notebook, and mypy ([tool.*] in
# pyproject.toml say what each checks)
lint: $(DEV)
	$(BIN)/lint-imports --no-cache
	$(BIN)/ruff format --check .
	$(BIN)/ruff check .
	$(BIN)/mypy

# the metrics gate on the fixtures first (a change that moves a figure fails until the baseline is updated
# on purpose: `make baseline`), then the suite
test: lint
	rm -f $(CHECK_DB)
	$(BIN)/forensics ingest $(FIXTURE_SOURCES) --db $(CHECK_DB) > /dev/null
	$(BIN)/forensics check --db $(CHECK_DB) --baseline fixtures/metrics-baseline.json --questions $(QUESTIONS)
	$(BIN)/python -m pytest -n 2

baseline: $(DEV)
	rm -f $(CHECK_DB)
	$(BIN)/forensics ingest $(FIXTURE_SOURCES) --db $(CHECK_DB) > /dev/null
	$(BIN)/forensics report --db $(CHECK_DB) --out .venv/fixtures-report --format json --write-baseline fixtures/metrics-baseline.json --questions $(QUESTIONS)

# Generates ~1M-message corpora once into bench/.cache/ (~1.7 GB), then prints medians and target ratios.
bench: $(DEV)
	$(BIN)/python bench/run.py $(BENCH_ARGS)

clean:
	rm -rf $(VENV) reports .pytest_cache bench/results

clean-bench:
	rm -rf bench/.cache

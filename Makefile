# make demo / make test / make bench each create .venv when missing and reinstall only when pyproject.toml changed.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
DEMO_DB := reports/demo.duckdb
FIXTURE_SOURCES := fixtures/seed/seed.db fixtures/sqlite fixtures/sessions fixtures/anthropic fixtures/claude_code fixtures/openai fixtures/memory
QUESTIONS := fixtures/labels/memory.questions.jsonl

.PHONY: demo test lint baseline bench clean clean-bench

$(STAMP): pyproject.toml
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[dev]'
	touch $(STAMP)

demo: $(STAMP)
	mkdir -p reports
	rm -f $(DEMO_DB)
	$(BIN)/forensics ingest $(FIXTURE_SOURCES) --db $(DEMO_DB)
	$(BIN)/forensics report --db $(DEMO_DB) --out reports/ --questions $(QUESTIONS)
	@echo
	@echo "Read the report: open reports/report.html in a browser (one file, nothing fetched), or reports/report.md"
	@echo "Explore it:      $(BIN)/forensics serve --db $(DEMO_DB) --open   (http://127.0.0.1:8765/, read-only)"

CHECK_DB := .venv/fixtures-check.duckdb

# the layers contract (import-linter), ruff and mypy ([tool.*] in pyproject.toml say what each checks)
lint: $(STAMP)
	$(BIN)/lint-imports --no-cache
	$(BIN)/ruff check forensics tests bench
	$(BIN)/mypy

# the metrics gate on the fixtures first (a change that moves a figure fails until the baseline is updated
# on purpose: `make baseline`), then the suite
test: lint
	rm -f $(CHECK_DB)
	$(BIN)/forensics ingest $(FIXTURE_SOURCES) --db $(CHECK_DB) > /dev/null
	$(BIN)/forensics check --db $(CHECK_DB) --baseline fixtures/metrics-baseline.json --questions $(QUESTIONS)
	$(BIN)/python -m pytest -n 2

baseline: $(STAMP)
	rm -f $(CHECK_DB)
	$(BIN)/forensics ingest $(FIXTURE_SOURCES) --db $(CHECK_DB) > /dev/null
	$(BIN)/forensics report --db $(CHECK_DB) --out .venv/fixtures-report --format json --write-baseline fixtures/metrics-baseline.json --questions $(QUESTIONS)

# Generates ~1M-message corpora once into bench/.cache/ (~1.7 GB), then prints medians and target ratios.
bench: $(STAMP)
	$(BIN)/python bench/run.py $(BENCH_ARGS)

clean:
	rm -rf $(VENV) reports .pytest_cache bench/results

clean-bench:
	rm -rf bench/.cache

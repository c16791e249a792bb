# make demo / make test each create .venv when missing and reinstall only when pyproject.toml changed.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
DEMO_DB := reports/demo.duckdb

.PHONY: demo test bench clean

$(STAMP): pyproject.toml
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[dev]'
	touch $(STAMP)

demo: $(STAMP)
	mkdir -p reports
	rm -f $(DEMO_DB)
	$(BIN)/forensics ingest fixtures/seed/seed.db fixtures/sqlite fixtures/sessions fixtures/anthropic --db $(DEMO_DB)
	$(BIN)/forensics report --db $(DEMO_DB) --out reports/

test: $(STAMP)
	$(BIN)/python -m pytest -n 2

clean:
	rm -rf $(VENV) reports .pytest_cache

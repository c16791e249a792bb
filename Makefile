# make demo / make test / make bench each create .venv when missing and reinstall only when pyproject.toml changed.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
DEMO_DB := reports/demo.duckdb

.PHONY: demo test bench clean clean-bench

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

# Generates ~1M-message corpora once into bench/.cache/ (~1.7 GB), then prints medians and target ratios.
bench: $(STAMP)
	$(BIN)/python bench/run.py $(BENCH_ARGS)

clean:
	rm -rf $(VENV) reports .pytest_cache bench/results

clean-bench:
	rm -rf bench/.cache

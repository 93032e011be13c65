# The two commands of the README: `make run` (set up + main job) and `make test` (set up + tests).
PY ?= python3
VENV ?= .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

.PHONY: setup run test bench lint clean

$(STAMP): pyproject.toml
	$(PY) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip
	$(BIN)/pip install --quiet -e '.[dev,embedded]'
	touch $(STAMP)

setup: $(STAMP)

run: $(STAMP)
	$(BIN)/evolve run

test: $(STAMP)
	$(BIN)/ruff check .
	$(BIN)/pytest -q

bench: $(STAMP)
	@for script in tests/perf/bench_*.py; do $(BIN)/python $$script || exit 1; done

lint: $(STAMP)
	$(BIN)/ruff check .

clean:
	rm -rf $(VENV) .pytest_cache .ruff_cache

# The two commands of the README: `make run` (set up + main job) and `make test` (set up + tests).
PY ?= python3
VENV ?= .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
# llama.cpp (the embedded model) is compiled for a portable x86-64 baseline (AVX2, FMA, F16C) rather
# than for the building CPU: a CPU that reports AMX tiles to the compiler, on a kernel or hypervisor
# that does not enable them, otherwise gets a library that dies with SIGILL on its first matrix
# product. The options are ggml's x86 ones; building on other architectures with them was not tried.
LLAMA_CMAKE_ARGS ?= -DGGML_NATIVE=OFF -DGGML_AVX=ON -DGGML_AVX2=ON -DGGML_FMA=ON -DGGML_F16C=ON

.PHONY: setup run test bench lint clean

$(STAMP): pyproject.toml
	$(PY) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip
	CMAKE_ARGS="$(LLAMA_CMAKE_ARGS)" $(BIN)/pip install --quiet -e '.[dev,embedded]'
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

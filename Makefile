# Two entry points for a newcomer: `make eval` (the main job on the bundled demo dataset) and
# `make test` (lint, types, tests and doctests). Each creates .venv and installs what it needs.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin

.PHONY: eval test lint bench

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install -q --upgrade pip

# Bytecode is compiled once here: an editable install leaves src/ uncompiled, and where
# PYTHONDONTWRITEBYTECODE is set every process would compile ef again (~60 ms a start).
$(VENV)/.core: pyproject.toml setup.py src/ef/evaluation/_kernel.c src/ef/evaluation/_columns.c | $(BIN)/python
	$(BIN)/python -m pip install -q -e .
	$(BIN)/python -m compileall -q src
	touch $@

$(VENV)/.dev: pyproject.toml setup.py src/ef/evaluation/_kernel.c src/ef/evaluation/_columns.c | $(BIN)/python
	$(BIN)/python -m pip install -q -e '.[dev]'
	$(BIN)/python -m compileall -q src
	touch $@ $(VENV)/.core

eval: $(VENV)/.core
	$(BIN)/ef eval

lint: $(VENV)/.dev
	$(BIN)/ruff check src tests benchmarks
	$(BIN)/mypy

test: lint
	HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1 $(BIN)/python -m pytest -q

# Side-by-side benchmarks against the peers (pytrec_eval, ranx, ir-measures, bm25s, sentence-transformers).
bench: $(VENV)/.dev
	$(BIN)/python -m pip install -q -e '.[bench]'
	$(BIN)/python benchmarks/bench_run_eval.py
	$(BIN)/python benchmarks/bench_engine.py
	$(BIN)/python benchmarks/bench_stream.py
	$(BIN)/python benchmarks/bench_write.py
	$(BIN)/python benchmarks/bench_compare.py
	$(BIN)/python benchmarks/bench_beir_eval.py
	$(BIN)/python benchmarks/bench_harness.py

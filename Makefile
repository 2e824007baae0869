# packsched: two commands do everything (see README.md).
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

.PHONY: demo test lint typecheck bench bench-replay clean

$(STAMP): pyproject.toml
	@test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[dev]'
	@touch $(STAMP)

demo: $(STAMP)
	$(BIN)/packsched demo

test: $(STAMP)
	$(BIN)/ruff check src tests bench
	$(BIN)/mypy --strict src
	$(BIN)/lint-imports
	$(BIN)/pytest

bench: $(STAMP)
	$(BIN)/python bench/bench_schedule.py

bench-replay: $(STAMP)
	$(BIN)/python bench/bench_replay.py

clean:
	rm -rf $(VENV) build *.egg-info src/*.egg-info .pytest_cache .mypy_cache .ruff_cache

# packsched: two commands do everything (see README.md): `make demo` and `make test`.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
CODE := src tests bench

.PHONY: demo test lint typecheck format bench bench-replay bench-perf clean

# (Re)creates the virtual environment whenever pyproject.toml changes.
$(STAMP): pyproject.toml
	@test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[dev]'
	@touch $(STAMP)

demo: $(STAMP)
	$(BIN)/packsched demo

# Lint: ruff's rules (complexity included), ruff's formatting, the import contracts of pyproject.toml.
lint: $(STAMP)
	$(BIN)/ruff check $(CODE)
	$(BIN)/ruff format --check $(CODE)
	$(BIN)/lint-imports

typecheck: $(STAMP)
	$(BIN)/mypy --strict src

# Rewrites the code in place: import order and other safe fixes, then ruff's formatting.
format: $(STAMP)
	$(BIN)/ruff check --fix-only --quiet $(CODE)
	$(BIN)/ruff format $(CODE)

# Everything CI runs: lint, typecheck, then the test suite with branch coverage (the floor is in pyproject.toml).
test: lint typecheck
	$(BIN)/pytest --cov=packsched --cov-branch --cov-report=term:skip-covered

# The benchmarks that need nothing beyond the repository, at their default sizes (about a minute in all):
# scheduling throughput, the simulator over time, elastic quotas with preemption, `packsched serve` live.
bench: $(STAMP)
	$(BIN)/python bench/bench_schedule.py
	$(BIN)/python bench/bench_timeline.py
	$(BIN)/python bench/bench_quotas.py
	$(BIN)/python bench/bench_live.py

# The GPU trace replay (needs the Alibaba trace under ../shared/data/alibaba-gpu-v2023).
bench-replay: $(STAMP)
	$(BIN)/python bench/bench_replay.py

# kube-scheduler's scheduler_perf workloads at 500 and 5,000 nodes, and SchedulingBasic at 50,000 (issue 10);
# each case in its own process. Options: PERF_ARGS="--workloads SchedulingBasic --sizes 5000 --repeat 3 -o json".
bench-perf: $(STAMP)
	$(BIN)/python bench/scheduler_perf.py $(PERF_ARGS)

clean:
	rm -rf $(VENV) build *.egg-info src/*.egg-info .pytest_cache .mypy_cache .ruff_cache .coverage .coverage.* htmlcov

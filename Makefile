# packsched: two commands do everything (see README.md): `make demo` and `make test`.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
CODE := src tests bench conformance

.PHONY: demo test lint typecheck format browser bench bench-replay bench-perf bench-fullpass bench-live-start bench-requests conformance clean

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

# The HTML report's browser test (tests/sim/test_html_report.py) drives Debian's chromium with selenium: installed
# here with apt-get when missing (as root, or with a password-less sudo). Where it cannot be, nothing fails here and
# the test is skipped, saying why (PACKSCHED_REQUIRE_BROWSER=1 turns that skip into a failure).
browser:
	@if command -v chromium >/dev/null 2>&1 && command -v chromedriver >/dev/null 2>&1; then :; \
	elif ! command -v apt-get >/dev/null 2>&1; then \
		echo "note: no chromium and no apt-get: the HTML report's browser test will be skipped"; \
	else \
		if [ "$$(id -u)" = 0 ]; then SUDO=; elif sudo -n true 2>/dev/null; then SUDO="sudo -n"; else SUDO=none; fi; \
		if [ "$$SUDO" = none ]; then \
			echo "note: installing chromium needs root: the HTML report's browser test will be skipped"; \
		else \
			echo "installing chromium and chromium-driver (apt-get) for the HTML report's browser test"; \
			{ $$SUDO apt-get update -qq && $$SUDO env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq \
				chromium chromium-driver >/dev/null; } \
			|| echo "warning: apt-get could not install chromium: the HTML report's browser test will be skipped"; \
		fi; \
	fi

# Everything CI runs: lint, typecheck, then the test suite with branch coverage (the floor is in pyproject.toml).
# The suite runs in parallel (pytest-xdist), each test sent to the next free worker: one worker per CPU the process
# may use, 8 at most (more gain little: each collects the suite and makes the module fixtures again).
# TEST_WORKERS=0 runs it in this process (--pdb, or to rule the workers out), TEST_WORKERS=3 on three workers.
TEST_WORKERS ?= auto
test: lint typecheck browser
	$(BIN)/pytest -n $(TEST_WORKERS) --maxprocesses 8 --cov=packsched --cov-branch --cov-report=term:skip-covered

# The benchmarks that need nothing beyond the repository, at their default sizes (about a minute in all):
# scheduling throughput, the simulator over time, elastic quotas with preemption, `packsched serve` live.
bench: $(STAMP)
	$(BIN)/python bench/bench_schedule.py
	$(BIN)/python bench/bench_timeline.py
	$(BIN)/python bench/bench_quotas.py
	$(BIN)/python bench/bench_live.py

# `packsched serve` from process start to its first bind (first log line, lists answered, caches synced, first and
# last bind, pods/s) against the fake API server in a process of its own, 5 ms a write; medians of 3 runs, about a
# minute. Options: LIVE_START_ARGS="--pods 3000 --nodes 200 --runs 3 --serve-src ../other-checkout".
bench-live-start: $(STAMP)
	$(BIN)/python bench/bench_live_start.py $(LIVE_START_ARGS)

# The API client's CPU per request (a bind, an event), one thread against the fake API server, 5 ms a write; medians
# of 3 runs. Options: REQUESTS_ARGS="--requests 2000 --runs 3" (PYTHONPATH=<tree>/src measures another tree).
bench-requests: $(STAMP)
	$(BIN)/python bench/bench_requests.py $(REQUESTS_ARGS)

# The GPU trace replay (needs the Alibaba trace under ../shared/data/alibaba-gpu-v2023).
bench-replay: $(STAMP)
	$(BIN)/python bench/bench_replay.py

# kube-scheduler's scheduler_perf workloads at 500 and 5,000 nodes, and SchedulingBasic at 50,000 (issue 10);
# each case in its own process. Options: PERF_ARGS="--workloads SchedulingBasic --sizes 5000 --repeat 3 -o json".
bench-perf: $(STAMP)
	$(BIN)/python bench/scheduler_perf.py $(PERF_ARGS)

# packsched against a full-pass numpy loop (every node filtered and scored for every pod) on bench_schedule.py's
# cluster, run alternately, three times each, as a ratio (issue 23); about a minute at the default size, so not part
# of `make bench`. Options: FULLPASS_ARGS="--nodes 50000 --pods 5000 --profiles fit,default --profile out/prof".
bench-fullpass: $(STAMP)
	$(BIN)/python bench/bench_vs_fullpass.py $(FULLPASS_ARGS)

# The real kube-scheduler against packsched (issue 22): builds conformance/'s recorder for KUBE (1.34-1.37; needs
# Go 1.26+, caches under .cache/), generates seeded scenarios (or reads SCENARIOS=dir), records kube-scheduler's
# decisions and prints agreement per area and every difference. Never part of `make test`: the recordings it made
# are committed under tests/data/conformance/ and replayed there. See docs/reference/conformance.md.
KUBE ?= 1.35
conformance: $(STAMP)
	$(BIN)/python conformance/run.py --kube $(KUBE) $(if $(SCENARIOS),--scenarios $(SCENARIOS)) $(CONFORMANCE_ARGS)

clean:
	rm -rf $(VENV) build *.egg-info src/*.egg-info .pytest_cache .mypy_cache .ruff_cache .coverage .coverage.* htmlcov

# The two commands a newcomer runs: `make demo` and `make test`. Each creates .venv when it is
# missing (or broken) and reinstalls when pyproject.toml changed.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.agboss-installed

.PHONY: demo test lint typecheck unit bench format crash

$(STAMP): pyproject.toml
	@$(BIN)/python -c 'import sys; assert sys.version_info >= (3, 11)' 2>/dev/null \
		|| { rm -rf $(VENV) && $(PYTHON) -m venv $(VENV); }
	$(BIN)/python -m pip install --quiet --disable-pip-version-check -e '.[dev]'
	@touch $(STAMP)

# `make demo ARGS=--web` answers on the approvals page; ARGS=--parallel runs two desks.
demo: $(STAMP)
	$(BIN)/python -m examples.flow_patterns.approvals $(ARGS)

test: lint typecheck unit

lint: $(STAMP)
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .

typecheck: $(STAMP)
	$(BIN)/mypy src examples bench

unit: $(STAMP)
	$(BIN)/python -m pytest

# Every point of the crash harness (CI's `make test` runs a sample): SIGKILL before and after
# each store write of a pass, SIGSTOP past the lease, on SQLite and (with
# AGBOSS_TEST_POSTGRES_URL, as .ci/postgres.sh sets it) PostgreSQL; prints the counts of trials.
crash: $(STAMP)
	AGBOSS_CRASH_ALL=1 $(BIN)/python -m pytest tests/test_crash.py -s -p no:cacheprovider

format: $(STAMP)
	$(BIN)/ruff format .
	$(BIN)/ruff check --fix .

bench: $(STAMP)
	$(BIN)/python -m pip install --quiet --disable-pip-version-check -e '.[dev,bench]'
	PYTHONPATH=. $(BIN)/python bench/pause_resume.py
	PYTHONPATH=. $(BIN)/python bench/pending_scale.py
	PYTHONPATH=. $(BIN)/python bench/throughput.py

# The two commands a newcomer runs: `make demo` and `make test`. Each creates .venv when it is
# missing (or broken) and reinstalls when pyproject.toml changed.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.agboss-installed

.PHONY: demo test lint typecheck unit bench format

$(STAMP): pyproject.toml
	@$(BIN)/python -c 'import sys; assert sys.version_info >= (3, 11)' 2>/dev/null \
		|| { rm -rf $(VENV) && $(PYTHON) -m venv $(VENV); }
	$(BIN)/python -m pip install --quiet --disable-pip-version-check -e '.[dev]'
	@touch $(STAMP)

demo: $(STAMP)
	$(BIN)/python -m examples.flow_patterns.approvals

test: lint typecheck unit

lint: $(STAMP)
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .

typecheck: $(STAMP)
	$(BIN)/mypy src examples

unit: $(STAMP)
	$(BIN)/python -m pytest

format: $(STAMP)
	$(BIN)/ruff format .
	$(BIN)/ruff check --fix .

bench: $(STAMP)
	$(BIN)/python -m pip install --quiet --disable-pip-version-check -e '.[dev,bench]'
	PYTHONPATH=. $(BIN)/python bench/pause_resume.py
	PYTHONPATH=. $(BIN)/python bench/pending_scale.py

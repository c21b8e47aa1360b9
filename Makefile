# The two commands a newcomer runs: `make demo` and `make test`. Each creates .venv when it is
# missing (or broken) and reinstalls when pyproject.toml changed.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
DEV := $(VENV)/.agboss-dev
DEMO := $(VENV)/.agboss-demo

.PHONY: demo test lint typecheck unit bench format crash

# A venv of Python >= 3.11, made again when it is missing or broken.
define venv
	@$(BIN)/python -c 'import sys; assert sys.version_info >= (3, 11)' 2>/dev/null \
		|| { rm -rf $(VENV) && $(PYTHON) -m venv $(VENV); }
endef

# `make test` installs the whole dev toolchain (which holds what the demo needs too);
# `make demo` only the demo's: the web and command-line extras.
$(DEV): pyproject.toml
	$(venv)
	$(BIN)/python -m pip install --quiet --disable-pip-version-check -e '.[dev]'
	@touch $(DEV) $(DEMO)

$(DEMO): pyproject.toml
	$(venv)
	$(BIN)/python -m pip install --quiet --disable-pip-version-check -e '.[demo]'
	@touch $(DEMO)

# `make demo ARGS=--web` answers on the approvals page; ARGS=--slack in a fake Slack (or
# yours, with its tokens set); ARGS=--parallel runs two desks.
demo: $(DEMO)
	$(BIN)/python -m examples.flow_patterns.approvals $(ARGS)

test: lint typecheck unit

lint: $(DEV)
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .

typecheck: $(DEV)
	$(BIN)/mypy src examples bench

# Three processes share the tests (pytest-xdist; WORKERS=1 for one): this machine has two cores,
# and the tests wait on PostgreSQL, child processes and sockets a good part of their time — a
# third process fills those waits (measured: the suite in 372 s, against 407–514 s with two);
# the tests marked `alone` (they restart the PostgreSQL server every other test uses) run
# after, by themselves. --durations: the slowest tests, so that one that creeps towards its time
# limit is seen. The last line is how long the suite took.
WORKERS ?= 3
unit: $(DEV)
	@start=$$(date +%s); \
	$(BIN)/python -m pytest -n $(WORKERS) -m "not alone" --durations=10 \
		&& $(BIN)/python -m pytest -m alone \
		&& echo "make test: the test suite took $$(( $$(date +%s) - start )) s"

# Every point of the crash harness (CI's `make test` runs a sample): SIGKILL before and after
# each store write of a pass, each commit that skips the disk lost with what followed it,
# SIGSTOP past the lease, on SQLite and (with
# AGBOSS_TEST_POSTGRES_URL, as .ci/postgres.sh sets it) PostgreSQL; prints the counts of trials.
# Every point of a scenario is one test, so each gets a longer limit than the suite's. With it,
# the failures a kill cannot make: a PostgreSQL server restarted mid-tool (where this machine
# may restart it) and a SQLite disk that fills mid-pass (where a tmpfs can be mounted).
crash: $(DEV)
	AGBOSS_CRASH_ALL=1 $(BIN)/python -m pytest tests/test_crash.py tests/store/test_pg_restart.py \
		tests/store/test_disk_full.py -s -p no:cacheprovider -o timeout=1800

format: $(DEV)
	$(BIN)/ruff format .
	$(BIN)/ruff check --fix .

bench: $(DEV)
	$(BIN)/python -m pip install --quiet --disable-pip-version-check -e '.[dev,bench]'
	PYTHONPATH=. $(BIN)/python bench/pause_resume.py
	PYTHONPATH=. $(BIN)/python bench/pending_scale.py
	PYTHONPATH=. $(BIN)/python bench/throughput.py
	PYTHONPATH=. $(BIN)/python bench/provider_cost.py

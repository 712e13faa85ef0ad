# The two commands of the README. Both install whatever is missing first (setup.sh).
SHELL := /bin/bash
VENV := .venv
MCASTLAB := $(VENV)/bin/mcastlab
PYTEST_ARGS ?=
RESULTS ?= results/seed003-scaled-quick
# the tests that need no root, spread over the CPUs (pytest-xdist); see `test`
UNIT_PYTEST := $(VENV)/bin/python -m pytest -m "not netns" -n auto

.PHONY: run test setup lint unit clean-net help

help:
	@echo "make run   - install what is missing, run the quick campaign of the study's matrix on scaled hosts (seed003-scaled --quick) and its report"
	@echo "make test  - install what is missing, run the whole test suite"

setup:
	@./setup.sh --check >/dev/null 2>&1 || ./setup.sh

# The report is written even when some runs failed (it lists them); the exit status is
# the campaign's, or 1 when only the report failed. Finished runs made with another
# configuration are never replaced:
# `make run REDO=1` moves them to $(RESULTS)/superseded/ and redoes them.
run: setup
	@status=0; $(MCASTLAB) run experiments/seed003-scaled.toml --quick --results $(RESULTS) $(if $(REDO),--redo,) || status=$$?; \
	$(MCASTLAB) report $(RESULTS) || { [ $$status -ne 0 ] || status=1; }; \
	echo "results: $(abspath $(RESULTS))"; exit $$status

# The suite in two passes: the tests that need no root (pure logic, analysis) spread over
# the CPUs with pytest-xdist (8 min serially on 2 cores, 4.5 min on two workers), then the
# netns tests one at a time, since they build real networks and measure real traffic on
# this machine. Both passes always run; the status is the first failure's. A pass that
# collects nothing (PYTEST_ARGS naming only tests of the other kind) is not a failure;
# both collecting nothing is (pytest's status 5).
test: setup lint
	@echo "== tests without root, in parallel =="; \
	$(UNIT_PYTEST) $(PYTEST_ARGS); unit=$$?; \
	echo "== netns tests, one at a time =="; \
	$(VENV)/bin/python -m pytest -m netns $(PYTEST_ARGS); netns=$$?; \
	if [ $$unit -eq 5 ] && [ $$netns -eq 5 ]; then exit 5; fi; \
	for rc in $$unit $$netns; do [ $$rc -eq 0 ] || [ $$rc -eq 5 ] || exit $$rc; done

lint:
	$(VENV)/bin/ruff check .

unit: setup
	$(UNIT_PYTEST) $(PYTEST_ARGS)

clean-net:
	$(MCASTLAB) clean

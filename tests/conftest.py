"""Shared fixtures: the example app is synthesized once per test session."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

# Must be set before aws_cdk is imported: skips aws-cdk-lib's built-in template validator
# (cfn-lint runs on every template in tests/test_lint.py instead).
os.environ.setdefault("CDK_VALIDATION", "false")

from collections.abc import Callable, Iterator
from typing import Any

import pytest
from aws_cdk import App, Stack, Validations
from aws_cdk.assertions import Template
from aws_cdk.cx_api import CloudAssembly

from examples.app import build

ROOT = Path(__file__).resolve().parent.parent
CDK_CONTEXT: dict[str, Any] = json.loads((ROOT / "cdk.json").read_text())["context"]
"""The feature flags of cdk.json, so in-process apps synthesize what `cdk synth` does."""


def new_app(**kwargs: Any) -> App:
    """An App with the project's cdk.json context (feature flags)."""
    return App(context=dict(CDK_CONTEXT), **kwargs)


@pytest.fixture(scope="session")
def example_assembly(tmp_path_factory: pytest.TempPathFactory) -> CloudAssembly:
    """The example app, synthesized once, with cdk-nag's AwsSolutions checks applied."""
    from cdk_nag import AwsSolutionsChecks

    app = new_app(outdir=str(tmp_path_factory.mktemp("cdk.out")))
    Validations.of(app).add_plugins(AwsSolutionsChecks(app))
    build(app)
    return app.synth()


@pytest.fixture(scope="session")
def example_templates(example_assembly: CloudAssembly) -> dict[str, dict[str, Any]]:
    """Stack name -> synthesized template (JSON dict)."""
    return {stack.stack_name: stack.template for stack in example_assembly.stacks}


def synth_template(define: Callable[[Stack], Any]) -> Template:
    """Synthesize one throw-away stack built by ``define`` and return its Template."""
    app = new_app()
    stack = Stack(app, "Test")
    define(stack)
    return Template.from_stack(stack)


@pytest.fixture(autouse=True)
def _close_gate_worlds() -> Iterator[None]:
    """Every test that builds a GateWorld (gate and watch tests) gets it closed afterwards:
    moto stopped, so no Step Functions state leaks into the next test."""
    yield
    world = sys.modules.get("tests.support.world")
    if world is not None:
        while world.LIVE:
            world.LIVE.pop().close()

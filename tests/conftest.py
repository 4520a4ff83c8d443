"""Shared fixtures: the example app is synthesized once per test session (once per pytest-xdist
worker); the depth of the long property tests (tests/support/depth.py): a seeded sample, or
every example."""

from __future__ import annotations

import gc
import json
import os
import random
import sys
from pathlib import Path

# Must be set before aws_cdk is imported: skips aws-cdk-lib's built-in template validator
# (cfn-lint runs on every template in tests/test_lint.py instead).
os.environ.setdefault("CDK_VALIDATION", "false")

from collections.abc import Callable, Generator, Iterator
from typing import Any

import pytest

from tests.support import jsii_output

# Before aws_cdk is imported (which starts the jsii kernel): what Node.js prints is written
# within the test that caused it (tests/support/jsii_output.py).
jsii_output.install()

from aws_cdk import App, Stack, Validations  # noqa: E402
from aws_cdk.assertions import Template  # noqa: E402
from aws_cdk.cx_api import CloudAssembly  # noqa: E402

from examples.app import build  # noqa: E402
from tests.support.depth import (  # noqa: E402
    DEEP,
    DEEP_MARK,
    DEPTH_VARIABLE,
    SEED_VARIABLE,
    apply_depth,
    load_hypothesis_profile,
)

ROOT = Path(__file__).resolve().parent.parent
CDK_CONTEXT: dict[str, Any] = json.loads((ROOT / "cdk.json").read_text())["context"]
"""The feature flags of cdk.json, so in-process apps synthesize what `cdk synth` does."""


def _seed() -> str:
    """The seed of this sampled run: HYPERPOD_TEST_SEED, or a new one exported for the pytest-xdist
    workers, which inherit the environment, so that every process draws from the same seed."""
    seed = os.environ.get(SEED_VARIABLE) or str(random.SystemRandom().randrange(1, 10**6))
    os.environ[SEED_VARIABLE] = seed
    return seed


@pytest.hookimpl(tryfirst=True)
def pytest_configure(config: pytest.Config) -> None:
    """Deep: hypothesis derandomized (the same examples as on every machine). Sampled: every
    hypothesis test draws from this run's seed (hypothesis's own ``--hypothesis-seed``, which
    its plugin reads after this hook), so the run replays from the seed it prints."""
    load_hypothesis_profile()
    if not DEEP and config.getoption("hypothesis_seed", None) is None:
        config.option.hypothesis_seed = _seed()


def _depth_line(config: pytest.Config) -> str:
    if DEEP:
        return f"{DEPTH_VARIABLE}=deep: the property tests marked {DEEP_MARK} try every example"
    seed = config.getoption("hypothesis_seed")
    return (
        f"property tests sampled with seed {seed}: {SEED_VARIABLE}={seed} replays them, "
        "make test-deep tries every example"
    )


@pytest.hookimpl(tryfirst=True)
def pytest_sessionstart(session: pytest.Session) -> None:
    """The seed on the first line of the output (the controller's, not the workers'). With
    ``-q`` and output to a file or pipe (``make test`` in CI), pytest-xdist would print its
    worker status ("bringing up nodes...") as lines of their own; pytest prints no header
    there, so neither does xdist."""
    config = session.config
    reporter = config.pluginmanager.get_plugin("terminalreporter")
    if reporter is None or hasattr(config, "workerinput"):
        return
    reporter.write_line(_depth_line(config))
    workers = config.pluginmanager.get_plugin("terminaldistreporter")
    if workers is not None and config.get_verbosity() < 0:
        workers.ensure_show_status = lambda: None


def pytest_terminal_summary(
    terminalreporter: pytest.TerminalReporter, exitstatus: int, config: pytest.Config
) -> None:
    """And again next to the failures, to replay them."""
    if exitstatus == pytest.ExitCode.TESTS_FAILED:
        terminalreporter.write_line(_depth_line(config))


@pytest.hookimpl(trylast=True)
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Sampled: a test marked ``deep(why=...)`` skipped, of each test marked ``deep(sample=k)``
    ``k`` cases drawn from the run's seed (tests/support/depth.py). ``trylast``: drawn from the
    cases ``-k`` or ``-m`` left."""
    if not DEEP:
        apply_depth(items, str(config.getoption("hypothesis_seed")))


def pytest_collection_finish(session: pytest.Session) -> None:
    """What collecting loaded (aws-cdk-lib's, botocore's and moto's modules and models, about a
    million objects that live as long as the process) is frozen out of the garbage collector:
    its full collections during the tests no longer traverse them (3 % of a test process's CPU
    before). Nothing frozen is ever garbage a test expects collected."""
    gc.freeze()


@pytest.hookimpl(wrapper=True, trylast=True)
def pytest_runtest_setup(item: pytest.Item) -> Generator[None, None, None]:
    """Each phase ends with what the jsii kernel printed during it written, while pytest
    captures the phase (or the test's ``capsys`` does): never after the test, outside the
    capture or in the next test's. ``trylast``: inside pytest's own capturing wrapper."""
    try:
        return (yield)
    finally:
        jsii_output.drain()


@pytest.hookimpl(wrapper=True, trylast=True)
def pytest_runtest_call(item: pytest.Item) -> Generator[None, None, None]:
    """See :func:`pytest_runtest_setup`."""
    try:
        return (yield)
    finally:
        jsii_output.drain()


@pytest.hookimpl(wrapper=True, trylast=True)
def pytest_runtest_teardown(item: pytest.Item) -> Generator[None, None, None]:
    """See :func:`pytest_runtest_setup`."""
    try:
        return (yield)
    finally:
        jsii_output.drain()


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

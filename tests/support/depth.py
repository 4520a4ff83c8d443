"""How many examples the long property tests try: a random sample in ``make test``, every
example in ``make test-deep``.

A long property test (many hypothesis examples, each costing a synth or a simulated
deployment) is marked ``@pytest.mark.deep`` and takes its example count from
:func:`examples`:

- **sampled** (the default, ``make test``): a few examples, drawn from a seed that is new on
  every run and printed at the top of the output. ``HYPERPOD_TEST_SEED=<seed>`` replays a
  run (hypothesis draws the same examples from the same seed); each run tries other examples,
  so runs add up.
- **deep** (``HYPERPOD_TEST_DEPTH=deep``; ``make test-deep`` runs the marked tests so): every
  example, derandomized, the same on every machine and every run.

Only the number of examples differs between the two; what each example asserts does not.

A long fixed check (one scenario or install costing many seconds) whose assurance the
sampled run gets from other tests is marked with :func:`deep_only`: ``make test`` skips it,
saying why and which tests cover it there, and ``make test-deep`` runs it as it is
(docs/performance.md lists each).
"""

from __future__ import annotations

import os
from collections.abc import Callable
from typing import Any, TypeVar

import pytest

_Test = TypeVar("_Test", bound=Callable[..., Any])

DEPTH_VARIABLE = "HYPERPOD_TEST_DEPTH"
"""``deep``: the marked tests try every example (``make test-deep``); unset: a sample."""
SEED_VARIABLE = "HYPERPOD_TEST_SEED"
"""The seed of a sampled run (printed at its start); set it to replay that run."""
DEEP_MARK = "deep"
"""The pytest mark of a test whose example count depends on the depth."""

DEEP = os.environ.get(DEPTH_VARIABLE, "") == "deep"
"""Whether this run tries every example."""


def examples(deep: int, sampled: int) -> int:
    """The example count of a marked test: ``deep`` in a deep run, else ``sampled``."""
    if not 0 < sampled <= deep:
        raise ValueError(f"sampled ({sampled}) must be between 1 and deep ({deep})")
    return deep if DEEP else sampled


def deep_only_marks(why: str) -> list[pytest.MarkDecorator]:
    """The marks of a check only ``make test-deep`` runs (for ``pytest.param(marks=...)``):
    :data:`DEEP_MARK`, so that ``-m deep`` selects it, and skipped in a sampled run with
    ``why`` as the reason."""
    if not why:
        raise ValueError("say why the sampled run may skip it")
    reason = f"make test-deep runs it: {why}"
    return [getattr(pytest.mark, DEEP_MARK), pytest.mark.skipif(not DEEP, reason=reason)]


def deep_only(why: str) -> Callable[[_Test], _Test]:
    """:func:`deep_only_marks` on a test function."""

    def mark(test: _Test) -> _Test:
        for marker in deep_only_marks(why):
            test = marker(test)
        return test

    return mark


def load_hypothesis_profile() -> None:
    """Deep: hypothesis derandomized, the same examples on every machine and every run.
    Sampled: random examples; pytest seeds them with the run's seed (tests/conftest.py)."""
    from hypothesis import settings

    settings.register_profile("deep", derandomize=True, database=None)
    settings.register_profile("sampled", derandomize=False)
    settings.load_profile("deep" if DEEP else "sampled")

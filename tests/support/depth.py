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

A long parametrized check (one real ``cdk`` run, browser page or Python process per case) is
marked ``@pytest.mark.deep(sample=k)``: ``make test`` tries ``k`` of its cases, drawn from the
run's seed (another draw in every run, the same in every pytest-xdist worker), and skips the
others, saying so; ``make test-deep`` tries every case (:func:`skip_unsampled`).

A long fixed check (one scenario or install costing many seconds) whose assurance the
sampled run gets from other tests is marked ``@pytest.mark.deep(why="...")`` (or with
:func:`deep_only`, the same mark): ``make test`` skips it,
saying why and which tests cover it there, and ``make test-deep`` runs it as it is
(docs/performance.md lists each).

So every test runs in ``make test``, in ``make test-deep`` (``-m deep``), or in both: a test
``make test`` skips for its depth carries the mark ``make test-deep`` selects
(tests/test_depth.py checks it on the collected suite).
"""

from __future__ import annotations

import os
import random
from collections.abc import Callable, Sequence
from typing import Any, TypeVar

import pytest

_Test = TypeVar("_Test", bound=Callable[..., Any])

DEPTH_VARIABLE = "HYPERPOD_TEST_DEPTH"
"""``deep``: the marked tests try every example (``make test-deep``); unset: a sample."""
SEED_VARIABLE = "HYPERPOD_TEST_SEED"
"""The seed of a sampled run (printed at its start); set it to replay that run."""
DEEP_MARK = "deep"
"""The pytest mark of a test whose example count depends on the depth."""

SAMPLE_ARGUMENT = "sample"
"""The argument of :data:`DEEP_MARK` on a parametrized test: how many of its cases a sampled
run tries (``@pytest.mark.deep(sample=2)``)."""
WHY_ARGUMENT = "why"
"""The argument of :data:`DEEP_MARK` on a check only ``make test-deep`` runs: why ``make test``
may skip it, naming the tests that cover it there (``@pytest.mark.deep(why="...")``)."""
SKIPPED_FOR_DEPTH = "make test-deep runs it: "
"""How the reason of a test a sampled run skips for its depth begins."""

DEEP = os.environ.get(DEPTH_VARIABLE, "") == "deep"
"""Whether this run tries every example."""


def examples(deep: int, sampled: int) -> int:
    """The example count of a marked test: ``deep`` in a deep run, else ``sampled``."""
    if not 0 < sampled <= deep:
        raise ValueError(f"sampled ({sampled}) must be between 1 and deep ({deep})")
    return deep if DEEP else sampled


def deep_only_marks(why: str) -> list[pytest.MarkDecorator]:
    """The marks of a check only ``make test-deep`` runs (for ``pytest.param(marks=...)``):
    ``@pytest.mark.deep(why=why)``, which ``-m deep`` selects and a sampled run skips with
    ``why`` in the reason (:func:`apply_depth`)."""
    if not why:
        raise ValueError("say why the sampled run may skip it")
    return [getattr(pytest.mark, DEEP_MARK)(**{WHY_ARGUMENT: why})]


def deep_only(why: str) -> Callable[[_Test], _Test]:
    """:func:`deep_only_marks` on a test function."""

    def mark(test: _Test) -> _Test:
        for marker in deep_only_marks(why):
            test = marker(test)
        return test

    return mark


def sampled_cases(test: str, cases: Sequence[str], keep: int, seed: str) -> set[str]:
    """The ``keep`` of a test's ``cases`` (their ids) that a sampled run tries, drawn from the
    run's ``seed`` and the test's id: the same draw in every process of the run."""
    if keep < 1:
        raise ValueError(f"{test}: a sample of {keep} cases tries none")
    draw = random.Random(f"{seed}/{test}")
    return set(draw.sample(sorted(cases), min(keep, len(cases))))


def apply_depth(items: Sequence[pytest.Item], seed: str) -> None:
    """In a sampled run: a test marked ``deep(why=...)`` is skipped with its reason; of every
    test marked ``deep(sample=k)``, the cases outside its sample (:func:`sampled_cases`) are
    skipped, with the size of the sample as the reason."""
    tests: dict[str, list[pytest.Item]] = {}
    for item in items:
        mark = item.get_closest_marker(DEEP_MARK)
        if mark is not None and WHY_ARGUMENT in mark.kwargs:
            item.add_marker(pytest.mark.skip(reason=SKIPPED_FOR_DEPTH + mark.kwargs[WHY_ARGUMENT]))
        elif mark is not None and SAMPLE_ARGUMENT in mark.kwargs:
            tests.setdefault(item.nodeid.split("[", 1)[0], []).append(item)
    for test, cases in tests.items():
        mark = cases[0].get_closest_marker(DEEP_MARK)
        assert mark is not None
        keep = mark.kwargs[SAMPLE_ARGUMENT]
        chosen = sampled_cases(test, [case.nodeid for case in cases], keep, seed)
        reason = (
            f"{SKIPPED_FOR_DEPTH}make test tries {len(chosen)} of the {len(cases)} cases of "
            "this test, drawn from the run's seed"
        )
        for case in cases:
            if case.nodeid not in chosen:
                case.add_marker(pytest.mark.skip(reason=reason))


def load_hypothesis_profile() -> None:
    """Deep: hypothesis derandomized, the same examples on every machine and every run.
    Sampled: random examples; pytest seeds them with the run's seed (tests/conftest.py)."""
    from hypothesis import settings

    settings.register_profile("deep", derandomize=True, database=None)
    settings.register_profile("sampled", derandomize=False)
    settings.load_profile("deep" if DEEP else "sampled")

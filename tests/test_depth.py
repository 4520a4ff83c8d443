"""The depth of the suite (tests/support/depth.py): a check marked ``deep_only`` is selected by
``make test-deep`` (``-m deep``) and skipped by ``make test`` with its reason; of a test marked
``deep(sample=k)`` ``make test`` tries ``k`` cases; every test the sampled run skips for its depth
is one ``make test-deep`` selects; docs/performance.md lists exactly the checks marked so."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

from tests.support import depth

ROOT = Path(__file__).resolve().parent.parent
PERFORMANCE = ROOT / "docs" / "performance.md"


def test_a_deep_only_check_carries_the_deep_mark_with_its_reason() -> None:
    (mark,) = depth.deep_only_marks("covered by test_x")
    assert mark.name == depth.DEEP_MARK
    assert mark.kwargs == {depth.WHY_ARGUMENT: "covered by test_x"}


def test_deep_only_marks_a_test_function_so() -> None:
    @depth.deep_only("covered by test_x")
    def test_long() -> None: ...

    (mark,) = test_long.pytestmark  # type: ignore[attr-defined]
    assert (mark.name, mark.kwargs) == (depth.DEEP_MARK, {depth.WHY_ARGUMENT: "covered by test_x"})


@pytest.mark.deep(why="this module's example of a check only make test-deep runs")
def test_a_sampled_run_skips_a_deep_only_check_with_its_reason() -> None:
    assert depth.DEEP, "make test skips this test (tests/conftest.py: depth.apply_depth)"


def test_a_deep_only_check_says_why() -> None:
    with pytest.raises(ValueError, match="say why"):
        depth.deep_only_marks("")


def test_a_sample_is_drawn_from_the_seed_and_the_test() -> None:
    cases = [f"tests/test_x.py::test_y[{n}]" for n in range(10)]
    draws = {
        frozenset(depth.sampled_cases("tests/test_x.py::test_y", cases, 3, str(seed)))
        for seed in range(20)
    }
    assert all(len(draw) == 3 and draw <= set(cases) for draw in draws)
    assert len(draws) > 1, "another seed, another sample"
    again = depth.sampled_cases("tests/test_x.py::test_y", list(reversed(cases)), 3, "0")
    assert again == depth.sampled_cases("tests/test_x.py::test_y", cases, 3, "0")
    assert depth.sampled_cases("t", cases[:2], 3, "0") == set(cases[:2])
    with pytest.raises(ValueError, match="tries none"):
        depth.sampled_cases("t", cases, 0, "0")


def _skipped_for_depth(item: pytest.Item) -> bool:
    """Whether a sampled run skips the test for its depth (tests/support/depth.py's reasons)."""
    return any(
        str(mark.kwargs.get("reason", "")).startswith(depth.SKIPPED_FOR_DEPTH)
        for mark in item.iter_markers("skip")
    )


@pytest.mark.deep(sample=1)
@pytest.mark.parametrize("case", ["a", "b", "c"])
def test_a_sampled_run_tries_one_case_of_a_test_marked_so(
    case: str, request: pytest.FixtureRequest
) -> None:
    test = request.node.nodeid.split("[", 1)[0]
    cases = [item for item in request.session.items if item.nodeid.split("[", 1)[0] == test]
    running = [item for item in cases if not _skipped_for_depth(item)]
    assert len(cases) == 3
    assert running == (cases if depth.DEEP else [request.node])


def test_every_test_runs_in_make_test_or_in_make_test_deep(request: pytest.FixtureRequest) -> None:
    """The suite as this run collected it: a test ``make test`` skips for its depth carries the
    mark ``make test-deep`` selects (``-m deep``); every other test runs in ``make test`` (those
    marked ``deep`` and not skipped, in both by design)."""
    skipped = [item for item in request.session.items if _skipped_for_depth(item)]
    assert [item.nodeid for item in skipped if not item.get_closest_marker(depth.DEEP_MARK)] == []
    if not depth.DEEP:
        own = {item.name for item in skipped if item.path == request.path}
        assert "test_a_sampled_run_skips_a_deep_only_check_with_its_reason" in own
        assert len(own) == 3, "and two cases of the sampled example"


def _called(node: ast.AST, name: str) -> list[ast.Call]:
    return [
        call
        for call in ast.walk(node)
        if isinstance(call, ast.Call)
        and isinstance(call.func, ast.Name | ast.Attribute)
        and (call.func.id if isinstance(call.func, ast.Name) else call.func.attr) == name
    ]


def _marks_deep(node: ast.AST, helper: str) -> bool:
    """``pytest.mark.deep(why=...)``, ``pytest.mark.deep(sample=...)`` or a call of ``helper``
    (tests/support/depth.py) in ``node``."""
    arguments = {depth.WHY_ARGUMENT, depth.SAMPLE_ARGUMENT}
    return bool(_called(node, helper)) or any(
        {keyword.arg for keyword in call.keywords} & arguments
        for call in _called(node, depth.DEEP_MARK)
    )


def _marked() -> set[str]:
    """The ids of the checks marked ``deep(why=...)`` (``deep_only``) or ``deep(sample=k)`` in
    the test modules (this one's examples aside): a function decorated so, a ``pytest.param``
    of a function's parametrize with the marks, or a module whose ``pytestmark`` is the mark."""
    found: set[str] = set()
    for path in sorted((ROOT / "tests").rglob("test_*.py")):
        if path == Path(__file__):
            continue  # its own examples
        tree = ast.parse(path.read_text())
        module = path.relative_to(ROOT).as_posix()
        for statement in tree.body:
            targets = statement.targets if isinstance(statement, ast.Assign) else []
            module_mark = [t for t in targets if isinstance(t, ast.Name) and t.id == "pytestmark"]
            if module_mark and _marks_deep(statement, "deep_only_marks"):
                found.add(module)
        for function in ast.walk(tree):
            if not isinstance(function, ast.FunctionDef | ast.AsyncFunctionDef):
                continue
            for decorator in function.decorator_list:
                if _marks_deep(decorator, "deep_only"):
                    found.add(f"{module}::{function.name}")
                for param in _called(decorator, "param"):
                    if _called(param, "deep_only_marks"):
                        (value, *_) = param.args
                        assert isinstance(value, ast.Constant), ast.unparse(param)
                        found.add(f"{module}::{function.name}[{value.value}]")
    return found


def test_the_performance_page_lists_every_check_make_test_skips_or_samples() -> None:
    listed = set(re.findall(r"^\s*\| `(tests/[^`]+)`", PERFORMANCE.read_text(), re.MULTILINE))
    marked = _marked()
    assert marked, (
        "no check is marked deep(why=...) or deep(sample=k): drop this test and the tables"
    )
    assert listed == marked

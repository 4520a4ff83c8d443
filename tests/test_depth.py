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


def test_a_deep_only_check_is_selected_by_the_deep_run_and_skipped_by_a_sampled_one() -> None:
    deep, skip = depth.deep_only_marks("covered by test_x")
    assert deep.name == depth.DEEP_MARK
    assert skip.name == "skipif"
    assert skip.args == (not depth.DEEP,)
    assert skip.kwargs["reason"] == "make test-deep runs it: covered by test_x"


def test_deep_only_marks_a_test_function_so() -> None:
    @depth.deep_only("covered by test_x")
    def test_long() -> None: ...

    marks = {mark.name: mark for mark in test_long.pytestmark}  # type: ignore[attr-defined]
    assert set(marks) == {depth.DEEP_MARK, "skipif"}
    assert marks["skipif"].kwargs["reason"] == "make test-deep runs it: covered by test_x"


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
    for mark in item.iter_markers():
        applies = mark.name == "skip" or (mark.name == "skipif" and mark.args == (True,))
        if applies and str(mark.kwargs.get("reason", "")).startswith(depth.SKIPPED_FOR_DEPTH):
            return True
    return False


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
        assert skipped, "this module's own sampled test skips two cases"


def _called(node: ast.AST, name: str) -> list[ast.Call]:
    return [
        call
        for call in ast.walk(node)
        if isinstance(call, ast.Call)
        and isinstance(call.func, ast.Name | ast.Attribute)
        and (call.func.id if isinstance(call.func, ast.Name) else call.func.attr) == name
    ]


def _marked() -> set[str]:
    """The ids of the checks marked ``deep_only`` in the test modules (this one's examples
    aside): a function decorated with it, or a ``pytest.param`` of a function's parametrize
    with its marks."""
    found: set[str] = set()
    for path in sorted((ROOT / "tests").rglob("test_*.py")):
        if path == Path(__file__):
            continue  # its own examples
        tree = ast.parse(path.read_text())
        module = path.relative_to(ROOT).as_posix()
        for function in ast.walk(tree):
            if not isinstance(function, ast.FunctionDef | ast.AsyncFunctionDef):
                continue
            for decorator in function.decorator_list:
                if _called(decorator, "deep_only"):
                    found.add(f"{module}::{function.name}")
                for param in _called(decorator, "param"):
                    if _called(param, "deep_only_marks"):
                        (value, *_) = param.args
                        assert isinstance(value, ast.Constant), ast.unparse(param)
                        found.add(f"{module}::{function.name}[{value.value}]")
    return found


def test_the_performance_page_lists_every_deep_only_check() -> None:
    listed = set(re.findall(r"^\s*\| `(tests/[^`]+)`", PERFORMANCE.read_text(), re.MULTILINE))
    marked = _marked()
    assert marked, "no check is marked deep_only: drop this test and the table"
    assert listed == marked

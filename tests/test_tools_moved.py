"""The tools' old import paths (``hyperpod_constructs.plan``, ...): deprecated aliases of their
packages under ``hyperpod_constructs.tools`` (docs/versioning.md). Each name read through an
old path is the new path's very object, with a ``DeprecationWarning`` that names the new path
at the line that reads it. The list of aliases is derived: the public sub-packages under
``tools`` (``_SUBPACKAGES``), each with its old top-level module."""

from __future__ import annotations

import importlib
import subprocess
import sys
from pathlib import Path

import pytest

import hyperpod_constructs

ROOT = Path(hyperpod_constructs.__file__).parent
MOVED = [name for name in hyperpod_constructs._SUBPACKAGES if name.startswith(".tools.")]
"""The tools' public packages, by their new path (``.tools.plan``)."""


def _old(new: str) -> str:
    return "hyperpod_constructs." + new.removeprefix(".tools.")


def test_every_tool_keeps_its_old_path_and_only_those() -> None:
    aliases = {
        f"hyperpod_constructs.{path.stem}"
        for path in ROOT.glob("*.py")
        if "moved_attribute" in path.read_text(encoding="utf-8")
    }
    assert MOVED, "no tool is listed under .tools in _SUBPACKAGES"
    assert aliases == {_old(new) for new in MOVED}


@pytest.mark.parametrize("new", MOVED)
def test_an_old_path_gives_the_same_objects_with_a_warning(new: str) -> None:
    current = importlib.import_module(new, "hyperpod_constructs")
    old = importlib.import_module(_old(new))
    names = list(getattr(current, "__all__", []))
    if names:
        with pytest.warns(DeprecationWarning, match=rf"import __all__ from {current.__name__}"):
            assert old.__all__ == names
    for name in names:
        with pytest.warns(DeprecationWarning) as record:
            value = getattr(old, name)
        assert value is getattr(current, name)
        assert [str(w.message) for w in record] == [
            f"{old.__name__} is deprecated: import {name} from {current.__name__} "
            "(the command line is unchanged)"
        ]
        assert {w.filename for w in record} == {__file__}, "the warning points at the reader"
    with pytest.raises(AttributeError, match=rf"\(moved to {current.__name__}\)"):
        old.no_such_name  # noqa: B018


def test_an_old_path_is_not_a_package() -> None:
    """A module below an old path is not loaded a second time under the old name (its
    classes would differ from the new path's): the alias forwards no ``__path__``."""
    from hyperpod_constructs import plan

    with pytest.raises(AttributeError):
        plan.__path__  # noqa: B018
    with pytest.raises(ModuleNotFoundError):
        importlib.import_module("hyperpod_constructs.plan.model")


def test_an_import_from_an_old_path_warns_at_the_importing_line() -> None:
    """``from hyperpod_constructs.plan import plan_stack`` in a user's script: the warning is
    shown by Python's default filters (it points at ``__main__``) and names the new path."""
    result = subprocess.run(
        [sys.executable, "-c", "from hyperpod_constructs.plan import plan_stack"],
        capture_output=True,
        text=True,
        cwd=ROOT.parent,
        check=False,
    )
    assert result.returncode == 0, result.stderr
    assert "<string>:1: DeprecationWarning: hyperpod_constructs.plan is deprecated: import " in (
        result.stderr
    )
    assert "from hyperpod_constructs.tools.plan" in result.stderr

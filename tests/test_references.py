"""What the package names is there: every module-level constant is read somewhere, and every
module or file a docstring or a docs page names exists."""

from __future__ import annotations

import ast
import re
from collections import Counter
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
PACKAGE = REPO / "hyperpod_constructs"
READERS = ("hyperpod_constructs", "tests", "examples", "bench", "integ")
"""Where a constant may be read: the package and everything that imports it."""
CONSTANT = re.compile(r"_?[A-Z][A-Z0-9_]*")
GENERATED = {PACKAGE / "_aws" / "model.py"}
"""Written by a generator, which records its input there (``BOTOCORE_VERSION``)."""
UNREAD_IN_THE_ASSET = {
    "_runtime/hyperpod_gate/decision.py": {"_WAITING_GROUP_STATUSES"},
    "_runtime/hyperpod_gate/httpput.py": {"PUT_WORST_CASE"},
}
"""Unread, but in the gate's Lambda asset, whose hash (in every snapshot) changes with any
edit: removed with the next change to the Lambda code."""


def python_files(*folders: str) -> list[Path]:
    return sorted(p for folder in folders for p in (REPO / folder).rglob("*.py"))


def module_constants(path: Path) -> set[str]:
    """The UPPER_CASE names a module assigns at its top level."""
    names: set[str] = set()
    for node in ast.parse(path.read_text(encoding="utf-8")).body:
        targets = node.targets if isinstance(node, ast.Assign) else []
        if isinstance(node, ast.AnnAssign):
            targets = [node.target]
        names |= {t.id for t in targets if isinstance(t, ast.Name) and CONSTANT.fullmatch(t.id)}
    return names - {"__all__"}


def reads(source: str) -> Counter[str]:
    """The names a module reads: a bare name or an attribute, in a load (not an import, not a
    string in ``__all__``)."""
    counts: Counter[str] = Counter()
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load):
            counts[node.id] += 1
        elif isinstance(node, ast.Attribute) and isinstance(node.ctx, ast.Load):
            counts[node.attr] += 1
    return counts


def unread_constants() -> dict[str, set[str]]:
    read: Counter[str] = Counter()
    for path in python_files(*READERS):
        read += reads(path.read_text(encoding="utf-8"))
    unread = {}
    for path in python_files("hyperpod_constructs"):
        if path in GENERATED:
            continue
        names = {name for name in module_constants(path) if not read[name]}
        if names:
            unread[path.relative_to(PACKAGE).as_posix()] = names
    return unread


def test_every_constant_is_read() -> None:
    assert unread_constants() == UNREAD_IN_THE_ASSET


def test_an_unread_constant_is_found() -> None:
    source = "A = 1\nB: int = A\n_C = 2\nprint(B)\nimport x.D\n__all__ = ['_C']\n"
    assert reads(source)["A"] == 1 and not reads(source)["_C"] and not reads(source)["D"]
    assert module_constants(PACKAGE / "_core" / "limits.py") >= {"MAX_PARTITION_LENGTH"}

"""A griffe extension (mkdocstrings, mkdocs.yml): every public attribute of a class on its page.

- The attributes a class sets in any of its methods, not only in ``__init__``.

griffe documents ``self.<name> = ...`` only where ``__init__`` assigns it. A construct that
builds its parts in steps sets some in the step's method (``MinCountGate.topic``, set by
``_add_topic`` when ``create_notification_topic=True``), and those were on no API page. This
extension adds, for each such assignment to a public name the class does not already have, an
instance attribute with the assignment's annotation and the docstring that follows it (as
griffe reads one in ``__init__``).
- A member without a docstring that overrides a documented one of a base class in the package
  (a policy rule's ``check``) takes the base's docstring.
- The constants of a class (an enum's members, ``HyperPodInstanceType.ML_P5_48XLARGE``, a
  policy rule's ``RULE_ID``) without a docstring of their own are listed in a table in the
  class's description, with their values.

tests/test_docs_site.py fails when a public attribute of a public class is on no API page.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Iterator
from typing import Any

import griffe

PACKAGE = "hyperpod_constructs"


CONSTANT = re.compile(r"^[A-Z][A-Z0-9_]*$")
FIELD = re.compile(r"^:\w", re.MULTILINE)
"""The first Sphinx field (``:param x:``) of a docstring: the constants' table goes before it."""


class MethodAttributes(griffe.Extension):
    """Adds the attributes assigned to ``self`` in a class's methods other than ``__init__``,
    the docstrings of overridden members and the table of a class's constants."""

    def on_package(self, *, pkg: griffe.Module, **kwargs: Any) -> None:
        if pkg.name == PACKAGE:
            for cls in _classes(pkg):
                _inherit_docstrings(cls)
                _list_constants(cls)

    def on_class_members(
        self, *, node: ast.AST | griffe.ObjectNode, cls: griffe.Class, **kwargs: Any
    ) -> None:
        if not isinstance(node, ast.ClassDef) or not cls.path.startswith(PACKAGE):
            return
        for method in node.body:
            if isinstance(method, ast.FunctionDef) and method.name != "__init__":
                for statement, docstring in _assignments(method.body):
                    _add(cls, statement, docstring)


def self_attributes(statement: ast.stmt) -> list[str]:
    """The public names a statement assigns on ``self`` (``self.topic = ...``)."""
    if isinstance(statement, ast.Assign):
        targets = statement.targets
    elif isinstance(statement, ast.AnnAssign):
        targets = [statement.target]
    else:
        return []
    return [
        target.attr
        for target in targets
        if isinstance(target, ast.Attribute)
        and isinstance(target.value, ast.Name)
        and target.value.id == "self"
        and not target.attr.startswith("_")
    ]


def _assignments(body: list[ast.stmt]) -> Iterator[tuple[ast.stmt, str | None]]:
    """Each statement of a block and of its nested blocks (``if``, ``with``, ``for``, ``try``;
    not nested functions), with the docstring that follows it."""
    for index, statement in enumerate(body):
        following = body[index + 1] if index + 1 < len(body) else None
        yield statement, _docstring(following)
        if isinstance(statement, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            continue
        for field in ("body", "orelse", "finalbody", "handlers"):
            block = getattr(statement, field, None)
            if isinstance(block, list) and block and isinstance(block[0], ast.stmt):
                yield from _assignments(block)
            elif isinstance(block, list):
                for handler in block:
                    if isinstance(handler, ast.ExceptHandler):
                        yield from _assignments(handler.body)


def _docstring(statement: ast.stmt | None) -> str | None:
    if (
        isinstance(statement, ast.Expr)
        and isinstance(statement.value, ast.Constant)
        and isinstance(statement.value.value, str)
    ):
        return statement.value.value
    return None


def _add(cls: griffe.Class, statement: ast.stmt, docstring: str | None) -> None:
    for name in self_attributes(statement):
        existing = cls.members.get(name)
        if existing is not None and (existing.docstring is not None or docstring is None):
            continue  # set in __init__ or at class level, or a second assignment
        annotation = None
        if isinstance(statement, ast.AnnAssign):
            annotation = griffe.safe_get_annotation(statement.annotation, parent=cls)
        elif isinstance(statement, ast.Assign) and isinstance(statement.value, ast.Call):
            annotation = griffe.safe_get_annotation(statement.value.func, parent=cls)
        attribute = griffe.Attribute(
            name,
            annotation=annotation,
            lineno=statement.lineno,
            endlineno=statement.end_lineno,
            docstring=None
            if docstring is None
            else griffe.Docstring(docstring, lineno=statement.lineno, parent=None),
        )
        attribute.labels.add("instance-attribute")
        cls.set_member(name, attribute)
        if attribute.docstring is not None:
            attribute.docstring.parent = attribute


def _classes(module: griffe.Module) -> Iterator[griffe.Class]:
    """The classes a module and its sub-modules define (not those they import)."""
    for member in module.members.values():
        if isinstance(member, griffe.Module):
            yield from _classes(member)
        elif isinstance(member, griffe.Class):
            yield member


def _inherit_docstrings(cls: griffe.Class) -> None:
    for name, member in cls.members.items():
        if isinstance(member, griffe.Alias) or member.docstring is not None:
            continue
        if name.startswith("_"):
            continue
        for base in cls.mro():
            documented = base.members.get(name)
            if documented is not None and documented.docstring is not None:
                member.docstring = griffe.Docstring(
                    documented.docstring.value, lineno=member.lineno, parent=member
                )
                break


def constant_value(expression: str) -> str:
    """How the table shows a constant's value: a literal as written; a call that names its
    value first (``_gpu("ml.p5.48xlarge", 8)``), that name; anything else as written."""
    try:
        node = ast.parse(expression, mode="eval").body
    except SyntaxError:
        return expression
    if (
        isinstance(node, ast.Call)
        and node.args
        and isinstance(node.args[0], ast.Constant)
        and isinstance(node.args[0].value, str)
    ):
        return repr(node.args[0].value)
    return expression


def _list_constants(cls: griffe.Class) -> None:
    rows = [
        f"| `{name}` | `{constant_value(str(member.value))}` |"
        for name, member in cls.members.items()
        if CONSTANT.match(name)
        and not member.is_alias
        and isinstance(member, griffe.Attribute)
        and member.docstring is None
        and member.value is not None
    ]
    if not rows:
        return
    table = "\n".join(["| Member | Value |", "|---|---|", *rows])
    if cls.docstring is None:
        cls.docstring = griffe.Docstring(table, lineno=cls.lineno, parent=cls)
        return
    text = cls.docstring.value
    field = FIELD.search(text)
    at = field.start() if field else len(text)
    cls.docstring.value = f"{text[:at].rstrip()}\n\n{table}\n\n{text[at:]}".rstrip()

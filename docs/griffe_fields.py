"""A griffe extension (mkdocstrings, mkdocs.yml): a factory's parameters described once, on the
fields they fill.

``InstanceGroup.compute(name, *, instance_type, ...)`` and its siblings take the fields of the
value they build; each field carries its docstring (``instance_type: HyperPodInstanceType``
followed by ``\"\"\"...\"\"\"``). A method's parameter without a ``:param name:`` of its own gets
the docstring of the class's attribute of that name, so the API reference describes every
parameter of every factory without the same sentence written in three places.
"""

from __future__ import annotations

from typing import Any

import griffe

PACKAGE = "hyperpod_constructs"


class FieldParameters(griffe.Extension):
    """Adds ``:param name:`` lines, from the class's attributes, to its methods' docstrings."""

    def on_package(self, *, pkg: griffe.Module, **kwargs: Any) -> None:
        if pkg.name == PACKAGE:
            _walk(pkg, seen=set())


def _walk(obj: griffe.Object | griffe.Alias, seen: set[str]) -> None:
    if obj.is_alias or obj.path in seen:
        return
    seen.add(obj.path)
    if isinstance(obj, griffe.Class):
        _describe_methods(obj)
        _show_defaults(obj)
    for member in obj.members.values():
        _walk(member, seen)


def _field_docs(cls: griffe.Class) -> dict[str, str]:
    """Attribute name -> its docstring, of the class and of its bases in this package."""
    found: dict[str, str] = {}
    for base in reversed([cls, *cls.mro()]):
        for name, member in base.members.items():
            if member.is_alias or not member.is_attribute or member.docstring is None:
                continue
            found[name] = member.docstring.value
    return found


def _describe_methods(cls: griffe.Class) -> None:
    fields = _field_docs(cls)
    for name, member in cls.members.items():
        if member.is_alias or not isinstance(member, griffe.Function):
            continue
        if name.startswith("_") or member.docstring is None:
            continue
        docstring = member.docstring
        added = [
            f":param {parameter.name}: {_indented(fields[parameter.name])}"
            for parameter in member.parameters
            if parameter.name in fields and f":param {parameter.name}:" not in docstring.value
        ]
        if added:
            docstring.value = "\n\n".join([docstring.value.rstrip(), "\n".join(added)])


def _show_defaults(cls: griffe.Class) -> None:
    """A dataclass field declared ``field(default=..., metadata=...)`` shows its default (or
    nothing, when it has none): the metadata is the library's (``InstanceGroup``'s table of
    fields), not the user's."""
    for member in cls.members.values():
        value = None if member.is_alias else getattr(member, "value", None)
        if not isinstance(value, griffe.ExprCall) or str(value.function) != "field":
            continue
        keywords = {a.name: a.value for a in value.arguments if isinstance(a, griffe.ExprKeyword)}
        if "metadata" in keywords and "default_factory" not in keywords:
            member.value = keywords.get("default")  # type: ignore[union-attr]


def _indented(text: str) -> str:
    """A multi-line field docstring as the continuation of a ``:param:`` line."""
    return "\n    ".join(line.strip() for line in text.strip().splitlines())

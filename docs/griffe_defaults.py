"""A griffe extension (mkdocstrings, mkdocs.yml): each parameter's real default in the API
reference's Default column.

An optional parameter whose default is computed (``cluster_name=None``: "Default: derived from
the construct path") shows ``None`` in the signature, which is not what a user gets. Where a
parameter's description states its default (``:param x: ... Default: <what>.``), the Default
column shows that text instead. Runs after the other extensions, which edit the docstrings'
text, because it reads them parsed.
"""

from __future__ import annotations

import re
from typing import Any

import griffe

PACKAGE = "hyperpod_constructs"
STATED_DEFAULT = re.compile(
    r"\bDefault:\s*(?P<default>.+?)(?:(?<!\bi\.e)(?<!\be\.g)\.\s+(?=[A-Z`])|\.?\s*$)",
    re.DOTALL,
)
"""``Default: <what>.`` in a parameter's description: up to the end of its sentence (a period
before a capital letter or the end; not the one of "i.e.")."""
REFERENCE = re.compile(r"\[(?P<text>[^\]]+)\]\[[^\]]*\]")
"""A cross-reference (``[`Name`][path]``): the Default column shows its text only."""


class StatedDefaults(griffe.Extension):
    """Sets the parsed default of every parameter whose description states one."""

    def on_package(self, *, pkg: griffe.Module, **kwargs: Any) -> None:
        if pkg.name == PACKAGE:
            _walk(pkg, seen=set())


def stated_default(description: str) -> str | None:
    """The default a parameter's description states (``None`` when it states none)."""
    match = STATED_DEFAULT.search(description)
    if match is None:
        return None
    text = REFERENCE.sub(lambda found: found["text"], match["default"])
    return " ".join(text.replace("`", "").split())


def _walk(obj: griffe.Object | griffe.Alias, seen: set[str]) -> None:
    if obj.is_alias or obj.path in seen:
        return
    seen.add(obj.path)
    if isinstance(obj, griffe.Function | griffe.Class) and obj.docstring is not None:
        _state_defaults(obj.docstring)
    for member in obj.members.values():
        _walk(member, seen)


def _state_defaults(docstring: griffe.Docstring) -> None:
    for section in docstring.parsed:
        if section.kind is not griffe.DocstringSectionKind.parameters:
            continue
        for parameter in section.value:
            default = stated_default(parameter.description)
            if default is not None:
                parameter.default = default

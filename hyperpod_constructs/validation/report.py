"""What each cluster's node validation reported, kept in Python so that the report of a
failing synth (:mod:`hyperpod_constructs.reporting`) is printed from the findings themselves,
with the warnings no one else prints then, instead of parsed from the error text jsii hands
back."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from .finding import Finding

if TYPE_CHECKING:
    from constructs import IConstruct


@dataclass(frozen=True)
class Reported:
    """One construct's latest validation: its errors (which fail the synth) and the warnings
    and other annotations (a policy's, the gate's) a failing synth would never show."""

    path: str
    errors: tuple[str, ...]
    warnings: tuple[str, ...]


_REPORTED: dict[int, tuple[object, dict[str, Reported]]] = {}
"""By app (the ``id`` of its root, kept alive with it), then by construct path."""


def record_findings(
    construct: IConstruct,
    errors: Sequence[Finding],
    warnings: Sequence[Finding],
    *,
    other_errors: Sequence[str] = (),
    other_warnings: Sequence[str] = (),
) -> None:
    """Remember what ``construct`` reported in its latest validation, as printed lines."""
    root = construct.node.root
    path = construct.node.path
    by_path = _REPORTED.setdefault(id(root), (root, {}))[1]
    line = f"[{path}] {{}}".format
    by_path[path] = Reported(
        path,
        errors=(*(line(f.message()) for f in errors), *map(line, other_errors)),
        warnings=(*(line(f.message()) for f in warnings), *map(line, other_warnings)),
    )


def reported_in(text: str) -> list[Reported]:
    """The records of the app whose failure ``text`` is: every app with an error line in
    ``text`` (or, when none has, the one app that recorded anything), in reporting order."""
    apps = [by_path for _, by_path in _REPORTED.values()]
    failing = [
        by_path
        for by_path in apps
        if any(error in text for record in by_path.values() for error in record.errors)
    ]
    if not failing and len(apps) == 1:
        failing = apps
    return [record for by_path in failing for record in by_path.values()]


def forget() -> None:
    """Drop every record (after a report was printed)."""
    _REPORTED.clear()

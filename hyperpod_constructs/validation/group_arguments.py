"""The types of an instance group's fields (rule ``HP-ARG-TYPE``). Pure: a group in, findings
out. Counts, names and identifiers have their own rules (they report wrong types too); this
module runs the type checks the table of group fields declares (``GROUP_FIELDS``, each
field's ``check``: an instance type, a node type, lists of checks and storage, a role,
lifecycle scripts, the network override, scheduled updates), so the other rules never crash."""

from __future__ import annotations

from typing import TYPE_CHECKING

from .._core.finding import Finding
from ..instance_group import GROUP_FIELDS

if TYPE_CHECKING:
    from ..instance_group import InstanceGroup


def label(group: InstanceGroup) -> str | None:
    """The group's name for messages (None when it is not a string)."""
    return group.name if isinstance(group.name, str) else None


def group_argument_findings(group: InstanceGroup) -> list[Finding]:
    """Wrong types in the fields other rules read; empty when every such field is usable."""
    name = label(group)
    return [
        finding
        for field in GROUP_FIELDS
        if field.check is not None
        for finding in field.check(field.parameter, getattr(group, field.keyword), name)
    ]

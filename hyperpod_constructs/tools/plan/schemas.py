"""CloudFormation's resource schemas, as cfn-lint ships them: which properties of a resource
type are create-only (a change replaces the resource) and which identify it.

cfn-lint is not a dependency of the library: without it (or for a type its schemas do not
know) the answer is ``None``, and the plan fails closed (a changed resource may be replaced:
"cannot tell"). cfn-lint loads only when a template changes a resource the cluster refers to.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache

_REGION = "us-east-1"
"""The region whose schemas are read (create-only properties do not vary by region)."""
INSTALL_HINT = "pip install cfn-lint"


@dataclass(frozen=True)
class TypeSchema:
    """What plan reads of one resource type's schema."""

    create_only: tuple[str, ...]
    """``createOnlyProperties``: JSON pointers (``/properties/RoleName``)."""
    identifiers: tuple[str, ...]
    """The property names of ``primaryIdentifier`` (``RoleName``)."""


@cache
def type_schema(type_name: str) -> TypeSchema | None:
    """The schema of ``type_name`` (``AWS::IAM::Role``), or None: cfn-lint is not installed or
    does not know the type."""
    try:
        from cfnlint.schema import PROVIDER_SCHEMA_MANAGER  # type: ignore[import-untyped, unused-ignore]
    except ImportError:
        return None
    try:
        schema = PROVIDER_SCHEMA_MANAGER.get_resource_schema(_REGION, type_name).schema
    except Exception:  # cfn-lint's ResourceNotFoundError, or a schema it cannot read
        return None
    create_only = schema.get("createOnlyProperties") or []
    identifiers = schema.get("primaryIdentifier") or []
    return TypeSchema(
        tuple(str(p) for p in create_only),
        tuple(str(p).removeprefix("/properties/") for p in identifiers),
    )


def available() -> bool:
    """cfn-lint's schemas can be read."""
    return type_schema("AWS::IAM::Role") is not None

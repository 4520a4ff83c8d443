"""Whether statements added to a role reach it."""

from __future__ import annotations

from typing import TYPE_CHECKING

from .modules import submodule

if TYPE_CHECKING:
    from aws_cdk import aws_iam as iam
else:  # imported where first used (_cdk/modules.py)
    iam = submodule("aws_iam")


def statements_land(role: iam.IRole) -> bool:
    """After ``role.add_to_principal_policy(...)``: whether the statement reached the role.

    An immutable imported role (``Role.from_role_arn(..., mutable=False)``) reports
    ``statement_added`` but keeps nothing; a mutable imported role gets an ``iam.Policy``
    child (named ``Policy`` or, with newer feature flags, ``Policy<unique id>``), a role of
    this app its ``DefaultPolicy``.
    """
    return isinstance(role, iam.Role) or any(
        isinstance(child, iam.Policy) for child in role.node.children
    )

"""Acknowledging cdk-nag findings the library cannot avoid, each with its reason.

Acknowledgments use aws-cdk-lib's own ``Validations`` API, so the library does not depend on
cdk-nag; they apply to the named construct and its children and to the exact finding only.
"""

from __future__ import annotations

from aws_cdk import Acknowledgment, CfnElement, Stack, Validations
from constructs import IConstruct


def acknowledge(scope: IConstruct, reason: str, *findings: str) -> None:
    """Acknowledge AwsSolutions ``findings`` (e.g. ``"AwsSolutions-IAM5[Resource::*]"``)."""
    Validations.of(scope).acknowledge(
        *(Acknowledgment(id=f"AwsSolutions::{finding}", reason=reason) for finding in findings)
    )


COMPLIANCE_PACKS = ("HIPAA.Security", "NIST.800.53.R5")
"""cdk-nag packs besides AwsSolutions the library is checked against (tests/test_nag.py)."""


def acknowledge_compliance(scope: IConstruct, reason: str, *rules: str) -> None:
    """Acknowledge ``rules`` (names the packs share, e.g. ``"IAMNoInlinePolicy"``) in every
    pack of :data:`COMPLIANCE_PACKS`."""
    acknowledge_compliance_each(scope, *((reason, rule) for rule in rules))


def acknowledge_compliance_each(scope: IConstruct, *reasons: tuple[str, str]) -> None:
    """Acknowledge each ``(reason, rule)`` as :func:`acknowledge_compliance` does, in one
    call (each call into aws-cdk-lib is a round trip to its Node process)."""
    Validations.of(scope).acknowledge(
        *(
            Acknowledgment(id=f"{pack}::{pack}-{rule}", reason=reason)
            for reason, rule in reasons
            for pack in COMPLIANCE_PACKS
        )
    )


def arn_placeholder(resource: IConstruct, attribute: str = "Arn") -> str:
    """How cdk-nag spells ``Fn::GetAtt [resource, attribute]`` in a finding id."""
    element = resource.node.default_child if not isinstance(resource, CfnElement) else resource
    assert isinstance(element, CfnElement)
    return f"<{Stack.of(resource).resolve(element.logical_id)}.{attribute}>"


def ref_placeholder(resource: IConstruct) -> str:
    """How cdk-nag spells ``Ref resource`` inside an ``Fn::*`` in a finding id."""
    element = resource.node.default_child if not isinstance(resource, CfnElement) else resource
    assert isinstance(element, CfnElement)
    return str(Stack.of(resource).resolve(element.logical_id))

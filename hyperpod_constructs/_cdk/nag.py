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


HIPAA, NIST_R4, NIST_R5, PCI_DSS, SERVERLESS = (
    "HIPAA.Security",
    "NIST.800.53.R4",
    "NIST.800.53.R5",
    "PCI.DSS.321",
    "Serverless",
)
COMPLIANCE_PACKS = (HIPAA, NIST_R4, NIST_R5, PCI_DSS, SERVERLESS)
"""cdk-nag packs besides AwsSolutions the library is checked against (tests/test_nag.py)."""

RULE_PACKS: dict[str, tuple[str, ...]] = {
    "CloudWatchLogGroupEncrypted": (HIPAA, NIST_R4, NIST_R5, PCI_DSS),
    "EC2RestrictedCommonPorts": (HIPAA, NIST_R4, NIST_R5, PCI_DSS),
    "EventBusDLQ": (SERVERLESS,),
    "IAMNoInlinePolicy": (HIPAA, NIST_R4, NIST_R5, PCI_DSS),
    "LambdaConcurrency": (HIPAA, NIST_R5),
    "LambdaDLQ": (HIPAA, NIST_R5, SERVERLESS),
    "LambdaInsideVPC": (HIPAA, NIST_R4, NIST_R5, PCI_DSS),
    "LambdaLatestVersion": (SERVERLESS,),
    "LambdaTracing": (SERVERLESS,),
    "S3BucketDefaultLockEnabled": (NIST_R4,),
    "S3BucketLoggingEnabled": (HIPAA, NIST_R4, NIST_R5, PCI_DSS),
    "S3BucketReplicationEnabled": (HIPAA, NIST_R4, NIST_R5, PCI_DSS),
    "S3BucketVersioningEnabled": (HIPAA, NIST_R4, NIST_R5, PCI_DSS),
    "S3DefaultEncryptionKMS": (HIPAA, NIST_R5, PCI_DSS),
}
"""Each rule the library acknowledges (the name the packs share) and the packs of
:data:`COMPLIANCE_PACKS` that have it, as cdk-nag's pack sources list them (a test reads
them), so that every acknowledgment names a finding a pack can report."""


def acknowledge_compliance(scope: IConstruct, reason: str, *rules: str) -> None:
    """Acknowledge ``rules`` (names the packs share, e.g. ``"IAMNoInlinePolicy"``) in every
    pack of :data:`COMPLIANCE_PACKS` that has them (:data:`RULE_PACKS`)."""
    acknowledge_compliance_each(scope, *((reason, rule) for rule in rules))


def acknowledge_compliance_each(scope: IConstruct, *reasons: tuple[str, str]) -> None:
    """Acknowledge each ``(reason, rule)`` as :func:`acknowledge_compliance` does, in one
    call (each call into aws-cdk-lib is a round trip to its Node process)."""
    Validations.of(scope).acknowledge(
        *(
            Acknowledgment(id=f"{pack}::{pack}-{rule}", reason=reason)
            for reason, rule in reasons
            for pack in RULE_PACKS[rule]
        )
    )


def logical_ids(stack: Stack, *resources: IConstruct) -> list[str]:
    """The logical ids of ``resources`` in ``stack`` (L1s, or constructs whose default child
    is one), resolved in one call."""
    elements = [r if isinstance(r, CfnElement) else r.node.default_child for r in resources]
    tokens = []
    for element in elements:
        assert isinstance(element, CfnElement)
        tokens.append(element.logical_id)
    return [str(logical_id) for logical_id in stack.resolve(tokens)]


def arn_placeholder(resource: IConstruct | str, attribute: str = "Arn") -> str:
    """How cdk-nag spells ``Fn::GetAtt [resource, attribute]`` in a finding id; ``resource``
    may be given as its logical id (:func:`logical_ids`)."""
    logical_id = (
        resource if isinstance(resource, str) else logical_ids(Stack.of(resource), resource)[0]
    )
    return f"<{logical_id}.{attribute}>"


GUARD_PLUGIN = "cdk-validator-cfnguard"
"""The name of AWS's Control Tower guard rules as a CDK policy-validation plugin (PyPI
``cdklabs.cdk-validator-cfnguard``), which prefixes the rule names it reports."""


def acknowledge_guard(scope: IConstruct, *reasons: tuple[str, str]) -> None:
    """Acknowledge each ``(reason, rule)`` of the Control Tower guard rules (a rule name such
    as ``"s3_bucket_object_lock_enabled_check"``) on ``scope``: the synth-time check only. A
    proactive control enabled in the account still refuses the resource at deployment, so
    each one is listed in docs/guardrails.md with the way around it."""
    Validations.of(scope).acknowledge(
        *(Acknowledgment(id=f"{GUARD_PLUGIN}::{rule}", reason=reason) for reason, rule in reasons)
    )

"""The IAM statements the library writes for HyperPod execution roles, scoped as far as AWS
documents (pure functions: values in, ``PolicyStatement`` objects out).

Sources, cited beside each statement:

- [HP-IAM] "AWS Identity and Access Management for SageMaker HyperPod", section "IAM role for
  SageMaker HyperPod", additional permissions for Amazon VPC:
  docs.aws.amazon.com/sagemaker/latest/dg/sagemaker-hyperpod-prerequisites-iam.html
- [EC2-SAR] Service Authorization Reference, "Actions, resources, and condition keys for
  Amazon EC2" (which resource types and condition keys each action takes):
  docs.aws.amazon.com/service-authorization/latest/reference/list_amazonec2.html
- [HP-CMK] "Customer managed AWS KMS key encryption for SageMaker HyperPod" (execution role
  and key policy for EBS volume keys): docs.aws.amazon.com/sagemaker/latest/dg/smcluster-cmk.html
- [SM-DEPUTY] "Cross-service confused deputy prevention" (SageMaker AI):
  docs.aws.amazon.com/sagemaker/latest/dg/security-confused-deputy-prevention.html
"""

from __future__ import annotations

import functools
from collections.abc import Sequence
from typing import TYPE_CHECKING

from ._cdk.lazy import final_any
from ._cdk.modules import submodule
from ._cdk.tokens import pseudo

if TYPE_CHECKING:
    from aws_cdk import aws_iam as iam
else:  # imported where first used (_cdk/modules.py)
    iam = submodule("aws_iam")

SAGEMAKER_SERVICE = "sagemaker.amazonaws.com"

DESCRIBE_NETWORK_ACTIONS = (
    "ec2:DescribeNetworkInterfaces",
    "ec2:DescribeVpcs",
    "ec2:DescribeDhcpOptions",
    "ec2:DescribeSubnets",
    "ec2:DescribeSecurityGroups",
)
"""[EC2-SAR]: no resource-level permissions (``Resource: *`` is the only form)."""

MANAGE_NETWORK_INTERFACE_ACTIONS = (
    "ec2:CreateNetworkInterfacePermission",
    "ec2:DeleteNetworkInterface",
    "ec2:DeleteNetworkInterfacePermission",
    "ec2:DetachNetworkInterface",
)
"""[EC2-SAR]: act on an existing network interface, which takes the ``ec2:Subnet`` key."""

NETWORK_INTERFACE_ACTIONS = (
    "ec2:CreateNetworkInterface",
    *MANAGE_NETWORK_INTERFACE_ACTIONS,
    *DESCRIBE_NETWORK_ACTIONS,
)
"""Every EC2 action [HP-IAM] lists for an execution role in a VPC (besides CreateTags)."""


def _distinct(values: Sequence[str]) -> object:
    """``values`` without repeats, read when the template is first resolved (at synth, once
    every group has been added: produced once, not once per resolution)."""
    return final_any(lambda: list(dict.fromkeys(values)))


def _ec2_arn(resource: str, *, account: str) -> str:
    return f"arn:{pseudo('PARTITION')}:ec2:{pseudo('REGION')}:{account}:{resource}"


def network_interface_statements(
    subnet_ids: Sequence[str], security_group_ids: Sequence[str]
) -> list[iam.PolicyStatement]:
    """What HyperPod does with an execution role in a VPC [HP-IAM], scoped by [EC2-SAR].

    ``subnet_ids`` and ``security_group_ids`` are read when the template is written, so ids
    added to them later (a group's ``OverrideVpcConfig``) are allowed too.

    - Describe actions: ``*`` (they take no resource), limited to the stack's Region.
    - CreateNetworkInterface: the new interface in this account and Region, only in
      ``subnet_ids`` (``ec2:SubnetID``) and with ``security_group_ids``
      (``ec2:SecurityGroupID``). Subnets and groups match in any owner account, so subnets
      shared with this account (RAM) work.
    - Permission, delete and detach: only interfaces in ``subnet_ids`` (``ec2:Subnet``).
      Detach also names the node's instance, which lives in a HyperPod service account.
    - CreateTags: network interfaces of this account and Region only.

    EC2 checks each resource of a request against the condition keys of its own type
    [EC2-SAR]: ``ec2:SubnetID`` exists only for the subnet, ``ec2:SecurityGroupID`` only for
    the security group, ``ec2:Subnet`` only for the network interface. The ``...IfExists``
    operators apply each key to the resource that has it (where it is always present) and
    let the statement's other resource types through, so one statement covers every
    resource an action needs.
    """
    interfaces = _ec2_arn("network-interface/*", account=pseudo("ACCOUNT_ID"))
    return [
        iam.PolicyStatement(
            sid="HyperPodDescribeNetwork",
            actions=list(DESCRIBE_NETWORK_ACTIONS),
            resources=["*"],
            conditions={"StringEquals": {"aws:RequestedRegion": pseudo("REGION")}},
        ),
        iam.PolicyStatement(
            sid="HyperPodCreateNetworkInterfaces",
            actions=["ec2:CreateNetworkInterface"],
            resources=[
                interfaces,
                _ec2_arn("subnet/*", account="*"),
                _ec2_arn("security-group/*", account="*"),
            ],
            conditions={
                "StringEqualsIfExists": {
                    "ec2:SubnetID": _distinct(subnet_ids),
                    "ec2:SecurityGroupID": _distinct(security_group_ids),
                }
            },
        ),
        iam.PolicyStatement(
            sid="HyperPodManageNetworkInterfaces",
            actions=list(MANAGE_NETWORK_INTERFACE_ACTIONS),
            resources=[interfaces, _ec2_arn("instance/*", account="*")],
            conditions={
                "ArnLikeIfExists": {
                    "ec2:Subnet": final_any(
                        lambda: [
                            _ec2_arn(f"subnet/{subnet}", account="*")
                            for subnet in dict.fromkeys(subnet_ids)
                        ]
                    )
                }
            },
        ),
        iam.PolicyStatement(
            sid="HyperPodTagNetworkInterfaces",
            actions=["ec2:CreateTags"],
            resources=[interfaces],
        ),
    ]


WILDCARD_RESOURCES = (
    "*",
    "arn:<AWS::Partition>:ec2:<AWS::Region>:<AWS::AccountId>:network-interface/*",
    "arn:<AWS::Partition>:ec2:<AWS::Region>:*:subnet/*",
    "arn:<AWS::Partition>:ec2:<AWS::Region>:*:security-group/*",
    "arn:<AWS::Partition>:ec2:<AWS::Region>:*:instance/*",
)
"""The wildcard resources of :func:`network_interface_statements` as cdk-nag spells them."""


@functools.cache
def execution_role_principal() -> iam.IPrincipal:
    """SageMaker, as the execution role's trust policy names it [HP-IAM]: one object per
    process, which every execution role's trust policy renders the same (two jsii calls
    fewer per cluster; a role keeps no way to change its principal).

    HyperPod is not among the features [SM-DEPUTY] documents ``aws:SourceArn`` /
    ``aws:SourceAccount`` for, so a plain condition on them could stop HyperPod from assuming
    the role. ``StringEqualsIfExists`` on ``aws:SourceAccount`` restricts the role to this
    account's resources whenever SageMaker sends the key and never blocks it otherwise (the
    cluster and its execution role are always in the same account: ``iam:PassRole`` does
    not cross accounts).
    """
    return iam.ServicePrincipal(SAGEMAKER_SERVICE).with_conditions(
        {"StringEqualsIfExists": {"aws:SourceAccount": pseudo("ACCOUNT_ID")}}
    )


def volume_key_statements(key_arn: str) -> list[iam.PolicyStatement]:
    """Let an execution role use a customer managed EBS volume key, as [HP-CMK] scopes it.

    Only through SageMaker in this Region (``kms:ViaService``), and grants only for AWS
    resources (``kms:GrantIsForAWSResource``): HyperPod creates grants on the key when it
    launches, adds or patches instances. The key's own policy must also allow the role (a
    key created with aws-cdk-lib's default policy delegates to IAM).
    """
    via_sagemaker = {"kms:ViaService": f"sagemaker.{pseudo('REGION')}.amazonaws.com"}
    return [
        iam.PolicyStatement(
            sid="HyperPodVolumeKeyGrants",
            actions=["kms:CreateGrant"],
            resources=[key_arn],
            conditions={
                "StringEquals": via_sagemaker,
                "Bool": {"kms:GrantIsForAWSResource": "true"},
            },
        ),
        iam.PolicyStatement(
            sid="HyperPodVolumeKeyDescribe",
            actions=["kms:DescribeKey"],
            resources=[key_arn],
            conditions={"StringEquals": via_sagemaker},
        ),
    ]


def grants_only_for_aws_resources() -> iam.PolicyStatement:
    """The key-policy statement that lets nobody create a grant on a key except for an AWS
    resource or as an AWS service (Control Tower's CT.KMS.PR.3): HyperPod's grants on a
    volume key are for the instances' EBS volumes (:func:`volume_key_statements` lets the
    execution role create no other)."""
    return iam.PolicyStatement(
        sid="GrantsOnlyForAwsResources",
        effect=iam.Effect.DENY,
        principals=[iam.AnyPrincipal()],
        actions=["kms:CreateGrant"],
        resources=["*"],
        conditions={
            "BoolIfExists": {
                "kms:GrantIsForAWSResource": "false",
                "aws:PrincipalIsAWSService": "false",
            }
        },
    )

"""The gate's Lambda code, staged as ``lambda.Code.from_asset`` stages it, without the L2.

``lambda.Code.from_asset(path).bind(function)`` creates one ``s3_assets.Asset`` at
``<function>/Code`` with ``deploy_time=True``, and the function records it with
``Asset.add_resource_metadata(resource, "Code")``. The gate's functions are L1
``CfnFunction``s (docs/performance.md), so it creates that same asset itself: same construct
path, hash, staging folder, asset manifest entry and template, for every stack synthesizer.

The asset, a jsii construct, asks the stack's synthesizer for the location in its own
constructor, on the JavaScript side. Python never calls a synthesizer: ``stack.synthesizer``
seen from Python is the object the user passed, while the stack binds a copy of it, so a call
from Python reaches an unbound synthesizer and fails (``StackSynthesizerBoundStackFirst``).
"""

from __future__ import annotations

import weakref
from typing import TYPE_CHECKING, Any

from aws_cdk import ArnFormat, CfnResource, Stack
from constructs import Construct

from .._cdk.modules import submodule
from .._cdk.nag import acknowledge
from .._cdk.synthesizer import refusing_synthesizer
from .._core.finding import Finding
from ..gate.options import MinCountGateOptions
from ..validation.cluster_rules import synthesizer_asset_findings
from .roles import GateRole, allow

if TYPE_CHECKING:
    from aws_cdk import aws_ec2 as ec2
    from aws_cdk import aws_iam as iam
    from aws_cdk import aws_kms as kms
    from aws_cdk import aws_lambda as lambda_
    from aws_cdk import aws_s3_assets as s3_assets
else:  # imported where first used (_cdk/modules.py)
    iam = submodule("aws_iam")
    lambda_ = submodule("aws_lambda")
    s3_assets = submodule("aws_s3_assets")


class LambdaCode:
    """A directory staged once as a zip asset for Lambda functions, at ``<function>/Code``
    where ``function`` is the construct of the first function that uses it.

    When the stack's synthesizer cannot host file assets (``BootstraplessSynthesizer``), the
    code is empty and :attr:`findings` say which synthesizer refused it and what to use.
    """

    def __init__(self, function: Construct, path: str, *, exclude: list[str]) -> None:
        self.findings: list[Finding] = []
        """Why the code could not be staged (the synth must fail on them); empty when it was."""
        self._asset: s3_assets.Asset | None = None
        try:
            self._asset = s3_assets.Asset(
                function, "Code", path=path, exclude=exclude, deploy_time=True
            )
        except RuntimeError as refused:  # what jsii raises for an error thrown in JavaScript
            self.findings = synthesizer_asset_findings(
                refusing_synthesizer(function, str(refused)),
                "the readiness gate's Lambda code",
                str(refused),
            )
        self.code = (
            lambda_.CfnFunction.CodeProperty(zip_file="")  # never written: the synth fails
            if self._asset is None
            else lambda_.CfnFunction.CodeProperty(
                s3_bucket=self._asset.s3_bucket_name, s3_key=self._asset.s3_object_key
            )
        )
        """The ``Code`` of a ``CfnFunction`` that runs it."""

    @classmethod
    def in_stack(
        cls, stack: Stack, function: Construct, path: str, *, exclude: list[str]
    ) -> LambdaCode:
        """The code of ``path`` staged once per stack: the first call stages it at
        ``<function>/Code``, every later one in ``stack`` (the next gate's functions) takes
        the same asset. The template is the same as with an asset per call (same bucket, same
        key: the same hash), without a construct, a staging and their jsii calls per gate."""
        staged = _STAGED.setdefault(stack, {})
        if path not in staged:
            staged[path] = cls(function, path, exclude=exclude)
        return staged[path]

    def bind(self, function: CfnResource) -> None:
        """Record on ``function`` where its code came from, as ``lambda.Code.from_asset``
        does when the ``aws:cdk:enable-asset-metadata`` context is set."""
        if self._asset is not None:
            self._asset.add_resource_metadata(function, "Code")


_STAGED: weakref.WeakKeyDictionary[Stack, dict[str, LambdaCode]] = weakref.WeakKeyDictionary()
"""By stack, the code staged in it (:meth:`LambdaCode.in_stack`)."""


# -- what an organisation's guardrails ask of the gate's resources (docs/guardrails.md) ------

LOG_RETENTION_DAYS = 30
"""How long the gate's log groups keep its progress lines by default
(``logs.RetentionDays.ONE_MONTH``); ``MinCountGateOptions.log_retention`` changes it."""
RETENTION_DAYS: dict[str, int | None] = {
    "ONE_DAY": 1,
    "THREE_DAYS": 3,
    "FIVE_DAYS": 5,
    "ONE_WEEK": 7,
    "TWO_WEEKS": 14,
    "ONE_MONTH": 30,
    "TWO_MONTHS": 60,
    "THREE_MONTHS": 90,
    "FOUR_MONTHS": 120,
    "FIVE_MONTHS": 150,
    "SIX_MONTHS": 180,
    "ONE_YEAR": 365,
    "THIRTEEN_MONTHS": 400,
    "EIGHTEEN_MONTHS": 545,
    "TWO_YEARS": 731,
    "THREE_YEARS": 1096,
    "FIVE_YEARS": 1827,
    "SIX_YEARS": 2192,
    "SEVEN_YEARS": 2557,
    "EIGHT_YEARS": 2922,
    "NINE_YEARS": 3288,
    "TEN_YEARS": 3653,
    "INFINITE": None,
}
"""``logs.RetentionDays`` (whose Python values are its names) as ``RetentionInDays``, as
``logs.LogGroup`` writes it (``INFINITE``: no retention, events never expire)."""
_LAMBDA_ENI_ACTIONS = (
    "ec2:CreateNetworkInterface",
    "ec2:DescribeNetworkInterfaces",
    "ec2:DeleteNetworkInterface",
    "ec2:AssignPrivateIpAddresses",
    "ec2:UnassignPrivateIpAddresses",
)
"""What a function in a VPC needs (AWSLambdaVPCAccessExecutionRole's EC2 actions)."""


def log_group_properties(scope: Construct, options: MinCountGateOptions) -> dict[str, Any]:
    """``retention_in_days`` and ``kms_key_id`` of a gate log group, from ``options``; a
    ``kms.Key`` of the app lets CloudWatch Logs use it (once per key)."""
    from aws_cdk import aws_logs as logs

    retention = options.log_retention
    key = options.encryption_key
    if key is not None:
        _let_logs_use(scope, key)
    return {
        "retention_in_days": LOG_RETENTION_DAYS
        if retention is None
        else RETENTION_DAYS[logs.RetentionDays(retention).name],
        "kms_key_id": None if key is None else key.key_arn,
    }


def _let_logs_use(scope: Construct, key: kms.IKey) -> None:
    from aws_cdk import aws_kms as kms

    if not isinstance(key, kms.Key) or key.node.try_find_child(_LOGS_GRANT) is not None:
        return
    Construct(key, _LOGS_GRANT)  # the marker that the statement is there
    stack = Stack.of(scope)
    key.add_to_resource_policy(
        iam.PolicyStatement(
            sid="CloudWatchLogsUseOfTheKey",
            principals=[iam.ServicePrincipal(f"logs.{stack.region}.amazonaws.com")],
            actions=[
                "kms:Encrypt*",
                "kms:Decrypt*",
                "kms:ReEncrypt*",
                "kms:GenerateDataKey*",
                "kms:Describe*",
            ],
            resources=["*"],
            conditions={
                "ArnLike": {
                    "kms:EncryptionContext:aws:logs:arn": stack.format_arn(
                        service="logs",
                        resource="log-group",
                        resource_name="*",
                        arn_format=ArnFormat.COLON_RESOURCE_NAME,
                    )
                }
            },
        )
    )


_LOGS_GRANT = "CloudWatchLogsGrant"


def function_vpc_config(
    scope: Construct, options: MinCountGateOptions, role: GateRole
) -> lambda_.CfnFunction.VpcConfigProperty | None:
    """The ``VpcConfig`` of a gate function (``None`` without ``options.vpc``); ``role`` gets
    the network-interface actions, and ``scope`` the security group when none is given."""
    vpc = options.vpc
    if vpc is None:
        return None
    from aws_cdk import aws_ec2 as ec2

    groups = list(options.security_groups or ())
    if not groups:
        found = scope.node.try_find_child("FunctionSecurityGroup")
        groups = [
            found
            if isinstance(found, ec2.SecurityGroup)
            else ec2.SecurityGroup(
                scope,
                "FunctionSecurityGroup",
                vpc=vpc,
                description="HyperPod readiness gate functions (outbound only)",
                allow_all_outbound=True,
            )
        ]
    role.add(allow(_LAMBDA_ENI_ACTIONS, "*", sid="NetworkInterfacesInTheVpc"))
    acknowledge(
        role.scope,
        "A Lambda function in a VPC manages its network interfaces, whose ids are not known "
        "before they exist (the actions of AWSLambdaVPCAccessExecutionRole)",
        "AwsSolutions-IAM5[Resource::*]",
    )
    subnets = vpc.select_subnets(**_selection(options.vpc_subnets))
    return lambda_.CfnFunction.VpcConfigProperty(
        security_group_ids=[group.security_group_id for group in groups],
        subnet_ids=subnets.subnet_ids,
    )


def _selection(selection: ec2.SubnetSelection | None) -> dict[str, Any]:
    if selection is None:
        return {}
    return {
        key: value
        for key, value in {
            "availability_zones": selection.availability_zones,
            "one_per_az": selection.one_per_az,
            "subnet_filters": selection.subnet_filters,
            "subnet_group_name": selection.subnet_group_name,
            "subnets": selection.subnets,
            "subnet_type": selection.subnet_type,
        }.items()
        if value is not None
    }

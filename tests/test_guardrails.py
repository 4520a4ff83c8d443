"""AWS Control Tower's proactive controls (``cdklabs.cdk-validator-cfnguard``: the Control
Tower guard rules as a CDK policy-validation plugin, run offline with the cfn-guard it
bundles) on every example stack and on the app shapes.

On a resource the library creates, every rule is met by default, met through a documented
option (``MinCountGateOptions``, ``LifecycleBucketOptions``), or acknowledged with a reason;
docs/guardrails.md lists each. With the options set, nothing is left on the library's
resources in any shape (App, Stage, nested Stage, CDK Pipelines; a NestedStack's template
never reaches a plugin).
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import aws_cdk as cdk
import pytest
from aws_cdk import Duration, Stack, Validations
from aws_cdk import aws_ec2 as ec2
from aws_cdk import aws_kms as kms
from aws_cdk import aws_logs as logs
from aws_cdk import aws_s3 as s3
from cdklabs.cdk_validator_cfnguard import CfnGuardValidator
from constructs import Construct, IConstruct

from examples.app import build
from examples.fsdp import LIFECYCLE_DIR
from hyperpod_constructs import (
    HyperPodInstanceType,
    HyperPodSlurmCluster,
    InstanceGroup,
    LifecycleScripts,
    MinCountGateOptions,
)
from hyperpod_constructs._cdk.nag import GUARD_PLUGIN
from hyperpod_constructs.lifecycle import LifecycleBucketOptions
from tests.conftest import CDK_CONTEXT, ROOT, new_app
from tests.test_app_shapes import AZ_CONTEXT, ENV, delivery_pipeline

DOCS = ROOT / "docs" / "guardrails.md"

MET_BY_OPTION = {
    "cloudwatch_log_group_retention_period_check": "log_retention",
    "cloudwatch_log_group_encrypted_check": "encryption_key",
    "lambda_inside_vpc_check": "vpc",
    "s3_bucket_default_encryption_kms_check": "encryption_key",
    "s3_bucket_versioning_enabled_check": "versioned",
    "s3_bucket_logging_enabled_check": "server_access_logs_bucket",
    "s3_lifecycle_policy_check": "lifecycle_rules",
    "s3_version_lifecycle_policy_check": "lifecycle_rules",
}
"""The guard rules a library resource breaks by default, and the option that meets each."""


def library_paths(root: IConstruct) -> Callable[[str], bool]:
    """Whether a construct path is a resource the library created: below a cluster, or the
    lifecycle upload's handler (aws-cdk-lib's stack-wide BucketDeployment singleton)."""
    clusters = [c.node.path for c in root.node.find_all() if isinstance(c, HyperPodSlurmCluster)]

    def ours(path: str) -> bool:
        return "/Custom::CDKBucketDeployment" in f"/{path}" or any(
            path.startswith(f"{cluster}/") for cluster in clusters
        )

    return ours


def guard_report(app: cdk.App, synth: Callable[[], Any]) -> dict[str, Any]:
    """Run ``synth`` (the guard plugin fails it on any violation); the plugin's report."""
    try:
        synth()
    except RuntimeError as failed:
        assert "validation-report.json" in str(failed), str(failed)[:2000]
    report = json.loads((Path(app.outdir) / "validation-report.json").read_text())
    (found,) = (p for p in report["pluginReports"] if p["pluginName"] == GUARD_PLUGIN)
    return dict(found)


def violations(report: dict[str, Any], ours: Callable[[str], bool]) -> set[tuple[str, str]]:
    """(rule name, construct path) of each violation on a library resource."""
    return {
        (violation["ruleName"], construct["constructPath"])
        for violation in report["violations"]
        for construct in violation.get("violatingConstructs", [])
        if ours(construct.get("constructPath", ""))
    }


@pytest.fixture(scope="module")
def examples(tmp_path_factory: pytest.TempPathFactory) -> tuple[cdk.App, dict[str, Any]]:
    app = new_app(outdir=str(tmp_path_factory.mktemp("guard-examples")))
    Validations.of(app).add_plugins(CfnGuardValidator())
    build(app)
    return app, guard_report(app, app.synth)


def test_every_example_meets_each_rule_or_names_the_option(
    examples: tuple[cdk.App, dict[str, Any]],
) -> None:
    app, report = examples
    found = violations(report, library_paths(app))
    assert found, "the examples keep the defaults: the options' rules are reported"
    unexplained = sorted(v for v in found if v[0] not in MET_BY_OPTION)
    assert not unexplained, unexplained


def test_the_guide_names_every_rule_and_its_option() -> None:
    text = DOCS.read_text()
    for rule, option in MET_BY_OPTION.items():
        assert rule in text and f"{option}=" in text, (rule, option)


def acknowledged(report: dict[str, Any]) -> set[tuple[str, str]]:
    return {(s["ruleName"], s["reason"]) for s in report.get("suppressedViolations", []) if s}


def test_every_acknowledgment_has_a_reason_the_guide_shows(
    examples: tuple[cdk.App, dict[str, Any]],
) -> None:
    _, report = examples
    suppressed = report["suppressedViolations"]
    assert suppressed, "the lifecycle bucket's object lock and notifications are acknowledged"
    text = DOCS.read_text()
    for entry in suppressed:
        rule = entry.get("ruleName") or entry["acknowledgedId"].split("::")[-1]
        assert len(entry["reason"].split()) >= 8, entry
        assert rule in text, rule


# -- every option set: nothing left on the library's resources, in any shape --------------


def guarded_cluster(scope: Construct) -> HyperPodSlurmCluster:
    """A gated cluster with lifecycle scripts and every guardrail option."""
    stack = Stack.of(scope)
    vpc = ec2.Vpc(scope, "Vpc", max_azs=1, nat_gateways=1)
    key = kms.Key(scope, "Key", enable_key_rotation=True)
    access_logs = s3.Bucket(scope, "AccessLogs", enforce_ssl=True)
    upload_logs = logs.LogGroup(
        scope, "UploadLogs", encryption_key=key, retention=logs.RetentionDays.ONE_YEAR
    )
    assert stack is not None
    return HyperPodSlurmCluster(
        scope,
        "Cluster",
        vpc=vpc,
        lifecycle_scripts=LifecycleScripts.from_directory(
            LIFECYCLE_DIR,
            bucket_options=LifecycleBucketOptions(
                encryption_key=key,
                versioned=True,
                server_access_logs_bucket=access_logs,
                lifecycle_rules=[s3.LifecycleRule(noncurrent_version_expiration=Duration.days(30))],
                upload_vpc=vpc,
                upload_log_group=upload_logs,
            ),
        ),
        readiness_gate=MinCountGateOptions(
            log_retention=logs.RetentionDays.ONE_YEAR,
            encryption_key=key,
            vpc=vpc,
            create_notification_topic=True,
        ),
        instance_groups=[
            InstanceGroup.controller("controller", instance_type=HyperPodInstanceType.ML_M5_XLARGE),
            InstanceGroup.compute(
                "cpu",
                instance_type=HyperPodInstanceType.ML_C5_4XLARGE,
                instance_count=4,
                min_instance_count=4,
                partition="cpu",
            ),
        ],
    )


class GuardedStage(cdk.Stage):
    def __init__(self, scope: Construct, id: str, **props: Any) -> None:
        super().__init__(scope, id, **props)
        guarded_cluster(Stack(self, "Training"))


SHAPES = {"app": "Training/", "stage": "Prod/", "nested-stage": "Org/", "pipeline": "Piped/"}
"""Each shape, as it sits in the app of :func:`guarded`: the construct path it starts with."""
CONTROL = "Broken/"
"""The control's stack in the same app: a gate log group kept a month."""


def shape(name: str, app: cdk.App) -> None:
    if name == "app":
        guarded_cluster(Stack(app, "Training"))
    elif name == "stage":
        GuardedStage(app, "Prod")
    elif name == "nested-stage":
        GuardedStage(cdk.Stage(app, "Org"), "Prod")
    elif name == "pipeline":
        delivery_pipeline(app).add_stage(GuardedStage(app, "Piped", env=ENV))


@pytest.fixture(scope="module")
def guarded(tmp_path_factory: pytest.TempPathFactory) -> tuple[cdk.App, dict[str, Any]]:
    """Every shape and the control in one app, the guard plugin on it: aws-cdk-lib hands the
    plugin every stack of the app and its stages (nested stages too) at once, so cfn-guard runs
    once for all of them; the report."""
    app = cdk.App(
        context={**CDK_CONTEXT, **AZ_CONTEXT}, outdir=str(tmp_path_factory.mktemp("guarded"))
    )
    Validations.of(app).add_plugins(CfnGuardValidator())
    for name in SHAPES:
        shape(name, app)
    broken = guarded_cluster(Stack(app, CONTROL.rstrip("/")))
    log_groups = [
        c
        for c in broken.node.find_all()
        if isinstance(c, logs.CfnLogGroup) and "PollLoop" in c.node.path
    ]
    assert log_groups
    log_groups[0].retention_in_days = 30
    return app, guard_report(app, app.synth)


def _under(prefix: str, ours: Callable[[str], bool]) -> Callable[[str], bool]:
    return lambda path: path.startswith(prefix) and ours(path)


@pytest.mark.parametrize("name", sorted(SHAPES))
def test_with_the_options_no_rule_is_left_on_the_library(
    name: str, guarded: tuple[cdk.App, dict[str, Any]]
) -> None:
    """A NestedStack is left out: aws-cdk-lib hands a policy-validation plugin the stacks'
    templates only, so the plugin never reads a nested template (the same resources as in
    the ``app`` shape; Control Tower's hook checks them at deployment)."""
    app, report = guarded
    prefix = SHAPES[name]
    checked = {
        path
        for violation in report["violations"]
        for construct in violation.get("violatingConstructs", [])
        if (path := construct.get("constructPath", "")).startswith(prefix)
    }
    assert checked, "the plugin saw the shape's templates (the example's own VPC breaks rules)"
    assert violations(report, _under(prefix, library_paths(app))) == set()


def test_the_guard_rules_see_a_broken_library_resource(
    guarded: tuple[cdk.App, dict[str, Any]],
) -> None:
    """Control: the same run reports a gate log group kept a month."""
    app, report = guarded
    assert app.node.find_child(CONTROL.rstrip("/")).node.find_child("Cluster")
    found = violations(report, _under(CONTROL, library_paths(app)))
    assert {rule for rule, _ in found} == {"cloudwatch_log_group_retention_period_check"}
    assert re.search(r"MinCountGate/PollLoopLogs", " ".join(path for _, path in found))


@pytest.mark.parametrize(
    ("option", "value"),
    [
        ("log_retention", 365),
        ("encryption_key", "alias/mine"),
        ("vpc", "vpc-123"),
        ("security_groups", []),
    ],
)
def test_a_guardrail_option_of_the_wrong_type_is_a_finding(option: str, value: object) -> None:
    """Never silently ignored (a guardrail option that does nothing fails open)."""
    from hyperpod_constructs.validation import gate_option_findings

    options = MinCountGateOptions(**{option: value})  # type: ignore[arg-type]
    found = gate_option_findings(options, parameter="readiness_gate")
    assert {(f.rule, f.field) for f in found} >= {("HP-ARG-TYPE", f"readiness_gate.{option}")}


def test_subnets_without_a_vpc_are_a_finding() -> None:
    from hyperpod_constructs.validation import gate_option_findings

    options = MinCountGateOptions(vpc_subnets=ec2.SubnetSelection())
    (finding,) = gate_option_findings(options, parameter="readiness_gate")
    assert finding.field == "readiness_gate.vpc" and "pass vpc= too" in finding.fix


def test_gate_options_reach_the_log_groups_functions_and_topic() -> None:
    from tests.conftest import synth_template
    from tests.template_utils import resources

    def define(stack: Stack) -> None:
        guarded_cluster(stack)

    template = synth_template(define).to_json()
    (key_id,) = resources(template, "AWS::KMS::Key")
    gate_logs = {
        logical_id: group
        for logical_id, group in resources(template, "AWS::Logs::LogGroup").items()
        if "MinCountGate" in logical_id
    }
    assert len(gate_logs) == 3
    for group in gate_logs.values():
        assert group["Properties"]["RetentionInDays"] == 365
        assert group["Properties"]["KmsKeyId"] == {"Fn::GetAtt": [key_id, "Arn"]}
    key_policy = json.dumps(resources(template, "AWS::KMS::Key")[key_id]["Properties"])
    assert "CloudWatchLogsUseOfTheKey" in key_policy and "logs.us-east-1" not in key_policy
    gate_functions = [
        f
        for logical_id, f in resources(template, "AWS::Lambda::Function").items()
        if "MinCountGate" in logical_id
    ]
    assert len(gate_functions) == 2
    for function in gate_functions:
        config = function["Properties"]["VpcConfig"]
        assert config["SubnetIds"] and config["SecurityGroupIds"]
    (topic,) = resources(template, "AWS::SNS::Topic").values()
    assert topic["Properties"]["KmsMasterKeyId"] == {"Fn::GetAtt": [key_id, "Arn"]}

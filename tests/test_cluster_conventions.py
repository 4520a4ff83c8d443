"""The conventions of aws-cdk-lib's L2s with a role that the cluster follows:
``grant_principal`` (``iam.IGrantable``) and ``add_to_role_policy`` as ``aws_lambda.Function``
and ``aws_ec2.Instance`` have them, and ``tags`` (the resource's ``TagManager``)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from aws_cdk import App, Stack, TagManager, Tags
from aws_cdk import aws_ec2 as ec2
from aws_cdk import aws_iam as iam
from aws_cdk import aws_lambda as lambda_
from aws_cdk import aws_s3 as s3

from hyperpod_constructs import HyperPodInstanceType, HyperPodSlurmCluster, InstanceGroup
from tests.support.synth_result import synth

ROLE_ARN = "arn:aws:iam::111111111111:role/org/hyperpod-execution"


def _cluster(stack: Stack, **props: Any) -> HyperPodSlurmCluster:
    return HyperPodSlurmCluster(
        stack,
        "Cluster",
        instance_groups=[
            InstanceGroup.controller("controller", instance_type=HyperPodInstanceType.ML_M5_2XLARGE)
        ],
        **props,
    )


def _role_actions(template: dict[str, Any]) -> set[str]:
    actions: set[str] = set()
    for resource in template["Resources"].values():
        if resource["Type"] == "AWS::IAM::Policy":
            for statement in resource["Properties"]["PolicyDocument"]["Statement"]:
                action = statement["Action"]
                actions |= {action} if isinstance(action, str) else set(action)
    return actions


def _template(app: App, tmp_path: Path, name: str = "S") -> dict[str, Any]:
    app.synth()
    return dict(json.loads((tmp_path / f"{name}.template.json").read_text()))


@pytest.mark.parametrize("member", ["grant_principal", "add_to_role_policy"])
def test_the_l2_conventions_with_a_role_are_there(member: str) -> None:
    assert hasattr(lambda_.Function, member) and hasattr(ec2.Instance, member)
    assert hasattr(HyperPodSlurmCluster, member)


def test_a_grant_to_the_cluster_reaches_its_execution_role(tmp_path: Path) -> None:
    app = App(outdir=str(tmp_path))
    stack = Stack(app, "S")
    cluster = _cluster(stack)
    assert cluster.grant_principal is cluster.role
    s3.Bucket(stack, "Data").grant_read(cluster)  # aws-cdk-lib reads grant_principal
    cluster.add_to_role_policy(
        iam.PolicyStatement(actions=["cloudwatch:PutMetricData"], resources=["*"])
    )
    actions = _role_actions(_template(app, tmp_path))
    assert {"s3:GetObject*", "cloudwatch:PutMetricData"} <= actions


def test_add_to_role_policy_on_an_immutable_role_is_named_in_its_one_warning(
    tmp_path: Path,
) -> None:
    app = App(outdir=str(tmp_path))
    stack = Stack(app, "S")
    role = iam.Role.from_role_arn(stack, "Role", ROLE_ARN, mutable=False)
    cluster = _cluster(stack, execution_role=role)
    cluster.add_to_role_policy(iam.PolicyStatement(actions=["s3:GetObject"], resources=["*"]))
    result = synth(app, tmp_path)
    assert result.succeeded
    (warning,) = [text for _, _, text in result.found if "HP-WARN-ROLE-IMMUTABLE" in text]
    assert "the statements of add_to_role_policy" in warning


def test_tags_are_the_cluster_resources_tag_manager(tmp_path: Path) -> None:
    app = App(outdir=str(tmp_path))
    stack = Stack(app, "S")
    cluster = _cluster(stack, tags={"team": "vision"})
    Tags.of(app).add("org", "acme")
    assert isinstance(cluster.tags, TagManager)
    cluster.tags.set_tag("owner", "ml-platform")
    template = _template(app, tmp_path)
    (resource,) = [r for r in template["Resources"].values() if r["Type"].endswith("Cluster")]
    tags = {tag["Key"]: tag["Value"] for tag in resource["Properties"]["Tags"]}
    assert tags == {"team": "vision", "org": "acme", "owner": "ml-platform"}
    assert cluster.tags.tag_values() == tags

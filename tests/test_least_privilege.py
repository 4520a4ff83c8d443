"""What the library grants its execution roles is scoped as far as AWS documents.

The policies are read from the synthesized example templates (intrinsics resolved to
concrete example values) and checked two ways: against what the cluster itself uses (its
subnets, security groups, key), and by parliament, an IAM policy linter that carries AWS's
own table of actions, resource types and condition keys, so it can disagree with us.
"""

from __future__ import annotations

import hashlib
import json
import warnings
from typing import Any

import pytest
from aws_cdk import Stack
from aws_cdk import aws_ec2 as ec2
from aws_cdk import aws_iam as iam

from hyperpod_constructs import HyperPodInstanceType, HyperPodSlurmCluster, InstanceGroup
from hyperpod_constructs.permissions import (
    DESCRIBE_NETWORK_ACTIONS,
    NETWORK_INTERFACE_ACTIONS,
)
from tests.conftest import synth_template
from tests.template_utils import only, resources

with warnings.catch_warnings():
    # parliament leaves its data files open when it loads them at import, and its regular
    # expressions have escapes Python warns about when it compiles them (on the first import
    # in a venv installed without bytecode: `make setup` installs with uv).
    warnings.simplefilter("ignore", ResourceWarning)
    for category in (DeprecationWarning, SyntaxWarning):  # Python 3.11, 3.12 and later
        warnings.filterwarnings("ignore", "invalid escape sequence", category)
    from parliament import analyze_policy_string

PARTITION, REGION, ACCOUNT = "aws", "us-west-2", "111122223333"


# -- resolving a template's intrinsics to example values ---------------------------------


def _fake_id(prefix: str, logical_id: str, length: int = 17) -> str:
    return f"{prefix}-{hashlib.sha256(logical_id.encode()).hexdigest()[:length]}"


def _ref(template: dict[str, Any], name: str) -> str:
    pseudo = {
        "AWS::Partition": PARTITION,
        "AWS::Region": REGION,
        "AWS::AccountId": ACCOUNT,
        "AWS::URLSuffix": "amazonaws.com",
        "AWS::StackId": f"arn:aws:cloudformation:{REGION}:{ACCOUNT}:stack/S/0a1b2c3d-4e5f",
        "AWS::StackName": "S",
    }
    if name in pseudo:
        return pseudo[name]
    kind = template["Resources"][name]["Type"]
    by_type = {
        "AWS::EC2::Subnet": "subnet",
        "AWS::EC2::VPC": "vpc",
        "AWS::KMS::Key": "key",
    }
    if kind in by_type:
        return _fake_id(by_type[kind], name)
    return name.lower()


def _get_att(template: dict[str, Any], name: str, attribute: str) -> str:
    kind = template["Resources"][name]["Type"]
    if kind == "AWS::EC2::SecurityGroup" and attribute == "GroupId":
        return _fake_id("sg", name)
    if kind == "AWS::SageMaker::Cluster" and attribute == "ClusterArn":
        return f"arn:aws:sagemaker:{REGION}:{ACCOUNT}:cluster/abcdef012345"
    if attribute == "Arn":
        arns = {
            "AWS::IAM::Role": f"arn:aws:iam::{ACCOUNT}:role/{name}",
            "AWS::S3::Bucket": f"arn:aws:s3:::{_ref(template, name)}",
            "AWS::KMS::Key": f"arn:aws:kms:{REGION}:{ACCOUNT}:key/{_ref(template, name)}",
            "AWS::SageMaker::Cluster": f"arn:aws:sagemaker:{REGION}:{ACCOUNT}:cluster/abcdef012345",
        }
        if kind in arns:
            return arns[kind]
    return f"{name}.{attribute}".lower()


def concrete(value: Any, template: dict[str, Any]) -> Any:
    """``value`` with Ref, Fn::GetAtt, Fn::Join, Fn::Select and Fn::Split evaluated."""
    if isinstance(value, list):
        return [concrete(item, template) for item in value]
    if not isinstance(value, dict):
        return value
    if set(value) == {"Ref"}:
        return _ref(template, value["Ref"])
    if set(value) == {"Fn::GetAtt"}:
        name, attribute = value["Fn::GetAtt"]
        return _get_att(template, name, attribute)
    if set(value) == {"Fn::Join"}:
        separator, parts = value["Fn::Join"]
        return separator.join(str(concrete(part, template)) for part in parts)
    if set(value) == {"Fn::Split"}:
        separator, text = value["Fn::Split"]
        return str(concrete(text, template)).split(separator)
    if set(value) == {"Fn::Select"}:
        index, items = value["Fn::Select"]
        return concrete(items, template)[int(index)]
    return {key: concrete(item, template) for key, item in value.items()}


# -- what the templates grant the execution roles -----------------------------------------


def execution_role_ids(template: dict[str, Any]) -> set[str]:
    _, cluster = only(template, "AWS::SageMaker::Cluster")
    return {
        group["ExecutionRole"]["Fn::GetAtt"][0]
        for group in cluster["Properties"]["InstanceGroups"]
        if isinstance(group["ExecutionRole"], dict)
    }


def execution_role_documents(template: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """Policy logical id -> concrete policy document, for every policy on an execution role."""
    roles = [{"Ref": role} for role in execution_role_ids(template)]
    return {
        logical_id: concrete(policy["Properties"]["PolicyDocument"], template)
        for logical_id, policy in resources(template, "AWS::IAM::Policy").items()
        if any(role in policy["Properties"]["Roles"] for role in roles)
    }


def lint(document: dict[str, Any]) -> list[tuple[str, Any]]:
    return [
        (finding.issue, finding.detail)
        for finding in analyze_policy_string(json.dumps(document)).findings
    ]


def statements_by_sid(documents: dict[str, dict[str, Any]]) -> dict[str, dict[str, Any]]:
    return {
        statement["Sid"]: statement
        for document in documents.values()
        for statement in document["Statement"]
        if "Sid" in statement
    }


def as_list(value: Any) -> list[Any]:
    return value if isinstance(value, list) else [value]


VPC_STACKS = ("FsdpTraining", "FsdpBlueprint", "MegatronBlueprint")
"""The example stacks whose cluster has a VPC (the others grant their roles nothing)."""


def test_the_other_examples_grant_their_execution_roles_nothing(
    example_templates: dict[str, dict[str, Any]],
) -> None:
    for stack, template in example_templates.items():
        _, cluster = only(template, "AWS::SageMaker::Cluster")
        assert ("VpcConfig" in cluster["Properties"]) == (stack in VPC_STACKS), stack
        if stack not in VPC_STACKS:
            assert execution_role_documents(template) == {}, stack


@pytest.mark.parametrize("stack", VPC_STACKS)
def test_parliament_finds_nothing_in_what_execution_roles_are_granted(
    example_templates: dict[str, dict[str, Any]], stack: str
) -> None:
    documents = execution_role_documents(example_templates[stack])
    assert documents, f"{stack}: no policy on an execution role"
    for logical_id, document in documents.items():
        assert lint(document) == [], (stack, logical_id, json.dumps(document, indent=1))


def test_control_parliament_flags_unscoped_and_misconditioned_statements() -> None:
    """Control: the linter does flag what the scoping removed, so its silence means something."""
    interfaces = f"arn:aws:ec2:{REGION}:{ACCOUNT}:network-interface/*"
    mistakes = {
        "Version": "2012-10-17",
        "Statement": [
            # What the library granted before: every action on every resource.
            {"Effect": "Allow", "Action": list(NETWORK_INTERFACE_ACTIONS), "Resource": "*"},
            # A condition key the action does not take.
            {
                "Effect": "Allow",
                "Action": "ec2:DeleteNetworkInterface",
                "Resource": interfaces,
                "Condition": {"StringEquals": {"ec2:InstanceType": "ml.p5.48xlarge"}},
            },
            # The subnet, a resource CreateNetworkInterface requires, left out.
            {"Effect": "Allow", "Action": "ec2:CreateNetworkInterface", "Resource": interfaces},
        ],
    }
    issues = {issue for issue, _ in lint(mistakes)}
    assert {"RESOURCE_STAR", "UNKNOWN_CONDITION_FOR_ACTION", "RESOURCE_MISMATCH"} <= issues


@pytest.mark.parametrize("stack", VPC_STACKS)
def test_network_interfaces_are_pinned_to_the_clusters_own_subnets_and_groups(
    example_templates: dict[str, dict[str, Any]], stack: str
) -> None:
    template = example_templates[stack]
    _, cluster = only(template, "AWS::SageMaker::Cluster")
    vpc_config = concrete(cluster["Properties"]["VpcConfig"], template)
    subnets, groups = vpc_config["Subnets"], vpc_config["SecurityGroupIds"]
    assert subnets and groups
    by_sid = statements_by_sid(execution_role_documents(template))
    interfaces = f"arn:aws:ec2:{REGION}:{ACCOUNT}:network-interface/*"

    create = by_sid["HyperPodCreateNetworkInterfaces"]
    assert create["Action"] == "ec2:CreateNetworkInterface"
    assert sorted(create["Resource"]) == sorted(
        [
            interfaces,
            f"arn:aws:ec2:{REGION}:*:subnet/*",
            f"arn:aws:ec2:{REGION}:*:security-group/*",
        ]
    )
    assert create["Condition"] == {
        "StringEqualsIfExists": {"ec2:SubnetID": subnets, "ec2:SecurityGroupID": groups}
    }
    manage = by_sid["HyperPodManageNetworkInterfaces"]
    assert sorted(manage["Resource"]) == sorted([interfaces, f"arn:aws:ec2:{REGION}:*:instance/*"])
    assert manage["Condition"] == {
        "ArnLikeIfExists": {"ec2:Subnet": [f"arn:aws:ec2:{REGION}:*:subnet/{s}" for s in subnets]}
    }
    tag = by_sid["HyperPodTagNetworkInterfaces"]
    assert (tag["Action"], tag["Resource"]) == ("ec2:CreateTags", interfaces)


@pytest.mark.parametrize("stack", VPC_STACKS)
def test_only_actions_without_resource_level_permissions_use_a_star(
    example_templates: dict[str, dict[str, Any]], stack: str
) -> None:
    documents = execution_role_documents(example_templates[stack])
    starred = {
        action
        for document in documents.values()
        for statement in document["Statement"]
        if "*" in as_list(statement["Resource"])
        for action in as_list(statement["Action"])
    }
    assert starred == set(DESCRIBE_NETWORK_ACTIONS)
    describe = statements_by_sid(documents)["HyperPodDescribeNetwork"]
    assert describe["Condition"] == {"StringEquals": {"aws:RequestedRegion": REGION}}


def test_every_action_hyperpod_documents_is_still_granted(
    example_templates: dict[str, dict[str, Any]],
) -> None:
    """Scoping must not drop an action the HyperPod execution-role guide lists."""
    documents = execution_role_documents(example_templates["FsdpTraining"])
    granted = {
        action
        for document in documents.values()
        for statement in document["Statement"]
        for action in as_list(statement["Action"])
    }
    assert granted >= {*NETWORK_INTERFACE_ACTIONS, "ec2:CreateTags"}


def test_the_default_role_trusts_sagemaker_of_this_account_only(
    example_templates: dict[str, dict[str, Any]],
) -> None:
    template = example_templates["FsdpTraining"]
    (role_id,) = execution_role_ids(template)
    trust = concrete(
        template["Resources"][role_id]["Properties"]["AssumeRolePolicyDocument"], template
    )
    assert trust["Statement"] == [
        {
            "Action": "sts:AssumeRole",
            "Effect": "Allow",
            "Principal": {"Service": "sagemaker.amazonaws.com"},
            "Condition": {"StringEqualsIfExists": {"aws:SourceAccount": ACCOUNT}},
        }
    ]


@pytest.mark.parametrize("stack", ["FsdpBlueprint", "MegatronBlueprint"])
def test_the_volume_key_is_usable_only_through_sagemaker_for_aws_resources(
    example_templates: dict[str, dict[str, Any]], stack: str
) -> None:
    template = example_templates[stack]
    key_id, _ = only(template, "AWS::KMS::Key")
    key_arn = _get_att(template, key_id, "Arn")
    by_sid = statements_by_sid(execution_role_documents(template))
    via = {"kms:ViaService": f"sagemaker.{REGION}.amazonaws.com"}
    grants = by_sid["HyperPodVolumeKeyGrants"]
    assert (grants["Action"], grants["Resource"]) == ("kms:CreateGrant", key_arn)
    assert grants["Condition"] == {
        "StringEquals": via,
        "Bool": {"kms:GrantIsForAWSResource": "true"},
    }
    describe = by_sid["HyperPodVolumeKeyDescribe"]
    assert (describe["Action"], describe["Resource"], describe["Condition"]) == (
        "kms:DescribeKey",
        key_arn,
        {"StringEquals": via},
    )
    kms_actions = {
        action
        for statement in by_sid.values()
        for action in as_list(statement["Action"])
        if action.startswith("kms:")
    }
    assert kms_actions == {"kms:CreateGrant", "kms:DescribeKey"}


def test_imported_subnets_and_groups_are_pinned_by_id() -> None:
    """Subnets and groups the app did not create are pinned by the IDs given."""

    def define(stack: Stack) -> None:
        vpc = ec2.Vpc.from_vpc_attributes(
            stack,
            "Vpc",
            vpc_id="vpc-0example",
            availability_zones=["us-west-2a"],
            private_subnet_ids=["subnet-0aaa", "subnet-0bbb"],
        )
        HyperPodSlurmCluster(
            stack,
            "Cluster",
            vpc=vpc,
            security_groups=[ec2.SecurityGroup.from_security_group_id(stack, "Sg", "sg-0ccc")],
            instance_groups=[
                InstanceGroup.controller(
                    "controller", instance_type=HyperPodInstanceType.ML_M5_XLARGE
                )
            ],
        )

    template = synth_template(define).to_json()
    by_sid = statements_by_sid(execution_role_documents(template))
    assert by_sid["HyperPodCreateNetworkInterfaces"]["Condition"] == {
        "StringEqualsIfExists": {
            "ec2:SubnetID": ["subnet-0aaa", "subnet-0bbb"],
            "ec2:SecurityGroupID": ["sg-0ccc"],
        }
    }
    for document in execution_role_documents(template).values():
        assert lint(document) == []


def test_a_role_given_by_the_user_keeps_its_own_trust_policy() -> None:
    def define(stack: Stack) -> None:
        role = iam.Role(stack, "Mine", assumed_by=iam.ServicePrincipal("sagemaker.amazonaws.com"))
        HyperPodSlurmCluster(
            stack,
            "Cluster",
            execution_role=role,
            instance_groups=[
                InstanceGroup.controller(
                    "controller", instance_type=HyperPodInstanceType.ML_M5_XLARGE
                )
            ],
        )

    template = synth_template(define).to_json()
    (role,) = resources(template, "AWS::IAM::Role").values()
    assert "Condition" not in role["Properties"]["AssumeRolePolicyDocument"]["Statement"][0]


# -- what the templates grant the gate's functions ----------------------------------------


def gate_cluster_statements(template: dict[str, Any]) -> list[dict[str, Any]]:
    """The concrete statements granting SageMaker actions to a gate function's role (the
    check function's and the arm function's, which checks when the check cannot)."""
    roles = [
        {"Ref": function["Properties"]["Role"]["Fn::GetAtt"][0]}
        for function in resources(template, "AWS::Lambda::Function").values()
        if str(function["Properties"].get("Handler", "")).startswith("hyperpod_gate.")
    ]
    return [
        concrete(statement, template)
        for policy in resources(template, "AWS::IAM::Policy").values()
        if any(role in policy["Properties"]["Roles"] for role in roles)
        for statement in policy["Properties"]["PolicyDocument"]["Statement"]
        if any(action.startswith("sagemaker:") for action in as_list(statement["Action"]))
    ]


PARLIAMENT_UNKNOWN = frozenset({"sagemaker:ListClusterEvents"})
"""Actions newer than parliament's table (it reports them as unknown, and nothing else)."""


def test_the_gate_reads_the_cluster_and_its_nodes_on_the_cluster_arn_only(
    example_templates: dict[str, dict[str, Any]],
) -> None:
    """Both gate functions may read the cluster, list its nodes (the Running confirmation) and
    its events, on the cluster's ARN only; parliament, which knows each action's resource
    types, finds nothing in those statements but the actions its table does not know yet."""
    from hyperpod_constructs._gate.construct import CHECK_ACTIONS

    gated = 0
    for stack, template in example_templates.items():
        if not resources(template, "AWS::CloudFormation::WaitCondition"):
            continue
        cluster_id, _ = only(template, "AWS::SageMaker::Cluster")
        cluster_arn = _get_att(template, cluster_id, "ClusterArn")
        reads = gate_cluster_statements(template)
        assert len(reads) == 2, stack  # one per function
        for statement in reads:
            assert set(as_list(statement["Action"])) == set(CHECK_ACTIONS), stack
            assert as_list(statement["Resource"]) == [cluster_arn], stack
            for action in as_list(statement["Action"]):
                alone = {**statement, "Action": action}
                expected = (
                    [("UNKNOWN_ACTION", f"Unknown action {action}")]
                    if action in PARLIAMENT_UNKNOWN
                    else []
                )
                assert lint({"Version": "2012-10-17", "Statement": [alone]}) == expected, stack
        gated += 1
    assert gated >= 2


def test_control_parliament_flags_listing_nodes_on_another_resource() -> None:
    """Control: ListClusterNodes granted on a training job instead of the cluster is flagged,
    so parliament's silence above means the cluster ARN is the action's resource."""
    job = f"arn:aws:sagemaker:{REGION}:{ACCOUNT}:training-job/train"
    statement = {"Effect": "Allow", "Action": "sagemaker:ListClusterNodes", "Resource": job}
    issues = {issue for issue, _ in lint({"Version": "2012-10-17", "Statement": [statement]})}
    assert "RESOURCE_MISMATCH" in issues

"""``plan --change-set`` (issue 35): CloudFormation's change set, created, read and deleted
through botocore's Stubber, whose answers botocore checks against its CloudFormation model
(moto does not compute replacements). The plan never says less than the change set."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import botocore.session
import pytest
from botocore.stub import ANY, Stubber

from hyperpod_constructs.tools.plan import plan_stack
from hyperpod_constructs.tools.plan.changeset import ChangeSetError, with_change_set
from tests.support.plan_pairs import PlanPairs, plan_pairs

__all__ = ["plan_pairs"]

STACK = "PlanOwnRole"
CHANGE_SET = "arn:aws:cloudformation:us-east-1:123456789012:changeSet/hyperpod-plan-x/1"
STACK_ID = "arn:aws:cloudformation:us-east-1:123456789012:stack/PlanOwnRole/1"


@pytest.fixture
def cfn() -> Iterator[tuple[Any, Stubber]]:
    client = botocore.session.get_session().create_client(
        "cloudformation",
        region_name="us-east-1",
        aws_access_key_id="testing",
        aws_secret_access_key="testing",
    )
    with Stubber(client) as stub:
        yield client, stub
        stub.assert_no_pending_responses()


def replaced(logical_id: str, kind: str, replacement: str = "True") -> dict[str, Any]:
    return {
        "Type": "Resource",
        "ResourceChange": {
            "Action": "Modify",
            "LogicalResourceId": logical_id,
            "PhysicalResourceId": f"{logical_id}-physical",
            "ResourceType": kind,
            "Replacement": replacement,
            "Scope": ["Properties"],
            "Details": [
                {
                    "Target": {
                        "Attribute": "Properties",
                        "Name": "RoleName",
                        "RequiresRecreation": "Always",
                    },
                    "Evaluation": "Static",
                    "ChangeSource": "DirectModification",
                }
            ],
        },
    }


def expect(stub: Stubber, *answers: dict[str, Any]) -> None:
    stub.add_response(
        "create_change_set",
        {"Id": CHANGE_SET, "StackId": STACK_ID},
        {
            "StackName": STACK,
            "ChangeSetName": ANY,
            "ChangeSetType": "UPDATE",
            "TemplateBody": ANY,
            "Capabilities": ANY,
            "Parameters": ANY,
        },
    )
    for answer in answers:
        later_page = answer.pop("_after_token", False)
        stub.add_response(
            "describe_change_set",
            {"ChangeSetName": "hyperpod-plan-x", "StackName": STACK, **answer},
            {
                "ChangeSetName": ANY,
                "StackName": STACK,
                "IncludePropertyValues": True,
                **({"NextToken": ANY} if later_page else {}),
            },
        )
    stub.add_response("delete_change_set", {}, {"ChangeSetName": ANY, "StackName": STACK})


def gpu_role(template: dict[str, Any]) -> str:
    cluster = next(
        r for r in template["Resources"].values() if r["Type"] == "AWS::SageMaker::Cluster"
    )
    group = next(
        g for g in cluster["Properties"]["InstanceGroups"] if g["InstanceGroupName"] == "gpu"
    )
    role: str = group["ExecutionRole"]["Fn::GetAtt"][0]
    return role


def planned(plan_pairs: PlanPairs, client: Any) -> Any:
    template = plan_pairs.templates["own-role"]
    offline = plan_stack(template, template, stack=STACK, baseline="deployed")
    assert offline.exit_code == 0
    return with_change_set(offline, client, STACK, template, template, {}, sleep=lambda _: None)


def test_a_replacement_of_what_the_cluster_refers_to_is_at_least_cannot_tell(
    plan_pairs: PlanPairs, cfn: tuple[Any, Stubber]
) -> None:
    client, stub = cfn
    role = gpu_role(plan_pairs.templates["own-role"])
    expect(
        stub,
        {"Status": "CREATE_PENDING"},
        {"Status": "CREATE_COMPLETE", "Changes": [], "NextToken": "page-2"},
        {
            "Status": "CREATE_COMPLETE",
            "Changes": [replaced(role, "AWS::IAM::Role")],
            "_after_token": True,
        },
    )
    result = planned(plan_pairs, client)
    assert result.exit_code == 3
    assert f"{role} (AWS::IAM::Role) is replaced (by RoleName)" in result.headlines()[0]


def test_a_conditional_replacement_counts_and_an_unrelated_one_does_not(
    plan_pairs: PlanPairs, cfn: tuple[Any, Stubber]
) -> None:
    client, stub = cfn
    role = gpu_role(plan_pairs.templates["own-role"])
    marker = next(
        str(k)
        for k, r in plan_pairs.templates["own-role"]["Resources"].items()
        if r["Type"] == "AWS::SSM::Parameter"
    )
    expect(
        stub,
        {"Status": "CREATE_COMPLETE", "Changes": [replaced(marker, "AWS::SSM::Parameter")]},
    )
    unrelated = planned(plan_pairs, client)
    assert unrelated.exit_code == 0 and "agrees" in unrelated.notes[-1]
    expect(
        stub,
        {
            "Status": "CREATE_COMPLETE",
            "Changes": [replaced(role, "AWS::IAM::Role", "Conditional")],
        },
    )
    conditional = planned(plan_pairs, client)
    assert conditional.exit_code == 3 and "Conditional" in conditional.headlines()[0]


def test_no_changes_is_the_offline_plan_and_a_failure_is_an_error(
    plan_pairs: PlanPairs, cfn: tuple[Any, Stubber]
) -> None:
    client, stub = cfn
    no_changes = "The submitted information didn't contain changes."
    expect(stub, {"Status": "FAILED", "StatusReason": no_changes})
    assert planned(plan_pairs, client).exit_code == 0
    expect(stub, {"Status": "FAILED", "StatusReason": "Template format error"})
    with pytest.raises(ChangeSetError, match="Template format error"):
        planned(plan_pairs, client)

"""The gate's roles (``GateRole``) write what ``iam.Role`` writes, judged by aws-cdk-lib itself.

Each case builds the same role twice in one stack shape: once with aws-cdk-lib's ``iam.Role``
(statements added with ``add_to_policy`` and grants), once with :class:`GateRole`, and compares
the two stacks' templates whole, with and without ``@aws-cdk/aws-iam:minimizePolicies``.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import pytest
from aws_cdk import App, Stack
from aws_cdk import aws_iam as iam
from aws_cdk import aws_kms as kms
from aws_cdk import aws_sns as sns

from hyperpod_constructs._cdk.tokens import pseudo
from hyperpod_constructs._gate.roles import GateRole, allow

MINIMIZE = "@aws-cdk/aws-iam:minimizePolicies"

STATEMENTS: list[tuple[tuple[str, ...], list[str], str | None]] = [
    (("logs:PutLogEvents", "logs:CreateLogStream"), ["arn:aws:logs:::log-group:a"], None),
    (("sagemaker:DescribeCluster",), ["arn:aws:sagemaker:::cluster/x"], None),
    (("sagemaker:ListClusterNodes",), ["arn:aws:sagemaker:::cluster/x"], None),
    (("cloudformation:SignalResource",), [pseudo("STACK_ID")], "Signal"),
    (
        ("lambda:InvokeFunction",),
        ["arn:aws:lambda:::function:f", "arn:aws:lambda:::function:f:*"],
        None,
    ),
]
"""Statements of the shapes the gate writes: one or several actions and resources, a token, a
Sid, and two statements that a minimized document merges."""


def _template(minimize: bool, build: Callable[[Stack], None]) -> dict[str, Any]:
    app = App(context={MINIMIZE: minimize})
    stack = Stack(app, "Roles")
    build(stack)
    template: dict[str, Any] = app.synth().get_stack_by_name("Roles").template
    return template


def _with_topic(stack: Stack, grant: Callable[[sns.ITopic], None]) -> None:
    key = kms.Key(stack, "Key")
    grant(sns.Topic(stack, "Topic", master_key=key))


@pytest.mark.parametrize("minimize", [True, False], ids=["minimized", "as-added"])
@pytest.mark.parametrize("conditions", [None, {"StringEquals": {"aws:SourceAccount": "1"}}])
@pytest.mark.parametrize("topic", [False, True], ids=["no-topic", "topic-grant"])
def test_a_gate_role_is_written_as_iam_role_writes_it(
    minimize: bool, conditions: dict[str, Any] | None, topic: bool
) -> None:
    def l2(stack: Stack) -> None:
        role = iam.Role(
            stack,
            "Role",
            assumed_by=iam.ServicePrincipal("lambda.amazonaws.com", conditions=conditions),
            description="a role",
        )
        for actions, resources, sid in STATEMENTS:
            role.add_to_policy(
                iam.PolicyStatement(actions=list(actions), resources=resources, sid=sid)
            )
        if topic:
            _with_topic(stack, lambda t: t.grant_publish(role))

    def gate(stack: Stack) -> None:
        role = GateRole(
            stack,
            "Role",
            service="lambda.amazonaws.com",
            description="a role",
            conditions=conditions,
        )
        role.add(*(allow(actions, resources, sid=sid) for actions, resources, sid in STATEMENTS))
        if topic:
            _with_topic(stack, lambda t: t.grant_publish(role.grantee))
        role.write_policy()

    expected, written = _template(minimize, l2), _template(minimize, gate)
    assert json.dumps(written, indent=1) == json.dumps(expected, indent=1)  # bytes, key order


def test_a_topic_grant_reaches_the_default_policy_not_the_topic() -> None:
    """The grantee reports its stack's account, as ``iam.Role`` does: a same-account grant
    goes to the role's policy only, with no resource policy on the topic."""

    def gate(stack: Stack) -> None:
        role = GateRole(stack, "Role", service="lambda.amazonaws.com")
        _with_topic(stack, lambda t: t.grant_publish(role.grantee))
        role.write_policy()

    resources = _template(True, gate)["Resources"]
    types = sorted(r["Type"] for r in resources.values())
    assert "AWS::SNS::TopicPolicy" not in types
    (policy,) = (r for r in resources.values() if r["Type"] == "AWS::IAM::Policy")
    actions = json.dumps(policy["Properties"]["PolicyDocument"])
    assert "sns:Publish" in actions and "kms:GenerateDataKey*" in actions


def test_a_statement_after_the_policy_is_written_raises_instead_of_vanishing() -> None:
    app = App()
    role = GateRole(Stack(app, "Roles"), "Role", service="lambda.amazonaws.com")
    role.add(allow(("s3:GetObject",), "*"))
    role.write_policy()
    with pytest.raises(RuntimeError, match="already written"):
        role.add(allow(("s3:PutObject",), "*"))

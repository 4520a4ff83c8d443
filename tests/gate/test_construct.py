"""The MinCount gate's CloudFormation: which resources, wired how, allowed to do what."""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Sequence
from datetime import UTC, datetime
from types import SimpleNamespace
from typing import Any

import pytest
from aws_cdk import CfnParameter, Duration, Stack
from aws_cdk import aws_ssm as ssm
from aws_cdk.assertions import Annotations, Match, Template

from hyperpod_constructs import (
    HyperPodInstanceType,
    HyperPodSlurmCluster,
    InstanceGroup,
    MinCountGateOptions,
)
from hyperpod_constructs._runtime.hyperpod_gate import arm, poll
from hyperpod_constructs._runtime.hyperpod_gate.decision import GroupProgress
from hyperpod_constructs.gate.definition import CHECK_TIMEOUT_SECONDS
from tests.conftest import new_app
from tests.support import gate_defaults
from tests.support.groups import Groups
from tests.template_utils import (
    actions,
    as_dict,
    depends_on,
    flatten,
    only,
    references,
    resources,
    statement_resources,
    statements,
    walk,
)

GATE_TYPES = (
    "Custom::HyperPodMinCountGate",
    "AWS::CloudFormation::WaitCondition",
    "AWS::StepFunctions::StateMachine",
    "AWS::Lambda::Function",
    "AWS::Events::Rule",
)
"""What every gate has (the dashboard and the topic are opt-in)."""
SAGEMAKER_READ = {
    "sagemaker:DescribeCluster",
    "sagemaker:ListClusterNodes",
    "sagemaker:ListClusterEvents",
}
MAX_WAIT = 43200
MARGIN = 30 * 60
DEFAULT_TIMEOUT = gate_defaults.timeout_seconds()
DEFAULT_POLL = gate_defaults.poll_seconds()
NAMESPACE = gate_defaults.metrics_namespace()


GROUPS = Groups(
    controller_type=HyperPodInstanceType.ML_M5_XLARGE,
    compute_type=HyperPodInstanceType.ML_C5_4XLARGE,
    partition=None,
    deep_health_checks=(),
)
controller, compute = GROUPS.controller, GROUPS.compute


def build(
    groups: Sequence[InstanceGroup],
    options: MinCountGateOptions | None = None,
    after: Callable[[Stack, HyperPodSlurmCluster], None] | None = None,
) -> tuple[Stack, HyperPodSlurmCluster]:
    app = new_app()
    stack = Stack(app, "Gate")
    cluster = HyperPodSlurmCluster(
        stack, "Cluster", cluster_name="train", instance_groups=groups, readiness_gate=options
    )
    if after is not None:
        after(stack, cluster)
    return stack, cluster


def wait_id(stack: Stack, cluster: HyperPodSlurmCluster) -> str:
    """The wait condition's logical id, without synthesizing."""
    gate = cluster.min_count_gate
    assert gate is not None
    return str(stack.resolve(gate.wait_condition.logical_id))


def function_by_handler(template: dict[str, Any], handler: str) -> tuple[str, dict[str, Any]]:
    found = [
        (logical_id, fn)
        for logical_id, fn in resources(template, "AWS::Lambda::Function").items()
        if fn["Properties"]["Handler"] == handler
    ]
    assert len(found) == 1, found
    return found[0]


def role_of(function: dict[str, Any]) -> str:
    role = function["Properties"]["Role"]
    assert set(role) == {"Fn::GetAtt"} and role["Fn::GetAtt"][1] == "Arn", role
    return str(role["Fn::GetAtt"][0])


@pytest.fixture(scope="module")
def two_gated() -> dict[str, Any]:
    """Two gated groups, an ungated one, dashboard and default options."""
    stack, _ = build(
        [controller(), compute("a", 4, 2), compute("b", 8, 8), compute("c", 2)],
        MinCountGateOptions(dashboard=True),
    )
    return as_dict(Template.from_stack(stack))


# -- when the gate exists -----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("groups", "options"),
    [
        pytest.param([controller(), compute("cpu", 4)], None, id="no-min"),
        pytest.param([controller(), compute("cpu", 4, 0)], None, id="min-0"),
        pytest.param(
            [controller(), compute("gpu", 4, 4)], MinCountGateOptions(enabled=False), id="disabled"
        ),
    ],
)
def test_no_gate_without_a_gated_group_or_when_disabled(
    groups: list[InstanceGroup], options: MinCountGateOptions | None
) -> None:
    stack, cluster = build(groups, options)
    assert cluster.min_count_gate is None
    template = as_dict(Template.from_stack(stack))
    for type_name in GATE_TYPES:
        assert not resources(template, type_name), type_name
    assert set(r["Type"] for r in template["Resources"].values()) == {
        "AWS::SageMaker::Cluster",
        "AWS::IAM::Role",
    }


def test_the_gate_exists_when_a_group_is_gated(
    example_templates: dict[str, dict[str, Any]],
) -> None:
    for name in ("FsdpTraining", "Heterogeneous"):
        template = example_templates[name]
        for type_name in GATE_TYPES:
            assert resources(template, type_name), (name, type_name)
        assert len(resources(template, "AWS::CloudFormation::WaitCondition")) == 1
    for type_name in GATE_TYPES:
        assert not resources(example_templates["MinimalDev"], type_name), type_name


# -- the arm custom resource --------------------------------------------------------------------


def test_arm_properties_name_only_the_gated_groups(
    example_templates: dict[str, dict[str, Any]],
) -> None:
    template = example_templates["Heterogeneous"]
    _, gate = only(template, "Custom::HyperPodMinCountGate")
    props = gate["Properties"]
    # gpu is gated (8 of 10); controller, login and the late cpu group are not.
    assert props["Requirements"] == [{"GroupName": "gpu", "MinCount": "8", "TargetCount": "10"}]
    wait_condition_id, _ = only(template, "AWS::CloudFormation::WaitCondition")
    assert props["WaitConditionLogicalId"] == wait_condition_id
    handle_id, _ = only(template, "AWS::CloudFormation::WaitConditionHandle")
    assert props["WaitHandleLogicalId"] == handle_id  # the declaration the arm reads
    assert props["TimeoutSeconds"] == str(DEFAULT_TIMEOUT)
    assert props["PollIntervalSeconds"] == str(DEFAULT_POLL)
    assert props["ClusterName"] == "hetero"
    sm_id, _ = only(template, "AWS::StepFunctions::StateMachine")
    assert props["StateMachineArn"] == {"Ref": sm_id}
    arm_fn_id, _ = function_by_handler(template, "hyperpod_gate.arm.handler")
    assert props["ServiceToken"] == {"Fn::GetAtt": [arm_fn_id, "Arn"]}
    cluster_id, _ = only(template, "AWS::SageMaker::Cluster")
    assert cluster_id in depends_on(gate)


def test_arm_requirements_list_every_gated_group_sorted(two_gated: dict[str, Any]) -> None:
    _, gate = only(two_gated, "Custom::HyperPodMinCountGate")
    assert gate["Properties"]["Requirements"] == [
        {"GroupName": "a", "MinCount": "2", "TargetCount": "4"},
        {"GroupName": "b", "MinCount": "8", "TargetCount": "8"},
    ]


def test_the_wait_condition_has_a_creation_policy_and_no_handle(
    example_templates: dict[str, dict[str, Any]],
) -> None:
    """No bearer secret: the wait condition is not signalled through a handle's presigned URL
    (which could be refused for good). It has a CreationPolicy of one signal
    (SignalResource, IAM-authorized) and, as AWS documents for that case, no properties; the
    handle that declares the wait is referenced by nothing, so no presigned URL is in the
    template, its outputs or the properties."""
    for name in ("FsdpTraining", "Heterogeneous"):
        template = example_templates[name]
        # The handle only declares the wait (Metadata): nothing references its URL.
        handle_id, _ = only(template, "AWS::CloudFormation::WaitConditionHandle")
        assert not [
            logical_id
            for logical_id, resource in template["Resources"].items()
            if handle_id in references(resource.get("Properties", {}))
        ], name
        assert handle_id not in references(template.get("Outputs", {}))
        _, wait = only(template, "AWS::CloudFormation::WaitCondition")
        assert "Properties" not in wait
        assert wait["CreationPolicy"] == {"ResourceSignal": {"Count": 1, "Timeout": "PT12H"}}
        _, gate = only(template, "Custom::HyperPodMinCountGate")
        text = json.dumps(gate["Properties"])
        assert "https://" not in text and "X-Amz-" not in text


def test_the_gate_roles_may_signal_only_their_own_stack(
    example_templates: dict[str, dict[str, Any]],
) -> None:
    """Both functions' roles (the check function, and the arm function that signals when the
    check function's signal is refused) may call SignalResource, on this stack only."""
    template = example_templates["FsdpTraining"]
    statements = [
        statement
        for policy in resources(template, "AWS::IAM::Policy").values()
        for statement in policy["Properties"]["PolicyDocument"]["Statement"]
        if "cloudformation:SignalResource" in json.dumps(statement["Action"])
    ]
    assert len(statements) == 2
    for statement in statements:
        assert statement["Sid"] == "SignalWaitConditionOfThisStack"
        assert statement["Effect"] == "Allow"
        assert statement["Action"] == [
            "cloudformation:DescribeStackResource",
            "cloudformation:SignalResource",
        ]
        assert statement["Resource"] == {"Ref": "AWS::StackId"}


# -- the wait condition -------------------------------------------------------------------------


def test_wait_condition_waits_for_one_signal_after_the_arm(
    example_templates: dict[str, dict[str, Any]],
) -> None:
    template = example_templates["FsdpTraining"]
    _, wait = only(template, "AWS::CloudFormation::WaitCondition")
    arm_id, _ = only(template, "Custom::HyperPodMinCountGate")
    assert wait["CreationPolicy"]["ResourceSignal"]["Count"] == 1
    # A constant backstop: wait conditions cannot be updated (see the timeout tests below).
    assert wait["CreationPolicy"]["ResourceSignal"]["Timeout"] == "PT12H"
    assert MAX_WAIT == 12 * 3600
    assert arm_id in depends_on(wait)


def _worst_task_seconds(task: dict[str, Any]) -> float:
    # Each retrier counts its own attempts: at worst every one of them is exhausted.
    attempts = 1 + sum(retry["MaxAttempts"] for retry in task["Retry"])
    backoff = sum(
        retry["IntervalSeconds"] * retry.get("BackoffRate", 2.0) ** k
        for retry in task["Retry"]
        for k in range(retry["MaxAttempts"])
    )
    return float(task["TimeoutSeconds"] * attempts + backoff)


def worst_case_check_seconds(definition: dict[str, Any]) -> float:
    """The longest one check can take: every attempt of the check task times out, with the
    retry back-off in between, then its Catch hands the check to the next task (the arm
    function's), where the same happens."""
    states = definition["States"]
    task = states[definition["StartAt"]]
    total = _worst_task_seconds(task)
    (catch,) = task["Catch"]
    fallback = states[catch["Next"]]
    assert fallback["Type"] == "Task"
    return total + _worst_task_seconds(fallback)


@pytest.mark.parametrize(("hours", "poll_minutes"), [(3, 1), (11, 15), (11, 1)])
def test_the_gate_timeout_drives_the_loop_while_the_wait_keeps_a_12h_backstop(
    hours: int, poll_minutes: int
) -> None:
    """The configured timeout is the poll loop's deadline (an arm property); the loop's own
    Step Functions timeout comes after the last poll that can report the deadline; the wait
    condition always waits the maximum, 12 h (it cannot be updated)."""
    options = MinCountGateOptions(
        timeout=Duration.hours(hours), poll_interval=Duration.minutes(poll_minutes)
    )
    stack, _ = build([controller(), compute("gpu", 4, 2)], options)
    template = as_dict(Template.from_stack(stack))
    _, wait = only(template, "AWS::CloudFormation::WaitCondition")
    _, gate = only(template, "Custom::HyperPodMinCountGate")
    assert wait["CreationPolicy"]["ResourceSignal"]["Timeout"] == "PT12H" and MAX_WAIT == 43200
    # The deadline is the timeout, exactly (a longer one is a synth error, test below).
    deadline = hours * 3600
    assert gate["Properties"]["TimeoutSeconds"] == str(deadline)
    assert deadline + poll_minutes * 60 + MARGIN <= MAX_WAIT
    definition = _definition(template)
    last_report = deadline + poll_minutes * 60 + worst_case_check_seconds(definition)
    assert last_report <= definition["TimeoutSeconds"] <= last_report + MARGIN


def test_wait_ids_change_with_a_gated_minimum_or_target_only() -> None:
    base = [controller(), compute("gpu", 4, 2), compute("cpu", 2)]
    reference = wait_id(*build(base))
    changed = {
        "min": [controller(), compute("gpu", 4, 3), compute("cpu", 2)],
        "target": [controller(), compute("gpu", 5, 2), compute("cpu", 2)],
        "another gated group": [*base, compute("more", 2, 1)],
    }
    for what, groups in changed.items():
        assert wait_id(*build(groups)) != reference, what
    unchanged: dict[str, tuple[list[InstanceGroup], MinCountGateOptions | None]] = {
        "poll interval": (base, MinCountGateOptions(poll_interval=Duration.minutes(5))),
        "ungated group count": ([controller(), compute("gpu", 4, 2), compute("cpu", 9)], None),
        "ungated group added": ([*base, compute("extra", 3)], None),
        "dashboard off": (base, MinCountGateOptions(dashboard=False)),
        "group order": ([controller(), compute("cpu", 2), compute("gpu", 4, 2)], None),
    }
    for what, (groups, options) in unchanged.items():
        assert wait_id(*build(groups, options)) == reference, what


def test_a_changed_timeout_never_updates_a_created_wait_condition() -> None:
    """CloudFormation cannot update a wait condition (Count, Handle and Timeout: "Updates
    aren't supported"). A timeout change must either keep the wait condition exactly as it is
    or replace it under a new logical id."""
    groups = [controller(), compute("gpu", 4, 2)]
    templates = [
        as_dict(Template.from_stack(build(groups, MinCountGateOptions(timeout=t))[0]))
        for t in (Duration.hours(4), Duration.hours(5))
    ]
    (first_id, first), (second_id, second) = (
        only(t, "AWS::CloudFormation::WaitCondition") for t in templates
    )
    if first_id == second_id:
        assert first == second  # properties, creation policy and all


def test_a_gated_group_added_later_moves_the_wait_to_new_ids() -> None:
    def add(stack: Stack, cluster: HyperPodSlurmCluster) -> None:
        cluster.add_instance_group(compute("late", 3, 3))

    stack, cluster = build([controller(), compute("gpu", 4, 2)], after=add)
    template = as_dict(Template.from_stack(stack))
    condition_id, _ = only(template, "AWS::CloudFormation::WaitCondition")
    assert condition_id == wait_id(stack, cluster)
    _, gate = only(template, "Custom::HyperPodMinCountGate")
    assert [r["GroupName"] for r in gate["Properties"]["Requirements"]] == ["gpu", "late"]
    assert gate["Properties"]["WaitConditionLogicalId"] == condition_id


def test_a_gated_group_added_after_the_gate_was_resolved_is_an_error_not_an_omission() -> None:
    """The gate's late values (its requirements, the wait's ids) are produced once, the first
    time anything resolves them; a gated group added after that would be missing from the
    template, and the synth says so instead."""

    def add(stack: Stack, cluster: HyperPodSlurmCluster) -> None:
        stack.resolve(cluster.ready_fingerprint)  # produced now, with "gpu" only
        cluster.add_instance_group(compute("late", 3, 3))

    stack, _ = build([controller(), compute("gpu", 4, 2)], after=add)
    with pytest.raises(RuntimeError, match=r"Cluster/MinCountGate: the requirement\(s\) of late"):
        Template.from_stack(stack)


def test_dependants_wait_for_the_wait_condition(
    example_templates: dict[str, dict[str, Any]],
) -> None:
    for name, parameter in (
        ("FsdpTraining", "ReadyMarker"),
        ("Heterogeneous", "GpuPartitionReady"),
    ):
        template = example_templates[name]
        wait_id, _ = only(template, "AWS::CloudFormation::WaitCondition")
        (param_id,) = [
            k for k in resources(template, "AWS::SSM::Parameter") if k.startswith(parameter)
        ]
        assert wait_id in depends_on(template["Resources"][param_id]), name


def test_a_resource_depending_on_the_gate_waits_for_the_condition() -> None:
    def dependant(stack: Stack, cluster: HyperPodSlurmCluster) -> None:
        assert cluster.min_count_gate is not None
        marker = ssm.StringParameter(stack, "Marker", string_value="ready")
        marker.node.add_dependency(cluster.min_count_gate)

    stack, _ = build([controller(), compute("gpu", 4, 2)], after=dependant)
    template = as_dict(Template.from_stack(stack))
    wait_id, _ = only(template, "AWS::CloudFormation::WaitCondition")
    _, marker = only(template, "AWS::SSM::Parameter")
    assert wait_id in depends_on(marker)


# -- permissions --------------------------------------------------------------------------------


def test_check_function_reads_only_this_cluster_and_this_stack(
    example_templates: dict[str, dict[str, Any]],
) -> None:
    template = example_templates["FsdpTraining"]
    cluster_id, _ = only(template, "AWS::SageMaker::Cluster")
    _, check = function_by_handler(template, "hyperpod_gate.poll.handler")
    granted = statements(template, role_of(check))
    sagemaker = [s for s in granted if any(a.startswith("sagemaker:") for a in actions(s))]
    assert set().union(*(actions(s) for s in sagemaker)) == SAGEMAKER_READ
    for statement in sagemaker:
        assert statement_resources(statement) == [{"Fn::GetAtt": [cluster_id, "ClusterArn"]}]
    cloudformation = [
        s for s in granted if any(a.startswith("cloudformation:") for a in actions(s))
    ]
    assert len(cloudformation) == 1
    assert actions(cloudformation[0]) == {
        "cloudformation:DescribeStackResource",
        "cloudformation:SignalResource",
    }
    assert statement_resources(cloudformation[0]) == [{"Ref": "AWS::StackId"}]
    for statement in granted:
        assert "*" not in statement_resources(statement), statement
        assert not any(a.endswith(":*") or a == "*" for a in actions(statement)), statement


def test_arm_function_may_start_only_the_poll_loop(
    example_templates: dict[str, dict[str, Any]],
) -> None:
    template = example_templates["FsdpTraining"]
    sm_id, _ = only(template, "AWS::StepFunctions::StateMachine")
    _, arm_fn = function_by_handler(template, "hyperpod_gate.arm.handler")
    granted = statements(template, role_of(arm_fn))
    start = [s for s in granted if "states:StartExecution" in actions(s)]
    assert len(start) == 1
    assert statement_resources(start[0]) == [{"Ref": sm_id}]
    stop = [s for s in granted if "states:StopExecution" in actions(s)]
    assert len(stop) == 1
    assert actions(stop[0]) == {
        "states:StopExecution",
        "states:DescribeExecution",
        "states:GetExecutionHistory",  # the Running confirmation's progress (confirm.py)
    }
    (execution_arn,) = statement_resources(stop[0])
    assert sm_id in references(execution_arn)
    assert flatten(execution_arn).endswith(":*")
    for statement in granted:
        assert "*" not in statement_resources(statement), statement
        # It checks when the check function cannot: only reads of the cluster.
        sagemaker = {a for a in actions(statement) if a.startswith("sagemaker:")}
        assert sagemaker <= SAGEMAKER_READ


def test_poll_loop_may_invoke_only_the_gate_functions(
    example_templates: dict[str, dict[str, Any]],
) -> None:
    """The check function, and the arm function that signals when the check cannot."""
    template = example_templates["FsdpTraining"]
    check_id, _ = function_by_handler(template, "hyperpod_gate.poll.handler")
    arm_id, _ = function_by_handler(template, "hyperpod_gate.arm.handler")
    _, machine = only(template, "AWS::StepFunctions::StateMachine")
    role_id = machine["Properties"]["RoleArn"]["Fn::GetAtt"][0]
    invoke = [s for s in statements(template, role_id) if "lambda:InvokeFunction" in actions(s)]
    assert invoke
    targets = [references(r) for s in invoke for r in statement_resources(s)]
    assert {frozenset(t) for t in targets} == {frozenset({check_id}), frozenset({arm_id})}


# -- functions and the poll loop ----------------------------------------------------------------


def test_gate_functions_are_python_with_the_gate_handlers(
    example_templates: dict[str, dict[str, Any]],
) -> None:
    template = example_templates["FsdpTraining"]
    for handler in ("hyperpod_gate.poll.handler", "hyperpod_gate.arm.handler"):
        _, function = function_by_handler(template, handler)
        assert function["Properties"]["Runtime"].startswith("python3."), handler
        # One check must fit in the state machine's per-task timeout.
        assert function["Properties"]["Timeout"] < CHECK_TIMEOUT_SECONDS


def _definition(template: dict[str, Any]) -> dict[str, Any]:
    _, machine = only(template, "AWS::StepFunctions::StateMachine")
    assert machine["Properties"]["StateMachineType"] == "STANDARD"
    definition: dict[str, Any] = json.loads(flatten(machine["Properties"]["DefinitionString"]))
    return definition


def test_poll_loop_waits_checks_and_decides_until_its_timeout(
    example_templates: dict[str, dict[str, Any]],
) -> None:
    template = example_templates["FsdpTraining"]
    check_id, _ = function_by_handler(template, "hyperpod_gate.poll.handler")
    definition = _definition(template)
    states = definition["States"]
    assert definition[
        "TimeoutSeconds"
    ] >= DEFAULT_TIMEOUT + DEFAULT_POLL + worst_case_check_seconds(definition)
    start = states[definition["StartAt"]]
    assert start["Type"] == "Task"
    assert start["Resource"] == "{" + check_id + ".Arn}"
    choice = states[start["Next"]]
    assert choice["Type"] == "Choice"
    targets = {rule["StringEquals"]: rule["Next"] for rule in choice["Choices"]}
    wait = states[targets["WAITING"]]
    assert wait["Type"] == "Wait"
    assert states[wait["Next"]] is start  # the loop: Wait -> Check -> Choice -> Wait
    assert states[targets["READY"]]["Type"] == "Succeed"
    assert states[targets["FAILED"]]["Type"] == "Fail"
    # Anything else is not a verdict: the arm function checks.
    arm_id, _ = function_by_handler(template, "hyperpod_gate.arm.handler")
    assert states[choice["Default"]]["Resource"] == "{" + arm_id + ".Arn}"
    assert wait["SecondsPath"] == "$.pollIntervalSeconds"


def test_arm_properties_start_an_execution_the_poll_loop_understands(
    example_templates: dict[str, dict[str, Any]],
) -> None:
    """Contract between the template and the Lambda code: the properties CloudFormation sends
    parse, and the execution input carries what the definition and the poll function read."""
    template = example_templates["Heterogeneous"]
    _, gate = only(template, "Custom::HyperPodMinCountGate")
    sent = {
        key: value if isinstance(value, str | list) else f"arn:aws:states:us-east-1:1:{key}"
        for key, value in gate["Properties"].items()
    }
    parsed = arm.parse_properties(sent)
    now = datetime(2026, 6, 1, tzinfo=UTC)
    document = arm.execution_input(parsed, stack_id="arn:aws:cloudformation:stack/x/y", now=now)
    seconds_path = _definition(template)["States"]["WaitForCapacity"]["SecondsPath"]
    assert document[seconds_path.removeprefix("$.")] == DEFAULT_POLL
    request = poll.parse_event(document)
    assert request.wait_condition_logical_id == gate["Properties"]["WaitConditionLogicalId"]
    assert request.cluster_name == "hetero"
    assert {n: (r.min_count, r.target_count) for n, r in request.requirements.items()} == {
        "gpu": (8, 10)
    }
    assert request.deadline.timestamp() == now.timestamp() + DEFAULT_TIMEOUT


# -- dashboard and notifications ----------------------------------------------------------------


def _dashboard(template: dict[str, Any]) -> dict[str, Any]:
    _, dashboard = only(template, "AWS::CloudWatch::Dashboard")
    body: dict[str, Any] = json.loads(flatten(dashboard["Properties"]["DashboardBody"]))
    return body


def test_dashboard_has_one_widget_per_gated_group(two_gated: dict[str, Any]) -> None:
    widgets = _dashboard(two_gated)["widgets"]
    assert len(widgets) == 2
    shown = {metric[5] for widget in widgets for metric in widget["properties"]["metrics"]}
    assert {w["properties"]["title"].split(":")[0] for w in widgets} == {"a", "b"}
    assert shown == {"a", "b"}


def test_dashboard_graphs_the_metrics_the_poll_function_emits(
    example_templates: dict[str, dict[str, Any]],
) -> None:
    (widget,) = _dashboard(example_templates["Heterogeneous"])["widgets"]
    graphed = {
        tuple(part for part in metric if not isinstance(part, dict))
        for metric in widget["properties"]["metrics"]
    }
    progress = SimpleNamespace(
        name="gpu", current_count=3, min_count=8, target_count=10, nodes=None
    )
    emitted = set()
    for line in poll.metric_lines(
        NAMESPACE,
        "hetero",
        [progress],  # type: ignore[list-item]  # the fields metric_lines reads
        datetime(2026, 6, 1, tzinfo=UTC),
    ):
        document = json.loads(line)
        (directive,) = document["_aws"]["CloudWatchMetrics"]
        (dimensions,) = directive["Dimensions"]
        for metric in directive["Metrics"]:
            emitted.add(
                (
                    directive["Namespace"],
                    metric["Name"],
                    *[part for d in dimensions for part in (d, document[d])],
                )
            )
    assert graphed == emitted


def test_dashboard_is_opt_in() -> None:
    stack, cluster = build([controller(), compute("gpu", 4, 2)])
    assert cluster.min_count_gate is not None
    assert cluster.min_count_gate.dashboard is None
    assert not resources(as_dict(Template.from_stack(stack)), "AWS::CloudWatch::Dashboard")


def test_notification_topic_is_created_on_request_and_may_be_published_to(
    example_templates: dict[str, dict[str, Any]],
) -> None:
    template = example_templates["Heterogeneous"]
    topic_id, topic = only(template, "AWS::SNS::Topic")
    assert "KmsMasterKeyId" in topic["Properties"]
    _, gate = only(template, "Custom::HyperPodMinCountGate")
    assert gate["Properties"]["TopicArn"] == {"Ref": topic_id}
    _, check = function_by_handler(template, "hyperpod_gate.poll.handler")
    publish = [s for s in statements(template, role_of(check)) if "sns:Publish" in actions(s)]
    assert [statement_resources(s) for s in publish] == [[{"Ref": topic_id}]]
    # Without create_notification_topic: no topic and no TopicArn.
    fsdp = example_templates["FsdpTraining"]
    assert not resources(fsdp, "AWS::SNS::Topic")
    assert "TopicArn" not in only(fsdp, "Custom::HyperPodMinCountGate")[1]["Properties"]


# -- options ------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("options", "rule"),
    [
        (MinCountGateOptions(timeout=Duration.hours(13)), "HP-GATE-TIMEOUT"),
        (MinCountGateOptions(poll_interval=Duration.seconds(5)), "HP-GATE-POLL"),
        (MinCountGateOptions(poll_interval=Duration.minutes(16)), "HP-GATE-POLL"),
    ],
)
def test_invalid_gate_options_are_rejected(options: MinCountGateOptions, rule: str) -> None:
    _, cluster = build([controller(), compute("gpu", 4, 2)], options)
    assert [f.rule for f in cluster.findings()] == [rule]
    (finding,) = cluster.findings()
    if rule == "HP-GATE-POLL":  # the fix names the default poll interval, as the model has it
        (unit, number) = re.findall(r"Duration\.(\w+)\((\d+)\) \(the default\)", finding.fix)[0]
        assert getattr(Duration, unit)(int(number)).to_seconds() == DEFAULT_POLL, finding.fix
    # The gate an app may depend on still exists; the synth fails on the finding.
    assert cluster.min_count_gate is not None


def test_a_timeout_below_hyperpods_window_warns() -> None:
    stack, _ = build(
        [controller(), compute("gpu", 4, 2)], MinCountGateOptions(timeout=Duration.hours(2))
    )
    warnings = Annotations.from_stack(stack).find_warning(
        "/Gate/Cluster/MinCountGate", Match.string_like_regexp(r"\[HP-WARN-GATE-TIMEOUT\]")
    )
    assert len(warnings) == 1
    # the default it names is the model's
    message = str(warnings[0].entry.data)
    assert f"(the default is {gate_defaults.human(DEFAULT_TIMEOUT)})" in message, message
    default_stack, _ = build([controller(), compute("gpu", 4, 2)])
    assert not Annotations.from_stack(default_stack).find_warning(
        "*", Match.string_like_regexp("HP-WARN-GATE-TIMEOUT")
    )


def test_no_sagemaker_wildcards_anywhere_in_the_gate(two_gated: dict[str, Any]) -> None:
    checked = 0
    for node in walk(two_gated["Resources"]):
        is_statement = isinstance(node, dict) and "Action" in node and "Resource" in node
        if is_statement and any(a.startswith("sagemaker:") for a in actions(node)):
            assert "*" not in statement_resources(node), node
            checked += 1
    assert checked >= 1


def test_wait_ids_of_a_token_cluster_name_do_not_depend_on_creation_order() -> None:
    """A token's text (``${Token[TOKEN.n]}``) changes with every construct created before it;
    the fingerprint must use what it resolves to, or unrelated edits would start a new wait."""

    def ids(unrelated_parameters: int) -> str:
        stack = Stack(new_app(), "Gate")
        for index in range(unrelated_parameters):
            CfnParameter(stack, f"Unrelated{index}")
        name = CfnParameter(stack, "ClusterName").value_as_string
        cluster = HyperPodSlurmCluster(
            stack, "Cluster", cluster_name=name, instance_groups=[controller(), compute("g", 2, 2)]
        )
        return wait_id(stack, cluster)

    assert ids(0) == ids(3)


# -- logical ids -----------------------------------------------------------------------------------


def test_a_non_ascii_construct_id_still_gives_ascii_logical_ids() -> None:
    """`Clüster` failed synth only because of the gate: its prefix kept the ü."""
    app = new_app()
    stack = Stack(app, "Gate")
    cluster = HyperPodSlurmCluster(
        stack, "Clüster", cluster_name="train", instance_groups=[controller(), compute("gpu", 4, 2)]
    )
    template = as_dict(Template.from_stack(stack))
    assert cluster.min_count_gate is not None
    for logical_id in template["Resources"]:
        assert logical_id.isascii() and logical_id.isalnum(), logical_id


def test_a_long_construct_path_is_hash_truncated_to_255() -> None:
    from constructs import Construct

    app = new_app()
    stack = Stack(app, "Gate")
    scope: Construct = stack
    for index in range(6):
        scope = Construct(scope, f"Level{index}" + "x" * 50)
    HyperPodSlurmCluster(
        scope, "Cluster", cluster_name="train", instance_groups=[controller(), compute("gpu", 4, 2)]
    )
    template = as_dict(Template.from_stack(stack))
    ids = [i for i in template["Resources"] if "Wait" in i or "Handle" in i]
    waits = [i for i in ids if resources(template, "AWS::CloudFormation::WaitCondition").get(i)]
    assert len(waits) == 1
    assert all(len(i) <= 255 for i in template["Resources"]), max(map(len, template["Resources"]))


def test_gate_logical_id_keeps_short_paths_readable_and_cuts_long_ones() -> None:
    from hyperpod_constructs._gate.construct import gate_logical_id

    assert gate_logical_id(["Clüster", "MinCountGate"], "Wait", "ab12cd34") == (
        "ClsterMinCountGateWaitab12cd34"
    )
    long_a = gate_logical_id(["A" * 300, "MinCountGate"], "Handle", "ab12cd34")
    long_b = gate_logical_id(["A" * 300, "B", "MinCountGate"], "Handle", "ab12cd34")
    assert len(long_a) == len(long_b) == 255 and long_a != long_b
    assert long_a.endswith("Handleab12cd34")


# -- the always-present dependable ----------------------------------------------------------------


@pytest.mark.parametrize("gated", [True, False])
def test_depending_on_cluster_ready_always_works(gated: bool) -> None:
    """`x.node.add_dependency(cluster.ready)`: the wait condition when a group is gated,
    the cluster resource otherwise (min_count_gate is None then and crashed jsii)."""

    def after(stack: Stack, cluster: HyperPodSlurmCluster) -> None:
        marker = ssm.StringParameter(stack, "Marker", string_value="ready")
        marker.node.add_dependency(cluster.ready)

    stack, _ = build([controller(), compute("gpu", 4, 2 if gated else 0)], after=after)
    template = as_dict(Template.from_stack(stack))
    (marker,) = resources(template, "AWS::SSM::Parameter").values()
    if gated:
        (wait_id, _) = only(template, "AWS::CloudFormation::WaitCondition")
        assert depends_on(marker) == {wait_id}
    else:
        (cluster_id, _) = only(template, "AWS::SageMaker::Cluster")
        assert depends_on(marker) == {cluster_id}


def test_cluster_ready_counts_a_gated_group_added_after_the_dependency() -> None:
    def after(stack: Stack, cluster: HyperPodSlurmCluster) -> None:
        marker = ssm.StringParameter(stack, "Marker", string_value="ready")
        marker.node.add_dependency(cluster.ready)
        cluster.add_instance_group(compute("late", 4, 4))

    stack, _ = build([controller(), compute("cpu", 4)], after=after)
    template = as_dict(Template.from_stack(stack))
    (marker,) = resources(template, "AWS::SSM::Parameter").values()
    (wait_id, _) = only(template, "AWS::CloudFormation::WaitCondition")
    assert depends_on(marker) == {wait_id}


def test_metrics_are_cloudwatch_metrics_of_what_the_check_writes() -> None:
    _, cluster = build([controller(), compute("gpu", 4, 2)])
    metric = cluster.metric_current_count("gpu")
    assert metric.metric_name == "CurrentCount" and metric.statistic == "Maximum"
    assert metric.namespace == NAMESPACE
    assert metric.dimensions == {"ClusterName": "train", "InstanceGroup": "gpu"}
    assert cluster.metric_min_count("gpu").metric_name == "MinimumCount"
    assert cluster.metric_target_count("gpu").metric_name == "TargetCount"
    # the names and dimensions the check function really writes (Embedded Metric Format)
    group = GroupProgress("gpu", "Creating", 1, 2, 4, 4, 2)
    (line,) = poll.metric_lines(NAMESPACE, "train", [group], datetime.now(UTC))
    (spec,) = json.loads(line)["_aws"]["CloudWatchMetrics"]
    written = {m["Name"] for m in spec["Metrics"]}
    methods = (cluster.metric_current_count, cluster.metric_min_count, cluster.metric_target_count)
    assert written == {m("gpu").metric_name for m in methods}
    assert spec["Dimensions"] == [sorted(metric.dimensions or {})]


def test_arm_properties_follow_the_one_contract(two_gated: dict[str, Any]) -> None:
    from hyperpod_constructs._runtime.hyperpod_gate.contract import ARM_PROPERTY_KEYS

    _, gate = only(two_gated, "Custom::HyperPodMinCountGate")
    sent = set(gate["Properties"]) - {"ServiceToken", "ServiceTimeout"}
    assert sent == set(ARM_PROPERTY_KEYS) - {"TopicArn"}  # no topic in this stack
    (condition_id, _) = only(two_gated, "AWS::CloudFormation::WaitCondition")
    assert gate["Properties"]["WaitConditionLogicalId"] == condition_id


# -- the gate's resources, written as L1 classes ------------------------------------------------


def test_the_gates_resources_are_reachable_as_cdk_interfaces() -> None:
    """``check_function``, ``arm_function``, ``state_machine`` and ``fast_path`` are the
    aws-cdk-lib interfaces of the resources in the template: grants name them."""
    from aws_cdk import aws_iam as iam

    def grant(stack: Stack, cluster: HyperPodSlurmCluster) -> None:
        gate = cluster.min_count_gate
        assert gate is not None
        user = iam.Role(stack, "Operator", assumed_by=iam.AccountRootPrincipal())
        gate.check_function.grant_invoke(user)
        gate.arm_function.grant_invoke(user)
        gate.state_machine.grant_read(user)
        assert gate.check_function is gate.check_function  # built once
        user.add_to_policy(
            iam.PolicyStatement(
                actions=["events:DescribeRule"], resources=[gate.fast_path.rule_arn]
            )
        )

    stack, _ = build([controller(), compute("gpu", 4, 2)], after=grant)
    template = as_dict(Template.from_stack(stack))
    check_id, _ = function_by_handler(template, "hyperpod_gate.poll.handler")
    arm_id, _ = function_by_handler(template, "hyperpod_gate.arm.handler")
    machine_id, _ = only(template, "AWS::StepFunctions::StateMachine")
    rule_id, _ = only(template, "AWS::Events::Rule")
    (operator_id,) = [i for i in resources(template, "AWS::IAM::Role") if i.startswith("Operator")]
    granted = statements(template, operator_id)
    invoked = [
        r
        for s in granted
        if actions(s) == {"lambda:InvokeFunction"}
        for r in statement_resources(s)
    ]
    for function_id in (check_id, arm_id):
        assert {"Fn::GetAtt": [function_id, "Arn"]} in invoked
    assert any(
        {"Ref": machine_id} in statement_resources(s)
        for s in granted
        if "states:ListExecutions" in actions(s)
    )
    assert any(statement_resources(s) == [{"Fn::GetAtt": [rule_id, "Arn"]}] for s in granted)
    # Interfaces of existing resources: the gate defines no resource for them.
    assert len(resources(template, "AWS::Lambda::Function")) == 2


def test_tags_reach_every_taggable_resource_of_the_gate() -> None:
    from aws_cdk import Tags

    stack, _ = build(
        [controller(), compute("gpu", 4, 2)],
        after=lambda stack, _: Tags.of(stack).add("team", "nlp"),
    )
    template = as_dict(Template.from_stack(stack))
    for type_name in (
        "AWS::Lambda::Function",
        "AWS::Logs::LogGroup",
        "AWS::StepFunctions::StateMachine",
        "AWS::Events::Rule",
        "AWS::IAM::Role",
    ):
        found = resources(template, type_name)
        assert found, type_name
        for logical_id, resource in found.items():
            assert {"Key": "team", "Value": "nlp"} in resource["Properties"]["Tags"], logical_id


def test_gate_functions_record_their_asset_when_the_cli_asks_for_it() -> None:
    """The cdk CLI sets ``aws:cdk:enable-asset-metadata``; tools such as SAM local then find
    a function's code through its metadata, as for any ``lambda.Code.from_asset``."""
    app = new_app()
    app.node.set_context("aws:cdk:enable-asset-metadata", True)
    stack = Stack(app, "Gate")
    HyperPodSlurmCluster(
        stack, "Cluster", cluster_name="train", instance_groups=[controller(), compute("g", 2, 2)]
    )
    template = as_dict(Template.from_stack(stack))
    functions = resources(template, "AWS::Lambda::Function")
    assert len(functions) == 2
    for function in functions.values():
        digest = function["Properties"]["Code"]["S3Key"].removesuffix(".zip")
        assert function["Metadata"] == {
            "aws:asset:path": f"asset.{digest}",
            "aws:asset:is-bundled": False,
            "aws:asset:property": "Code",
        }
    without = as_dict(Template.from_stack(build([controller(), compute("g", 2, 2)])[0]))
    for function in resources(without, "AWS::Lambda::Function").values():
        assert "Metadata" not in function

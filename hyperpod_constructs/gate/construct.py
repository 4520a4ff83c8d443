"""The MinCount readiness gate: holds dependants until every gated group has its minimum."""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Mapping
from typing import TYPE_CHECKING

from aws_cdk import Annotations, Aws, CustomResource, Duration, RemovalPolicy, Stack
from aws_cdk import aws_cloudformation as cfn
from aws_cdk import aws_cloudwatch as cloudwatch
from aws_cdk import aws_iam as iam
from aws_cdk import aws_kms as kms
from aws_cdk import aws_lambda as lambda_
from aws_cdk import aws_logs as logs
from aws_cdk import aws_sns as sns
from aws_cdk import aws_stepfunctions as sfn
from constructs import Construct, Dependable, IConstruct

from .._lazy import lazy_any, lazy_string
from .._nag import acknowledge, arn_placeholder, ref_placeholder
from .._tokens import is_unresolved
from ..validation.finding import HyperPodValidationError
from ..validation.gate_rules import gate_option_findings
from .dashboard import dashboard_body
from .definition import build_definition
from .options import HYPERPOD_MIN_COUNT_WINDOW, MAX_GATE_TIMEOUT, MinCountGateOptions
from .runtime.hyperpod_gate.decision import GroupRequirement

if TYPE_CHECKING:
    from ..cluster import HyperPodSlurmCluster

RUNTIME_DIR = os.path.join(os.path.dirname(__file__), "runtime")
RUNTIME = lambda_.Runtime.PYTHON_3_14
LOOP_BACKSTOP_MARGIN = Duration.minutes(15)
"""The poll loop's own Step Functions timeout exceeds the gate deadline by one poll interval
plus this much, so the deadline check always runs before the backstop."""
_ASSET_EXCLUDES = ["__pycache__", "*.pyc"]
FUNCTION_TIMEOUT = Duration.seconds(100)
"""Below the state machine's 120-second task timeout, above botocore's bounded retries."""


class _DependencyRoots(Dependable):
    def __init__(self, *roots: IConstruct) -> None:
        super().__init__()
        self._roots = list(roots)

    @property
    def dependency_roots(self) -> list[IConstruct]:
        return self._roots


def gate_fingerprint(cluster_name: str, requirements: Mapping[str, GroupRequirement]) -> str:
    """A short hash of what the gate waits for; the wait condition's logical id embeds it,
    so changing a gated minimum or target creates a new wait condition (they are
    create-only) while any other change leaves the finished wait alone."""
    canonical = json.dumps(
        [
            cluster_name,
            sorted((name, r.min_count, r.target_count) for name, r in requirements.items()),
        ]
    )
    return hashlib.sha256(canonical.encode()).hexdigest()[:8]


class MinCountGate(Construct):
    """Holds dependants until every gated instance group is in service with its minimum.

    Created by :class:`HyperPodSlurmCluster` when a group has ``min_instance_count > 0``;
    reach it as ``cluster.min_count_gate`` and make resources wait with
    ``resource.node.add_dependency(cluster.min_count_gate)``.

    How it works: a custom resource arms the gate by starting a Step Functions Standard
    workflow (Wait -> check Lambda -> Choice) that polls DescribeCluster; a CloudFormation
    wait condition holds the dependants until the workflow signals it. It fails the
    deployment with the group, its counts, the cluster's failure message and HyperPod's latest
    error events when the cluster or a group fails, HyperPod rolls a group back, or the
    timeout passes. Deleting the stack stops the workflow.
    """

    def __init__(
        self,
        scope: Construct,
        id: str,
        *,
        cluster: HyperPodSlurmCluster,
        options: MinCountGateOptions,
    ) -> None:
        super().__init__(scope, id)
        findings = gate_option_findings(options)
        if findings:
            raise HyperPodValidationError(scope.node.path, findings)
        if options.timeout.to_seconds() < HYPERPOD_MIN_COUNT_WINDOW.to_seconds():
            Annotations.of(self).add_warning_v2(
                "hyperpod:HP-WARN-GATE-TIMEOUT",
                f"min_count_gate.timeout = {options.timeout.to_human_string()} is shorter than "
                "HyperPod's 3-hour MinCount window: the deployment may fail while HyperPod "
                "would still meet the minimum. Fix: use at least Duration.hours(3) "
                "(the default is 3 h 30 min) [HP-WARN-GATE-TIMEOUT]",
            )
        self._cluster = cluster
        self._options = options
        self._requirements: dict[str, GroupRequirement] = {}

        code = lambda_.Code.from_asset(RUNTIME_DIR, exclude=_ASSET_EXCLUDES)
        self.check_function = self._function(
            "CheckFunction",
            "hyperpod_gate.poll.handler",
            code,
            "Checks whether the gated HyperPod groups reached their minimum",
        )
        self.arm_function = self._function(
            "ArmFunction",
            "hyperpod_gate.arm.handler",
            code,
            "Arms the HyperPod MinCount gate (starts or stops its poll loop)",
        )
        cluster.grant(
            self.check_function, "sagemaker:DescribeCluster", "sagemaker:ListClusterEvents"
        )
        for function, sid in (
            (self.check_function, "ReadWaitHandleOfThisStack"),
            (self.arm_function, "ReadWaitConditionOfThisStack"),
        ):
            function.add_to_role_policy(
                iam.PolicyStatement(
                    sid=sid,
                    actions=["cloudformation:DescribeStackResource"],
                    resources=[Aws.STACK_ID],
                )
            )

        self.topic = options.notification_topic
        if self.topic is None and options.create_notification_topic:
            self.topic = sns.Topic(
                self,
                "Topic",
                display_name="HyperPod MinCount gate",
                enforce_ssl=True,
                master_key=kms.Alias.from_alias_name(self, "SnsKey", "alias/aws/sns"),
            )
        if self.topic is not None:
            self.topic.grant_publish(self.check_function)
            if options.notification_topic is None:
                acknowledge(
                    self.check_function.role or self.check_function,
                    "The topic is encrypted with the AWS managed key alias/aws/sns, whose key id "
                    "is only known at deploy time",
                    "AwsSolutions-IAM5[Action::kms:GenerateDataKey*]",
                    "AwsSolutions-IAM5[Resource::arn:<AWS::Partition>:kms:<AWS::Region>:"
                    "<AWS::AccountId>:key/*]",
                )

        # The loop's deadline, capped so that its "deadline reached" reason always arrives
        # before the wait condition's own 12-hour limit could end the wait without a reason.
        timeout_seconds = min(
            int(options.timeout.to_seconds()),
            int(MAX_GATE_TIMEOUT.to_seconds())
            - int(options.poll_interval.to_seconds())
            - int(LOOP_BACKSTOP_MARGIN.to_seconds()),
        )
        log_group = logs.LogGroup(
            self,
            "PollLoopLogs",
            retention=logs.RetentionDays.ONE_MONTH,
            removal_policy=RemovalPolicy.DESTROY,
        )
        self.state_machine = sfn.StateMachine(
            self,
            "PollLoop",
            definition_body=sfn.DefinitionBody.from_string(
                json.dumps(
                    build_definition(
                        poll_function_arn=self.check_function.function_arn,
                        timeout_seconds=timeout_seconds
                        + int(options.poll_interval.to_seconds())
                        + int(LOOP_BACKSTOP_MARGIN.to_seconds()),
                    )
                )
            ),
            state_machine_type=sfn.StateMachineType.STANDARD,
            logs=sfn.LogOptions(
                destination=log_group, level=sfn.LogLevel.ALL, include_execution_data=True
            ),
            tracing_enabled=True,
        )
        self.check_function.grant_invoke(self.state_machine)
        self.state_machine.grant_start_execution(self.arm_function)
        self.state_machine.grant_execution(self.arm_function, "states:StopExecution")
        acknowledge(
            self.state_machine.role,
            "X-Ray tracing and CloudWatch Logs delivery take no resource scope; the invoke "
            "grant covers the check function's versions",
            "AwsSolutions-IAM5[Resource::*]",
            f"AwsSolutions-IAM5[Resource::{arn_placeholder(self.check_function)}:*]",
        )
        sm_ref = ref_placeholder(self.state_machine)
        assert self.arm_function.role is not None
        acknowledge(
            self.arm_function.role,
            "Executions are named at run time; the grant is limited to this state machine's",
            "AwsSolutions-IAM5[Resource::arn:<AWS::Partition>:states:<AWS::Region>:"
            f'<AWS::AccountId>:execution:{{"Fn::Select":[6,{{"Fn::Split":[":",{{"Ref":"{sm_ref}"}}]}}]}}:*]',
        )

        properties: dict[str, object] = {
            "StateMachineArn": self.state_machine.state_machine_arn,
            "ClusterName": cluster.cluster_name,
            "Requirements": lazy_any(self._render_requirements),
            "WaitHandleLogicalId": lazy_string(self._handle_logical_id),
            "TimeoutSeconds": str(timeout_seconds),
            "PollIntervalSeconds": str(int(options.poll_interval.to_seconds())),
            "MetricsNamespace": options.metrics_namespace,
        }
        if self.topic is not None:
            properties["TopicArn"] = self.topic.topic_arn
        self.arm = CustomResource(
            self,
            "Arm",
            service_token=self.arm_function.function_arn,
            resource_type="Custom::HyperPodMinCountGate",
            properties=properties,
            service_timeout=Duration.minutes(5),
        )
        self.arm.node.add_dependency(cluster.node.default_child)

        self._handle = cfn.CfnWaitConditionHandle(self, "WaitHandle")
        self._condition = cfn.CfnWaitCondition(
            self,
            "WaitCondition",
            handle=self._handle.ref,
            count=1,
            # Wait conditions cannot be updated, so their own timeout is a constant backstop
            # (the maximum); the gate's configurable deadline is enforced by the poll loop,
            # which signals FAILURE with a reason when it passes. Changing `timeout` therefore
            # updates the arm resource in place and never forces a new wait.
            timeout=str(int(MAX_GATE_TIMEOUT.to_seconds())),
        )
        # The handle exists before the loop starts (it may signal on its first check); the
        # condition starts counting once the arm resource has started the loop.
        self.arm.node.add_dependency(self._handle)
        self._condition.node.add_dependency(self.arm)
        prefix = "".join(
            char
            for scope in self.node.scopes[len(Stack.of(self).node.scopes) :]
            for char in scope.node.id
            if char.isalnum()
        )
        self._fingerprint_value: str | None = None
        self._handle.override_logical_id(
            lazy_string(lambda: f"{prefix}Handle{self._fingerprint()}")
        )
        self._condition.override_logical_id(
            lazy_string(lambda: f"{prefix}Wait{self._fingerprint()}")
        )
        # `x.node.add_dependency(gate)` makes x wait for the wait condition only, not for every
        # resource of the gate's machinery.
        Dependable.implement(self, _DependencyRoots(self._condition))

        self.dashboard: cloudwatch.CfnDashboard | None = None
        if options.dashboard:
            self.dashboard = cloudwatch.CfnDashboard(
                self, "Dashboard", dashboard_body=lazy_string(self._dashboard_body)
            )

    @property
    def requirements(self) -> Mapping[str, GroupRequirement]:
        """What the gate waits for: minimum and target count per gated group."""
        return dict(self._requirements)

    @property
    def wait_condition(self) -> cfn.CfnWaitCondition:
        """The wait condition that holds the dependants (its logical id changes with the gated
        values)."""
        return self._condition

    @property
    def wait_handle(self) -> cfn.CfnWaitConditionHandle:
        """The handle the poll loop signals (its logical id changes with the gated values)."""
        return self._handle

    def set_requirements(self, requirements: Mapping[str, GroupRequirement]) -> None:
        """Wait for exactly these groups (replacing what the gate waited for)."""
        self._requirements = dict(requirements)

    def add_requirement(self, group_name: str, requirement: GroupRequirement) -> None:
        """Also wait for ``group_name`` (called by the cluster for each gated group it adds)."""
        self._requirements[group_name] = requirement

    def _fingerprint(self) -> str:
        """Wait conditions are create-only, so the handle's and the condition's logical ids
        embed a fingerprint of the gated values: changing a minimum or target makes
        CloudFormation create a new pair (a new wait) and delete the old one; other changes
        keep them. Computed once, when the template is written."""
        if self._fingerprint_value is None:
            stack = Stack.of(self)

            def stable(value: str) -> str:
                # A token's text depends on creation order; its resolved form does not.
                return json.dumps(stack.resolve(value)) if is_unresolved(value) else value

            self._fingerprint_value = gate_fingerprint(
                stable(self._cluster.cluster_name),
                {stable(name): r for name, r in self._requirements.items()},
            )
        return self._fingerprint_value

    def _function(
        self, id: str, handler: str, code: lambda_.Code, description: str
    ) -> lambda_.Function:
        log_group = logs.LogGroup(
            self,
            f"{id}Logs",
            retention=logs.RetentionDays.ONE_MONTH,
            removal_policy=RemovalPolicy.DESTROY,
        )
        # An explicit role with write access to its own log group only, instead of the
        # AWSLambdaBasicExecutionRole managed policy.
        role = iam.Role(
            self,
            f"{id}Role",
            assumed_by=iam.ServicePrincipal("lambda.amazonaws.com"),
            description=description,
        )
        log_group.grant_write(role)
        return lambda_.Function(
            self,
            id,
            runtime=RUNTIME,
            architecture=lambda_.Architecture.ARM_64,
            handler=handler,
            code=code,
            timeout=FUNCTION_TIMEOUT,
            memory_size=128,
            description=description,
            log_group=log_group,
            role=role,
        )

    def _render_requirements(self) -> list[dict[str, object]]:
        return [
            {"GroupName": name, "MinCount": str(r.min_count), "TargetCount": str(r.target_count)}
            for name, r in sorted(self._requirements.items())
        ]

    def _condition_logical_id(self) -> str:
        return Stack.of(self).resolve(self._condition.logical_id)  # type: ignore[no-any-return]

    def _handle_logical_id(self) -> str:
        return Stack.of(self).resolve(self._handle.logical_id)  # type: ignore[no-any-return]

    def _dashboard_body(self) -> str:
        return dashboard_body(
            cluster_name=self._cluster.cluster_name,
            region=Aws.REGION,
            namespace=self._options.metrics_namespace,
            requirements=self._requirements,
        )

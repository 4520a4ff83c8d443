"""The MinCount readiness gate: holds dependants until every gated group has its minimum."""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING

from aws_cdk import Annotations, ArnFormat, Aws, CustomResource, Duration, RemovalPolicy, Stack
from aws_cdk import aws_cloudformation as cfn
from aws_cdk import aws_cloudwatch as cloudwatch
from aws_cdk import aws_events as events
from aws_cdk import aws_events_targets as targets
from aws_cdk import aws_iam as iam
from aws_cdk import aws_kms as kms
from aws_cdk import aws_lambda as lambda_
from aws_cdk import aws_logs as logs
from aws_cdk import aws_sns as sns
from aws_cdk import aws_stepfunctions as sfn
from constructs import Construct, Dependable

from .._dependable import DependencyRoots
from .._lazy import lazy_any, lazy_string
from .._nag import acknowledge, acknowledge_compliance, arn_placeholder, ref_placeholder
from .._tokens import is_unresolved
from ..validation.finding import HyperPodValidationError
from ..validation.gate_rules import gate_option_findings
from .definition import build_definition
from .metrics import gate_metric
from .options import HYPERPOD_MIN_COUNT_WINDOW, MAX_GATE_TIMEOUT, MinCountGateOptions
from .runtime.hyperpod_gate.contract import (
    ARM_PROPERTY_KEYS,
    RESOURCE_TYPE,
    ArmProperties,
    Requirement,
)
from .runtime.hyperpod_gate.fastpath import FAST_PATH_DETAIL_TYPES, fast_path_input

if TYPE_CHECKING:
    from ..cluster import HyperPodSlurmCluster

RUNTIME_DIR = os.path.join(os.path.dirname(__file__), "runtime")
RUNTIME = lambda_.Runtime.PYTHON_3_14
LOOP_BACKSTOP_MARGIN = Duration.minutes(30)
"""The poll loop's own Step Functions timeout exceeds the gate deadline by one poll interval
plus this much, so the deadline check always runs before the backstop."""
_ASSET_EXCLUDES = ["__pycache__", "*.pyc"]
FUNCTION_TIMEOUT = Duration.seconds(100)
"""Below the state machine's 120-second task timeout, above botocore's bounded retries."""


def gate_fingerprint(cluster_name: str, requirements: Sequence[Requirement]) -> str:
    """A short hash of what the gate waits for; the wait condition's logical id embeds it,
    so changing a gated minimum or target creates a new wait condition (they are
    create-only) while any other change leaves the finished wait alone. A count given as a
    token enters as its resolved form (e.g. ``{"Ref": "GpuCount"}``): changing which
    parameter it names re-arms, changing only the parameter's value cannot."""
    canonical = json.dumps(
        [
            cluster_name,
            sorted([r.group_name, r.min_count, r.target_count] for r in requirements),
        ]
    )
    return hashlib.sha256(canonical.encode()).hexdigest()[:8]


MAX_LOGICAL_ID = 255
"""CloudFormation's limit on a logical id."""


def gate_logical_id(path: Sequence[str], kind: str, fingerprint: str) -> str:
    """Logical id of the gate's wait handle or condition: the construct path's ASCII letters
    and digits, then ``kind`` and the fingerprint. A path too long for CloudFormation's 255
    characters is cut and gets a hash of the full path, as CDK does for its own ids."""
    human = "".join(c for part in path for c in part if c.isascii() and c.isalnum())
    suffix = f"{kind}{fingerprint}"
    room = MAX_LOGICAL_ID - len(suffix)
    if len(human) > room:
        digest = hashlib.sha256("/".join(path).encode()).hexdigest()[:8].upper()
        human = human[: room - len(digest)] + digest
    return human + suffix


class MinCountGate(Construct):
    """Holds dependants until every gated instance group is in service with its minimum.

    Created by :class:`HyperPodSlurmCluster` when a group has a minimum (above 0, or a
    token); reach it as ``cluster.min_count_gate``, and make resources wait with
    ``resource.node.add_dependency(cluster.ready)``.

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
                f"readiness_gate.timeout = {options.timeout.to_human_string()} is shorter than "
                "HyperPod's 3-hour MinCount window: the deployment may fail while HyperPod "
                "would still meet the minimum. Fix: use at least Duration.hours(3) "
                "(the default is 3 h 30 min) [HP-WARN-GATE-TIMEOUT]",
            )
        self._cluster = cluster
        self._options = options
        self._requirements: dict[str, Requirement] = {}
        self._fingerprint_value: str | None = None
        # The loop's deadline, capped so that its "deadline reached" reason always arrives
        # before the wait condition's own 12-hour limit could end the wait without a reason.
        self._timeout_seconds = min(
            int(options.timeout.to_seconds()),
            int(MAX_GATE_TIMEOUT.to_seconds())
            - int(options.poll_interval.to_seconds())
            - int(LOOP_BACKSTOP_MARGIN.to_seconds()),
        )

        self._add_functions()
        self._add_topic()
        self._add_loop()
        self._add_arm()
        self._add_wait()
        self._add_fast_path()
        self._acknowledge_compliance()
        self.dashboard: cloudwatch.Dashboard | None = None
        """The opt-in dashboard (``MinCountGateOptions.dashboard``): one graph per gated
        group, built from :meth:`metric_current_count` and its siblings."""
        if options.dashboard:
            self.dashboard = cloudwatch.Dashboard(self, "Dashboard")

    # -- the steps of the constructor, in order ---------------------------------------------
    def _acknowledge_compliance(self) -> None:
        """The HIPAA Security and NIST 800-53 R5 findings on the gate's own resources, each
        with why it does not apply to a wait that lives for one deployment."""
        for reason, rule in (
            (
                "The gate's functions are invoked synchronously by Step Functions and "
                "CloudFormation, which retry or report a failed invocation; the EventBridge "
                "fast path is only a shortcut that the poll loop covers, so no event is lost",
                "LambdaDLQ",
            ),
            (
                "One check runs per poll of one deployment (a few hundred invocations over "
                "hours); reserved concurrency would take capacity from the account for nothing",
                "LambdaConcurrency",
            ),
            (
                "The functions call only AWS APIs (SageMaker, CloudFormation, Step Functions, "
                "the wait condition's S3 URL) and no resource inside a VPC; a VPC would need "
                "NAT or endpoints for each and protect nothing",
                "LambdaInsideVPC",
            ),
            (
                "The log groups hold the gate's progress lines (group counts and HyperPod's "
                "event text, never a secret: tested), kept for a limited retention and "
                "encrypted at rest by CloudWatch Logs",
                "CloudWatchLogGroupEncrypted",
            ),
            (
                "Each policy names only this gate's own cluster, state machine and wait "
                "handle; inline, it cannot be attached to any other principal",
                "IAMNoInlinePolicy",
            ),
        ):
            acknowledge_compliance(self, reason, rule)

    def _add_functions(self) -> None:
        """The check function (reads the cluster, signals the handle) and the arm function
        (starts and stops the loop; signals the handle when the check function cannot)."""
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
        self._cluster.grant(
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

    def _add_topic(self) -> None:
        """The SNS topic of the gate's messages: given, created on request, or none."""
        options = self._options
        self.topic = options.notification_topic
        if self.topic is None and options.create_notification_topic:
            self.topic = sns.Topic(
                self,
                "Topic",
                display_name="HyperPod MinCount gate",
                enforce_ssl=True,
                master_key=kms.Alias.from_alias_name(self, "SnsKey", "alias/aws/sns"),
            )
        if self.topic is None:
            return
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

    def _add_loop(self) -> None:
        """The Step Functions Standard workflow: check -> Choice -> Wait, until a decision."""
        options = self._options
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
                        fallback_function_arn=self.arm_function.function_arn,
                        timeout_seconds=self._timeout_seconds
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
        self.arm_function.grant_invoke(self.state_machine)
        # The arm function's rights on the loop are a policy of their own: in its role's
        # default policy they would close a cycle (the loop's definition names the arm
        # function, which depends on that default policy). The arm resource waits for it.
        stack = Stack.of(self)
        machine_name = stack.split_arn(
            self.state_machine.state_machine_arn, ArnFormat.COLON_RESOURCE_NAME
        ).resource_name
        self._arm_policy = iam.Policy(
            self,
            "ArmStartsLoop",
            roles=[self.arm_function.role] if self.arm_function.role else [],
            statements=[
                iam.PolicyStatement(
                    actions=["states:StartExecution"],
                    resources=[self.state_machine.state_machine_arn],
                ),
                iam.PolicyStatement(
                    actions=["states:StopExecution"],
                    resources=[
                        stack.format_arn(
                            service="states",
                            resource="execution",
                            arn_format=ArnFormat.COLON_RESOURCE_NAME,
                            resource_name=f"{machine_name}:*",
                        )
                    ],
                ),
            ],
        )
        acknowledge(
            self.state_machine.role,
            "X-Ray tracing and CloudWatch Logs delivery take no resource scope; the invoke "
            "grants cover the gate functions' versions",
            "AwsSolutions-IAM5[Resource::*]",
            f"AwsSolutions-IAM5[Resource::{arn_placeholder(self.check_function)}:*]",
            f"AwsSolutions-IAM5[Resource::{arn_placeholder(self.arm_function)}:*]",
        )
        sm_ref = ref_placeholder(self.state_machine)
        acknowledge(
            self._arm_policy,
            "Executions are named at run time; the grant is limited to this state machine's",
            "AwsSolutions-IAM5[Resource::arn:<AWS::Partition>:states:<AWS::Region>:"
            f'<AWS::AccountId>:execution:{{"Fn::Select":[6,{{"Fn::Split":[":",{{"Ref":"{sm_ref}"}}]}}]}}:*]',
        )

    def _add_arm(self) -> None:
        """The custom resource that starts the loop; its properties follow
        :class:`~hyperpod_constructs.gate.runtime.hyperpod_gate.contract.ArmProperties`."""
        properties = {key: lazy_any(self._arm_property(key)) for key in ARM_PROPERTY_KEYS}
        self.arm = CustomResource(
            self,
            "Arm",
            service_token=self.arm_function.function_arn,
            resource_type=RESOURCE_TYPE,
            properties=properties,
            service_timeout=Duration.minutes(5),
        )
        self.arm.node.add_dependency(self._cluster.node.default_child, self._arm_policy)

    def _add_wait(self) -> None:
        """The wait condition dependants wait for, and its handle; both logical ids embed a
        fingerprint of the gated values (wait conditions are create-only)."""
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
        path = [scope.node.id for scope in self.node.scopes[len(Stack.of(self).node.scopes) :]]
        self._handle.override_logical_id(
            lazy_string(lambda: gate_logical_id(path, "Handle", self._fingerprint()))
        )
        self._condition.override_logical_id(
            lazy_string(lambda: gate_logical_id(path, "Wait", self._fingerprint()))
        )
        # `x.node.add_dependency(gate)` makes x wait for the wait condition only, not for every
        # resource of the gate's machinery.
        Dependable.implement(self, DependencyRoots(lambda: [self._condition]))

    def _add_fast_path(self) -> None:
        """HyperPod's EventBridge events (cluster state changes, cluster/instance-group
        events) run a check at once, so an arriving minimum is seen in seconds instead of up
        to one poll interval. That check may only signal SUCCESS (same UniqueId as the loop's,
        so a repeat is harmless) and only while the wait condition is in progress; the loop
        stays the authority for failures and the fallback when an event is lost."""
        self.fast_path = events.Rule(
            self,
            "FastPath",
            description="Checks the HyperPod MinCount gate when the cluster reports a change",
            event_pattern=events.EventPattern(
                source=["aws.sagemaker"],
                detail_type=list(FAST_PATH_DETAIL_TYPES),
                resources=[self._cluster.cluster_arn],
            ),
        )
        self.fast_path.add_target(
            targets.LambdaFunction(
                self.check_function,
                event=events.RuleTargetInput.from_object(lazy_any(self._fast_path_input)),
                retry_attempts=2,
                max_event_age=Duration.minutes(15),
            )
        )

    def _fast_path_input(self) -> dict[str, object]:
        props = self._arm_properties()
        return fast_path_input(props, stack_id=Aws.STACK_ID)

    @property
    def requirements(self) -> Mapping[str, Requirement]:
        """What the gate waits for: minimum and target count per gated group (a count given
        as a token is its string token, resolved by CloudFormation)."""
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

    def add_requirement(self, requirement: Requirement) -> None:
        """Also wait for ``requirement.group_name`` (called by the cluster for each gated
        group it adds)."""
        group_name = requirement.group_name
        first = group_name not in self._requirements
        self._requirements[group_name] = requirement
        if self.dashboard is not None and first:
            self.dashboard.add_widgets(
                cloudwatch.GraphWidget(
                    title=f"{group_name}: instances (minimum {requirement.min_count}, "
                    f"target {requirement.target_count})",
                    left=[
                        self.metric_current_count(group_name),
                        self.metric_min_count(group_name),
                        self.metric_target_count(group_name),
                    ],
                    left_y_axis=cloudwatch.YAxisProps(min=0),
                    width=12,
                    height=6,
                )
            )

    def metric_current_count(
        self, group_name: str, props: cloudwatch.MetricOptions | None = None
    ) -> cloudwatch.Metric:
        """Instances in service in a gated group, as each check saw them (Maximum, 1 min)."""
        return self._metric("CurrentCount", group_name, props)

    def metric_min_count(
        self, group_name: str, props: cloudwatch.MetricOptions | None = None
    ) -> cloudwatch.Metric:
        """The minimum the gate waits for in a gated group (Maximum, 1 min)."""
        return self._metric("MinimumCount", group_name, props)

    def metric_target_count(
        self, group_name: str, props: cloudwatch.MetricOptions | None = None
    ) -> cloudwatch.Metric:
        """The target the gate asked for in a gated group (Maximum, 1 min)."""
        return self._metric("TargetCount", group_name, props)

    def _metric(
        self, name: str, group_name: str, props: cloudwatch.MetricOptions | None
    ) -> cloudwatch.Metric:
        return gate_metric(
            name,
            namespace=self._options.metrics_namespace,
            cluster_name=self._cluster.cluster_name,
            group_name=group_name,
            props=props,
        )

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

            def count(value: int | str) -> int | str:
                return value if isinstance(value, int) else stable(value)

            self._fingerprint_value = gate_fingerprint(
                stable(self._cluster.cluster_name),
                [
                    Requirement(stable(r.group_name), count(r.min_count), count(r.target_count))
                    for r in self._requirements.values()
                ],
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

    def _arm_property(self, key: str) -> Callable[[], object]:
        """One rendered property, at synth (None, so left out, for an absent TopicArn)."""
        return lambda: self._arm_properties().render().get(key)

    def _arm_properties(self) -> ArmProperties:
        stack = Stack.of(self)
        return ArmProperties(
            state_machine_arn=self.state_machine.state_machine_arn,
            cluster_name=self._cluster.cluster_name,
            requirements=tuple(r for _, r in sorted(self._requirements.items())),
            wait_handle_logical_id=str(stack.resolve(self._handle.logical_id)),
            wait_condition_logical_id=str(stack.resolve(self._condition.logical_id)),
            timeout_seconds=self._timeout_seconds,
            poll_interval_seconds=int(self._options.poll_interval.to_seconds()),
            topic_arn=None if self.topic is None else self.topic.topic_arn,
            metrics_namespace=self._options.metrics_namespace,
        )

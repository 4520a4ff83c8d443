"""The MinCount readiness gate: holds dependants until every gated group has its minimum."""

from __future__ import annotations

import functools
import hashlib
import json
import os
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, TypeVar, cast

import jsii
from aws_cdk import (
    Annotations,
    CfnCreationPolicy,
    CfnElement,
    CfnResourceSignal,
    CustomResource,
    Duration,
    Names,
    RemovalPolicy,
    Stack,
    Token,
)
from constructs import Construct, Dependable, IValidation

from .._cdk.dependable import DependencyRoots
from .._cdk.environment import stack_environment
from .._cdk.lazy import final_any, final_string
from .._cdk.modules import submodule
from .._cdk.nag import (
    acknowledge,
    acknowledge_compliance_each,
    arn_placeholder,
    logical_ids,
)
from .._cdk.paths import path_of, remember_path
from .._cdk.tokens import duration_seconds, is_unresolved, pseudo
from .._cluster.interface import IHyperPodCluster
from .._core.finding import Finding, HyperPodValidationError
from .._core.limits import MAX_GATE_TIMEOUT_HOURS
from .._runtime.hyperpod_gate.contract import (
    ARM_PROPERTY_KEYS,
    ENV_ARM_LOGICAL_ID,
    ENV_STACK_ID,
    ENV_WAIT_OPTIONS,
    META_GATE,
    META_PROPERTIES,
    METADATA_KEY,
    RESOURCE_TYPE,
    ArmProperties,
    Prop,
    Requirement,
    declare,
    options_of,
    render_requirements,
)
from .._runtime.hyperpod_gate.fastpath import FAST_PATH_DETAIL_TYPES, fast_path_input
from ..gate.definition import build_definition
from ..gate.options import LOOP_BACKSTOP_MARGIN_SECONDS, MinCountGateOptions
from ..validation.gate_rules import gate_option_findings, gate_timeout_advice
from .metrics import GateMetrics, MetricOptions, WatchedMetrics, gate_metric
from .resources import LambdaCode, function_vpc_config, log_group_properties
from .roles import GateRole, allow, policy_document

if TYPE_CHECKING:
    from aws_cdk import aws_cloudformation as cfn
    from aws_cdk import aws_cloudwatch as cloudwatch
    from aws_cdk import aws_events as events
    from aws_cdk import aws_iam as iam
    from aws_cdk import aws_lambda as lambda_
    from aws_cdk import aws_logs as logs
    from aws_cdk import aws_sns as sns
    from aws_cdk import aws_stepfunctions as sfn
else:  # imported where first used (_cdk/modules.py): by the first gate, not by the import
    cfn = submodule("aws_cloudformation")
    events = submodule("aws_events")
    iam = submodule("aws_iam")
    lambda_ = submodule("aws_lambda")
    logs = submodule("aws_logs")
    sfn = submodule("aws_stepfunctions")


RUNTIME_DIR = os.path.join(os.path.dirname(os.path.dirname(__file__)), "_runtime")
RUNTIME = "python3.14"
"""The Lambda runtime of the gate's functions (``lambda.Runtime.PYTHON_3_14``)."""
_ASSET_EXCLUDES = ["__pycache__", "*.pyc"]
FUNCTION_TIMEOUT_SECONDS = 150
"""Below the state machine's 170-second task timeout, above the worst case of one check
(``hyperpod_gate.poll.CHECK_WORST_CASE`` plus its safety margin)."""
CHECK_ACTIONS = (
    "sagemaker:DescribeCluster",
    "sagemaker:ListClusterNodes",
    "sagemaker:ListClusterEvents",
)
"""What a check reads of the cluster, granted on its ARN to both gate functions."""
LOG_DELIVERY_ACTIONS = (
    "logs:CreateLogDelivery",
    "logs:GetLogDelivery",
    "logs:UpdateLogDelivery",
    "logs:DeleteLogDelivery",
    "logs:ListLogDeliveries",
    "logs:PutResourcePolicy",
    "logs:DescribeResourcePolicies",
    "logs:DescribeLogGroups",
)
"""What a state machine's role needs to deliver its logs (as ``sfn.StateMachine`` grants)."""
XRAY_ACTIONS = (
    "xray:PutTraceSegments",
    "xray:PutTelemetryRecords",
    "xray:GetSamplingRules",
    "xray:GetSamplingTargets",
)
"""What a state machine's role needs for X-Ray tracing (as ``sfn.StateMachine`` grants)."""
_View = TypeVar("_View")


ARM_SERVICE_TIMEOUT_MINUTES = 5
"""How long CloudFormation waits for one invocation of the arm function (``ServiceTimeout``)."""
WAIT_TIMEOUT = f"PT{MAX_GATE_TIMEOUT_HOURS}H"
"""The timeout of the wait condition's ``CreationPolicy``: its own limit, as
``Duration.hours(MAX_GATE_TIMEOUT_HOURS).to_iso_string()`` writes it."""

SIGNAL_STATEMENT_SID = "SignalWaitConditionOfThisStack"
"""The statement of both functions' policies that reads and signals the wait condition."""
SIGNAL_CHANNEL = "SignalResource"
"""How the wait condition is signalled; part of the fingerprint, so a stack whose wait
condition had a handle (before the ``CreationPolicy``) gets a new one instead of an update
of a create-only resource."""


def gate_fingerprint(cluster_name: str, requirements: Sequence[Requirement]) -> str:
    """A short hash of what the gate waits for; the wait condition's logical id embeds it,
    so changing a gated minimum or target creates a new wait condition (they are
    create-only) while any other change leaves the finished wait alone. A count given as a
    token enters as its resolved form (e.g. ``{"Ref": "GpuCount"}``): changing which
    parameter it names re-arms, changing only the parameter's value cannot."""
    canonical = json.dumps(
        [
            SIGNAL_CHANNEL,
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


@jsii.implements(IValidation)
class _GateRequirements:
    """A gate must wait for something: a gate on an imported cluster is given its groups with
    :meth:`MinCountGate.add_requirement` (the cluster's own groups are not known here). And it
    waits for what the cluster's template finally carries: escape hatches and aspects that
    change a gated value on the L1 are refused (:func:`requirement_mismatches`)."""

    def __init__(self, gate: MinCountGate) -> None:
        self._gate = gate

    def validate(self) -> list[str]:
        gate = self._gate
        late = gate._late_requirements()
        if late:
            return late
        resource = gate.cluster.node.default_child
        if not gate.requirements and resource is None:  # a cluster construct reports its own
            return [
                f"MinCountGate {gate.node.path} waits for no instance group: give it each "
                "gated group with gate.add_requirement(Requirement(group_name, min_count=..., "
                "target_count=...)) (from hyperpod_constructs.gate import Requirement), the "
                "values deployed on the cluster, or remove the gate"
            ]
        final = getattr(resource, "final_properties", None)
        recorded = getattr(resource, "recorded_overrides", None) or ()
        touched = [p for p, _ in recorded if p == "Properties" or p.startswith("Properties.")]
        if not callable(final) or not touched:
            return []  # no escape hatch: the template renders the groups the gate was given
        properties = final()
        path = gate.cluster.node.path
        if properties is None:
            return [
                f"{path}: an escape-hatch override of the cluster resource cannot be followed, "
                "so the readiness gate cannot know the minimums the template carries. Fix: set "
                "min_instance_count / instance_count on the InstanceGroup instead of overriding"
            ]
        stack = Stack.of(gate)
        name = stack.resolve(gate.cluster.cluster_name)
        # Only what the overrides changed: a value the typed API itself renders otherwise (a
        # minimum in STANDARD mode) is the cluster's own error (HP-MIN-NEEDS-CONTINUOUS).
        typed = final(overrides=False)
        own = (
            set()
            if typed is None
            else set(requirement_mismatches(typed, gate.requirements, name, stack))
        )
        return [
            f"{path}: {problem}. Fix: set it on the InstanceGroup (min_instance_count, "
            "instance_count, name) instead of overriding the L1, so that the gate waits for "
            "what HyperPod is asked for"
            for problem in requirement_mismatches(properties, gate.requirements, name, stack)
            if problem not in own
        ]


def requirement_mismatches(
    properties: Mapping[str, object],
    requirements: Mapping[str, Requirement],
    cluster_name: object,
    stack: Stack,
) -> list[str]:
    """Where the cluster resource's final ``ClusterName`` and ``InstanceGroups`` (after escape
    hatches and aspects) disagree with what the gate waits for: one line per group and field,
    with both values."""

    def value(raw: object) -> object:
        # A plain number, name or None is what it is: only the rest crosses to jsii.
        plain = (
            raw is None or isinstance(raw, int) or (isinstance(raw, str) and not is_unresolved(raw))
        )
        resolved = raw if plain else stack.resolve(raw)
        return str(resolved) if isinstance(resolved, (int, float)) else resolved

    problems: list[str] = []
    if "ClusterName" in properties and value(properties["ClusterName"]) != value(cluster_name):
        problems.append(
            f"ClusterName is {value(properties['ClusterName'])!r} in the template, but the "
            f"readiness gate polls cluster {value(cluster_name)!r}"
        )
    groups = properties.get("InstanceGroups")
    final = {
        str(g.get("InstanceGroupName")): g
        for g in (groups if isinstance(groups, list) else [])
        if isinstance(g, Mapping)
    }
    for name, group in final.items():
        requirement = requirements.get(name)
        minimum = value(group.get("MinInstanceCount", 0))
        if requirement is None:
            if minimum not in ("0", None):
                problems.append(
                    f"instance group {name}: MinInstanceCount is {minimum} in the template, "
                    "but the readiness gate does not wait for the group"
                )
            continue
        for field, template, gated in (
            ("MinInstanceCount", minimum, value(requirement.min_count)),
            ("InstanceCount", value(group.get("InstanceCount")), value(requirement.target_count)),
        ):
            if template != gated:
                problems.append(
                    f"instance group {name}: {field} is {template} in the template, but the "
                    f"readiness gate waits for {gated}"
                )
    for name in requirements:
        if name not in final:
            problems.append(
                f"instance group {name}: the readiness gate waits for it, but the template's "
                "InstanceGroups no longer has it"
            )
    return problems


class MinCountGate(Construct, GateMetrics):
    """Holds dependants until every gated instance group is in service with its minimum.

    Created by :class:`HyperPodSlurmCluster` when a group has a minimum (above 0, or a
    token); reach it as ``cluster.min_count_gate``, and make resources wait with
    ``resource.node.add_dependency(cluster.ready)``.

    Example (``cluster`` has a gated group named ``gpu``):

    ```python
    gate = cluster.min_count_gate  # None while no group is gated
    if gate is not None:
        in_service = gate.metric_current_count("gpu")  # a CloudWatch metric, for an alarm
    ```

    How it works: a custom resource arms the gate by starting a Step Functions Standard
    workflow (Wait -> check Lambda -> Choice) that polls DescribeCluster; a CloudFormation
    wait condition holds the dependants until the workflow signals it. It fails the
    deployment with the group, its counts, the cluster's failure message and HyperPod's latest
    error events when the cluster or a group fails, HyperPod rolls a group back, or the
    timeout passes. Deleting the stack stops the workflow.

    Its functions, log groups, state machine and EventBridge rule are L1 resources at the
    paths (hence with the logical ids) their L2 constructs would have, for a cheaper synth;
    :attr:`check_function`, :attr:`arm_function`, :attr:`state_machine` and
    :attr:`fast_path` offer them as aws-cdk-lib interfaces.
    """

    def __init__(
        self,
        scope: Construct,
        id: str,
        *,
        cluster: IHyperPodCluster,
        options: MinCountGateOptions,
    ) -> None:
        """Define the gate. :class:`HyperPodSlurmCluster` defines it (as
        ``cluster.min_count_gate``) when its first gated group is added; an app rarely does.

        :param scope: the construct to define it in (a Stack or a construct in one).
        :param id: its id, unique within ``scope``.
        :param cluster: the cluster whose gated groups it waits for.
        :param options: its timeout, poll interval, notifications and metrics.
        """
        super().__init__(scope, id)
        findings = gate_option_findings(options)
        if findings:
            raise HyperPodValidationError(scope.node.path, findings)
        # Durations are jsii objects: read each once (every read is a round trip to Node).
        timeout_seconds = int(duration_seconds(options.timeout))
        self._poll_seconds = int(duration_seconds(options.poll_interval))
        margin_seconds = LOOP_BACKSTOP_MARGIN_SECONDS
        for advice in gate_timeout_advice(options.timeout):
            Annotations.of(self).add_warning_v2(f"hyperpod:{advice.rule}", advice.message())
        self._cluster = cluster
        self._cluster_arn = cluster.cluster_arn
        self._options = options
        self._requirements: dict[str, Requirement] = {}
        self._fingerprint_value: str | None = None
        self._produced_for: dict[str, Requirement] | None = None
        """The requirements when the gate's late values were first produced (at synth)."""
        # The loop's deadline is the requested timeout, exactly: gate_option_findings refused a
        # timeout whose backstop would not end before the wait condition's own 12-hour limit.
        self._timeout_seconds = timeout_seconds
        self._loop_timeout_seconds = self._timeout_seconds + self._poll_seconds + margin_seconds
        self._stack = Stack.of(self)

        self._arm_id_value: str | None = None
        self._arm_id = final_string(self._arm_logical_id)
        """The arm resource's logical id, one token for the values that name it."""
        # The construct ids from the stack down (ids never contain the path separator).
        remember_path(self, scope, id)
        path = path_of(self).split("/")[len(path_of(self._stack).split("/")) :]
        self._handle_id = final_string(lambda: gate_logical_id(path, "Handle", self._fingerprint()))
        """The wait handle's logical id: one token for its override and the values naming it."""
        self._condition_id = final_string(
            lambda: gate_logical_id(path, "Wait", self._fingerprint())
        )
        """The wait condition's logical id, likewise."""
        self._wait_options_value: str | None = None
        self._views: dict[str, object] = {}
        self._code: LambdaCode | None = None
        self._function_scopes: dict[str, Construct] = {}
        """Each function's construct (the L2's path), by id."""
        self._add_functions()
        self._add_topic()
        self._write_function_policies()
        self._add_loop()
        self._add_arm()
        self._add_wait()
        self._add_fast_path()
        self._acknowledge_compliance()
        self.dashboard: cloudwatch.Dashboard | None = None
        """The opt-in dashboard (``MinCountGateOptions.dashboard``): one graph per gated
        group, built from :meth:`metric_current_count` and its siblings."""
        if options.dashboard:
            from aws_cdk import aws_cloudwatch as cloudwatch  # only for the opt-in dashboard

            self.dashboard = cloudwatch.Dashboard(self, "Dashboard")

    # -- the steps of the constructor, in order ---------------------------------------------
    def _acknowledge_compliance(self) -> None:
        """The compliance packs' findings on the gate's own resources (HIPAA Security, NIST
        800-53 R4 and R5, PCI DSS 3.2.1, Serverless), each with why it does not apply to a
        wait that lives for one deployment."""
        acknowledge_compliance_each(
            self,
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
                "the custom resource's S3 response URL) and no resource inside a VPC; a VPC "
                "would need NAT or endpoints for each and protect nothing",
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
            (
                "The EventBridge rule only starts an early check when HyperPod reports a "
                "change; an event it cannot deliver is caught by the next poll of the loop, "
                "so a dead-letter queue would hold nothing anyone needs to replay",
                "EventBusDLQ",
            ),
            (
                "Each invocation makes a few AWS API calls and logs their outcome; the "
                "state machine that invokes the functions is traced with X-Ray, which shows "
                "every invocation's duration and result",
                "LambdaTracing",
            ),
        )

    def _add_functions(self) -> None:
        """The check function (reads the cluster, signals the handle) and the arm function
        (starts and stops the loop; signals the handle when the check function cannot)."""
        # Both functions only act for this stack; the check function finds the running
        # execution (whose input holds the requirements) through the arm resource.
        stack_id = {ENV_STACK_ID: pseudo("STACK_ID")}
        self._check_role, self._check_function = self._function(
            "CheckFunction",
            "hyperpod_gate.poll.handler",
            "Checks whether the gated HyperPod groups reached their minimum",
            {**stack_id, ENV_ARM_LOGICAL_ID: self._arm_id},
        )
        # The arm function acts only on requests for its own arm resource (the stack and the
        # logical id), which it reads back from CloudFormation before it starts or stops a loop.
        self._arm_role, self._arm_function = self._function(
            "ArmFunction",
            "hyperpod_gate.arm.handler",
            "Arms the HyperPod MinCount gate (starts or stops its poll loop; checks when "
            "the check function cannot)",
            {
                **stack_id,
                ENV_ARM_LOGICAL_ID: self._arm_id,
                # The options that may change without a new wait (the wait handle's Metadata
                # declares the rest): the arm function refuses a request that differs.
                ENV_WAIT_OPTIONS: final_string(self._wait_options),
            },
        )
        self._check_function_arn = self._check_function.attr_arn
        self._arm_function_arn = self._arm_function.attr_arn
        for role in (self._check_role, self._arm_role):
            # The arm function runs the same check when the check function cannot;
            # ListClusterNodes confirms that the minimum of nodes is Running (what
            # `cluster.grant(role, *CHECK_ACTIONS)` grants).
            role.add(allow(CHECK_ACTIONS, self._cluster_arn))
        for role in (self._check_role, self._arm_role):
            # Reads the wait condition's (and the arm resource's, the declaration's) state, and
            # signals the wait condition (its CreationPolicy): this stack only, no URL.
            role.add(
                allow(
                    ("cloudformation:DescribeStackResource", "cloudformation:SignalResource"),
                    pseudo("STACK_ID"),
                    sid=SIGNAL_STATEMENT_SID,
                )
            )

    def _add_topic(self) -> None:
        """The SNS topic of the gate's messages: given, created on request, or none."""
        options = self._options
        self.topic: sns.ITopic | None = options.notification_topic
        """The SNS topic of the gate's messages (``None`` without one)."""
        if self.topic is None and options.create_notification_topic:
            from aws_cdk import aws_kms as kms  # only for a topic the gate creates
            from aws_cdk import aws_sns as sns

            self.topic = sns.Topic(
                self,
                "Topic",
                display_name="HyperPod MinCount gate",
                enforce_ssl=True,
                master_key=options.encryption_key
                or kms.Alias.from_alias_name(self, "SnsKey", "alias/aws/sns"),
            )
        if self.topic is None:
            return
        from aws_cdk import Aspects

        from .subscriptions import SubscriptionAfterReady

        Aspects.of(self._stack).add(SubscriptionAfterReady(self.topic, lambda: self._condition))
        for role in (self._check_role, self._arm_role):
            self.topic.grant_publish(role.grantee)
            if options.notification_topic is None and options.encryption_key is None:
                acknowledge(
                    role.scope,
                    "The topic is encrypted with the AWS managed key alias/aws/sns, whose key "
                    "id is only known at deploy time",
                    "AwsSolutions-IAM5[Action::kms:GenerateDataKey*]",
                    "AwsSolutions-IAM5[Resource::arn:<AWS::Partition>:kms:<AWS::Region>:"
                    "<AWS::AccountId>:key/*]",
                )

    def _write_function_policies(self) -> None:
        """Each function's default policy, once every grant is in (the functions' and the
        topic's); each function waits for its policy (the role itself is ordered by ``Role``:
        cfn-lint W3005)."""
        for role, function in (
            (self._check_role, self._check_function),
            (self._arm_role, self._arm_function),
        ):
            function.node.add_dependency(role.write_policy())

    def _add_loop(self) -> None:
        """The Step Functions Standard workflow: check -> Choice -> Wait, until a decision."""
        log_group = self._log_group("PollLoopLogs")
        loop = Construct(self, "PollLoop")
        # The role and policy a `sfn.StateMachine` with logging and tracing creates.
        role = GateRole(
            loop,
            "Role",
            service="states.amazonaws.com",
            conditions={
                "ArnLike": {
                    "aws:SourceArn": f"arn:{pseudo('PARTITION')}:states:{pseudo('REGION')}:"
                    f"{pseudo('ACCOUNT_ID')}:stateMachine:*"
                },
                "StringEquals": {"aws:SourceAccount": pseudo("ACCOUNT_ID")},
            },
        )
        role.add(*(allow(actions, "*") for actions in (LOG_DELIVERY_ACTIONS, XRAY_ACTIONS)))
        for function_arn in (self._check_function_arn, self._arm_function_arn):
            # What `function.grant_invoke(state_machine)` grants: the function and its versions.
            role.add(allow(("lambda:InvokeFunction",), [function_arn, f"{function_arn}:*"]))
        role_policy = role.write_policy()
        definition = build_definition(
            poll_function_arn=self._check_function_arn,
            fallback_function_arn=self._arm_function_arn,
            timeout_seconds=self._loop_timeout_seconds,
        )
        state_machine = sfn.CfnStateMachine
        self._state_machine = state_machine(
            loop,
            "Resource",
            definition_string=json.dumps(definition),
            logging_configuration=state_machine.LoggingConfigurationProperty(
                destinations=[
                    state_machine.LogDestinationProperty(
                        cloud_watch_logs_log_group=state_machine.CloudWatchLogsLogGroupProperty(
                            log_group_arn=log_group.attr_arn
                        )
                    )
                ],
                include_execution_data=True,
                level="ALL",
            ),
            role_arn=role.arn,
            state_machine_type="STANDARD",
            tracing_configuration=state_machine.TracingConfigurationProperty(enabled=True),
        )
        self._state_machine.apply_removal_policy(RemovalPolicy.DESTROY)
        # Its role's policy (the role itself is ordered by RoleArn: cfn-lint W3005).
        self._state_machine.node.add_dependency(role_policy)
        self._state_machine_arn = self._state_machine.ref
        # The arm function's rights on the loop are a policy of their own: in its role's
        # default policy they would close a cycle (the loop's definition names the arm
        # function, which depends on that default policy). The arm resource waits for it.
        # What `stack.format_arn` writes for the executions of `stack.split_arn(ARN)`'s name,
        # in one call instead of ten.
        partition, region, account = stack_environment(self._stack)
        machine_name = Token.as_string(
            {"Fn::Select": [6, {"Fn::Split": [":", self._state_machine_arn]}]}
        )
        executions = f"arn:{partition}:states:{region}:{account}:execution:{machine_name}:*"
        self._arm_policy = iam.Policy(
            self,
            "ArmStartsLoop",
            roles=[self._arm_role.imported],
            document=policy_document(
                [
                    allow(("states:StartExecution",), self._state_machine_arn),
                    allow(
                        (
                            "states:StopExecution",
                            "states:DescribeExecution",
                            "states:GetExecutionHistory",
                        ),
                        executions,
                    ),
                ]
            ),
        )
        # Each check reads the gate's requirements from its execution's input (see
        # hyperpod_gate.poll.trusted_request), and the Running confirmation's progress from its
        # history (hyperpod_gate.confirm): a policy of its own for the same reason.
        self._check_policy = iam.Policy(
            self,
            "CheckReadsLoop",
            roles=[self._check_role.imported],
            document=policy_document(
                [allow(("states:DescribeExecution", "states:GetExecutionHistory"), executions)]
            ),
        )
        check_id, arm_id, sm_ref = logical_ids(
            self._stack, self._check_function, self._arm_function, self._state_machine
        )
        acknowledge(
            role.scope,
            "X-Ray tracing and CloudWatch Logs delivery take no resource scope; the invoke "
            "grants cover the gate functions' versions",
            "AwsSolutions-IAM5[Resource::*]",
            f"AwsSolutions-IAM5[Resource::{arn_placeholder(check_id)}:*]",
            f"AwsSolutions-IAM5[Resource::{arn_placeholder(arm_id)}:*]",
        )
        for policy in (self._arm_policy, self._check_policy):
            acknowledge(
                policy,
                "Executions are named at run time; the grant is limited to this state machine's",
                "AwsSolutions-IAM5[Resource::arn:<AWS::Partition>:states:<AWS::Region>:"
                f'<AWS::AccountId>:execution:{{"Fn::Select":[6,{{"Fn::Split":[":",{{"Ref":"{sm_ref}"}}]}}]}}:*]',
            )

    def _add_arm(self) -> None:
        """The custom resource that starts the loop; its properties follow
        :class:`~hyperpod_constructs._runtime.hyperpod_gate.contract.ArmProperties`."""
        self._sent = self._arm_properties()
        self.arm = CustomResource(
            self,
            "Arm",
            service_token=self._arm_function_arn,
            resource_type=RESOURCE_TYPE,
            properties=self._sent,
            service_timeout=_arm_service_timeout(),
        )
        """The custom resource that arms the gate (starts its poll loop)."""
        self.node.add_validation(_GateRequirements(self))

    def _add_wait(self) -> None:
        """The wait condition dependants wait for: a ``CreationPolicy`` (one signal, sent with
        ``cloudformation:SignalResource``) and no properties, as AWS documents for a wait
        condition with a creation policy. A wait condition handle carries the declaration of
        what this wait waits for (its Metadata); no wait condition references it, so nothing
        signals it and its URL opens nothing. Both logical ids embed a fingerprint of the gated
        values (wait conditions are create-only)."""
        self._handle = cfn.CfnWaitConditionHandle(self, "WaitHandle")
        self._condition = cfn.CfnWaitCondition(self, "WaitCondition")
        # Wait conditions cannot be updated, so their own timeout is a constant backstop (the
        # maximum); the gate's configurable deadline is enforced by the poll loop, which
        # signals FAILURE when it passes. Changing `timeout` therefore updates the arm resource
        # in place and never forces a new wait.
        self._condition.cfn_options.creation_policy = CfnCreationPolicy(
            resource_signal=CfnResourceSignal(count=1, timeout=WAIT_TIMEOUT)
        )
        # What this wait waits for, declared where only a deployment can change it: the arm
        # function reads it back (DescribeStackResource returns the Metadata, resolved) and
        # never trusts its invocation's payload for it. The handle of the previous wait keeps
        # the previous declaration until the update's cleanup: an update compares the two.
        self._handle.add_metadata(
            METADATA_KEY, {META_GATE: self._arm_id, META_PROPERTIES: declare(self._sent)}
        )
        # The declaration exists before the arm reads it; the condition starts counting once
        # the arm resource has started the loop (a signal sent before it exists is refused and
        # sent again at the next check). An imported cluster has no resource here: it exists
        # already.
        cluster_resource = self._cluster.node.default_child
        existing = [] if cluster_resource is None else [cluster_resource]
        self.arm.node.add_dependency(*existing, self._arm_policy, self._check_policy, self._handle)
        self._condition.node.add_dependency(self.arm)
        self._handle.override_logical_id(self._handle_id)
        self._condition.override_logical_id(self._condition_id)
        # `x.node.add_dependency(gate)` makes x wait for the wait condition only, not for every
        # resource of the gate's machinery.
        Dependable.implement(self, DependencyRoots(lambda: [self._condition]))

    def _add_fast_path(self) -> None:
        """HyperPod's EventBridge events (cluster state changes, cluster/instance-group
        events) run a check at once, so an arriving minimum is seen in seconds instead of up
        to one poll interval. That check may only signal SUCCESS (same UniqueId as the loop's,
        so a repeat is harmless) and only while the wait condition is in progress; the loop
        stays the authority for failures and the fallback when an event is lost."""
        rule = Construct(self, "FastPath")
        self._fast_path = events.CfnRule(
            rule,
            "Resource",
            description="Checks the HyperPod MinCount gate when the cluster reports a change",
            event_pattern={
                "detail-type": list(FAST_PATH_DETAIL_TYPES),
                "resources": [self._cluster_arn],
                "source": ["aws.sagemaker"],
            },
            state="ENABLED",
            # What `targets.LambdaFunction(check_function, event=..., retry_attempts=2,
            # max_event_age=Duration.minutes(15))` renders.
            targets=[
                events.CfnRule.TargetProperty(
                    arn=self._check_function_arn,
                    id="Target0",
                    input=json.dumps(fast_path_input()),
                    retry_policy=events.CfnRule.RetryPolicyProperty(
                        maximum_event_age_in_seconds=900, maximum_retry_attempts=2
                    ),
                )
            ],
        )
        # The permission `targets.LambdaFunction` adds, at the same path (its logical id).
        lambda_.CfnPermission(
            rule,
            f"AllowEventRule{Names.unique_id(self._function_scopes['CheckFunction'])}",
            action="lambda:InvokeFunction",
            function_name=self._check_function_arn,
            principal="events.amazonaws.com",
            source_arn=self._fast_path.attr_arn,
        )

    def _arm_logical_id(self) -> str:
        """The arm resource's logical id, read once, when the template is written (three
        values name it, and aws-cdk-lib resolves each more than once)."""
        if self._arm_id_value is None:
            default_child = self.arm.node.default_child
            assert isinstance(default_child, CfnElement)
            self._arm_id_value = self._stack.get_logical_id(default_child)
        return self._arm_id_value

    def _wait_options(self) -> str:
        """The arm function's ``HYPERPOD_GATE_WAIT_OPTIONS`` (JSON, tokens resolved by
        CloudFormation), computed once when the template is written."""
        if self._wait_options_value is None:
            options = options_of(self._sent)
            self._wait_options_value = (
                self._stack.to_json_string(options)
                if any(is_unresolved(value) for value in options.values())
                else json.dumps(options, separators=(",", ":"), ensure_ascii=False)
            )
        return self._wait_options_value

    # -- the gate's resources as aws-cdk-lib interfaces (built on first use) ----------------
    @property
    def check_function(self) -> lambda_.IFunction:
        """The check function (reads the cluster, signals the wait handle)."""
        return self._function_view(
            "CheckFunction", self._check_function_arn, self._check_role.imported
        )

    @property
    def arm_function(self) -> lambda_.IFunction:
        """The arm function (the custom resource's handler; starts and stops the loop)."""
        return self._function_view("ArmFunction", self._arm_function_arn, self._arm_role.imported)

    @property
    def state_machine(self) -> sfn.IStateMachine:
        """The Step Functions Standard workflow that polls the cluster."""

        def build() -> sfn.IStateMachine:
            return sfn.StateMachine.from_state_machine_arn(
                self, "PollLoopRef", self._state_machine_arn
            )

        return self._view("PollLoop", build)

    @property
    def fast_path(self) -> events.IRule:
        """The EventBridge rule that runs a check when HyperPod reports a change."""

        def build() -> events.IRule:
            return events.Rule.from_event_rule_arn(self, "FastPathRef", self._fast_path.attr_arn)

        return self._view("FastPath", build)

    def _function_view(self, id: str, arn: str, role: iam.IRole) -> lambda_.IFunction:
        def build() -> lambda_.IFunction:
            return lambda_.Function.from_function_attributes(
                self, f"{id}Ref", function_arn=arn, role=role, same_environment=True
            )

        return self._view(id, build)

    def _view(self, key: str, build: Callable[[], _View]) -> _View:
        """``build()`` once: an aws-cdk-lib interface of one of the gate's resources, whose
        module is imported only by those who use it."""
        if key not in self._views:
            self._views[key] = build()
        return cast(_View, self._views[key])

    @property
    def cluster(self) -> IHyperPodCluster:
        """The cluster whose groups the gate waits for."""
        return self._cluster

    @property
    def requirements(self) -> Mapping[str, Requirement]:
        """What the gate waits for: minimum and target count per gated group (a count given
        as a token is its string token, resolved by CloudFormation)."""
        return dict(self._requirements)

    @property
    def findings(self) -> list[Finding]:
        """Why the gate cannot be deployed as built (its Lambda code refused by the stack's
        synthesizer: ``HP-SYNTHESIZER-ASSETS``); the cluster reports them at synth. Empty
        when it can."""
        return [] if self._code is None else list(self._code.findings)

    @property
    def wait_condition(self) -> cfn.CfnWaitCondition:
        """The wait condition that holds the dependants (its logical id changes with the gated
        values)."""
        return self._condition

    @property
    def ready_fingerprint(self) -> str:
        """A token (8 hex digits) of what the gate waits for: the gated groups' names,
        minimums and targets and the cluster's name, the same fingerprint the wait condition's
        logical id embeds. It changes exactly when a deployment makes a new wait condition
        (a gated minimum or target changed, a gated group added or removed, the cluster
        renamed), so a dependant that takes it as a property (and depends on
        ``cluster.ready``) is updated by CloudFormation after that wait, e.g. a trigger that
        resubmits the training job at the new size. A wait may gate no group (a lowered
        minimum, a spare node added): the notification's ``waitedFor`` tells (see
        docs/gate.md, "Dependants on day 2")."""
        return final_string(self._fingerprint)

    @property
    def wait_handle(self) -> cfn.CfnWaitConditionHandle:
        """The handle the poll loop signals (its logical id changes with the gated values)."""
        return self._handle

    def add_requirement(self, requirement: Requirement) -> None:
        """Also wait for ``requirement.group_name`` (called by the cluster for each gated
        group it adds).

        :param requirement: the group's name and its minimum and target counts (numbers or
            tokens).
        """
        group_name = requirement.group_name
        first = group_name not in self._requirements
        self._requirements[group_name] = requirement
        if self.dashboard is not None and first:
            from aws_cdk import aws_cloudwatch as cloudwatch

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

    def _gate_metric(
        self, method: str, name: str, group_name: str, options: MetricOptions
    ) -> cloudwatch.Metric:
        def watch() -> WatchedMetrics:  # refused at synth: a group the gate does not wait for
            check = WatchedMetrics(lambda: set(self._requirements))
            self.node.add_validation(check)
            return check

        self._view("WatchedMetrics", watch).ask(method, group_name)
        return gate_metric(
            name,
            namespace=self._options.metrics_namespace,
            cluster_name=self._cluster.cluster_name,
            group_name=group_name,
            **options,
        )

    def _fingerprint(self) -> str:
        """Wait conditions are create-only, so the handle's and the condition's logical ids
        embed a fingerprint of the gated values: changing a minimum or target makes
        CloudFormation create a new pair (a new wait) and delete the old one; other changes
        keep them. Computed once, when the template is written."""
        if self._fingerprint_value is None:
            self._freeze_requirements()
            stack = self._stack

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

    def _freeze_requirements(self) -> None:
        """Record the requirements the late values are produced from (once each, at synth)."""
        if self._produced_for is None:
            self._produced_for = dict(self._requirements)

    def _late_requirements(self) -> list[str]:
        """A requirement added or changed after the gate's values were produced is not in the
        template: an error, never a silent omission."""
        produced = self._produced_for
        if produced is None or produced == self._requirements:
            return []
        changed = sorted(
            name
            for name in {*produced, *self._requirements}
            if produced.get(name) != self._requirements.get(name)
        )
        return [
            f"{self.node.path}: the requirement(s) of {', '.join(changed)} changed after the "
            "gate's template values were first resolved, so the template would not carry them. "
            "Fix: add every group (and gate.add_requirement) before anything resolves the stack"
        ]

    def _log_group(self, id: str) -> logs.CfnLogGroup:
        """A log group deleted with the stack, kept a month unless ``log_retention`` says
        otherwise, encrypted with ``encryption_key`` if given (what ``logs.LogGroup`` with
        ``retention=..., encryption_key=..., removal_policy=DESTROY`` writes)."""
        log_group = logs.CfnLogGroup(
            Construct(self, id), "Resource", **log_group_properties(self, self._options)
        )
        log_group.apply_removal_policy(RemovalPolicy.DESTROY)
        return log_group

    def _function(
        self, id: str, handler: str, description: str, environment: Mapping[str, str]
    ) -> tuple[GateRole, lambda_.CfnFunction]:
        """A Python function on ARM with its own log group and role (what
        ``lambda.Function(..., log_group=..., role=...)`` writes), running the runtime
        package (staged once, under the first function); its role and function."""
        log_group = self._log_group(f"{id}Logs")
        # An explicit role with write access to its own log group only, instead of the
        # AWSLambdaBasicExecutionRole managed policy.
        role = GateRole(self, f"{id}Role", service="lambda.amazonaws.com", description=description)
        role.add(allow(("logs:CreateLogStream", "logs:PutLogEvents"), log_group.attr_arn))
        function = self._function_scopes[id] = Construct(self, id)
        if self._code is None:
            self._code = LambdaCode.in_stack(
                self._stack, function, RUNTIME_DIR, exclude=_ASSET_EXCLUDES
            )
        code = self._code
        resource = lambda_.CfnFunction(
            function,
            "Resource",
            architectures=["arm64"],
            code=code.code,
            description=description,
            environment=lambda_.CfnFunction.EnvironmentProperty(variables=dict(environment)),
            handler=handler,
            logging_config=lambda_.CfnFunction.LoggingConfigProperty(log_group=log_group.ref),
            memory_size=128,
            role=role.arn,
            runtime=RUNTIME,
            timeout=FUNCTION_TIMEOUT_SECONDS,
            vpc_config=function_vpc_config(self, self._options, role),
        )
        code.bind(resource)
        return role, resource

    def _arm_properties(self) -> dict[str, object]:
        """What the arm resource sends (:meth:`ArmProperties.render`), rendered once: the
        gate's late values (its requirements, the wait's logical ids) are tokens produced when
        the template is written, when every group has been added."""
        sent = ArmProperties(
            state_machine_arn=self._state_machine_arn,
            cluster_name=self._cluster.cluster_name,
            requirements=(),
            wait_handle_logical_id=self._handle_id,
            wait_condition_logical_id=self._condition_id,
            timeout_seconds=self._timeout_seconds,
            poll_interval_seconds=self._poll_seconds,
            topic_arn=None if self.topic is None else self.topic.topic_arn,
            metrics_namespace=self._options.metrics_namespace,
        ).render()
        sent[Prop.REQUIREMENTS] = final_any(self._rendered_requirements)
        return {key: sent[key] for key in ARM_PROPERTY_KEYS if key in sent}

    def _rendered_requirements(self) -> object:
        """The ``Requirements`` the arm resource sends, by group name."""
        self._freeze_requirements()
        return render_requirements([r for _, r in sorted(self._requirements.items())])


@functools.cache
def _arm_service_timeout() -> Duration:
    """How long CloudFormation waits for the arm function (one jsii object per process)."""
    return Duration.minutes(ARM_SERVICE_TIMEOUT_MINUTES)

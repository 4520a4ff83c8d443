"""End-to-end harness: what the construct synthesizes, run for real.

The arm resource's properties and the poll loop's definition come from a synthesized template
(:func:`synthesized_gate`); the definition runs on moto's Step Functions engine
(:mod:`tests.support.moto_sfn`, in virtual time); its Lambda tasks call the real check and
arm handlers in process, with the function timeout the template gives them; the handlers
talk through real boto3 clients to the HyperPod simulator and the CloudFormation/SNS fakes
(and to moto for Step Functions).
"""

from __future__ import annotations

import ast
import functools
import gc
import io
import itertools
import json
import logging
import os
import random
import re
from collections.abc import Callable, Mapping, Sequence
from contextlib import redirect_stderr, redirect_stdout
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import boto3  # type: ignore[import-untyped, unused-ignore]
import botocore.retries.standard  # type: ignore[import-untyped, unused-ignore]
from botocore.awsrequest import AWSResponse  # type: ignore[import-untyped, unused-ignore]
from botocore.exceptions import (  # type: ignore[import-untyped, unused-ignore]
    EndpointConnectionError,
    ReadTimeoutError,
)
from moto import mock_aws
from moto.stepfunctions.parser import models as parser_models

from hyperpod_constructs._runtime.hyperpod_gate import arm, aws, httpput, poll
from hyperpod_constructs._runtime.hyperpod_gate.contract import (
    ENV_ARM_LOGICAL_ID,
    RESOURCE_TYPE,
)

from . import gate_defaults
from .aws_fakes import STACK_ID, FakeCloudFormation, FakeHttp, FakeSns, Signal
from .clock import Scheduler, VirtualClock, forbid_real_sleep, patch_botocore_retry_sleep
from .hyperpod_sim import CapacityCurve, GroupSpec, HyperPodSimulator, unlimited
from .moto_sfn import LambdaResult, VirtualStepFunctions
from .wire import ACCOUNT, REGION, ApiError

POLL_ARN = f"arn:aws:lambda:{REGION}:{ACCOUNT}:function:Gate-CheckFunction-1A2B3C4D"
ARM_ARN = f"arn:aws:lambda:{REGION}:{ACCOUNT}:function:Gate-ArmFunction-5E6F7A8B"
STATE_MACHINE_NAME = "GatePollLoopAbCdEf12"
STATE_MACHINE_ARN = f"arn:aws:states:{REGION}:{ACCOUNT}:stateMachine:{STATE_MACHINE_NAME}"
TOPIC_ARN = f"arn:aws:sns:{REGION}:{ACCOUNT}:Gate-Topic"
LOOP_ROLE_ARN = f"arn:aws:iam::{ACCOUNT}:role/Gate-PollLoopRole"
CLUSTER_ARN = f"arn:aws:sagemaker:{REGION}:{ACCOUNT}:cluster/abcd12345678"
"""The simulator's default cluster ARN."""
EVENT_DELAY = 5.0
"""Seconds from a HyperPod event to its delivery to the check function (EventBridge)."""
LIVE: list[GateWorld] = []
"""Worlds of the running test; tests/conftest.py closes them."""
_HEAP_FROZEN: list[bool] = []
"""Set once the long-lived heap was frozen (:meth:`GateWorld.close`)."""


@dataclass(frozen=True)
class Requirement:
    """A gated group: the cluster is synthesized with it."""

    group: str
    min_count: int
    target_count: int


# -- what the construct synthesizes --------------------------------------------------------


@dataclass(frozen=True)
class SynthesizedGate:
    """The gate's part of a synthesized template, resolved as CloudFormation would."""

    properties: dict[str, Any]
    """The arm resource's properties as CloudFormation sends them (scalars as strings)."""
    definition: dict[str, Any]
    handle_id: str
    """The wait condition handle that declares the wait (Metadata); never signalled."""
    condition_id: str
    check_timeout: int
    arm_timeout: int
    wait_timeout: int
    """Seconds of the wait condition's CreationPolicy (ResourceSignal Timeout)."""
    fast_path_input: dict[str, Any]
    """What the EventBridge rule sends the check function (its target's constant Input)."""
    fast_path_pattern: dict[str, Any]
    check_env: dict[str, str]
    """The check function's environment variables, resolved."""
    handle_metadata: str
    """The wait handle's Metadata, resolved, as DescribeStackResource returns it (JSON)."""
    arm_env: dict[str, str]
    """The arm function's environment variables, resolved."""

    @property
    def arm_logical_id(self) -> str:
        """The arm resource's logical id (the check function's environment names it)."""
        return self.check_env[ENV_ARM_LOGICAL_ID]


def _resolver(
    template: Mapping[str, Any], topic: bool, parameters: Mapping[str, str]
) -> Callable[[Any], Any]:
    res = template["Resources"]
    declared: Mapping[str, Any] = template.get("Parameters", {})
    unknown = set(parameters) - set(declared)
    assert not unknown, f"the template declares no parameters {sorted(unknown)}"
    by_ref: dict[str, str] = {
        "AWS::Partition": "aws",
        "AWS::Region": REGION,
        "AWS::AccountId": ACCOUNT,
        "AWS::URLSuffix": "amazonaws.com",
        "AWS::StackId": STACK_ID,
    }
    for name, declaration in declared.items():
        value = parameters.get(name, declaration.get("Default"))
        if value is not None:  # CloudFormation passes parameter values on as strings
            by_ref[name] = str(value)
    by_att: dict[tuple[str, str], str] = {}
    for logical_id, resource in res.items():
        kind = resource["Type"]
        if kind == "AWS::StepFunctions::StateMachine":
            by_ref[logical_id] = STATE_MACHINE_ARN
            by_att[(logical_id, "Name")] = STATE_MACHINE_NAME
        elif kind == "AWS::Lambda::Function":
            handler = resource["Properties"]["Handler"]
            by_att[(logical_id, "Arn")] = POLL_ARN if handler.endswith("poll.handler") else ARM_ARN
        elif kind == "AWS::SNS::Topic" and topic:
            by_ref[logical_id] = TOPIC_ARN
        elif kind == "AWS::SageMaker::Cluster":
            by_att[(logical_id, "ClusterArn")] = CLUSTER_ARN

    def resolve(value: Any) -> Any:
        if isinstance(value, list):
            return [resolve(v) for v in value]
        if not isinstance(value, dict):
            return value
        if len(value) == 1:
            ((key, arg),) = value.items()
            if key == "Ref":
                return by_ref[arg]
            if key == "Fn::GetAtt":
                return by_att[(arg[0], arg[1])]
            if key == "Fn::Join":
                return str(arg[0]).join(str(resolve(v)) for v in arg[1])
            if key == "Fn::Split":
                return str(resolve(arg[1])).split(arg[0])
            if key == "Fn::Select":
                return resolve(arg[1])[int(arg[0])]
        return {k: resolve(v) for k, v in value.items()}

    return resolve


def template_resolver(
    template: Mapping[str, Any], parameters: Mapping[str, str] | None = None
) -> Callable[[Any], Any]:
    """Resolves parts of ``template`` as CloudFormation would in this world, with these
    values of its parameters (default: their defaults)."""
    return _resolver(template, False, parameters or {})


def simulated_groups(
    template: Mapping[str, Any],
    capacity: CapacityCurve,
    parameters: Mapping[str, str] | None = None,
) -> list[GroupSpec]:
    """The simulator's groups: the template's cluster as deployed with ``parameters`` (its
    counts resolved), with ``capacity`` for the gated groups and unlimited for the others."""
    resolve = template_resolver(template, parameters)
    (cluster,) = [
        r for r in template["Resources"].values() if r["Type"] == "AWS::SageMaker::Cluster"
    ]
    specs = []
    for group in cluster["Properties"]["InstanceGroups"]:
        minimum = int(resolve(group.get("MinInstanceCount", 0)))
        specs.append(
            GroupSpec(
                name=group["InstanceGroupName"],
                instance_count=int(resolve(group["InstanceCount"])),
                min_instance_count=minimum,
                node_type=group["SlurmConfig"]["NodeType"],
                # a flexible group (InstanceRequirements): the simulator launches its first type
                instance_type=group.get("InstanceType")
                or group["InstanceRequirements"]["InstanceTypes"][0],
                capacity=capacity if minimum > 0 else unlimited(),
            )
        )
    return specs


def _as_sent(value: Any) -> Any:
    """CloudFormation delivers every scalar of a custom resource's properties as a string."""
    if isinstance(value, dict):
        return {k: _as_sent(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_as_sent(v) for v in value]
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


@functools.cache
def synthesized_gate(
    requirements: tuple[Requirement, ...], timeout_seconds: int, poll_interval: int, topic: bool
) -> SynthesizedGate:
    """Synthesize a cluster named ``train`` with these gated groups and read the gate."""
    from aws_cdk import Duration, Stack

    from hyperpod_constructs import (
        HyperPodInstanceType,
        HyperPodSlurmCluster,
        InstanceGroup,
        MinCountGateOptions,
    )
    from tests.conftest import new_app

    app = new_app()
    stack = Stack(app, "Gate")
    groups = [
        InstanceGroup.controller("controller", instance_type=HyperPodInstanceType.ML_M5_XLARGE)
    ] + [
        InstanceGroup.compute(
            r.group,
            instance_type=HyperPodInstanceType.ML_C5_4XLARGE,
            instance_count=r.target_count,
            min_instance_count=r.min_count,
            partition=r.group,
        )
        for r in requirements
    ]
    HyperPodSlurmCluster(
        stack,
        "Cluster",
        cluster_name="train",
        instance_groups=groups,
        readiness_gate=MinCountGateOptions(
            timeout=Duration.seconds(timeout_seconds),
            poll_interval=Duration.seconds(poll_interval),
            create_notification_topic=topic,
        ),
    )
    return gate_of_template(app.synth().get_stack_by_name("Gate").template, topic=topic)


def gate_of_template(
    template: Mapping[str, Any], *, topic: bool, parameters: Mapping[str, str] | None = None
) -> SynthesizedGate:
    """Read the gate of a synthesized template (one gate per template), resolved as
    CloudFormation would resolve it in this world, with these values of the template's
    parameters (default: their defaults)."""
    resolve = _resolver(template, topic, parameters or {})
    resources = template["Resources"]

    def one(kind: str) -> tuple[str, dict[str, Any]]:
        (found,) = [(k, v) for k, v in resources.items() if v["Type"] == kind]
        return found

    _, gate = one(RESOURCE_TYPE)
    handle_id, handle = one("AWS::CloudFormation::WaitConditionHandle")  # the declaration
    condition_id, condition = one("AWS::CloudFormation::WaitCondition")
    policy = condition["CreationPolicy"]["ResourceSignal"]
    assert int(policy["Count"]) == 1 and "Properties" not in condition, condition
    _, machine = one("AWS::StepFunctions::StateMachine")
    _, rule = one("AWS::Events::Rule")
    (target,) = rule["Properties"]["Targets"]
    functions = {
        v["Properties"]["Handler"]: v["Properties"]
        for v in resources.values()
        if v["Type"] == "AWS::Lambda::Function"
    }
    timeouts = {handler: int(p["Timeout"]) for handler, p in functions.items()}
    env = {
        handler: {
            k: str(v) for k, v in resolve(p.get("Environment", {}).get("Variables", {})).items()
        }
        for handler, p in functions.items()
    }
    return SynthesizedGate(
        properties=_as_sent(resolve(gate["Properties"])),
        definition=json.loads(resolve(machine["Properties"]["DefinitionString"])),
        handle_id=handle_id,
        condition_id=condition_id,
        check_timeout=timeouts["hyperpod_gate.poll.handler"],
        arm_timeout=timeouts["hyperpod_gate.arm.handler"],
        wait_timeout=iso_seconds(policy["Timeout"]),
        fast_path_input=json.loads(resolve(target["Input"])),
        fast_path_pattern=resolve(rule["Properties"]["EventPattern"]),
        check_env=env["hyperpod_gate.poll.handler"],
        arm_env=env["hyperpod_gate.arm.handler"],
        handle_metadata=json.dumps(_as_sent(resolve(handle.get("Metadata", {})))),
    )


def iso_seconds(duration: str) -> int:
    """Seconds of an ISO 8601 duration as a creation policy's Timeout writes it (PT#H#M#S)."""
    match = re.fullmatch(r"PT(?:(\d+)H)?(?:(\d+)M)?(?:(\d+)S)?", duration)
    assert match is not None and duration != "PT", f"not a creation policy timeout: {duration}"
    hours, minutes, seconds = (int(part or 0) for part in match.groups())
    return hours * 3600 + minutes * 60 + seconds


ROLES = {"poll": "check", "fastpath": "check", "arm": "arm", "arm-fallback": "arm"}
"""The role each function of the harness runs as."""


# -- the running world ---------------------------------------------------------------------


@functools.cache
def _steps_session() -> boto3.Session:
    """The boto3 session of every Step Functions client (the test's and the handlers'): one
    per process, as a warm Lambda container keeps its session, so botocore reads its models
    and endpoint data once instead of once per world (moto resets ``boto3.DEFAULT_SESSION`` at
    each start). Created after moto's import (this module's), so moto's ``before-send``
    handler, which answers Step Functions, is registered on it. Endpoint settings (e.g.
    ``AWS_ENDPOINT_URL``) are still read from the environment at each client's creation; the
    credentials are resolved once (moto's, which accepts any)."""
    return boto3.Session()


@dataclass(frozen=True)
class InvokeFault:
    """From ``start`` to ``end`` (seconds after the world's start), every invocation of
    ``function`` ("check", "arm" or "*") fails with ``error`` before the handler runs."""

    function: str
    start: float
    end: float
    error: str = "Lambda.TooManyRequestsException"


API_FAULT_KINDS: dict[str, tuple[str, int]] = {
    "throttle": ("Throttling", 400),
    "throttle-429": ("TooManyRequestsException", 429),
    "5xx": ("InternalFailure", 500),
    "unavailable": ("ServiceUnavailable", 503),
    "connection": ("", 0),
    "timeout": ("", 0),
}
"""Transient faults :class:`ApiFault` injects: an error code and HTTP status, or (status 0) an
exception botocore raises before any answer (a connection error, a read timeout)."""


@dataclass(frozen=True)
class ApiFault:
    """From ``start`` to ``end`` (seconds after the world's start), every call of
    ``operation`` (botocore's name, e.g. "DescribeStackResource"; "*": any) of ``service``
    (botocore's service name; "*": any) that a handler makes fails with ``kind``
    (:data:`API_FAULT_KINDS`). Injected by a ``before-call`` hook on every client the handlers
    build, so an operation the handlers start calling later is covered without a list."""

    kind: str
    start: float
    end: float
    service: str = "*"
    operation: str = "*"

    def matches(self, service: str, operation: str, elapsed: float) -> bool:
        return (
            self.start <= elapsed < self.end
            and self.service in ("*", service)
            and self.operation in ("*", operation)
        )


def handler_operations() -> tuple[str, ...]:
    """Every AWS operation the gate's handlers call, found in their code: each
    ``aws.call(<client>, "<operation>", ...)``, or ``call(...)`` inside ``aws.py`` itself (a test
    keeps every call going through it), in botocore's spelling (``describe_stack_resource`` ->
    ``DescribeStackResource``)."""
    found: set[str] = set()
    for path in sorted(Path(aws.__file__).resolve().parent.glob("*.py")):
        for node in ast.walk(ast.parse(path.read_text())):
            if (
                isinstance(node, ast.Call)
                and _is_the_call(node.func, inside_aws=path.name == "aws.py")
                and len(node.args) >= 2
                and isinstance(node.args[1], ast.Constant)
            ):
                found.add("".join(part.title() for part in str(node.args[1].value).split("_")))
    return tuple(sorted(found))


def _is_the_call(func: ast.expr, *, inside_aws: bool) -> bool:
    """``aws.call``, or the bare ``call`` of the module that defines it."""
    if isinstance(func, ast.Name):
        return inside_aws and func.id == "call"
    return (
        isinstance(func, ast.Attribute)
        and func.attr == "call"
        and isinstance(func.value, ast.Name)
        and func.value.id == "aws"
    )


LAMBDA_ASYNC_RETRY_DELAYS = (60.0, 120.0)
"""Lambda runs an asynchronous invocation (CloudFormation's, of a custom resource) that raised
an error twice more, one and then two minutes later."""


class FakeContext:
    """The bits of a Lambda context the handlers may use."""

    def __init__(self, clock: VirtualClock, timeout_seconds: float, name: str) -> None:
        self._deadline = clock.time() + timeout_seconds
        self._clock = clock
        self.function_name = name
        self.aws_request_id = "c0ffee00-0000-4000-8000-000000000000"

    def get_remaining_time_in_millis(self) -> int:
        return max(0, int((self._deadline - self._clock.time()) * 1000))


@dataclass
class Invocation:
    """One Lambda invocation as the harness saw it."""

    function: str
    time: float
    duration: float
    event: Any
    result: Any
    stdout: str
    stderr: str


class Execution:
    """A Step Functions execution on moto's engine, read through its API (a stopped one's
    history from the records the API serializes)."""

    def __init__(self, world: GateWorld, arn: str) -> None:
        self._world = world
        self.arn = arn
        self._final_history: list[dict[str, Any]] | None = None
        """The history of the execution once it has stopped (no event is added after)."""

    def _describe(self) -> dict[str, Any]:
        found: dict[str, Any] = self._world.sfn_client.describe_execution(executionArn=self.arn)
        return found

    def _history(self) -> list[dict[str, Any]]:
        """The execution's events, read through the API while it runs; once it has stopped,
        read once, from the records moto's API serializes (moto serializes the whole history
        at each read: about a third of a scenario's CPU time)."""
        if self._final_history is not None:
            return self._final_history
        if self.running:
            events: list[dict[str, Any]] = self._world.sfn_client.get_execution_history(
                executionArn=self.arn, maxResults=1000
            )["events"]
            return events
        backend = parser_models.stepfunctions_parser_backends[ACCOUNT][REGION]
        self._final_history = [dict(e) for e in backend.get_execution_history(self.arn)["events"]]
        return self._final_history

    @property
    def status(self) -> str:
        return str(self._describe()["status"])

    @property
    def running(self) -> bool:
        return self.status == "RUNNING"

    @property
    def error(self) -> str | None:
        return self._describe().get("error")

    @property
    def cause(self) -> str | None:
        return self._describe().get("cause")

    @property
    def input(self) -> dict[str, Any]:
        document: dict[str, Any] = json.loads(self._describe()["input"])
        return document

    @property
    def transitions(self) -> int:
        """States entered (what Step Functions bills as state transitions)."""
        return sum(1 for e in self._history() if e["type"].endswith("StateEntered"))

    @property
    def task_invocations(self) -> int:
        return sum(1 for e in self._history() if e["type"] == "LambdaFunctionScheduled")


@dataclass
class GateWorld:
    """Everything a gate deployment touches, wired together (see module doc)."""

    monkeypatch: Any
    groups: list[GroupSpec]
    timeout_seconds: int = field(default_factory=gate_defaults.timeout_seconds)
    """Default: the options model's default timeout."""
    poll_interval: int = field(default_factory=gate_defaults.poll_seconds)
    """Default: the options model's default poll interval."""
    topic: bool = True
    old_boto3: bool = False
    sim_options: Mapping[str, Any] = field(default_factory=dict)
    lambda_faults: list[str] = field(default_factory=list)
    """Errors (e.g. "Lambda.ServiceException") reported instead of the next check invocations."""
    invoke_faults: list[InvokeFault] = field(default_factory=list)
    """Time windows in which a function's invocations fail (e.g. throttling)."""
    api_faults: list[ApiFault] = field(default_factory=list)
    """Time windows in which the handlers' AWS calls fail transiently (any client)."""
    event_bridge: bool = False
    """Deliver the simulator's events to the check function as the synthesized EventBridge
    rule would (the fast path); off, events are lost and only the loop decides."""
    template: Mapping[str, Any] | None = None
    """A synthesized template whose gate this world runs (e.g. an example stack); default:
    a cluster synthesized for the groups' minimums (:func:`synthesized_gate`)."""
    parameters: Mapping[str, str] = field(default_factory=dict)
    """Values of the template's parameters, as a stack deployment would pass them."""

    def __post_init__(self) -> None:
        mp = self.monkeypatch
        self.clock = VirtualClock()
        self.scheduler = Scheduler(self.clock)
        forbid_real_sleep(mp)
        patch_botocore_retry_sleep(mp, self.clock)
        rng = random.Random(20260601)
        init = botocore.retries.standard.ExponentialBackoff.__init__
        names = init.__code__.co_varnames[1 : init.__code__.co_argcount]
        assert names == ("max_backoff", "random", "service_name", "throttling_detector"), names
        defaults = init.__defaults__
        assert defaults is not None
        mp.setattr(init, "__defaults__", (defaults[0], rng.random, *defaults[2:]))

        self.sim = HyperPodSimulator(self.clock, self.groups, **dict(self.sim_options))
        self.cfn = FakeCloudFormation(self.clock)
        self.cfn.role = lambda: ROLES.get(self.running or "")
        self.sns = FakeSns()
        self.http = FakeHttp(self.clock, self.cfn)
        self.invocations: list[Invocation] = []
        self.sfn_calls: list[tuple[str, dict[str, Any]]] = []
        self._request_ids = itertools.count(1)
        self.client_builds: dict[str, int] = {}
        self.armed: list[SynthesizedGate] = []
        self.running: str | None = None
        """The function whose handler runs now ("poll", "arm", "arm-fallback")."""
        self.sfn_fault: ApiError | None = None
        """When set, every Step Functions call of the handlers fails with it."""
        self.faulted: list[tuple[str, str, float]] = []
        """(service, operation, elapsed) of every call an :class:`ApiFault` failed."""
        self.operations: list[tuple[str, str, float]] = []
        """(service, operation, elapsed) of every AWS call the handlers made."""

        for name, value in (
            ("AWS_ACCESS_KEY_ID", "testing"),
            ("AWS_SECRET_ACCESS_KEY", "testing"),
            ("AWS_DEFAULT_REGION", REGION),
        ):
            mp.setenv(name, value)
        self._mock = mock_aws(
            config={
                "stepfunctions": {"execute_state_machine": True},
                # moto answers Step Functions only; the fakes answer the rest.
                "core": {"passthrough": {"services": ["sagemaker", "cloudformation", "sns"]}},
            }
        )
        self._mock.start()
        LIVE.append(self)
        self.engine = VirtualStepFunctions(
            mp, self.scheduler, {POLL_ARN: self._invoke_check, ARM_ARN: self._invoke_arm}
        )
        self.sfn_client = _steps_session().client("stepfunctions", region_name=REGION)
        self.sfn_client.create_state_machine(
            name=STATE_MACHINE_NAME,
            definition=json.dumps(self.gate().definition),
            roleArn=LOOP_ROLE_ARN,
            type="STANDARD",
        )

        for name in ("_factory", "_clock", "_sleep", "_random", "_cache"):
            mp.setattr(aws, name, getattr(aws, name))  # registers the undo
        aws.configure(
            client_factory=self._client,
            clock=self.clock.time,
            sleep=self.clock.sleep,
            jitter=random.Random(20261205).random,
        )
        mp.setattr(httpput, "urlopen", self.http.urlopen)

        self.logs = _Capture()
        root = logging.getLogger()
        mp.setattr(root, "handlers", [*root.handlers, self.logs])
        if self.event_bridge:
            self._wire_event_bridge()

    def _wire_event_bridge(self) -> None:
        """HyperPod events reach the check function ``EVENT_DELAY`` after they happen."""
        pattern = self.gate().fast_path_pattern
        assert pattern["source"] == ["aws.sagemaker"] and pattern["resources"] == [self.sim.arn]
        emit_at = self.sim._emit_at

        def emitted(t: float, level: Any, text: str, group: str | None) -> None:
            emit_at(t, level, text, group)
            when = max(t, self.clock.time()) + EVENT_DELAY
            self.scheduler.at(when, self._deliver_event, "event")

        self.monkeypatch.setattr(self.sim, "_emit_at", emitted)
        self.monkeypatch.setattr(
            self.sim,
            "_emit",
            lambda level, text, group: emitted(self.clock.time(), level, text, group),
        )

        def tick() -> None:  # HyperPod evolves (and emits) whether or not anyone asks
            self.sim.advance()
            self.scheduler.after(10.0, tick, "tick")

        self.scheduler.after(10.0, tick, "tick")

    def _deliver_event(self) -> None:
        if self.armed:
            payload = dict(self.armed[-1].fast_path_input)
            self._run_lambda("fastpath", poll.handler, payload, self.gate().check_timeout)

    def close(self) -> None:
        """Stop moto (called after each test; once)."""
        if self in LIVE:
            LIVE.remove(self)
        if not getattr(self, "_closed", False):
            self._closed = True
            self._mock.stop()
            if hasattr(self, "engine"):
                self.engine.close()
            _freeze_long_lived_heap()

    # -- the synthesized gate ----------------------------------------------------------------
    def gate(self, requirements: Sequence[Requirement] | None = None) -> SynthesizedGate:
        """The gate the construct synthesizes for these gated groups (default: the world's
        groups with a minimum)."""
        if self.template is not None:
            return gate_of_template(self.template, topic=self.topic, parameters=self.parameters)
        if requirements is None:
            requirements = [
                Requirement(g.name, g.min_instance_count, g.instance_count)
                for g in self.groups
                if g.node_type == "Compute" and g.min_instance_count > 0
            ]
        return synthesized_gate(
            tuple(requirements), self.timeout_seconds, self.poll_interval, self.topic
        )

    def properties(self, requirements: Sequence[Requirement] | None = None) -> dict[str, Any]:
        """ResourceProperties exactly as CloudFormation delivers them for these groups."""
        return dict(self.gate(requirements).properties)

    def condition_id(self, requirements: Sequence[Requirement] | None = None) -> str:
        """Logical id of the wait condition (default: of the gate armed last)."""
        if requirements is None and self.armed:
            return self.armed[-1].condition_id
        return self.gate(requirements).condition_id

    # -- wiring --------------------------------------------------------------------------
    def _client(self, service: str) -> Any:
        client = self._built_client(service)
        client.meta.events.register("before-call", self._api_fault)
        return client

    def _api_fault(self, model: Any, **_: Any) -> tuple[AWSResponse, dict[str, Any]] | None:
        service, operation = model.service_model.service_name, model.name
        elapsed = self.clock.elapsed
        self.operations.append((service, operation, elapsed))
        fault = next((f for f in self.api_faults if f.matches(service, operation, elapsed)), None)
        if fault is None:
            return None
        self.faulted.append((service, operation, elapsed))
        code, status = API_FAULT_KINDS[fault.kind]
        url = f"https://{service}.{REGION}.amazonaws.com/"
        if fault.kind == "connection":
            raise EndpointConnectionError(endpoint_url=url)
        if fault.kind == "timeout":
            raise ReadTimeoutError(endpoint_url=url)
        metadata = {"HTTPStatusCode": status}
        return (
            AWSResponse(url, status, {}, None),
            {"Error": {"Code": code, "Message": "Rate exceeded"}, "ResponseMetadata": metadata},
        )

    def _built_client(self, service: str) -> Any:
        self.client_builds[service] = self.client_builds.get(service, 0) + 1
        if service == "sagemaker":
            client = self.sim.client(old_boto3=self.old_boto3)
        elif service == "cloudformation":
            client = self.cfn.fake.client()
        elif service == "sns":
            client = self.sns.fake.client()
        elif service == "stepfunctions":
            # moto answers at the real endpoint, also where a test (watch) sets AWS_ENDPOINT_URL.
            client = _steps_session().client(
                "stepfunctions",
                region_name=REGION,
                config=aws.CLIENT_CONFIG,
                endpoint_url=f"https://states.{REGION}.amazonaws.com",
            )
            client.meta.events.register("provide-client-params.sfn", self._record_sfn_call)
            client.meta.events.register("before-call.sfn", self._sfn_fault)
            return client
        else:
            raise AssertionError(f"unexpected client {service}")
        return client

    def _record_sfn_call(self, model: Any, params: dict[str, Any], **_: Any) -> None:
        self.sfn_calls.append((model.name, dict(params)))

    def _sfn_fault(self, **_: Any) -> tuple[AWSResponse, dict[str, Any]] | None:
        fault = self.sfn_fault
        if fault is None:
            return None
        metadata = {"HTTPStatusCode": fault.status}
        return (
            AWSResponse("https://states.invalid/", fault.status, {}, None),
            {"Error": {"Code": fault.code, "Message": fault.message}, "ResponseMetadata": metadata},
        )

    def executions(self) -> list[str]:
        """ARNs of every execution of the poll loop (moto's ListExecutions)."""
        listed = self.sfn_client.list_executions(stateMachineArn=STATE_MACHINE_ARN)
        return [str(e["executionArn"]) for e in listed["executions"]]

    def calls(self, operation: str) -> list[dict[str, Any]]:
        """Step Functions API calls the handlers made."""
        return [params for name, params in self.sfn_calls if name == operation]

    def _run_lambda(
        self, function: str, handler: Callable[[Any, Any], Any], event: Any, timeout: float
    ) -> tuple[Any, bool]:
        """Run a handler (with its function's environment, as the template sets it); return its
        result and whether it ran past its timeout."""
        out, err = io.StringIO(), io.StringIO()
        began = self.clock.time()
        sent = {k: len(v) for k, v in self.cfn.signals.items()}
        outer, self.running = self.running, function
        gate = self.gate()
        env = gate.arm_env if function.startswith("arm") else gate.check_env
        saved = {name: os.environ.get(name) for name in env}
        os.environ.update(env)
        try:
            with redirect_stdout(out), redirect_stderr(err):
                result = handler(event, FakeContext(self.clock, timeout, function))
        finally:
            self.running = outer
            for name, value in saved.items():
                if value is None:
                    os.environ.pop(name, None)
                else:
                    os.environ[name] = value
        duration = self.clock.time() - began
        reason = result.get("reason") if isinstance(result, dict) else None
        for logical_id, signals in self.cfn.signals.items():
            for signal in signals[sent.get(logical_id, 0) :]:
                signal.reason = str(reason or "")
        self.invocations.append(
            Invocation(function, began, duration, event, result, out.getvalue(), err.getvalue())
        )
        return result, duration > timeout

    def _invoke_fault(self, function: str) -> str | None:
        now = self.clock.elapsed
        for fault in self.invoke_faults:
            if fault.function in (function, "*") and fault.start <= now < fault.end:
                return fault.error
        return None

    def _invoke_check(self, payload: Any) -> LambdaResult:
        scheduled = self._invoke_fault("check")
        if self.lambda_faults or scheduled is not None:
            error = scheduled if scheduled is not None else self.lambda_faults.pop(0)
            self.invocations.append(
                Invocation("poll", self.clock.time(), 0.0, payload, {"error": error}, "", "")
            )
            return LambdaResult(error=error, message="injected invocation failure")
        timeout = self.gate().check_timeout
        result, late = self._run_lambda("poll", poll.handler, payload, timeout)
        if late:  # Lambda would have killed it: Step Functions sees the timeout, not the result
            return LambdaResult(
                error="Sandbox.Timedout", message=f"Task timed out after {timeout:.2f} seconds"
            )
        return LambdaResult(payload=result)

    def _invoke_arm(self, payload: Any) -> LambdaResult:
        error = self._invoke_fault("arm")
        if error is not None:
            self.invocations.append(
                Invocation(
                    "arm-fallback", self.clock.time(), 0.0, payload, {"error": error}, "", ""
                )
            )
            return LambdaResult(error=error, message="injected invocation failure")
        timeout = self.gate().arm_timeout
        result, late = self._run_lambda("arm-fallback", arm.handler, payload, timeout)
        if late:
            return LambdaResult(error="Sandbox.Timedout", message="Task timed out")
        return LambdaResult(payload=result)

    def _invoke_async(
        self, function: str, handler: Callable[[Any, Any], Any], event: Any, timeout: float
    ) -> None:
        """An asynchronous invocation (CloudFormation's of a custom resource): an error the
        handler raised makes Lambda run it again later (:data:`LAMBDA_ASYNC_RETRY_DELAYS`)."""
        for delay in (*LAMBDA_ASYNC_RETRY_DELAYS, None):
            try:
                self._run_lambda(function, handler, event, timeout)
                return
            except Exception:
                if delay is None:
                    raise
                self.invocations.append(
                    Invocation(function, self.clock.time(), 0.0, event, {"error": "raised"}, "", "")
                )
            self.run(until_elapsed=self.clock.elapsed + delay, stop_when_idle=False)

    def poll_once(self, event: Mapping[str, Any], *, by_arm: bool = False) -> dict[str, Any]:
        """Run one check of the check function (or the arm function) for this execution input
        (no state machine: the input is taken as trusted, as the handler takes it from a
        running execution)."""

        def one_check(document: Any, context: Any) -> dict[str, Any]:
            request = poll.parse_event(document)
            return poll.checked(request, poll.Budget.of(context), by_arm=by_arm).result()

        function = "arm-fallback" if by_arm else "poll"
        result, _ = self._run_lambda(function, one_check, dict(event), self.gate().check_timeout)
        found: dict[str, Any] = result
        return found

    # -- CloudFormation side ----------------------------------------------------------------
    def custom_resource(
        self,
        request_type: str,
        properties: Mapping[str, Any] | None = None,
        *,
        physical_id: str | None = None,
        old_properties: Mapping[str, Any] | None = None,
    ) -> dict[str, Any]:
        """Send one custom resource request to the arm handler; return its response."""
        request_id = f"5f0c4a8e-1b2d-4c3e-9f40-{next(self._request_ids):012d}"
        arm_id = self.gate().arm_logical_id
        event: dict[str, Any] = {
            "RequestType": request_type,
            "ServiceToken": ARM_ARN,
            "ResponseURL": self.cfn.response_url(request_id, arm_id),
            "StackId": self.cfn.stack_id,
            "RequestId": request_id,
            "LogicalResourceId": arm_id,
            "ResourceType": RESOURCE_TYPE,
            "ResourceProperties": dict(properties or {"ServiceToken": ARM_ARN}),
        }
        if physical_id is not None:
            event["PhysicalResourceId"] = physical_id
        if old_properties is not None:
            event["OldResourceProperties"] = dict(old_properties)
        # CloudFormation marks the resource in progress before it sends the request (a Delete
        # of an earlier physical id, in an update's cleanup, leaves the resource as it is).
        current = self.cfn.resources.get(arm_id)
        cleanup = request_type == "Delete" and (
            current is None or current["physical"] != (physical_id or "")
        )
        if not cleanup:
            self.cfn.resources[arm_id] = {
                "type": RESOURCE_TYPE,
                "physical": "" if current is None else current["physical"],
                "status": f"{request_type.upper()}_IN_PROGRESS",
            }
        self._invoke_async("arm", arm.handler, event, self.gate().arm_timeout)
        answers = self.cfn.responses[request_id]
        assert len(answers) == 1, f"expected exactly one response, got {len(answers)}"
        document: dict[str, Any] = answers[0].json()
        if request_type == "Delete":
            if not cleanup:
                self.cfn.remove_resource(arm_id)
        elif document["Status"] == "SUCCESS":
            self.cfn.resources[arm_id] = {
                "type": RESOURCE_TYPE,
                "physical": str(document["PhysicalResourceId"]),
                "status": f"{request_type.upper()}_COMPLETE",
            }
        elif current is None:
            self.cfn.remove_resource(arm_id)  # a failed creation leaves nothing to describe
        else:
            self.cfn.resources[arm_id] = {**current, "status": f"{request_type.upper()}_FAILED"}
        return document

    def arm_gate(
        self,
        requirements: Sequence[Requirement] | None = None,
        request_type: str = "Create",
        physical_id: str | None = None,
        old_properties: Mapping[str, Any] | None = None,
    ) -> dict[str, Any]:
        """What CloudFormation does: send Create/Update to the arm resource, then create the
        wait condition (named as the template names it) unless the stack already has it."""
        gate = self.gate(requirements)
        if gate.handle_id not in self.cfn.resources:
            self.cfn.add_wait_handle(gate.handle_id, gate.handle_metadata)
        response = self.custom_resource(
            request_type,
            gate.properties,
            physical_id=physical_id,
            old_properties=old_properties,
        )
        if response["Status"] == "SUCCESS":
            if gate.condition_id not in self.cfn.resources:
                self.cfn.add_wait_condition(gate.condition_id, gate.wait_timeout)
            self.armed.append(gate)
        return response

    def poll_event(
        self,
        requirements: Sequence[Requirement] | None = None,
        *,
        deadline_in: float | None = None,
        armed_ago: float = 3600.0,
    ) -> dict[str, Any]:
        """The execution input the arm handler builds from the synthesized properties, as if
        the gate had been armed ``armed_ago`` seconds ago (default: past the settle window)."""
        gate = self.gate(requirements)
        if gate.handle_id not in self.cfn.resources:
            self.cfn.add_wait_handle(gate.handle_id, gate.handle_metadata)
        if gate.condition_id not in self.cfn.resources:
            self.cfn.add_wait_condition(gate.condition_id, gate.wait_timeout)
        props = arm.parse_properties(gate.properties)
        armed = datetime.fromtimestamp(self.clock.time() - armed_ago, UTC)
        event = arm.execution_input(props, stack_id=self.cfn.stack_id, now=armed)
        event["deadline"] = int(self.clock.time() + props.timeout_seconds)
        if deadline_in is not None:
            event["deadline"] = int(self.clock.time() + deadline_in)
        return event

    # -- running -------------------------------------------------------------------------
    def at(self, elapsed: float, action: Callable[[], None]) -> None:
        """Run ``action`` at ``elapsed`` seconds after the world's start."""
        self.scheduler.at(self.clock.start + elapsed, action)

    def run(self, *, until_elapsed: float | None = None, stop_when_idle: bool = True) -> None:
        """Advance virtual time; by default stop once no execution is running."""
        until = None if until_elapsed is None else self.clock.start + until_elapsed

        def idle() -> bool:
            return stop_when_idle and self.engine.started > 0 and self.engine.active == 0

        self.scheduler.run(until=until, stop=idle)
        self.sim.advance()

    def execution(self, response: Mapping[str, Any]) -> Execution:
        """The execution a successful arm response points to."""
        return Execution(self, str(response["PhysicalResourceId"]))

    # -- observations --------------------------------------------------------------------
    def polls(self) -> list[Invocation]:
        """Check invocations that ran the handler."""
        return [
            i
            for i in self.invocations
            if i.function == "poll"
            and "error" not in (i.result if isinstance(i.result, dict) else {})
        ]

    def signals(self, requirements: Sequence[Requirement] | None = None) -> list[Signal]:
        """Signals the wait condition of these gated groups took (default: last armed)."""
        return self.cfn.signals.get(self.condition_id(requirements), [])

    def stdout(self) -> str:
        """Everything the Lambda functions printed."""
        return "\n".join(i.stdout + i.stderr for i in self.invocations)

    def assert_no_secret_leak(self) -> None:
        """No presigned URL (nor its signature) in any output, log, result or message."""
        haystacks = [self.stdout(), "\n".join(self.logs.lines)]
        haystacks += [json.dumps(i.result) for i in self.invocations]
        haystacks += [json.dumps(m) for m in self.sns.messages]
        for fake in (self.sim.fake, self.sns.fake):
            haystacks.append(json.dumps(fake.attempts))
        haystacks.append(json.dumps(self.sfn_calls, default=str))
        haystacks.append(json.dumps(self.cfn.fake.attempts, default=str))
        for arn in self.executions():  # every state, input, output and cause of every loop
            history = self.sfn_client.get_execution_history(executionArn=arn, maxResults=1000)
            haystacks.append(json.dumps(history["events"], default=str))
            described = self.sfn_client.describe_execution(executionArn=arn)
            haystacks.append(json.dumps(described, default=str))
        for put in self.http.puts:
            haystacks.append(put.body.decode())
        text = "\n".join(haystacks)
        for secret in self.cfn.secrets:
            assert secret not in text, "a presigned URL, its signature or a credential leaked"
        assert "X-Amz-Signature" not in text and "X-Amz-Credential" not in text


def _freeze_long_lived_heap() -> None:
    """Once per process, after the first world closed: collect, then move every object still
    alive (modules, botocore models, moto's lazily imported services, the synthesized
    templates: over a million objects) out of the garbage collector's reach with
    :func:`gc.freeze`. Each full collection traversed all of them (about 0.3 s each, a quarter
    of a fault schedule's CPU time); the worlds' own garbage is still collected."""
    if not _HEAP_FROZEN:
        _HEAP_FROZEN.append(True)
        gc.collect()
        gc.freeze()


class _Capture(logging.Handler):
    def __init__(self) -> None:
        super().__init__(logging.INFO)
        self.lines: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.lines.append(record.getMessage())


__all__ = [
    "API_FAULT_KINDS",
    "ARM_ARN",
    "POLL_ARN",
    "STATE_MACHINE_ARN",
    "TOPIC_ARN",
    "ApiFault",
    "Execution",
    "GateWorld",
    "InvokeFault",
    "Requirement",
    "SynthesizedGate",
    "gate_of_template",
    "synthesized_gate",
]

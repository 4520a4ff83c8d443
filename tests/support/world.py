"""End-to-end harness: the real arm and poll handlers, real boto3 clients answered by
the fakes, the real ASL definition run by the interpreter, all in virtual time."""

from __future__ import annotations

import io
import itertools
import json
import logging
import random
from collections.abc import Callable, Mapping
from contextlib import redirect_stderr, redirect_stdout
from dataclasses import dataclass, field
from typing import Any

import botocore.retries.standard  # type: ignore[import-untyped, unused-ignore]

from hyperpod_constructs.gate.definition import build_definition
from hyperpod_constructs.gate.runtime.hyperpod_gate import arm, aws, httpput, poll

from .asl import Execution, TaskFailure
from .aws_fakes import FakeCloudFormation, FakeHttp, FakeSns, FakeStepFunctions, Put
from .clock import Scheduler, VirtualClock, forbid_real_sleep, patch_botocore_retry_sleep
from .hyperpod_sim import GroupSpec, HyperPodSimulator
from .wire import ACCOUNT, REGION

POLL_ARN = f"arn:aws:lambda:{REGION}:{ACCOUNT}:function:HyperPodTrain-GateCheckFunction-1A2B3C4D"
ARM_ARN = f"arn:aws:lambda:{REGION}:{ACCOUNT}:function:HyperPodTrain-GateArmFunction-5E6F7A8B"
STATE_MACHINE_ARN = f"arn:aws:states:{REGION}:{ACCOUNT}:stateMachine:GatePollLoopAbCdEf12"
TOPIC_ARN = f"arn:aws:sns:{REGION}:{ACCOUNT}:HyperPodTrain-GateTopic"
BACKSTOP_MARGIN = 900
"""Extra execution time beyond the gate timeout (the construct uses 15 minutes)."""


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


class _Capture(logging.Handler):
    def __init__(self) -> None:
        super().__init__(logging.INFO)
        self.lines: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.lines.append(record.getMessage())


@dataclass
class Requirement:
    """A gated group for the arm request."""

    group: str
    min_count: int
    target_count: int


@dataclass
class GateWorld:
    """Everything a gate deployment touches, wired together (see module doc)."""

    monkeypatch: Any
    groups: list[GroupSpec]
    timeout_seconds: int = 3 * 3600 + 1800
    poll_interval: int = 60
    topic: bool = True
    old_boto3: bool = False
    sim_options: Mapping[str, Any] = field(default_factory=dict)
    lambda_faults: list[str] = field(default_factory=list)
    """Errors (e.g. "Lambda.ServiceException") thrown instead of the next poll invocations."""
    backstop_margin: int = BACKSTOP_MARGIN
    """State machine TimeoutSeconds = gate timeout + this."""

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
        self.sns = FakeSns()
        definition = build_definition(
            poll_function_arn=POLL_ARN, timeout_seconds=self.timeout_seconds + self.backstop_margin
        )
        self.definition = json.loads(json.dumps(definition))
        self.sfn = FakeStepFunctions(
            self.scheduler, {STATE_MACHINE_ARN: self.definition}, {POLL_ARN: self._invoke_poll}
        )
        self.http = FakeHttp(self.clock, self.cfn)
        self.invocations: list[Invocation] = []
        self._request_ids = itertools.count(1)
        self.client_builds: dict[str, int] = {}

        for name in ("_factory", "_clock", "_sleep", "_cache"):
            mp.setattr(aws, name, getattr(aws, name))  # registers the undo
        aws.configure(client_factory=self._client, clock=self.clock.time, sleep=self.clock.sleep)
        mp.setattr(httpput, "urlopen", self.http.urlopen)

        self.logs = _Capture()
        root = logging.getLogger()
        mp.setattr(root, "handlers", [*root.handlers, self.logs])

    # -- wiring ------------------------------------------------------------------
    def _client(self, service: str) -> Any:
        self.client_builds[service] = self.client_builds.get(service, 0) + 1
        if service == "sagemaker":
            return self.sim.client(old_boto3=self.old_boto3)
        if service == "cloudformation":
            return self.cfn.fake.client()
        if service == "sns":
            return self.sns.fake.client()
        if service == "stepfunctions":
            return self.sfn.fake.client()
        raise AssertionError(f"unexpected client {service}")

    def _run_lambda(
        self, function: str, handler: Callable[[Any, Any], Any], event: Any, timeout: float
    ) -> Any:
        out, err = io.StringIO(), io.StringIO()
        began = self.clock.time()
        with redirect_stdout(out), redirect_stderr(err):
            result = handler(event, FakeContext(self.clock, timeout, function))
        self.invocations.append(
            Invocation(
                function,
                began,
                self.clock.time() - began,
                event,
                result,
                out.getvalue(),
                err.getvalue(),
            )
        )
        return result

    def _invoke_poll(self, payload: Any) -> Any:
        if self.lambda_faults:
            error = self.lambda_faults.pop(0)
            self.invocations.append(
                Invocation("poll", self.clock.time(), 0.0, payload, {"error": error}, "", "")
            )
            raise TaskFailure(error, "injected invocation failure")
        return self._run_lambda("poll", poll.handler, payload, 60.0)

    # -- CloudFormation side ----------------------------------------------------------
    def handle_id(self, tag: str = "ab12cd34") -> str:
        """Logical id of the wait condition handle for a gate fingerprint."""
        return f"ClusterMinCountGateWait{tag}Handle{tag[::-1]}"

    def properties(
        self, requirements: list[Requirement], handle: str, timeout_seconds: int | None = None
    ) -> dict[str, Any]:
        """ResourceProperties exactly as CloudFormation delivers them (strings)."""
        props: dict[str, Any] = {
            "ServiceToken": ARM_ARN,
            "ServiceTimeout": "300",
            "StateMachineArn": STATE_MACHINE_ARN,
            "ClusterName": self.sim.name,
            "Requirements": [
                {
                    "GroupName": r.group,
                    "MinCount": str(r.min_count),
                    "TargetCount": str(r.target_count),
                }
                for r in requirements
            ],
            "WaitHandleLogicalId": handle,
            "TimeoutSeconds": str(timeout_seconds or self.timeout_seconds),
            "PollIntervalSeconds": str(self.poll_interval),
            "MetricsNamespace": "HyperPod/MinCountGate",
        }
        if self.topic:
            props["TopicArn"] = TOPIC_ARN
        return props

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
        event: dict[str, Any] = {
            "RequestType": request_type,
            "ServiceToken": ARM_ARN,
            "ResponseURL": self.cfn.response_url(request_id, "ClusterMinCountGateArm"),
            "StackId": self.cfn.stack_id,
            "RequestId": request_id,
            "LogicalResourceId": "ClusterMinCountGateArm",
            "ResourceType": "Custom::HyperPodMinCountGate",
            "ResourceProperties": dict(properties or {"ServiceToken": ARM_ARN}),
        }
        if physical_id is not None:
            event["PhysicalResourceId"] = physical_id
        if old_properties is not None:
            event["OldResourceProperties"] = dict(old_properties)
        self._run_lambda("arm", arm.handler, event, 60.0)
        answers = self.cfn.responses[request_id]
        assert len(answers) == 1, f"expected exactly one response, got {len(answers)}"
        document: dict[str, Any] = answers[0].json()
        return document

    def arm_gate(
        self,
        requirements: list[Requirement],
        tag: str = "ab12cd34",
        request_type: str = "Create",
        physical_id: str | None = None,
        old_properties: Mapping[str, Any] | None = None,
    ) -> dict[str, Any]:
        """Create the handle, send Create/Update, then create the wait condition."""
        handle = self.handle_id(tag)
        if handle not in self.cfn.resources:
            self.cfn.add_wait_handle(handle)
        response = self.custom_resource(
            request_type,
            self.properties(requirements, handle),
            physical_id=physical_id,
            old_properties=old_properties,
        )
        if response["Status"] == "SUCCESS":
            self.cfn.add_wait_condition(handle, min(self.timeout_seconds + 900, 12 * 3600))
        return response

    def poll_event(
        self,
        requirements: list[Requirement],
        *,
        tag: str = "ab12cd34",
        deadline_in: float | None = None,
    ) -> dict[str, Any]:
        """The execution input the arm handler would build (for direct poll calls)."""
        handle = self.handle_id(tag)
        if handle not in self.cfn.resources:
            self.cfn.add_wait_handle(handle)
        event: dict[str, Any] = {
            "clusterName": self.sim.name,
            "requirements": [
                {"groupName": r.group, "minCount": r.min_count, "targetCount": r.target_count}
                for r in requirements
            ],
            "deadline": int(self.clock.time() + (deadline_in or self.timeout_seconds)),
            "pollIntervalSeconds": self.poll_interval,
            "stackId": self.cfn.stack_id,
            "waitHandleLogicalId": handle,
            "metricsNamespace": "HyperPod/MinCountGate",
        }
        if self.topic:
            event["topicArn"] = TOPIC_ARN
        return event

    def poll_once(self, event: Mapping[str, Any]) -> dict[str, str]:
        """Invoke the poll handler directly (no state machine)."""
        result: dict[str, str] = self._invoke_poll(dict(event))
        return result

    # -- running -------------------------------------------------------------------
    def at(self, elapsed: float, action: Callable[[], None]) -> None:
        """Run ``action`` at ``elapsed`` seconds after the world's start."""
        self.scheduler.at(self.clock.start + elapsed, action)

    def run(self, *, until_elapsed: float | None = None, stop_when_idle: bool = True) -> None:
        """Advance virtual time; by default stop once no execution is running."""
        until = None if until_elapsed is None else self.clock.start + until_elapsed

        def idle() -> bool:
            return stop_when_idle and bool(self.sfn.executions) and not self.sfn.running

        self.scheduler.run(until=until, stop=idle)
        self.sim.advance()

    def execution(self, response: Mapping[str, Any]) -> Execution:
        """The execution a successful arm response points to."""
        return self.sfn.executions[str(response["PhysicalResourceId"])]

    # -- observations --------------------------------------------------------------
    def polls(self) -> list[Invocation]:
        """Poll invocations that ran the handler."""
        return [
            i
            for i in self.invocations
            if i.function == "poll"
            and "error" not in (i.result if isinstance(i.result, dict) else {})
        ]

    def signals(self, tag: str = "ab12cd34") -> list[Put]:
        """Signals received by the handle of ``tag``."""
        return self.cfn.signals.get(self.handle_id(tag), [])

    def stdout(self) -> str:
        """Everything the Lambda functions printed."""
        return "\n".join(i.stdout + i.stderr for i in self.invocations)

    def assert_no_secret_leak(self) -> None:
        """No presigned URL (nor its signature) in any output, log, result or message."""
        haystacks = [self.stdout(), "\n".join(self.logs.lines)]
        haystacks += [json.dumps(i.result) for i in self.invocations]
        haystacks += [json.dumps(m) for m in self.sns.messages]
        for execution in self.sfn.executions.values():
            haystacks.append(json.dumps([execution.output, execution.error, execution.cause]))
        for fake in (self.sim.fake, self.sns.fake, self.sfn.fake):
            haystacks.append(json.dumps(fake.attempts))
        for put in self.http.puts:
            haystacks.append(put.body.decode())
        text = "\n".join(haystacks)
        for secret in self.cfn.secrets:
            assert secret not in text, "a presigned URL (or its signature) leaked"
        assert "X-Amz-Signature" not in text

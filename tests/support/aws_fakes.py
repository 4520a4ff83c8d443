"""Fakes for the non-SageMaker edges of the gate: CloudFormation (DescribeStackResource,
SignalResource on wait conditions with a CreationPolicy, custom resource responses), SNS
Publish, and the urllib seam used for the custom resource's presigned-URL PUTs. (Step
Functions is moto's engine, see moto_sfn.py; moto 5.2 has no SignalResource, so this fake
answers it, its requests checked against botocore's model.)"""

from __future__ import annotations

import hashlib
import itertools
import json
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from email.message import Message
from typing import Any

from botocore.exceptions import ReadTimeoutError  # type: ignore[import-untyped, unused-ignore]
from botocore.validate import ParamValidator  # type: ignore[import-untyped, unused-ignore]

from hyperpod_constructs._runtime.hyperpod_gate.aws import READ_TIMEOUT

from .clock import VirtualClock
from .wire import ACCOUNT, REGION, ApiError, ContractViolation, WireFake

_UUID = "8d1c6f20-4b1e-11f1-9a3c-0a1b2c3d4e5f"
STACK_ID = f"arn:aws:cloudformation:{REGION}:{ACCOUNT}:stack/HyperPodTrain/{_UUID}"
"""The stack the fakes model (default stack name)."""


def _secret(seed: str) -> str:
    return hashlib.sha256(seed.encode()).hexdigest()


@dataclass
class Put:
    """One HTTP PUT that reached a fake presigned URL."""

    time: float
    url: str
    method: str
    headers: dict[str, str]
    body: bytes
    timeout: float | None

    def json(self) -> Any:
        return json.loads(self.body)


@dataclass
class Signal:
    """One ``SignalResource`` CloudFormation accepted (the wait condition was waiting)."""

    time: float
    logical_id: str
    unique_id: str
    status: str
    role: str | None
    """The gate role that sent it ("check" or "arm"; ``None`` outside a handler)."""
    reason: str = ""
    """Not part of the signal (SignalResource carries none): the reason of the decision the
    sending invocation returned, which the loop reports in its state, cause and message.
    Filled by the world once the invocation ends."""


@dataclass
class WaitCondition:
    """A wait condition with a ``CreationPolicy`` (``ResourceSignal`` Count 1)."""

    logical_id: str
    timeout_at: float
    status: str = "CREATE_IN_PROGRESS"
    reason: str = ""
    completed_at: float | None = None


SIGNAL_TIMEOUT_REASON = "Failed to receive 1 resource signal(s) within the specified duration"
"""How CloudFormation words a creation policy's timeout."""
GATE_ROLE_CREDENTIALS = ("AKIDTESTTESTTESTTEST", "test-secret", "test-token")
"""The credentials of every fake client (``WireFake.client``): secrets a leak test looks for."""


class FakeCloudFormation:
    """The stack: resources, handle URLs, signals, custom resource responses."""

    def __init__(self, clock: VirtualClock, stack_name: str = "HyperPodTrain") -> None:
        self.clock = clock
        self.stack_name = stack_name
        self.stack_id = f"arn:aws:cloudformation:{REGION}:{ACCOUNT}:stack/{stack_name}/{_UUID}"
        self.stack_deleted = False
        self.resources: dict[str, dict[str, str]] = {}
        self.response_urls: dict[str, str] = {}
        self.handle_urls: dict[str, str] = {}
        """Declaration handles' URLs: never used by the gate, but secrets all the same."""
        self.signals: dict[str, list[Signal]] = {}
        """Accepted signals per wait condition."""
        self.refusals: list[tuple[str, dict[str, Any]]] = []
        """Refused ``SignalResource`` calls: (error code, params)."""
        self.responses: dict[str, list[Put]] = {}
        self.wait_conditions: dict[str, WaitCondition] = {}
        self.role: Callable[[], str | None] = lambda: None
        """The gate role making the current call (the world sets it: "check" or "arm")."""
        self.denied_roles: set[str] = set()
        """Roles whose ``SignalResource`` IAM denies (e.g. a policy edited by hand, an SCP)."""
        self.signal_faults: list[ApiError | str] = []
        """Errors answered to the next ``SignalResource`` attempts, first (throttling, 5xx;
        ``"hang"``: the client's read timeout expires, in virtual time)."""
        self.fake = WireFake("cloudformation", self._handle)

    # -- stack model -------------------------------------------------------------
    @property
    def secrets(self) -> list[str]:
        """Every presigned URL handed out (the custom resource's ResponseURLs), its signature
        alone, and the credentials the gate's clients sign with."""
        urls = [*self.response_urls.values(), *self.handle_urls.values()]
        signatures = [
            urllib.parse.parse_qs(urllib.parse.urlsplit(u).query)["X-Amz-Signature"][0]
            for u in urls
        ]
        return urls + signatures + list(GATE_ROLE_CREDENTIALS)

    def add_wait_handle(self, logical_id: str, metadata: str | None = None) -> str:
        """Create an AWS::CloudFormation::WaitConditionHandle (with the template's Metadata,
        resolved, as JSON text: the gate's declaration); return its URL. No wait condition
        references it: the gate never signals it."""
        path = urllib.parse.quote(f"{self.stack_id}/{logical_id}", safe="")
        url = (
            f"https://cloudformation-waitcondition-{REGION}.s3.amazonaws.com/{path}"
            "?X-Amz-Algorithm=AWS4-HMAC-SHA256&X-Amz-Date=20260601T080000Z"
            "&X-Amz-SignedHeaders=host&X-Amz-Expires=86399"
            "&X-Amz-Credential=AKIAIOSFODNN7EXAMPLE%2F20260601%2Fus-east-1%2Fs3%2Faws4_request"
            f"&X-Amz-Signature={_secret('handle' + logical_id)}"
        )
        self.resources[logical_id] = {
            "type": "AWS::CloudFormation::WaitConditionHandle",
            "physical": url,
            "status": "CREATE_COMPLETE",
        }
        if metadata is not None:
            self.resources[logical_id]["metadata"] = metadata
        self.handle_urls[logical_id] = url
        return url

    def add_wait_condition(self, logical_id: str, timeout_seconds: int) -> WaitCondition:
        """CloudFormation creates the wait condition ``logical_id`` (a creation policy of one
        signal within ``timeout_seconds``); it waits from now."""
        condition = WaitCondition(logical_id, self.clock.time() + timeout_seconds)
        self.wait_conditions[logical_id] = condition
        self.signals.setdefault(logical_id, [])
        self.resources[logical_id] = {
            "type": "AWS::CloudFormation::WaitCondition",
            "physical": f"{self.stack_id}/{logical_id}",
            "status": "",
            "condition": logical_id,
        }
        return condition

    def remove_resource(self, logical_id: str) -> None:
        """The resource was deleted (e.g. replaced by an update or a rollback)."""
        self.resources.pop(logical_id, None)

    def delete_stack(self) -> None:
        """The whole stack is gone."""
        self.stack_deleted = True
        self.resources.clear()

    def response_url(self, request_id: str, logical_id: str) -> str:
        """A presigned ResponseURL for one custom resource request."""
        key = urllib.parse.quote(f"{self.stack_id}|{logical_id}|{request_id}", safe="")
        url = (
            f"https://cloudformation-custom-resource-response-useast1.s3.amazonaws.com/{key}"
            "?X-Amz-Algorithm=AWS4-HMAC-SHA256&X-Amz-Date=20260601T080000Z"
            "&X-Amz-SignedHeaders=host&X-Amz-Expires=7200"
            "&X-Amz-Credential=AKIAIOSFODNN7EXAMPLE%2F20260601%2Fus-east-1%2Fs3%2Faws4_request"
            f"&X-Amz-Signature={_secret('response' + request_id)}"
        )
        self.response_urls[request_id] = url
        self.responses.setdefault(request_id, [])
        return url

    def condition(self, logical_id: str) -> WaitCondition:
        """The wait condition ``logical_id`` with its timeout applied."""
        condition = self.wait_conditions[logical_id]
        if condition.status == "CREATE_IN_PROGRESS" and self.clock.time() >= condition.timeout_at:
            condition.status, condition.reason = "CREATE_FAILED", SIGNAL_TIMEOUT_REASON
            condition.completed_at = condition.timeout_at
        return condition

    # -- HTTP side -----------------------------------------------------------------
    def receive_put(self, put: Put) -> int:
        """Route a PUT to a ResponseURL; return the HTTP status S3 would."""
        if put.headers.get("Content-type", "") != "":
            return 403  # SignatureDoesNotMatch: the URL was signed without a content type
        for request_id, url in self.response_urls.items():
            if put.url == url:
                return self._response(request_id, put)
        return 403

    def _signal(self, params: dict[str, Any]) -> dict[str, Any]:
        """``SignalResource`` as CloudFormation answers it: IAM first, then the stack, then
        the resource, which must be a wait condition still waiting (Count 1: its first
        signal decides); a signal to anything else is a ValidationError."""
        operation = self.fake.model.operation_model("SignalResource")
        report = ParamValidator().validate(params, operation.input_shape)
        if report.has_errors():
            raise ContractViolation(f"invalid SignalResource request:\n{report.generate_report()}")
        role = self.role()
        stack = params["StackName"]
        logical_id = params["LogicalResourceId"]
        try:
            if self.signal_faults:
                fault = self.signal_faults.pop(0)
                if isinstance(fault, ApiError):
                    raise fault
                self.clock.advance(float(READ_TIMEOUT))
                raise ReadTimeoutError(
                    endpoint_url=f"https://cloudformation.{REGION}.amazonaws.com/"
                )
            if role in self.denied_roles:
                raise ApiError(
                    "AccessDenied",
                    f"User: arn:aws:sts::{ACCOUNT}:assumed-role/Gate-{role}-role/fn is not "
                    f"authorized to perform: cloudformation:SignalResource on resource: {stack} "
                    "with an explicit deny",
                    403,
                )
            if self.stack_deleted or stack not in (self.stack_id, self.stack_name):
                raise ApiError("ValidationError", f"Stack with id {stack} does not exist")
            if logical_id not in self.resources:
                raise ApiError(
                    "ValidationError",
                    f"Resource {logical_id} does not exist for stack {self.stack_name}",
                )
            if logical_id not in self.wait_conditions:
                raise ApiError(
                    "ValidationError",
                    f"Resource {logical_id} cannot be signaled (no creation policy)",
                )
            condition = self.condition(logical_id)
            if condition.status != "CREATE_IN_PROGRESS":
                raise ApiError(
                    "ValidationError",
                    f"Resource {logical_id} is in {condition.status} state and cannot be signaled",
                )
        except ApiError as error:
            self.refusals.append((error.code, dict(params)))
            raise
        signal = Signal(self.clock.time(), logical_id, params["UniqueId"], params["Status"], role)
        self.signals[logical_id].append(signal)
        if signal.status == "SUCCESS":
            condition.status = "CREATE_COMPLETE"
        else:
            condition.status = "CREATE_FAILED"
            condition.reason = f"Received FAILURE signal with UniqueId {signal.unique_id}"
        condition.completed_at = signal.time
        return {}

    def _response(self, request_id: str, put: Put) -> int:
        document = put.json()
        required = {"Status", "PhysicalResourceId", "StackId", "RequestId", "LogicalResourceId"}
        if not required <= set(document) or document["Status"] not in ("SUCCESS", "FAILED"):
            raise ContractViolation(f"bad custom resource response {sorted(document)}")
        if document["Status"] == "FAILED" and not document.get("Reason"):
            raise ContractViolation("a FAILED response needs a Reason")
        if len(put.body) > 4096:
            raise ContractViolation("custom resource response larger than 4096 bytes")
        self.responses[request_id].append(put)
        return 200

    # -- API side --------------------------------------------------------------------
    def _handle(self, operation: str, params: dict[str, Any]) -> dict[str, Any]:
        if operation == "SignalResource":
            return self._signal(params)
        if operation != "DescribeStackResource":
            raise ApiError("ValidationError", f"{operation} is not simulated")
        stack = params.get("StackName")
        if self.stack_deleted or stack not in (self.stack_id, self.stack_name):
            raise ApiError("ValidationError", f"Stack with id {stack} does not exist")
        logical_id = params.get("LogicalResourceId", "")
        resource = self.resources.get(logical_id)
        if resource is None:
            raise ApiError(
                "ValidationError",
                f"Resource {logical_id} does not exist for stack {self.stack_name}",
            )
        status = resource["status"]
        detail: dict[str, Any] = {
            "StackName": self.stack_name,
            "StackId": self.stack_id,
            "LogicalResourceId": logical_id,
            "ResourceType": resource["type"],
            "LastUpdatedTimestamp": datetime.fromtimestamp(self.clock.time(), UTC),
            "ResourceStatus": status,
        }
        if "condition" in resource:
            condition = self.condition(resource["condition"])
            detail["ResourceStatus"] = condition.status
            if condition.reason:
                detail["ResourceStatusReason"] = condition.reason
        if resource["physical"]:  # none yet while a resource is being created
            detail["PhysicalResourceId"] = resource["physical"]
        if "metadata" in resource:
            detail["Metadata"] = resource["metadata"]
        return {"StackResourceDetail": detail}


class FakeSns:
    """SNS Publish, recorded."""

    def __init__(self) -> None:
        self.messages: list[dict[str, str]] = []
        self.fake = WireFake("sns", self._handle)
        self._ids = itertools.count(1)

    def _handle(self, operation: str, params: dict[str, Any]) -> dict[str, Any]:
        if operation != "Publish":
            raise ApiError("InvalidParameter", f"{operation} is not simulated")
        subject = params.get("Subject", "")
        if len(subject) > 100 or not subject.isascii() or "\n" in subject:
            raise ApiError("InvalidParameter", "Invalid parameter: Subject")
        if len(params.get("Message", "").encode()) > 262_144:
            raise ApiError("InvalidParameter", "Invalid parameter: Message too long")
        self.messages.append(dict(params))
        return {"MessageId": f"5a1d{next(self._ids):028d}"}


@dataclass
class _Response:
    status: int

    def __enter__(self) -> _Response:
        return self

    def __exit__(self, *_: object) -> None:
        return None


@dataclass
class FakeHttp:
    """Replacement for ``urllib.request.urlopen`` in ``hyperpod_gate.httpput``.

    It runs urllib's real request preparation (``HTTPSHandler.https_request``,
    which adds default headers) and hands the result to CloudFormation.
    ``failures`` is a queue of statuses (int) or exceptions to answer first.
    """

    clock: VirtualClock
    cfn: FakeCloudFormation
    puts: list[Put] = field(default_factory=list)
    failures: list[int | BaseException] = field(default_factory=list)

    def urlopen(self, request: urllib.request.Request, timeout: float | None = None) -> _Response:
        opener = urllib.request.build_opener()
        https = next(
            h for h in getattr(opener, "handlers", []) if isinstance(h, urllib.request.HTTPSHandler)
        )
        prepared = https.https_request(request)
        headers = dict(prepared.header_items())
        body = prepared.data if isinstance(prepared.data, bytes) else b""
        put = Put(
            self.clock.time(), prepared.full_url, prepared.get_method(), headers, body, timeout
        )
        if put.method != "PUT":
            raise ContractViolation(f"expected PUT, got {put.method}")
        self.puts.append(put)
        if self.failures:
            failure = self.failures.pop(0)
            if isinstance(failure, TimeoutError):
                self.clock.advance(timeout or 0.0)  # the client waited its whole timeout
            if isinstance(failure, BaseException):
                raise failure
            status = failure
        else:
            status = self.cfn.receive_put(put)
        if status >= 400:
            raise urllib.error.HTTPError(put.url, status, "Forbidden", Message(), None)
        return _Response(status)

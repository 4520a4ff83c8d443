"""Answer real boto3 clients at the HTTP layer.

A fake registers a ``before-send`` handler on a real boto3 client.  The handler
parses the request botocore really serialized (JSON body + ``X-Amz-Target``
header, or the query protocol's form body), asks the fake for a response dict,
validates that dict against the operation's output shape of the botocore model
(as ``botocore.stub.Stubber`` does), serializes it as the service's protocol
would (JSON: timestamps as epoch numbers, errors as ``{"__type", "message"}``
with the HTTP status; query: XML), and returns a ``botocore.awsrequest.AWSResponse``.
botocore's real parser, error handling and retry logic run on that response.
"""

from __future__ import annotations

import itertools
import json
import urllib.parse
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from functools import cache
from typing import Any
from xml.sax.saxutils import escape

import boto3  # type: ignore[import-untyped, unused-ignore]
import botocore.session  # type: ignore[import-untyped, unused-ignore]
from botocore.awsrequest import AWSPreparedRequest, AWSResponse  # type: ignore[import-untyped, unused-ignore]
from botocore.model import OperationModel, ServiceModel, Shape  # type: ignore[import-untyped, unused-ignore]
from botocore.validate import ParamValidator  # type: ignore[import-untyped, unused-ignore]

REGION = "us-east-1"
ACCOUNT = "123456789012"


class ContractViolation(BaseException):
    """A fake produced a response the real API model does not allow.

    Derived from BaseException on purpose: handler code under test catches
    ``Exception`` everywhere, and an invalid fake must fail the test loudly
    instead of turning into a FAILED gate decision.
    """


@dataclass
class ApiError(Exception):
    """Raised by a fake to answer with an AWS error."""

    code: str
    message: str
    status: int = 400

    def __str__(self) -> str:
        return f"{self.code} ({self.status}): {self.message}"


Handler = Callable[[str, dict[str, Any]], dict[str, Any]]
"""(operation name, request params) -> response dict; may raise ApiError."""


@cache
def reference_model(service_name: str) -> ServiceModel:
    """The full botocore model of a service (what the real service answers with)."""
    return botocore.session.get_session().get_service_model(service_name)


@cache
def shared_session() -> boto3.Session:
    """One boto3 session for every fake client: botocore then loads each model once."""
    return boto3.Session()


class _Raw:
    def __init__(self, body: bytes) -> None:
        self._body = body

    def stream(self, **_: Any) -> Iterator[bytes]:
        yield self._body


def _header(request: AWSPreparedRequest, name: str) -> str:
    value = request.headers.get(name)
    if value is None:
        return ""
    return value.decode() if isinstance(value, bytes) else str(value)


def _body(request: AWSPreparedRequest) -> bytes:
    body = request.body
    if body is None:
        return b""
    if isinstance(body, str):
        return body.encode()
    if isinstance(body, bytes):
        return body
    data = body.read()
    return data if isinstance(data, bytes) else str(data).encode()


def _jsonable(value: Any) -> Any:
    if isinstance(value, datetime):
        return value.timestamp()
    if isinstance(value, Mapping):
        return {k: _jsonable(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_jsonable(v) for v in value]
    return value


def _iso(value: Any) -> str:
    moment = value if isinstance(value, datetime) else datetime.fromtimestamp(float(value), UTC)
    return moment.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def _xml(shape: Shape, value: Any) -> str:
    kind = shape.type_name
    if kind == "structure":
        parts = []
        for name, member in shape.members.items():
            if name in value:
                tag = member.serialization.get("name", name)
                if member.type_name == "list" and member.serialization.get("flattened"):
                    raise NotImplementedError("flattened XML lists are not supported")
                parts.append(f"<{tag}>{_xml(member, value[name])}</{tag}>")
        return "".join(parts)
    if kind == "list":
        tag = shape.member.serialization.get("name", "member")
        return "".join(f"<{tag}>{_xml(shape.member, item)}</{tag}>" for item in value)
    if kind == "map":
        return "".join(
            f"<entry><key>{escape(str(k))}</key><value>{_xml(shape.value, v)}</value></entry>"
            for k, v in value.items()
        )
    if kind == "timestamp":
        return _iso(value)
    if kind == "boolean":
        return "true" if value else "false"
    return escape(str(value))


class WireFake:
    """Attach a Python handler to real boto3 clients of one service."""

    def __init__(self, service_name: str, handler: Handler) -> None:
        self.service_name = service_name
        self.handler = handler
        self.model = reference_model(service_name)
        self.attempts: list[tuple[str, dict[str, Any]]] = []
        self._request_ids = itertools.count(1)

    def client(self, *, service_model_loader: Callable[[], Any] | None = None) -> Any:
        """A real boto3 client (dummy credentials, us-east-1) answered by this fake."""
        from hyperpod_constructs._runtime.hyperpod_gate.aws import CLIENT_CONFIG

        session = service_model_loader() if service_model_loader is not None else shared_session()
        client = session.client(
            self.service_name,
            region_name=REGION,
            aws_access_key_id="AKIDTESTTESTTESTTEST",
            aws_secret_access_key="test-secret",
            aws_session_token="test-token",
            config=CLIENT_CONFIG,
        )
        self.attach(client)
        return client

    def attach(self, client: Any) -> None:
        """Register the before-send handler on an existing client."""
        service_id = client.meta.service_model.service_id.hyphenize()
        client.meta.events.register(f"before-send.{service_id}", self._before_send)

    # -- request side ------------------------------------------------------
    def _operation(self, request: AWSPreparedRequest, body: bytes) -> tuple[str, dict[str, Any]]:
        protocol = self.model.protocol
        if protocol == "json":
            target = _header(request, "X-Amz-Target")
            prefix = self.model.metadata["targetPrefix"] + "."
            if not target.startswith(prefix):
                raise ContractViolation(f"unexpected X-Amz-Target {target!r}")
            params = json.loads(body or b"{}")
            return target[len(prefix) :], params
        if protocol == "query":
            form = urllib.parse.parse_qs(body.decode(), keep_blank_values=True, strict_parsing=True)
            flat = {k: v[0] for k, v in form.items()}
            action = flat.pop("Action")
            if flat.pop("Version") != self.model.api_version:
                raise ContractViolation("wrong API version in a query request")
            if not any("." in k for k in flat):
                return action, flat
            shape = self.model.operation_model(action).input_shape
            tree: dict[str, Any] = {}
            for key, value in flat.items():
                node = tree
                *path, last = key.split(".")
                for part in path:
                    node = node.setdefault(part, {})
                node[last] = value
            return action, _from_query(shape, tree)
        raise ContractViolation(f"protocol {protocol} not supported")

    # -- response side -----------------------------------------------------
    def _validate(self, operation: OperationModel, response: dict[str, Any]) -> None:
        shape = operation.output_shape
        if shape is None:
            if response:
                raise ContractViolation(f"{operation.name} has no output but got {response}")
            return
        report = ParamValidator().validate(response, shape)
        if report.has_errors():
            raise ContractViolation(
                f"fake {self.service_name}.{operation.name} response is invalid for the "
                f"botocore model:\n{report.generate_report()}"
            )

    def _serialize(self, operation: OperationModel, response: dict[str, Any]) -> tuple[bytes, str]:
        request_id = f"00000000-0000-4000-8000-{next(self._request_ids):012d}"
        if self.model.protocol == "json":
            return json.dumps(_jsonable(response)).encode(), request_id
        namespace = self.model.metadata.get("xmlNamespace", "")
        shape = operation.output_shape
        inner = _xml(shape, response) if shape is not None else ""
        wrapper = shape.serialization.get("resultWrapper") if shape is not None else None
        if wrapper:
            inner = f"<{wrapper}>{inner}</{wrapper}>"
        name = operation.name
        xml = (
            f'<{name}Response xmlns="{namespace}">{inner}'
            f"<ResponseMetadata><RequestId>{request_id}</RequestId></ResponseMetadata>"
            f"</{name}Response>"
        )
        return xml.encode(), request_id

    def _error(self, error: ApiError) -> tuple[bytes, dict[str, str]]:
        request_id = f"00000000-0000-4000-9000-{next(self._request_ids):012d}"
        if self.model.protocol == "json":
            body = json.dumps({"__type": error.code, "message": error.message}).encode()
            return body, {"x-amzn-RequestId": request_id}
        namespace = self.model.metadata.get("xmlNamespace", "")
        kind = "Receiver" if error.status >= 500 else "Sender"
        xml = (
            f'<ErrorResponse xmlns="{namespace}"><Error><Type>{kind}</Type>'
            f"<Code>{escape(error.code)}</Code><Message>{escape(error.message)}</Message>"
            f"</Error><RequestId>{request_id}</RequestId></ErrorResponse>"
        )
        return xml.encode(), {"x-amzn-RequestId": request_id}

    def _content_type(self) -> str:
        if self.model.protocol == "json":
            return f"application/x-amz-json-{self.model.metadata.get('jsonVersion', '1.0')}"
        return "text/xml"

    def _before_send(self, request: AWSPreparedRequest, **_: Any) -> AWSResponse:
        body = _body(request)
        name, params = self._operation(request, body)
        operation = self.model.operation_model(name)
        self.attempts.append((name, params))
        try:
            response = self.handler(name, params)
        except ApiError as error:
            payload, headers = self._error(error)
            headers["Content-Type"] = self._content_type()
            return AWSResponse(request.url, error.status, headers, _Raw(payload))
        self._validate(operation, response)
        payload, request_id = self._serialize(operation, response)
        headers = {"x-amzn-RequestId": request_id, "Content-Type": self._content_type()}
        return AWSResponse(request.url, 200, headers, _Raw(payload))

    def count(self, operation: str) -> int:
        """How many HTTP attempts of ``operation`` reached the fake (retries included)."""
        return sum(1 for name, _ in self.attempts if name == operation)


def _from_query(shape: Any, value: Any) -> Any:
    """A query-protocol request's nested form fields (``Name.entry.1.Value.DataType``, split on
    the dots) back into the operation's input shape: structures, maps (``entry.N`` with the
    map's key and value names) and lists (``member.N``); scalars stay strings."""
    if shape.type_name == "structure":
        if not isinstance(value, dict):
            raise ContractViolation(f"query structure {shape.name} is not nested")
        found: dict[str, Any] = {}
        for name, member in shape.members.items():
            wire = member.serialization.get("name", name)
            if wire in value:
                found[name] = _from_query(member, value[wire])
        return found
    if shape.type_name == "map":
        key_name = shape.key.serialization.get("name", "key")
        value_name = shape.value.serialization.get("name", "value")
        entries = value.get("entry", {}) if isinstance(value, dict) else {}
        return {
            entries[i][key_name]: _from_query(shape.value, entries[i][value_name])
            for i in sorted(entries, key=int)
        }
    if shape.type_name == "list":
        members = value.get("member", {}) if isinstance(value, dict) else {}
        return [_from_query(shape.member, members[i]) for i in sorted(members, key=int)]
    return value

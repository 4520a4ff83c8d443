"""Arm Lambda: a raw CloudFormation custom resource that starts the poll loop.

Create/Update start a Step Functions Standard execution (its ARN becomes the
PhysicalResourceId); Delete stops the execution named by the PhysicalResourceId
and always succeeds.  The handler answers CloudFormation itself with an HTTP
PUT to ``ResponseURL``; it never logs that URL or the event.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from datetime import datetime
from typing import Any

from . import aws, httpput, poll
from .contract import ArmProperties, Prop, is_execution_arn, parse_properties, starts_new_wait

__all__ = ["ArmProperties", "handler", "is_execution_arn", "parse_properties"]

NOT_STARTED = "hyperpod-min-count-gate-not-started"
"""PhysicalResourceId of a gate whose execution could not be started."""
SETTLED = "hyperpod-min-count-gate-settled"
"""PhysicalResourceId after an update back to gated values whose wait already ended."""

REASON_LIMIT = 1000
_NAME_CHARS = re.compile(r"[^A-Za-z0-9_-]")


def execution_input(props: ArmProperties, *, stack_id: str, now: datetime) -> dict[str, Any]:
    """The poll event: the state machine passes it unchanged to every poll (pure)."""
    document: dict[str, Any] = {
        "clusterName": props.cluster_name,
        "requirements": [
            {"groupName": r.group_name, "minCount": r.min_count, "targetCount": r.target_count}
            for r in props.requirements
        ],
        "armedAt": int(now.timestamp()),
        "deadline": int(now.timestamp()) + props.timeout_seconds,
        "pollIntervalSeconds": props.poll_interval_seconds,
        "stackId": stack_id,
        "waitConditionLogicalId": props.wait_condition_logical_id,
        "metricsNamespace": props.metrics_namespace,
    }
    if props.topic_arn is not None:
        document["topicArn"] = props.topic_arn
    return document


def execution_name(request_id: str) -> str:
    """Execution name derived from the CloudFormation RequestId (idempotent)."""
    return ("gate-" + _NAME_CHARS.sub("-", request_id))[:80]


def execution_arn_for(state_machine_arn: str, name: str) -> str:
    """ARN of execution ``name`` of ``state_machine_arn`` (documented ARN format)."""
    return state_machine_arn.replace(":stateMachine:", ":execution:", 1) + ":" + name


def response_document(
    event: Mapping[str, Any],
    *,
    success: bool,
    physical_id: str,
    reason: str,
    data: Mapping[str, str] | None = None,
) -> dict[str, Any]:
    """Custom resource response body (pure)."""
    return {
        "Status": "SUCCESS" if success else "FAILED",
        "Reason": reason[:REASON_LIMIT],
        "PhysicalResourceId": physical_id,
        "StackId": str(event.get("StackId", "")),
        "RequestId": str(event.get("RequestId", "")),
        "LogicalResourceId": str(event.get("LogicalResourceId", "")),
        "NoEcho": False,
        "Data": dict(data or {}),
    }


def _respond(event: Mapping[str, Any], context: Any, body: dict[str, Any]) -> None:
    url = event.get("ResponseURL")
    if not isinstance(url, str):
        print("hyperpod-min-count-gate arm: no ResponseURL in the event; cannot respond")
        return
    remaining = getattr(context, "get_remaining_time_in_millis", None)
    budget = remaining() / 1000.0 if callable(remaining) else 30.0
    timeout = max(1.0, min(10.0, (budget - 2.0) / 3.0))
    try:
        httpput.put_json(url, body, timeout=timeout, attempts=3)
    except httpput.DeliveryError as exc:
        print(f"hyperpod-min-count-gate arm: response not delivered: {exc}")


def _start(event: Mapping[str, Any], props: ArmProperties) -> tuple[bool, str, str]:
    """Start the execution; return (ok, physical id or reason, detail)."""
    name = execution_name(str(event.get("RequestId") or aws.now().timestamp()))
    document = execution_input(props, stack_id=str(event.get("StackId", "")), now=aws.now())
    sfn = aws.client("stepfunctions")
    try:
        arn = str(
            sfn.start_execution(
                stateMachineArn=props.state_machine_arn,
                name=name,
                input=json.dumps(document, separators=(",", ":")),
            )["executionArn"]
        )
    except Exception as exc:
        code = aws.error_code(exc)
        if code == "ExecutionAlreadyExists":
            # A retried delivery of the same request: that execution is ours.
            return True, execution_arn_for(props.state_machine_arn, name), "already started"
        label = code or type(exc).__name__
        hint = (
            " (missing permission states:StartExecution on the state machine)"
            if aws.is_access_denied(exc)
            else ""
        )
        message = httpput.redact(aws.error_message(exc))[:300]
        return (
            False,
            f"could not start the MinCount gate poll loop: {label}{hint}: {message}",
            label,
        )
    return True, arn, f"deadline {document['deadline']}"


def _stop(physical_id: str) -> str:
    if not is_execution_arn(physical_id):
        return "nothing to stop"
    try:
        aws.client("stepfunctions").stop_execution(executionArn=physical_id, cause="gate deleted")
    except Exception as exc:
        return f"stop skipped ({aws.error_code(exc) or type(exc).__name__})"
    return "execution stopped"


def wait_already_exists(event: Mapping[str, Any]) -> bool:
    """Whether the wait condition named by ``WaitConditionLogicalId`` is already in the
    stack (in any state but being deleted). On a forward update it is not: CloudFormation
    creates it after this resource. On UPDATE_ROLLBACK it is: it holds the result of the
    earlier wait, or a loop is already waiting for it. Any error reading it counts as "no"
    (the safe choice is to wait)."""
    props = event.get("ResourceProperties") or {}
    logical_id = props.get(Prop.WAIT_CONDITION_LOGICAL_ID)
    stack_id = event.get("StackId")
    if not (isinstance(logical_id, str) and logical_id and isinstance(stack_id, str)):
        return False
    try:
        detail = aws.client("cloudformation").describe_stack_resource(
            StackName=stack_id, LogicalResourceId=logical_id
        )["StackResourceDetail"]
    except Exception:
        return False
    status = str(detail.get("ResourceStatus", ""))
    return bool(status) and not status.startswith("DELETE")


def needs_new_wait(event: Mapping[str, Any]) -> bool:
    """Whether an Update must start a new wait: :func:`~.contract.starts_new_wait` of the
    event's old and new properties (a new loop for the same gated values would only poll
    again for nothing)."""
    return starts_new_wait(
        event.get("OldResourceProperties") or {}, event.get("ResourceProperties") or {}
    )


def unchanged_wait_reason(event: Mapping[str, Any]) -> str:
    """Why an Update that keeps the wait condition starts no new wait (pure). The counts can
    differ under the same wait condition only when they are parameters whose values changed: the
    condition's logical id embeds the parameter's name, not its value."""
    old = (event.get("OldResourceProperties") or {}).get(Prop.REQUIREMENTS)
    new = (event.get("ResourceProperties") or {}).get(Prop.REQUIREMENTS)
    if old == new:
        return "gated values unchanged, no new wait: the wait condition already holds its result"
    return (
        "gated counts changed under the same wait condition (a parameter's value), no new "
        "wait: wait conditions are create-only (HP-WARN-GATE-TOKEN-COUNT)"
    )


def handler(event: Mapping[str, Any], context: Any) -> Any:
    """CloudFormation custom resource entry point (Create, Update, Delete).

    The poll loop also invokes this function, with its own state instead of a CloudFormation
    request, when the check function's signal was refused (or it could not run at all): this
    function's role then signals the decision, so the stack learns it instead of waiting for
    the wait condition's 12-hour limit."""
    if "RequestType" not in event:
        return poll.fallback_handler(event, context)
    request_type = str(event.get("RequestType", ""))
    old_id = str(event.get("PhysicalResourceId") or "")
    try:
        if request_type == "Delete":
            detail = _stop(old_id)
            print(f"hyperpod-min-count-gate arm Delete: {detail}")
            body = response_document(
                event, success=True, physical_id=old_id or NOT_STARTED, reason=detail
            )
        elif request_type == "Update" and not needs_new_wait(event):
            reason = unchanged_wait_reason(event)
            print(f"hyperpod-min-count-gate arm Update: {reason}")
            body = response_document(
                event, success=True, physical_id=old_id or NOT_STARTED, reason=reason
            )
        elif request_type == "Update" and wait_already_exists(event):
            # A rollback (or a return to earlier gated values): CloudFormation re-applies old
            # properties whose wait condition already exists and holds its result. Nothing to
            # poll; the new physical id makes CloudFormation delete (stop) the newer loop.
            print("hyperpod-min-count-gate arm Update: wait condition exists, no new wait")
            body = response_document(
                event,
                success=True,
                physical_id=SETTLED,
                reason="the wait condition for these gated values already exists",
            )
        elif request_type in ("Create", "Update"):
            fallback = NOT_STARTED if request_type == "Create" else old_id or NOT_STARTED
            try:
                props = parse_properties(event.get("ResourceProperties") or {})
            except ValueError as exc:
                print(f"hyperpod-min-count-gate arm {request_type}: invalid properties")
                body = response_document(
                    event,
                    success=False,
                    physical_id=fallback,
                    reason=f"invalid gate properties: {exc}",
                )
            else:
                ok, value, detail = _start(event, props)
                if ok:
                    print(f"hyperpod-min-count-gate arm {request_type}: started {value} ({detail})")
                    body = response_document(
                        event,
                        success=True,
                        physical_id=value,
                        reason=f"MinCount gate armed ({detail})",
                        data={"ExecutionArn": value},
                    )
                else:
                    print(f"hyperpod-min-count-gate arm {request_type}: start failed ({detail})")
                    body = response_document(
                        event, success=False, physical_id=fallback, reason=value
                    )
        else:
            body = response_document(
                event,
                success=False,
                physical_id=old_id or NOT_STARTED,
                reason=f"unknown RequestType {request_type[:40]!r}",
            )
    except Exception as exc:
        print(f"hyperpod-min-count-gate arm {request_type}: internal error {type(exc).__name__}")
        body = response_document(
            event,
            success=request_type == "Delete",
            physical_id=old_id or NOT_STARTED,
            reason=f"internal error: {type(exc).__name__}: {httpput.redact(str(exc))}",
        )
    _respond(event, context, body)

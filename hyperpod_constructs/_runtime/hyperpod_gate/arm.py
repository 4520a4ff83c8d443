"""Arm Lambda: a raw CloudFormation custom resource that starts the poll loop.

Create/Update start a Step Functions Standard execution (its ARN becomes the
PhysicalResourceId) for the groups this deployment gates (:func:`~.contract.update_scope`), or
signal the wait at once when it gates none; Delete stops the execution named by the
PhysicalResourceId and always succeeds.  The handler answers CloudFormation itself with an
HTTP PUT to ``ResponseURL``; it never logs that URL or the event.

Anyone allowed to invoke the function can send it a made-up request, so it starts or stops a
loop only for its own stack's deployment: the request must name this function's stack and arm
resource, CloudFormation must report that resource in progress for the request, and what to
wait for is read from the template's declaration (the wait handles' Metadata and this
function's environment), never from the payload (see docs/gate.md, "Only the stack decides").
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Mapping
from dataclasses import replace
from datetime import datetime
from typing import Any

from . import aws, httpput, poll
from .contract import (
    ENV_ARM_LOGICAL_ID,
    ENV_STACK_ID,
    ENV_WAIT_OPTIONS,
    RESOURCE_TYPE,
    ArmProperties,
    DeployedWait,
    Prop,
    UpdateScope,
    is_execution_arn,
    parse_metadata,
    parse_properties,
    property_differences,
    starts_new_wait,
    update_scope,
)

__all__ = ["ArmProperties", "handler", "is_execution_arn", "parse_properties"]

NOT_STARTED = "hyperpod-min-count-gate-not-started"
"""PhysicalResourceId of a gate whose execution could not be started."""
SETTLED = "hyperpod-min-count-gate-settled"
"""PhysicalResourceId after an update back to gated values whose wait already ended."""
HANDLE_TYPE = "AWS::CloudFormation::WaitConditionHandle"
STATUS_READS = 3
"""How often the arm resource's status is read before a request is refused (CloudFormation
marks the resource in progress before it invokes the function)."""
STATUS_READ_PAUSE = 2.0

REASON_LIMIT = 1000
RESPONSE_ATTEMPTS = 3
RESPONSE_TIMEOUT = 10.0
RESPONSE_RESERVE = RESPONSE_ATTEMPTS * RESPONSE_TIMEOUT + 3 * httpput.PUT_BACKOFF + 2.0
"""Seconds an invocation keeps for its answer to CloudFormation (35 s): :func:`aws.call`
retries a transient fault only while this much is left after the retry."""
_NAME_CHARS = re.compile(r"[^A-Za-z0-9_-]")


def execution_input(
    props: ArmProperties,
    *,
    stack_id: str,
    now: datetime,
    operation: str | None = None,
    scope: UpdateScope | None = None,
) -> dict[str, Any]:
    """The poll event: the state machine passes it unchanged to every poll (pure).
    ``operation`` ("create" or "update") and ``scope`` (what it waits for and why the other
    groups are left out) reach the notification; omitted when not given."""
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
    if operation is not None:
        document["operation"] = operation
    if scope is not None:
        waited = {r.group_name for r in scope.waits_for}
        document["scope"] = [
            {"groupName": group, "waited": group in waited, "why": why}
            for group, why in scope.reasons
        ]
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
    timeout = max(1.0, min(RESPONSE_TIMEOUT, (budget - 2.0) / RESPONSE_ATTEMPTS))
    try:
        httpput.put_json(url, body, timeout=timeout, attempts=RESPONSE_ATTEMPTS)
    except httpput.DeliveryError as exc:
        print(f"hyperpod-min-count-gate arm: response not delivered: {exc}")


def _start(
    event: Mapping[str, Any], props: ArmProperties, scope: UpdateScope | None = None
) -> tuple[bool, str, str]:
    """Start the execution; return (ok, physical id or reason, detail)."""
    name = execution_name(str(event.get("RequestId") or aws.now().timestamp()))
    document = execution_input(
        props,
        stack_id=str(event.get("StackId", "")),
        now=aws.now(),
        operation=str(event.get("RequestType", "")).lower() or None,
        scope=scope,
    )
    sfn = aws.client("stepfunctions")
    try:
        arn = str(
            aws.call(
                sfn,
                "start_execution",
                stateMachineArn=props.state_machine_arn,
                name=name,
                input=json.dumps(document, separators=(",", ":")),
            )["executionArn"]
        )
    except Exception as exc:
        if aws.is_transient(exc):
            raise  # no verdict on a transient fault: the handler leaves the request unanswered
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


def check_delete(event: Mapping[str, Any], physical_id: str) -> None:
    """A Delete stops a loop only when CloudFormation is deleting that very resource: the arm
    resource with this physical id is ``DELETE_IN_PROGRESS`` (stack deletion, a rollback of
    its creation), or it has settled on another physical id (the cleanup after an update or
    a rollback replaced it: the named loop is no longer the gate's). Raise :class:`Refused`
    otherwise."""
    stack_id, arm_id = check_identity(event)
    detail = _stack_resource(stack_id, arm_id)
    status = str(detail.get("ResourceStatus") or "")
    current = str(detail.get("PhysicalResourceId") or "")
    if current == physical_id and status == "DELETE_IN_PROGRESS":
        return
    if current != physical_id and status and not status.endswith("_IN_PROGRESS"):
        return
    which = "this" if current == physical_id else "another"
    raise Refused(
        f"CloudFormation reports {arm_id} as {status or 'unknown'} with {which} physical id: "
        "not a deletion of this loop by the stack"
    )


DELETE_RETRY_SECONDS = 20.0
"""How long a Delete retries transient faults: it always succeeds, and a loop it could not
stop finds its wait condition gone at its next check and stops by itself (ABANDONED), so a
Delete never holds the stack's deletion up for long."""


def _stop(physical_id: str, event: Mapping[str, Any] | None = None) -> str:
    if not is_execution_arn(physical_id):
        return "nothing to stop"
    with aws.within(DELETE_RETRY_SECONDS):
        return _stop_own(physical_id, event)


def _stop_own(physical_id: str, event: Mapping[str, Any] | None) -> str:
    try:
        check_delete(event or {}, physical_id)
    except Refused as exc:
        return f"stop refused: {exc}"
    except Exception as exc:
        if not aws.is_transient(exc):
            raise
        # A Delete always succeeds; the loop left running finds its wait condition gone and
        # stops by itself (ABANDONED).
        return f"stop skipped: reading the stack failed transiently ({_label(exc)})"
    try:
        aws.call(
            aws.client("stepfunctions"),
            "stop_execution",
            executionArn=physical_id,
            cause="gate deleted",
        )
    except Exception as exc:
        return f"stop skipped ({aws.error_code(exc) or type(exc).__name__})"
    return "execution stopped"


class Refused(Exception):
    """A request the stack's deployment did not make (or that cannot be verified): the arm
    function starts and stops nothing for it."""


def _own_gate() -> tuple[str, str]:
    """This function's stack and arm resource (its environment, set by CloudFormation)."""
    stack_id, arm_id = os.environ.get(ENV_STACK_ID), os.environ.get(ENV_ARM_LOGICAL_ID)
    if not (stack_id and arm_id):
        raise Refused("the function does not know its gate (environment)")
    return stack_id, arm_id


def check_identity(event: Mapping[str, Any]) -> tuple[str, str]:
    """The request names this function's own stack, arm resource and resource type; return
    the stack id and the arm's logical id, or raise :class:`Refused` (pure but for the
    environment)."""
    stack_id, arm_id = _own_gate()
    if (
        event.get("StackId") != stack_id
        or event.get("LogicalResourceId") != arm_id
        or event.get("ResourceType") != RESOURCE_TYPE
    ):
        raise Refused(f"not a request for this gate's arm resource ({arm_id} of its own stack)")
    return stack_id, arm_id


def _label(exc: BaseException) -> str:
    return aws.error_code(exc) or type(exc).__name__


def _stack_resource(stack_id: str, logical_id: str) -> Mapping[str, Any]:
    """``DescribeStackResource`` of this stack's ``logical_id``; :class:`Refused` on a
    permanent answer (denied, not found, ...). A transient fault that outlasts the
    invocation's time is raised as it is: never a refusal (see :func:`handler`)."""
    try:
        return aws.stack_resource(stack_id, logical_id)
    except Exception as exc:
        if aws.is_transient(exc):
            raise
        raise Refused(f"cannot read {logical_id} of the stack ({_label(exc)})") from None


def check_in_progress(stack_id: str, arm_id: str, request_type: str) -> None:
    """CloudFormation reports the arm resource ``<REQUEST>_IN_PROGRESS``: the request is the
    stack's own, now (a Create or Update sent by anyone else finds it settled). Raise
    :class:`Refused` otherwise."""
    wanted = f"{request_type.upper()}_IN_PROGRESS"
    status = ""
    for attempt in range(STATUS_READS):
        if attempt:
            aws.sleep(STATUS_READ_PAUSE)
        status = str(_stack_resource(stack_id, arm_id).get("ResourceStatus") or "")
        if status == wanted:
            return
    raise Refused(
        f"CloudFormation reports {arm_id} as {status or 'unknown'}, not {wanted}: not a request "
        "of the stack's deployment"
    )


def deployed_options() -> dict[str, Any]:
    """The options the deployment set (timeout, poll interval, topic, namespace): this
    function's environment; :class:`Refused` when it holds none."""
    try:
        options = json.loads(os.environ.get(ENV_WAIT_OPTIONS) or "")
    except ValueError:
        raise Refused("the function does not know its gate's options (environment)") from None
    if not isinstance(options, dict):
        raise Refused("the function does not know its gate's options (environment)")
    return options


def deployed_wait(stack_id: str, arm_id: str, handle_id: str) -> DeployedWait:
    """The wait that the template declares on this stack's handle ``handle_id`` (its Metadata,
    resolved by CloudFormation), for this gate; raise :class:`Refused` otherwise."""
    detail = _stack_resource(stack_id, handle_id)
    if detail.get("ResourceType") != HANDLE_TYPE:
        raise Refused(f"{handle_id} is not a wait condition handle of the stack")
    try:
        wait = parse_metadata(detail.get("Metadata"))
    except ValueError as exc:
        raise Refused(f"{handle_id} declares no wait of this gate ({exc})") from None
    if wait.gate != arm_id:
        raise Refused(f"{handle_id} belongs to another gate ({wait.gate})")
    return wait


def scope_of(
    event: Mapping[str, Any], stack_id: str, arm_id: str, new: DeployedWait
) -> tuple[UpdateScope, str]:
    """What this deployment waits for (:func:`~.contract.update_scope`), from the template's
    declarations only: the new wait's handle, and on an Update the previous wait's handle
    (still in the stack until the update's cleanup). A previous wait that declares nothing
    readable (e.g. a gate of an earlier version) counts as unknown: every gated group waits,
    and the note says so."""
    if event.get("RequestType") != "Update":
        return update_scope(None, new.requirements), ""
    old_handle = (event.get("OldResourceProperties") or {}).get(Prop.WAIT_HANDLE_LOGICAL_ID)
    try:
        if not isinstance(old_handle, str) or old_handle == new.declared.get(
            Prop.WAIT_HANDLE_LOGICAL_ID
        ):
            raise Refused("no earlier wait handle")
        old = deployed_wait(stack_id, arm_id, old_handle)
    except Refused as exc:
        everything = UpdateScope(
            new.requirements,
            tuple((r.group_name, "previous values unknown") for r in new.requirements),
        )
        return everything, f" (the previous wait is unknown: {exc})"
    same = old.declared.get(Prop.CLUSTER_NAME) == new.declared.get(Prop.CLUSTER_NAME)
    return update_scope(old.requirements, new.requirements, same_cluster=same), ""


def wait_already_exists(event: Mapping[str, Any]) -> bool:
    """Whether the wait condition named by ``WaitConditionLogicalId`` is already in the
    stack (in any state but being deleted). On a forward update it is not: CloudFormation
    creates it after this resource. On UPDATE_ROLLBACK it is: it holds the result of the
    earlier wait, or a loop is already waiting for it. A permanent error reading it counts as
    "no" (the safe choice is to wait); a transient one is retried while the invocation's time
    allows, then raised (no verdict: see :func:`handler`)."""
    props = event.get("ResourceProperties") or {}
    logical_id = props.get(Prop.WAIT_CONDITION_LOGICAL_ID)
    stack_id = event.get("StackId")
    if not (isinstance(logical_id, str) and logical_id and isinstance(stack_id, str)):
        return False
    try:
        detail = aws.stack_resource(stack_id, logical_id)
    except Exception as exc:
        if aws.is_transient(exc):
            raise
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


def _arm(
    event: Mapping[str, Any], context: Any, sent: ArmProperties, fallback: str
) -> dict[str, Any]:
    """A Create or Update that needs a new wait: verify it is the stack's own request, read
    what to wait for from the template's declaration (never from the payload), then start the
    loop for the groups this deployment gates, or signal at once when it gates none."""
    request_type = str(event.get("RequestType", ""))
    try:
        stack_id, arm_id = check_identity(event)
        new = deployed_wait(stack_id, arm_id, sent.wait_handle_logical_id)
        declared = {
            **new.declared,
            **deployed_options(),
            # IAM lets this function start executions of its own state machine only.
            Prop.STATE_MACHINE_ARN: sent.state_machine_arn,
        }
        differences = property_differences(event.get("ResourceProperties") or {}, declared)
        if differences:
            raise Refused(
                "properties differ from what the template declares: " + "; ".join(differences)
            )
        props = parse_properties(declared)
        check_in_progress(stack_id, arm_id, request_type)
        scope, note = scope_of(event, stack_id, arm_id, new)
    except Refused as exc:
        print(f"hyperpod-min-count-gate arm {request_type}: refused ({exc})")
        return response_document(
            event, success=False, physical_id=fallback, reason=f"MinCount gate not armed: {exc}"
        )
    what = f"this {request_type.lower()} {scope.text()}{note}"
    # Nothing gated: the loop still runs, with no group to wait for, and opens the wait at its
    # first check that finds the wait condition (CloudFormation creates it after this answer).
    ok, value, detail = _start(event, replace(props, requirements=scope.waits_for), scope)
    if not ok:
        print(f"hyperpod-min-count-gate arm {request_type}: start failed ({detail})")
        return response_document(event, success=False, physical_id=fallback, reason=value)
    print(f"hyperpod-min-count-gate arm {request_type}: started {value} ({detail}); {what}")
    return response_document(
        event,
        success=True,
        physical_id=value,
        reason=f"MinCount gate armed ({detail}): {what}",
        data={"ExecutionArn": value},
    )


def handler(event: Mapping[str, Any], context: Any) -> Any:
    """CloudFormation custom resource entry point (Create, Update, Delete).

    The poll loop also invokes this function, with its own state instead of a CloudFormation
    request, when the check function's signal was refused (or it could not run at all): this
    function's role then signals the decision, so the stack learns it instead of waiting for
    the wait condition's 12-hour limit."""
    if "RequestType" not in event:
        return poll.fallback_handler(event, context)
    budget = poll.Budget.of(context)
    with aws.budget(lambda seconds: budget.allows(seconds + RESPONSE_RESERVE)):
        _answer(event, context)
    return None


def _answer(event: Mapping[str, Any], context: Any) -> None:
    """Answer one CloudFormation request, or leave it unanswered when only transient faults
    happened (throttling, 5xx, timeouts) for the invocation's whole time: the error is raised,
    so Lambda runs the request again (CloudFormation invokes the function asynchronously:
    two more attempts, one and two minutes later), and the answer comes from a later attempt
    (the execution is named after the request: a repeat starts nothing twice). A transient
    fault is never a FAILED answer."""
    request_type = str(event.get("RequestType", ""))
    old_id = str(event.get("PhysicalResourceId") or "")
    try:
        if request_type == "Delete":
            detail = _stop(old_id, event)
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
                body = _arm(event, context, props, fallback)
        else:
            body = response_document(
                event,
                success=False,
                physical_id=old_id or NOT_STARTED,
                reason=f"unknown RequestType {request_type[:40]!r}",
            )
    except Exception as exc:
        if aws.is_transient(exc):
            print(
                f"hyperpod-min-count-gate arm {request_type}: unanswered, AWS failed "
                f"transiently for the whole invocation ({_label(exc)}); Lambda retries it"
            )
            raise
        print(f"hyperpod-min-count-gate arm {request_type}: internal error {type(exc).__name__}")
        body = response_document(
            event,
            success=request_type == "Delete",
            physical_id=old_id or NOT_STARTED,
            reason=f"internal error: {type(exc).__name__}: {httpput.redact(str(exc))}",
        )
    _respond(event, context, body)

"""Poll Lambda of the MinCount gate (one Step Functions iteration).

Per invocation: exactly one ``DescribeCluster``; ``ListClusterEvents`` only
when the decision is FAILED (to enrich the reason).  On a terminal decision the
wait condition handle is signalled (its presigned URL is read at that moment
with ``DescribeStackResource`` and never logged), the optional SNS topic is
notified, and the status is returned to the state machine:

``{"status": "WAITING" | "READY" | "FAILED" | "ABANDONED" | "UNSIGNALLED", "reason": str}``

Every check fits its time budget by construction: each API call is bounded
(:data:`aws.CALL_WORST_CASE`), and a call is only made when the invocation's remaining time
(from the Lambda context) covers its worst case; when time is short the check returns
WAITING without side effects, and the next check decides again.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any, Literal

from . import aws, httpput
from .decision import (
    DEFAULT_METRICS_NAMESPACE,
    SETTLE_SECONDS,
    GateDecision,
    GroupProgress,
    GroupRequirement,
    clip,
    evaluate_gate,
    summarize,
)
from .fastpath import is_fast_path

PollStatus = Literal["WAITING", "READY", "FAILED", "ABANDONED", "UNSIGNALLED", "IGNORED"]
"""IGNORED: a fast-path check that did nothing (only returned to EventBridge)."""

UNIQUE_ID = "hyperpod-min-count-gate"
SIGNAL_REASON_LIMIT = 1000
RETURN_REASON_LIMIT = 4000
SIGNAL_DATA_LIMIT = 256
SUBJECT_LIMIT = 100
LOG_LINE_LIMIT = 300
EVENTS_PAGE_SIZE = 50
_NOT_FOUND_CODES = frozenset({"ResourceNotFound", "ResourceNotFoundException"})
SAFETY_SECONDS = 5.0
"""Kept free at the end of every invocation (logging, returning the result)."""
DEFAULT_BUDGET_SECONDS = 95.0
"""The budget when the context does not report its remaining time."""
SIGNAL_WORST_CASE = aws.CALL_WORST_CASE + httpput.PUT_WORST_CASE
"""Reading the handle URL and PUTting the signal, at worst (44 s)."""
CHECK_WORST_CASE = aws.CALL_WORST_CASE + SIGNAL_WORST_CASE
"""DescribeCluster plus the signal, at worst (77 s): below the function's timeout."""


class Budget:
    """The time one invocation may still spend (virtual-clock aware through ``aws.now``)."""

    def __init__(self, seconds: float) -> None:
        self._deadline = aws.now().timestamp() + seconds - SAFETY_SECONDS

    @classmethod
    def of(cls, context: Any) -> Budget:
        """The remaining time the Lambda context reports."""
        remaining = getattr(context, "get_remaining_time_in_millis", None)
        seconds = remaining() / 1000.0 if callable(remaining) else DEFAULT_BUDGET_SECONDS
        return cls(float(seconds))

    def allows(self, seconds: float) -> bool:
        """Whether ``seconds`` more still end before the safety margin."""
        return aws.now().timestamp() + seconds <= self._deadline


@dataclass(frozen=True)
class PollRequest:
    """The execution input the state machine passes to every iteration."""

    cluster_name: str
    requirements: dict[str, GroupRequirement]
    deadline: datetime
    poll_interval_seconds: int
    stack_id: str
    wait_handle_logical_id: str
    topic_arn: str | None
    metrics_namespace: str
    armed_at: datetime | None = None


@dataclass(frozen=True)
class Outcome:
    """What one invocation concluded; ``summary`` becomes the signal's Data."""

    status: PollStatus
    reason: str
    summary: str = ""
    error: str | None = None
    decision: str | None = None
    """For UNSIGNALLED: the decision (READY or FAILED) that could not be signalled."""

    def result(self) -> dict[str, str]:
        """What the state machine receives."""
        body = {"status": self.status, "reason": self.reason}
        if self.decision is not None:
            body["decision"] = self.decision
            body["summary"] = self.summary
        return body


def _propagating(request: PollRequest, now: datetime) -> bool:
    """Whether an AccessDenied may still be IAM propagation: the check function's policy
    names the cluster, so it is created just before the gate is armed."""
    return (
        request.armed_at is not None and (now - request.armed_at).total_seconds() < SETTLE_SECONDS
    )


def _int(value: Any, name: str) -> int:
    if isinstance(value, bool):
        raise ValueError(f"{name} must be an integer")
    if isinstance(value, int):
        return value
    if isinstance(value, float) and value.is_integer():
        return int(value)
    if isinstance(value, str) and value.strip().lstrip("-").isdigit():
        return int(value.strip())
    raise ValueError(f"{name} must be an integer")


def _str(event: Mapping[str, Any], key: str) -> str:
    value = event.get(key)
    if not isinstance(value, str) or not value:
        raise ValueError(f"{key} must be a non-empty string")
    return value


def parse_event(event: Mapping[str, Any]) -> PollRequest:
    """Validate the execution input (``$.check`` from a previous loop is ignored)."""
    raw = event.get("requirements")
    if not isinstance(raw, list) or not raw:
        raise ValueError("requirements must be a non-empty list")
    requirements: dict[str, GroupRequirement] = {}
    for item in raw:
        if not isinstance(item, Mapping):
            raise ValueError("each requirement must be an object")
        name = _str(item, "groupName")
        if name in requirements:
            raise ValueError(f"group {name} is listed twice")
        requirements[name] = GroupRequirement(
            _int(item.get("minCount"), "minCount"), _int(item.get("targetCount"), "targetCount")
        )
    deadline_value = event.get("deadline")
    if isinstance(deadline_value, bool) or not isinstance(deadline_value, (int, float)):
        raise ValueError("deadline must be epoch seconds")
    topic = event.get("topicArn")
    namespace = event.get("metricsNamespace")
    armed = event.get("armedAt")
    return PollRequest(
        cluster_name=_str(event, "clusterName"),
        requirements=requirements,
        deadline=datetime.fromtimestamp(float(deadline_value), tz=UTC),
        poll_interval_seconds=_int(event.get("pollIntervalSeconds"), "pollIntervalSeconds"),
        stack_id=_str(event, "stackId"),
        wait_handle_logical_id=_str(event, "waitHandleLogicalId"),
        topic_arn=topic if isinstance(topic, str) and topic else None,
        metrics_namespace=(
            namespace if isinstance(namespace, str) and namespace else DEFAULT_METRICS_NAMESPACE
        ),
        armed_at=(
            datetime.fromtimestamp(float(armed), tz=UTC)
            if isinstance(armed, (int, float)) and not isinstance(armed, bool)
            else None
        ),
    )


def _gated(request: PollRequest) -> str:
    return ", ".join(
        f"{name} (minimum {req.min_count}, target {req.target_count})"
        for name, req in request.requirements.items()
    )


def describe_error_outcome(exc: BaseException, request: PollRequest, now: datetime) -> Outcome:
    """Map a DescribeCluster failure to an outcome (pure).

    Not found -> FAILED; access denied -> FAILED naming the permission;
    throttling/5xx/connection trouble -> WAITING (FAILED once past the deadline);
    any other API error -> FAILED with its code and message.
    """
    code = aws.error_code(exc)
    label = code or type(exc).__name__
    gated = _gated(request)
    if code in _NOT_FOUND_CODES:
        return Outcome(
            "FAILED",
            f"MinCount gate failed: cluster {request.cluster_name} not found (it was deleted "
            f"during the wait or never created); gated groups: {gated}. What to do: check "
            "who deleted the cluster (CloudTrail DeleteCluster) and redeploy.",
            error=label,
        )
    if aws.is_access_denied(exc) and _propagating(request, now):
        return Outcome(
            "WAITING",
            f"DescribeCluster was denied ({label}) while the check function's new policy may "
            f"still be propagating; polling again; gated groups: {gated}",
            error=label,
        )
    if aws.is_access_denied(exc):
        return Outcome(
            "FAILED",
            f"MinCount gate failed: the poll function may not call sagemaker:DescribeCluster "
            f"on cluster {request.cluster_name} ({label}); gated groups: {gated}. What to do: "
            "grant sagemaker:DescribeCluster and sagemaker:ListClusterEvents on the "
            "cluster ARN to the poll function's role.",
            error=label,
        )
    if aws.is_transient(exc):
        if now >= request.deadline:
            return Outcome(
                "FAILED",
                f"MinCount gate failed: deadline reached while DescribeCluster kept failing "
                f"transiently ({label}); gated groups: {gated}. What to do: check the "
                "SageMaker service health and the poll function's network path, then "
                "update the stack to wait again.",
                error=label,
            )
        return Outcome(
            "WAITING",
            f"DescribeCluster failed transiently after retries ({label}); polling again "
            f"at the next interval; gated groups: {gated}",
            error=label,
        )
    message = httpput.redact(aws.error_message(exc))
    return Outcome(
        "FAILED",
        clip(
            f"MinCount gate failed: DescribeCluster on {request.cluster_name} failed: "
            f"{label}: {message}; gated groups: {gated}",
            RETURN_REASON_LIMIT,
        ),
        error=label,
    )


def metric_lines(
    namespace: str, cluster_name: str, groups: Sequence[GroupProgress], timestamp: datetime
) -> list[str]:
    """CloudWatch Embedded Metric Format lines, one per gated group (pure).

    ``CurrentCount`` is what HyperPod reports (0 when the group is not listed);
    ``MinimumCount``/``TargetCount`` are the gate's requested values.
    """
    millis = int(timestamp.timestamp() * 1000)
    lines = []
    for group in groups:
        document = {
            "_aws": {
                "Timestamp": millis,
                "CloudWatchMetrics": [
                    {
                        "Namespace": namespace,
                        "Dimensions": [["ClusterName", "InstanceGroup"]],
                        "Metrics": [
                            {"Name": "CurrentCount", "Unit": "Count"},
                            {"Name": "MinimumCount", "Unit": "Count"},
                            {"Name": "TargetCount", "Unit": "Count"},
                        ],
                    }
                ],
            },
            "ClusterName": cluster_name,
            "InstanceGroup": group.name,
            "CurrentCount": group.current_count,
            "MinimumCount": group.min_count,
            "TargetCount": group.target_count,
        }
        lines.append(json.dumps(document, separators=(",", ":")))
    return lines


def signal_document(outcome: Outcome) -> dict[str, str]:
    """Body of the wait condition handle signal (pure)."""
    return {
        "Status": "SUCCESS" if outcome.status == "READY" else "FAILURE",
        "Reason": clip(outcome.reason, SIGNAL_REASON_LIMIT),
        "UniqueId": UNIQUE_ID,
        "Data": clip(f"{outcome.status} {outcome.summary}".strip(), SIGNAL_DATA_LIMIT),
    }


def _error_events(sagemaker: Any, request: PollRequest) -> tuple[list[Mapping[str, Any]], str]:
    try:
        response = sagemaker.list_cluster_events(
            ClusterName=request.cluster_name,
            SortBy="EventTime",
            SortOrder="Descending",
            MaxResults=EVENTS_PAGE_SIZE,
        )
    except Exception as exc:
        if aws.is_access_denied(exc):
            return [], " (Latest errors unavailable: grant sagemaker:ListClusterEvents.)"
        return [], ""
    events = response.get("Events") if isinstance(response, Mapping) else None
    return [
        e for e in events or () if isinstance(e, Mapping) and e.get("EventLevel") == "Error"
    ], ""


def _publish(request: PollRequest, outcome: Outcome, budget: Budget) -> None:
    if request.topic_arn is None:
        return
    if not budget.allows(aws.CALL_WORST_CASE):
        print("hyperpod-min-count-gate sns publish skipped: too little time left")
        return
    subject = clip(
        f"HyperPod MinCount gate {outcome.status}: {request.cluster_name}", SUBJECT_LIMIT
    )
    try:
        aws.client("sns").publish(
            TopicArn=request.topic_arn, Subject=subject, Message=outcome.reason
        )
    except Exception as exc:
        label = aws.error_code(exc) or type(exc).__name__
        print(f"hyperpod-min-count-gate sns publish failed: {label}")


def _finish(
    request: PollRequest, outcome: Outcome, budget: Budget, *, notify: bool = True
) -> Outcome:
    """Signal the wait condition handle for a READY/FAILED outcome, then notify."""
    if not budget.allows(SIGNAL_WORST_CASE):
        return Outcome(
            "WAITING",
            f"decision {outcome.status}, but too little time is left in this invocation to "
            "signal safely; deciding again at the next check",
            outcome.summary,
            "TimeBudget",
        )
    try:
        detail = aws.client("cloudformation").describe_stack_resource(
            StackName=request.stack_id, LogicalResourceId=request.wait_handle_logical_id
        )["StackResourceDetail"]
    except Exception as exc:
        code = aws.error_code(exc)
        if code is None and not aws.is_transient(exc):
            raise
        label = code or type(exc).__name__
        if code == "ValidationError" and "does not exist" in aws.error_message(exc):
            return Outcome(
                "ABANDONED",
                f"wait condition handle {request.wait_handle_logical_id} or its stack no "
                "longer exists: the gate was deleted or superseded; stopping "
                f"(decision was {outcome.status})",
                outcome.summary,
            )
        if aws.is_transient(exc):
            return Outcome(
                "WAITING",
                f"decision {outcome.status}, but reading the wait condition handle failed "
                f"transiently ({label}); retrying at the next poll",
                outcome.summary,
                label,
            )
        denied = aws.is_access_denied(exc)
        if denied and _propagating(request, aws.now()):
            return Outcome(
                "WAITING",
                f"decision {outcome.status}, but reading the wait condition handle was denied "
                f"({label}) while the new policy may still be propagating; retrying",
                outcome.summary,
                label,
            )
        missing = " (missing permission cloudformation:DescribeStackResource)" if denied else ""
        unsignalled = Outcome(
            "UNSIGNALLED",
            clip(
                f"{outcome.reason} -- the check function could not read the wait condition "
                f"handle: DescribeStackResource failed with {label}{missing}",
                RETURN_REASON_LIMIT,
            ),
            outcome.summary,
            label,
            decision="READY" if outcome.status == "READY" else "FAILED",
        )
        return unsignalled
    status = str(detail.get("ResourceStatus") or "")
    url = detail.get("PhysicalResourceId")
    if status.startswith("DELETE") or not isinstance(url, str) or not url.startswith("https://"):
        return Outcome(
            "ABANDONED",
            f"wait condition handle {request.wait_handle_logical_id} is {status or 'unknown'} "
            f"and cannot be signalled; stopping (decision was {outcome.status})",
            outcome.summary,
        )
    try:
        httpput.put_json(url, signal_document(outcome))
    except httpput.DeliveryError as exc:
        return Outcome(
            "WAITING",
            f"decision {outcome.status}, but the wait condition signal was not delivered "
            f"({exc}); retrying at the next poll",
            outcome.summary,
            "SignalDelivery",
        )
    if notify:
        _publish(request, outcome, budget)
    return outcome


def _log(outcome: Outcome, cluster: str) -> None:
    line = f"hyperpod-min-count-gate {outcome.status} cluster={cluster}"
    if outcome.summary:
        line += f" {outcome.summary}"
    if outcome.error:
        line += f" error={outcome.error}"
    print(clip(line, LOG_LINE_LIMIT), flush=True)


def _poll(request: PollRequest, budget: Budget) -> Outcome:
    now = aws.now()
    if not budget.allows(aws.CALL_WORST_CASE):
        return Outcome("WAITING", "too little time left in this invocation to check", "")
    sagemaker = aws.client("sagemaker")
    try:
        response = sagemaker.describe_cluster(ClusterName=request.cluster_name)
    except Exception as exc:
        if aws.error_code(exc) is None and not aws.is_transient(exc):
            raise
        outcome = describe_error_outcome(exc, request, now)
        return outcome if outcome.status == "WAITING" else _finish(request, outcome, budget)

    def decide(events: Sequence[Mapping[str, Any]] = ()) -> GateDecision:
        return evaluate_gate(
            response,
            request.requirements,
            events=events,
            now=now,
            deadline=request.deadline,
            armed_at=request.armed_at,
        )

    decision = decide()
    note = ""
    if decision.status == "FAILED" and budget.allows(aws.CALL_WORST_CASE + SIGNAL_WORST_CASE):
        events, note = _error_events(sagemaker, request)
        if events:
            decision = decide(events)
    cluster_name = str(response.get("ClusterName") or request.cluster_name)
    for line in metric_lines(request.metrics_namespace, cluster_name, decision.groups, now):
        print(line, flush=True)
    outcome = Outcome(
        decision.status,
        clip(decision.reason + note, RETURN_REASON_LIMIT),
        summarize(decision.groups),
    )
    if outcome.status == "WAITING":
        return outcome
    return _finish(request, outcome, budget)


def _fallback_request(event: Mapping[str, Any]) -> PollRequest | None:
    """Enough of a malformed input to still signal the handle, if possible."""
    stack_id, handle = event.get("stackId"), event.get("waitHandleLogicalId")
    if not (isinstance(stack_id, str) and stack_id and isinstance(handle, str) and handle):
        return None
    cluster = event.get("clusterName")
    return PollRequest(
        cluster_name=cluster if isinstance(cluster, str) and cluster else "?",
        requirements={},
        deadline=datetime.fromtimestamp(0, tz=UTC),
        poll_interval_seconds=60,
        stack_id=stack_id,
        wait_handle_logical_id=handle,
        topic_arn=None,
        metrics_namespace=DEFAULT_METRICS_NAMESPACE,
    )


def _fail_safely(request: PollRequest | None, reason: str, error: str, budget: Budget) -> Outcome:
    """Try to signal FAILURE; whatever happens, return an outcome (never raise)."""
    failure = Outcome("FAILED", clip(reason, RETURN_REASON_LIMIT), error=error)
    if request is None:
        return failure
    try:
        # WAITING here means the signal could not be delivered yet: the next
        # iteration tries again.  ABANDONED means there is nothing to signal.
        return _finish(request, failure, budget)
    except Exception as again:
        return Outcome(failure.status, failure.reason, error=type(again).__name__)


def _report_check_failure(
    request: PollRequest, failure: Mapping[str, Any], budget: Budget
) -> Outcome:
    """The state machine caught an error that ended a check for good (e.g. a function
    timeout): fail the wait now, with what went wrong, rather than leave it to time out."""
    error = str(failure.get("Error") or "unknown error")
    cause = httpput.redact(str(failure.get("Cause") or ""))
    reason = (
        f"MinCount gate failed: the capacity check of cluster {request.cluster_name} for "
        f"{_gated(request)} could not complete ({error}: {cause}). The gate stopped waiting "
        "so the stack does not hang; check the gate's check function logs, then redeploy."
    )
    return _fail_safely(request, reason, error, budget)


def _condition_in_progress(request: PollRequest, logical_id: object) -> bool:
    if not isinstance(logical_id, str) or not logical_id:
        return False
    try:
        detail = aws.client("cloudformation").describe_stack_resource(
            StackName=request.stack_id, LogicalResourceId=logical_id
        )["StackResourceDetail"]
    except Exception:
        return False
    return str(detail.get("ResourceStatus") or "") == "CREATE_IN_PROGRESS"


def _fast_path(event: Mapping[str, Any], budget: Budget) -> Outcome:
    """A check run by a HyperPod event (see ``fastpath.py``): SUCCESS or nothing."""
    try:
        request = parse_event({**event, "deadline": 0, "pollIntervalSeconds": 0})
    except (ValueError, TypeError):
        return Outcome("IGNORED", "invalid fast-path input")
    if not budget.allows(2 * aws.CALL_WORST_CASE):  # _finish checks the signal's own budget
        return Outcome("IGNORED", "too little time left")
    if not _condition_in_progress(request, event.get("waitConditionLogicalId")):
        return Outcome("IGNORED", "the wait condition is not waiting")
    try:
        response = aws.client("sagemaker").describe_cluster(ClusterName=request.cluster_name)
    except Exception as exc:
        return Outcome("IGNORED", "DescribeCluster failed", error=aws.error_code(exc))
    decision = evaluate_gate(response, request.requirements)
    if decision.status != "READY":
        return Outcome("IGNORED", f"not ready ({decision.status})", summarize(decision.groups))
    ready = Outcome(
        "READY",
        clip(f"{decision.reason} (seen through an EventBridge event)", RETURN_REASON_LIMIT),
        summarize(decision.groups),
    )
    return _finish(request, ready, budget, notify=False)


def handler(event: Mapping[str, Any], context: Any) -> dict[str, str]:
    """Lambda entry point: poll once and return ``{"status", "reason"}``."""
    budget = Budget.of(context)
    if not isinstance(event, Mapping):
        event = {}
    if is_fast_path(event):
        fast = _fast_path(event, budget)
        _log(fast, str(event.get("clusterName") or "?"))
        return fast.result()
    try:
        request = parse_event(event)
    except (ValueError, TypeError) as exc:
        outcome = _fail_safely(
            _fallback_request(event),
            f"MinCount gate failed: invalid gate input: {httpput.redact(str(exc))}",
            "InvalidInput",
            budget,
        )
        _log(outcome, str(event.get("clusterName") or "?"))
        return outcome.result()
    check_failure = event.get("checkFailure")
    try:
        if isinstance(check_failure, Mapping):
            outcome = _report_check_failure(request, check_failure, budget)
        else:
            outcome = _poll(request, budget)
    except Exception as exc:
        outcome = _fail_safely(
            request,
            f"internal error: {type(exc).__name__}: {httpput.redact(str(exc))}",
            type(exc).__name__,
            budget,
        )
    _log(outcome, request.cluster_name)
    return outcome.result()


def fallback_handler(event: Mapping[str, Any], context: Any) -> dict[str, str]:
    """Run in the *arm* function (another role) when the check function could not signal
    (UNSIGNALLED) or could not run at all (``checkFailure``): signal the wait condition from
    here, so CloudFormation sees the reason long before the wait condition's 12-hour limit.
    Never returns UNSIGNALLED (the loop would come back here)."""
    budget = Budget.of(context)
    request: PollRequest | None
    try:
        request = parse_event(event)
    except (ValueError, TypeError):
        request = _fallback_request(event)
    check = event.get("check")
    failure = event.get("checkFailure")
    if request is None:
        outcome = Outcome("FAILED", "MinCount gate failed: invalid gate input", error="Input")
    elif isinstance(check, Mapping) and check.get("status") == "UNSIGNALLED":
        decided = Outcome(
            "READY" if check.get("decision") == "READY" else "FAILED",
            clip(
                f"{check.get('reason') or ''} (signalled by the arm function)", RETURN_REASON_LIMIT
            ),
            str(check.get("summary") or ""),
        )
        outcome = _finish(request, decided, budget)
    elif isinstance(failure, Mapping):
        outcome = _report_check_failure(request, failure, budget)
    else:
        outcome = Outcome("FAILED", "MinCount gate failed: nothing to report", error="Input")
    if outcome.status == "UNSIGNALLED":
        outcome = Outcome("FAILED", outcome.reason, outcome.summary, outcome.error)
    _log(outcome, request.cluster_name if request is not None else "?")
    return outcome.result()

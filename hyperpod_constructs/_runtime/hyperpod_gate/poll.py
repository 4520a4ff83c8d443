"""Poll Lambda of the MinCount gate (one Step Functions iteration).

Per invocation: exactly one ``DescribeCluster``; ``ListClusterNodes`` only when
DescribeCluster says every gated group reached its minimum (to confirm that many nodes
are ``Running``: :func:`list_nodes`, going on from where earlier checks got, read with
``GetExecutionHistory``: :mod:`confirm`); ``ListClusterEvents`` only when the decision is
FAILED (to enrich the reason).  On a terminal decision the
wait condition is signalled with ``cloudformation:SignalResource`` (``cfnsignal.py``: IAM,
no presigned URL), the optional SNS topic is notified, and the status is returned to the
state machine:

``{"status": "WAITING" | "CONFIRMING" | "READY" | "FAILED" | "ABANDONED" | ..., "reason": str}``
(see :data:`PollStatus`)

Every check fits its time budget by construction: each API call is bounded
(:data:`aws.CALL_WORST_CASE`), and a call is only made when the invocation's remaining time
(from the Lambda context) covers its worst case; when time is short the check returns
WAITING without side effects, and the next check decides again.
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping, Sequence
from contextlib import AbstractContextManager
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from typing import Any, Literal

from . import aws, cfnsignal, confirm, faults, httpput, notify
from .contract import ENV_ARM_LOGICAL_ID, ENV_STACK_ID, is_execution_arn
from .decision import (
    DEFAULT_METRICS_NAMESPACE,
    RUNNING,
    SETTLE_SECONDS,
    GateDecision,
    GroupProgress,
    GroupRequirement,
    NodeTally,
    clip,
    evaluate_gate,
    summarize,
    tally_nodes,
)
from .fastpath import is_fast_path

PollStatus = Literal[
    "WAITING",
    "CONFIRMING",
    "READY",
    "OPENED",
    "FAILED",
    "ABANDONED",
    "UNSIGNALLED",
    "REFUSED",
    "IGNORED",
]
"""CONFIRMING: a WAITING whose check spent its time budget confirming Running nodes and kept
its progress (the state machine checks again at once, without the poll interval); OPENED: the
wait condition completed already (the fast path signalled it); UNSIGNALLED: the check
function's signal was refused (the arm function, another role, tries next); REFUSED: the arm
function's was refused too, while the wait condition still waits; IGNORED: a check that did
nothing (a fast-path check that found nothing to do, or an invocation that names no running
execution of this gate)."""

RETURN_REASON_LIMIT = 4000
SUBJECT_LIMIT = 100
LOG_LINE_LIMIT = 300
EVENTS_PAGE_SIZE = 50
_NOT_FOUND_CODES = frozenset({"ResourceNotFound", "ResourceNotFoundException"})
SAFETY_SECONDS = 5.0
"""Kept free at the end of every invocation (logging, returning the result)."""
DEFAULT_BUDGET_SECONDS = 95.0
"""The budget when the context does not report its remaining time."""
SIGNAL_WORST_CASE = cfnsignal.SIGNAL_WORST_CASE
"""The signal (SignalResource) and, for a refusal, reading the wait condition (44 s)."""
CHECK_WORST_CASE = 3 * aws.CALL_WORST_CASE + SIGNAL_WORST_CASE
"""Reading the execution's input and the wait condition, DescribeCluster and the signal, at
worst (143 s): below the function's timeout."""
RUNNING_COUNT_METRIC = "RunningCount"
"""The EMF metric of the nodes the Running confirmation counted ``Running`` in a group."""
NODE_PAGE_SIZE = 100
"""``MaxResults`` of each ``ListClusterNodes`` page: the largest the API allows (1..100)."""
MAX_GROUP_SIZE = 6758
"""The largest instance group (``InstanceCount`` 0..6758): 68 pages of its own nodes."""
MAX_NODE_PAGES = 4 * -(-MAX_GROUP_SIZE // NODE_PAGE_SIZE)
"""Pages one check reads at most (272): four times the largest group's 68, for groups whose
names contain a gated group's name, and a stop for a ``NextToken`` that never ends. The time
budget bounds the pages first: a page is only requested while its worst case and the signal's
still fit."""
NODE_BUDGET_FAULT = "budget"
"""The fault kind of a confirmation cut short by the time budget or the page cap."""
NODE_OTHER_FAULT = "error"
"""The fault kind of an exception that is not an AWS API error (a parser's, a bug's)."""


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

    def retrying(self) -> AbstractContextManager[None]:
        """Within this block every AWS call (:func:`aws.call`) retries a transient fault while
        this budget still holds the retry and, after it, the signal's worst case."""
        return aws.budget(lambda seconds: self.allows(seconds + SIGNAL_WORST_CASE))


@dataclass(frozen=True)
class PollRequest:
    """The execution input the state machine passes to every iteration."""

    cluster_name: str
    requirements: dict[str, GroupRequirement]
    deadline: datetime
    poll_interval_seconds: int
    stack_id: str
    wait_condition_logical_id: str
    topic_arn: str | None
    metrics_namespace: str
    armed_at: datetime | None = None
    execution_arn: str | None = None
    """The running execution this request was read from (where the confirmation's progress
    is kept); ``None`` for a request not read from one."""
    operation: str | None = None
    """The deployment this wait ends: "create" or "update" (``None``: not recorded)."""
    scope: tuple[notify.ScopeEntry, ...] = ()
    """Each group of the template: whether this deployment waits for it, and why."""


@dataclass(frozen=True)
class Outcome:
    """What one invocation concluded; ``summary`` becomes the signal's Data."""

    status: PollStatus
    reason: str
    summary: str = ""
    error: str | None = None
    decision: str | None = None
    """For UNSIGNALLED: the decision (READY or FAILED) that could not be signalled."""
    progress: confirm.Progress | None = None
    """How far the Running confirmation got (:mod:`confirm`), kept for the next check."""
    groups: tuple[GroupProgress, ...] = ()
    """The gated groups as the deciding check saw them (for the notification)."""

    def result(self) -> dict[str, Any]:
        """What the state machine receives."""
        body: dict[str, Any] = {"status": self.status, "reason": self.reason}
        if self.decision is not None:
            body["decision"] = self.decision
            body["summary"] = self.summary
        if self.progress and confirm.fits(self.progress):  # else the next check starts over
            body[confirm.PROGRESS_KEY] = confirm.encode(self.progress)
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
    if not isinstance(raw, list):  # empty: an update that gates no group (opens at once)
        raise ValueError("requirements must be a list")
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
    operation = event.get("operation")
    return PollRequest(
        operation=operation if operation in ("create", "update") else None,
        scope=notify.parse_scope(event.get("scope")),
        cluster_name=_str(event, "clusterName"),
        requirements=requirements,
        deadline=datetime.fromtimestamp(float(deadline_value), tz=UTC),
        poll_interval_seconds=_int(event.get("pollIntervalSeconds"), "pollIntervalSeconds"),
        stack_id=_str(event, "stackId"),
        wait_condition_logical_id=_str(event, "waitConditionLogicalId"),
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
    ``MinimumCount``/``TargetCount`` are the gate's requested values; ``RunningCount``
    (:data:`RUNNING_COUNT_METRIC`) the nodes ListClusterNodes confirmed ``Running``, only in a
    check that listed them (DescribeCluster counted every gated group's minimum).
    """
    millis = int(timestamp.timestamp() * 1000)
    lines = []
    for group in groups:
        metrics = [
            {"Name": "CurrentCount", "Unit": "Count"},
            {"Name": "MinimumCount", "Unit": "Count"},
            {"Name": "TargetCount", "Unit": "Count"},
        ]
        values: dict[str, int] = {
            "CurrentCount": group.current_count,
            "MinimumCount": group.min_count,
            "TargetCount": group.target_count,
        }
        if group.nodes is not None:
            metrics.append({"Name": RUNNING_COUNT_METRIC, "Unit": "Count"})
            values[RUNNING_COUNT_METRIC] = group.nodes.running
        document = {
            "_aws": {
                "Timestamp": millis,
                "CloudWatchMetrics": [
                    {
                        "Namespace": namespace,
                        "Dimensions": [["ClusterName", "InstanceGroup"]],
                        "Metrics": metrics,
                    }
                ],
            },
            "ClusterName": cluster_name,
            "InstanceGroup": group.name,
            **values,
        }
        lines.append(json.dumps(document, separators=(",", ":")))
    return lines


def _error_events(sagemaker: Any, request: PollRequest) -> tuple[list[Mapping[str, Any]], str]:
    try:
        response = aws.call(
            sagemaker,
            "list_cluster_events",
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


@dataclass(frozen=True)
class NodeCheck:
    """What listing the gated groups' nodes (:func:`list_nodes`) gave."""

    tallies: dict[str, NodeTally]
    """Each gated group with a minimum -> its nodes (complete, or stopped once enough are
    Running), when every group was read."""
    fault: str | None = None
    """``None`` when every group was read; else the fault kind (:func:`faults.api_fault`,
    :data:`NODE_BUDGET_FAULT` or :data:`NODE_OTHER_FAULT`)."""
    label: str = ""
    """The error code (or exception type, or what ran out) when ``fault`` is set."""
    pages: int = 0
    """How many pages this check read."""
    progress: confirm.Progress = field(default_factory=dict)
    """How far the confirmation got (:mod:`confirm`), for the next check."""
    out_of_time: bool = False
    """Whether the time budget (and nothing else) cut the confirmation short."""


def _node_pages(
    sagemaker: Any,
    request: PollRequest,
    name: str,
    minimum: int,
    budget: Budget,
    pages: int,
    start: confirm.GroupPages | None,
) -> tuple[NodeTally, int, confirm.GroupPages | None, tuple[str, str] | None]:
    """Page through ``name``'s nodes, from where ``start`` (an earlier check) left off, until
    its minimum is Running or the last page; the tally, the pages this check read so far (all
    groups), the group's progress to keep (``None``: start it over next time), and the fault
    kind and label if cut short."""
    carried = dict(start.counts) if start is not None else {}
    tally = NodeTally(name, carried=carried)
    token = start.token if start is not None else None
    group_pages = start.pages if start is not None else 0
    seen = set[str]()

    def kept() -> confirm.GroupPages | None:
        if token is None:
            return None
        return confirm.GroupPages(tally.counts(), group_pages, token)

    while True:
        if group_pages >= MAX_NODE_PAGES:  # a NextToken that never ends: start over
            return tally, pages, None, (NODE_BUDGET_FAULT, f"{group_pages} page(s) of {name}")
        if pages >= MAX_NODE_PAGES or not budget.allows(aws.CALL_WORST_CASE + SIGNAL_WORST_CASE):
            return tally, pages, kept(), (NODE_BUDGET_FAULT, f"{pages} page(s) read")
        params: dict[str, Any] = {
            "ClusterName": request.cluster_name,
            "InstanceGroupNameContains": name,
            "MaxResults": NODE_PAGE_SIZE,
        }
        if token is not None:
            params["NextToken"] = token
        try:
            response = aws.call(sagemaker, "list_cluster_nodes", **params)
        except Exception as exc:
            code = aws.error_code(exc)
            if code is None and not aws.is_transient(exc):
                return tally, pages, kept(), (NODE_OTHER_FAULT, type(exc).__name__)
            if code == "ValidationException" and start is not None and token == start.token:
                # A token an earlier check kept may have expired: list the group again.
                return tally, pages, None, (NODE_BUDGET_FAULT, f"a stale NextToken of {name}")
            return tally, pages, kept(), (aws.fault_kind(exc), code or type(exc).__name__)
        pages += 1
        group_pages += 1
        found = response.get("NextToken") if isinstance(response, Mapping) else None
        token = (
            found if isinstance(found, str) and 0 < len(found) <= confirm.MAX_TOKEN_CHARS else None
        )
        summaries = response.get("ClusterNodeSummaries") if isinstance(response, Mapping) else ()
        tally = tally_nodes(
            summaries if isinstance(summaries, list) else (),
            name,
            previous=tally,
            complete=token is None,
        )
        if tally.running >= minimum:
            return tally, pages, confirm.GroupPages(tally.counts(), group_pages), None
        if token is None:
            return tally, pages, None, None
        if token in seen:
            return tally, pages, None, (NODE_BUDGET_FAULT, "a repeated NextToken")
        seen.add(token)


def list_nodes(
    sagemaker: Any,
    request: PollRequest,
    budget: Budget,
    carried: confirm.Progress | None = None,
) -> NodeCheck:
    """List the nodes of every gated group with a minimum (``ListClusterNodes``, filtered by
    ``InstanceGroupNameContains``, ``MaxResults`` 100, paged by ``NextToken``) and count them
    by status; a group's paging stops once its minimum is Running. ``carried`` is how far
    earlier checks got (:mod:`confirm`): confirmed groups are not listed again, a group in
    progress goes on from its token. Never raises for an API or parsing error: the fault comes
    back in :attr:`NodeCheck.fault`, with the progress to keep."""
    if not callable(getattr(sagemaker, "list_cluster_nodes", None)):
        return NodeCheck({}, NODE_OTHER_FAULT, "this boto3 has no ListClusterNodes")
    carried = carried or {}
    tallies: dict[str, NodeTally] = {}
    progress: dict[str, confirm.GroupPages] = {}
    pages = 0
    for name, requirement in request.requirements.items():
        if requirement.min_count == 0:
            continue  # nothing to confirm
        start = carried.get(name)
        if start is not None and start.confirmed and _running(start) >= requirement.min_count:
            tallies[name] = NodeTally(name, carried=dict(start.counts))
            progress[name] = start
            continue
        tally, pages, kept, fault = _node_pages(
            sagemaker, request, name, requirement.min_count, budget, pages, start
        )
        if kept is not None:
            progress[name] = kept
        if fault is not None:
            timed_out = fault[0] == NODE_BUDGET_FAULT and kept is not None
            return NodeCheck(tallies, fault[0], fault[1], pages, progress, timed_out)
        tallies[name] = tally
    return NodeCheck(tallies, None, "", pages, progress)


def _running(group: confirm.GroupPages) -> int:
    return group.counts.get(RUNNING, 0)


def _progress_text(progress: confirm.Progress, request: PollRequest) -> str:
    """E.g. ``; 1 of 2 group(s) confirmed; gpu2: 1200 Running of 1300 listed so far``."""
    gated = [n for n, r in request.requirements.items() if r.min_count > 0]
    done = sum(1 for n in gated if n in progress and progress[n].confirmed)
    text = f"; {done} of {len(gated)} group(s) confirmed"
    for name, group in progress.items():
        if not group.confirmed:
            listed = sum(group.counts.values())
            text += f"; {name}: {_running(group)} Running of {listed} listed so far"
    return text


def unconfirmed(check: NodeCheck, request: PollRequest, now: datetime) -> tuple[bool, str]:
    """What to do when DescribeCluster says READY but the nodes could not be read (pure):
    ``(True, reason)`` to wait and confirm at the next check, ``(False, note)`` to decide on
    DescribeCluster's counts alone, with ``note`` saying why (appended to the READY reason).

    Transient faults and a check out of time wait, until the deadline; AccessDenied waits
    during the settle window (IAM propagation); a cluster not found waits (the next
    DescribeCluster decides). Anything else, and anything past the deadline, decides on
    DescribeCluster's counts: the confirmation never turns a ready cluster into a failure."""
    label = check.label
    past_deadline = now >= request.deadline
    if check.fault in faults.TRANSIENT_API_FAULTS or check.fault == NODE_BUDGET_FAULT:
        why = (
            f"ListClusterNodes failed transiently ({label})"
            if check.fault != NODE_BUDGET_FAULT
            else f"this check ran out of time confirming them ({label})"
            f"{_progress_text(check.progress, request)}"
        )
        if not past_deadline:
            return True, (
                f"DescribeCluster counts every gated group's minimum, but {why}; confirming "
                "the Running nodes at the next poll"
            )
        return False, f" (not confirmed with ListClusterNodes: {why} at the deadline)"
    if check.fault == "denied":
        if _propagating(request, now) and not past_deadline:
            return True, (
                f"DescribeCluster counts every gated group's minimum; ListClusterNodes was "
                f"denied ({label}) while the new policy may still be propagating; confirming "
                "at the next poll"
            )
        return False, (
            f" (not confirmed with ListClusterNodes: denied ({label}); grant "
            "sagemaker:ListClusterNodes on the cluster ARN to the gate functions' roles)"
        )
    if check.fault == "not-found" and not past_deadline:
        return True, (
            f"ListClusterNodes found no cluster {request.cluster_name} ({label}); the next "
            "DescribeCluster decides"
        )
    return False, f" (not confirmed with ListClusterNodes: {label})"


def _publish(request: PollRequest, outcome: Outcome, budget: Budget) -> None:
    if request.topic_arn is None:
        return
    if not budget.allows(aws.CALL_WORST_CASE):
        print("hyperpod-min-count-gate sns publish skipped: too little time left")
        return
    subject = clip(
        f"HyperPod MinCount gate {outcome.status}: {request.cluster_name}", SUBJECT_LIMIT
    )
    document = notify.body(
        status=outcome.status,
        decision=outcome.decision or outcome.status,
        cluster_name=request.cluster_name,
        stack_id=request.stack_id,
        reason=outcome.reason,
        groups=outcome.groups,
        time=aws.now(),
        operation=request.operation,
        scope=request.scope,
    )
    try:
        aws.call(
            aws.client("sns"),
            "publish",
            TopicArn=request.topic_arn,
            Subject=subject,
            Message=json.dumps(document, separators=(",", ":")),
            MessageAttributes=notify.attributes(document),
        )
    except Exception as exc:
        label = aws.error_code(exc) or type(exc).__name__
        print(f"hyperpod-min-count-gate sns publish failed: {label}")


def refused_reason(request: PollRequest, outcome: Outcome, delivery: cfnsignal.Delivery) -> str:
    """Why the loop stops with a decision CloudFormation did not take (pure): the decision,
    the refusal, and how to deliver it by hand before the wait condition's own timeout."""
    success = outcome.status == "READY"
    return clip(
        f"MinCount gate could not deliver its decision {outcome.status}: "
        f"cloudformation:SignalResource on wait condition {request.wait_condition_logical_id} "
        f"was refused ({delivery.label}: {httpput.redact(delivery.message)[:300]}) to the check "
        "function and to the arm function while the wait condition still waits. The loop "
        "stops. What to do: restore cloudformation:SignalResource on this stack to the gate "
        "functions' roles (statement SignalWaitConditionOfThisStack), or deliver the decision "
        "yourself before the wait condition's own timeout: "
        f"{cfnsignal.manual_command(request.stack_id, request.wait_condition_logical_id, success)}"
        f". Decision: {outcome.reason}",
        RETURN_REASON_LIMIT,
    )


def _finish(
    request: PollRequest,
    outcome: Outcome,
    budget: Budget,
    *,
    notify: bool = True,
    by_arm: bool = False,
) -> Outcome:
    """Signal the wait condition for a READY/FAILED outcome, then notify. A refusal from the
    check function hands the decision to the arm function (UNSIGNALLED); from the arm
    function it ends the loop (REFUSED), and the topic is told."""
    if not budget.allows(SIGNAL_WORST_CASE):
        return Outcome(
            "WAITING",
            f"decision {outcome.status}, but too little time is left in this invocation to "
            "signal safely; deciding again at the next check",
            outcome.summary,
            "TimeBudget",
        )
    delivery = cfnsignal.send(
        request.stack_id,
        request.wait_condition_logical_id,
        success=outcome.status == "READY",
        reason=outcome.reason,
        propagating=_propagating(request, aws.now()),
        allows=budget.allows,
    )
    decided = "READY" if outcome.status == "READY" else "FAILED"
    if delivery.kind == "ended":
        return Outcome(
            "ABANDONED",
            f"wait condition {request.wait_condition_logical_id} no longer waits (failed, "
            "deleted, or its stack is gone: the gate was deleted or superseded); stopping "
            f"(decision was {outcome.status}; {delivery.label})",
            outcome.summary,
        )
    if delivery.kind == "opened":
        opened = Outcome(
            "OPENED",
            f"the gate of cluster {request.cluster_name} opened already (the wait condition "
            f"was signalled SUCCESS); the loop stops (decision was {outcome.status})",
            outcome.summary,
            groups=outcome.groups,
        )
        if notify:
            _publish(request, Outcome("READY", opened.reason, groups=outcome.groups), budget)
        return opened
    if delivery.kind == "waiting":
        return Outcome(
            "WAITING",
            f"decision {outcome.status}, but the wait condition signal was not delivered "
            f"({delivery.label}); signalling again at the next poll",
            outcome.summary,
            delivery.label or "SignalDelivery",
        )
    if delivery.kind == "refused":
        reason = refused_reason(request, outcome, delivery)
        if not by_arm:
            return Outcome(
                "UNSIGNALLED",
                reason,
                outcome.summary,
                delivery.label,
                decision=decided,
                groups=outcome.groups,
            )
        refused = Outcome(
            "REFUSED",
            reason,
            outcome.summary,
            "SignalRefused",
            decision=decided,
            groups=outcome.groups,
        )
        _publish(request, refused, budget)
        return refused
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


ARM_NOTE = " (checked by the arm function: the check function could not)"


def _poll(request: PollRequest, budget: Budget, *, by_arm: bool = False) -> Outcome:
    now = aws.now()
    if not budget.allows(aws.CALL_WORST_CASE):
        return Outcome("WAITING", "too little time left in this invocation to check", "")
    sagemaker = aws.client("sagemaker")
    try:
        response = aws.call(sagemaker, "describe_cluster", ClusterName=request.cluster_name)
    except Exception as exc:
        if aws.error_code(exc) is None and not aws.is_transient(exc):
            raise
        outcome = describe_error_outcome(exc, request, now)
        return outcome if outcome.status == "WAITING" else _finish(request, outcome, budget)

    nodes: dict[str, NodeTally] | None = None

    def decide(events: Sequence[Mapping[str, Any]] = ()) -> GateDecision:
        return evaluate_gate(
            response,
            request.requirements,
            events=events,
            now=now,
            deadline=request.deadline,
            armed_at=request.armed_at,
            nodes=nodes,
        )

    decision = decide()
    note = ""
    unconfirmed_wait: NodeCheck | None = None
    progress: confirm.Progress | None = None
    if decision.status == "READY":  # DescribeCluster counts the minimum: are they Running?
        check = list_nodes(sagemaker, request, budget, carried_progress(request, budget))
        progress = check.progress
        if check.fault is None:
            nodes = check.tallies
            decision = decide()
        else:
            wait, note = unconfirmed(check, request, now)
            unconfirmed_wait = check if wait else None
    if decision.status == "FAILED" and budget.allows(aws.CALL_WORST_CASE + SIGNAL_WORST_CASE):
        events, note = _error_events(sagemaker, request)
        if events:
            decision = decide(events)
    cluster_name = str(response.get("ClusterName") or request.cluster_name)
    for line in metric_lines(request.metrics_namespace, cluster_name, decision.groups, now):
        print(line, flush=True)
    arm_note = ARM_NOTE if by_arm else ""
    if unconfirmed_wait is not None:  # the nodes could not be read: confirm at the next check
        spent = (aws.now() - now).total_seconds()
        confirming = unconfirmed_wait.out_of_time and spent >= confirm.CONFIRM_MIN_SECONDS
        return Outcome(
            "CONFIRMING" if confirming else "WAITING",
            clip(f"{note}; {decision.reason}{arm_note}", RETURN_REASON_LIMIT),
            summarize(decision.groups),
            unconfirmed_wait.label,
            progress=progress,
        )
    outcome = Outcome(
        decision.status,
        clip(decision.reason + note + arm_note, RETURN_REASON_LIMIT),
        summarize(decision.groups),
        progress=progress if decision.status == "WAITING" else None,
        groups=decision.groups,
    )
    if outcome.status == "WAITING":
        return outcome
    return _finish(request, outcome, budget, by_arm=by_arm)


def _condition_status(request: PollRequest) -> str:
    """The wait condition's status: ``IN_PROGRESS`` (or not created yet, or unreadable: the
    signal decides then), ``COMPLETE``, ``ENDED`` (failed or being deleted) or ``UNKNOWN``
    (a transient failure reading it)."""
    state = cfnsignal.condition_state(request.stack_id, request.wait_condition_logical_id)
    if state in ("COMPLETE", "UNKNOWN"):
        return state
    if state in ("FAILED", "DELETED"):
        return "ENDED"
    return "IN_PROGRESS"  # waiting, not created yet (it follows the arm resource), or denied


def check(request: PollRequest, budget: Budget, *, by_arm: bool = False) -> Outcome:
    """One check of the loop (run by the check function, or by the arm function when the
    check function could not): stop if the gate already opened or ended, else poll once.

    One opening: once the wait condition completed (the fast path signalled it), the loop stops
    here with OPENED and sends the READY notification (the only one: the fast path sends none),
    and nothing after it can signal or notify FAILURE."""
    if not budget.allows(aws.CALL_WORST_CASE):
        return Outcome("WAITING", "too little time left in this invocation to check", "")
    condition = _condition_status(request)
    if condition == "UNKNOWN":
        return Outcome(
            "WAITING", "reading the wait condition failed transiently; polling again", ""
        )
    if condition == "ENDED":
        return Outcome("ABANDONED", "the wait condition already ended; stopping")
    if condition == "COMPLETE":
        opened = Outcome(
            "OPENED",
            f"the gate of cluster {request.cluster_name} opened already (the wait condition "
            "was signalled SUCCESS, e.g. by the EventBridge fast path); the loop stops",
        )
        _publish(request, Outcome("READY", opened.reason), budget)
        return opened
    try:
        return _poll(request, budget, by_arm=by_arm)
    except Exception as exc:
        reason = f"internal error: {type(exc).__name__}: {httpput.redact(str(exc))}"
        if not by_arm:  # a fault of this function: the arm function checks instead
            return Outcome("IGNORED", clip(reason, RETURN_REASON_LIMIT), error=type(exc).__name__)
        failure = Outcome("FAILED", clip(reason, RETURN_REASON_LIMIT), error=type(exc).__name__)
        try:
            return _finish(request, failure, budget, by_arm=True)
        except Exception as again:
            return Outcome("UNSIGNALLED", failure.reason, error=type(again).__name__)


def trusted_request(execution_arn: object) -> tuple[PollRequest | None, Outcome | None]:
    """The gate's request from the input of the running execution ``execution_arn``, written
    by the arm function (only the stack's deployment can start it). A payload's own fields are
    never read: an invocation that names no running execution of this stack does nothing.

    Returns ``(request, None)``, or ``(None, outcome)``: WAITING on a transient failure to
    read the execution, IGNORED otherwise."""
    if not is_execution_arn(execution_arn):
        return None, Outcome("IGNORED", "the invocation names no execution")
    try:
        found = aws.call(
            aws.client("stepfunctions"), "describe_execution", executionArn=execution_arn
        )
    except Exception as exc:
        label = aws.error_code(exc) or type(exc).__name__
        if aws.is_transient(exc):
            return None, Outcome(
                "WAITING", f"reading the execution failed transiently ({label})", error=label
            )
        return None, Outcome("IGNORED", f"cannot read the execution ({label})", error=label)
    if found.get("status") != "RUNNING":
        return None, Outcome("IGNORED", "the execution is not running")
    try:
        document = json.loads(str(found.get("input") or ""))
        request = parse_event(document if isinstance(document, Mapping) else {})
    except (ValueError, TypeError) as exc:
        return None, Outcome("IGNORED", f"invalid execution input: {httpput.redact(str(exc))}")
    if request.stack_id != os.environ.get(ENV_STACK_ID):
        return None, Outcome("IGNORED", "the execution belongs to another stack")
    return replace(request, execution_arn=str(execution_arn)), None


def carried_progress(request: PollRequest, budget: Budget) -> confirm.Progress:
    """How far earlier checks got confirming the Running nodes: read from the state this
    execution entered its current Task with (``GetExecutionHistory``, newest events first),
    which only Step Functions writes, never from the payload. Empty (the confirmation starts
    over) when the request names no execution, when the time for the call (and the signal)
    is short, or when the history cannot be read."""
    if request.execution_arn is None or not budget.allows(aws.CALL_WORST_CASE + SIGNAL_WORST_CASE):
        return {}
    try:
        history = aws.call(
            aws.client("stepfunctions"),
            "get_execution_history",
            executionArn=request.execution_arn,
            reverseOrder=True,
            maxResults=confirm.HISTORY_LOOKBACK,
            includeExecutionData=True,
        )
    except Exception as exc:
        label = aws.error_code(exc) or type(exc).__name__
        print(f"hyperpod-min-count-gate progress unavailable: {label}", flush=True)
        return {}
    events = history.get("events") if isinstance(history, Mapping) else None
    document = confirm.from_history(events if isinstance(events, list) else ())
    return confirm.decode(document, request.requirements)


def _fast_path(budget: Budget) -> Outcome:
    """A check run by a HyperPod event (see ``fastpath.py``): SUCCESS or nothing. The gate's
    requirements come from the running execution the arm resource names."""
    stack_id, arm_id = os.environ.get(ENV_STACK_ID), os.environ.get(ENV_ARM_LOGICAL_ID)
    if not (stack_id and arm_id):
        return Outcome("IGNORED", "the function does not know its gate")
    # Every call is bounded; each is made only while the invocation has time for it (_finish
    # checks the signal's own budget).
    if not budget.allows(aws.CALL_WORST_CASE):
        return Outcome("IGNORED", "too little time left")
    try:
        arm = aws.stack_resource(stack_id, arm_id)
    except Exception as exc:
        return Outcome("IGNORED", "reading the arm resource failed", error=aws.error_code(exc))
    if not budget.allows(aws.CALL_WORST_CASE):
        return Outcome("IGNORED", "too little time left")
    request, ignored = trusted_request(arm.get("PhysicalResourceId"))
    if request is None:
        assert ignored is not None
        return Outcome("IGNORED", ignored.reason, error=ignored.error)
    if not budget.allows(aws.CALL_WORST_CASE):
        return Outcome("IGNORED", "too little time left")
    if _condition_status(request) != "IN_PROGRESS":
        return Outcome("IGNORED", "the wait condition is not waiting")
    if not budget.allows(aws.CALL_WORST_CASE):
        return Outcome("IGNORED", "too little time left")
    sagemaker = aws.client("sagemaker")
    try:
        response = aws.call(sagemaker, "describe_cluster", ClusterName=request.cluster_name)
    except Exception as exc:
        return Outcome("IGNORED", "DescribeCluster failed", error=aws.error_code(exc))
    decision = evaluate_gate(response, request.requirements)
    if decision.status == "READY":  # only a confirmed READY: the loop decides the rest
        check = list_nodes(sagemaker, request, budget)
        if check.fault is not None:
            return Outcome("IGNORED", "the Running nodes could not be confirmed", error=check.label)
        decision = evaluate_gate(response, request.requirements, nodes=check.tallies)
    if decision.status != "READY":
        return Outcome("IGNORED", f"not ready ({decision.status})", summarize(decision.groups))
    ready = Outcome(
        "READY",
        clip(f"{decision.reason} (seen through an EventBridge event)", RETURN_REASON_LIMIT),
        summarize(decision.groups),
    )
    signalled = _finish(request, ready, budget, notify=False)
    if signalled.status == "UNSIGNALLED":  # the loop reports it (and notifies) at its next check
        return Outcome("IGNORED", signalled.reason, signalled.summary, signalled.error)
    return signalled


def checked(request: PollRequest, budget: Budget, *, by_arm: bool = False) -> Outcome:
    """:func:`check`, logged."""
    with budget.retrying():
        outcome = check(request, budget, by_arm=by_arm)
    _log(outcome, request.cluster_name)
    return outcome


def _run(event: Mapping[str, Any], context: Any, *, by_arm: bool) -> dict[str, Any]:
    budget = Budget.of(context)
    with budget.retrying():
        request, refused = trusted_request(event.get("executionArn"))
    if request is None:
        assert refused is not None
        _log(refused, "?")
        return refused.result()
    return checked(request, budget, by_arm=by_arm).result()


def handler(event: Mapping[str, Any], context: Any) -> dict[str, Any]:
    """Lambda entry point of the check function: one check of the loop (the payload names its
    execution, ``{"executionArn": ...}``), or a fast-path check (``{"fastPath": true}``).
    Returns ``{"status", "reason"}``."""
    if not isinstance(event, Mapping):
        event = {}
    if is_fast_path(event):
        budget = Budget.of(context)
        with budget.retrying():
            fast = _fast_path(budget)
        _log(fast, "?")
        return fast.result()
    return _run(event, context, by_arm=False)


def fallback_handler(event: Mapping[str, Any], context: Any) -> dict[str, Any]:
    """Run in the *arm* function (another role) when the check function could not run or
    its signal was refused: the same check, from here."""
    return _run(event, context, by_arm=True)

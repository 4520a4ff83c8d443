"""A small, honest Amazon States Language interpreter for the gate's subset.

Supported: top-level ``StartAt``/``States``/``TimeoutSeconds``/``Comment``;
``Task`` with a direct Lambda ARN ``Resource`` (mapped to a Python callable),
``ResultPath``, ``TimeoutSeconds``, ``Retry`` and ``Catch`` (``ErrorEquals``,
``ResultPath``, ``Next``); ``Choice`` with
``Variable`` + ``StringEquals`` rules and ``Default``; ``Wait`` with
``Seconds``/``SecondsPath``; ``Succeed``; ``Fail`` with ``Error``/``Cause``/
``CausePath``.  Any other field or state type raises :class:`AslUnsupported`
when the execution is created, so a definition can never silently rely on
something this interpreter ignores.

Time is virtual: Wait states and retry intervals are scheduled on a
:class:`tests.support.clock.Scheduler`; a Task takes as long as its callable
advanced the clock (e.g. botocore retry back-off); the execution's
``TimeoutSeconds`` is enforced.  Every state entered and every retry counts as
a state transition (the Step Functions Standard billing unit).
"""

from __future__ import annotations

import copy
import json
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from .clock import Scheduler

PAYLOAD_LIMIT = 262_144
_LAMBDA_ARN = re.compile(r"^arn:aws[a-z-]*:lambda:[a-z0-9-]+:\d{12}:function:[A-Za-z0-9_-]+$")
_PATH = re.compile(r"^\$(\.[A-Za-z_][A-Za-z0-9_]*)*$")

_COMMON = {"Type", "Comment"}
_ALLOWED: dict[str, set[str]] = {
    "Task": _COMMON | {"Resource", "ResultPath", "TimeoutSeconds", "Retry", "Catch", "Next", "End"},
    "Choice": _COMMON | {"Choices", "Default"},
    "Wait": _COMMON | {"Seconds", "SecondsPath", "Next", "End"},
    "Succeed": _COMMON,
    "Fail": _COMMON | {"Error", "Cause", "CausePath"},
}
_TOP = {"StartAt", "States", "TimeoutSeconds", "Comment"}
_RETRY = {"ErrorEquals", "IntervalSeconds", "MaxAttempts", "BackoffRate"}
_CHOICE_RULE = {"Variable", "StringEquals", "Next"}
_CATCH = {"ErrorEquals", "ResultPath", "Next"}


class AslUnsupported(Exception):
    """The definition uses something this interpreter does not implement."""


class TaskFailure(Exception):
    """Raised by a task callable to fail with a Step Functions error name."""

    def __init__(self, error: str, cause: str = "") -> None:
        super().__init__(f"{error}: {cause}")
        self.error = error
        self.cause = cause


class _ExecutionFailed(Exception):
    def __init__(self, error: str, cause: str) -> None:
        super().__init__(error)
        self.error = error
        self.cause = cause


def _path_get(document: Any, path: str) -> Any:
    if not _PATH.match(path):
        raise AslUnsupported(f"unsupported path {path!r}")
    value = document
    for part in path.split(".")[1:]:
        if not isinstance(value, Mapping) or part not in value:
            raise _ExecutionFailed("States.Runtime", f"path {path} not found in the state input")
        value = value[part]
    return value


def _path_set(document: Any, path: str, value: Any) -> Any:
    if path == "$":
        return value
    if not _PATH.match(path):
        raise AslUnsupported(f"unsupported ResultPath {path!r}")
    if not isinstance(document, dict):
        raise _ExecutionFailed("States.Runtime", "ResultPath target is not an object")
    result = copy.deepcopy(document)
    target = result
    parts = path.split(".")[1:]
    for part in parts[:-1]:
        target = target.setdefault(part, {})
        if not isinstance(target, dict):
            raise _ExecutionFailed("States.Runtime", f"cannot set {path}")
    target[parts[-1]] = value
    return result


def _json_roundtrip(value: Any, what: str) -> Any:
    text = json.dumps(value)
    if len(text.encode()) > PAYLOAD_LIMIT:
        raise _ExecutionFailed("States.DataLimitExceeded", f"{what} exceeds 256 KiB")
    return json.loads(text)


def validate(definition: Mapping[str, Any], resources: Mapping[str, Any]) -> None:
    """Raise :class:`AslUnsupported` unless every field is in the supported subset."""
    extra = set(definition) - _TOP
    if extra:
        raise AslUnsupported(f"unsupported top-level field(s) {sorted(extra)}")
    states = definition.get("States")
    if not isinstance(states, Mapping) or definition.get("StartAt") not in states:
        raise AslUnsupported("StartAt must name a state")
    timeout = definition.get("TimeoutSeconds")
    if timeout is not None and (not isinstance(timeout, int) or timeout < 1):
        raise AslUnsupported("TimeoutSeconds must be a positive integer")
    for name, state in states.items():
        kind = state.get("Type")
        if kind not in _ALLOWED:
            raise AslUnsupported(f"state {name}: type {kind!r} not supported")
        extra = set(state) - _ALLOWED[kind]
        if extra:
            raise AslUnsupported(f"state {name}: unsupported field(s) {sorted(extra)}")
        if kind in ("Task", "Wait") and ("Next" in state) == bool(state.get("End")):
            raise AslUnsupported(f"state {name}: needs exactly one of Next / End")
        for key in ("Next", "Default"):
            if key in state and state[key] not in states:
                raise AslUnsupported(f"state {name}: {key} {state[key]!r} is not a state")
        if kind == "Task":
            resource = state.get("Resource")
            if not isinstance(resource, str) or not _LAMBDA_ARN.match(resource):
                raise AslUnsupported(f"state {name}: only direct Lambda ARNs are supported")
            if resource not in resources:
                raise AslUnsupported(f"state {name}: no callable registered for {resource}")
            retriers = state.get("Retry", [])
            if len(retriers) > 1:
                # One shared attempt counter is all this interpreter keeps.
                raise AslUnsupported(f"state {name}: more than one retrier")
            for retrier in retriers:
                if set(retrier) - _RETRY or "ErrorEquals" not in retrier:
                    raise AslUnsupported(f"state {name}: unsupported Retry {retrier}")
            for catcher in state.get("Catch", []):
                if set(catcher) - _CATCH or "ErrorEquals" not in catcher or "Next" not in catcher:
                    raise AslUnsupported(f"state {name}: unsupported Catch {catcher}")
                if catcher["Next"] not in states or not _PATH.match(catcher.get("ResultPath", "$")):
                    raise AslUnsupported(f"state {name}: bad Catch {catcher}")
            result_path = state.get("ResultPath", "$")
            if result_path is not None and not _PATH.match(result_path):
                raise AslUnsupported(f"state {name}: unsupported ResultPath {result_path!r}")
        if kind == "Choice":
            for rule in state.get("Choices", []):
                if set(rule) != _CHOICE_RULE:
                    raise AslUnsupported(f"state {name}: unsupported choice rule {rule}")
                if rule["Next"] not in states or not _PATH.match(rule["Variable"]):
                    raise AslUnsupported(f"state {name}: bad choice rule {rule}")
        if kind == "Wait" and ("Seconds" in state) == ("SecondsPath" in state):
            raise AslUnsupported(f"state {name}: needs exactly one of Seconds / SecondsPath")
        if kind == "Fail" and "Cause" in state and "CausePath" in state:
            raise AslUnsupported(f"state {name}: Cause and CausePath are exclusive")


@dataclass
class HistoryEvent:
    """One entry of the execution history."""

    time: float
    kind: str
    state: str
    detail: str = ""


@dataclass
class Execution:
    """One Standard workflow execution of a definition."""

    arn: str
    definition: Mapping[str, Any]
    input: Any
    resources: Mapping[str, Callable[[Any], Any]]
    scheduler: Scheduler
    status: str = "RUNNING"
    output: Any = None
    error: str | None = None
    cause: str | None = None
    transitions: int = 0
    task_invocations: int = 0
    started_at: float = 0.0
    stopped_at: float | None = None
    history: list[HistoryEvent] = field(default_factory=list)

    def __post_init__(self) -> None:
        validate(self.definition, self.resources)
        self.input = _json_roundtrip(self.input, "execution input")

    @property
    def clock(self) -> Any:
        return self.scheduler.clock

    def start(self) -> None:
        """Schedule the first state now and the execution timeout."""
        self.started_at = self.clock.time()
        start = self.definition["StartAt"]
        self.scheduler.at(self.started_at, lambda: self._enter(start, self.input, 0), "start")
        timeout = self.definition.get("TimeoutSeconds")
        if timeout is not None:
            self.scheduler.at(self.started_at + timeout, self._check_timeout, "execution-timeout")

    @property
    def running(self) -> bool:
        return self.status == "RUNNING"

    def stop(self, error: str = "", cause: str = "") -> None:
        """StopExecution: abort (no-op unless running)."""
        if self.running:
            self._end("ABORTED", error=error or None, cause=cause or None)

    def _end(
        self, status: str, *, output: Any = None, error: str | None = None, cause: str | None = None
    ) -> None:
        self.status = status
        self.output, self.error, self.cause = output, error, cause
        self.stopped_at = self.clock.time()
        self.history.append(
            HistoryEvent(self.stopped_at, status, "", f"{error or ''} {cause or ''}")
        )

    def _deadline_passed(self) -> bool:
        timeout = self.definition.get("TimeoutSeconds")
        return timeout is not None and self.clock.time() >= self.started_at + timeout

    def _check_timeout(self) -> None:
        if self.running and self._deadline_passed():
            self._end("TIMED_OUT", error="States.Timeout", cause="execution timed out")

    def _enter(self, name: str, document: Any, attempt: int) -> None:
        if not self.running:
            return
        if self._deadline_passed():
            self._check_timeout()
            return
        state = self.definition["States"][name]
        self.transitions += 1
        self.history.append(HistoryEvent(self.clock.time(), "Entered", name, f"attempt {attempt}"))
        try:
            self._run(name, state, document, attempt)
        except _ExecutionFailed as failure:
            self._end("FAILED", error=failure.error, cause=failure.cause)

    def _next(self, state: Mapping[str, Any], document: Any) -> None:
        if state.get("End"):
            self._end("SUCCEEDED", output=document)
            return
        target = state["Next"]
        self.scheduler.at(self.clock.time(), lambda: self._enter(target, document, 0), target)

    def _run(self, name: str, state: Mapping[str, Any], document: Any, attempt: int) -> None:
        kind = state["Type"]
        if kind == "Task":
            self._task(name, state, document, attempt)
        elif kind == "Choice":
            for rule in state.get("Choices", []):
                value = _path_get(document, rule["Variable"])
                if isinstance(value, str) and value == rule["StringEquals"]:
                    target = rule["Next"]
                    break
            else:
                if "Default" not in state:
                    raise _ExecutionFailed("States.NoChoiceMatched", f"no choice matched in {name}")
                target = state["Default"]
            self.scheduler.at(self.clock.time(), lambda: self._enter(target, document, 0), target)
        elif kind == "Wait":
            seconds = state.get("Seconds")
            if "SecondsPath" in state:
                seconds = _path_get(document, state["SecondsPath"])
            if isinstance(seconds, bool) or not isinstance(seconds, int) or seconds < 0:
                raise _ExecutionFailed("States.Runtime", f"{name}: invalid wait {seconds!r}")
            wake = self.clock.time() + seconds
            if state.get("End"):
                self.scheduler.at(wake, lambda: self._end("SUCCEEDED", output=document), name)
            else:
                target = state["Next"]
                self.scheduler.at(wake, lambda: self._enter(target, document, 0), target)
        elif kind == "Succeed":
            self._end("SUCCEEDED", output=document)
        elif kind == "Fail":
            cause = state.get("Cause")
            if "CausePath" in state:
                cause = _path_get(document, state["CausePath"])
                if not isinstance(cause, str):
                    raise _ExecutionFailed("States.Runtime", "CausePath is not a string")
            self._end("FAILED", error=state.get("Error"), cause=cause)
        else:  # pragma: no cover - validate() rejects other types
            raise AslUnsupported(kind)

    def _schedule(self, target: str, document: Any) -> None:
        self.scheduler.at(self.clock.time(), lambda: self._enter(target, document, 0), target)

    def _task(self, name: str, state: Mapping[str, Any], document: Any, attempt: int) -> None:
        function = self.resources[state["Resource"]]
        began = self.clock.time()
        self.task_invocations += 1
        error: str | None = None
        cause = ""
        result: Any = None
        try:
            result = _json_roundtrip(function(copy.deepcopy(document)), "task result")
        except TaskFailure as failure:
            error, cause = failure.error, failure.cause
        except _ExecutionFailed as failure:
            error, cause = failure.error, failure.cause
        except Exception as exc:  # an unhandled Lambda error: errorType is the class name
            error, cause = type(exc).__name__, str(exc)
        limit = state.get("TimeoutSeconds", 60)
        if error is None and self.clock.time() - began > limit:
            error, cause = "States.Timeout", f"task ran {self.clock.time() - began:.1f}s > {limit}s"
        if not self.running:
            return  # stopped (or timed out) while the task ran: its result is discarded
        if error is None:
            result_path = state.get("ResultPath", "$")
            new = document if result_path is None else _path_set(document, result_path, result)
            self._next(state, new)
            return
        self.history.append(HistoryEvent(self.clock.time(), "TaskFailed", name, error))
        for retrier in state.get("Retry", []):
            if not _matches(retrier["ErrorEquals"], error):
                continue
            max_attempts = retrier.get("MaxAttempts", 3)
            if attempt >= max_attempts:
                break
            delay = retrier.get("IntervalSeconds", 1) * retrier.get("BackoffRate", 2.0) ** attempt
            self.scheduler.at(
                self.clock.time() + delay, lambda: self._enter(name, document, attempt + 1), name
            )
            return
        for catcher in state.get("Catch", []):
            if _matches(catcher["ErrorEquals"], error):
                caught = _path_set(
                    document, catcher.get("ResultPath", "$"), {"Error": error, "Cause": cause}
                )
                target = catcher["Next"]
                self.history.append(HistoryEvent(self.clock.time(), "Caught", name, error))
                self._schedule(target, caught)
                return
        raise _ExecutionFailed(error, cause)


def _matches(names: list[str], error: str) -> bool:
    """Step Functions' error matching for Retry and Catch."""
    return (
        error in names
        or "States.ALL" in names
        or ("States.TaskFailed" in names and error != "States.Timeout")
    )

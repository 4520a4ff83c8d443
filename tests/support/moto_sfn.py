"""moto's Step Functions engine (LocalStack-derived, not written here) in virtual time.

moto executes state machines for real (``execute_state_machine``), each execution in its own
threads, with Wait states and retry back-offs in real time and Lambda tasks in Docker. Three
patches make it usable in tests, without changing what it decides:

- Lambda tasks call the real handlers in process (:class:`LambdaResult` carries either the
  payload or the error a Lambda invocation would report, e.g. ``Sandbox.Timedout``);
- a Wait state or a retry back-off *parks* its execution thread and schedules its wake-up in
  the :class:`tests.support.clock.Scheduler`, so hours pass in virtual time;
- an execution runs at once when started, until it parks. Exactly one thread runs at a time
  (the test's, or one execution's until it parks again), so runs are deterministic;
- a Task state's work runs in its execution's thread: moto starts a thread per Task only to
  bound it by the task's timeout in *real* seconds, which a handler running in virtual time
  never reaches (the harness reports a Lambda timeout in virtual time, ``Sandbox.Timedout``).

Two memos make the engine cheap to run hundreds of times without changing what it computes:
the JSONPath expressions the engine parses at every state (``jsonpath_ng`` builds a new
parser, with its tables, for every ``parse`` call) are parsed once per path, and a definition
the engine's parser has accepted once is not parsed again by ``CreateStateMachine``'s
validation (a definition it refuses is validated every time, so it is still refused).

Two limits moto does not enforce are enforced here, in virtual time, so a test can see them:
an execution's ``TimeoutSeconds`` (it ends TIMED_OUT when it is still running then) and the
history quota (at :data:`HISTORY_QUOTA` events the execution fails, as in Step Functions).
"""

from __future__ import annotations

import functools
import json
import threading
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from types import ModuleType
from typing import Any

from jsonpath_ng.ext.parser import parse as parse_ext_jsonpath
from jsonpath_ng.parser import parse as parse_jsonpath
from moto.stepfunctions.parser import models as parser_models
from moto.stepfunctions.parser import utils as parser_utils
from moto.stepfunctions.parser.asl.component.common.path import result_path
from moto.stepfunctions.parser.asl.component.common.retry import retrier_decl
from moto.stepfunctions.parser.asl.component.state.exec import execute_state
from moto.stepfunctions.parser.asl.component.state.exec.state_task import lambda_eval_utils
from moto.stepfunctions.parser.asl.component.state.wait.wait_function.wait_function import (
    WaitFunction,
)
from moto.stepfunctions.parser.asl.utils import json_path
from moto.stepfunctions.parser.backend.execution_worker import ExecutionWorker

from .clock import Scheduler

PARK_TIMEOUT = 60.0
"""Real seconds an execution thread may run before it must park (a hang fails the test)."""
HISTORY_QUOTA = 25_000
"""Events an execution's history may hold in Step Functions (Standard workflows)."""
HISTORY_QUOTA_ERROR = "States.HistoryQuotaExceeded"
"""The error the harness ends an execution with at the quota (the name is ours)."""


@dataclass
class LambdaResult:
    """What one Lambda invocation reports to Step Functions."""

    payload: Any = None
    error: str | None = None
    """Set for a failed invocation: the error name the Task state sees."""
    message: str = ""


LambdaFunction = Callable[[Any], LambdaResult]


@dataclass
class _Thread:
    go: threading.Event = field(default_factory=threading.Event)
    label: str = ""
    worker: Any = None
    done: bool = False
    stopped: bool = False
    """Timed out or over the history quota: the execution may not call anything any more."""


@functools.cache
def _parse_jsonpath(path: str) -> Any:
    """``jsonpath_ng.parse``, once per path (the parsed expression is never mutated)."""
    return parse_jsonpath(path)


@functools.cache
def _parse_ext_jsonpath(path: str) -> Any:
    """``jsonpath_ng.ext.parse``, once per path."""
    return parse_ext_jsonpath(path)


_VALID_DEFINITIONS: set[str] = set()
"""Definitions moto's ``CreateStateMachine`` validation accepted (this process)."""
_validate_definition = parser_models.StepFunctionsParserBackend._validate_definition


def _validate_once(definition: str) -> None:
    """moto's definition validation, skipped for a definition it already accepted."""
    if definition not in _VALID_DEFINITIONS:
        _validate_definition(definition)
        _VALID_DEFINITIONS.add(definition)


class _InlineThread:
    """Stands in for ``threading.Thread`` where moto runs a Task state: ``start`` runs the
    task to its end in the calling thread (moto then finds it finished on time)."""

    def __init__(self, target: Callable[[], None], daemon: bool | None = None) -> None:
        self._target = target

    def start(self) -> None:
        self._target()

    def join(self, timeout: float | None = None) -> None:
        return None

    def is_alive(self) -> bool:
        return False


class _SleepModule(ModuleType):
    """Stands in for ``time`` in moto's retrier: back-offs park the execution."""

    def __init__(self, engine: VirtualStepFunctions) -> None:
        super().__init__("time")
        self._engine = engine

    def sleep(self, seconds: float) -> None:
        self._engine.sleep(float(seconds))


class VirtualStepFunctions:
    """Patches moto's engine (see the module doc); ``functions`` maps a Lambda ARN to the
    in-process function that answers its invocations."""

    def __init__(
        self,
        monkeypatch: Any,
        scheduler: Scheduler,
        functions: Mapping[str, LambdaFunction],
    ) -> None:
        self.scheduler = scheduler
        self.functions = dict(functions)
        self._parked = threading.Event()
        self._current: _Thread | None = None
        self.errors: list[BaseException] = []
        self.started = 0
        """Executions started so far."""
        self.active = 0
        """Executions whose threads have not ended."""
        self.timed_out = 0
        """Executions the backstop (``TimeoutSeconds``) ended."""
        self.history_peak = 0
        """The most history events any execution reached."""
        engine = self

        def invoke(parameters: dict[str, Any], region: str, state_credentials: Any) -> Any:
            return engine._invoke(parameters)

        def wait_interval(_self: Any, env: Any, wait_seconds: int) -> None:
            engine.sleep(float(wait_seconds))

        def start(worker: ExecutionWorker) -> None:
            engine._start(worker)

        monkeypatch.setattr(lambda_eval_utils, "_invoke_lambda_function", invoke)
        monkeypatch.setattr(WaitFunction, "_wait_interval", wait_interval)
        monkeypatch.setattr(retrier_decl, "time", _SleepModule(self))
        monkeypatch.setattr(ExecutionWorker, "start", start)
        monkeypatch.setattr(execute_state, "Thread", _InlineThread)
        monkeypatch.setattr(json_path, "parse", _parse_ext_jsonpath)
        monkeypatch.setattr(result_path, "parse", _parse_jsonpath)
        monkeypatch.setattr(
            parser_models.StepFunctionsParserBackend,
            "_validate_definition",
            staticmethod(_validate_once),
        )

    def close(self) -> None:
        """Forget the threads moto keeps for LocalStack's shutdown (``TMP_THREADS``, which
        moto never reads): each holds its execution's whole state, for the life of the
        process."""
        parser_utils.TMP_THREADS.clear()

    # -- Lambda ------------------------------------------------------------------------
    def _invoke(self, parameters: Mapping[str, Any]) -> dict[str, Any]:
        if self._current is not None and self._current.stopped:
            return {
                "StatusCode": 200,
                "FunctionError": "Unhandled",
                "Payload": {"errorType": "States.Timeout", "errorMessage": "execution over"},
            }
        arn = str(parameters["FunctionName"])
        function = self.functions[arn]
        raw = parameters.get("Payload") or b"{}"
        payload = json.loads(raw.decode() if isinstance(raw, bytes) else raw)
        try:
            result = function(payload)
        except BaseException as exc:  # a broken test harness must not look like a Lambda error
            self.errors.append(exc)
            raise
        if result.error is not None:
            return {
                "StatusCode": 200,
                "FunctionError": "Unhandled",
                "Payload": {"errorType": result.error, "errorMessage": result.message},
            }
        return {"StatusCode": 200, "Payload": result.payload}

    # -- threads -----------------------------------------------------------------------
    def _start(self, worker: ExecutionWorker) -> None:
        handle = _Thread(label="execution", worker=worker)
        self.started += 1
        self.active += 1

        def body() -> None:
            handle.go.wait()
            try:
                worker._execution_logic()  # type: ignore[no-untyped-call]
            except BaseException as exc:
                self.errors.append(exc)
            finally:
                handle.done = True
                self.active -= 1
                self._parked.set()

        threading.Thread(target=body, daemon=True).start()
        details = worker._evaluation_details.state_machine_details
        timeout = json.loads(details.definition).get("TimeoutSeconds")
        if isinstance(timeout, int):
            self.scheduler.after(float(timeout), lambda: self._time_out(handle), "backstop")
        # As in Step Functions, the execution runs at once (its first check may come before
        # StartExecution returns to the caller), until its first Wait.
        self._resume(handle)

    def _time_out(self, handle: _Thread) -> None:
        """The execution's ``TimeoutSeconds`` passed: Step Functions ends it (TIMED_OUT)."""
        if handle.done:
            return
        handle.stopped = True
        self.timed_out += 1
        handle.worker.env.set_timed_out()
        self._resume(handle)

    def _over_quota(self, handle: _Thread) -> bool:
        events = len(handle.worker.env.event_manager._history_event_list)
        self.history_peak = max(self.history_peak, events)
        if events < HISTORY_QUOTA or handle.stopped:
            return False
        from moto.stepfunctions.parser.api import ExecutionFailedEventDetails

        handle.stopped = True
        handle.worker.env.set_error(
            ExecutionFailedEventDetails(
                error=HISTORY_QUOTA_ERROR, cause=f"the history reached {events} events"
            )
        )
        return True

    def _resume(self, handle: _Thread) -> None:
        """Run one execution thread until it parks or ends."""
        if handle.done:
            return
        outer = self._current
        self._parked.clear()
        self._current = handle
        handle.go.set()
        parked = self._parked.wait(PARK_TIMEOUT)
        self._current = outer
        self._parked.clear()
        if not parked:
            raise AssertionError("a Step Functions execution thread neither parked nor ended")
        if self.errors:
            raise self.errors[0]

    def sleep(self, seconds: float) -> None:
        """Park the running execution for ``seconds`` of virtual time."""
        handle = self._current
        if handle is None:
            raise AssertionError("a Step Functions wait outside a running execution")
        if self._over_quota(handle):
            return  # the execution failed: it ends without waiting
        handle.go.clear()
        self.scheduler.after(max(0.0, seconds), lambda: self._resume(handle), "resume execution")
        self._parked.set()
        handle.go.wait()

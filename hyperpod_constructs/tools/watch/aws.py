"""The AWS edge of ``watch``: read-only calls through the command line's one AWS session
(:mod:`hyperpod_constructs.tools._aws.session`: the profile, region and role given, else the normal
credential chain; every call bounded by the deadline), turned into an
:class:`~.model.Observation`.

Per refresh: CloudFormation ``DescribeStacks`` and ``DescribeStackResource`` (the gate's wait
condition and the cluster resource), SageMaker ``DescribeCluster`` and ``ListClusterEvents``
(newest first, one call). With ``--stack`` and no local template: ``GetTemplate`` once.

Errors: throttling, 5xx and network errors are retried by botocore (standard mode, bounded) and
then reported as a ``problem`` of the refresh (the loop gives up after a few in a row). So is an
answer that cannot be read or does not fit AWS's model (not JSON, truncated, ``{}``, a list
where an object belongs, botocore's ``ResponseParserError``): every answer is checked against
its botocore shape (:func:`hyperpod_constructs.tools._aws.shapes.check`) before it is used, and
an unreadable one is "unknown" for that refresh, never a verdict. Missing credentials or region,
an endpoint that never answered (or did not finish its first answer within the deadline), and
any other error (e.g. access denied) raise :class:`FatalError` with a one-line message.
"""

from __future__ import annotations

import contextlib
import json
from collections.abc import Callable, Mapping
from datetime import UTC, datetime, timedelta
from email.utils import parsedate_to_datetime
from typing import Any, TypeVar

from botocore.exceptions import (  # type: ignore[import-untyped, unused-ignore]
    BotoCoreError,
    ClientError,
    HTTPClientError,
    NoCredentialsError,
)
from botocore.exceptions import (
    ConnectionError as BotoConnectionError,
)

from ..._core.sanitize import printable
from ..._runtime.hyperpod_gate.faults import TRANSIENT_API_FAULTS, api_fault
from .._assembly.stacks import deployed_parameters
from .._aws.input import InputError
from .._aws.session import AwsOptions, DeadlineError, SessionError, open_session
from .._aws.shapes import ShapeError, check
from ..summary import TemplateError
from .model import Observation, ResourceState, StackState
from .target import WatchTarget, targets_from_template

MAX_EVENTS = 50
T = TypeVar("T")


def _template_as_text(response: dict[str, Any]) -> dict[str, Any]:
    """GetTemplate's answer with ``TemplateBody`` as AWS sent it, a string: botocore decodes a
    JSON body (leniently) into a dict; the strict reader reads it again."""
    body = response.get("TemplateBody")
    if isinstance(body, Mapping):
        return {**response, "TemplateBody": json.dumps(body)}
    return response


class FatalError(Exception):
    """``watch`` cannot go on (exit 2); ``str()`` is one printable line."""

    def __str__(self) -> str:
        return printable(" ".join(super().__str__().split()))


class Transient(Exception):
    """A read that failed for now (throttled, a 5xx, an unreadable answer): ``watch`` shows it
    as a problem of the refresh and tries again; ``plan`` and ``preflight`` turn it into a
    :class:`FatalError` or an unknown fact."""


def _code(error: ClientError) -> str:
    return str(error.response.get("Error", {}).get("Code") or "")


def _message(error: ClientError) -> str:
    detail = error.response.get("Error", {})
    return " ".join(str(detail.get("Message") or error).split())


class Reader:
    """Reads one target's state; one instance per ``watch`` run."""

    def __init__(
        self,
        *,
        region: str | None,
        options: AwsOptions | None = None,
        session: Any = None,
        tool: str = "watch",
    ) -> None:
        """``options``: the AWS options of the command line (profile, role, deadline);
        ``region`` is used when they name none; ``session`` (boto3) replaces the profile's."""
        try:
            aws = open_session(options or AwsOptions(), tool=tool, region=region, session=session)
            self._cfn = aws.client("cloudformation")
            self._sagemaker = aws.client("sagemaker")
        except SessionError as error:
            raise FatalError(str(error)) from None
        self.region: str = aws.region
        self.session = aws
        """The AWS session it reads with (for other reads of the same command)."""
        self._answered = False
        self._date: datetime | None = None
        self._skew = timedelta(0)
        """AWS's clock minus the local one, at the last answer that had a ``Date``."""

    def _call(self, what: str, call: Callable[[], T], shape: str) -> T:
        """``call()``, its answer checked against the botocore shape ``shape``."""
        try:
            result = call()
        except ClientError as error:
            code = _code(error)
            status = int(error.response.get("ResponseMetadata", {}).get("HTTPStatusCode") or 0)
            if api_fault(code or None, status or None) in TRANSIENT_API_FAULTS:
                self._answered = True
                raise Transient(f"{what}: {code or status}: {_message(error)}") from None
            raise
        except DeadlineError as error:
            if not self._answered:
                raise FatalError(f"AWS did not answer {what} in {self.region}: {error}") from None
            raise Transient(f"{what}: {error}") from None
        except NoCredentialsError:
            raise FatalError(
                "no AWS credentials found; configure them as for the AWS CLI"
            ) from None
        except (BotoConnectionError, HTTPClientError) as error:
            text = " ".join(str(error).split())
            if not self._answered:
                raise FatalError(f"cannot reach AWS for {what} in {self.region}: {text}") from None
            raise Transient(f"{what}: {text}") from None
        except BotoCoreError as error:
            raise FatalError(f"{what}: {' '.join(str(error).split())}") from None
        except Exception as error:  # botocore could not parse the answer (ResponseParserError...)
            self._answered = True
            raise Transient(f"{what}: unreadable answer ({type(error).__name__})") from None
        self._answered = True
        try:
            check(result, shape, answer=True)
        except ShapeError as error:
            raise Transient(f"{what}: an answer that does not fit AWS's model: {error}") from None
        self._note_date(result)
        return result

    def _note_date(self, response: object) -> None:
        """Keep the ``Date`` of AWS's answer: refresh times (and the 3-hour countdown) then
        follow AWS's clock, not a possibly skewed local one."""
        metadata = response.get("ResponseMetadata") if isinstance(response, Mapping) else None
        headers = metadata.get("HTTPHeaders") if isinstance(metadata, Mapping) else None
        date = headers.get("date") if isinstance(headers, Mapping) else None
        if isinstance(date, str):
            with contextlib.suppress(TypeError, ValueError):
                self._date = parsedate_to_datetime(date).astimezone(UTC)

    def _fatal(self, what: str, error: ClientError) -> FatalError:
        return FatalError(f"{what} failed in {self.region}: {_code(error)}: {_message(error)}")

    # -- the deployed template -------------------------------------------------------------
    def deployed_template(self, stack_name: str, *, where: str = "", hint: str = "") -> object:
        """The deployed stack's template (``GetTemplate``), parsed; raises :class:`FatalError`
        when the stack is not deployed, AWS cannot be read or the template is neither JSON nor
        YAML."""
        what = f"cloudformation:GetTemplate of stack {stack_name}"
        try:
            response = self._call(
                what,
                lambda: _template_as_text(self._cfn.get_template(StackName=stack_name)),
                "GetTemplate",
            )
        except Transient as error:
            raise FatalError(str(error)) from None
        except ClientError as error:
            if _code(error) == "ValidationError":
                raise FatalError(
                    f"stack {stack_name} {where}not deployed in {self.region}: {_message(error)}"
                ) from None
            raise self._fatal(what, error) from None
        body = response.get("TemplateBody")
        if not isinstance(body, str):
            raise FatalError(f"the deployed template of stack {stack_name} has no body{hint}")
        # JSON, or YAML (a stack deployed from YAML) through the tools' cfn-lint-backed reader.
        from .._assembly.templates import parse_template

        try:
            return parse_template(body, f"the deployed template of stack {stack_name}")
        except InputError as error:
            raise FatalError(f"{error}{hint}") from None

    def deployed_targets(self, stack_name: str) -> list[WatchTarget]:
        """The gated clusters of the deployed stack's template (``GetTemplate``)."""
        template = self.deployed_template(
            stack_name,
            where="not found in cdk.out and ",
            hint="; run watch next to its cdk.out instead",
        )
        try:
            return targets_from_template(
                template, stack_name=stack_name, display_name=stack_name, region=self.region
            )
        except TemplateError as error:
            raise FatalError(f"the deployed template of stack {stack_name}: {error}") from None

    # -- one refresh -------------------------------------------------------------------------
    def _stack(self, target: WatchTarget, problems: list[str]) -> tuple[StackState | None, bool]:
        what = f"cloudformation:DescribeStacks of stack {target.stack_name}"
        try:
            response = self._call(
                what,
                lambda: self._cfn.describe_stacks(StackName=target.stack_name),
                "DescribeStacks",
            )
        except Transient as error:
            problems.append(str(error))
            return None, False
        except ClientError as error:
            if _code(error) == "ValidationError" and "does not exist" in _message(error):
                return None, True
            raise self._fatal(what, error) from None
        stacks = response.get("Stacks") or []
        if not stacks:
            problems.append(f"{what}: an answer without the stack")
            return None, False
        resources: dict[str, ResourceState] = {}
        for logical_id in (target.wait_condition_id, target.cluster_logical_id):
            if logical_id is None:
                continue
            try:
                state = self.resource(target.stack_name, logical_id)
            except Transient as error:
                problems.append(str(error))
                return None, False
            if state is not None:
                resources[logical_id] = state
        stack = stacks[0]
        return (
            StackState(
                status=str(stack.get("StackStatus") or "UNKNOWN"),
                reason=stack.get("StackStatusReason"),
                resources=resources,
                parameters=deployed_parameters(stack),
            ),
            False,
        )

    def resource(self, stack_name: str, logical_id: str) -> ResourceState | None:
        """The stack's resource ``logical_id`` (``DescribeStackResource``); None when the stack
        or the resource does not exist. Raises :class:`Transient` or :class:`FatalError`."""
        what = f"cloudformation:DescribeStackResource {logical_id}"
        try:
            response = self._call(
                what,
                lambda: self._cfn.describe_stack_resource(
                    StackName=stack_name, LogicalResourceId=logical_id
                ),
                "DescribeStackResource",
            )
        except ClientError as error:
            if _code(error) == "ValidationError" and "does not exist" in _message(error):
                return None
            raise self._fatal(what, error) from None
        detail: Mapping[str, Any] | None = response.get("StackResourceDetail")
        if not detail:
            raise Transient(f"{what}: an answer without the resource")
        updated = detail.get("LastUpdatedTimestamp")
        return ResourceState(
            status=str(detail.get("ResourceStatus") or "UNKNOWN"),
            reason=detail.get("ResourceStatusReason"),
            physical_id=detail.get("PhysicalResourceId") or None,
            updated_at=updated if isinstance(updated, datetime) else None,
        )

    def describe_cluster(self, cluster: str) -> Mapping[str, Any] | None:
        """The cluster's ``DescribeCluster`` answer; ``None`` when there is no such cluster.
        Raises :class:`Transient` (a retryable failure) or :class:`FatalError`."""
        what = f"sagemaker:DescribeCluster {cluster}"
        try:
            described: Mapping[str, Any] = self._call(
                what,
                lambda: self._sagemaker.describe_cluster(ClusterName=cluster),
                "DescribeCluster",
            )
        except ClientError as error:
            if _code(error) in ("ResourceNotFound", "ResourceNotFoundException"):
                return None
            raise self._fatal(what, error) from None
        return described

    def _cluster(
        self, cluster: str, problems: list[str]
    ) -> tuple[Mapping[str, Any] | None, bool, list[Mapping[str, Any]]]:
        try:
            described = self.describe_cluster(cluster)
        except Transient as error:
            problems.append(str(error))
            return None, False, []
        if described is None:
            return None, True, []
        what = f"sagemaker:ListClusterEvents {cluster}"
        if not hasattr(self._sagemaker, "list_cluster_events"):
            return described, False, []  # a boto3 older than the API: no events, still counts
        try:
            listed = self._call(
                what,
                lambda: self._sagemaker.list_cluster_events(
                    ClusterName=cluster, SortOrder="Descending", MaxResults=MAX_EVENTS
                ),
                "ListClusterEvents",
            )
            if "Events" not in listed:  # AWS always sends it; botocore's reading of a non-JSON body
                raise Transient(f"{what}: an answer without Events")
            events = list(listed["Events"])
        except Transient as error:
            problems.append(str(error))
            events = []
        except ClientError as error:
            if _code(error) not in ("ValidationException", "ResourceNotFound"):
                raise self._fatal(what, error) from None
            events = []  # events exist only in Continuous provisioning mode
        return described, False, events

    def _time(self, local: datetime) -> datetime:
        if self._date is not None:
            self._skew = self._date - local
        return local + self._skew

    def observe(self, target: WatchTarget, now: Callable[[], datetime]) -> Observation:
        """One round of read calls, timed by the ``Date`` of AWS's last answer (``now()`` plus the
        last known skew when none came). Raises :class:`FatalError`."""
        self._date = None
        problems: list[str] = []
        stack, stack_missing = self._stack(target, problems)
        cluster_id = target.cluster_name
        if cluster_id is None and stack is not None:
            resource = stack.resources.get(target.cluster_logical_id)
            cluster_id = resource.physical_id if resource is not None else None
        described: Mapping[str, Any] | None = None
        events: list[Mapping[str, Any]] = []
        cluster_missing = cluster_id is None and (stack is not None or stack_missing)
        if cluster_id is not None:
            described, cluster_missing, events = self._cluster(cluster_id, problems)
        return Observation(
            time=self._time(now()),
            stack=stack,
            stack_missing=stack_missing,
            cluster=described,
            cluster_missing=cluster_missing,
            events=events,
            problems=tuple(problems),
        )

"""The AWS edge of ``preflight``: read-only calls through boto3, turned into
:class:`~.facts.Account` facts.

Service Quotas ``ListServiceQuotas`` and ``ListAWSDefaultServiceQuotas`` (service code
``sagemaker``, every page); SageMaker ``ListClusters`` (every page) and ``DescribeCluster`` per
cluster; ``DescribeTrainingPlan`` per plan the app names. For a deployed stack, CloudFormation
through ``watch``'s reader: ``GetTemplate`` and ``DescribeStacks`` (a stack not in ``cdk.out``),
``DescribeStackResource`` (a cluster whose name CloudFormation generated).

Throttling, 5xx and network errors are retried by botocore (standard mode, bounded: see
:mod:`hyperpod_constructs.tools._aws.session`, every call within ``--aws-timeout``); an
answer still failing, denied (``AccessDenied...``), or not fitting AWS's model (checked with
:func:`hyperpod_constructs.tools._aws.shapes.check`) becomes an :class:`~.facts.Unread` fact,
and the verdicts that need it are "unknown". Missing credentials or region raise :class:`FatalError`
(exit 2).
"""

from __future__ import annotations

import contextlib
import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from email.utils import parsedate_to_datetime
from functools import partial
from typing import Any

from botocore.exceptions import (  # type: ignore[import-untyped, unused-ignore]
    BotoCoreError,
    ClientError,
    NoCredentialsError,
)

from ..._core.sanitize import printable
from .._aws.session import AwsOptions, SessionError, open_session
from .._aws.shapes import ShapeError, check
from ..plan.aws import DeployedReader
from ..watch.aws import FatalError, Reader
from .demand import ClusterDemand
from .facts import Account, ClusterUse, GroupUse, Plan, Quota, Quotas, Unread
from .quotas import SERVICE_CODE

__all__ = ["AccountReader", "Clients", "FatalError", "make_clients"]

MAX_PAGES = 200
"""A listing longer than this many pages is reported unread (a service that never ends)."""
PAGE_SIZE = 100
"""``MaxResults`` of each listing (the most both APIs allow)."""


@dataclass(frozen=True)
class Clients:
    """The boto3 clients ``preflight`` reads with, in one region."""

    region: str
    quotas: Any
    sagemaker: Any
    stacks: DeployedReader
    """CloudFormation, through ``plan``'s reader of the deployed stack."""


def make_clients(
    *,
    region: str | None,
    profile: str | None = None,
    session: Any = None,
    options: AwsOptions | None = None,
) -> Clients:
    """The clients, through the command line's one AWS session
    (:mod:`hyperpod_constructs.tools._aws.session`: ``options``' profile, role and deadline, else
    ``profile``) in ``region`` (else the profile's or environment's region), or from
    ``session`` (a boto3 session, or a session already opened). Raises :class:`FatalError`
    (no region, no credentials, an unknown profile or region, a role that cannot be assumed)."""
    try:
        aws = open_session(
            options or AwsOptions(profile=profile), tool="preflight", region=region, session=session
        )
        quotas = aws.client("service-quotas")
        sagemaker = aws.client("sagemaker")
    except SessionError as error:
        raise FatalError(str(error)) from None
    stacks = DeployedReader(region=aws.region, session=aws, tool="preflight")
    return Clients(region=aws.region, quotas=quotas, sagemaker=sagemaker, stacks=stacks)


def _error_text(error: ClientError) -> str:
    detail = error.response.get("Error", {})
    code = detail.get("Code") or error.response.get("ResponseMetadata", {}).get("HTTPStatusCode")
    return f"{code}: {' '.join(str(detail.get('Message') or error).split())}"


def _whole(value: object) -> int | None:
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    return math.floor(value) if math.isfinite(value) and value >= 0 else None


def _quota(entry: Mapping[str, Any], *, applied: bool) -> Quota | None:
    name, code, value = entry.get("QuotaName"), entry.get("QuotaCode"), _whole(entry.get("Value"))
    if not isinstance(name, str) or value is None:
        return None
    return Quota(name=name, code=str(code or "?"), value=value, applied=applied)


def _count(value: object) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) and value > 0 else 0


def _group_use(group: Mapping[str, Any]) -> GroupUse:
    current = _count(group.get("CurrentCount"))
    details = group.get("InstanceTypeDetails") or []
    types: dict[str, int] = {}
    for detail in details:
        kind = detail.get("InstanceType")
        if isinstance(kind, str):
            types[kind] = types.get(kind, 0) + _count(detail.get("CurrentCount"))
    plan = group.get("TrainingPlanArn")
    return GroupUse(
        name=str(group.get("InstanceGroupName") or "?"),
        instance_type=group.get("InstanceType"),
        count=max(current, _count(group.get("TargetCount"))),
        current=current,
        training_plan=plan if isinstance(plan, str) and plan else None,
        types=types,
    )


def plan_name(arn: str) -> str:
    """``arn:aws:sagemaker:...:training-plan/NAME`` -> ``NAME`` (what DescribeTrainingPlan
    takes)."""
    return arn.partition("training-plan/")[2] or arn


class AccountReader:
    """Reads the facts of one region's account; one instance per run."""

    def __init__(self, clients: Clients, now: Callable[[], datetime] | None = None) -> None:
        self.clients = clients
        self.region = clients.region
        self._now = now or (lambda: datetime.now(UTC))
        self._date: datetime | None = None

    def _read(self, what: str, call: Callable[[], Any], shape: str) -> Any:
        """``call()``, its answer checked against the botocore shape ``shape``; an
        :class:`Unread` when it failed after botocore's retries, was denied or does not fit."""
        try:
            result = call()
        except ClientError as error:
            return Unread(f"{what}: {_error_text(error)}")
        except NoCredentialsError:
            raise FatalError(
                "no AWS credentials found; configure them as for the AWS CLI"
            ) from None
        except BotoCoreError as error:  # connection, read timeout, parser: after retries
            return Unread(f"{what}: {' '.join(str(error).split())}")
        except Exception as error:  # an answer botocore could not read
            return Unread(f"{what}: unreadable answer ({type(error).__name__})")
        try:
            check(result, shape, answer=True)
        except ShapeError as error:
            return Unread(f"{what}: an answer that does not fit AWS's model: {error}")
        headers = result.get("ResponseMetadata", {}).get("HTTPHeaders", {})
        date = headers.get("date") if isinstance(headers, Mapping) else None
        if isinstance(date, str):
            with contextlib.suppress(TypeError, ValueError):
                self._date = parsedate_to_datetime(date).astimezone(UTC)
        return result

    def _pages(
        self, what: str, call: Callable[..., Any], shape: str, key: str, **params: Any
    ) -> list[Mapping[str, Any]] | Unread:
        """Every item of a paged listing (``NextToken``)."""
        items: list[Mapping[str, Any]] = []
        token: str | None = None
        seen: set[str] = set()
        for _ in range(MAX_PAGES):
            arguments: dict[str, Any] = {"MaxResults": PAGE_SIZE, **params}
            if token:
                arguments["NextToken"] = token
            page = self._read(what, partial(call, **arguments), shape)
            if isinstance(page, Unread):
                return page
            items += page.get(key) or []
            token = page.get("NextToken")
            if not token:
                return items
            if token in seen:
                return Unread(f"{what}: the same NextToken twice (a listing that never ends)")
            seen.add(token)
        return Unread(f"{what}: more than {MAX_PAGES} pages")

    def quotas(self) -> Quotas:
        """The SageMaker quotas: applied values and AWS's defaults."""
        client = self.clients.quotas
        applied = self._pages(
            "service-quotas:ListServiceQuotas",
            client.list_service_quotas,
            "ListServiceQuotas",
            "Quotas",
            ServiceCode=SERVICE_CODE,
        )
        defaults = self._pages(
            "service-quotas:ListAWSDefaultServiceQuotas",
            client.list_aws_default_service_quotas,
            "ListAWSDefaultServiceQuotas",
            "Quotas",
            ServiceCode=SERVICE_CODE,
        )

        def kept(items: list[Mapping[str, Any]] | Unread, is_applied: bool) -> Any:
            if isinstance(items, Unread):
                return items
            found = (_quota(i, applied=is_applied) for i in items)
            return tuple(q for q in found if q is not None)

        return Quotas(applied=kept(applied, True), defaults=kept(defaults, False))

    def clusters(self) -> tuple[ClusterUse, ...] | Unread:
        """Every cluster of the region with its groups' instances."""
        client = self.clients.sagemaker
        listed = self._pages(
            "sagemaker:ListClusters", client.list_clusters, "ListClusters", "ClusterSummaries"
        )
        if isinstance(listed, Unread):
            return listed
        found: list[ClusterUse] = []
        for summary in listed:
            name = str(summary.get("ClusterName") or "")
            what = f"sagemaker:DescribeCluster {name}"
            described = self._describe(what, name)
            if isinstance(described, Unread):
                if "ResourceNotFound" in described.reason:
                    continue  # deleted since it was listed: it holds nothing
                return described
            groups = tuple(_group_use(g) for g in described.get("InstanceGroups") or [])
            status = str(described.get("ClusterStatus") or summary.get("ClusterStatus") or "")
            found.append(ClusterUse(name=name, status=status, groups=groups))
        return tuple(found)

    def _describe(self, what: str, name: str) -> Any:
        return self._read(
            what,
            lambda: self.clients.sagemaker.describe_cluster(ClusterName=name),
            "DescribeCluster",
        )

    def plan(self, arn: str) -> Plan | Unread:
        """One training plan."""
        name = plan_name(arn)
        answer = self._read(
            f"sagemaker:DescribeTrainingPlan {name}",
            lambda: self.clients.sagemaker.describe_training_plan(TrainingPlanName=name),
            "DescribeTrainingPlan",
        )
        if isinstance(answer, Unread):
            return answer
        summaries = answer.get("ReservedCapacitySummaries") or []
        return Plan(
            arn=str(answer.get("TrainingPlanArn") or arn),
            name=str(answer.get("TrainingPlanName") or name),
            status=str(answer.get("Status") or ""),
            available=answer.get("AvailableInstanceCount"),
            total=answer.get("TotalInstanceCount"),
            start=answer.get("StartTime"),
            end=answer.get("EndTime"),
            target_resources=tuple(answer.get("TargetResources") or ()),
            instance_types=tuple(
                dict.fromkeys(s["InstanceType"] for s in summaries if s.get("InstanceType"))
            ),
        )

    def account(self, demands: Sequence[ClusterDemand]) -> Account:
        """Every fact the verdicts of ``demands`` read."""
        self._date = None
        quotas = self.quotas()
        clusters = self.clusters()
        arns = dict.fromkeys(
            g.training_plan for d in demands for g in d.groups if g.training_plan is not None
        )
        plans = {arn: self.plan(arn) for arn in arns}
        return Account(now=self._date or self._now(), quotas=quotas, clusters=clusters, plans=plans)


def deployed_name(reader: Reader, demand: ClusterDemand) -> ClusterDemand:
    """``demand`` with its deployed cluster's name when the template's name is generated:
    CloudFormation's physical id (``DescribeStackResource``); a stack or resource not deployed
    yet leaves the name None (a new cluster)."""
    from .demand import named

    if demand.name is not None:
        return demand
    try:
        state = reader.resource(demand.stack_name, demand.logical_id)
    except Exception as error:  # Transient, FatalError: the name is unknown
        return named(demand, None, printable(f"the deployed cluster's name: {error}"))
    return named(demand, state.physical_id if state is not None else None)

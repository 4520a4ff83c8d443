"""An AWS account as ``preflight`` reads it: Service Quotas (applied and default SageMaker
quotas), SageMaker clusters and training plans, and CloudFormation, answered through real
boto3 clients at the HTTP layer (:class:`~tests.support.wire.WireFake`: every answer checked
against botocore's model, botocore's own parsing and retries). Listings are paged by a small
page size, so every listing takes several pages.
"""

from __future__ import annotations

import json
import zlib
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from .wire import ACCOUNT, REGION, ApiError, WireFake, shared_session

CLUSTER_USAGE = "{} for cluster usage"
PER_CLUSTER = "Maximum number instances allowed per SageMaker HyperPod cluster"
ACROSS_CLUSTERS = "Total number of instances allowed across SageMaker HyperPod clusters"
DISTRACTORS = (
    "ml.p5.48xlarge for cluster spot instance usage",
    "Total number of Spot instances allowed across SageMaker HyperPod clusters",
    "ml.p5.48xlarge for training job usage",
    "ml.p5.48xlarge for endpoint usage",
    "ml.p4d.24xlarge for processing job usage",
)
"""Quota names of the same account that must not be taken for a cluster quota."""
CREATED = datetime(2026, 11, 1, tzinfo=UTC)


def quota(name: str, value: float, code: str | None = None) -> dict[str, Any]:
    """One ``ServiceQuota`` as Service Quotas answers it."""
    code = code or f"L-{zlib.crc32(name.encode()):08X}"
    return {
        "ServiceCode": "sagemaker",
        "ServiceName": "Amazon SageMaker",
        "QuotaArn": f"arn:aws:servicequotas:{REGION}:{ACCOUNT}:sagemaker/{code}",
        "QuotaCode": code,
        "QuotaName": name,
        "Value": float(value),
        "Unit": "None",
        "Adjustable": True,
        "GlobalQuota": False,
    }


def group(
    name: str,
    instance_type: str,
    current: int,
    target: int | None = None,
    *,
    plan: str | None = None,
) -> dict[str, Any]:
    """One ``ClusterInstanceGroupDetails``."""
    details: dict[str, Any] = {
        "InstanceGroupName": name,
        "InstanceType": instance_type,
        "CurrentCount": current,
        "TargetCount": current if target is None else target,
        "Status": "InService",
    }
    if plan is not None:
        details["TrainingPlanArn"] = plan
    return details


def plan_arn(name: str) -> str:
    return f"arn:aws:sagemaker:{REGION}:{ACCOUNT}:training-plan/{name}"


def plan(
    name: str,
    status: str,
    available: int,
    *,
    start: datetime,
    end: datetime,
    instance_type: str = "ml.p5.48xlarge",
    total: int | None = None,
    targets: tuple[str, ...] = ("hyperpod-cluster",),
) -> dict[str, Any]:
    """One ``DescribeTrainingPlan`` answer."""
    total = available if total is None else total
    return {
        "TrainingPlanArn": plan_arn(name),
        "TrainingPlanName": name,
        "Status": status,
        "StartTime": start,
        "EndTime": end,
        "TotalInstanceCount": total,
        "AvailableInstanceCount": available,
        "InUseInstanceCount": total - available,
        "TargetResources": list(targets),
        "ReservedCapacitySummaries": [
            {
                "ReservedCapacityArn": f"arn:aws:sagemaker:{REGION}:{ACCOUNT}:reserved-capacity/"
                f"{name}-capacity-0000000000000",
                "InstanceType": instance_type,
                "TotalInstanceCount": total,
                "Status": status,
            }
        ],
    }


Fault = Callable[[str, dict[str, Any]], None]
"""(operation, request) -> None, or raises :class:`ApiError`."""


def always(code: str, status: int = 400, message: str = "no") -> Fault:
    def fault(_operation: str, _request: dict[str, Any]) -> None:
        raise ApiError(code, message, status)

    return fault


@dataclass
class FakeAccount:
    """The account's state; :meth:`session` gives a boto3-like session answered by it."""

    applied: list[dict[str, Any]] = field(default_factory=list)
    defaults: list[dict[str, Any]] = field(default_factory=list)
    clusters: dict[str, list[dict[str, Any]]] = field(default_factory=dict)
    """Cluster name -> its instance groups (``group(...)``)."""
    plans: dict[str, dict[str, Any]] = field(default_factory=dict)
    """Training plan name -> its DescribeTrainingPlan answer (``plan(...)``)."""
    stacks: dict[str, dict[str, Any]] = field(default_factory=dict)
    """Deployed stack name -> its template (parameters take their defaults)."""
    physical: dict[str, str] = field(default_factory=dict)
    """Logical id -> physical id of the deployed stacks' resources (DescribeStackResource)."""
    faults: dict[str, Fault] = field(default_factory=dict)
    """Operation name -> a fault every call of it meets."""
    page_size: int = 2
    fakes: dict[str, WireFake] = field(default_factory=dict)

    def __post_init__(self) -> None:
        self.fakes = {
            "service-quotas": WireFake("service-quotas", self._quotas),
            "sagemaker": WireFake("sagemaker", self._sagemaker),
            "cloudformation": WireFake("cloudformation", self._cloudformation),
        }

    # -- answers -----------------------------------------------------------------------------
    def _fault(self, operation: str, request: dict[str, Any]) -> None:
        fault = self.faults.get(operation)
        if fault is not None:
            fault(operation, request)

    def _page(
        self, items: list[dict[str, Any]], request: dict[str, Any], key: str
    ) -> dict[str, Any]:
        start = int(request.get("NextToken") or 0)
        size = min(self.page_size, int(request.get("MaxResults") or self.page_size))
        answer: dict[str, Any] = {key: items[start : start + size]}
        if start + size < len(items):
            answer["NextToken"] = str(start + size)
        return answer

    def _quotas(self, operation: str, request: dict[str, Any]) -> dict[str, Any]:
        self._fault(operation, request)
        assert request["ServiceCode"] == "sagemaker"
        items = self.applied if operation == "ListServiceQuotas" else self.defaults
        return self._page(items, request, "Quotas")

    def _arn(self, name: str) -> str:
        return f"arn:aws:sagemaker:{REGION}:{ACCOUNT}:cluster/{zlib.crc32(name.encode()):012x}"

    def _sagemaker(self, operation: str, request: dict[str, Any]) -> dict[str, Any]:
        self._fault(operation, request)
        if operation == "ListClusters":
            summaries = [
                {
                    "ClusterArn": self._arn(name),
                    "ClusterName": name,
                    "CreationTime": CREATED,
                    "ClusterStatus": "InService",
                }
                for name in self.clusters
            ]
            return self._page(summaries, request, "ClusterSummaries")
        if operation == "DescribeCluster":
            name = request["ClusterName"]
            if name not in self.clusters:
                raise ApiError("ResourceNotFound", f"Cluster {name} not found")
            return {
                "ClusterArn": self._arn(name),
                "ClusterName": name,
                "ClusterStatus": "InService",
                "InstanceGroups": self.clusters[name],
            }
        if operation == "DescribeTrainingPlan":
            name = request["TrainingPlanName"]
            if name not in self.plans:
                raise ApiError("ResourceNotFound", f"Training plan {name} not found")
            return self.plans[name]
        raise ApiError("AccessDeniedException", f"preflight must not call {operation}")

    def _cloudformation(self, operation: str, request: dict[str, Any]) -> dict[str, Any]:
        self._fault(operation, request)
        name = request.get("StackName")
        template = self.stacks.get(str(name))
        if template is None:
            raise ApiError("ValidationError", f"Stack with id {name} does not exist")
        if operation == "DescribeStackResource":
            logical = request["LogicalResourceId"]
            return {
                "StackResourceDetail": {
                    "StackName": name,
                    "LogicalResourceId": logical,
                    "PhysicalResourceId": self.physical[logical],
                    "ResourceType": template["Resources"][logical]["Type"],
                    "LastUpdatedTimestamp": CREATED,
                    "ResourceStatus": "CREATE_COMPLETE",
                }
            }
        if operation == "GetTemplate":
            return {"TemplateBody": json.dumps(template)}
        if operation == "DescribeStacks":
            parameters = [
                {"ParameterKey": key, "ParameterValue": str(value.get("Default", ""))}
                for key, value in template.get("Parameters", {}).items()
            ]
            return {
                "Stacks": [
                    {
                        "StackName": name,
                        "CreationTime": CREATED,
                        "StackStatus": "CREATE_COMPLETE",
                        "Parameters": parameters,
                    }
                ]
            }
        raise ApiError("AccessDenied", f"preflight must not call {operation}")

    # -- the session ---------------------------------------------------------------------------
    def count(self, operation: str) -> int:
        """HTTP attempts of ``operation`` (retries included), across the services."""
        return sum(fake.count(operation) for fake in self.fakes.values())

    def session(self) -> _Session:
        return _Session(self)


class _Session:
    """What ``preflight`` uses of a boto3 session: its region, its credentials, its clients."""

    region_name = REGION

    def __init__(self, account: FakeAccount) -> None:
        self._account = account

    def get_credentials(self) -> object:
        return object()

    def client(self, service: str, config: Any = None) -> Any:
        client = shared_session().client(
            service,
            region_name=REGION,
            aws_access_key_id="AKIDTESTTESTTESTTEST",
            aws_secret_access_key="test-secret",
            config=config,
        )
        self._account.fakes[service].attach(client)
        return client

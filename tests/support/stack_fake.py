"""A CloudFormation stack built from a synthesized template, for ``watch`` tests.

Answers ``DescribeStacks``, ``DescribeStackResource`` and ``GetTemplate`` (through
:class:`~tests.support.wire.WireFake`, so every answer is checked against botocore's model).
The gate's wait condition can be linked to the gate harness's
:class:`~tests.support.aws_fakes.FakeCloudFormation`: its state then comes from the real gate
loop's ``SignalResource``, with the reason worded as CloudFormation words it.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from .aws_fakes import FakeCloudFormation
from .clock import VirtualClock
from .wire import ACCOUNT, REGION, ApiError, WireFake

_UUID = "2b7e1c40-4b1e-11f1-8a3c-0a1b2c3d4e5f"
ResourceStatus = tuple[str, str | None]
"""(ResourceStatus, ResourceStatusReason)."""


@dataclass
class _Resource:
    resource_type: str
    status: str
    reason: str | None
    physical_id: str
    updated_at: float
    link: Callable[[], ResourceStatus] | None = None


class FakeStack:
    """One stack: its status and the resources of ``template`` that were created so far."""

    def __init__(
        self,
        clock: VirtualClock,
        name: str,
        template: Mapping[str, Any],
        parameters: Mapping[str, str] | None = None,
    ) -> None:
        self.clock = clock
        self.name = name
        self.template = template
        declared: Mapping[str, Any] = template.get("Parameters", {})
        self.parameters = {
            key: str((parameters or {}).get(key, declaration.get("Default", "")))
            for key, declaration in declared.items()
        }
        """The stack's parameter values (given, else the template's defaults)."""
        self.stack_id = f"arn:aws:cloudformation:{REGION}:{ACCOUNT}:stack/{name}/{_UUID}"
        self.created_at = clock.time()
        self.exists = True
        self.status = "CREATE_IN_PROGRESS"
        self.reason: str | None = None
        self.resources: dict[str, _Resource] = {}
        self.fake = WireFake("cloudformation", self._handle)

    def create(
        self, logical_id: str, status: str = "CREATE_COMPLETE", physical_id: str = ""
    ) -> None:
        """The resource ``logical_id`` of the template now exists with ``status``."""
        resource_type = str(self.template["Resources"][logical_id]["Type"])
        self.resources[logical_id] = _Resource(
            resource_type, status, None, physical_id or logical_id, self.clock.time()
        )

    def link_wait_condition(self, logical_id: str, cfn: FakeCloudFormation) -> None:
        """Create the wait condition ``logical_id``; its state follows the gate's signals to
        it (``cfn``), and the stack rolls back when it fails, as CloudFormation does."""
        self.create(logical_id, "CREATE_IN_PROGRESS")

        def state() -> ResourceStatus:
            condition = cfn.condition(logical_id)
            if condition.status != "CREATE_FAILED":
                return condition.status, None
            return condition.status, condition.reason

        self.resources[logical_id].link = state

    def _resource_state(self, logical_id: str) -> _Resource:
        resource = self.resources[logical_id]
        if resource.link is not None:
            status, reason = resource.link()
            if (status, reason) != (resource.status, resource.reason):
                resource.status, resource.reason = status, reason
                resource.updated_at = self.clock.time()
            if status == "CREATE_FAILED" and "ROLLBACK" not in self.status:
                self.status = "ROLLBACK_IN_PROGRESS"
                self.reason = f"The following resource(s) failed to create: [{logical_id}]. "
        return resource

    def _handle(self, operation: str, params: dict[str, Any]) -> dict[str, Any]:
        stack = params.get("StackName")
        if not self.exists or stack not in (self.name, self.stack_id):
            raise ApiError("ValidationError", f"Stack with id {stack} does not exist")
        for logical_id in list(self.resources):
            self._resource_state(logical_id)
        if operation == "DescribeStacks":
            description: dict[str, Any] = {
                "StackId": self.stack_id,
                "StackName": self.name,
                "CreationTime": datetime.fromtimestamp(self.created_at, UTC),
                "StackStatus": self.status,
            }
            if self.reason:
                description["StackStatusReason"] = self.reason
            if self.parameters:
                description["Parameters"] = [
                    {"ParameterKey": key, "ParameterValue": value}
                    for key, value in self.parameters.items()
                ]
            return {"Stacks": [description]}
        if operation == "GetTemplate":
            return {"TemplateBody": json.dumps(self.template), "StagesAvailable": ["Original"]}
        if operation == "DescribeStackResource":
            logical_id = params.get("LogicalResourceId", "")
            if logical_id not in self.resources:
                raise ApiError(
                    "ValidationError", f"Resource {logical_id} does not exist for stack {self.name}"
                )
            resource = self.resources[logical_id]
            detail: dict[str, Any] = {
                "StackName": self.name,
                "StackId": self.stack_id,
                "LogicalResourceId": logical_id,
                "PhysicalResourceId": resource.physical_id,
                "ResourceType": resource.resource_type,
                "LastUpdatedTimestamp": datetime.fromtimestamp(resource.updated_at, UTC),
                "ResourceStatus": resource.status,
            }
            if resource.reason:
                detail["ResourceStatusReason"] = resource.reason
            return {"StackResourceDetail": detail}
        raise ApiError("ValidationError", f"{operation} is not simulated")

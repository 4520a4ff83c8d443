"""The AWS edge of ``plan``: the deployed stack as the baseline, read-only, through ``watch``'s
reader (the same credential chain, bounded retries and one-line errors).

CloudFormation ``GetTemplate`` (the deployed template) and ``DescribeStacks`` (its parameter
values); SageMaker ``DescribeCluster`` for each cluster of the deployed template (the live
``CurrentCount`` of each group, so the plan counts the nodes a change terminates from what
runs). A cluster whose template name is not a plain string is found by
``DescribeStackResource`` (its physical id), and so is a nested stack (its stack id), whose
template, parameters and clusters are then read as the parent's.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from botocore.exceptions import ClientError  # type: ignore[import-untyped, unused-ignore]

from .._assembly.stacks import deployed_parameters
from ..watch.aws import FatalError, Reader, Transient
from .model import cluster_names

__all__ = ["Baseline", "DeployedReader", "FatalError"]


class Baseline:
    """The deployed stack: its template, parameter values and live group counts."""

    def __init__(
        self,
        template: object,
        parameters: Mapping[str, str],
        live: Mapping[str, Mapping[str, int]],
        notes: tuple[str, ...] = (),
    ) -> None:
        self.template = template
        self.parameters = dict(parameters)
        self.live = {k: dict(v) for k, v in live.items()}
        self.notes = notes
        """Why some live counts are missing (e.g. a cluster not found)."""


class DeployedReader(Reader):
    """``watch``'s :class:`~hyperpod_constructs.tools.watch.aws.Reader` with the reads ``plan``
    needs (every call bounded; errors are :class:`FatalError`, exit 2)."""

    def _once(self, what: str, call: Any, shape: str) -> Any:
        """``call()`` once, its answer checked against the botocore shape ``shape``."""
        try:
            return self._call(what, call, shape)
        except Transient as error:  # botocore retried already; plan does not loop
            raise FatalError(str(error)) from None

    def cloudformation(self) -> Any:
        """The CloudFormation client (``plan --change-set``)."""
        return self._cfn

    def stack_parameters(self, stack_name: str) -> dict[str, str]:
        """The deployed stack's parameter values (``DescribeStacks``)."""
        what = f"cloudformation:DescribeStacks of stack {stack_name}"
        try:
            response = self._once(
                what, lambda: self._cfn.describe_stacks(StackName=stack_name), "DescribeStacks"
            )
        except ClientError as error:
            raise self._fatal(what, error) from None
        stacks = response.get("Stacks") or [{}]
        return deployed_parameters(stacks[0])

    def _physical_id(self, stack_name: str, logical_id: str) -> str | None:
        try:
            state = self.resource(stack_name, logical_id)
        except Transient as error:
            raise FatalError(str(error)) from None
        return state.physical_id if state is not None else None

    def group_counts(self, cluster: str) -> dict[str, int] | None:
        """Group name -> ``CurrentCount`` of a running cluster (None: no such cluster)."""
        what = f"sagemaker:DescribeCluster {cluster}"
        try:
            described = self.describe_cluster(cluster)
        except Transient as error:  # botocore retried already; plan does not loop
            raise FatalError(str(error)) from None
        if described is None:
            return None
        counts: dict[str, int] = {}
        for group in described.get("InstanceGroups") or []:
            name, count = group.get("InstanceGroupName"), group.get("CurrentCount")
            if count is None:
                continue
            # The API's shape: a group name and a count of nodes, 0 or more.
            if (
                not isinstance(name, str)
                or isinstance(count, bool)
                or not isinstance(count, int)
                or count < 0
            ):
                raise FatalError(
                    f"{what} answered CurrentCount {count!r} for group {name!r}: not a count "
                    "of nodes (0 or more), so plan cannot count what the update terminates"
                )
            counts[name] = count
        return counts

    def nested_baseline(self, stack_name: str, logical_id: str) -> Baseline | None:
        """The baseline of the nested stack ``logical_id`` of the deployed stack ``stack_name``
        (its id by ``DescribeStackResource``; None: not created)."""
        physical_id = self._physical_id(stack_name, logical_id)
        return self.baseline(physical_id) if physical_id else None

    def baseline(self, stack_name: str) -> Baseline:
        """Template, parameters and live counts of the deployed stack ``stack_name``."""
        template = self.deployed_template(stack_name, where="is ")
        parameters = self.stack_parameters(stack_name)
        live: dict[str, dict[str, int]] = {}
        notes: list[str] = []
        if not isinstance(template, Mapping):
            return Baseline(template, parameters, live)
        names = cluster_names(template, parameters, {"AWS::StackName": stack_name})
        resources = template.get("Resources")
        for logical_id, resource in (resources if isinstance(resources, Mapping) else {}).items():
            if (
                not isinstance(resource, Mapping)
                or resource.get("Type") != "AWS::SageMaker::Cluster"
            ):
                continue
            name = names.get(logical_id) or self._physical_id(stack_name, logical_id)
            counts = self.group_counts(name) if name is not None else None
            if counts is None:
                notes.append(f"cluster {name or logical_id} not found: counts from its targets")
            else:
                live[logical_id] = counts
        return Baseline(template, parameters, live, tuple(notes))

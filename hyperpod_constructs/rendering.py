"""Instance groups as CloudFormation ``AWS::SageMaker::Cluster`` ``InstanceGroups[]`` objects."""

from __future__ import annotations

from typing import Any

from .instance_group import InstanceGroup
from .lifecycle import BoundLifecycle


def render_group(
    group: InstanceGroup,
    *,
    execution_role_arn: str,
    lifecycle: BoundLifecycle | None,
    continuous: bool = True,
) -> dict[str, Any]:
    """The group in CloudFormation's shape (PascalCase keys, optional keys omitted).

    ``MinInstanceCount`` only exists in Continuous provisioning mode: with ``continuous``
    false it is left out (validation already rejects a value above 0 there).

    Rendered as plain JSON rather than through the L1 property structs so that a cluster of
    100 groups costs one jsii round trip, not hundreds.
    """
    slurm: dict[str, Any] = {"NodeType": group.node_type.value}
    if group.partition is not None:
        slurm["PartitionNames"] = [group.partition]
    body: dict[str, Any] = {
        "InstanceGroupName": group.name,
        "InstanceType": group.instance_type.name,
        "InstanceCount": group.instance_count,
        "ExecutionRole": execution_role_arn,
        "SlurmConfig": slurm,
    }
    if continuous and group.min_instance_count is not None:
        body["MinInstanceCount"] = group.min_instance_count
    if lifecycle is not None:
        body["LifeCycleConfig"] = {
            "SourceS3Uri": lifecycle.source_s3_uri,
            "OnCreate": lifecycle.on_create,
        }
    if group.threads_per_core is not None:
        body["ThreadsPerCore"] = group.threads_per_core
    if group.deep_health_checks:
        body["OnStartDeepHealthChecks"] = [check.value for check in group.deep_health_checks]
    if group.storage:
        body["InstanceStorageConfigs"] = [storage.render() for storage in group.storage]
    if group.training_plan_arn is not None:
        body["TrainingPlanArn"] = group.training_plan_arn
    if group.image_id is not None:
        body["ImageId"] = group.image_id
    return body

"""Instance groups as CloudFormation ``AWS::SageMaker::Cluster`` ``InstanceGroups[]`` objects."""

from __future__ import annotations

from typing import Any

from ..group_fields import absent
from ..instance_group import GROUP_FIELDS, InstanceGroup
from ..lifecycle import BoundLifecycle

_L1_NAMES = {"VolumeSizeInGB": "volumeSizeInGb"}
"""CloudFormation names whose aws-cdk-lib property name is not the name with a lower-case first
letter (aws-cdk-lib's L1 mappers, which drop a name they do not know: tests/test_group_fields.py
renders every field and compares the template with the render)."""


def render_group(
    group: InstanceGroup,
    *,
    execution_role_arn: str,
    lifecycle: BoundLifecycle | None,
    continuous: bool = True,
    slurm_config: bool = True,
    override_vpc_config: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """The group in CloudFormation's shape (PascalCase keys, optional keys omitted).

    ``MinInstanceCount`` only exists in Continuous provisioning mode: with ``continuous``
    false it is left out (validation already rejects a value above 0 there). With
    ``slurm_config`` false the group has no ``SlurmConfig`` (the legacy layout of
    ``provisioning_parameters.json``, :attr:`SlurmLayout.LIFECYCLE_SCRIPTS`).

    The fields with a codec in ``GROUP_FIELDS`` render from the table; the others from the
    cluster's context (the role's ARN, the bound lifecycle scripts, the provisioning mode, the
    layout and the network override). Rendered as plain JSON rather than through the L1
    property structs so that a cluster of 100 groups costs one jsii round trip, not hundreds
    (tests/test_group_fields.py checks that every key reaches the template).
    """
    body: dict[str, Any] = {
        field.cfn: field.codec.render(value)
        for field in GROUP_FIELDS
        if field.cfn is not None and field.codec is not None
        if not absent(value := getattr(group, field.keyword))
    }
    # The fields rendered from context (the table's rows without a codec).
    body.update(_instance_types(group))
    body["ExecutionRole"] = execution_role_arn
    if slurm_config:
        slurm: dict[str, Any] = {"NodeType": group.node_type.value}
        if group.partition is not None:
            slurm["PartitionNames"] = [group.partition]
        body["SlurmConfig"] = slurm
    if continuous and group.min_instance_count is not None:
        body["MinInstanceCount"] = group.min_instance_count
    if lifecycle is not None:
        body["LifeCycleConfig"] = {
            "SourceS3Uri": lifecycle.source_s3_uri,
            lifecycle.entry_field: lifecycle.on_create,
        }
    if override_vpc_config is not None:
        body["OverrideVpcConfig"] = override_vpc_config
    return body


def _instance_types(group: InstanceGroup) -> dict[str, Any]:
    """``InstanceType``, or for a flexible group ``InstanceRequirements.InstanceTypes`` in
    priority order (the API makes the two mutually exclusive)."""
    if group.instance_types:
        return {"InstanceRequirements": {"InstanceTypes": [t.name for t in group.instance_types]}}
    return {"InstanceType": group.instance_type.name}


def to_l1(value: Any) -> Any:
    """A CloudFormation-shaped value (PascalCase keys) in the shape aws-cdk-lib's ``CfnCluster``
    properties take (camelCase keys), so that the L1 renders it back and escape-hatch overrides
    such as ``InstanceGroups.1.OverrideVpcConfig`` merge into it."""
    if isinstance(value, dict):
        return {_L1_NAMES.get(key, key[:1].lower() + key[1:]): to_l1(v) for key, v in value.items()}
    if isinstance(value, list):
        return [to_l1(item) for item in value]
    return value


DELETED = object()
"""The value :func:`apply_overrides` records for a deletion override."""


def apply_overrides(
    resource: dict[str, Any], overrides: list[tuple[str, Any]]
) -> dict[str, Any] | None:
    """``resource`` (``{"Properties": {...}}``, CloudFormation's shape) with escape-hatch
    overrides applied in order, as aws-cdk-lib merges them into the rendered resource (a path
    of dot-separated keys, a number indexing a list; an object merged into an object, anything
    else replacing; :data:`DELETED` removing). ``None`` when an override cannot be followed
    here (a path through a missing list element, an escaped dot): the caller then cannot know
    the final values (pure; ``resource`` is not changed)."""
    import copy

    result = copy.deepcopy(resource)
    for path, value in overrides:
        if "\\" in path:
            return None
        *parents, last = path.split(".")
        node: Any = result
        for part in parents:
            if isinstance(node, list):
                if not part.isdigit() or int(part) >= len(node):
                    return None
                node = node[int(part)]
            elif isinstance(node, dict):
                if not isinstance(node.get(part), (dict, list)):
                    node[part] = {}
                node = node[part]
            else:
                return None
        if isinstance(node, list):
            if not last.isdigit() or int(last) >= len(node):
                return None
            if value is DELETED:
                return None
            node[int(last)] = _merged(node[int(last)], value)
        elif isinstance(node, dict):
            if value is DELETED:
                node.pop(last, None)
            else:
                node[last] = _merged(node.get(last), value)
        else:
            return None
    return result


def _merged(target: Any, value: Any) -> Any:
    """``value`` deep-merged into ``target`` when both are objects, else ``value``."""
    if isinstance(target, dict) and isinstance(value, dict):
        merged = dict(target)
        for key, item in value.items():
            merged[key] = _merged(merged.get(key), item)
        return merged
    return value

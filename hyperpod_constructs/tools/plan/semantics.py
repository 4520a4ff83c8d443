"""What changing each property of ``AWS::SageMaker::Cluster`` does to a running cluster: the one
table the plan classifies every change with (pure data, standard library only).

Each row names a property by its JSON pointer in the CloudFormation resource schema
(``/properties/InstanceGroups/*/InstanceType``), the :class:`Effect` of changing it and the
source it comes from. ``tests/test_plan_semantics.py`` checks the table against the schema that
cfn-lint ships: the rows that replace the cluster are exactly the schema's
``createOnlyProperties``, the read-only rows are among its ``readOnlyProperties`` and every row
names a property the schema has.

The table is an allow-list: a change is safe (exit 0) only where a row, sourced below, says
HyperPod applies it in place, to new nodes only or by a software update (:data:`SAFE`). A
property without a row, at any depth (one added to the schema after this table, e.g.
``InstanceRequirements``), is :attr:`Effect.UNKNOWN`: "cannot tell", counted as disruptive
(exit 3) with its path and the reason, until someone writes its row from a source. A
restricted instance group (``RestrictedInstanceGroups``) is planned group by group with the
rows written for it (its name and count, as an instance group's); its other properties have
no row yet.

Sources, cited per row:

- ``schema``: the resource schema (cfn-lint 1.58's copy): ``createOnlyProperties`` are
  ``ClusterName``, ``VpcConfig`` and ``Orchestrator/Eks``. Earlier versions of the schema also
  listed ``InstanceGroups/*/InstanceGroupName``, ``InstanceType``, ``ExecutionRole``,
  ``ThreadsPerCore`` and ``OverrideVpcConfig`` (any change to them replaced the whole cluster);
  the current one leaves them to HyperPod's ``UpdateCluster``, which refuses them for an
  existing group (next source).
- ``update-guide``: AWS's guide "Updating SageMaker HyperPod cluster configuration"
  (docs.aws.amazon.com/sagemaker/latest/dg/, the ``update-cluster`` command): to update an
  existing instance group its instance type, execution role and threads per core must stay as
  created; a new group name adds a group; ``InstanceCount`` scales; a lower count or a group
  left out scales in or removes it (see "Scaling down a SageMaker HyperPod cluster").
- ``api``: the SageMaker API reference (``UpdateCluster``, ``ClusterInstanceGroupSpecification``,
  ``ClusterLifeCycleConfig``, ``UpdateClusterSoftware``), as botocore's model documents it.
- ``continuous-guide``: "Continuous provisioning for enhanced cluster operations with Slurm"
  and the MinCount announcement (the 3-hour window, rollback to the last values in service).
- ``slurm-guide``: the Slurm API configuration reference (``SlurmConfig.NodeType`` is fixed
  when the group is created).
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum

from ..._core.expect import require

CLUSTER = "/properties"
GROUP = "/properties/InstanceGroups/*"
"""Prefix of an instance group's properties (``*``: any group, as the schema writes it)."""
RESTRICTED = "/properties/RestrictedInstanceGroups/*"
"""Prefix of a restricted instance group's properties."""


class Effect(Enum):
    """What a change of a property does to the running cluster."""

    REPLACES_CLUSTER = "replaces-cluster"
    """CloudFormation creates a new cluster and deletes the old one: every node terminated."""
    REFUSED = "refused"
    """HyperPod (or CloudFormation) refuses the change in place: the update fails and rolls
    back."""
    IDENTITY = "identity"
    """The group's name: a new name is a removal (its nodes terminated) plus an addition."""
    SCALE = "scale"
    """``InstanceCount``: nodes added, or terminated on scale-in."""
    MINIMUM = "minimum"
    """``MinInstanceCount``: HyperPod holds the group until the minimum is up (3-hour window)."""
    NEW_NODES = "new-nodes"
    """Applied to nodes created from now on (scale-out, replacement); running nodes keep the old
    value."""
    SOFTWARE_UPDATE = "software-update"
    """HyperPod rolls it onto the running nodes (a software update: nodes are re-imaged)."""
    IN_PLACE = "in-place"
    """HyperPod applies it to the running cluster; no node is terminated."""
    UNKNOWN = "unknown"
    """Cannot tell: no row proves the change is applied in place (a property without a row, or
    one AWS may refuse); counted as disruptive (exit 3)."""
    READ_ONLY = "read-only"
    """Set by the service (``CurrentCount``); never a change a template asks for."""


@dataclass(frozen=True)
class PropertyRule:
    """One row of :data:`RULES`."""

    pointer: str
    """The property's JSON pointer in the resource schema."""
    effect: Effect
    """What the change does to the cluster or its nodes."""
    what: str
    """What HyperPod does when the property changes, in its words (one clause)."""
    source: str
    """Where that comes from (see the module docstring)."""


RULES: tuple[PropertyRule, ...] = (
    # -- the cluster ---------------------------------------------------------------------------
    PropertyRule(
        f"{CLUSTER}/ClusterName",
        Effect.REPLACES_CLUSTER,
        "create-only: CloudFormation creates a new cluster and deletes the old one",
        "schema createOnlyProperties",
    ),
    PropertyRule(
        f"{CLUSTER}/VpcConfig",
        Effect.REPLACES_CLUSTER,
        "create-only: CloudFormation creates a new cluster and deletes the old one",
        "schema createOnlyProperties",
    ),
    PropertyRule(
        f"{CLUSTER}/Orchestrator/Eks",
        Effect.REPLACES_CLUSTER,
        "create-only: CloudFormation creates a new cluster and deletes the old one",
        "schema createOnlyProperties",
    ),
    PropertyRule(
        f"{CLUSTER}/NodeRecovery",
        Effect.IN_PLACE,
        "UpdateCluster sets the node recovery mode of the running cluster",
        "api UpdateCluster.NodeRecovery",
    ),
    PropertyRule(
        f"{CLUSTER}/NodeProvisioningMode",
        Effect.UNKNOWN,
        "cannot tell: UpdateCluster takes it, but AWS's continuous-provisioning guide says "
        "clusters of the previous scaling model cannot be migrated to Continuous provisioning, "
        "so the update may be refused (counted as disruptive)",
        "api UpdateCluster.NodeProvisioningMode; continuous-guide",
    ),
    PropertyRule(
        f"{CLUSTER}/Tags",
        Effect.IN_PLACE,
        "tags are updated in place",
        "schema tagging.tagUpdatable",
    ),
    PropertyRule(
        f"{CLUSTER}/TieredStorageConfig",
        Effect.IN_PLACE,
        "UpdateCluster enables, disables or resizes managed tiered checkpointing",
        "api UpdateCluster.TieredStorageConfig",
    ),
    PropertyRule(
        f"{CLUSTER}/AutoScaling",
        Effect.IN_PLACE,
        "UpdateCluster enables or disables autoscaling",
        "api UpdateCluster.AutoScaling",
    ),
    PropertyRule(
        f"{CLUSTER}/ClusterRole",
        Effect.IN_PLACE,
        "UpdateCluster sets it, except while autoscaling is enabled (then refused)",
        "api UpdateCluster.ClusterRole",
    ),
    # -- an instance group --------------------------------------------------------------------
    PropertyRule(
        f"{GROUP}/InstanceGroupName",
        Effect.IDENTITY,
        "a new name is a new group: the old group is removed (its nodes terminated) and the "
        "new one provisioned from zero",
        "update-guide (InstanceGroupName)",
    ),
    PropertyRule(
        f"{GROUP}/InstanceCount",
        Effect.SCALE,
        "HyperPod launches the added nodes, or terminates nodes on scale-in",
        "update-guide (InstanceCount); api ClusterInstanceGroupSpecification.InstanceCount",
    ),
    PropertyRule(
        f"{GROUP}/MinInstanceCount",
        Effect.MINIMUM,
        "a raised minimum holds the group in Updating until it is met, and HyperPod rolls the "
        "group back to its last values in service if that takes more than 3 hours",
        "api ClusterInstanceGroupSpecification.MinInstanceCount; continuous-guide",
    ),
    PropertyRule(
        f"{GROUP}/InstanceType",
        Effect.REFUSED,
        "an existing group keeps the instance type it was created with: UpdateCluster refuses "
        "a new one (rename the group to replace its nodes)",
        "update-guide (InstanceType); create-only in earlier versions of the schema",
    ),
    PropertyRule(
        f"{GROUP}/ExecutionRole",
        Effect.REFUSED,
        "an existing group keeps the execution role it was created with: UpdateCluster "
        "refuses a new one",
        "update-guide (ExecutionRole); create-only in earlier versions of the schema",
    ),
    PropertyRule(
        f"{GROUP}/ThreadsPerCore",
        Effect.REFUSED,
        "an existing group keeps the threads per core it was created with: UpdateCluster "
        "refuses a new value",
        "update-guide (ThreadsPerCore); create-only in earlier versions of the schema",
    ),
    PropertyRule(
        f"{GROUP}/OverrideVpcConfig",
        Effect.REFUSED,
        "running nodes cannot move to other subnets or security groups: the change is refused "
        "for an existing group (inferred: create-only in earlier versions of the schema, and no "
        "AWS guide describes changing it)",
        "create-only in earlier versions of the schema",
    ),
    PropertyRule(
        f"{GROUP}/SlurmConfig/NodeType",
        Effect.REFUSED,
        "a group's Slurm node type is fixed when it is created",
        "slurm-guide",
    ),
    PropertyRule(
        f"{GROUP}/LifeCycleConfig",
        Effect.NEW_NODES,
        "lifecycle scripts run when HyperPod creates a node: nodes created from now on run the "
        "new scripts, running nodes keep what they ran",
        "api ClusterLifeCycleConfig.OnCreate",
    ),
    PropertyRule(
        f"{GROUP}/OnStartDeepHealthChecks",
        Effect.NEW_NODES,
        "deep health checks run on nodes as they start: new and replaced nodes",
        "api ClusterInstanceGroupSpecification.OnStartDeepHealthChecks",
    ),
    PropertyRule(
        f"{GROUP}/InstanceStorageConfigs",
        Effect.NEW_NODES,
        "volumes are attached to nodes when they are launched: nodes created from now on get "
        "the new storage (inferred from the API reference)",
        "api ClusterEbsVolumeConfig",
    ),
    PropertyRule(
        f"{GROUP}/ImageId",
        Effect.SOFTWARE_UPDATE,
        "HyperPod rolls the new image onto the group's running nodes (UpdateClusterSoftware: "
        "nodes are re-imaged, jobs on them interrupted), in the batches of the group's "
        "ScheduledUpdateConfig when it sets a rolling policy, else the whole group",
        "api ClusterInstanceGroupSpecification.ImageId, UpdateClusterSoftware; schema handlers",
    ),
    PropertyRule(
        f"{GROUP}/ImageReleaseVersion",
        Effect.SOFTWARE_UPDATE,
        "triggers a software update of the group's running nodes (UpdateClusterSoftware)",
        "schema ImageReleaseVersion description",
    ),
    PropertyRule(
        f"{GROUP}/ScheduledUpdateConfig",
        Effect.IN_PLACE,
        "changes when and in which batches future image updates roll; nothing runs now",
        "api ScheduledUpdateConfig",
    ),
    # -- a restricted instance group: by the instance groups' rows where the API says alike ----
    PropertyRule(
        f"{RESTRICTED}/InstanceGroupName",
        Effect.IDENTITY,
        "a new name is a new restricted group: the old one is removed (its nodes terminated) "
        "and the new one provisioned from zero",
        "api UpdateCluster.RestrictedInstanceGroups (the groups by name, as InstanceGroups)",
    ),
    PropertyRule(
        f"{RESTRICTED}/InstanceCount",
        Effect.SCALE,
        "HyperPod launches the added nodes, or terminates nodes on scale-in",
        "api UpdateCluster.RestrictedInstanceGroups; "
        "ClusterRestrictedInstanceGroupSpecification.InstanceCount",
    ),
    PropertyRule(
        f"{RESTRICTED}/InstanceType",
        Effect.UNKNOWN,
        "cannot tell: the update guide says an existing instance group keeps its instance type, "
        "but no AWS guide says so of a restricted group (counted as disruptive)",
        "api ClusterRestrictedInstanceGroupSpecification.InstanceType; the update guide "
        "covers InstanceGroups only",
    ),
    PropertyRule(
        f"{GROUP}/CurrentCount",
        Effect.READ_ONLY,
        "set by HyperPod",
        "schema readOnlyProperties",
    ),
)
"""The table, cluster properties first."""

RULE_BY_POINTER: dict[str, PropertyRule] = {rule.pointer: rule for rule in RULES}

UNORDERED: frozenset[str] = frozenset(
    {
        "/properties/InstanceGroups",
        f"{GROUP}/AutoPatchConfig/DeploymentConfig/AutoRollbackConfiguration",
        f"{GROUP}/InstanceStorageConfigs",
        f"{GROUP}/KubernetesConfig/Taints",
        f"{GROUP}/OnStartDeepHealthChecks",
        f"{GROUP}/OverrideVpcConfig/SecurityGroupIds",
        f"{GROUP}/OverrideVpcConfig/Subnets",
        f"{GROUP}/ScheduledUpdateConfig/DeploymentConfig/AutoRollbackConfiguration",
        f"{GROUP}/SlurmConfig/PartitionNames",
        "/properties/RestrictedInstanceGroups",
        "/properties/RestrictedInstanceGroups/*/InstanceStorageConfigs",
        "/properties/RestrictedInstanceGroups/*/OnStartDeepHealthChecks",
        "/properties/RestrictedInstanceGroups/*/OverrideVpcConfig/SecurityGroupIds",
        "/properties/RestrictedInstanceGroups/*/OverrideVpcConfig/Subnets",
        "/properties/Tags",
        "/properties/VpcConfig/SecurityGroupIds",
        "/properties/VpcConfig/Subnets",
    }
)
"""The lists the schema marks ``insertionOrder: false``: a new order is no change
(``tests/test_plan_semantics.py`` derives this set from cfn-lint's schema and compares)."""

UNKNOWN_WHAT = (
    "cannot tell: no row of plan's table (from the resource schema, the UpdateCluster API "
    "model or AWS's guides) says HyperPod applies this change in place, so it is counted as "
    "disruptive (not create-only in the schema, which does not say whether UpdateCluster "
    "accepts it)"
)
"""What an :attr:`Effect.UNKNOWN` change says when the property has no row."""

SAFE: frozenset[Effect] = frozenset({Effect.IN_PLACE, Effect.NEW_NODES, Effect.SOFTWARE_UPDATE})
"""The effects whose rows allow a change (exit 0): applied in place, to new nodes only, or by a
rolling software update. ``SCALE``, ``MINIMUM`` and ``IDENTITY`` are decided by their values
(a scale-in or a rename terminates nodes); every other effect is disruptive."""


_SEVERITY = (Effect.REPLACES_CLUSTER, Effect.REFUSED)


def rules_below(pointer: str) -> tuple[PropertyRule, ...]:
    """The rows of properties inside ``pointer`` (``SlurmConfig`` -> ``SlurmConfig/NodeType``),
    the most severe first: what an object added, removed or hidden in an expression as a
    whole may change."""
    below = [rule for rule in RULES if rule.pointer.startswith(pointer + "/")]
    return tuple(
        sorted(
            below,
            key=lambda r: _SEVERITY.index(r.effect) if r.effect in _SEVERITY else len(_SEVERITY),
        )
    )


def rule_for(pointer: str) -> PropertyRule:
    """The row of ``pointer`` or of its nearest enclosing property (``LifeCycleConfig/OnCreate``
    is classified as ``LifeCycleConfig``); an :attr:`Effect.UNKNOWN` row for a property the
    table does not know (pure).

    :param pointer: the property's JSON pointer in the resource schema, e.g.
        ``/properties/InstanceGroups/*/InstanceType``.
    """
    require("rule_for", "pointer", pointer, str)
    base = GROUP if pointer.startswith(GROUP + "/") else CLUSTER
    path = pointer
    while path.startswith(base + "/"):
        rule = RULE_BY_POINTER.get(path)
        if rule is not None:
            return rule
        path = path.rsplit("/", 1)[0]
    return PropertyRule(pointer, Effect.UNKNOWN, UNKNOWN_WHAT, "not in this table")

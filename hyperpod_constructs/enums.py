"""Closed sets of values the HyperPod API defines."""

from __future__ import annotations

import enum


class NodeType(enum.Enum):
    """The Slurm role of an instance group (``SlurmConfig.NodeType``, immutable after creation)."""

    CONTROLLER = "Controller"
    LOGIN = "Login"
    COMPUTE = "Compute"


class NodeProvisioningMode(enum.Enum):
    """How HyperPod provisions nodes.

    ``CONTINUOUS`` (the library's default) provisions asynchronously, retries failed launches,
    and is required for ``min_instance_count``. ``STANDARD`` omits the property: the legacy
    all-or-nothing model.
    """

    CONTINUOUS = "Continuous"
    STANDARD = "Standard"


class NodeRecovery(enum.Enum):
    """What HyperPod does with a faulty node: replace or reboot it, or only label it."""

    AUTOMATIC = "Automatic"
    NONE = "None"


class DeepHealthCheck(enum.Enum):
    """On-start deep health checks for accelerator instance groups."""

    INSTANCE_STRESS = "InstanceStress"
    INSTANCE_CONNECTIVITY = "InstanceConnectivity"


class SlurmConfigStrategy(enum.Enum):
    """``Orchestrator.Slurm.SlurmConfigStrategy``: only valid in STANDARD provisioning mode."""

    OVERWRITE = "Overwrite"
    MANAGED = "Managed"
    MERGE = "Merge"


class SlurmLayout(enum.Enum):
    """Where the cluster's Slurm layout (node types and partitions) is defined.

    ``API`` (the default): each group's ``SlurmConfig`` (``NodeType``, ``PartitionNames``);
    required in CONTINUOUS provisioning mode. ``LIFECYCLE_SCRIPTS``: the legacy layout in the
    lifecycle scripts' ``provisioning_parameters.json``; the groups are rendered without
    ``SlurmConfig`` (STANDARD mode only, where HyperPod still reads that file).
    """

    API = "api"
    LIFECYCLE_SCRIPTS = "lifecycle-scripts"


class NetworkInterfaceType(enum.Enum):
    """``NetworkInterface.InterfaceType`` of a group: EFA with IP traffic, or EFA only."""

    EFA = "efa"
    EFA_ONLY = "efa-only"


class CapacityType(enum.Enum):
    """``CapacityRequirements`` of a group: On-Demand or Spot capacity."""

    ON_DEMAND = "OnDemand"
    SPOT = "Spot"


class BatchSizeType(enum.Enum):
    """How a rolling AMI update counts its batches (``CapacitySizeConfig.Type``)."""

    INSTANCE_COUNT = "INSTANCE_COUNT"
    CAPACITY_PERCENTAGE = "CAPACITY_PERCENTAGE"
    """A percentage of the group's instances: the value of HyperPod's ``NodeUnavailabilityType``
    (the shape of ``RollingDeploymentPolicy.MaximumBatchSize.Type`` in the API model) and of the
    CloudFormation schema's pattern. Not the SageMaker endpoints' ``CapacitySizeType`` value
    ``CAPACITY_PERCENT``, which HyperPod rejects."""
    CAPACITY_PERCENT = "CAPACITY_PERCENTAGE"
    """Deprecated alias of :attr:`CAPACITY_PERCENTAGE` (the same member, rendered
    ``CAPACITY_PERCENTAGE``; not the endpoints' ``CAPACITY_PERCENT``, which HyperPod rejects)."""


class AutoPatchStrategy(enum.Enum):
    """``AutoPatchConfig.PatchingStrategy``: how HyperPod applies security-patch AMI updates
    to a group (automatic patching, opt-in per group).

    ``WHEN_IDLE`` cordons every instance and patches each one as it becomes idle (no running
    jobs), returning it to service right after; instances that never become idle stay on the
    previous AMI. ``WHEN_ALL_IDLE`` waits until every instance is idle, then patches them all;
    if they do not all become idle, nothing is patched. The API's third strategy,
    ``DrainFirst``, is available only for clusters orchestrated by Amazon EKS (API reference,
    ``ClusterAutoPatchConfig``), and the CloudFormation schema allows only these two.
    """

    WHEN_IDLE = "WhenIdle"
    WHEN_ALL_IDLE = "WhenAllIdle"

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

"""The Slurm layout HyperPod accepts, stated once: how many instance groups of each Slurm node
type a cluster has, which node types take a partition, and what continuous provisioning
changes. Validation (``layout_rules``, ``partition_rules``, ``provisioning_rules``),
``convert`` and ``plan`` read these facts; none keeps a copy of its own.

Sources (quoted in the rules that cite them, docs/validation.md):

- the Slurm configuration reference (:data:`~hyperpod_constructs._core.sources.SLURM_REFERENCE`,
  ``SlurmConfig``): Controller, "Exactly one instance group must have this node type"; Login,
  "At most one instance group can have this node type"; Compute, "Can have multiple instance
  groups with this node type"; ``PartitionNames`` "not allowed for Controller or Login node
  types"; "All nodes are automatically added to the universal ``dev`` partition";
- the continuous provisioning guide (:data:`~hyperpod_constructs._core.sources.SLURM_SCALING`):
  multi-head node configuration via API-based Slurm topology and ``SlurmConfigStrategy`` are
  not supported with continuous provisioning, and clusters that rely on the legacy
  ``provisioning_parameters.json`` are not compatible with it.

One deliberate difference from the reference: it calls ``PartitionNames`` required for Compute
groups, while the API model (``ClusterSlurmConfig``: only ``NodeType`` is required,
``PartitionNames`` has 0..1 names) and the CloudFormation schema accept a Compute group
without one, and public samples deploy that way. What AWS accepts, the library accepts: a
Compute group without a partition is valid, and its nodes are then only in ``dev``
(:attr:`NodeTypeLayout.partition_advised`, a warning).
"""

from __future__ import annotations

from dataclasses import dataclass

_NUMBERS = {0: "no", 1: "one"}


@dataclass(frozen=True)
class NodeTypeLayout:
    """What the layout allows for one Slurm node type (``SlurmConfig.NodeType``)."""

    node_type: str
    """The API's value: ``Controller``, ``Login`` or ``Compute``."""
    min_groups: int
    """The fewest groups of this type a cluster has."""
    max_groups: int | None
    """The most groups of this type a cluster may have (None: any number)."""
    partition_allowed: bool
    """Whether its groups may name a partition (``SlurmConfig.PartitionNames``)."""
    partition_advised: bool = False
    """Whether a group without a partition gets a warning (its nodes are only in ``dev``)."""

    def groups(self) -> str:
        """How many groups of this type a cluster has, in words: ``exactly one Controller
        group``, ``at most one Login group``, ``any number of Compute groups``."""
        noun = f"{self.node_type} group"
        if self.max_groups is None:
            return f"any number of {noun}s"
        most = _NUMBERS.get(self.max_groups, str(self.max_groups))
        plural = "" if self.max_groups == 1 else "s"
        if self.min_groups == self.max_groups:
            return f"exactly {most} {noun}{plural}"
        if self.min_groups == 0:
            return f"at most {most} {noun}{plural}"
        return f"{self.min_groups}..{self.max_groups} {noun}s"

    def count_allowed(self, count: int) -> bool:
        """Whether a cluster may have ``count`` groups of this type."""
        return self.min_groups <= count and (self.max_groups is None or count <= self.max_groups)


CONTROLLER = NodeTypeLayout("Controller", 1, 1, partition_allowed=False)
LOGIN = NodeTypeLayout("Login", 0, 1, partition_allowed=False)
COMPUTE = NodeTypeLayout("Compute", 0, None, partition_allowed=True, partition_advised=True)

NODE_TYPES: dict[str, NodeTypeLayout] = {
    layout.node_type: layout for layout in (CONTROLLER, LOGIN, COMPUTE)
}
"""Every node type's layout, by the API's ``NodeType`` value."""

DEV_PARTITION = "dev"
"""The partition HyperPod adds every node to, besides the group's own."""

CONTINUOUS_CONTROLLER_NODES = 1
"""Controller nodes a Continuous-mode cluster may have: multi-head node configuration is not
supported with continuous provisioning."""

LEGACY_LAYOUT_FILE = "provisioning_parameters.json"
"""The lifecycle scripts' file of the legacy layout: Standard mode only (continuous
provisioning is not compatible with it)."""


def layout_of(node_type: object) -> NodeTypeLayout | None:
    """The layout of ``node_type`` (the API's value, or a ``NodeType`` member); None for a value
    that is not a node type."""
    return NODE_TYPES.get(str(getattr(node_type, "value", node_type)))

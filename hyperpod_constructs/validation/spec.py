"""What the cluster-wide rule families read about a cluster (:class:`ClusterSpec`): plain
values and the groups, in a module of its own so that the families it is given to
(``cluster_rules`` and those it runs) do not import each other for it."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from ..enums import NodeProvisioningMode, SlurmConfigStrategy, SlurmLayout

if TYPE_CHECKING:
    from ..instance_group import InstanceGroup


@dataclass(frozen=True)
class ClusterSpec:
    """What the cross-group rules need to know about a cluster."""

    name: str
    """The cluster's name (``ClusterName``)."""
    mode: NodeProvisioningMode
    """Its ``NodeProvisioningMode``."""
    groups: Sequence[InstanceGroup]
    """Its instance groups, in the order they were added."""
    slurm_config_strategy: SlurmConfigStrategy | None = None
    """Its ``slurm_config_strategy``. Default: none."""
    has_accounting_database: bool = False
    """Whether it has an ``accounting_database``. Default: False."""
    has_vpc: bool = False
    """Whether it has a network (``VpcConfig``). Default: False."""
    security_group_count: int | None = None
    """How many security groups it has. Default: unknown (a token list)."""
    subnet_count: int | None = None
    """How many subnets it has. Default: unknown (a token list)."""
    slurm_layout: SlurmLayout = SlurmLayout.API
    """Where node types and partitions live. Default: API."""

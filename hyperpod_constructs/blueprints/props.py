"""The props of the training blueprints: one options class that every blueprint's props extend.

Like aws-cdk-lib's ``NodegroupProps extends NodegroupOptions``: :class:`TrainingClusterOptions`
holds what every training blueprint takes; each blueprint's props add how the job is laid out
(:class:`TrainingClusterProps` a ready :class:`ParallelLayout`, :class:`FsdpTrainingClusterProps`
and :class:`MegatronTrainingClusterProps` the parallel sizes).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, fields

from aws_cdk import aws_ec2 as ec2
from aws_cdk import aws_iam as iam

from ..instance_type import HyperPodInstanceType
from ..lifecycle import LifecycleScripts
from ..sizing import ParallelLayout
from ..storage import InstanceStorage


@dataclass(frozen=True, kw_only=True)
class TrainingClusterOptions:
    """What every training blueprint takes besides the job's layout, including what an
    existing estate brings (imported by id or attributes, no lookups): its VPC and subnets
    (``vpc``, ``vpc_subnets``), security groups, execution role, shared file systems
    (``storage``), lifecycle scripts already in S3 and a training plan.

    Changes: ``cluster_name`` and the VPC settings (``vpc``, ``vpc_subnets``,
    ``security_groups``) replace the cluster; a new ``partition`` is a new compute group;
    ``UpdateCluster`` refuses a new ``instance_type`` or ``execution_role`` for an existing
    group (``plan`` reports it).
    """

    vpc: ec2.IVpc
    """The VPC of the cluster (required by the platform policy)."""
    instance_type: HyperPodInstanceType | None = None
    """Compute type; one of ``DEFAULTS.compute_instance_types``. Default: the first of them."""
    accelerators_per_instance: int | None = None
    """Ranks per instance. Default: the type's accelerator count."""
    spare_instances: int = 0
    """Instances above the gated minimum, to replace faulty nodes without waiting.
    Default: 0."""
    tags: Mapping[str, str] | None = None
    """The ML team's tags (e.g. the keys in ``DEFAULTS.required_tags``); they may not change
    the platform's tags. Default: none."""
    cluster_name: str | None = None
    """Default: derived from the construct path."""
    vpc_subnets: ec2.SubnetSelection | None = None
    """Default: the VPC's private subnets with egress."""
    lifecycle_scripts: LifecycleScripts | None = None
    """Default: none (HyperPod configures Slurm from each group's SlurmConfig)."""
    partition: str = "train"
    """Slurm partition (and compute group name). Default: ``"train"``."""
    security_groups: Sequence[ec2.ISecurityGroup] | None = None
    """The cluster's security groups, e.g. ``ec2.SecurityGroup.from_security_group_id``
    (they must allow all traffic among the nodes). Default: a new one allowing that."""
    execution_role: iam.IRole | None = None
    """The execution role of every group, e.g. ``iam.Role.from_role_arn``. The blueprint's
    grants (the volume key, the network interfaces, the lifecycle scripts) are added to it
    where it takes them; an immutable one is warned about once (``HP-WARN-ROLE-IMMUTABLE``).
    Default: a new role."""
    storage: Sequence[InstanceStorage] = ()
    """Shared file systems mounted on every group (controller, login, compute), after the
    platform's EBS volume: e.g. ``InstanceStorage.lustre_file_system(imported,
    mount_name=...)`` for an existing FSx for Lustre file system, whose Lustre ports the
    cluster opens. At most three. Default: none."""
    training_plan_arn: str | None = None
    """The SageMaker training plan the compute group runs on (its reserved capacity).
    Default: none (on-demand)."""

    def with_layout(self, layout: ParallelLayout) -> TrainingClusterProps:
        """These options with ``layout``: the props of :class:`TrainingClusterBlueprint`."""
        options = {f.name: getattr(self, f.name) for f in fields(TrainingClusterOptions)}
        return TrainingClusterProps(layout=layout, **options)


@dataclass(frozen=True, kw_only=True)
class TrainingClusterProps(TrainingClusterOptions):
    """Props of :class:`TrainingClusterBlueprint`: the options and any parallel layout."""

    layout: ParallelLayout
    """The job's parallel layout (:class:`FsdpLayout`, :class:`MegatronLayout`, or any
    :class:`ParallelLayout`)."""


@dataclass(frozen=True, kw_only=True)
class FsdpTrainingClusterProps(TrainingClusterOptions):
    """Props of :class:`FsdpTrainingCluster`: the options and the FSDP sizes."""

    data_parallel: int
    """Ranks of the job (= world size = accelerators); must fill whole instances."""
    shard_group_size: int | None = None
    """HSDP shard group size. Default: ``None`` (full sharding)."""


@dataclass(frozen=True, kw_only=True)
class MegatronTrainingClusterProps(TrainingClusterOptions):
    """Props of :class:`MegatronTrainingCluster`: the options and the Megatron sizes."""

    tensor_parallel: int
    """TP size; must divide the accelerators per instance."""
    data_parallel: int
    """DP size; the world size TP x CP x PP x DP must fill whole instances."""
    pipeline_parallel: int = 1
    """PP size. Default: 1."""
    context_parallel: int = 1
    """CP size. Default: 1."""

"""Training cluster blueprints: a platform team's defaults and policy, sized from the job."""

from __future__ import annotations

from collections.abc import Mapping
from typing import ClassVar

from aws_cdk import AspectPriority, Aspects, Size
from aws_cdk import aws_kms as kms
from constructs import Construct

from .._cdk.roles import statements_land
from .._core.arguments import argument_finding
from .._core.finding import Finding, HyperPodArgumentError, HyperPodValidationError
from ..cluster import HyperPodSlurmCluster
from ..instance_group import InstanceGroup
from ..instance_type import HyperPodInstanceType
from ..permissions import (
    grants_only_for_aws_resources,
    volume_key_statements,
)
from ..sizing import FsdpLayout, MegatronLayout, ParallelLayout, SizingError
from ..storage import InstanceStorage
from ..validation.blueprint_rules import BLUEPRINT_ARGS, BLUEPRINT_SIZING
from .defaults import BlueprintDefaults
from .props import FsdpTrainingClusterProps, MegatronTrainingClusterProps, TrainingClusterProps

SIZING_RULE = BLUEPRINT_SIZING.id
"""Finding rule id of a layout that does not fit the chosen instance type."""
ARGUMENT_RULE = BLUEPRINT_ARGS.id
"""Finding rule id of a blueprint argument the platform defaults do not allow."""
LAYOUT_TAG = "hyperpod:layout"
"""Tag holding the layout's description, e.g. ``FSDP dp=128``."""
BLUEPRINT_TAG = "hyperpod:blueprint"
"""Tag holding the blueprint class name, e.g. ``AcmeFsdpCluster``."""


def _path(scope: Construct, id: str) -> str:
    return f"{scope.node.path}/{id}" if scope.node.path else id


def _require_props(scope: Construct, id: str, props: object, kind: type) -> None:
    """Raise ``HP-ARG-TYPE`` naming ``props`` unless it is a ``kind``."""
    if not isinstance(props, kind):
        expected = f"a {kind.__name__}"
        raise HyperPodArgumentError(_path(scope, id), [argument_finding("props", props, expected)])


def _sizing_findings(
    error: SizingError, *, context: str, field: str = "instance_type", value: object = None
) -> list[Finding]:
    """Findings for a layout that does not fit; ``context`` names the layout (and type)."""
    if not error.problems:
        return [
            BLUEPRINT_SIZING.finding(
                field=f"{field} ({context})",
                value=value,
                allowed="a layout that fits the instance type",
                fix=str(error),
            )
        ]
    return [
        BLUEPRINT_SIZING.finding(
            field=f"{problem.field} ({context})",
            value=problem.value,
            allowed=problem.allowed,
            fix=(
                f"use {problem.field}=" + " or ".join(str(n) for n in problem.nearest)
                if problem.nearest
                else "change the layout"
            )
            + (f" ({problem.hint})" if problem.hint else ""),
        )
        for problem in error.problems
    ]


class TrainingClusterBlueprint(HyperPodSlurmCluster):
    """A training cluster preconfigured by a platform team: one controller, an optional
    login node and one gated compute partition sized from the job's parallel layout.

    Subclass it (or :class:`FsdpTrainingCluster` / :class:`MegatronTrainingCluster`) and set
    ``DEFAULTS`` to publish your organisation's blueprint. What it builds:

    - a controller (and login) group of the platform's types, each with an encrypted EBS
      volume;
    - a compute group ``partition`` of ``nodes_for(instance_type)`` instances plus
      ``spare_instances``, gated at the job's node count (``min_instance_count``), with the
      platform's deep health checks and threads per core;
    - a customer managed KMS key (rotation on) for every EBS volume, usable by the
      execution role through SageMaker only (``kms:CreateGrant`` for AWS resources,
      ``kms:DescribeKey``), when
      ``DEFAULTS.encrypt_volumes``;
    - for an existing estate (:class:`TrainingClusterOptions`): its security groups, its
      execution role, its shared file systems on every group (an FSx for Lustre file
      system's ports opened to the nodes) and its training plan on the compute group;
    - the platform's tags plus ``hyperpod:layout`` and ``hyperpod:blueprint``;
    - ``DEFAULTS.policy()`` applied to itself as an aspect.

    Invalid arguments raise :class:`HyperPodValidationError` naming the construct path, the
    number that does not fit and the nearest valid choices.
    """

    DEFAULTS: ClassVar[BlueprintDefaults] = BlueprintDefaults()
    """The platform team's settings; override in a subclass."""

    def __init__(self, scope: Construct, id: str, props: TrainingClusterProps) -> None:
        """Define the cluster from ``props``.

        :param scope: the construct to define it in (a Stack or a construct in one).
        :param id: its id, unique within ``scope``.
        :param props: the team's arguments, a :class:`TrainingClusterProps`.
        """
        _require_props(scope, id, props, TrainingClusterProps)
        layout = props.layout
        instance_type, spare_instances, tags = (
            props.instance_type,
            props.spare_instances,
            props.tags,
        )
        defaults = type(self).DEFAULTS
        path = _path(scope, id)
        chosen = instance_type or defaults.compute_instance_types[0]
        if not isinstance(chosen, HyperPodInstanceType):
            raise HyperPodArgumentError(
                path,
                [
                    argument_finding(
                        "instance_type",
                        chosen,
                        "a HyperPodInstanceType",
                        fix=f"use HyperPodInstanceType.of({chosen!r}) or a constant",
                    )
                ],
            )
        findings = self._argument_findings(defaults, chosen, spare_instances, tags or {})
        nodes = 0
        try:
            nodes = layout.nodes_for(
                chosen, accelerators_per_instance=props.accelerators_per_instance
            )
        except SizingError as error:
            findings += _sizing_findings(
                error, context=f"{layout.describe()} on {chosen.name}", value=chosen.name
            )
        if findings:
            raise HyperPodValidationError(path, findings)

        super().__init__(
            scope,
            id,
            cluster_name=props.cluster_name,
            vpc=props.vpc,
            vpc_subnets=props.vpc_subnets,
            security_groups=props.security_groups,
            execution_role=props.execution_role,
            lifecycle_scripts=props.lifecycle_scripts,
            tags={
                **(tags or {}),
                **defaults.tags,
                LAYOUT_TAG: layout.describe(),
                BLUEPRINT_TAG: type(self).__name__,
            },
            readiness_gate=defaults.gate,
        )
        self._layout = layout
        self._volume_key: kms.Key | None = None
        if defaults.encrypt_volumes:
            self._volume_key = kms.Key(
                self,
                "VolumeKey",
                enable_key_rotation=True,
                description=f"EBS volumes of the HyperPod cluster {path}",
            )
            granted = [
                self.role.add_to_principal_policy(statement)
                for statement in volume_key_statements(self._volume_key.key_arn)
            ]
            if not (all(grant.statement_added for grant in granted) and statements_land(self.role)):
                self._warn_missing_permission(self.role, "the use of the volume key")
            self._volume_key.add_to_resource_policy(grants_only_for_aws_resources())
        key_arn = self._volume_key.key_arn if self._volume_key is not None else None

        def volume(size: Size) -> tuple[InstanceStorage, ...]:
            return (InstanceStorage.ebs(volume_size=size, kms_key_id=key_arn), *props.storage)

        self.add_instance_group(
            InstanceGroup.controller(
                "controller",
                instance_type=defaults.controller_instance_type,
                storage=volume(defaults.head_volume_size),
            )
        )
        if defaults.login_instance_type is not None:
            self.add_instance_group(
                InstanceGroup.login(
                    "login",
                    instance_type=defaults.login_instance_type,
                    storage=volume(defaults.head_volume_size),
                )
            )
        self._compute_group = InstanceGroup.compute(
            props.partition,
            instance_type=chosen,
            partition=props.partition,
            instance_count=nodes + spare_instances,
            min_instance_count=nodes,
            threads_per_core=defaults.threads_per_core,
            deep_health_checks=defaults.deep_health_checks,
            storage=volume(defaults.compute_volume_size),
            training_plan_arn=props.training_plan_arn,
        )
        self.add_instance_group(self._compute_group)
        Aspects.of(self).add(defaults.policy(), priority=AspectPriority.READONLY)

    @staticmethod
    def _argument_findings(
        defaults: BlueprintDefaults,
        instance_type: HyperPodInstanceType,
        spare_instances: int,
        tags: Mapping[str, str],
    ) -> list[Finding]:
        found: list[Finding] = []
        if instance_type not in defaults.compute_instance_types:
            found.append(
                BLUEPRINT_ARGS.finding(
                    field="instance_type",
                    value=instance_type.name,
                    allowed=", ".join(t.name for t in defaults.compute_instance_types),
                    fix=f"pick one of the types {defaults.name} offers",
                )
            )
        limit = defaults.max_spare_instances
        if (
            isinstance(spare_instances, bool)
            or not isinstance(spare_instances, int)
            or spare_instances < 0
            or (limit is not None and spare_instances > limit)
        ):
            allowed = f"0..{limit}" if limit is not None else "0 or more"
            found.append(
                BLUEPRINT_ARGS.finding(
                    field="spare_instances",
                    value=spare_instances,
                    allowed=allowed,
                    fix=f"pass spare_instances in {allowed}",
                )
            )
        for key, value in tags.items():
            if key in defaults.tags and defaults.tags[key] != value:
                found.append(
                    BLUEPRINT_ARGS.finding(
                        field=f"tags[{key!r}]",
                        value=value,
                        allowed=f"{defaults.tags[key]!r} (set by {defaults.name})",
                        fix=f"remove {key!r} from tags",
                    )
                )
            if key in (LAYOUT_TAG, BLUEPRINT_TAG):
                found.append(
                    BLUEPRINT_ARGS.finding(
                        field=f"tags[{key!r}]",
                        value=value,
                        allowed="no value: the blueprint sets this tag",
                        fix=f"remove {key!r} from tags",
                    )
                )
        return found

    @property
    def layout(self) -> ParallelLayout:
        """The parallel layout the compute group was sized from."""
        return self._layout

    @property
    def world_size(self) -> int:
        """Ranks of the job the cluster is sized for."""
        return self._layout.world_size

    @property
    def compute_group(self) -> InstanceGroup:
        """The gated compute group."""
        return self._compute_group

    @property
    def volume_key(self) -> kms.Key | None:
        """The KMS key of the EBS volumes (``None`` unless ``DEFAULTS.encrypt_volumes``)."""
        return self._volume_key


class FsdpTrainingCluster(TrainingClusterBlueprint):
    """A PyTorch FSDP (or HSDP) training cluster, gated at the job's world size.

    ``FsdpTrainingCluster(self, "Train", FsdpTrainingClusterProps(vpc=vpc,
    data_parallel=128))`` builds 16 x ``ml.p5.48xlarge`` gated at 16. Subclass it with your
    ``DEFAULTS`` to publish it.
    """

    def __init__(self, scope: Construct, id: str, props: FsdpTrainingClusterProps) -> None:
        """Define the cluster from ``props``.

        :param scope: the construct to define it in (a Stack or a construct in one).
        :param id: its id, unique within ``scope``.
        :param props: the team's arguments, a :class:`FsdpTrainingClusterProps`.
        """
        _require_props(scope, id, props, FsdpTrainingClusterProps)
        try:
            layout = FsdpLayout(props.data_parallel, props.shard_group_size)
        except SizingError as error:
            raise HyperPodValidationError(
                _path(scope, id),
                _sizing_findings(
                    error, context="FSDP layout", field="data_parallel", value=props.data_parallel
                ),
            ) from None
        super().__init__(scope, id, props.with_layout(layout))


class MegatronTrainingCluster(TrainingClusterBlueprint):
    """A Megatron-LM / NeMo training cluster (TP x CP x PP x DP), gated at the world size.

    ``MegatronTrainingCluster(self, "Train", MegatronTrainingClusterProps(vpc=vpc,
    tensor_parallel=8, pipeline_parallel=4, data_parallel=4))`` builds 16 x
    ``ml.p5.48xlarge`` gated at 16. Subclass it with your ``DEFAULTS`` to publish it.
    """

    def __init__(self, scope: Construct, id: str, props: MegatronTrainingClusterProps) -> None:
        """Define the cluster from ``props``.

        :param scope: the construct to define it in (a Stack or a construct in one).
        :param id: its id, unique within ``scope``.
        :param props: the team's arguments, a :class:`MegatronTrainingClusterProps`.
        """
        _require_props(scope, id, props, MegatronTrainingClusterProps)
        tp, pp, dp, cp = (
            props.tensor_parallel,
            props.pipeline_parallel,
            props.data_parallel,
            props.context_parallel,
        )
        try:
            layout = MegatronLayout(tp, pp, dp, cp)
        except SizingError as error:
            raise HyperPodValidationError(
                _path(scope, id),
                _sizing_findings(
                    error,
                    context="Megatron layout",
                    field="layout",
                    value=f"tp={tp} cp={cp} pp={pp} dp={dp}",
                ),
            ) from None
        super().__init__(scope, id, props.with_layout(layout))
